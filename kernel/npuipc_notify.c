// SPDX-License-Identifier: GPL-2.0
/*
 * Notifies: a notify is a flag with an owner (the file that created it).
 * Records set it, or hand it to the first of the owner's parked
 * WAIT_NOTIFY jobs; waits consume it. It travels between processes as a
 * pollable anon-inode fd (OBJ_EXPORT/OBJ_IMPORT); only its owner may wait
 * on it or reset it.
 */
#include <linux/error-injection.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "npuipc_drv.h"
#include "npuipc_engine.h"
#include "npuipc_file.h"
#include "npuipc_job.h"
#include "npuipc_notify.h"
#include "drm/npuipc_drm.h"

static struct npuipc_object *npuipc_notify_create(struct npuipc_file *owner)
{
	struct npuipc_notify *notify = kzalloc(sizeof(*notify), GFP_KERNEL_ACCOUNT);

	if (!notify)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_NOTIFY);
	npuipc_object_init(&notify->base, &npuipc_notify_funcs);
	spin_lock_init(&notify->lock);
	INIT_LIST_HEAD(&notify->waiters);
	init_waitqueue_head(&notify->poll_wq);
	notify->owner = owner;
	spin_lock(&owner->owned_lock);
	list_add_tail(&notify->owner_node, &owner->owned_notifies);
	spin_unlock(&owner->owned_lock);
	return &notify->base;
}
ALLOW_ERROR_INJECTION(npuipc_notify_create, NULL);

/*
 * The last reference is gone. While the notify is on its owner's list,
 * closing the owner waits for it to leave (npuipc_notify_orphan_all()),
 * so the owner outlives this.
 */
static void npuipc_notify_free(struct npuipc_object *obj)
{
	struct npuipc_notify *notify = to_npuipc_notify(obj);
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

/**
 * npuipc_notify_owned_by() - whether a file owns a notify
 * @notify: the notify
 * @nfile: the file's npuipc state
 *
 * Return: true if @nfile owns @notify; an orphaned notify has no owner.
 */
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

/**
 * npuipc_notify_orphan_all() - orphan the notifies a closing file made
 * @nfile: the file's npuipc state
 *
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
		if (notify && !npuipc_object_get_unless_zero(&notify->base)) {
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

/**
 * npuipc_notify_record() - record a notify
 * @notify: the notify
 *
 * A record: hand the flag to the first parked wait, or set it.
 *
 * Return: that wait's job if its stream was claimed here: the caller completes
 * it once its own signalling is done (npuipc_completion_add_ready()); NULL
 * otherwise.
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
		claimed = npuipc_engine_try_claim(job->stream);
		if (!claimed)
			npuipc_engine_kick(job->stream);
	} else {
		notify->set = true;
	}
	spin_unlock(&notify->lock);
	if (!job)
		wake_up_interruptible_all(&notify->poll_wq);
	return claimed ? job : NULL;
}

/**
 * npuipc_notify_reset() - reset a notify
 * @notify: the notify
 *
 * A reset: a record no wait has consumed yet is dropped.
 */
void npuipc_notify_reset(struct npuipc_notify *notify)
{
	spin_lock(&notify->lock);
	notify->set = false;
	spin_unlock(&notify->lock);
}

/**
 * npuipc_notify_wait() - run a WAIT_NOTIFY job
 * @notify: the notify waited on
 * @job: the WAIT_NOTIFY job
 * @expired: whether the job's timeout has passed
 *
 * Consumes the flag if it is set, or parks the job among the notify's waiters.
 *
 * Return: 0 once the flag was consumed, -EINPROGRESS while parked, -ETIMEDOUT
 * when @expired and still parked.
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

/**
 * npuipc_notify_unpark() - take a cancelled job off a notify
 * @notify: the notify the job waits on
 * @job: the parked or satisfied WAIT_NOTIFY job
 *
 * A parked or satisfied job is being cancelled. A record it had already
 * been handed is not lost: it goes to the next waiter, or sets the flag.
 *
 * Return: a job to complete, as npuipc_notify_record() returns it, or NULL.
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

static __poll_t npuipc_notify_poll(struct file *file, poll_table *wait)
{
	struct npuipc_notify *notify = to_npuipc_notify(file->private_data);
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

static const struct file_operations npuipc_notify_fops = {
	.owner = THIS_MODULE,
	.release = npuipc_object_file_release,
	.poll = npuipc_notify_poll,
	.llseek = noop_llseek,
};

static void npuipc_notify_show(struct seq_file *m, unsigned long handle,
			       struct npuipc_object *obj)
{
	struct npuipc_notify *notify = to_npuipc_notify(obj);
	unsigned int parked;
	bool set;

	spin_lock(&notify->lock);
	set = notify->set;
	parked = list_count_nodes(&notify->waiters);
	spin_unlock(&notify->lock);
	seq_printf(m, "  notify %lu (%p): %s, %u parked waits\n", handle, notify,
		   set ? "set" : "not set", parked);
}

const struct npuipc_object_funcs npuipc_notify_funcs = {
	.type = NPUIPC_OBJ_NOTIFY,
	.name = "notify",
	.create = npuipc_notify_create,
	.free = npuipc_notify_free,
	.fops = &npuipc_notify_fops,
	.file_name = "[npuipc_notify]",
	.show = npuipc_notify_show,
};
