// SPDX-License-Identifier: GPL-2.0
/*
 * Streams, events and notifies as objects: their references, their fds,
 * and the ioctls that create, destroy, export, import and wait on them,
 * each reaching a type through its npuipc_object_funcs.
 */
#include <linux/dma-fence.h>
#include <linux/error-injection.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/anon_inodes.h>
#include <linux/nospec.h>

#include <drm/drm_file.h>

#include "npuipc_drv.h"
#include "npuipc_file.h"
#include "npuipc_object.h"
#include "drm/npuipc_drm.h"

/* Every type, by NPUIPC_OBJ_*: what OBJ_CREATE and OBJ_IMPORT choose from. */
static const struct npuipc_object_funcs *const npuipc_object_types[] = {
	[NPUIPC_OBJ_STREAM] = &npuipc_stream_funcs,
	[NPUIPC_OBJ_EVENT] = &npuipc_event_funcs,
	[NPUIPC_OBJ_NOTIFY] = &npuipc_notify_funcs,
};

/**
 * npuipc_object_init() - initialize a new object
 * @obj: the object
 * @funcs: its type
 *
 * The object gets its type and one reference, the caller's.
 */
void npuipc_object_init(struct npuipc_object *obj, const struct npuipc_object_funcs *funcs)
{
	obj->funcs = funcs;
	kref_init(&obj->kref);
}

static void npuipc_object_release(struct kref *kref)
{
	struct npuipc_object *obj = container_of(kref, struct npuipc_object, kref);

	obj->funcs->free(obj);
}

/**
 * npuipc_object_get() - take a reference to an object
 * @obj: the object
 */
void npuipc_object_get(struct npuipc_object *obj)
{
	kref_get(&obj->kref);
}

/**
 * npuipc_object_get_unless_zero() - take a reference unless the object is freed
 * @obj: the object
 *
 * Return: true if a reference was taken, false if the last one is gone.
 */
bool npuipc_object_get_unless_zero(struct npuipc_object *obj)
{
	return kref_get_unless_zero(&obj->kref);
}

/**
 * npuipc_object_put() - drop a reference to an object
 * @obj: the object, or NULL
 *
 * The last reference frees the object through its type's free().
 */
void npuipc_object_put(struct npuipc_object *obj)
{
	if (obj)
		kref_put(&obj->kref, npuipc_object_release);
}

/**
 * npuipc_object_file_release() - release an exported object's fd
 * @inode: the fd's inode
 * @file: the fd's file, which holds a reference to the object
 *
 * The release of every exported object's fd (npuipc_object_funcs.fops).
 *
 * Return: 0.
 */
int npuipc_object_file_release(struct inode *inode, struct file *file)
{
	npuipc_object_put(file->private_data);
	npuipc_live_dec(NPUIPC_KIND_OBJECT_FILE);
	return 0;
}

/* A new file holding a reference to @obj, whose type has fops. */
static noinline struct file *npuipc_object_export_file(struct npuipc_object *obj)
{
	struct file *file;

	npuipc_object_get(obj);
	/* O_CLOEXEC is the fd's, given to get_unused_fd_flags() by the caller. */
	file = anon_inode_getfile(obj->funcs->file_name, obj->funcs->fops, obj, O_RDWR);
	if (IS_ERR(file))
		npuipc_object_put(obj);
	else
		npuipc_live_inc(NPUIPC_KIND_OBJECT_FILE);
	return file;
}
ALLOW_ERROR_INJECTION(npuipc_object_export_file, ERRNO);

/* The object behind @file, referenced; NULL for any other file. */
static struct npuipc_object *npuipc_object_import_file(struct file *file)
{
	struct npuipc_object *obj;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(npuipc_object_types); i++) {
		if (npuipc_object_types[i] && npuipc_object_types[i]->fops &&
		    file->f_op == npuipc_object_types[i]->fops) {
			obj = file->private_data;
			npuipc_object_get(obj);
			return obj;
		}
	}
	return NULL;
}

/**
 * npuipc_ioctl_obj_create() - create a stream, event or notify (OBJ_CREATE)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_obj_create
 * @file: the calling DRM file, which gets the object's handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_obj_create in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_obj_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_obj_create *args = data;
	const struct npuipc_object_funcs *funcs = NULL;
	struct npuipc_object *obj;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_CREATE_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->handle))
		return -EINVAL;
	/* A fabric window is memory, not an NPU: it runs nothing. */
	if (to_npuipc(drm)->fabric)
		return -EOPNOTSUPP;

	if (args->type < ARRAY_SIZE(npuipc_object_types))
		funcs = npuipc_object_types[array_index_nospec(args->type,
							       ARRAY_SIZE(npuipc_object_types))];
	if (!funcs) {
		drm_dbg_driver(drm, "%s: refused: unknown type %u\n", __func__, args->type);
		return -EINVAL;
	}
	obj = funcs->create(nfile);
	if (!obj)
		return -ENOMEM;

	ret = npuipc_file_add_object(nfile, obj, &args->handle);
	if (ret)
		npuipc_object_put(obj);
	return ret;
}

/**
 * npuipc_ioctl_obj_destroy() - drop an object's handle (OBJ_DESTROY)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_obj_destroy
 * @file: the calling DRM file, which holds the handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_obj_destroy in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_obj_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct drm_npuipc_obj_destroy *args = data;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_DESTROY_FLAGS_VALID))
		return -EINVAL;
	return npuipc_file_destroy_object(to_npuipc_file(file), args->handle);
}

/**
 * npuipc_ioctl_obj_export() - export an object as an fd (OBJ_EXPORT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_obj_export
 * @file: the calling DRM file, which holds the object's handle
 *
 * The fd is the object's own, or with NPUIPC_OBJ_EXPORT_SYNC_FILE a
 * sync_file of the type's choosing; it is close-on-exec.
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_obj_export in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_obj_export(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_obj_export *args = data;
	bool sync_file = args->flags & NPUIPC_OBJ_EXPORT_SYNC_FILE;
	struct npuipc_object *obj;
	struct file *out;
	int fd, ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_EXPORT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->fd))
		return -EINVAL;
	obj = npuipc_file_lookup_object(nfile, args->handle, 0);
	if (IS_ERR(obj))
		return PTR_ERR(obj);

	ret = -EINVAL;
	if (!obj->funcs->fops || (sync_file && !obj->funcs->export_sync_file)) {
		drm_dbg_driver(drm, "%s: refused: handle %u is a %s, which exports no %s\n",
			       __func__, args->handle, obj->funcs->name,
			       sync_file ? "sync_file" : "fd");
		goto out_put;
	}

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_put;
	}
	out = sync_file ? obj->funcs->export_sync_file(obj) : npuipc_object_export_file(obj);
	if (IS_ERR(out)) {
		put_unused_fd(fd);
		ret = PTR_ERR(out);
		goto out_put;
	}
	args->fd = fd;
	fd_install(fd, out);
	ret = 0;
out_put:
	npuipc_object_put(obj);
	return ret;
}

/**
 * npuipc_ioctl_obj_import() - give an exported object a handle (OBJ_IMPORT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_obj_import
 * @file: the calling DRM file, which gets the object's handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_obj_import in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_obj_import(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_obj_import *args = data;
	struct npuipc_object *obj;
	struct file *in;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_IMPORT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->handle || args->type))
		return -EINVAL;
	if (to_npuipc(drm)->fabric)
		return -EOPNOTSUPP;
	in = fget(args->fd);
	if (!in)
		return -EBADF;
	obj = npuipc_object_import_file(in);
	fput(in);
	if (npuipc_refuse(drm, !obj))
		return -EINVAL;

	ret = npuipc_file_add_object(nfile, obj, &args->handle);
	if (ret)
		npuipc_object_put(obj);
	else
		args->type = npuipc_object_type(obj);
	return ret;
}

/* Any s64: a negative timeout is endless. */
static long npuipc_wait_timeout_jiffies(s64 timeout_ns)
{
	return timeout_ns < 0 ? MAX_SCHEDULE_TIMEOUT : npuipc_timeout_jiffies(timeout_ns);
}

/* Waits for @fence up to @timeout_ns (0 polls, < 0 endless): 0, -ETIME or -ERESTARTSYS. */
static int npuipc_wait_fence(struct dma_fence *fence, s64 timeout_ns)
{
	long left;

	if (!timeout_ns)
		return dma_fence_is_signaled(fence) ? 0 : -ETIME;
	left = dma_fence_wait_timeout(fence, true, npuipc_wait_timeout_jiffies(timeout_ns));
	return left > 0 ? 0 : left ? left : -ETIME;
}

/* What is left of WAIT's timeout at @deadline (its timeout as is if not positive). */
static s64 npuipc_wait_left(const struct drm_npuipc_wait *args, ktime_t deadline)
{
	if (args->timeout_ns <= 0)
		return args->timeout_ns;
	/* 0 would poll once: what is due when the time is up. */
	return max_t(s64, ktime_to_ns(ktime_sub(deadline, ktime_get())), 0);
}

/**
 * npuipc_object_wait_fence() - WAIT's wait for a fence
 * @fence: the fence to wait for
 * @args: the WAIT ioctl's argument, whose timeout applies
 * @deadline: when a positive timeout ends
 *
 * WAIT's wait for @fence, ending at @deadline.
 *
 * Return: 0, -ETIME or -ERESTARTSYS.
 */
int npuipc_object_wait_fence(struct dma_fence *fence, const struct drm_npuipc_wait *args,
			     ktime_t deadline)
{
	return npuipc_wait_fence(fence, npuipc_wait_left(args, deadline));
}

/**
 * npuipc_ioctl_wait() - wait for an object (WAIT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_wait
 * @file: the calling DRM file, which holds the object's handle
 *
 * Waits as the object's type does, with one deadline for every pass of the
 * wait. Interrupted, a finite wait leaves in the argument's timeout what is
 * left of it, so that the call the kernel restarts ends at the same deadline.
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_wait in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_wait *args = data;
	struct npuipc_object *obj;
	struct npuipc_wait_result res = {};
	ktime_t deadline = 0;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_WAIT_FLAGS_VALID))
		return -EINVAL;
	/*
	 * failed_job was pad before uapi 9, never written: a caller reusing
	 * the structure after a failed stream's WAIT may pass it back as is.
	 */
	if (npuipc_refuse(drm, args->status))
		return -EINVAL;
	obj = npuipc_file_lookup_object(nfile, args->handle, 0);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	if (!obj->funcs->wait) {
		drm_dbg_driver(drm, "%s: refused: handle %u is a %s\n", __func__, args->handle,
			       obj->funcs->name);
		ret = -EINVAL;
		goto out_put;
	}
	/* One deadline for every pass of the wait; beyond 2^62 ns is endless anyway. */
	if (args->timeout_ns > 0)
		deadline = ktime_add_ns(ktime_get(), min_t(s64, args->timeout_ns, S64_MAX / 2));

	ret = obj->funcs->wait(obj, drm, args, deadline, &res);
	/*
	 * Interrupted, a finite wait leaves in @timeout_ns what is left of it
	 * (the DRM core copies the structure back even on failure), so that
	 * the call the kernel restarts ends at the same deadline.
	 */
	if (ret == -ERESTARTSYS && args->timeout_ns > 0)
		args->timeout_ns = npuipc_wait_left(args, deadline);
	if (!ret) {
		args->status = res.status;
		args->failed_job = res.failed_job;
	}
out_put:
	npuipc_object_put(obj);
	return ret;
}
