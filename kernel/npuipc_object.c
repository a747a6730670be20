// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file table of streams, events and notifies, and the ioctls that
 * create, destroy, export, import and wait on them.
 */
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/slab.h>
#include <linux/sync_file.h>

#include <drm/drm_file.h>

#include "npuipc_drv.h"
#include "npuipc_fdinfo.h"
#include "npuipc_copy_worker.h"
#include "npuipc_object.h"
#include "npuipc_stream.h"
#include "npuipc_sync.h"
#include "drm/npuipc_drm.h"

static void npuipc_object_release(struct kref *kref)
{
	struct npuipc_object *obj = container_of(kref, struct npuipc_object, kref);

	switch (obj->type) {
	case NPUIPC_OBJ_STREAM:
		npuipc_stream_free(container_of(obj, struct npuipc_stream, base));
		break;
	case NPUIPC_OBJ_EVENT:
		npuipc_event_free(container_of(obj, struct npuipc_event, base));
		break;
	case NPUIPC_OBJ_NOTIFY:
		npuipc_notify_free(container_of(obj, struct npuipc_notify, base));
		break;
	}
}

void npuipc_object_get(struct npuipc_object *obj)
{
	kref_get(&obj->kref);
}

void npuipc_object_put(struct npuipc_object *obj)
{
	if (obj)
		kref_put(&obj->kref, npuipc_object_release);
}

struct npuipc_object *npuipc_object_lookup(struct npuipc_file *nfile,
					   u32 handle, u32 type)
{
	struct npuipc_object *obj;

	xa_lock(&nfile->objects);
	obj = xa_load(&nfile->objects, handle);
	if (!obj)
		obj = ERR_PTR(-ENOENT);
	else if (type && obj->type != type)
		obj = ERR_PTR(-EINVAL);	/* logged below, out of the lock */
	else
		npuipc_object_get(obj);
	xa_unlock(&nfile->objects);
	if (obj == ERR_PTR(-EINVAL))
		drm_dbg_driver(&nfile->ndev->drm, "refused: handle %u is not of type %u\n",
			       handle, type);
	return obj;
}

int npuipc_file_open(struct drm_device *drm, struct drm_file *file)
{
	struct npuipc_file *nfile = kzalloc(sizeof(*nfile), GFP_KERNEL);

	if (!nfile)
		return -ENOMEM;
	nfile->ndev = to_npuipc(drm);
	nfile->client_id = npuipc_fdinfo_new_client_id();
	xa_init_flags(&nfile->objects, XA_FLAGS_ALLOC1);
	mutex_init(&nfile->copy_worker_lock);
	spin_lock_init(&nfile->owned_lock);
	INIT_LIST_HEAD(&nfile->owned_notifies);
	file->driver_priv = nfile;
	return 0;
}

/* Everything a handle held: a stream stops. */
static void npuipc_handle_drop(struct npuipc_object *obj)
{
	if (obj->type == NPUIPC_OBJ_STREAM)
		npuipc_stream_shutdown(container_of(obj, struct npuipc_stream, base));
	npuipc_object_put(obj);
}

void npuipc_file_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_object *obj;
	unsigned long handle;

	/* Streams first: their parked jobs must leave the notifies' lists. */
	xa_for_each(&nfile->objects, handle, obj) {
		if (obj->type == NPUIPC_OBJ_STREAM) {
			xa_erase(&nfile->objects, handle);
			npuipc_handle_drop(obj);
		}
	}
	xa_for_each(&nfile->objects, handle, obj) {
		xa_erase(&nfile->objects, handle);
		npuipc_handle_drop(obj);
	}
	npuipc_notify_orphan_all(nfile);
	xa_destroy(&nfile->objects);
	/* Every stream is shut down and freed: none queues copy work any more. */
	if (nfile->copy_worker)
		npuipc_copy_worker_put(nfile->copy_worker);
	mutex_destroy(&nfile->copy_worker_lock);
	kfree(nfile);
}

static int npuipc_handle_add(struct npuipc_file *nfile, struct npuipc_object *obj,
			     u32 *handle)
{
	int ret = xa_alloc(&nfile->objects, handle, obj,
			   XA_LIMIT(1, NPUIPC_MAX_OBJECTS), GFP_KERNEL_ACCOUNT);

	return ret == -EBUSY ? -ENOSPC : ret;
}

int npuipc_ioctl_obj_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_obj_create *args = data;
	struct npuipc_object *obj;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_CREATE_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->handle))
		return -EINVAL;

	switch (args->type) {
	case NPUIPC_OBJ_STREAM: {
		struct npuipc_stream *stream = npuipc_stream_create(nfile);

		obj = stream ? &stream->base : NULL;
		break;
	}
	case NPUIPC_OBJ_EVENT: {
		struct npuipc_event *event = npuipc_event_create();

		obj = event ? &event->base : NULL;
		break;
	}
	case NPUIPC_OBJ_NOTIFY: {
		struct npuipc_notify *notify = npuipc_notify_create(nfile);

		obj = notify ? &notify->base : NULL;
		break;
	}
	default:
		drm_dbg_driver(drm, "%s: refused: unknown type %u\n", __func__, args->type);
		return -EINVAL;
	}
	if (!obj)
		return -ENOMEM;

	ret = npuipc_handle_add(nfile, obj, &args->handle);
	if (ret)
		npuipc_object_put(obj);
	return ret;
}

int npuipc_ioctl_obj_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_obj_destroy *args = data;
	struct npuipc_object *obj;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_DESTROY_FLAGS_VALID))
		return -EINVAL;
	obj = xa_erase(&nfile->objects, args->handle);
	if (!obj)
		return -ENOENT;
	npuipc_handle_drop(obj);
	return 0;
}

static struct file *npuipc_event_sync_file(struct npuipc_object *obj)
{
	struct dma_fence *fence = npuipc_event_last(container_of(obj, struct npuipc_event, base));
	struct sync_file *sync_file;

	/* Never recorded: complete, as a wait on it would be. */
	if (!fence)
		fence = dma_fence_get_stub();
	if (npuipc_fence_unbounded(fence)) {
		dma_fence_put(fence);
		return ERR_PTR(-EDEADLK);
	}
	sync_file = sync_file_create(fence);
	dma_fence_put(fence);
	return sync_file ? sync_file->file : ERR_PTR(-ENOMEM);
}

int npuipc_ioctl_obj_export(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_obj_export *args = data;
	struct npuipc_object *obj;
	struct file *out;
	int fd, ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_OBJ_EXPORT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->fd))
		return -EINVAL;
	obj = npuipc_object_lookup(nfile, args->handle, 0);
	if (IS_ERR(obj))
		return PTR_ERR(obj);

	ret = -EINVAL;
	if (npuipc_refuse(drm, obj->type == NPUIPC_OBJ_STREAM))
		goto out_put;
	if (npuipc_refuse(drm, (args->flags & NPUIPC_OBJ_EXPORT_SYNC_FILE) &&
			  obj->type != NPUIPC_OBJ_EVENT))
		goto out_put;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_put;
	}
	if (args->flags & NPUIPC_OBJ_EXPORT_SYNC_FILE)
		out = npuipc_event_sync_file(obj);
	else
		out = npuipc_sync_export_file(obj);
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
	in = fget(args->fd);
	if (!in)
		return -EBADF;
	obj = npuipc_sync_import_file(in);
	fput(in);
	if (npuipc_refuse(drm, !obj))
		return -EINVAL;

	ret = npuipc_handle_add(nfile, obj, &args->handle);
	if (ret)
		npuipc_object_put(obj);
	else
		args->type = obj->type;
	return ret;
}

/*
 * Rounded up, plus the partial jiffy now: never shorter than asked. Any
 * s64 works: beyond S64_MAX / 2 ns (146 years) a wait is as good as
 * endless, and the sum below cannot overflow.
 */
static long npuipc_wait_timeout_jiffies(s64 timeout_ns)
{
	if (timeout_ns < 0)
		return MAX_SCHEDULE_TIMEOUT;
	timeout_ns = min_t(s64, timeout_ns, S64_MAX / 2);
	return min_t(u64, nsecs_to_jiffies64(timeout_ns + TICK_NSEC - 1) + 1,
		     MAX_SCHEDULE_TIMEOUT - 1);
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

int npuipc_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_wait *args = data;
	struct npuipc_stream *stream = NULL;
	struct npuipc_object *obj;
	struct dma_fence *fence;
	int ret, status = 0;
	ktime_t deadline = 0;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_WAIT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->status))
		return -EINVAL;
	obj = npuipc_object_lookup(nfile, args->handle, 0);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	/* One deadline for every pass below; beyond 2^62 ns is endless anyway. */
	if (args->timeout_ns > 0)
		deadline = ktime_add_ns(ktime_get(), min_t(s64, args->timeout_ns, S64_MAX / 2));

	switch (obj->type) {
	case NPUIPC_OBJ_STREAM:
		stream = container_of(obj, struct npuipc_stream, base);
		break;
	case NPUIPC_OBJ_EVENT:
		if (npuipc_refuse(drm, args->flags & NPUIPC_WAIT_RECOVER)) {
			ret = -EINVAL;
			goto out_put;
		}
		fence = npuipc_event_last(container_of(obj, struct npuipc_event, base));
		ret = fence ? npuipc_wait_fence(fence, npuipc_wait_left(args, deadline)) : 0;
		if (fence && !ret)
			status = fence->error;
		dma_fence_put(fence);
		goto out_status;
	default:
		drm_dbg_driver(drm, "%s: refused: handle %u is a notify\n", __func__, args->handle);
		ret = -EINVAL;
		goto out_put;
	}

	/*
	 * A stream: everything submitted so far, then its error read again
	 * (the jobs just waited for may have failed). RECOVER clears the
	 * error once no job is queued, and reports the error it cleared; jobs
	 * submitted after the fence was taken, and cancelled since the stream
	 * failed, are waited for too: a failed stream takes no new ones, and
	 * every pass ends at the same deadline.
	 */
	for (;;) {
		fence = npuipc_stream_last(stream, &status);
		ret = fence ? npuipc_wait_fence(fence, npuipc_wait_left(args, deadline)) : 0;
		dma_fence_put(fence);
		if (ret)
			break;
		dma_fence_put(npuipc_stream_last(stream, &status));
		if (!(args->flags & NPUIPC_WAIT_RECOVER))
			break;
		ret = npuipc_stream_recover(stream, &status);
		if (ret != -EBUSY)
			break;
	}
out_status:
	/*
	 * Interrupted, a finite wait leaves in @timeout_ns what is left of it
	 * (the DRM core copies the structure back even on failure), so that
	 * the call the kernel restarts ends at the same deadline.
	 */
	if (ret == -ERESTARTSYS && args->timeout_ns > 0)
		args->timeout_ns = npuipc_wait_left(args, deadline);
	if (!ret)
		args->status = status;
out_put:
	npuipc_object_put(obj);
	return ret;
}
