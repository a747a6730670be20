// SPDX-License-Identifier: GPL-2.0
/*
 * Streams: a stream is a queue of jobs that run in order (npuipc_engine.c
 * runs them). This file holds the stream as an object, and the ioctls
 * that feed it (SUBMIT) and wait for it (WAIT on a stream).
 */
#include <linux/dma-fence.h>
#include <linux/error-injection.h>
#include <linux/file.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>

#include "npuipc_drv.h"
#include "npuipc_engine.h"
#include "npuipc_event.h"
#include "npuipc_file.h"
#include "npuipc_job.h"
#include "npuipc_stream.h"
#include "drm/npuipc_drm.h"

/* Submits of up to this many jobs are copied in without allocating. */
#define NPUIPC_SUBMIT_ON_STACK		2

static struct npuipc_object *npuipc_stream_create(struct npuipc_file *nfile)
{
	struct npuipc_stream *stream = kzalloc(sizeof(*stream), GFP_KERNEL_ACCOUNT);

	if (!stream)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_STREAM);
	stream->nfile = nfile;
	npuipc_object_init(&stream->base, &npuipc_stream_funcs);
	stream->fence_context = dma_fence_context_alloc(1);
	mutex_init(&stream->submit_lock);
	spin_lock_init(&stream->lock);
	INIT_LIST_HEAD(&stream->queue);
	npuipc_engine_init_stream(stream);
	return &stream->base;
}
ALLOW_ERROR_INJECTION(npuipc_stream_create, NULL);

/* Its handle is gone: queued jobs are cancelled, and it never runs again. */
static void npuipc_stream_close(struct npuipc_object *obj)
{
	npuipc_engine_stop_stream(to_npuipc_stream(obj));
}

static void npuipc_stream_free(struct npuipc_object *obj)
{
	struct npuipc_stream *stream = to_npuipc_stream(obj);

	npuipc_engine_fini_stream(stream);
	dma_fence_put(stream->last);
	mutex_destroy(&stream->submit_lock);
	kfree(stream);
	npuipc_live_dec(NPUIPC_KIND_STREAM);
}

static void npuipc_stream_error_locked(struct npuipc_stream *stream,
				       struct npuipc_wait_result *res)
{
	res->status = stream->error;
	res->failed_job = stream->error ? lower_32_bits(stream->failed_job) : 0;
}

static struct dma_fence *npuipc_stream_last(struct npuipc_stream *stream,
					    struct npuipc_wait_result *res)
{
	struct dma_fence *fence;

	spin_lock(&stream->lock);
	fence = dma_fence_get(stream->last);
	npuipc_stream_error_locked(stream, res);
	spin_unlock(&stream->lock);
	return fence;
}

/*
 * Clears the stream's error, reported in @res (0 for a healthy stream):
 * 0, or -EBUSY while jobs queued before it halted are still being
 * cancelled. A stream that continues after failures has nothing to wait
 * for: the jobs behind its failure run.
 */
static int npuipc_stream_recover(struct npuipc_stream *stream, struct npuipc_wait_result *res)
{
	int ret = 0;

	spin_lock(&stream->lock);
	if (stream->halted && !list_empty(&stream->queue)) {
		ret = -EBUSY;
	} else {
		npuipc_stream_error_locked(stream, res);
		stream->error = 0;
		stream->halted = false;
	}
	spin_unlock(&stream->lock);
	return ret;
}

/*
 * WAIT on a stream: everything submitted so far, then its error read again
 * (the jobs just waited for may have failed). RECOVER clears the error
 * once no job is queued, and reports the error it cleared; jobs submitted
 * after the fence was taken, and cancelled since the stream failed, are
 * waited for too: a failed stream takes no new ones, and every pass ends
 * at the same deadline.
 */
static int npuipc_stream_wait(struct npuipc_object *obj, struct drm_device *drm,
			      const struct drm_npuipc_wait *args, ktime_t deadline,
			      struct npuipc_wait_result *res)
{
	struct npuipc_stream *stream = to_npuipc_stream(obj);
	struct dma_fence *fence;
	int ret;

	for (;;) {
		fence = npuipc_stream_last(stream, res);
		ret = fence ? npuipc_object_wait_fence(fence, args, deadline) : 0;
		dma_fence_put(fence);
		if (ret)
			break;
		dma_fence_put(npuipc_stream_last(stream, res));
		if (!(args->flags & NPUIPC_WAIT_RECOVER))
			break;
		ret = npuipc_stream_recover(stream, res);
		if (ret != -EBUSY)
			break;
	}
	return ret;
}

static unsigned int npuipc_stream_queued_jobs(struct npuipc_object *obj)
{
	return READ_ONCE(to_npuipc_stream(obj)->queued);
}

static const char *const npuipc_claim_names[] = {
	[NPUIPC_STREAM_IDLE] = "idle",
	[NPUIPC_STREAM_CLAIMED] = "claimed",
	[NPUIPC_STREAM_CLOSED] = "closed",
};

static void npuipc_stream_show(struct seq_file *m, unsigned long handle,
			       struct npuipc_object *obj)
{
	struct npuipc_stream *stream = to_npuipc_stream(obj);
	struct npuipc_job *head;
	int claim = atomic_read(&stream->claim);

	spin_lock(&stream->lock);
	seq_printf(m, "  stream %lu: %u queued, error %d, claim %s%s\n", handle, stream->queued,
		   stream->error, claim >= 0 && claim < ARRAY_SIZE(npuipc_claim_names) ?
		   npuipc_claim_names[claim] : "?", stream->dying ? ", dying" : "");
	head = list_first_entry_or_null(&stream->queue, struct npuipc_job, node);
	if (head)
		npuipc_job_show(m, head);
	spin_unlock(&stream->lock);
}

const struct npuipc_object_funcs npuipc_stream_funcs = {
	.type = NPUIPC_OBJ_STREAM,
	.name = "stream",
	.create = npuipc_stream_create,
	.free = npuipc_stream_free,
	.close = npuipc_stream_close,
	.wait = npuipc_stream_wait,
	.queued_jobs = npuipc_stream_queued_jobs,
	.show = npuipc_stream_show,
};

/**
 * npuipc_ioctl_submit() - queue jobs on a stream (SUBMIT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_submit
 * @file: the calling DRM file, which holds the stream's handle
 *
 * Parses every job first, all or nothing, then queues them in order; with
 * NPUIPC_SUBMIT_OUT_FENCE the last job's fence comes back as a sync_file,
 * unless it waits on userspace. A stream with nothing queued and nobody
 * running it, whose first new job is no COPY or FILL, runs in the calling
 * thread (direct submission).
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_submit in
 * uapi/drm/npuipc_drm.h).
 */
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
	bool waits_on_user, direct;
	int ret, fd = -1;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_SUBMIT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->out_fence_fd))
		return -EINVAL;
	if (npuipc_refuse(drm, !args->job_count || args->job_count > NPUIPC_MAX_JOBS_PER_SUBMIT ||
	    args->job_size != sizeof(*in)))
		return -EINVAL;

	obj = npuipc_file_lookup_object(nfile, args->stream, NPUIPC_OBJ_STREAM);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	stream = to_npuipc_stream(obj);

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
		struct npuipc_job *job = npuipc_job_alloc(stream);

		if (!job) {
			ret = -ENOMEM;
			goto err_discard;
		}
		jobs[parsed] = job;
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
	ret = stream->dying ? -ENOENT : stream->halted ? -EIO :
	      stream->queued + parsed > NPUIPC_MAX_QUEUED_JOBS ? -ENOSPC : 0;
	spin_unlock(&stream->lock);
	if (ret)
		goto err_unlock;

	/* The submit lock keeps stream->last as it is. */
	waits_on_user = npuipc_fence_waits_on_user(stream->last);
	for (i = 0; i < parsed; i++) {
		/* In order: a job completes only after the one before it. */
		waits_on_user |= jobs[i]->waits_on_user;
		npuipc_job_init_fence(jobs[i], stream->fence_context, ++stream->next_seqno,
				      waits_on_user);
	}
	if (fd >= 0 && waits_on_user) {
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
		 npuipc_engine_stream_idle(stream);
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
		npuipc_engine_kick(stream);
	spin_unlock(&stream->lock);
	mutex_unlock(&stream->submit_lock);
	dma_fence_put(old_last);
	/*
	 * If a worker or a hand-off claimed the stream meanwhile, it runs
	 * these jobs too: a worker loops until the queue is empty, a hand-off
	 * kicks the worker when it gives the claim back.
	 */
	if (direct)
		npuipc_engine_run_direct(stream);

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

/**
 * npuipc_ioctl_stream_set_param() - set a stream's parameter (STREAM_SET_PARAM)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_stream_set_param
 * @file: the calling DRM file, which holds the stream's handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_stream_set_param).
 */
int npuipc_ioctl_stream_set_param(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_npuipc_stream_set_param *args = data;
	struct npuipc_stream *stream;
	struct npuipc_object *obj;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_STREAM_SET_PARAM_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad))
		return -EINVAL;
	if (npuipc_refuse(drm, args->param != NPUIPC_STREAM_PARAM_FAILURE_MODE ||
			  args->value > NPUIPC_FAILURE_CONTINUE))
		return -EINVAL;
	obj = npuipc_file_lookup_object(to_npuipc_file(file), args->stream, NPUIPC_OBJ_STREAM);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	stream = to_npuipc_stream(obj);
	spin_lock(&stream->lock);
	stream->continue_on_failure = args->value == NPUIPC_FAILURE_CONTINUE;
	spin_unlock(&stream->lock);
	npuipc_object_put(obj);
	return 0;
}

/**
 * npuipc_ioctl_stream_abort() - cancel a stream's jobs (STREAM_ABORT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_stream_abort
 * @file: the calling DRM file, which holds the stream's handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_stream_abort).
 */
int npuipc_ioctl_stream_abort(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_npuipc_stream_abort *args = data;
	struct npuipc_object *obj;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_STREAM_ABORT_FLAGS_VALID))
		return -EINVAL;
	obj = npuipc_file_lookup_object(to_npuipc_file(file), args->stream, NPUIPC_OBJ_STREAM);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	ret = npuipc_engine_abort_stream(to_npuipc_stream(obj));
	npuipc_object_put(obj);
	return ret;
}
