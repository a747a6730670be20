/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_FILE_H__
#define __NPUIPC_FILE_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <drm/drm_file.h>

struct drm_device;
struct file;
struct npuipc_device;
struct npuipc_object;
struct drm_printer;
struct seq_file;

/* What an open DRM file of npuipc holds besides GEM handles. */
struct npuipc_file {
	struct npuipc_device *ndev;
	u64 client_id;			/* drm-client-id in fdinfo */
	atomic64_t engine_copy_ns;	/* drm-engine-copy: its COPY and FILL jobs */
	/* GEM handles of imports, at most NPUIPC_MAX_IMPORTS. */
	atomic_t imports;
	/* Bytes of other exporters' dma-bufs imported, at most mem_total. */
	atomic64_t foreign_bytes;
	/* Streams, events and notifies by handle; the xarray locks itself. */
	struct xarray objects;
	/* How many handles objects holds, for GET_INFO's objects_free. */
	atomic_t object_count;

	/* Protects the choice of copy_worker */
	struct mutex copy_worker_lock;
	/*
	 * Runs this file's COPY and FILL jobs: the worker of the process that
	 * submitted the first one (npuipc_copy_worker.c). Chosen by that
	 * SUBMIT, before any such job is queued; read without the lock then.
	 */
	struct npuipc_copy_worker *copy_worker;

	/* Protects owned_notifies */
	spinlock_t owned_lock;
	/*
	 * Every live notify this file created, unreferenced: a notify leaves
	 * it when freed, and closing the file orphans those left.
	 */
	struct list_head owned_notifies;
};

static inline struct npuipc_file *to_npuipc_file(struct drm_file *file)
{
	return file->driver_priv;
}

int npuipc_file_open(struct drm_device *drm, struct drm_file *file);
void npuipc_file_postclose(struct drm_device *drm, struct drm_file *file);

int npuipc_file_add_object(struct npuipc_file *nfile, struct npuipc_object *obj,
			   u32 *handle);
/*
 * The object behind @handle (of @type, unless 0), with a reference;
 * ERR_PTR(-ENOENT) if there is none, ERR_PTR(-EINVAL) if it is of another
 * type: every ioctl gives a wrong-type handle the same -EINVAL.
 */
struct npuipc_object *npuipc_file_lookup_object(struct npuipc_file *nfile,
						u32 handle, u32 type);
/* Removes @handle: -ENOENT if there is none. */
int npuipc_file_destroy_object(struct npuipc_file *nfile, u32 handle);

int npuipc_file_copy_worker(struct npuipc_file *nfile);
void npuipc_file_unplug(struct drm_file *file);

void npuipc_file_show_fdinfo(struct drm_printer *p, struct drm_file *file);
void npuipc_file_seq_show_fdinfo(struct seq_file *m, struct file *f);
void npuipc_file_show_objects(struct seq_file *m, struct drm_file *file);

#endif /* __NPUIPC_FILE_H__ */
