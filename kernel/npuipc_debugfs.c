// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs, in /sys/kernel/debug/dri/<minor>/ of each DRM minor:
 *   npuipc_state    "key: value" lines that tests and npuipc-smi parse: the
 *                   device's memory and GEM objects, then live objects of
 *                   the whole module by kind;
 *   npuipc_exports  one line per live dma-buf exported from the device;
 *   npuipc_streams  per open file, its streams (depth, error, claim, the
 *                   head job and what it waits on), events and notifies,
 *                   each shown by its type (npuipc_object_funcs.show).
 */
#include <linux/dma-fence.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>

#include "npuipc_debugfs.h"
#include "npuipc_drv.h"
#include "npuipc_file.h"
#include "npuipc_gem.h"
#include "npuipc_job.h"
#include "npuipc_prime.h"
#include "drm/npuipc_drm.h"

/**
 * npuipc_debugfs_show_fence() - print a fence for debugfs
 * @m: the seq_file to print to
 * @fence: the fence to show, npuipc's or foreign
 *
 * A fence as "driver timeline context:seqno state"; its state read, not
 * checked (a check may signal a foreign fence and run its callbacks). A
 * foreign fence's names are not asked for: its ops may belong to a module
 * that is allowed to go once the fence has signalled.
 */
void npuipc_debugfs_show_fence(struct seq_file *m, struct dma_fence *fence)
{
	bool ours = npuipc_fence_to_job(fence);

	seq_printf(m, "fence %s %s %llu:%llu %s",
		   ours ? fence->ops->get_driver_name(fence) : "foreign",
		   ours ? fence->ops->get_timeline_name(fence) : "-", fence->context, fence->seqno,
		   !test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &fence->flags) ? "pending" :
		   fence->error ? "failed" : "signalled");
}

static int npuipc_state_show(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;
	struct npuipc_device *ndev = to_npuipc(node->minor->dev);
	u64 used = npuipc_mem_used(ndev);

	seq_printf(m, "device_index: %u\n", ndev->index);
	seq_printf(m, "kind: %s\n",
		   ndev->caps & NPUIPC_CAP_VIRTUAL ? "virtual" : "pci");
	seq_printf(m, "mem_total: %llu\n", ndev->mem_total);
	seq_printf(m, "mem_used: %llu\n", used);
	seq_printf(m, "mem_free: %llu\n", ndev->mem_total - used);
	seq_printf(m, "live_objects: %d\n", atomic_read(&ndev->live_objects));
	seq_printf(m, "imports: %d\n", atomic_read(&ndev->live_imports));
	/* Module-wide (see enum npuipc_kind). */
	seq_printf(m, "streams: %d\n", atomic_read(&npuipc_live[NPUIPC_KIND_STREAM]));
	seq_printf(m, "events: %d\n", atomic_read(&npuipc_live[NPUIPC_KIND_EVENT]));
	seq_printf(m, "notifies: %d\n", atomic_read(&npuipc_live[NPUIPC_KIND_NOTIFY]));
	seq_printf(m, "jobs: %d\n", atomic_read(&npuipc_live[NPUIPC_KIND_JOB]));
	seq_printf(m, "dmabufs: %d\n", atomic_read(&npuipc_live[NPUIPC_KIND_DMABUF]));
	seq_printf(m, "object_files: %d\n", atomic_read(&npuipc_live[NPUIPC_KIND_OBJECT_FILE]));
	seq_printf(m, "pmd_maps: %ld\n", atomic_long_read(&npuipc_pmd_maps));
	return 0;
}

static int npuipc_exports_debugfs_show(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;

	npuipc_exports_show(m, to_npuipc(node->minor->dev));
	return 0;
}

static int npuipc_streams_debugfs_show(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;
	struct drm_device *drm = node->minor->dev;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead)
		npuipc_file_show_objects(m, file);
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

static const struct drm_info_list npuipc_debugfs_list[] = {
	{ "npuipc_state", npuipc_state_show, 0 },
	{ "npuipc_exports", npuipc_exports_debugfs_show, 0 },
	{ "npuipc_streams", npuipc_streams_debugfs_show, 0 },
};

/**
 * npuipc_debugfs_init() - create npuipc's debugfs files of a DRM minor
 * @minor: the DRM minor whose debugfs directory gets the files
 *
 * Adds npuipc_state, npuipc_exports and npuipc_streams (described at the top
 * of this file).
 */
void npuipc_debugfs_init(struct drm_minor *minor)
{
	drm_debugfs_create_files(npuipc_debugfs_list,
				 ARRAY_SIZE(npuipc_debugfs_list),
				 minor->debugfs_root, minor);
}
