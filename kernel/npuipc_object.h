/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_OBJECT_H__
#define __NPUIPC_OBJECT_H__

#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <drm/drm_file.h>

struct drm_device;
struct npuipc_device;

/* What an open DRM file of npuipc holds besides GEM handles. */
struct npuipc_file {
	struct npuipc_device *ndev;
	u64 client_id;			/* drm-client-id in fdinfo */
	atomic64_t engine_copy_ns;	/* drm-engine-copy: its COPY and FILL jobs */
	/* GEM handles of imports, at most NPUIPC_MAX_IMPORTS. */
	atomic_t imports;
	/* Streams, events and notifies by handle; the xarray locks itself. */
	struct xarray objects;

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

/* Common head of streams, events and notifies (NPUIPC_OBJ_*). */
struct npuipc_object {
	u32 type;
	struct kref kref;
};

static inline struct npuipc_file *to_npuipc_file(struct drm_file *file)
{
	return file->driver_priv;
}

void npuipc_object_get(struct npuipc_object *obj);
void npuipc_object_put(struct npuipc_object *obj);
/*
 * The object behind @handle (of @type, unless 0), with a reference;
 * ERR_PTR(-ENOENT) if there is none, ERR_PTR(-EINVAL) if it is of another
 * type: every ioctl gives a wrong-type handle the same -EINVAL.
 */
struct npuipc_object *npuipc_object_lookup(struct npuipc_file *nfile,
					   u32 handle, u32 type);

int npuipc_file_open(struct drm_device *drm, struct drm_file *file);
void npuipc_file_postclose(struct drm_device *drm, struct drm_file *file);

int npuipc_ioctl_obj_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int npuipc_ioctl_obj_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file);
int npuipc_ioctl_obj_export(struct drm_device *drm, void *data,
			    struct drm_file *file);
int npuipc_ioctl_obj_import(struct drm_device *drm, void *data,
			    struct drm_file *file);
int npuipc_ioctl_wait(struct drm_device *drm, void *data,
		      struct drm_file *file);

#endif /* __NPUIPC_OBJECT_H__ */
