/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_STREAM_H__
#define __NPUIPC_STREAM_H__

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "npuipc_object.h"

struct npuipc_bo;
struct npuipc_event;
struct npuipc_notify;

enum {
	NPUIPC_STREAM_IDLE,
	NPUIPC_STREAM_CLAIMED,
	NPUIPC_STREAM_CLOSED,
};

struct npuipc_stream {
	struct npuipc_object base;
	/* Its file: outlives every job, as closing the file shuts the stream. */
	struct npuipc_file *nfile;
	u64 fence_context;

	/* Serializes submits, so that seqno order is queue order. */
	struct mutex submit_lock;
	u64 next_seqno;

	/* Protects queue, queued, error, dying and last */
	spinlock_t lock;
	struct list_head queue;
	unsigned int queued;	/* jobs in queue, at most NPUIPC_MAX_QUEUED_JOBS */
	int error;		/* first failure; later jobs are cancelled */
	bool dying;
	/*
	 * NPUIPC_STREAM_*: who runs the head of the queue. The stream's worker
	 * or a hand-off holds it (CLAIMED) while running and completing jobs,
	 * so that fences signal in order; shutdown ends it (CLOSED).
	 */
	atomic_t claim;
	struct list_head claim_node;	/* in a hand-off's claimed streams */
	ktime_t last_signal;		/* the claim's holder's: latest fence timestamp */
	struct dma_fence *last;	/* fence of the last submitted job */

	struct work_struct work;	/* on the engine's high-priority queue */
	struct kthread_work bulk_work;	/* COPY and FILL, on its file's copy worker */
	struct delayed_work timeout_work;
};

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
	u8 value;

	struct dma_fence *wait_fence;
	struct dma_fence_cb cb;
	bool cb_armed;
	/* WAIT_* timeout, counted from when the wait starts; 0: none. */
	unsigned long timeout_jiffies;
	unsigned long deadline;		/* valid once deadline_armed */
	bool deadline_armed;

	struct npuipc_event *event;
	struct npuipc_notify *notify;
	struct list_head notify_node;	/* in notify->waiters while parked */
	bool notify_parked;
	bool notify_satisfied;
	/* Waits without a timeout for what may never come (see the fence flag). */
	bool unbounded;
};

extern unsigned int npuipc_job_timeout_ms;

int npuipc_engine_init(void);
int npuipc_file_copy_worker(struct npuipc_file *nfile);
void npuipc_engine_fini(void);

struct npuipc_stream *npuipc_stream_create(struct npuipc_file *nfile);
void npuipc_stream_shutdown(struct npuipc_stream *stream);
void npuipc_stream_free(struct npuipc_stream *stream);
struct dma_fence *npuipc_stream_last(struct npuipc_stream *stream, int *error);
int npuipc_stream_recover(struct npuipc_stream *stream, int *cleared);
void npuipc_stream_kick(struct npuipc_stream *stream);
bool npuipc_stream_try_claim(struct npuipc_stream *stream);

bool npuipc_fence_unbounded(struct dma_fence *fence);

int npuipc_ioctl_submit(struct drm_device *drm, void *data,
			struct drm_file *file);

#endif /* __NPUIPC_STREAM_H__ */
