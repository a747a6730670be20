// SPDX-License-Identifier: GPL-2.0
/*
 * Events: an event is the fence of its most recent record (a RECORD_EVENT
 * job's). It travels between processes as a pollable anon-inode fd
 * (OBJ_EXPORT/OBJ_IMPORT), or leaves npuipc as a sync_file of that fence.
 */
#include <linux/dma-fence.h>
#include <linux/error-injection.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sync_file.h>

#include <drm/drm_print.h>

#include "npuipc_debugfs.h"
#include "npuipc_drv.h"
#include "npuipc_event.h"
#include "npuipc_job.h"
#include "drm/npuipc_drm.h"

static struct npuipc_object *npuipc_event_create(struct npuipc_file *nfile)
{
	struct npuipc_event *event = kzalloc(sizeof(*event), GFP_KERNEL_ACCOUNT);

	if (!event)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_EVENT);
	npuipc_object_init(&event->base, &npuipc_event_funcs);
	spin_lock_init(&event->lock);
	init_waitqueue_head(&event->poll_wq);
	return &event->base;
}
ALLOW_ERROR_INJECTION(npuipc_event_create, NULL);

static void npuipc_event_free(struct npuipc_object *obj)
{
	struct npuipc_event *event = to_npuipc_event(obj);

	if (event->poll_fence) {
		dma_fence_remove_callback(event->poll_fence, &event->poll_cb);
		dma_fence_put(event->poll_fence);
	}
	dma_fence_put(event->last);
	kfree(event);
	npuipc_live_dec(NPUIPC_KIND_EVENT);
}

/**
 * npuipc_event_last() - the fence of an event's most recent record
 * @event: the event
 *
 * Return: The most recent record's fence, referenced; NULL if never recorded.
 */
struct dma_fence *npuipc_event_last(struct npuipc_event *event)
{
	struct dma_fence *fence;

	spin_lock(&event->lock);
	fence = dma_fence_get(event->last);
	spin_unlock(&event->lock);
	return fence;
}

/**
 * npuipc_event_record() - make a fence an event's most recent record
 * @event: the event recorded
 * @fence: the recording job's fence, of which the event takes a reference
 *
 * Waits on the event are for @fence from now on; the reference to the
 * previous record's fence is dropped.
 */
void npuipc_event_record(struct npuipc_event *event, struct dma_fence *fence)
{
	struct dma_fence *old;

	spin_lock(&event->lock);
	old = event->last;
	event->last = dma_fence_get(fence);
	spin_unlock(&event->lock);
	dma_fence_put(old);
}

/* WAIT: for the most recent record; a never-recorded event is complete. */
static int npuipc_event_wait(struct npuipc_object *obj, struct drm_device *drm,
			     const struct drm_npuipc_wait *args, ktime_t deadline,
			     struct npuipc_wait_result *res)
{
	struct dma_fence *fence;
	int ret;

	if (npuipc_refuse(drm, args->flags & NPUIPC_WAIT_RECOVER))
		return -EINVAL;
	fence = npuipc_event_last(to_npuipc_event(obj));
	ret = fence ? npuipc_object_wait_fence(fence, args, deadline) : 0;
	if (fence && !ret)
		res->status = fence->error;
	dma_fence_put(fence);
	return ret;
}

/*
 * OBJ_EXPORT with SYNC_FILE: the most recent record, unless it waits on
 * userspace.
 */
static struct file *npuipc_event_export_sync_file(struct npuipc_object *obj)
{
	struct dma_fence *fence = npuipc_event_last(to_npuipc_event(obj));
	struct sync_file *sync_file;

	/* Never recorded: complete, as a wait on it would be. */
	if (!fence)
		fence = dma_fence_get_stub();
	if (npuipc_fence_waits_on_user(fence)) {
		dma_fence_put(fence);
		return ERR_PTR(-EDEADLK);
	}
	sync_file = sync_file_create(fence);
	dma_fence_put(fence);
	return sync_file ? sync_file->file : ERR_PTR(-ENOMEM);
}

static void npuipc_event_poll_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct npuipc_event *event = container_of(cb, struct npuipc_event, poll_cb);

	wake_up_all(&event->poll_wq);
}

/* Readable once the most recent record has completed, or if none was made. */
static __poll_t npuipc_event_poll(struct file *file, poll_table *wait)
{
	struct npuipc_event *event = to_npuipc_event(file->private_data);
	struct dma_fence *fence;
	__poll_t mask = 0;

	poll_wait(file, &event->poll_wq, wait);
	spin_lock(&event->lock);
	fence = event->last;
	if (!fence || dma_fence_is_signaled(fence)) {
		mask = EPOLLIN | EPOLLRDNORM;
	} else if (event->poll_fence != fence) {
		/* One callback, on the record pollers wait for now. */
		if (event->poll_fence) {
			dma_fence_remove_callback(event->poll_fence, &event->poll_cb);
			dma_fence_put(event->poll_fence);
		}
		event->poll_fence = dma_fence_get(fence);
		if (dma_fence_add_callback(fence, &event->poll_cb, npuipc_event_poll_cb))
			mask = EPOLLIN | EPOLLRDNORM;
	}
	spin_unlock(&event->lock);
	return mask;
}

static const struct file_operations npuipc_event_fops = {
	.owner = THIS_MODULE,
	.release = npuipc_object_file_release,
	.poll = npuipc_event_poll,
	.llseek = noop_llseek,
};

static void npuipc_event_show(struct seq_file *m, unsigned long handle,
			      struct npuipc_object *obj)
{
	struct dma_fence *last = npuipc_event_last(to_npuipc_event(obj));

	seq_printf(m, "  event %lu: ", handle);
	if (last) {
		seq_puts(m, "last record ");
		npuipc_debugfs_show_fence(m, last);
		dma_fence_put(last);
	} else {
		seq_puts(m, "never recorded");
	}
	seq_putc(m, '\n');
}

const struct npuipc_object_funcs npuipc_event_funcs = {
	.type = NPUIPC_OBJ_EVENT,
	.name = "event",
	.create = npuipc_event_create,
	.free = npuipc_event_free,
	.wait = npuipc_event_wait,
	.export_sync_file = npuipc_event_export_sync_file,
	.fops = &npuipc_event_fops,
	.file_name = "[npuipc_event]",
	.show = npuipc_event_show,
};
