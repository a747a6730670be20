// SPDX-License-Identifier: GPL-2.0
/*
 * Events and notifies: the synchronisation objects processes share.
 *
 * An event is the fence of its most recent record. A notify is a flag with
 * an owner: records set it, the owner's WAIT_NOTIFY jobs consume it. Both
 * travel between processes as anon-inode fds (OBJ_EXPORT/OBJ_IMPORT).
 */
#include <linux/anon_inodes.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>

#include "npuipc_drv.h"
#include "npuipc_stream.h"
#include "npuipc_sync.h"
#include "drm/npuipc_drm.h"

struct npuipc_event *npuipc_event_create(void)
{
	struct npuipc_event *event = kzalloc(sizeof(*event), GFP_KERNEL_ACCOUNT);

	if (!event)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_EVENT);
	event->base.type = NPUIPC_OBJ_EVENT;
	kref_init(&event->base.kref);
	spin_lock_init(&event->lock);
	init_waitqueue_head(&event->poll_wq);
	return event;
}

void npuipc_event_free(struct npuipc_event *event)
{
	if (event->poll_fence) {
		dma_fence_remove_callback(event->poll_fence, &event->poll_cb);
		dma_fence_put(event->poll_fence);
	}
	dma_fence_put(event->last);
	kfree(event);
	npuipc_live_dec(NPUIPC_KIND_EVENT);
}

/* The most recent record's fence, referenced; NULL if never recorded. */
struct dma_fence *npuipc_event_last(struct npuipc_event *event)
{
	struct dma_fence *fence;

	spin_lock(&event->lock);
	fence = dma_fence_get(event->last);
	spin_unlock(&event->lock);
	return fence;
}

void npuipc_event_record(struct npuipc_event *event, struct dma_fence *fence)
{
	struct dma_fence *old;

	spin_lock(&event->lock);
	old = event->last;
	event->last = dma_fence_get(fence);
	spin_unlock(&event->lock);
	dma_fence_put(old);
}

struct npuipc_notify *npuipc_notify_create(struct npuipc_file *owner)
{
	struct npuipc_notify *notify = kzalloc(sizeof(*notify), GFP_KERNEL_ACCOUNT);

	if (!notify)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_NOTIFY);
	notify->base.type = NPUIPC_OBJ_NOTIFY;
	kref_init(&notify->base.kref);
	spin_lock_init(&notify->lock);
	INIT_LIST_HEAD(&notify->waiters);
	init_waitqueue_head(&notify->poll_wq);
	notify->owner = owner;
	spin_lock(&owner->owned_lock);
	list_add_tail(&notify->owner_node, &owner->owned_notifies);
	spin_unlock(&owner->owned_lock);
	return notify;
}

/*
 * The last reference is gone. While the notify is on its owner's list,
 * closing the owner waits for it to leave (npuipc_notify_orphan_all()),
 * so the owner outlives this.
 */
void npuipc_notify_free(struct npuipc_notify *notify)
{
	struct npuipc_file *owner;

	/* Parked jobs hold a reference: none can be left. */
	WARN_ON(!list_empty(&notify->waiters));
	spin_lock(&notify->lock);
	owner = notify->owner;
	spin_unlock(&notify->lock);
	if (owner) {
		spin_lock(&owner->owned_lock);
		list_del(&notify->owner_node);
		/* Under the lock: once it is dropped, the owner may be gone. */
		wake_up_var(&owner->owned_notifies);
		spin_unlock(&owner->owned_lock);
	}
	kfree(notify);
	npuipc_live_dec(NPUIPC_KIND_NOTIFY);
}

bool npuipc_notify_owned_by(struct npuipc_notify *notify, struct npuipc_file *nfile)
{
	bool owned;

	spin_lock(&notify->lock);
	owned = notify->owner == nfile;
	spin_unlock(&notify->lock);
	return owned;
}

/* Whether @notify, being freed, has left @nfile's list (the file is closing: no new ones). */
static bool npuipc_notify_left(struct npuipc_file *nfile, struct npuipc_notify *notify)
{
	bool left;

	spin_lock(&nfile->owned_lock);
	left = list_first_entry_or_null(&nfile->owned_notifies,
					struct npuipc_notify, owner_node) != notify;
	spin_unlock(&nfile->owned_lock);
	return left;
}

/*
 * The owner's file is closing: the notifies it made that others still hold
 * lose their owner, and their pollers learn that no wait will come. One
 * being freed right now takes itself off the list: wait for that.
 */
void npuipc_notify_orphan_all(struct npuipc_file *nfile)
{
	struct npuipc_notify *notify;

	for (;;) {
		spin_lock(&nfile->owned_lock);
		notify = list_first_entry_or_null(&nfile->owned_notifies,
						  struct npuipc_notify, owner_node);
		if (notify && !kref_get_unless_zero(&notify->base.kref)) {
			spin_unlock(&nfile->owned_lock);
			wait_var_event(&nfile->owned_notifies, npuipc_notify_left(nfile, notify));
			continue;
		}
		if (notify)
			list_del(&notify->owner_node);
		spin_unlock(&nfile->owned_lock);
		if (!notify)
			break;
		spin_lock(&notify->lock);
		notify->owner = NULL;
		spin_unlock(&notify->lock);
		wake_up_interruptible_all(&notify->poll_wq);
		npuipc_object_put(&notify->base);
	}
}

/*
 * A record: hand the flag to the first parked wait, or set it. Returns that
 * wait's job if its stream was claimed here: the caller completes it once
 * its own signalling is done (npuipc_completion_add_ready()).
 */
struct npuipc_job *npuipc_notify_record(struct npuipc_notify *notify)
{
	struct npuipc_job *job;
	bool claimed = false;

	spin_lock(&notify->lock);
	job = list_first_entry_or_null(&notify->waiters, struct npuipc_job, notify_node);
	if (job) {
		list_del_init(&job->notify_node);
		job->notify_parked = false;
		job->notify_satisfied = true;
		/* Claimed, the job stays at the head of its stream until run. */
		claimed = npuipc_stream_try_claim(job->stream);
		if (!claimed)
			npuipc_stream_kick(job->stream);
	} else {
		notify->set = true;
	}
	spin_unlock(&notify->lock);
	if (!job)
		wake_up_interruptible_all(&notify->poll_wq);
	return claimed ? job : NULL;
}

/* A reset: a record no wait has consumed yet is dropped. */
void npuipc_notify_reset(struct npuipc_notify *notify)
{
	spin_lock(&notify->lock);
	notify->set = false;
	spin_unlock(&notify->lock);
}

/*
 * Runs a WAIT_NOTIFY job: 0 once the flag was consumed, -EINPROGRESS while
 * parked, -ETIMEDOUT when @expired and still parked.
 */
int npuipc_notify_wait(struct npuipc_notify *notify, struct npuipc_job *job,
		       bool expired)
{
	int ret = -EINPROGRESS;

	spin_lock(&notify->lock);
	if (job->notify_satisfied) {
		ret = 0;
	} else if (!job->notify_parked) {
		if (notify->set) {
			notify->set = false;
			ret = 0;
		} else {
			list_add_tail(&job->notify_node, &notify->waiters);
			job->notify_parked = true;
		}
	} else if (expired) {
		list_del_init(&job->notify_node);
		job->notify_parked = false;
		ret = -ETIMEDOUT;
	}
	spin_unlock(&notify->lock);
	return ret;
}

/*
 * A parked or satisfied job is being cancelled. A record it had already
 * been handed is not lost: it goes to the next waiter, or sets the flag.
 * Returns a job to complete, as npuipc_notify_record() does.
 */
struct npuipc_job *npuipc_notify_unpark(struct npuipc_notify *notify, struct npuipc_job *job)
{
	bool pass_on;

	spin_lock(&notify->lock);
	if (job->notify_parked) {
		list_del_init(&job->notify_node);
		job->notify_parked = false;
	}
	pass_on = job->notify_satisfied;
	job->notify_satisfied = false;
	spin_unlock(&notify->lock);
	return pass_on ? npuipc_notify_record(notify) : NULL;
}

static int npuipc_sync_file_release(struct inode *inode, struct file *file)
{
	npuipc_object_put(file->private_data);
	npuipc_live_dec(NPUIPC_KIND_OBJECT_FILE);
	return 0;
}

static __poll_t npuipc_notify_poll(struct file *file, poll_table *wait)
{
	struct npuipc_notify *notify = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &notify->poll_wq, wait);
	spin_lock(&notify->lock);
	if (notify->set)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (!notify->owner)
		mask |= EPOLLHUP | EPOLLERR;
	spin_unlock(&notify->lock);
	return mask;
}

static void npuipc_event_poll_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct npuipc_event *event = container_of(cb, struct npuipc_event, poll_cb);

	wake_up_all(&event->poll_wq);
}

/* Readable once the most recent record has completed, or if none was made. */
static __poll_t npuipc_event_poll(struct file *file, poll_table *wait)
{
	struct npuipc_event *event = file->private_data;
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
	.release = npuipc_sync_file_release,
	.poll = npuipc_event_poll,
	.llseek = noop_llseek,
};

static const struct file_operations npuipc_notify_fops = {
	.owner = THIS_MODULE,
	.release = npuipc_sync_file_release,
	.poll = npuipc_notify_poll,
	.llseek = noop_llseek,
};

/* A new file holding a reference to the event or notify @obj. */
struct file *npuipc_sync_export_file(struct npuipc_object *obj)
{
	const struct file_operations *fops;
	struct file *file;
	const char *name;

	if (obj->type == NPUIPC_OBJ_EVENT) {
		fops = &npuipc_event_fops;
		name = "[npuipc_event]";
	} else {
		fops = &npuipc_notify_fops;
		name = "[npuipc_notify]";
	}
	npuipc_object_get(obj);
	file = anon_inode_getfile(name, fops, obj, O_RDWR | O_CLOEXEC);
	if (IS_ERR(file))
		npuipc_object_put(obj);
	else
		npuipc_live_inc(NPUIPC_KIND_OBJECT_FILE);
	return file;
}

/* The event or notify behind @file, referenced; NULL for any other file. */
struct npuipc_object *npuipc_sync_import_file(struct file *file)
{
	struct npuipc_object *obj;

	if (file->f_op != &npuipc_event_fops && file->f_op != &npuipc_notify_fops)
		return NULL;
	obj = file->private_data;
	npuipc_object_get(obj);
	return obj;
}
