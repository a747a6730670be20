// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs npuipc_streams: per open file of the device, its streams (queue
 * depth, error, who holds the claim, the head job and what it waits on),
 * its events (the latest record) and its notifies (set, parked waits).
 * What one reads to see why a stream does not move.
 */
#include <linux/dma-fence.h>
#include <linux/pid.h>
#include <linux/seq_file.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "npuipc_debug_state.h"
#include "npuipc_drv.h"
#include "npuipc_object.h"
#include "npuipc_stream.h"
#include "npuipc_sync.h"
#include "drm/npuipc_drm.h"

static const char *const npuipc_job_kind_names[] = {
	[NPUIPC_JOB_COPY] = "copy",
	[NPUIPC_JOB_FILL] = "fill",
	[NPUIPC_JOB_WAIT_SYNC_FILE] = "wait_sync_file",
	[NPUIPC_JOB_WAIT_SYNCOBJ] = "wait_syncobj",
	[NPUIPC_JOB_WAIT_EVENT] = "wait_event",
	[NPUIPC_JOB_WAIT_NOTIFY] = "wait_notify",
	[NPUIPC_JOB_RECORD_EVENT] = "record_event",
	[NPUIPC_JOB_RECORD_NOTIFY] = "record_notify",
	[NPUIPC_JOB_RESET_NOTIFY] = "reset_notify",
};

static const char *const npuipc_claim_names[] = {
	[NPUIPC_STREAM_IDLE] = "idle",
	[NPUIPC_STREAM_CLAIMED] = "claimed",
	[NPUIPC_STREAM_CLOSED] = "closed",
};

/*
 * A fence as "driver timeline context:seqno state"; its state read, not
 * checked (a check may signal a foreign fence and run its callbacks).
 */
static void npuipc_show_fence(struct seq_file *m, struct dma_fence *fence)
{
	seq_printf(m, "fence %s %s %llu:%llu %s", fence->ops->get_driver_name(fence),
		   fence->ops->get_timeline_name(fence), fence->context, fence->seqno,
		   !test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &fence->flags) ? "pending" :
		   fence->error ? "failed" : "signalled");
}

/* The head job and what it waits on; stream->lock held. */
static void npuipc_show_head(struct seq_file *m, struct npuipc_job *job)
{
	seq_printf(m, "    head: %s", job->kind < ARRAY_SIZE(npuipc_job_kind_names) ?
		   npuipc_job_kind_names[job->kind] : "?");
	if (job->kind == NPUIPC_JOB_COPY || job->kind == NPUIPC_JOB_FILL)
		seq_printf(m, " of %llu bytes", job->size);
	if (job->notify)
		seq_printf(m, " on notify %p%s", job->notify,
			   READ_ONCE(job->notify_parked) ? ", parked" : "");
	if (job->wait_fence) {
		seq_puts(m, " on ");
		npuipc_show_fence(m, job->wait_fence);
	}
	if (job->timeout_jiffies)
		seq_printf(m, ", timeout %llu ms", jiffies64_to_msecs(job->timeout_jiffies));
	seq_putc(m, '\n');
}

static void npuipc_show_stream(struct seq_file *m, unsigned long handle,
			       struct npuipc_stream *stream)
{
	struct npuipc_job *head;
	int claim = atomic_read(&stream->claim);

	spin_lock(&stream->lock);
	seq_printf(m, "  stream %lu: %u queued, error %d, claim %s%s\n", handle, stream->queued,
		   stream->error, claim >= 0 && claim < ARRAY_SIZE(npuipc_claim_names) ?
		   npuipc_claim_names[claim] : "?", stream->dying ? ", dying" : "");
	head = list_first_entry_or_null(&stream->queue, struct npuipc_job, node);
	if (head)
		npuipc_show_head(m, head);
	spin_unlock(&stream->lock);
}

static void npuipc_show_event(struct seq_file *m, unsigned long handle,
			      struct npuipc_event *event)
{
	struct dma_fence *last = npuipc_event_last(event);

	seq_printf(m, "  event %lu: ", handle);
	if (last) {
		seq_puts(m, "last record ");
		npuipc_show_fence(m, last);
		dma_fence_put(last);
	} else {
		seq_puts(m, "never recorded");
	}
	seq_putc(m, '\n');
}

static void npuipc_show_notify(struct seq_file *m, unsigned long handle,
			       struct npuipc_notify *notify)
{
	unsigned int parked;
	bool set;

	spin_lock(&notify->lock);
	set = notify->set;
	parked = list_count_nodes(&notify->waiters);
	spin_unlock(&notify->lock);
	seq_printf(m, "  notify %lu (%p): %s, %u parked waits\n", handle, notify,
		   set ? "set" : "not set", parked);
}

/*
 * One file's objects. Each is taken with a reference out of the handle
 * table's lock, so that showing it may take its own lock.
 */
static void npuipc_show_file(struct seq_file *m, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_object *obj;
	unsigned long handle = 0;

	seq_printf(m, "client %llu pid %d\n", nfile->client_id, pid_nr(file->pid));
	for (;; handle++) {
		xa_lock(&nfile->objects);
		obj = xa_find(&nfile->objects, &handle, ULONG_MAX, XA_PRESENT);
		if (obj)
			npuipc_object_get(obj);
		xa_unlock(&nfile->objects);
		if (!obj)
			break;
		switch (obj->type) {
		case NPUIPC_OBJ_STREAM:
			npuipc_show_stream(m, handle, container_of(obj, struct npuipc_stream, base));
			break;
		case NPUIPC_OBJ_EVENT:
			npuipc_show_event(m, handle, container_of(obj, struct npuipc_event, base));
			break;
		case NPUIPC_OBJ_NOTIFY:
			npuipc_show_notify(m, handle, container_of(obj, struct npuipc_notify, base));
			break;
		}
		npuipc_object_put(obj);
		cond_resched();	/* up to NPUIPC_MAX_OBJECTS, with filelist_mutex held */
	}
}

void npuipc_streams_show(struct seq_file *m, struct drm_device *drm)
{
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead)
		npuipc_show_file(m, file);
	mutex_unlock(&drm->filelist_mutex);
}
