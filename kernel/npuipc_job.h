/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_JOB_H__
#define __NPUIPC_JOB_H__

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "drm/npuipc_drm.h"

struct drm_file;
struct npuipc_bo;
struct npuipc_event;
struct npuipc_notify;
struct npuipc_stream;
struct seq_file;

/* One job: its fence completes when the engine has run it. */
struct npuipc_job {
	struct dma_fence fence;		/* first: freed through dma_fence_free() */
	/* Protects fence; per job, as the fence may outlive its stream. */
	spinlock_t fence_lock;
	struct list_head node;		/* in stream->queue, then a completion's done */
	struct llist_node release_node;	/* in the engine's jobs to release */
	/*
	 * Waiters on this job's fence whose streams its callbacks claimed,
	 * completed right after the signal; the signal's fence_lock protects it.
	 */
	struct list_head handoffs;
	struct list_head handoff_node;	/* in another job's handoffs, or ready */
	struct npuipc_stream *stream;
	u32 kind;

	struct npuipc_bo *dst, *src;
	u64 dst_offset, src_offset, size;
	u64 value;		/* FILL's byte, or a value job's word */
	u32 flags;		/* the job's NPUIPC_FILL_*, _WRITE_VALUE_*, _WAIT_VALUE_* */

	struct dma_fence *wait_fence;
	struct dma_fence_cb cb;
	bool cb_armed;
	/* WAIT_* timeout, counted from when the wait starts; 0: none. */
	unsigned long timeout_jiffies;
	unsigned long deadline;		/* valid once deadline_armed */
	unsigned long poll_jiffies;	/* WAIT_VALUE: the last interval between reads */
	bool deadline_armed;

	struct npuipc_event *event;
	struct npuipc_notify *notify;
	/* The notify's lock protects notify_node, notify_parked and notify_satisfied. */
	struct list_head notify_node;	/* in notify->waiters while parked */
	bool notify_parked;
	bool notify_satisfied;
	/* Waits for what only userspace can do (see the fence flag). */
	bool waits_on_user;
};

/* COPY and FILL: user work of any length, run on the file's copy worker. */
static inline bool npuipc_job_is_bulk(const struct npuipc_job *job)
{
	return job->kind == NPUIPC_JOB_COPY || job->kind == NPUIPC_JOB_FILL;
}

struct npuipc_job *npuipc_job_alloc(struct npuipc_stream *stream);
int npuipc_job_parse(struct npuipc_job *job, const struct drm_npuipc_job *in,
		     struct drm_file *file);
void npuipc_job_init_fence(struct npuipc_job *job, u64 context, u64 seqno, bool waits_on_user);
void npuipc_job_release_resources(struct npuipc_job *job);
void npuipc_jobs_discard(struct npuipc_job **jobs, unsigned int count,
			 bool fences_initialized);
int npuipc_job_copy_fill(struct npuipc_job *job);
int npuipc_job_write_value(struct npuipc_job *job);
int npuipc_job_value_reached(struct npuipc_job *job);
void npuipc_job_show(struct seq_file *m, struct npuipc_job *job);

struct npuipc_job *npuipc_fence_to_job(struct dma_fence *fence);
bool npuipc_fence_waits_on_user(struct dma_fence *fence);

#endif /* __NPUIPC_JOB_H__ */
