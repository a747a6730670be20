/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_STREAM_H__
#define __NPUIPC_STREAM_H__

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "npuipc_object.h"

struct drm_device;
struct drm_file;
struct npuipc_file;

/* Values of npuipc_stream.claim (npuipc_engine.c). */
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

	/* Protects next_seqno; serializes submits, so that seqno order is queue order */
	struct mutex submit_lock;
	u64 next_seqno;

	/* Protects queue, queued, error, failed_job, halted, continue_on_failure, dying and last */
	spinlock_t lock;
	struct list_head queue;
	unsigned int queued;	/* jobs in queue, at most NPUIPC_MAX_QUEUED_JOBS */
	int error;		/* first failure since the last recovery */
	u64 failed_job;		/* the seqno of the job that failed with it */
	bool halted;		/* later jobs are cancelled, submits refused */
	bool continue_on_failure; /* NPUIPC_FAILURE_CONTINUE: a failure does not halt */
	bool dying;
	/* npuipc_engine_stop_stream() is done: set once, with release order. */
	bool stopped;
	/*
	 * NPUIPC_STREAM_*: who runs the head of the queue. The stream's worker
	 * or a hand-off holds it (CLAIMED) while running and completing jobs,
	 * so that fences signal in order; shutdown ends it (CLOSED).
	 */
	atomic_t claim;
	struct list_head claim_node;	/* in a hand-off's claimed streams */
	ktime_t last_signal;		/* the claim's holder's: latest fence timestamp */
	/* Fence of the last submitted job; written holding submit_lock too. */
	struct dma_fence *last;

	struct work_struct work;	/* on the engine's high-priority queue */
	struct kthread_work bulk_work;	/* COPY and FILL, on its file's copy worker */
	struct delayed_work timeout_work;
};

static inline struct npuipc_stream *to_npuipc_stream(struct npuipc_object *obj)
{
	return container_of(obj, struct npuipc_stream, base);
}

int npuipc_ioctl_submit(struct drm_device *drm, void *data,
			struct drm_file *file);
int npuipc_ioctl_stream_set_param(struct drm_device *drm, void *data,
				  struct drm_file *file);
int npuipc_ioctl_stream_abort(struct drm_device *drm, void *data,
			      struct drm_file *file);

#endif /* __NPUIPC_STREAM_H__ */
