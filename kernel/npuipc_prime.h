/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_PRIME_H__
#define __NPUIPC_PRIME_H__

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct dma_buf;
struct drm_device;
struct drm_file;
struct npuipc_bo;
struct npuipc_device;
struct seq_file;

/* One exported range of a buffer: the dma-buf's private data. */
struct npuipc_export {
	struct npuipc_bo *bo;		/* holds a GEM reference */
	struct dma_buf *dmabuf;
	pgoff_t first_page;
	pgoff_t npages;
	bool read_only;
	pid_t exporter_pid;
	/* Protects importers and the mappings hung on attachments' priv */
	struct mutex lock;
	int importers;
	struct list_head node;		/* in npuipc_device.exports */
};

int npuipc_ioctl_bo_export(struct drm_device *drm, void *data,
			   struct drm_file *file);
int npuipc_ioctl_bo_import(struct drm_device *drm, void *data,
			   struct drm_file *file);

void npuipc_exports_show(struct seq_file *m, struct npuipc_device *ndev);

#endif /* __NPUIPC_PRIME_H__ */
