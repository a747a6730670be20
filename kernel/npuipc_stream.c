// SPDX-License-Identifier: GPL-2.0
/*
 * Streams and the engine that runs their jobs.
 *
 * Each stream is a FIFO of jobs run in order by a work item on the engine's
 * workqueue, or, when a submit finds its stream idle and its first job is
 * not a COPY or FILL, by the submitting thread (direct submission; COPY
 * and FILL always go to their file's copy worker). A job that must wait (for a
 * fence or a notify) does not block the worker: it arms a callback (and a
 * deadline, if it has a timeout) that kicks the stream again. Every job
 * completes its dma_fence exactly once: with success, its error, or
 * -ECANCELED when its stream fails or goes away.
 */
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "npuipc_bo.h"
#include "npuipc_copy_worker.h"
#include "npuipc_drv.h"
#include "npuipc_stream.h"
#include "npuipc_sync.h"
#include "drm/npuipc_drm.h"

/* Jobs one hand-off completes: the wait, and RECORD_EVENT jobs behind it. */
#define NPUIPC_HANDOFF_MAX_JOBS		16

/* Submits of up to this many jobs are copied in without allocating. */
#define NPUIPC_SUBMIT_ON_STACK		2

/* The largest job timeout one may set (a running job stops at a close within 1 MiB anyway). */
#define NPUIPC_MAX_JOB_TIMEOUT_MS	60000U

/*
 * A wait with a longer timeout (146 years fit in timeout_ns) is as good as
 * endless: its fence counts as unbounded and stays inside npuipc.
 */
#define NPUIPC_MAX_BOUNDED_WAIT_NS	(60ULL * NSEC_PER_SEC)

unsigned int npuipc_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, npuipc_job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms, "A COPY or FILL job taking longer (its worker's CPU time; 10x in wall time) fails with -ETIMEDOUT (ms, default 10000, at most 60000)");

/* The engine: runs every stream's jobs; COPY and FILL on their file's copy worker. */

/* Jobs a stream runs on its copy worker before the next stream's turn. */
#define NPUIPC_COPY_JOBS_PER_TURN	4
static struct workqueue_struct *npuipc_engine_wq;

/*
 * Signalled jobs whose references are still to drop. The engine hands them
 * to a work item of their own: dropping the last reference to an import
 * takes its dma-buf's reservation lock, whose holder may be waiting for a
 * fence of the very stream the engine would otherwise stop to do it.
 */
static LLIST_HEAD(npuipc_jobs_to_release);
static void npuipc_release_work_fn(struct work_struct *work);
static DECLARE_WORK(npuipc_release_work, npuipc_release_work_fn);

/*
 * The engine's per-CPU workqueue is high-priority: waits, records and
 * completions are short, and their latency is the product's (a kick runs
 * the stream on the CPU that issued it, keeping a record-to-waiter hand-off
 * on one CPU; unbound measured ~20% slower in npuipc_sync_bench). It is
 * CPU-intensive: a long hand-off does not hold back other work on its CPU.
 *
 * COPY and FILL are user work of any length: they run on their file's
 * copy worker (npuipc_copy_worker.c), a kthread at nice 0 in the
 * submitter's cgroups, so that a flood of copies neither starves the
 * machine's nice-0 processes (measured: a 2 GiB copy held back its
 * submitter's wake-up for 2.6 s on the debug kernel at high priority,
 * 30 ms at normal) nor escapes its submitter's CPU limits.
 */
int npuipc_engine_init(void)
{
	npuipc_engine_wq = alloc_workqueue("npuipc-engine",
					   WQ_HIGHPRI | WQ_CPU_INTENSIVE | WQ_MEM_RECLAIM, 0);
	if (!npuipc_engine_wq)
		return -ENOMEM;
	return 0;
}

/*
 * The file's copy worker, chosen by its first COPY or FILL submit: the
 * submitting process's (npuipc_copy_worker.c). Process context, no lock held.
 */
int npuipc_file_copy_worker(struct npuipc_file *nfile)
{
	struct npuipc_copy_worker *w;
	int ret = 0;

	if (smp_load_acquire(&nfile->copy_worker))
		return 0;
	mutex_lock(&nfile->copy_worker_lock);
	if (!nfile->copy_worker) {
		w = npuipc_copy_worker_get();
		if (IS_ERR(w))
			ret = PTR_ERR(w);
		else
			smp_store_release(&nfile->copy_worker, w);
	}
	mutex_unlock(&nfile->copy_worker_lock);
	return ret;
}

void npuipc_engine_fini(void)
{
	/* Fence frees still in flight run module code: let them finish. */
	flush_work(&npuipc_release_work);
	rcu_barrier();
	destroy_workqueue(npuipc_engine_wq);
}

static const char *npuipc_fence_driver_name(struct dma_fence *fence)
{
	return "npuipc";
}

static const char *npuipc_fence_timeline_name(struct dma_fence *fence)
{
	return "npuipc-stream";
}

static void npuipc_job_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct npuipc_job, fence.rcu));
	npuipc_live_dec(NPUIPC_KIND_JOB);
	module_put(THIS_MODULE);
}

/*
 * Fences may outlive every npuipc file (a sync_file in another process), so
 * each one holds the module until it is freed, after an RCU grace period as
 * dma_fence_free() would; npuipc_engine_fini() waits for those callbacks.
 */
static void npuipc_fence_release(struct dma_fence *fence)
{
	call_rcu(&fence->rcu, npuipc_job_free_rcu);
}

static const struct dma_fence_ops npuipc_job_fence_ops = {
	.get_driver_name = npuipc_fence_driver_name,
	.get_timeline_name = npuipc_fence_timeline_name,
	.release = npuipc_fence_release,
};

/*
 * Set on a job's fence, at submit, when it may never signal: the job, or
 * one before it on its stream, waits without a timeout (or with one above
 * NPUIPC_MAX_BOUNDED_WAIT_NS) for a notify or for a fence with this flag.
 * Flagged fences stay inside npuipc (see npuipc_fence_unbounded()); every
 * other fence is bounded by timeouts.
 */
#define NPUIPC_FENCE_FLAG_UNBOUNDED	DMA_FENCE_FLAG_USER_BITS

/*
 * Whether @fence may never signal. The dma-fence rules require every fence
 * that leaves a driver to signal in bounded time (another driver, or the
 * kernel's memory management, may wait for it holding locks), so such a
 * fence is never exported as a sync_file (-EDEADLK). Foreign fences obey
 * those rules; a flagged fence that has signalled is harmless.
 */
bool npuipc_fence_unbounded(struct dma_fence *fence)
{
	return fence && fence->ops == &npuipc_job_fence_ops &&
	       test_bit(NPUIPC_FENCE_FLAG_UNBOUNDED, &fence->flags) &&
	       !dma_fence_is_signaled(fence);
}

void npuipc_stream_kick(struct npuipc_stream *stream)
{
	queue_work(npuipc_engine_wq, &stream->work);
}

static void npuipc_stream_timeout_work(struct work_struct *work)
{
	struct npuipc_stream *stream =
		container_of(to_delayed_work(work), struct npuipc_stream, timeout_work);

	npuipc_stream_kick(stream);
}

/*
 * A fence a job waits for has signalled. An npuipc job's fence signals only
 * by the engine's worker, a direct submission, hand-offs and shutdown, in
 * process context, which take
 * over the waiters claimed here once the signal is over; any other fence
 * may signal from any context, so its waiters always go through the
 * worker. Nothing but the claim's atomic is touched here: fence locks may
 * be taken in hard interrupt context (dma_fence_chain's irq_work).
 */
static void npuipc_job_fence_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct npuipc_job *job = container_of(cb, struct npuipc_job, cb);

	if (fence->ops == &npuipc_job_fence_ops && !fence->error &&
	    npuipc_stream_try_claim(job->stream)) {
		/* The signaller's fence lock is held: it protects handoffs. */
		list_add_tail(&job->handoff_node,
			      &container_of(fence, struct npuipc_job, fence)->handoffs);
		return;
	}
	npuipc_stream_kick(job->stream);
}

/* Drops what a job holds; its fence stays until the last reference. */
static void npuipc_job_release_resources(struct npuipc_job *job)
{
	if (job->dst)
		drm_gem_object_put(&job->dst->base);
	if (job->src)
		drm_gem_object_put(&job->src->base);
	dma_fence_put(job->wait_fence);
	if (job->event)
		npuipc_object_put(&job->event->base);
	if (job->notify)
		npuipc_object_put(&job->notify->base);
	job->dst = job->src = NULL;
	job->wait_fence = NULL;
	job->event = NULL;
	job->notify = NULL;
}

/*
 * Hand-offs. When the engine, running one stream, satisfies the wait at
 * the head of another, idle stream (by recording its notify, or by
 * signalling the npuipc fence it waits for), it completes that job itself
 * rather than waking that stream's worker: one context switch less between
 * a record and the waiter it releases.
 *
 * Whoever runs a stream holds its claim: the worker, or a hand-off. Taking
 * it is lock-free, so that a fence callback can; the claim keeps the
 * stream and its queue as they are (the worker cannot run, and shutdown
 * waits for it) until the claimant, in process context, checks under the
 * stream's lock that the job can still be completed.
 */
bool npuipc_stream_try_claim(struct npuipc_stream *stream)
{
	return atomic_cmpxchg(&stream->claim, NPUIPC_STREAM_IDLE, NPUIPC_STREAM_CLAIMED) ==
	       NPUIPC_STREAM_IDLE;
}

/*
 * Gives the claim back, under the stream's lock, and kicks the worker if
 * jobs are left. Shutdown takes the lock after seeing the claim free, so
 * unlocking is a claimant's last access to the stream.
 */
static void npuipc_stream_release_claim_locked(struct npuipc_stream *stream)
{
	lockdep_assert_held(&stream->lock);
	atomic_set(&stream->claim, NPUIPC_STREAM_IDLE);
	/*
	 * A full barrier: the store must be visible before wake_up_var()
	 * looks for waiters, or shutdown, checking the claim just after
	 * queueing itself, could miss both (see wait_var_event()).
	 */
	smp_mb();
	wake_up_var(&stream->claim);
	if (!list_empty(&stream->queue) && !stream->dying)
		npuipc_stream_kick(stream);
}

/*
 * One completion and the hand-offs it triggers: jobs whose waits it
 * satisfied, completed in turn without recursion. Their fences are put,
 * and their streams given back, only once all have signalled, keeping
 * that work off the path to the last waiter.
 */
struct npuipc_completion {
	/* One read of the clock: it may be slow (an emulated HPET under TCG). */
	ktime_t now;
	struct list_head ready;		/* claimed jobs, to complete */
	struct list_head done;		/* signalled jobs, to put */
	struct list_head claimed;	/* streams, to give back */
};

static void npuipc_completion_init(struct npuipc_completion *c)
{
	c->now = ktime_get();
	INIT_LIST_HEAD(&c->ready);
	INIT_LIST_HEAD(&c->done);
	INIT_LIST_HEAD(&c->claimed);
}

/*
 * Signals @job's fence; the waiters its callbacks claimed become ready.
 * What the job holds is dropped later, by the release work, outside the
 * signalling section (npuipc_completion_release()): freeing a buffer may
 * take locks that others hold while they wait for fences.
 * The completion's time may predate the stream's previous signal (a job
 * claimed by a hand-off was armed after it was read): a stream's fences
 * never go back in time. Only the claim's holder signals, so it may.
 */
static void npuipc_job_signal(struct npuipc_job *job, int error, struct npuipc_completion *c)
{
	struct npuipc_stream *stream = job->stream;

	if (error)
		dma_fence_set_error(&job->fence, error);
	if (ktime_after(c->now, stream->last_signal))
		stream->last_signal = c->now;
	dma_fence_signal_timestamp(&job->fence, stream->last_signal);
	/* Signalled: no callback can add to handoffs any more. */
	list_splice_tail_init(&job->handoffs, &c->ready);
	list_add_tail(&job->node, &c->done);
}

/*
 * Completes @job, whose wait was satisfied and whose stream the caller
 * claimed, and the RECORD_EVENT jobs right behind it (they only signal; a
 * bounded number, so that one record does bounded work for others). A job
 * that can no longer be completed here (the stream failed or is closing)
 * is left to the worker or to shutdown.
 */
static void npuipc_stream_complete_claimed(struct npuipc_job *job, struct npuipc_completion *c)
{
	struct npuipc_stream *stream = job->stream;
	unsigned int budget = NPUIPC_HANDOFF_MAX_JOBS;

	spin_lock(&stream->lock);
	if (stream->dying || stream->error ||
	    list_first_entry_or_null(&stream->queue, struct npuipc_job, node) != job) {
		npuipc_stream_release_claim_locked(stream);
		spin_unlock(&stream->lock);
		return;
	}
	do {
		list_del(&job->node);
		stream->queued--;
		spin_unlock(&stream->lock);
		npuipc_job_signal(job, 0, c);
		spin_lock(&stream->lock);
		job = stream->dying || stream->error ? NULL :
		      list_first_entry_or_null(&stream->queue, struct npuipc_job, node);
	} while (job && job->kind == NPUIPC_JOB_RECORD_EVENT && --budget);
	spin_unlock(&stream->lock);
	list_add_tail(&stream->claim_node, &c->claimed);
}

/* Claimed jobs whose waits were satisfied, completed after the caller's signal. */
static void npuipc_completion_add_ready(struct npuipc_completion *c, struct npuipc_job *job)
{
	if (job)
		list_add_tail(&job->handoff_node, &c->ready);
}

/* Completes the ready jobs; inside the caller's signalling section. */
static void npuipc_completion_run_ready(struct npuipc_completion *c)
{
	struct npuipc_job *job;

	while ((job = list_first_entry_or_null(&c->ready, struct npuipc_job, handoff_node))) {
		list_del_init(&job->handoff_node);
		npuipc_stream_complete_claimed(job, c);
		cond_resched();
	}
}

static void npuipc_release_work_fn(struct work_struct *work)
{
	struct llist_node *jobs = llist_del_all(&npuipc_jobs_to_release);
	struct npuipc_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, jobs, release_node) {
		npuipc_job_release_resources(job);
		dma_fence_put(&job->fence);
		cond_resched();
	}
}

/*
 * After the signalling section: gives the claimed streams back, and hands
 * the signalled jobs to the release work (their fences hold the module
 * until then, and npuipc_engine_fini() flushes it).
 */
static void npuipc_completion_release(struct npuipc_completion *c)
{
	struct npuipc_stream *stream, *next;
	struct npuipc_job *job, *tmp;
	bool queue = false;

	list_for_each_entry_safe(stream, next, &c->claimed, claim_node) {
		list_del(&stream->claim_node);
		spin_lock(&stream->lock);
		npuipc_stream_release_claim_locked(stream);
		spin_unlock(&stream->lock);
	}
	list_for_each_entry_safe(job, tmp, &c->done, node) {
		list_del(&job->node);
		queue |= llist_add(&job->release_node, &npuipc_jobs_to_release);
	}
	if (queue)
		queue_work(system_unbound_wq, &npuipc_release_work);
}

static bool npuipc_job_expired(struct npuipc_job *job)
{
	return job->deadline_armed && time_after_eq(jiffies, job->deadline);
}

/*
 * Starts the job's deadline on its first wait, and re-arms the timer on
 * later ones: the timer wheel may fire very long timeouts early.
 */
static void npuipc_job_arm_deadline(struct npuipc_job *job)
{
	if (!job->timeout_jiffies)
		return;
	if (!job->deadline_armed) {
		job->deadline = jiffies + job->timeout_jiffies;
		job->deadline_armed = true;
	}
	if (!npuipc_job_expired(job))
		mod_delayed_work(npuipc_engine_wq, &job->stream->timeout_work,
				 job->deadline - jiffies);
}

static int npuipc_job_wait_fence(struct npuipc_job *job)
{
	int ret;

	if (!job->wait_fence)
		return 0;
	if (!job->cb_armed) {
		ret = dma_fence_add_callback(job->wait_fence, &job->cb, npuipc_job_fence_cb);
		if (ret == -ENOENT)
			return job->wait_fence->error;
		job->cb_armed = true;
	}
	if (dma_fence_is_signaled(job->wait_fence)) {
		/* Waits for a callback still running on another CPU. */
		dma_fence_remove_callback(job->wait_fence, &job->cb);
		job->cb_armed = false;
		return job->wait_fence->error;
	}
	if (npuipc_job_expired(job)) {
		/* Lost the race with the signal? Then it is complete after all. */
		if (!dma_fence_remove_callback(job->wait_fence, &job->cb))
			return job->wait_fence->error;
		job->cb_armed = false;
		return -ETIMEDOUT;
	}
	npuipc_job_arm_deadline(job);
	return -EINPROGRESS;
}

static int npuipc_job_wait_notify(struct npuipc_job *job)
{
	int ret = npuipc_notify_wait(job->notify, job, npuipc_job_expired(job));

	if (ret == -EINPROGRESS)
		npuipc_job_arm_deadline(job);
	return ret;
}

/*
 * The engine's data mover. Word-aligned runs move as 64-bit words in an
 * unrolled loop: as fast as memcpy on hardware, and many times faster
 * under QEMU's TCG, which emulates the kernel's rep-movs memcpy slowly.
 */
static void npuipc_engine_copy(void *dst, const void *src, size_t n)
{
	u64 *d = dst;
	const u64 *s = src;

	if (!IS_ALIGNED((unsigned long)dst | (unsigned long)src | n, 64)) {
		memcpy(dst, src, n);
		return;
	}
	for (; n; n -= 64, d += 8, s += 8) {
		u64 a = s[0], b = s[1], c = s[2], e = s[3];
		u64 f = s[4], g = s[5], h = s[6], i = s[7];

		d[0] = a; d[1] = b; d[2] = c; d[3] = e;
		d[4] = f; d[5] = g; d[6] = h; d[7] = i;
	}
}

/*
 * Copies or fills page by page, checking the device's job timeout. The
 * timeout counts the copy worker's CPU time: a worker throttled by its
 * cgroup's cpu.max, or sharing a CPU, is not a job that overran. Ten times
 * the timeout of wall time is the backstop.
 */
static int npuipc_job_copy_fill(struct npuipc_job *job)
{
	unsigned int timeout_ms = min(READ_ONCE(npuipc_job_timeout_ms), NPUIPC_MAX_JOB_TIMEOUT_MS);
	unsigned long backstop = jiffies + 1 + msecs_to_jiffies(10 * timeout_ms);
	u64 cpu_start = current->se.sum_exec_runtime;
	u64 done = 0;

	while (done < job->size) {
		u64 d = job->dst_offset + done, s = job->src_offset + done;
		size_t n = min_t(u64, PAGE_SIZE - offset_in_page(d), job->size - done);
		void *dst;

		if (job->src)
			n = min_t(size_t, n, PAGE_SIZE - offset_in_page(s));
		dst = kmap_local_page(job->dst->pages[d >> PAGE_SHIFT]);
		if (job->src) {
			struct page *src_page = job->src->pages[s >> PAGE_SHIFT];
			void *src = kmap_local_page(src_page);

			/*
			 * Ranges aliasing the same memory (through an import)
			 * copy like memcpy: undefined contents, but nothing
			 * outside them is touched.
			 */
			if (src_page == job->dst->pages[d >> PAGE_SHIFT])
				memmove(dst + offset_in_page(d), src + offset_in_page(s), n);
			else
				npuipc_engine_copy(dst + offset_in_page(d), src + offset_in_page(s), n);
			kunmap_local(src);
		} else {
			memset(dst + offset_in_page(d), job->value, n);
		}
		kunmap_local(dst);
		done += n;
		if (!(d & (SZ_1M - 1))) {
			if (current->se.sum_exec_runtime - cpu_start > (u64)timeout_ms * NSEC_PER_MSEC ||
			    time_after(jiffies, backstop))
				return -ETIMEDOUT;
			/* Closing the stream's file must not wait for all of it. */
			if (READ_ONCE(job->stream->dying))
				return -ECANCELED;
			cond_resched();
		}
	}
	return 0;
}

/*
 * Runs @job: 0 when done, -EINPROGRESS while it waits, or its error. A
 * notify record that claimed a waiter's stream hands that job back in
 * @handed, to complete after @job.
 */
static int npuipc_job_run(struct npuipc_job *job, struct npuipc_job **handed)
{
	switch (job->kind) {
	case NPUIPC_JOB_COPY:
	case NPUIPC_JOB_FILL: {
		/* local_clock(): cheap, unlike an emulated HPET under TCG. */
		u64 start = local_clock();
		int ret = npuipc_job_copy_fill(job);

		atomic64_add(local_clock() - start, &job->stream->nfile->engine_copy_ns);
		return ret;
	}
	case NPUIPC_JOB_WAIT_SYNC_FILE:
	case NPUIPC_JOB_WAIT_SYNCOBJ:
	case NPUIPC_JOB_WAIT_EVENT:
		return npuipc_job_wait_fence(job);
	case NPUIPC_JOB_WAIT_NOTIFY:
		return npuipc_job_wait_notify(job);
	case NPUIPC_JOB_RECORD_NOTIFY:
		*handed = npuipc_notify_record(job->notify);
		return 0;
	case NPUIPC_JOB_RESET_NOTIFY:
		npuipc_notify_reset(job->notify);
		return 0;
	default:	/* RECORD_EVENT: its fence is the record */
		return 0;
	}
}

static bool npuipc_job_is_bulk(const struct npuipc_job *job)
{
	return job->kind == NPUIPC_JOB_COPY || job->kind == NPUIPC_JOB_FILL;
}

/*
 * Runs the stream's jobs until its queue is empty or its head waits. On
 * the high-priority queue, a COPY or FILL to run sends the stream to its
 * copy worker instead, which runs the copies and fills that follow, a few
 * a turn, and hands anything else back.
 */
static void npuipc_stream_run(struct npuipc_stream *stream, bool bulk, bool direct)
{
	struct npuipc_completion c;
	struct npuipc_job *job, *handed;
	unsigned int turn = NPUIPC_COPY_JOBS_PER_TURN;
	bool cookie, to_bulk = false;
	int error, ret;

	spin_lock(&stream->lock);
	/*
	 * Held while completing too, so that fences signal in order. A
	 * hand-off holding it kicks us again when it is done.
	 */
	if (stream->dying || !npuipc_stream_try_claim(stream)) {
		spin_unlock(&stream->lock);
		return;
	}
	for (;;) {
		job = stream->dying ? NULL :
		      list_first_entry_or_null(&stream->queue, struct npuipc_job, node);
		error = stream->error;
		if (!job)
			break;
		/* SUBMIT chose the worker before queuing any COPY or FILL. */
		if (!bulk && !error && npuipc_job_is_bulk(job) &&
		    !WARN_ON_ONCE(!smp_load_acquire(&stream->nfile->copy_worker))) {
			to_bulk = true;
			break;
		}
		/*
		 * On the copy worker, only copies and fills: waits, records and
		 * completions go back to the engine's high-priority queue (the
		 * claim's release below kicks it). The worker serves every stream
		 * of its process's files: after a turn of copies a stream goes to
		 * the back of its queue, so that one kept full cannot starve the
		 * others.
		 */
		if (bulk && !npuipc_job_is_bulk(job))
			break;
		if (bulk && !turn--) {
			to_bulk = true;
			break;
		}
		spin_unlock(&stream->lock);

		/*
		 * From running a job to its fence's signal, and the hand-offs
		 * that signal triggers: no allocation, no resv lock, no free.
		 */
		cookie = dma_fence_begin_signalling();
		handed = NULL;
		ret = error ? -ECANCELED : npuipc_job_run(job, &handed);

		spin_lock(&stream->lock);
		if (ret == -EINPROGRESS) {
			dma_fence_end_signalling(cookie);
			break;
		}
		list_del(&job->node);
		stream->queued--;
		if (ret && !stream->error)
			stream->error = ret;
		spin_unlock(&stream->lock);
		npuipc_completion_init(&c);
		npuipc_job_signal(job, ret, &c);
		npuipc_completion_add_ready(&c, handed);
		npuipc_completion_run_ready(&c);
		dma_fence_end_signalling(cookie);
		npuipc_completion_release(&c);
		cond_resched();
		spin_lock(&stream->lock);
	}
	/*
	 * Nothing to kick: the queue is empty, or its head waits, or the copy
	 * worker takes over (or gets the stream's next turn). Queued under
	 * the lock, after dying was checked: shutdown cancels the bulk work
	 * only after setting it, and waits for a running turn.
	 */
	if (to_bulk) {
		atomic_set(&stream->claim, NPUIPC_STREAM_IDLE);
		kthread_queue_work(stream->nfile->copy_worker->worker, &stream->bulk_work);
	} else if (bulk || direct) {
		/*
		 * A callback, record or deadline that fired for the waiting
		 * head while we held the claim kicked the worker, which found
		 * the claim taken and left. The worker's own work item would
		 * run again after such a kick; the copy worker and a direct
		 * submission are not that item, so they kick it themselves
		 * when jobs are left (and wake a shutdown waiting for the claim).
		 */
		npuipc_stream_release_claim_locked(stream);
	} else {
		atomic_set(&stream->claim, NPUIPC_STREAM_IDLE);
	}
	spin_unlock(&stream->lock);
}

/*
 * Runs an idle stream's new jobs in the submitting thread, as the worker
 * would. The caller holds a reference on the stream, so it may touch it
 * after giving the claim back: it wakes a shutdown that may be waiting for
 * the claim (also when the run handed the stream to its copy worker), which
 * only a work item's cancel_work_sync() would otherwise cover.
 */
static void npuipc_stream_run_direct(struct npuipc_stream *stream)
{
	npuipc_stream_run(stream, false, true);
	/* The claim's release must be visible before wake_up_var() looks. */
	smp_mb();
	wake_up_var(&stream->claim);
}

static void npuipc_stream_work(struct work_struct *work)
{
	npuipc_stream_run(container_of(work, struct npuipc_stream, work), false, false);
}

static void npuipc_stream_bulk_work(struct kthread_work *work)
{
	npuipc_stream_run(container_of(work, struct npuipc_stream, bulk_work), true, false);
}

struct npuipc_stream *npuipc_stream_create(struct npuipc_file *nfile)
{
	struct npuipc_stream *stream = kzalloc(sizeof(*stream), GFP_KERNEL_ACCOUNT);

	if (!stream)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_STREAM);
	stream->nfile = nfile;
	stream->base.type = NPUIPC_OBJ_STREAM;
	kref_init(&stream->base.kref);
	stream->fence_context = dma_fence_context_alloc(1);
	mutex_init(&stream->submit_lock);
	spin_lock_init(&stream->lock);
	INIT_LIST_HEAD(&stream->queue);
	atomic_set(&stream->claim, NPUIPC_STREAM_IDLE);
	INIT_WORK(&stream->work, npuipc_stream_work);
	kthread_init_work(&stream->bulk_work, npuipc_stream_bulk_work);
	INIT_DELAYED_WORK(&stream->timeout_work, npuipc_stream_timeout_work);
	return stream;
}

/*
 * Stops the stream's callbacks from reaching it again. A notify record the
 * job had been handed goes on to the next waiter: if that one's stream was
 * claimed, it is added to @c to complete.
 */
static void npuipc_job_disarm(struct npuipc_job *job, struct npuipc_completion *c)
{
	if (job->cb_armed && dma_fence_remove_callback(job->wait_fence, &job->cb))
		job->cb_armed = false;
	if (job->notify)
		npuipc_completion_add_ready(c, npuipc_notify_unpark(job->notify, job));
}

/*
 * The stream's handle is gone: a running job finishes (bounded by the job
 * timeout), every other job is cancelled and its fence signalled.
 */
void npuipc_stream_shutdown(struct npuipc_stream *stream)
{
	struct npuipc_completion c;
	struct npuipc_job *job, *tmp;
	LIST_HEAD(cancelled);
	bool cookie;

	spin_lock(&stream->lock);
	WRITE_ONCE(stream->dying, true);
	spin_unlock(&stream->lock);

	cancel_work_sync(&stream->work);
	kthread_cancel_work_sync(&stream->bulk_work);
	cancel_delayed_work_sync(&stream->timeout_work);
	/*
	 * Waits for a hand-off in progress (it signals its jobs first, keeping
	 * the fences in order), and takes the claim for good: the stream will
	 * not run again.
	 */
	wait_var_event(&stream->claim,
		       atomic_cmpxchg(&stream->claim, NPUIPC_STREAM_IDLE,
				      NPUIPC_STREAM_CLOSED) == NPUIPC_STREAM_IDLE);

	spin_lock(&stream->lock);
	list_splice_init(&stream->queue, &cancelled);
	stream->queued = 0;
	/* A WAIT still on the stream reports that its jobs did not all run. */
	if (!list_empty(&cancelled) && !stream->error)
		stream->error = -ECANCELED;
	spin_unlock(&stream->lock);
	npuipc_completion_init(&c);
	list_for_each_entry(job, &cancelled, node)
		npuipc_job_disarm(job, &c);
	/* A callback that fired before its disarm may have queued us. */
	cancel_work_sync(&stream->work);
	kthread_cancel_work_sync(&stream->bulk_work);

	cookie = dma_fence_begin_signalling();
	list_for_each_entry_safe(job, tmp, &cancelled, node) {
		list_del(&job->node);
		npuipc_job_signal(job, -ECANCELED, &c);
	}
	npuipc_completion_run_ready(&c);
	dma_fence_end_signalling(cookie);
	npuipc_completion_release(&c);
}

void npuipc_stream_free(struct npuipc_stream *stream)
{
	/*
	 * Shutdown stopped them; this is the last line of defence. (The copy
	 * worker the bulk work names is still alive: streams are freed before
	 * their file lets go of it.)
	 */
	cancel_delayed_work_sync(&stream->timeout_work);
	cancel_work_sync(&stream->work);
	kthread_cancel_work_sync(&stream->bulk_work);
	dma_fence_put(stream->last);
	mutex_destroy(&stream->submit_lock);
	kfree(stream);
	npuipc_live_dec(NPUIPC_KIND_STREAM);
}

struct dma_fence *npuipc_stream_last(struct npuipc_stream *stream, int *error)
{
	struct dma_fence *fence;

	spin_lock(&stream->lock);
	fence = dma_fence_get(stream->last);
	*error = stream->error;
	spin_unlock(&stream->lock);
	return fence;
}

/*
 * Clears the stream's error, returned in @cleared (0 for a healthy
 * stream): 0, or -EBUSY while jobs queued before it failed are still being
 * cancelled.
 */
int npuipc_stream_recover(struct npuipc_stream *stream, int *cleared)
{
	int ret = 0;

	spin_lock(&stream->lock);
	if (stream->error && !list_empty(&stream->queue)) {
		ret = -EBUSY;
	} else {
		*cleared = stream->error;
		stream->error = 0;
	}
	spin_unlock(&stream->lock);
	return ret;
}

/* A GEM buffer of @file with [@offset, @offset + @size) inside it. */
static int npuipc_job_lookup_range(struct drm_file *file, u32 handle, u64 offset,
				   u64 size, bool write, struct npuipc_bo **out)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);
	struct drm_device *drm = file->minor->dev;
	struct npuipc_bo *bo;

	if (!obj)
		return -ENOENT;
	bo = to_npuipc_bo(obj);
	*out = bo;	/* released with the job, whatever happens next */
	if (npuipc_refuse(drm, !size || offset > obj->size || size > obj->size - offset))
		return -EINVAL;
	/*
	 * Another exporter's memory is reachable only through its CPU-access
	 * protocol (vmap, begin/end_cpu_access), which may take its locks and
	 * wait for fences: never from a job, whose fence must signal.
	 */
	if (bo->bo_flags & NPUIPC_BO_FOREIGN)
		return -EOPNOTSUPP;
	if (write && (bo->bo_flags & NPUIPC_BO_READ_ONLY))
		return -EACCES;
	return 0;
}

static int npuipc_job_lookup_sync(struct npuipc_file *nfile, u32 handle, u32 type,
				  struct npuipc_object **out)
{
	struct npuipc_object *obj = npuipc_object_lookup(nfile, handle, type);

	if (IS_ERR(obj))
		return PTR_ERR(obj);
	*out = obj;
	return 0;
}

static int npuipc_job_wait_sync_file(struct npuipc_job *job, int fd)
{
	struct file *file = fget(fd);

	if (!file)
		return -EBADF;
	fput(file);
	job->wait_fence = sync_file_get_fence(fd);
	return job->wait_fence ? 0 : -EINVAL;	/* not a sync_file: logged by the caller */
}

/*
 * The fence at @point of syncobj @handle. On failure 6.1's
 * drm_syncobj_find_fence() can leave the fence it already put in its
 * out-parameter (a timeline point past the last one), so only a success
 * is stored in the job, whose release puts it.
 */
static int npuipc_job_wait_syncobj(struct npuipc_job *job, struct drm_file *file,
				   u32 handle, u64 point)
{
	struct dma_fence *fence = NULL;
	int ret = drm_syncobj_find_fence(file, handle, point, 0, &fence);

	if (!ret)
		job->wait_fence = fence;
	else if (ret == -EINVAL)
		drm_dbg_driver(file->minor->dev, "%s: refused: syncobj %u has no fence at point %llu\n",
			       __func__, handle, point);
	return ret;
}

/* Checks one job and takes what it refers to; all or nothing is the caller's. */
static int npuipc_job_parse(struct npuipc_job *job, const struct drm_npuipc_job *in,
			    struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	bool uses_buffers = in->kind == NPUIPC_JOB_COPY || in->kind == NPUIPC_JOB_FILL;
	struct drm_device *drm = file->minor->dev;
	struct npuipc_object *obj;
	int ret;

	if (npuipc_refuse(drm, in->flags || in->pad))
		return -EINVAL;
	if (npuipc_refuse(drm, !uses_buffers && (in->dst || in->src || in->dst_offset || in->src_offset ||
			      in->size)))
		return -EINVAL;
	if (npuipc_refuse(drm, uses_buffers && (in->object || in->timeout_ns)))
		return -EINVAL;
	if (npuipc_refuse(drm, in->value && in->kind != NPUIPC_JOB_FILL && in->kind != NPUIPC_JOB_WAIT_SYNCOBJ))
		return -EINVAL;
	if (npuipc_refuse(drm, in->timeout_ns && in->kind >= NPUIPC_JOB_RECORD_EVENT))
		return -EINVAL;

	job->kind = in->kind;
	job->dst_offset = in->dst_offset;
	job->src_offset = in->src_offset;
	job->size = in->size;
	if (in->timeout_ns)
		/* Rounded up, plus the partial jiffy now: never shorter than asked. */
		job->timeout_jiffies = min_t(u64, nsecs_to_jiffies64(min_t(u64, in->timeout_ns,
									   S64_MAX / 2) +
								     TICK_NSEC - 1) + 1,
					     MAX_JIFFY_OFFSET);

	switch (in->kind) {
	case NPUIPC_JOB_COPY:
		ret = npuipc_job_lookup_range(file, in->dst, in->dst_offset, in->size,
					      true, &job->dst);
		if (!ret)
			ret = npuipc_job_lookup_range(file, in->src, in->src_offset,
						      in->size, false, &job->src);
		/* Within one buffer the ranges may not overlap. */
		if (npuipc_refuse(drm, !ret && job->src == job->dst &&
		    in->src_offset < in->dst_offset + in->size &&
		    in->dst_offset < in->src_offset + in->size))
			ret = -EINVAL;
		break;
	case NPUIPC_JOB_FILL:
		if (npuipc_refuse(drm, in->src || in->src_offset || in->value > 0xff))
			return -EINVAL;
		ret = npuipc_job_lookup_range(file, in->dst, in->dst_offset, in->size,
					      true, &job->dst);
		job->value = in->value;
		break;
	case NPUIPC_JOB_WAIT_SYNC_FILE:
		ret = npuipc_job_wait_sync_file(job, in->object);
		if (ret == -EINVAL)
			drm_dbg_driver(drm, "%s: refused: fd %u is not a sync_file\n", __func__,
				       in->object);
		break;
	case NPUIPC_JOB_WAIT_SYNCOBJ:
		ret = npuipc_job_wait_syncobj(job, file, in->object, in->value);
		break;
	case NPUIPC_JOB_WAIT_EVENT:
		ret = npuipc_job_lookup_sync(nfile, in->object, NPUIPC_OBJ_EVENT, &obj);
		if (!ret) {
			job->wait_fence = npuipc_event_last(container_of(obj, struct npuipc_event, base));
			npuipc_object_put(obj);
		}
		break;
	case NPUIPC_JOB_RECORD_EVENT:
		ret = npuipc_job_lookup_sync(nfile, in->object, NPUIPC_OBJ_EVENT, &obj);
		if (!ret)
			job->event = container_of(obj, struct npuipc_event, base);
		break;
	case NPUIPC_JOB_WAIT_NOTIFY:
	case NPUIPC_JOB_RECORD_NOTIFY:
	case NPUIPC_JOB_RESET_NOTIFY:
		ret = npuipc_job_lookup_sync(nfile, in->object, NPUIPC_OBJ_NOTIFY, &obj);
		if (ret)
			break;
		job->notify = container_of(obj, struct npuipc_notify, base);
		if (in->kind != NPUIPC_JOB_RECORD_NOTIFY &&
		    !npuipc_notify_owned_by(job->notify, nfile))
			ret = -EPERM;
		break;
	default:
		drm_dbg_driver(drm, "%s: refused: unknown job kind %u\n", __func__, in->kind);
		ret = -EINVAL;
	}
	job->unbounded = !ret && (!in->timeout_ns || in->timeout_ns > NPUIPC_MAX_BOUNDED_WAIT_NS) &&
			 (in->kind == NPUIPC_JOB_WAIT_NOTIFY || npuipc_fence_unbounded(job->wait_fence));
	return ret;
}

static void npuipc_jobs_discard(struct npuipc_job **jobs, unsigned int count,
				bool fences_initialized)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		npuipc_job_release_resources(jobs[i]);
		if (fences_initialized)
			dma_fence_put(&jobs[i]->fence);
		else
			kfree(jobs[i]);
		if (!fences_initialized)
			npuipc_live_dec(NPUIPC_KIND_JOB);
	}
}

int npuipc_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_submit *args = data;
	/* Most submits are a job or two: no allocation on the latency path. */
	struct drm_npuipc_job in_small[NPUIPC_SUBMIT_ON_STACK];
	struct npuipc_job *jobs_small[NPUIPC_SUBMIT_ON_STACK];
	struct drm_npuipc_job *in = in_small;
	struct npuipc_job **jobs = jobs_small;
	struct npuipc_stream *stream;
	struct sync_file *sync_file = NULL;
	struct npuipc_object *obj;
	struct dma_fence *old_last;
	unsigned int i, parsed = 0;
	bool unbounded, direct;
	int ret, fd = -1;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_SUBMIT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->out_fence_fd))
		return -EINVAL;
	if (npuipc_refuse(drm, !args->job_count || args->job_count > NPUIPC_MAX_JOBS_PER_SUBMIT ||
	    args->job_size != sizeof(*in)))
		return -EINVAL;

	obj = npuipc_object_lookup(nfile, args->stream, NPUIPC_OBJ_STREAM);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	stream = container_of(obj, struct npuipc_stream, base);

	if (args->job_count > NPUIPC_SUBMIT_ON_STACK) {
		ret = -ENOMEM;
		in = kvmalloc_array(args->job_count, sizeof(*in), GFP_KERNEL);
		jobs = kmalloc_array(args->job_count, sizeof(*jobs), GFP_KERNEL);
		if (!in || !jobs)
			goto out;
	}
	if (copy_from_user(in, u64_to_user_ptr(args->jobs), args->job_count * sizeof(*in))) {
		ret = -EFAULT;
		goto out;
	}

	for (parsed = 0; parsed < args->job_count; parsed++) {
		struct npuipc_job *job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);

		if (!job) {
			ret = -ENOMEM;
			goto err_discard;
		}
		npuipc_live_inc(NPUIPC_KIND_JOB);
		jobs[parsed] = job;
		job->stream = stream;
		spin_lock_init(&job->fence_lock);
		INIT_LIST_HEAD(&job->notify_node);
		INIT_LIST_HEAD(&job->handoffs);
		INIT_LIST_HEAD(&job->handoff_node);
		ret = npuipc_job_parse(job, &in[parsed], file);
		if (ret) {
			parsed++;
			goto err_discard;
		}
		if (npuipc_job_is_bulk(job)) {
			ret = npuipc_file_copy_worker(nfile);
			if (ret) {
				parsed++;
				goto err_discard;
			}
		}
	}

	if (args->flags & NPUIPC_SUBMIT_OUT_FENCE) {
		fd = get_unused_fd_flags(O_CLOEXEC);
		if (fd < 0) {
			ret = fd;
			goto err_discard;
		}
	}

	mutex_lock(&stream->submit_lock);
	spin_lock(&stream->lock);
	/*
	 * The submit lock holds other submitters off: queued can only drop.
	 * Not -EAGAIN for a full queue: libdrm's drmIoctl() retries that.
	 */
	ret = stream->dying ? -ENOENT : stream->error ? -EIO :
	      stream->queued + parsed > NPUIPC_MAX_QUEUED_JOBS ? -ENOSPC : 0;
	spin_unlock(&stream->lock);
	if (ret)
		goto err_unlock;

	/* The submit lock keeps stream->last as it is. */
	unbounded = npuipc_fence_unbounded(stream->last);
	for (i = 0; i < parsed; i++) {
		__module_get(THIS_MODULE);	/* put in npuipc_fence_release() */
		dma_fence_init(&jobs[i]->fence, &npuipc_job_fence_ops, &jobs[i]->fence_lock,
			       stream->fence_context, ++stream->next_seqno);
		/* In order: a job completes only after the one before it. */
		unbounded |= jobs[i]->unbounded;
		if (unbounded)
			set_bit(NPUIPC_FENCE_FLAG_UNBOUNDED, &jobs[i]->fence.flags);
	}
	if (fd >= 0 && unbounded) {
		ret = -EDEADLK;
		goto err_unlock_fences;
	}
	if (fd >= 0) {
		sync_file = sync_file_create(&jobs[parsed - 1]->fence);
		if (!sync_file) {
			ret = -ENOMEM;
			goto err_unlock_fences;
		}
	}

	spin_lock(&stream->lock);
	if (stream->dying) {
		spin_unlock(&stream->lock);
		ret = -ENOENT;
		goto err_unlock_fences;
	}
	/*
	 * Direct submission: on an idle stream, a first job that only waits
	 * (arming a callback) or signals runs here, sparing the hop to a
	 * worker thread on the way from a record to its waiter (the notify
	 * and event latencies). COPY and FILL always go to the engine.
	 */
	direct = !stream->queued && !npuipc_job_is_bulk(jobs[0]) &&
		 atomic_read(&stream->claim) == NPUIPC_STREAM_IDLE;
	for (i = 0; i < parsed; i++) {
		/* Records publish in submission order, before anyone can wait. */
		if (jobs[i]->kind == NPUIPC_JOB_RECORD_EVENT)
			npuipc_event_record(jobs[i]->event, &jobs[i]->fence);
		list_add_tail(&jobs[i]->node, &stream->queue);
	}
	stream->queued += parsed;
	old_last = stream->last;
	stream->last = dma_fence_get(&jobs[parsed - 1]->fence);
	/* Under the lock: shutdown cancels the work only after seeing it. */
	if (!direct)
		npuipc_stream_kick(stream);
	spin_unlock(&stream->lock);
	mutex_unlock(&stream->submit_lock);
	dma_fence_put(old_last);
	/*
	 * If a worker or a hand-off claimed the stream meanwhile, it runs
	 * these jobs too: a worker loops until the queue is empty, a hand-off
	 * kicks the worker when it gives the claim back.
	 */
	if (direct)
		npuipc_stream_run_direct(stream);

	if (sync_file) {
		fd_install(fd, sync_file->file);
		args->out_fence_fd = fd;
	}
	ret = 0;
	goto out;

err_unlock_fences:
	mutex_unlock(&stream->submit_lock);
	if (sync_file)
		fput(sync_file->file);
	npuipc_jobs_discard(jobs, parsed, true);
	goto err_put_fd;
err_unlock:
	mutex_unlock(&stream->submit_lock);
err_discard:
	npuipc_jobs_discard(jobs, parsed, false);
err_put_fd:
	if (fd >= 0)
		put_unused_fd(fd);
out:
	if (jobs != jobs_small)
		kfree(jobs);
	if (in != in_small)
		kvfree(in);
	npuipc_object_put(obj);
	return ret;
}
