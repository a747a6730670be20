// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs: what SUBMIT turns each drm_npuipc_job into, the fence that says it
 * is done, and the work of a COPY or FILL. Running a job, and waiting,
 * is the engine's (npuipc_engine.c).
 */
#include <linux/dma-fence.h>
#include <linux/error-injection.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/cputime.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sync_file.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "npuipc_debugfs.h"
#include "npuipc_drv.h"
#include "npuipc_event.h"
#include "npuipc_file.h"
#include "npuipc_gem.h"
#include "npuipc_job.h"
#include "npuipc_notify.h"
#include "npuipc_stream.h"
#include "drm/npuipc_drm.h"

/* The largest job timeout one may set (a running job stops at a close within 1 MiB anyway). */
#define NPUIPC_MAX_JOB_TIMEOUT_MS	60000U

static unsigned int npuipc_job_timeout_ms = 10000;

/* A value above the limit is refused (-EINVAL), at load as at run time. */
static int npuipc_job_timeout_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, NPUIPC_MAX_JOB_TIMEOUT_MS);
}

static const struct kernel_param_ops npuipc_job_timeout_ops = {
	.set = npuipc_job_timeout_set,
	.get = param_get_uint,
};
module_param_cb(job_timeout_ms, &npuipc_job_timeout_ops, &npuipc_job_timeout_ms, 0644);
__MODULE_PARM_TYPE(job_timeout_ms, "uint");
MODULE_PARM_DESC(job_timeout_ms,
		 "A COPY or FILL job taking longer (its worker's CPU time; 10x in wall time) "
		 "fails with -ETIMEDOUT (ms, default 10000, at most 60000)");

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
 * Set on a job's fence, at submit, when it depends on something only
 * userspace can do: the job, or one before it on its stream, waits for a
 * notify (whatever its timeout: a notify is set by a userspace submit) or
 * for a fence with this flag (an event recorded behind such a wait, in any
 * process). Flagged fences stay inside npuipc (see
 * npuipc_fence_waits_on_user()); every other fence depends only on work
 * the driver completes by itself, each job bounded by the job timeout.
 */
#define NPUIPC_FENCE_FLAG_WAITS_ON_USER	DMA_FENCE_FLAG_USER_BITS

/**
 * npuipc_fence_waits_on_user() - whether a fence waits on userspace
 * @fence: any fence, or NULL
 *
 * Whether @fence waits on userspace. The dma-fence rules ("Indefinite DMA
 * Fences" in Documentation/driver-api/dma-buf.rst) forbid any fence that
 * leaves a driver to depend on a future userspace action, with or without
 * a timeout (another driver, or the kernel's memory management, may wait
 * for it holding locks userspace needs), so such a fence is never exported
 * as a sync_file (-EDEADLK). Foreign fences are taken as their drivers keep
 * them; a flagged fence that has signalled is harmless.
 *
 * Return: true for an npuipc fence flagged as waiting on userspace that has
 * not signalled.
 */
bool npuipc_fence_waits_on_user(struct dma_fence *fence)
{
	return fence && fence->ops == &npuipc_job_fence_ops &&
	       test_bit(NPUIPC_FENCE_FLAG_WAITS_ON_USER, &fence->flags) &&
	       !dma_fence_is_signaled(fence);
}

/**
 * npuipc_fence_to_job() - the job of an npuipc fence
 * @fence: any fence
 *
 * Return: The job whose fence @fence is; NULL for any other fence.
 */
struct npuipc_job *npuipc_fence_to_job(struct dma_fence *fence)
{
	return fence->ops == &npuipc_job_fence_ops ?
	       container_of(fence, struct npuipc_job, fence) : NULL;
}

/**
 * npuipc_job_alloc() - allocate a job
 * @stream: the stream the job is for
 *
 * Return: A new job of @stream, its fence not yet initialized; NULL without
 * memory.
 */
struct npuipc_job *npuipc_job_alloc(struct npuipc_stream *stream)
{
	struct npuipc_job *job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);

	if (!job)
		return NULL;
	npuipc_live_inc(NPUIPC_KIND_JOB);
	job->stream = stream;
	spin_lock_init(&job->fence_lock);
	INIT_LIST_HEAD(&job->notify_node);
	INIT_LIST_HEAD(&job->handoffs);
	INIT_LIST_HEAD(&job->handoff_node);
	return job;
}
ALLOW_ERROR_INJECTION(npuipc_job_alloc, NULL);

/**
 * npuipc_job_init_fence() - initialize a job's fence
 * @job: the job
 * @context: the fence context of the stream's timeline
 * @seqno: the fence's sequence number on that timeline
 * @waits_on_user: whether the job, or one before it on its stream, waits on
 *	userspace
 *
 * The job's fence, @seqno on the stream's timeline @context; flagged when
 * it waits on userspace. It holds the module until freed.
 */
void npuipc_job_init_fence(struct npuipc_job *job, u64 context, u64 seqno, bool waits_on_user)
{
	__module_get(THIS_MODULE);	/* put in npuipc_fence_release() */
	dma_fence_init(&job->fence, &npuipc_job_fence_ops, &job->fence_lock, context, seqno);
	if (waits_on_user)
		set_bit(NPUIPC_FENCE_FLAG_WAITS_ON_USER, &job->fence.flags);
}

/**
 * npuipc_job_release_resources() - drop what a job holds
 * @job: the job
 *
 * Drops what a job holds (its buffers, the fence it waits for, its event
 * and notify); its fence stays until the last reference.
 */
void npuipc_job_release_resources(struct npuipc_job *job)
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
 * RAM to RAM. Word-aligned runs move as 64-bit words in an unrolled loop:
 * as fast as memcpy on hardware, and many times faster under QEMU's TCG,
 * which emulates the kernel's rep-movs memcpy slowly.
 */
static void npuipc_ram_copy(void *dst, const void *src, size_t n)
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
 * The engine's data mover, between two mapped pages. BAR memory is reached
 * only through the I/O accessors; no accessor moves I/O memory to I/O
 * memory, so BAR to BAR goes through a small bounce buffer. Ranges aliasing
 * the same memory (@alias: the same page, through an import) copy like
 * memcpy: undefined contents, but nothing outside them is touched.
 */
static void npuipc_engine_copy(struct iosys_map *dst, size_t doff, const struct iosys_map *src,
			       size_t soff, size_t n, bool alias)
{
	u8 bounce[256];
	size_t k;

	if (!src->is_iomem && !dst->is_iomem) {
		if (alias)
			memmove(dst->vaddr + doff, src->vaddr + soff, n);
		else
			npuipc_ram_copy(dst->vaddr + doff, src->vaddr + soff, n);
	} else if (!src->is_iomem) {
		iosys_map_memcpy_to(dst, doff, src->vaddr + soff, n);
	} else if (!dst->is_iomem) {
		iosys_map_memcpy_from(dst->vaddr + doff, src, soff, n);
	} else {
		for (; n; n -= k, doff += k, soff += k) {
			k = min(n, sizeof(bounce));
			iosys_map_memcpy_from(bounce, src, soff, k);
			iosys_map_memcpy_to(dst, doff, bounce, k);
		}
	}
}

/* @n bytes (whole words) of a mapped page from @off set to the word @value. */
static void npuipc_fill_u32(struct iosys_map *dst, size_t off, u32 value, size_t n)
{
	size_t k;

	if (!dst->is_iomem) {
		memset32(dst->vaddr + off, value, n / sizeof(u32));
		return;
	}
	for (k = 0; k < n; k += sizeof(u32))
		iosys_map_wr(dst, off + k, u32, value);
}

/*
 * Leaves what npuipc_job_enter() entered. Write-combined stores to a BAR
 * are ordered (wmb(), sfence on x86) before the device may go and before
 * anyone sees this stretch of the job done.
 */
static void npuipc_job_exit(struct npuipc_job *job, const struct npuipc_mem_guard guard[2])
{
	if (job->dst->mem.iomem)
		wmb();
	npuipc_mem_exit(&job->dst->mem, &guard[0]);
	if (job->src)
		npuipc_mem_exit(&job->src->mem, &guard[1]);
}

/*
 * Enters the memory of the job's buffers for one stretch of work: false
 * (nothing entered) once a BAR's device is unplugged or a fabric import
 * revoked.
 */
static bool npuipc_job_enter(struct npuipc_job *job, struct npuipc_mem_guard guard[2])
{
	if (!npuipc_mem_enter(&job->dst->mem, &guard[0]))
		return false;
	if (job->src && !npuipc_mem_enter(&job->src->mem, &guard[1])) {
		npuipc_mem_exit(&job->dst->mem, &guard[0]);
		return false;
	}
	return true;
}

/*
 * The current task's CPU time (user and system, in ns), through the
 * accounting the kernel exports (what getrusage() reports), not the
 * scheduler's own fields.
 */
static u64 npuipc_cpu_time_ns(void)
{
	u64 utime, stime;

	task_cputime_adjusted(current, &utime, &stime);
	return utime + stime;
}

/**
 * npuipc_job_copy_fill() - do a COPY or FILL job's work
 * @job: the COPY or FILL job
 *
 * Copies or fills page by page, checking the device's job timeout. The
 * timeout counts the copy worker's CPU time: a worker throttled by its
 * cgroup's cpu.max, or sharing a CPU, is not a job that overran. Ten times
 * the timeout of wall time is the backstop. The timeout is read when the
 * job starts: a new job_timeout_ms applies to the jobs that start after it.
 * BAR memory is touched only while its device is there, and a fabric
 * import only while its lease holds (-ENODEV after either).
 *
 * Return: 0; -ETIMEDOUT past the timeout, -ECANCELED when the stream is
 * stopping, or -ENODEV.
 */
int npuipc_job_copy_fill(struct npuipc_job *job)
{
	unsigned int timeout_ms = READ_ONCE(npuipc_job_timeout_ms);
	unsigned long backstop = jiffies + 1 + msecs_to_jiffies(10 * timeout_ms);
	u64 cpu_start = npuipc_cpu_time_ns();
	const struct npuipc_mem *dmem = &job->dst->mem, *smem = job->src ? &job->src->mem : NULL;
	u64 done = 0;
	struct npuipc_mem_guard guard[2];

	if (!npuipc_job_enter(job, guard))
		return -ENODEV;

	while (done < job->size) {
		u64 d = job->dst_offset + done, s = job->src_offset + done;
		size_t n = min_t(u64, PAGE_SIZE - offset_in_page(d), job->size - done);
		struct iosys_map dst;

		if (job->src)
			n = min_t(size_t, n, PAGE_SIZE - offset_in_page(s));
		dst = npuipc_mem_map_page(dmem, d >> PAGE_SHIFT);
		if (smem) {
			struct iosys_map src = npuipc_mem_map_page(smem, s >> PAGE_SHIFT);

			npuipc_engine_copy(&dst, offset_in_page(d), &src, offset_in_page(s), n,
					   npuipc_mem_pfn(smem, s >> PAGE_SHIFT) ==
					   npuipc_mem_pfn(dmem, d >> PAGE_SHIFT));
			npuipc_mem_unmap_page(&src);
		} else if (job->flags & NPUIPC_FILL_U32) {
			npuipc_fill_u32(&dst, offset_in_page(d), job->value, n);
		} else {
			iosys_map_memset(&dst, offset_in_page(d), job->value, n);
		}
		npuipc_mem_unmap_page(&dst);
		done += n;
		if (!(d & (SZ_1M - 1))) {
			npuipc_job_exit(job, guard);
			if (npuipc_cpu_time_ns() - cpu_start > (u64)timeout_ms * NSEC_PER_MSEC ||
			    time_after(jiffies, backstop))
				return -ETIMEDOUT;
			/* Closing the stream's file must not wait for all of it. */
			if (READ_ONCE(job->stream->dying))
				return -ECANCELED;
			cond_resched();
			if (!npuipc_job_enter(job, guard))
				return -ENODEV;
		}
	}
	npuipc_job_exit(job, guard);
	return 0;
}

/*
 * The page of a value job's 64-bit word, mapped: false (nothing mapped or
 * entered) once its device is unplugged. The word is aligned, so it lies
 * in one page.
 */
static bool npuipc_job_map_word(struct npuipc_job *job, struct iosys_map *map,
				struct npuipc_mem_guard guard[2])
{
	if (!npuipc_job_enter(job, guard))
		return false;
	*map = npuipc_mem_map_page(&job->dst->mem, job->dst_offset >> PAGE_SHIFT);
	return true;
}

static void npuipc_job_unmap_word(struct npuipc_job *job, const struct iosys_map *map,
				  const struct npuipc_mem_guard guard[2])
{
	npuipc_mem_unmap_page(map);
	npuipc_job_exit(job, guard);
}

/*
 * Protects every value word against torn read-modify-writes: a value job's
 * ADD, OR or AND, and a clearing wait's compare-and-clear, read and write
 * their word under it. They are short, and BAR memory has no atomics.
 */
static DEFINE_SPINLOCK(npuipc_value_lock);

static u64 npuipc_value_update(u32 op, u64 w, u64 v)
{
	switch (op) {
	case NPUIPC_WRITE_VALUE_ADD:
		return w + v;
	case NPUIPC_WRITE_VALUE_OR:
		return w | v;
	case NPUIPC_WRITE_VALUE_AND:
		return w & v;
	default:	/* SET */
		return v;
	}
}

/**
 * npuipc_job_write_value() - do a WRITE_VALUE job's work
 * @job: the WRITE_VALUE job
 *
 * Return: 0, or -ENODEV when the buffer's device is gone.
 */
int npuipc_job_write_value(struct npuipc_job *job)
{
	size_t off = offset_in_page(job->dst_offset);
	struct iosys_map map;
	struct npuipc_mem_guard guard[2];
	u64 w = 0;

	if (!npuipc_job_map_word(job, &map, guard))
		return -ENODEV;
	spin_lock(&npuipc_value_lock);
	if (job->flags != NPUIPC_WRITE_VALUE_SET)
		w = iosys_map_rd(&map, off, u64);
	iosys_map_wr(&map, off, u64, npuipc_value_update(job->flags, w, job->value));
	/* Out of the BAR's write-combining buffer before the next holder reads. */
	if (map.is_iomem)
		wmb();
	spin_unlock(&npuipc_value_lock);
	npuipc_job_unmap_word(job, &map, guard);
	return 0;
}

static bool npuipc_value_compare(u32 cmp, u64 w, u64 v)
{
	switch (cmp) {
	case NPUIPC_WAIT_VALUE_GEQ:	/* cyclic, as a counter that wraps */
		return (s64)(w - v) >= 0;
	case NPUIPC_WAIT_VALUE_EQ:
		return w == v;
	case NPUIPC_WAIT_VALUE_AND:
		return (w & v) != 0;
	case NPUIPC_WAIT_VALUE_NOR:
		return ~(w | v) != 0;
	case NPUIPC_WAIT_VALUE_LT:
		return w < v;
	case NPUIPC_WAIT_VALUE_GT:
		return w > v;
	case NPUIPC_WAIT_VALUE_GE:
		return w >= v;
	default:	/* ALL */
		return (w & v) == v;
	}
}

/**
 * npuipc_job_value_reached() - read a WAIT_VALUE job's word and compare it
 * @job: the WAIT_VALUE job
 *
 * Return: 1 when the comparison holds, 0 when not yet, -ENODEV when the
 * buffer's device is gone.
 */
int npuipc_job_value_reached(struct npuipc_job *job)
{
	size_t off = offset_in_page(job->dst_offset);
	struct iosys_map map;
	bool reached;
	struct npuipc_mem_guard guard[2];

	if (!npuipc_job_map_word(job, &map, guard))
		return -ENODEV;
	spin_lock(&npuipc_value_lock);
	reached = npuipc_value_compare(job->flags & NPUIPC_WAIT_VALUE_CMP_MASK,
				       iosys_map_rd(&map, off, u64), job->value);
	if (reached && (job->flags & NPUIPC_WAIT_VALUE_CLEAR)) {
		iosys_map_wr(&map, off, u64, 0);
		if (map.is_iomem)
			wmb();
	}
	spin_unlock(&npuipc_value_lock);
	npuipc_job_unmap_word(job, &map, guard);
	return reached;
}

/* Whether @in's flags are ones its kind takes. */
static bool npuipc_job_flags_valid(const struct drm_npuipc_job *in)
{
	switch (in->kind) {
	case NPUIPC_JOB_FILL:
		return !(in->flags & ~NPUIPC_FILL_FLAGS_VALID);
	case NPUIPC_JOB_WRITE_VALUE:
		return in->flags <= NPUIPC_WRITE_VALUE_AND;
	case NPUIPC_JOB_WAIT_VALUE:
		return !(in->flags & ~(NPUIPC_WAIT_VALUE_CMP_MASK | NPUIPC_WAIT_VALUE_CLEAR)) &&
		       (in->flags & NPUIPC_WAIT_VALUE_CMP_MASK) <= NPUIPC_WAIT_VALUE_ALL;
	default:
		return !in->flags;
	}
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
	struct npuipc_object *obj = npuipc_file_lookup_object(nfile, handle, type);

	if (IS_ERR(obj))
		return PTR_ERR(obj);
	*out = obj;
	return 0;
}

/*
 * fget() only to tell -EBADF from -EINVAL, which sync_file_get_fence()
 * does not (NULL for both): an fd closed in between reads as -EINVAL.
 */
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

/**
 * npuipc_job_parse() - check one submitted job and take what it refers to
 * @job: the job to fill in
 * @in: the job as userspace submitted it
 * @file: the submitting DRM file, whose handles the job names
 *
 * Checks one job and takes what it refers to; all or nothing is the caller's.
 *
 * Return: 0; -EINVAL for a malformed job, -EPERM for a WAIT_NOTIFY or
 * RESET_NOTIFY on a notify the file does not own, or the error of looking up
 * a buffer, sync_file, syncobj, event or notify the job names.
 */
int npuipc_job_parse(struct npuipc_job *job, const struct drm_npuipc_job *in,
		     struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	bool uses_buffers = in->kind == NPUIPC_JOB_COPY || in->kind == NPUIPC_JOB_FILL;
	bool value_job = in->kind == NPUIPC_JOB_WRITE_VALUE || in->kind == NPUIPC_JOB_WAIT_VALUE;
	struct drm_device *drm = file->minor->dev;
	struct npuipc_object *obj;
	int ret;

	if (npuipc_refuse(drm, in->pad))
		return -EINVAL;
	if (npuipc_refuse(drm, !npuipc_job_flags_valid(in)))
		return -EINVAL;
	if (npuipc_refuse(drm, !uses_buffers && !value_job &&
			  (in->dst || in->src || in->dst_offset || in->src_offset || in->size)))
		return -EINVAL;
	if (npuipc_refuse(drm, uses_buffers && (in->object || in->timeout_ns)))
		return -EINVAL;
	if (npuipc_refuse(drm, value_job && (in->src || in->src_offset || in->size || in->object)))
		return -EINVAL;
	if (npuipc_refuse(drm, in->value && in->kind != NPUIPC_JOB_FILL &&
			  in->kind != NPUIPC_JOB_WAIT_SYNCOBJ && !value_job))
		return -EINVAL;
	if (npuipc_refuse(drm, in->timeout_ns && in->kind >= NPUIPC_JOB_RECORD_EVENT &&
			  in->kind != NPUIPC_JOB_WAIT_VALUE))
		return -EINVAL;

	job->kind = in->kind;
	job->dst_offset = in->dst_offset;
	job->src_offset = in->src_offset;
	job->size = in->size;
	job->flags = in->flags;
	if (in->timeout_ns)
		job->timeout_jiffies = npuipc_timeout_jiffies(in->timeout_ns);

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
		if (npuipc_refuse(drm, in->src || in->src_offset ||
				  in->value > (in->flags & NPUIPC_FILL_U32 ? U32_MAX : 0xff)))
			return -EINVAL;
		/* Whole words: each page's stretch of the fill is too. */
		if (npuipc_refuse(drm, (in->flags & NPUIPC_FILL_U32) &&
				  !IS_ALIGNED(in->dst_offset | in->size, sizeof(u32))))
			return -EINVAL;
		ret = npuipc_job_lookup_range(file, in->dst, in->dst_offset, in->size,
					      true, &job->dst);
		job->value = in->value;
		break;
	case NPUIPC_JOB_WRITE_VALUE:
	case NPUIPC_JOB_WAIT_VALUE:
		if (npuipc_refuse(drm, !IS_ALIGNED(in->dst_offset, sizeof(u64))))
			return -EINVAL;
		/* A clearing wait writes its word too. */
		ret = npuipc_job_lookup_range(file, in->dst, in->dst_offset, sizeof(u64),
					      in->kind == NPUIPC_JOB_WRITE_VALUE ||
					      (in->flags & NPUIPC_WAIT_VALUE_CLEAR), &job->dst);
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
			job->wait_fence = npuipc_event_last(to_npuipc_event(obj));
			npuipc_object_put(obj);
		}
		break;
	case NPUIPC_JOB_RECORD_EVENT:
		ret = npuipc_job_lookup_sync(nfile, in->object, NPUIPC_OBJ_EVENT, &obj);
		if (!ret)
			job->event = to_npuipc_event(obj);
		break;
	case NPUIPC_JOB_WAIT_NOTIFY:
	case NPUIPC_JOB_RECORD_NOTIFY:
	case NPUIPC_JOB_RESET_NOTIFY:
		ret = npuipc_job_lookup_sync(nfile, in->object, NPUIPC_OBJ_NOTIFY, &obj);
		if (ret)
			break;
		job->notify = to_npuipc_notify(obj);
		if (in->kind != NPUIPC_JOB_RECORD_NOTIFY &&
		    !npuipc_notify_owned_by(job->notify, nfile))
			ret = -EPERM;
		break;
	default:
		drm_dbg_driver(drm, "%s: refused: unknown job kind %u\n", __func__, in->kind);
		ret = -EINVAL;
	}
	job->waits_on_user = !ret && (in->kind == NPUIPC_JOB_WAIT_NOTIFY ||
				      in->kind == NPUIPC_JOB_WAIT_VALUE ||
				      npuipc_fence_waits_on_user(job->wait_fence));
	return ret;
}

/**
 * npuipc_jobs_discard() - free jobs of a submit that failed
 * @jobs: the jobs
 * @count: how many jobs @jobs holds
 * @fences_initialized: whether the jobs' fences were initialized
 *
 * Undoes npuipc_job_alloc(), and npuipc_job_init_fence() if @fences_initialized.
 */
void npuipc_jobs_discard(struct npuipc_job **jobs, unsigned int count,
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
	[NPUIPC_JOB_WRITE_VALUE] = "write_value",
	[NPUIPC_JOB_WAIT_VALUE] = "wait_value",
};

static const char *const npuipc_wait_value_names[] = {
	[NPUIPC_WAIT_VALUE_GEQ] = ">=",
	[NPUIPC_WAIT_VALUE_EQ] = "==",
	[NPUIPC_WAIT_VALUE_AND] = "& !=0",
	[NPUIPC_WAIT_VALUE_NOR] = "nor !=0",
	[NPUIPC_WAIT_VALUE_LT] = "<",
	[NPUIPC_WAIT_VALUE_GT] = ">",
	[NPUIPC_WAIT_VALUE_GE] = ">= (unsigned)",
	[NPUIPC_WAIT_VALUE_ALL] = "has all bits of",
};

/**
 * npuipc_job_show() - print a stream's head job for debugfs
 * @m: the seq_file to print to
 * @job: the head job of its stream
 *
 * A stream's head job and what it waits on, for debugfs.
 *
 * Context: The job's stream->lock held.
 */
void npuipc_job_show(struct seq_file *m, struct npuipc_job *job)
{
	seq_printf(m, "    head: %s", job->kind < ARRAY_SIZE(npuipc_job_kind_names) ?
		   npuipc_job_kind_names[job->kind] : "?");
	if (npuipc_job_is_bulk(job))
		seq_printf(m, " of %llu bytes", job->size);
	if (job->kind == NPUIPC_JOB_WAIT_VALUE)
		seq_printf(m, " for word %s %#llx at offset %llu%s",
			   npuipc_wait_value_names[job->flags & NPUIPC_WAIT_VALUE_CMP_MASK], job->value,
			   job->dst_offset, job->flags & NPUIPC_WAIT_VALUE_CLEAR ? ", then clear" : "");
	if (job->notify)
		seq_printf(m, " on notify %p%s", job->notify,
			   READ_ONCE(job->notify_parked) ? ", parked" : "");
	if (job->wait_fence) {
		seq_puts(m, " on ");
		npuipc_debugfs_show_fence(m, job->wait_fence);
	}
	if (job->timeout_jiffies)
		seq_printf(m, ", timeout %llu ms", jiffies64_to_msecs(job->timeout_jiffies));
	seq_putc(m, '\n');
}
