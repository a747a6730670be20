// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file usage statistics in /proc/PID/fdinfo, in the format of the
 * kernel's Documentation/gpu/drm-usage-stats.rst (6.1 has no core helper:
 * the driver writes the keys itself, as amdgpu and i915 do).
 */
#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/seq_file.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "npuipc_bo.h"
#include "npuipc_drv.h"
#include "npuipc_fdinfo.h"
#include "npuipc_object.h"
#include "npuipc_stream.h"
#include "drm/npuipc_drm.h"

/* drm-client-id: unique for the life of the module, never reused. */
static atomic64_t npuipc_client_ids = ATOMIC64_INIT(0);

u64 npuipc_fdinfo_new_client_id(void)
{
	return atomic64_inc_return(&npuipc_client_ids);
}

/*
 * drm-engine-copy: time the engine spent on this file's COPY and FILL
 * jobs. drm-memory-device: buffers of this device's memory the file holds
 * handles to; drm-memory-imported: imports (of other devices' or other
 * exporters' memory, or of this device's through a dma-buf).
 *
 * Then npuipc's own keys, so that a user sees its processes' objects
 * without debugfs: npuipc-buffers (GEM handles, imports included),
 * npuipc-streams, npuipc-events, npuipc-notifies (handles of this file),
 * npuipc-jobs (submitted on its streams and not yet completed).
 */
void npuipc_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct npuipc_file *nfile = to_npuipc_file(file);
	unsigned int buffers = 0, types[NPUIPC_OBJ_NOTIFY + 1] = { 0 }, jobs = 0;
	u64 owned = 0, imported = 0;
	struct drm_gem_object *obj;
	struct npuipc_object *nobj;
	unsigned long handle;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		if (to_npuipc_bo(obj)->dmabuf)
			imported += obj->size;
		else
			owned += obj->size;
		buffers++;
	}
	spin_unlock(&file->table_lock);

	/* Under the xarray's lock no handle is destroyed, so each object lives. */
	xa_lock(&nfile->objects);
	xa_for_each(&nfile->objects, handle, nobj) {
		if (nobj->type < ARRAY_SIZE(types))
			types[nobj->type]++;
		if (nobj->type == NPUIPC_OBJ_STREAM)
			jobs += READ_ONCE(container_of(nobj, struct npuipc_stream,
						   base)->queued);
	}
	xa_unlock(&nfile->objects);

	seq_printf(m, "drm-driver:\t%s\n", DRIVER_NAME);
	seq_printf(m, "drm-client-id:\t%llu\n", nfile->client_id);
	seq_printf(m, "drm-engine-copy:\t%llu ns\n",
		   (u64)atomic64_read(&nfile->engine_copy_ns));
	seq_printf(m, "drm-memory-device:\t%llu KiB\n", owned >> 10);
	seq_printf(m, "drm-memory-imported:\t%llu KiB\n", imported >> 10);
	seq_printf(m, "npuipc-buffers:\t%u\n", buffers);
	seq_printf(m, "npuipc-streams:\t%u\n", types[NPUIPC_OBJ_STREAM]);
	seq_printf(m, "npuipc-events:\t%u\n", types[NPUIPC_OBJ_EVENT]);
	seq_printf(m, "npuipc-notifies:\t%u\n", types[NPUIPC_OBJ_NOTIFY]);
	seq_printf(m, "npuipc-jobs:\t%u\n", jobs);
}
