// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: runs every stream's jobs, in order.
 *
 * Each stream is a FIFO of jobs run in order by a work item on the engine's
 * workqueue, or, when a submit finds its stream idle and its first job is
 * not a COPY or FILL, by the submitting thread (direct submission; COPY
 * and FILL always go to their file's copy worker). A job that must wait (for a
 * fence or a notify) does not block the worker: it arms a callback (and a
 * deadline, if it has a timeout) that kicks the stream again (a
 * wait for a word of memory re-reads it on a timer). Every job
 * completes its dma_fence exactly once: with success, its error, or
 * -ECANCELED when its stream halts, is aborted or goes away.
 *
 * Lock order: every nesting of the driver's locks, outer first. Any lock
 * not listed as outer takes nothing of npuipc's while held.
 *
 *   drm_device.filelist_mutex (debugfs: listing files)
 *       -> npuipc_file.objects' xa_lock, then npuipc_stream.lock,
 *          npuipc_event.lock or npuipc_notify.lock, one at a time; and
 *          what freeing an object takes, as the listing may drop its last
 *          reference: npuipc_notify.lock then npuipc_file.owned_lock, a
 *          dma_fence's lock, waiting for a stream's work items; and, when
 *          the device is unplugged, all that stopping a stream takes
 *          (npuipc_engine_stop_stream()) and orphaning a notify does
 *   npuipc_file.copy_worker_lock (choosing a file's copy worker)
 *       -> npuipc_copy_workers_lock -> the cgroup core's locks
 *   npuipc_stream.submit_lock (one SUBMIT at a time per stream)
 *       -> npuipc_stream.lock -> npuipc_event.lock (a record published)
 *   npuipc_event.lock -> a dma_fence's lock (arming a poll callback)
 *   an exported dma-buf's dma_resv lock -> npuipc_export.lock
 *   drm_file.prime.lock -> drm_device.object_name_lock (DRM's PRIME
 *       helpers, around npuipc's export and import hooks) -> what making
 *       an export takes (npuipc_device.exports_lock) and what attaching to
 *       a dma-buf takes (its dma_resv lock, npuipc_export.lock)
 *   npuipc_device.exports_lock -> the mapping's i_mmap_rwsem (revoking
 *       the user mappings of an unplugged device's exports)
 *
 * A job's fence_lock is held while its fence signals: the callbacks run
 * under it only take a stream's claim (an atomic), queue work or wake an
 * event's pollers. A
 * notify's lock is never held with its owner's owned_lock. Queueing work
 * (the workqueue's and the kthread worker's own locks) may happen under
 * any lock above.
 *
 * A stream's claim (npuipc_engine_try_claim()) is not a lock but excludes
 * like one: whoever holds it runs and completes the stream's jobs, taking
 * the stream's lock only around its queue, and never signals a fence with
 * that lock held; shutdown waits for it holding no lock. Lockdep sees it
 * as npuipc_claim_map: held (shared) by a process-context run of a stream,
 * taken (exclusive) by shutdown before it waits, as a work item's map is
 * by flush_work(). A hand-off's claim, taken in a fence callback and given
 * back by its completion, is outside lockdep's model of an owner.
 */
#include <linux/dma-fence.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/lockdep.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/workqueue.h>

#include "npuipc_copy_worker.h"
#include "npuipc_engine.h"
#include "npuipc_file.h"
#include "npuipc_job.h"
#include "npuipc_notify.h"
#include "npuipc_stream.h"
#include "drm/npuipc_drm.h"

#ifdef CONFIG_LOCKDEP
static struct lock_class_key npuipc_claim_key;
static struct lockdep_map npuipc_claim_map =
	STATIC_LOCKDEP_MAP_INIT("npuipc_stream_claim", &npuipc_claim_key);
#endif

/* Jobs one hand-off completes: the wait, and RECORD_EVENT jobs behind it. */
#define NPUIPC_HANDOFF_MAX_JOBS		16

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

/**
 * npuipc_engine_init() - create the engine's workqueue
 *
 * Description: The engine's per-CPU workqueue is high-priority: waits, records
 * and completions are short, and their latency is the product's (a kick runs
 * the stream on the CPU that issued it, keeping a record-to-waiter hand-off on
 * one CPU; Documentation/execution.md has the measurements). It is
 * CPU-intensive: a long hand-off does not hold back other work on its CPU.
 *
 * COPY and FILL are user work of any length: they run on their file's
 * copy worker (npuipc_copy_worker.c), a kthread at nice 0 in the
 * submitter's cgroups, so that a flood of copies neither starves the
 * machine's nice-0 processes nor escapes its submitter's CPU limits.
 *
 * Return: 0, or -ENOMEM when the workqueue cannot be allocated.
 */
int npuipc_engine_init(void)
{
	npuipc_engine_wq = alloc_workqueue("npuipc-engine",
					   WQ_HIGHPRI | WQ_CPU_INTENSIVE | WQ_MEM_RECLAIM, 0);
	if (!npuipc_engine_wq)
		return -ENOMEM;
	return 0;
}

/**
 * npuipc_engine_fini() - tear the engine down
 *
 * Waits for the release of signalled jobs and for fence frees still in
 * flight (they run module code), then destroys the engine's workqueue.
 */
void npuipc_engine_fini(void)
{
	/* Fence frees still in flight run module code: let them finish. */
	flush_work(&npuipc_release_work);
	rcu_barrier();
	destroy_workqueue(npuipc_engine_wq);
}

/**
 * npuipc_engine_kick() - queue a stream's work item on the engine's workqueue
 * @stream: the stream whose jobs are to run
 *
 * Queueing it again while it is pending does nothing; the work item leaves
 * a stream someone else has claimed to its claimant.
 */
void npuipc_engine_kick(struct npuipc_stream *stream)
{
	queue_work(npuipc_engine_wq, &stream->work);
}

static void npuipc_stream_timeout_work(struct work_struct *work)
{
	struct npuipc_stream *stream =
		container_of(to_delayed_work(work), struct npuipc_stream, timeout_work);

	npuipc_engine_kick(stream);
}

/*
 * A fence a job waits for has signalled. An npuipc job's fence signals only
 * by the engine's worker, a direct submission, hand-offs and shutdown, in
 * process context, which take over the waiters claimed here once the
 * signal is over; any other fence
 * may signal from any context, so its waiters always go through the
 * worker. Nothing but the claim's atomic is touched here: fence locks may
 * be taken in hard interrupt context (dma_fence_chain's irq_work).
 */
static void npuipc_job_fence_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct npuipc_job *job = container_of(cb, struct npuipc_job, cb);
	struct npuipc_job *signaller = npuipc_fence_to_job(fence);

	if (signaller && !fence->error && npuipc_engine_try_claim(job->stream)) {
		/* The signaller's fence lock is held: it protects handoffs. */
		list_add_tail(&job->handoff_node, &signaller->handoffs);
		return;
	}
	npuipc_engine_kick(job->stream);
}

/**
 * npuipc_engine_try_claim() - try to take a stream's claim
 * @stream: the stream to claim
 *
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
 *
 * Return: true if the stream was idle and the caller now holds its claim.
 */
bool npuipc_engine_try_claim(struct npuipc_stream *stream)
{
	return atomic_cmpxchg(&stream->claim, NPUIPC_STREAM_IDLE, NPUIPC_STREAM_CLAIMED) ==
	       NPUIPC_STREAM_IDLE;
}

/**
 * npuipc_engine_stream_idle() - whether nobody runs a stream now
 * @stream: the stream to look at
 *
 * Whether nobody runs the stream now: a submit may then run it directly.
 *
 * Return: true if nobody holds the stream's claim.
 */
bool npuipc_engine_stream_idle(struct npuipc_stream *stream)
{
	return atomic_read(&stream->claim) == NPUIPC_STREAM_IDLE;
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
		npuipc_engine_kick(stream);
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
	if (stream->dying || stream->halted ||
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
		job = stream->dying || stream->halted ? NULL :
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
 * later ones (the timer wheel may fire very long timeouts early): at the
 * deadline, or in @poll jiffies if that is sooner (0: no poll).
 */
static void npuipc_job_arm_timer(struct npuipc_job *job, unsigned long poll)
{
	unsigned long delay = poll;

	if (job->timeout_jiffies) {
		unsigned long left;

		if (!job->deadline_armed) {
			job->deadline = jiffies + job->timeout_jiffies;
			job->deadline_armed = true;
		}
		left = npuipc_job_expired(job) ? 0 : job->deadline - jiffies;
		delay = poll ? min(poll, left) : left;
	} else if (!poll) {
		return;
	}
	mod_delayed_work(npuipc_engine_wq, &job->stream->timeout_work, delay);
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
	npuipc_job_arm_timer(job, 0);
	return -EINPROGRESS;
}

static int npuipc_job_wait_notify(struct npuipc_job *job)
{
	int ret = npuipc_notify_wait(job->notify, job, npuipc_job_expired(job));

	if (ret == -EINPROGRESS)
		npuipc_job_arm_timer(job, 0);
	return ret;
}

/* The longest a WAIT_VALUE job goes without reading its word. */
#define NPUIPC_VALUE_POLL_MAX_MS	16

/*
 * The device polls a WAIT_VALUE job's word: nothing tells it when a
 * process's mapping changes it. Re-read on the next tick, then at
 * intervals doubling up to NPUIPC_VALUE_POLL_MAX_MS, so that a wait that
 * lasts costs little; until the deadline.
 */
static int npuipc_job_wait_value(struct npuipc_job *job)
{
	int ret = npuipc_job_value_reached(job);

	if (ret)
		return ret < 0 ? ret : 0;
	if (npuipc_job_expired(job))
		return -ETIMEDOUT;
	job->poll_jiffies = clamp(2 * job->poll_jiffies, 1UL,
				  msecs_to_jiffies(NPUIPC_VALUE_POLL_MAX_MS));
	npuipc_job_arm_timer(job, job->poll_jiffies);
	return -EINPROGRESS;
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
	case NPUIPC_JOB_WRITE_VALUE:
		return npuipc_job_write_value(job);
	case NPUIPC_JOB_WAIT_VALUE:
		return npuipc_job_wait_value(job);
	default:	/* RECORD_EVENT: its fence is the record */
		return 0;
	}
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
	bool halted;
	int ret;

	/* Outside the stream's lock, which the run takes under the claim. */
	lock_map_acquire_read(&npuipc_claim_map);
	spin_lock(&stream->lock);
	/*
	 * Held while completing too, so that fences signal in order. A
	 * hand-off holding it kicks us again when it is done.
	 */
	if (stream->dying || !npuipc_engine_try_claim(stream)) {
		spin_unlock(&stream->lock);
		lock_map_release(&npuipc_claim_map);
		return;
	}
	for (;;) {
		job = stream->dying ? NULL :
		      list_first_entry_or_null(&stream->queue, struct npuipc_job, node);
		halted = stream->halted;
		if (!job)
			break;
		/* SUBMIT chose the worker before queuing any COPY or FILL. */
		if (!bulk && !halted && npuipc_job_is_bulk(job) &&
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
		if (halted) {
			/* An abort may stop a head that was waiting. */
			npuipc_completion_init(&c);
			npuipc_job_disarm(job, &c);
			ret = -ECANCELED;
		} else {
			ret = npuipc_job_run(job, &handed);
		}

		spin_lock(&stream->lock);
		if (ret == -EINPROGRESS) {
			dma_fence_end_signalling(cookie);
			break;
		}
		list_del(&job->node);
		stream->queued--;
		if (ret && !stream->error) {
			stream->error = ret;
			stream->failed_job = job->fence.seqno;
		}
		if (ret && !stream->continue_on_failure)
			stream->halted = true;
		spin_unlock(&stream->lock);
		if (!halted)
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
	lock_map_release(&npuipc_claim_map);
}

/**
 * npuipc_engine_run_direct() - run a stream's new jobs in the submitting thread
 * @stream: the stream, referenced by the caller
 *
 * Runs an idle stream's new jobs in the submitting thread, as the worker
 * would. The caller holds a reference on the stream, so it may touch it
 * after giving the claim back: it wakes a shutdown that may be waiting for
 * the claim (also when the run handed the stream to its copy worker), which
 * only a work item's cancel_work_sync() would otherwise cover.
 */
void npuipc_engine_run_direct(struct npuipc_stream *stream)
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

/**
 * npuipc_engine_init_stream() - set up a new stream's share of the engine
 * @stream: the new stream
 *
 * A new stream's share of the engine: idle, its work items ready.
 */
void npuipc_engine_init_stream(struct npuipc_stream *stream)
{
	atomic_set(&stream->claim, NPUIPC_STREAM_IDLE);
	INIT_WORK(&stream->work, npuipc_stream_work);
	kthread_init_work(&stream->bulk_work, npuipc_stream_bulk_work);
	INIT_DELAYED_WORK(&stream->timeout_work, npuipc_stream_timeout_work);
}

/**
 * npuipc_engine_stop_stream() - stop a stream for good
 * @stream: the stream whose handle or device is gone
 *
 * The stream's handle is gone, or its device: a running job finishes
 * (bounded by the job timeout), every other job is cancelled and its fence
 * signalled, and the stream never runs again. The first call does the
 * work; a later one returns when it is done.
 */
void npuipc_engine_stop_stream(struct npuipc_stream *stream)
{
	struct npuipc_completion c;
	struct npuipc_job *job, *tmp;
	LIST_HEAD(cancelled);
	bool cookie, stopped;

	/*
	 * Once: an unplug stops the streams of its device's files, whose
	 * handles go later (or an OBJ_DESTROY in flight races it). The first
	 * caller does the work; a later one returns when it is done.
	 */
	spin_lock(&stream->lock);
	stopped = stream->dying;
	WRITE_ONCE(stream->dying, true);
	spin_unlock(&stream->lock);
	if (stopped) {
		wait_var_event(&stream->stopped, smp_load_acquire(&stream->stopped));
		return;
	}

	cancel_work_sync(&stream->work);
	kthread_cancel_work_sync(&stream->bulk_work);
	cancel_delayed_work_sync(&stream->timeout_work);
	/*
	 * Waits for a hand-off in progress (it signals its jobs first, keeping
	 * the fences in order), and takes the claim for good: the stream will
	 * not run again.
	 */
	lock_map_acquire(&npuipc_claim_map);
	lock_map_release(&npuipc_claim_map);
	wait_var_event(&stream->claim,
		       atomic_cmpxchg(&stream->claim, NPUIPC_STREAM_IDLE,
				      NPUIPC_STREAM_CLOSED) == NPUIPC_STREAM_IDLE);

	spin_lock(&stream->lock);
	list_splice_init(&stream->queue, &cancelled);
	stream->queued = 0;
	/* A WAIT still on the stream reports that its jobs did not all run. */
	if (!list_empty(&cancelled) && !stream->error) {
		stream->error = -ECANCELED;
		stream->failed_job = 0;
	}
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
	smp_store_release(&stream->stopped, true);
	wake_up_var(&stream->stopped);
}

/**
 * npuipc_engine_abort_stream() - cancel a stream's jobs and let it run again
 * @stream: the stream, referenced by the caller
 *
 * Halts the stream, so that whoever runs it next cancels its jobs (a copy
 * running ends first; a waiting head stops waiting), and waits until the
 * last one has signalled. Then, unless a recovery let new jobs in
 * meanwhile, clears the error: the stream runs again.
 *
 * Return: 0, -ENOENT if the stream is closing, or -ERESTARTSYS.
 */
int npuipc_engine_abort_stream(struct npuipc_stream *stream)
{
	struct dma_fence *fence;
	long ret;

	/* Under the submit lock: a submit past its check has queued its jobs. */
	ret = mutex_lock_interruptible(&stream->submit_lock);
	if (ret)
		return ret;
	spin_lock(&stream->lock);
	if (stream->dying) {
		spin_unlock(&stream->lock);
		mutex_unlock(&stream->submit_lock);
		return -ENOENT;
	}
	stream->halted = true;
	if (!stream->error) {
		stream->error = -ECANCELED;
		stream->failed_job = 0;
	}
	fence = dma_fence_get(stream->last);
	npuipc_engine_kick(stream);
	spin_unlock(&stream->lock);
	mutex_unlock(&stream->submit_lock);

	if (fence) {
		ret = dma_fence_wait(fence, true);
		dma_fence_put(fence);
		if (ret)
			return ret;
	}

	spin_lock(&stream->lock);
	if (stream->dying) {
		/* Shutdown cancelled what was left: its error stays for WAIT. */
		ret = -ENOENT;
	} else if (stream->halted && list_empty(&stream->queue)) {
		/* Submits were refused while halted: only a recovery lets new ones in. */
		stream->error = 0;
		stream->halted = false;
	}
	spin_unlock(&stream->lock);
	return ret;
}

/**
 * npuipc_engine_fini_stream() - cancel a stream's work items before it is freed
 * @stream: the stream being freed
 *
 * The stream is being freed. Shutdown stopped its work items; this is the
 * last line of defence. (The copy worker the bulk work names is still
 * alive: streams are freed before their file lets go of it.)
 */
void npuipc_engine_fini_stream(struct npuipc_stream *stream)
{
	cancel_delayed_work_sync(&stream->timeout_work);
	cancel_work_sync(&stream->work);
	kthread_cancel_work_sync(&stream->bulk_work);
}
