// SPDX-License-Identifier: GPL-2.0
/*
 * npuipc_fuzz: random and mutated arguments for every npuipc ioctl (SUBMIT's
 * header included), on random fds (npuipc, vgem, dma-bufs, sync files,
 * event and notify fds, plain files), in random sequences from two threads
 * of each process sharing its fds and handles, across processes that are
 * killed at random. Run in the guest, ideally on the debug kernel (make
 * check-debug): the kernel log must stay clean, every device must end idle,
 * every error an npuipc device fd returns must be one the uapi documents
 * for that ioctl, and the run must have done enough to count.
 *
 * usage: npuipc_fuzz [--procs N] [--seconds S] [--seed X] [--min-rate R]
 * Prints TAP and the seed; --seed X replays the same choices.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "npuipc_chaos.h"

#define POOL 24

/* What the threads of one process share; their races are part of the fuzz. */
struct pool {
	_Atomic int fds[POOL];		/* -1: empty; 0 and 1 are the devices, never closed */
	_Atomic uint32_t handles[16];	/* recently returned handles */
	double end;
};

struct fuzzer {
	uint64_t rng;
	struct pool *pool;
};

static uint64_t rnd(struct fuzzer *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static uint32_t pick(struct fuzzer *f, uint32_t n)
{
	return rnd(f) % n;
}

static void pool_add(struct fuzzer *f, int fd)
{
	int slot = 2 + pick(f, POOL - 2), old;

	if (fd < 0)
		return;
	old = atomic_exchange(&f->pool->fds[slot], fd);
	if (old >= 0)
		close(old);	/* the other thread may be using it: so be it */
}

static int pool_fd(struct fuzzer *f)
{
	int i, fd;

	for (i = 0; i < 4; i++) {
		fd = atomic_load(&f->pool->fds[pick(f, POOL)]);
		if (fd >= 0)
			return fd;
	}
	/* device 0, or a random number */
	return pick(f, 8) ? atomic_load(&f->pool->fds[0]) : (int)pick(f, 64) - 2;
}

static int is_device_fd(struct fuzzer *f, int fd)
{
	return fd >= 0 && (fd == atomic_load(&f->pool->fds[0]) || fd == atomic_load(&f->pool->fds[1]));
}

/* A handle that is likely real, sometimes not. */
static uint32_t some_handle(struct fuzzer *f)
{
	switch (pick(f, 8)) {
	case 0:
		return (uint32_t)rnd(f);
	case 1:
		return pick(f, 4);
	default:
		return atomic_load(&f->pool->handles[pick(f, 16)]);
	}
}

/* A size or offset: usually plausible, sometimes extreme. */
static uint64_t some_size(struct fuzzer *f)
{
	static const uint64_t interesting[] = {
		0, 1, 4095, 4096, 4097, 2 << 20, (2 << 20) + 4096, 1ULL << 30,
		NPUIPC_BO_MAX_SIZE, NPUIPC_BO_MAX_SIZE + 4096, UINT64_MAX, UINT64_MAX - 4095,
		1ULL << 63,
	};

	if (pick(f, 3) == 0)
		return interesting[pick(f, sizeof(interesting) / sizeof(interesting[0]))];
	return (uint64_t)(1 + pick(f, 512)) * 4096;
}

static void remember(struct fuzzer *f, uint32_t handle)
{
	atomic_store(&f->pool->handles[pick(f, 16)], handle);
}

/*
 * The errors the uapi documents for each ioctl (uapi/drm/npuipc_drm.h),
 * plus EFAULT for SUBMIT, the one ioctl with a user pointer inside its
 * argument (the fuzzer mutates it); every argument itself lies on the
 * fuzzer's stack. No device is unplugged during a run: ENODEV is no
 * answer. GEM_CLOSE is the DRM core's (EINVAL for an unknown handle).
 */
static int documented(unsigned long request, int err)
{
	static const struct {
		unsigned long request;
		int errs[12];
	} table[] = {
		{ DRM_IOCTL_NPUIPC_GET_INFO, { EINVAL } },
		{ DRM_IOCTL_NPUIPC_BO_CREATE, { EINVAL, ENOMEM, EINTR } },
		{ DRM_IOCTL_NPUIPC_BO_INFO, { EINVAL, ENOENT } },
		{ DRM_IOCTL_NPUIPC_BO_EXPORT, { EINVAL, ENOENT, EPERM, EMFILE, ENOMEM } },
		{ DRM_IOCTL_NPUIPC_BO_USERPTR, { EINVAL, EFAULT, ENOMEM, EINTR } },
		{ DRM_IOCTL_NPUIPC_BO_IMPORT, { EINVAL, EBADF, EXDEV, ENOENT, ENOSPC, ENOMEM } },
		{ DRM_IOCTL_NPUIPC_OBJ_CREATE, { EINVAL, ENOMEM, ENOSPC } },
		{ DRM_IOCTL_NPUIPC_OBJ_DESTROY, { EINVAL, ENOENT } },
		{ DRM_IOCTL_NPUIPC_OBJ_EXPORT, { EINVAL, ENOENT, EMFILE, ENOMEM, EDEADLK } },
		{ DRM_IOCTL_NPUIPC_OBJ_IMPORT, { EINVAL, EBADF, ENOMEM, ENOSPC } },
		{ DRM_IOCTL_NPUIPC_SUBMIT, { EINVAL, ENOENT, EBADF, EACCES, EOPNOTSUPP, EDEADLK,
					     EPERM, EIO, ENOSPC, ENOMEM, EMFILE, EINTR } },
		{ DRM_IOCTL_NPUIPC_WAIT, { ETIME, EINTR, EINVAL, ENOENT } },
		{ DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, { EINVAL, ENOENT } },
		{ DRM_IOCTL_NPUIPC_STREAM_ABORT, { EINVAL, ENOENT, EINTR } },
		{ DRM_IOCTL_GEM_CLOSE, { EINVAL } },
	};
	unsigned int i, j;

	if (err == EFAULT && request == DRM_IOCTL_NPUIPC_SUBMIT)
		return 1;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		for (j = 0; table[i].request == request && j < 12 && table[i].errs[j]; j++)
			if (table[i].errs[j] == err)
				return 1;
	return 0;
}

/*
 * What a success on a device fd must have written back: handles start at
 * 1, fds are fds, sizes are whole pages of a known class, the free memory
 * lies within the budget.
 */
static void check_success(unsigned long request, const void *arg)
{
	const struct drm_npuipc_get_info *info = arg;
	const struct drm_npuipc_bo_create *create = arg;
	const struct drm_npuipc_bo_info *bo_info = arg;
	const struct drm_npuipc_bo_export *bo_export = arg;
	const struct drm_npuipc_bo_import *bo_import = arg;
	const struct drm_npuipc_obj_create *obj_create = arg;
	const struct drm_npuipc_obj_export *obj_export = arg;
	const struct drm_npuipc_obj_import *obj_import = arg;
	const struct drm_npuipc_submit *submit = arg;
	bool ok = true;

	switch (request) {
	case DRM_IOCTL_NPUIPC_GET_INFO:
		ok = info->mem_total && info->mem_free <= info->mem_total;
		break;
	case DRM_IOCTL_NPUIPC_BO_CREATE:
		ok = create->handle != 0;
		break;
	case DRM_IOCTL_NPUIPC_BO_USERPTR:
		ok = ((const struct drm_npuipc_bo_userptr *)arg)->handle != 0;
		break;
	case DRM_IOCTL_NPUIPC_BO_INFO:
		ok = bo_info->size && !(bo_info->size % 4096) && bo_info->mmap_offset &&
		     bo_info->page_class < NPUIPC_PAGE_CLASS_COUNT;
		break;
	case DRM_IOCTL_NPUIPC_BO_EXPORT:
		ok = bo_export->fd >= 0;
		break;
	case DRM_IOCTL_NPUIPC_BO_IMPORT:
		ok = bo_import->handle != 0;
		break;
	case DRM_IOCTL_NPUIPC_OBJ_CREATE:
		ok = obj_create->handle != 0;
		break;
	case DRM_IOCTL_NPUIPC_OBJ_EXPORT:
		ok = obj_export->fd >= 0;
		break;
	case DRM_IOCTL_NPUIPC_OBJ_IMPORT:
		ok = obj_import->handle != 0;
		break;
	case DRM_IOCTL_NPUIPC_SUBMIT:
		ok = !(submit->flags & NPUIPC_SUBMIT_OUT_FENCE) || submit->out_fence_fd >= 0;
		break;
	}
	if (!ok)
		npuipc_chaos_fail("ioctl %#lx succeeded with an impossible result", request);
}

/* Flips a few random bits: the mutation half of the fuzzer. */
static void mutate(struct fuzzer *f, void *arg, size_t size)
{
	unsigned int flips = pick(f, 4) == 0 ? 1 + pick(f, 3) : 0, i;
	uint8_t *p = arg;

	for (i = 0; i < flips; i++)
		p[pick(f, size)] ^= 1u << pick(f, 8);
}

static void fuzz_job(struct fuzzer *f, struct drm_npuipc_job *job)
{
	memset(job, 0, sizeof(*job));
	job->kind = 1 + pick(f, NPUIPC_JOB_WAIT_VALUE);
	switch (job->kind) {
	case NPUIPC_JOB_COPY:
		job->src = some_handle(f);
		job->src_offset = pick(f, 2) ? 0 : some_size(f);
		/* fall through */
	case NPUIPC_JOB_FILL:
		job->dst = some_handle(f);
		job->dst_offset = pick(f, 2) ? 0 : some_size(f);
		job->size = pick(f, 2) ? 4096 : some_size(f);
		job->value = job->kind == NPUIPC_JOB_FILL ? pick(f, 300) : 0;
		break;
	case NPUIPC_JOB_WAIT_VALUE:
		job->flags = pick(f, NPUIPC_WAIT_VALUE_ALL + 2) | (pick(f, 2) ? NPUIPC_WAIT_VALUE_CLEAR : 0);
		job->timeout_ns = pick(f, 4) ? 10 * 1000 * 1000 : 0;
		/* fall through */
	case NPUIPC_JOB_WRITE_VALUE:
		if (job->kind == NPUIPC_JOB_WRITE_VALUE)
			job->flags = pick(f, NPUIPC_WRITE_VALUE_AND + 2);
		job->dst = some_handle(f);
		job->dst_offset = pick(f, 2) ? 8 * pick(f, 512) : some_size(f);
		job->value = pick(f, 2) ? pick(f, 4) : ~0ULL;
		break;
	case NPUIPC_JOB_WAIT_SYNC_FILE:
		job->object = pool_fd(f);
		break;
	default:
		job->object = some_handle(f);
	}
	if (job->kind >= NPUIPC_JOB_WAIT_SYNC_FILE && job->kind <= NPUIPC_JOB_WAIT_NOTIFY)
		job->timeout_ns = pick(f, 4) ? 10 * 1000 * 1000 : 0;
	mutate(f, job, sizeof(*job));
}

/* The only memory BO_USERPTR pins: what jobs write here, nobody reads. */
static uint8_t userptr_scratch[16 * 4096] __attribute__((aligned(4096)));

static void fuzz_one(struct fuzzer *f)
{
	union {
		struct drm_npuipc_get_info info;
		struct drm_npuipc_bo_create create;
		struct drm_npuipc_bo_info bo_info;
		struct drm_npuipc_bo_export bo_export;
		struct drm_npuipc_bo_import bo_import;
		struct drm_npuipc_bo_userptr userptr;
		struct drm_npuipc_obj_create obj_create;
		struct drm_npuipc_obj_destroy obj_destroy;
		struct drm_npuipc_obj_export obj_export;
		struct drm_npuipc_obj_import obj_import;
		struct drm_npuipc_submit submit;
		struct drm_npuipc_wait wait;
		struct drm_npuipc_stream_set_param set_param;
		struct drm_npuipc_stream_abort abort;
		struct drm_gem_close gem_close;
		uint8_t raw[64];
	} a;
	struct drm_npuipc_job jobs[4];
	int fd = pool_fd(f), ret;
	unsigned long request;
	size_t size;
	void *p;

	memset(&a, 0, sizeof(a));
	switch (pick(f, 18)) {
	case 0:
		request = DRM_IOCTL_NPUIPC_GET_INFO;
		break;
	case 1:
		request = DRM_IOCTL_NPUIPC_BO_CREATE;
		a.create.size = pick(f, 2) ? 4096ULL << pick(f, 10) : some_size(f);
		a.create.page_class = pick(f, 8) ? pick(f, 2) : pick(f, 5);
		break;
	case 2:
		request = DRM_IOCTL_NPUIPC_BO_INFO;
		a.bo_info.handle = some_handle(f);
		break;
	case 3:
		request = DRM_IOCTL_NPUIPC_BO_EXPORT;
		a.bo_export.handle = some_handle(f);
		a.bo_export.offset = pick(f, 2) ? 0 : some_size(f);
		a.bo_export.size = pick(f, 2) ? 4096 : some_size(f);
		a.bo_export.flags = pick(f, 3);
		break;
	case 4:
		request = DRM_IOCTL_NPUIPC_BO_IMPORT;
		a.bo_import.fd = pool_fd(f);
		a.bo_import.flags = pick(f, 3);
		break;
	case 5:
		request = DRM_IOCTL_NPUIPC_OBJ_CREATE;
		a.obj_create.type = pick(f, 5);
		break;
	case 6:
		request = DRM_IOCTL_NPUIPC_OBJ_DESTROY;
		a.obj_destroy.handle = some_handle(f);
		break;
	case 7:
		request = DRM_IOCTL_NPUIPC_OBJ_EXPORT;
		a.obj_export.handle = some_handle(f);
		a.obj_export.flags = pick(f, 3);
		break;
	case 8:
		request = DRM_IOCTL_NPUIPC_OBJ_IMPORT;
		a.obj_import.fd = pool_fd(f);
		break;
	case 9:
	case 10:
		request = DRM_IOCTL_NPUIPC_SUBMIT;
		a.submit.stream = some_handle(f);
		a.submit.job_count = 1 + pick(f, 4);
		a.submit.job_size = sizeof(jobs[0]);
		a.submit.flags = pick(f, 2);
		for (ret = 0; ret < 4; ret++)
			fuzz_job(f, &jobs[ret]);
		a.submit.jobs = pick(f, 16) ? (uintptr_t)jobs : rnd(f);
		break;
	case 11:
		request = DRM_IOCTL_NPUIPC_WAIT;
		a.wait.handle = some_handle(f);
		a.wait.flags = pick(f, 3);
		break;
	case 12:
		request = DRM_IOCTL_GEM_CLOSE;
		a.gem_close.handle = some_handle(f);
		break;
	case 14:
		request = DRM_IOCTL_NPUIPC_STREAM_SET_PARAM;
		a.set_param.stream = some_handle(f);
		a.set_param.param = pick(f, 3);
		a.set_param.value = pick(f, 3);
		break;
	case 15:
		request = DRM_IOCTL_NPUIPC_STREAM_ABORT;
		a.abort.stream = some_handle(f);
		break;
	case 16:	/* pins of pages only jobs write (userptr_scratch) */
		request = DRM_IOCTL_NPUIPC_BO_USERPTR;
		a.userptr.addr = (uintptr_t)userptr_scratch + 4096 * pick(f, 8);
		a.userptr.size = 4096 * (1 + pick(f, 8));
		a.userptr.flags = pick(f, 2);
		break;
	case 13:	/* mmap at a random offset of a random fd */
		size = (size_t)4096 << pick(f, 10);
		p = mmap(NULL, size, pick(f, 2) ? PROT_READ : PROT_READ | PROT_WRITE,
			 pick(f, 8) ? MAP_SHARED : MAP_PRIVATE, fd,
			 pick(f, 2) ? (off_t)(pick(f, 64) << 12) : (off_t)((1ULL << 32) + (pick(f, 64) << 12)));
		if (p != MAP_FAILED)
			munmap(p, size);
		return;
	default: {	/* poll and close */
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, 0);
		if (pick(f, 4) == 0) {
			int old = atomic_exchange(&f->pool->fds[2 + pick(f, POOL - 2)], -1);

			if (old >= 0)
				close(old);
		}
		return;
	}
	}
	/* SUBMIT's header too: its count, size, flags and jobs pointer. */
	mutate(f, &a, _IOC_SIZE(request));
	/*
	 * A pin of the fuzzer's own memory would let jobs write it: a mutated
	 * range stays inside the scratch pages or leaves the address space.
	 */
	if (request == DRM_IOCTL_NPUIPC_BO_USERPTR &&
	    (a.userptr.addr < (uintptr_t)userptr_scratch ||
	     a.userptr.addr > (uintptr_t)userptr_scratch + sizeof(userptr_scratch) ||
	     a.userptr.size > (uintptr_t)userptr_scratch + sizeof(userptr_scratch) - a.userptr.addr))
		a.userptr.addr = 1ULL << 62;
	/* Host waits are bounded: the fuzzer must never hang itself. */
	if (request == DRM_IOCTL_NPUIPC_WAIT)
		a.wait.timeout_ns = pick(f, 20 * 1000 * 1000);

	ret = ioctl(fd, request, &a);
	atomic_fetch_add(&npuipc_chaos_stats->ops, 1);
	if (ret) {
		int err = errno;

		if (is_device_fd(f, fd) && !documented(request, err))
			npuipc_chaos_fail("ioctl %#lx on a device fd failed with %d (%s), not documented",
					  request, err, strerrordesc_np(err));
		return;
	}
	if (is_device_fd(f, fd)) {
		atomic_fetch_add(&npuipc_chaos_stats->checks, 1);
		check_success(request, &a);
	}
	switch (request) {
	case DRM_IOCTL_NPUIPC_BO_CREATE:
		remember(f, a.create.handle);
		break;
	case DRM_IOCTL_NPUIPC_BO_USERPTR:
		remember(f, a.userptr.handle);
		break;
	case DRM_IOCTL_NPUIPC_BO_IMPORT:
		remember(f, a.bo_import.handle);
		break;
	case DRM_IOCTL_NPUIPC_OBJ_CREATE:
		remember(f, a.obj_create.handle);
		break;
	case DRM_IOCTL_NPUIPC_OBJ_IMPORT:
		remember(f, a.obj_import.handle);
		break;
	case DRM_IOCTL_NPUIPC_BO_EXPORT:
		pool_add(f, a.bo_export.fd);
		break;
	case DRM_IOCTL_NPUIPC_OBJ_EXPORT:
		pool_add(f, a.obj_export.fd);
		break;
	case DRM_IOCTL_NPUIPC_SUBMIT:
		if (a.submit.flags & NPUIPC_SUBMIT_OUT_FENCE)
			pool_add(f, a.submit.out_fence_fd);
		break;
	}
}

static void *fuzz_thread(void *arg)
{
	struct fuzzer *f = arg;

	while (npuipc_chaos_now() < f->pool->end)
		fuzz_one(f);
	return NULL;
}

static void fuzz_process(unsigned int id, uint64_t seed, double end)
{
	static struct pool pool;
	struct fuzzer threads[2] = { { .rng = seed | 1, .pool = &pool },
				     { .rng = (seed * 31) | 1, .pool = &pool } };
	int i, pipefd[2];
	pthread_t other;

	pool.end = end;
	for (i = 0; i < POOL; i++)
		atomic_store(&pool.fds[i], -1);
	/* Workers start on alternate devices; either may be the "home" one. */
	pool.fds[0] = npuipc_open_device(id % 2);
	pool.fds[1] = npuipc_open_device((id + 1) % 2);
	if (pool.fds[0] < 0)
		pool.fds[0] = npuipc_open_device(0);
	pool.fds[2] = open("/dev/null", O_RDWR | O_CLOEXEC);
	pool.fds[3] = memfd_create("fuzz", MFD_CLOEXEC);
	if (!pipe2(pipefd, O_CLOEXEC)) {
		pool.fds[4] = pipefd[0];
		pool.fds[5] = pipefd[1];
	}
	pool.fds[6] = npuipc_open_vgem();	/* -1 without vgem */
	/* Two threads of one process: one file's handles and fds raced. */
	if (pthread_create(&other, NULL, fuzz_thread, &threads[1]))
		npuipc_chaos_fail("fuzzer %u: pthread_create failed", id);
	fuzz_thread(&threads[0]);
	pthread_join(other, NULL);
}

int main(int argc, char **argv)
{
	struct npuipc_chaos chaos = {
		.procs = 2, .seconds = 30, .worker = fuzz_process,
		.min_pause_us = 100000, .max_pause_us = 500000, .min_rate = 30,
	};
	unsigned int kills;
	int idle, worked, status = npuipc_chaos_start(&chaos, argc, argv);

	if (status >= 0)
		return status;

	kills = npuipc_chaos_run(&chaos);
	idle = npuipc_all_devices_idle();
	printf("%s 1 fuzz: %u s, %u SIGKILLs, devices idle afterwards (seed %llu)\n",
	       idle ? "ok" : "not ok", chaos.seconds, kills, (unsigned long long)chaos.seed);
	/*
	 * Judged by npuipc ioctls that succeeded on a device fd, per second of
	 * run: measured thousands a second under TCG and about 300 on the
	 * debug kernel; at least --min-rate, 30 by default.
	 */
	worked = npuipc_chaos_report(2, "fuzz", "npuipc calls that succeeded",
				     (unsigned long)chaos.min_rate * chaos.seconds);
	return idle && worked ? 0 : 1;
}
