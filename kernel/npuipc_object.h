/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_OBJECT_H__
#define __NPUIPC_OBJECT_H__

#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/types.h>

struct dma_fence;
struct drm_device;
struct drm_file;
struct drm_npuipc_wait;
struct file;
struct file_operations;
struct inode;
struct npuipc_file;
struct npuipc_object;
struct seq_file;

/*
 * What a type of object (NPUIPC_OBJ_*) does, in the style of
 * drm_gem_object_funcs: the ioctls of npuipc_object.c and the file's
 * handle table reach streams, events and notifies through these.
 */
/* What a WAIT reports: struct drm_npuipc_wait's out fields. */
struct npuipc_wait_result {
	int status;
	u32 failed_job;
};

struct npuipc_object_funcs {
	u32 type;		/* NPUIPC_OBJ_* */
	const char *name;	/* in drm_dbg lines */

	/* OBJ_CREATE: a new object of @nfile, referenced; NULL without memory. */
	struct npuipc_object *(*create)(struct npuipc_file *nfile);
	/* The last reference is gone. */
	void (*free)(struct npuipc_object *obj);
	/*
	 * Optional: a handle to it is gone (OBJ_DESTROY or its file closing),
	 * before the handle's reference is dropped, or its device is (then
	 * again when the handle goes: only the first call acts). Objects with
	 * it run work that refers to others: a closing file drops them first.
	 */
	void (*close)(struct npuipc_object *obj);
	/*
	 * Optional: WAIT on it until @deadline (npuipc_object_wait_fence());
	 * 0 with *@res set, or the ioctl's error.
	 */
	int (*wait)(struct npuipc_object *obj, struct drm_device *drm,
		    const struct drm_npuipc_wait *args, ktime_t deadline,
		    struct npuipc_wait_result *res);
	/* Optional: OBJ_EXPORT with NPUIPC_OBJ_EXPORT_SYNC_FILE. */
	struct file *(*export_sync_file)(struct npuipc_object *obj);
	/*
	 * Optional: OBJ_EXPORT makes an fd of these operations, named
	 * @file_name, holding a reference; their release must be
	 * npuipc_object_file_release(). OBJ_IMPORT takes such fds back.
	 */
	const struct file_operations *fops;
	const char *file_name;
	/* Optional: jobs it holds that have not completed (fdinfo). */
	unsigned int (*queued_jobs)(struct npuipc_object *obj);
	/* Its state under @handle, for debugfs's npuipc_streams. */
	void (*show)(struct seq_file *m, unsigned long handle, struct npuipc_object *obj);
};

/* Common head of streams, events and notifies. */
struct npuipc_object {
	const struct npuipc_object_funcs *funcs;
	struct kref kref;
};

/* The types, defined each in its own file. */
extern const struct npuipc_object_funcs npuipc_stream_funcs;
extern const struct npuipc_object_funcs npuipc_event_funcs;
extern const struct npuipc_object_funcs npuipc_notify_funcs;

static inline u32 npuipc_object_type(const struct npuipc_object *obj)
{
	return obj->funcs->type;
}

void npuipc_object_init(struct npuipc_object *obj, const struct npuipc_object_funcs *funcs);
void npuipc_object_get(struct npuipc_object *obj);
bool npuipc_object_get_unless_zero(struct npuipc_object *obj);
void npuipc_object_put(struct npuipc_object *obj);

int npuipc_object_file_release(struct inode *inode, struct file *file);

int npuipc_object_wait_fence(struct dma_fence *fence, const struct drm_npuipc_wait *args,
			     ktime_t deadline);

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
