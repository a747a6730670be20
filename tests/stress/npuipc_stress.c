// SPDX-License-Identifier: GPL-2.0
/*
 * npuipc_stress: many processes sharing memory, events and notifies while
 * being killed at random; afterwards every device must be back to zero
 * objects and zero bytes. Run in the guest (tools/vm-run), where vm-run
 * also fails the run on any kernel warning.
 *
 * usage: npuipc_stress [--procs N] [--seconds S] [--seed X]
 * Prints TAP; the seed is printed so that a failure can be replayed.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "npuipc_chaos.h"

#define MIB (1024ULL * 1024ULL)

static int share[2];	/* datagram socketpair: any worker sends, any receives */

static uint32_t next_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

static int send_fd_dgram(int fd)
{
	return npuipc_send_fd_flags(share[1], fd, MSG_DONTWAIT);
}

static int recv_fd_dgram(void)
{
	return npuipc_recv_fd_flags(share[0], MSG_DONTWAIT);
}

/* Uses whatever another worker shared: a dma-buf or an event/notify fd. */
static void use_shared(int fd, uint64_t *rng, uint32_t stream)
{
	int in = recv_fd_dgram();
	uint32_t handle;
	size_t size;

	if (in < 0)
		return;
	if (!npuipc_bo_import(fd, in, NPUIPC_BO_IMPORT_PEER_ACCESS, &handle)) {
		volatile uint8_t *p = npuipc_bo_mmap(fd, handle, PROT_READ, &size);

		if (p != MAP_FAILED) {
			(void)p[next_rand(rng) % size];
			munmap((void *)p, size);
		}
		if (next_rand(rng) % 2)
			npuipc_gem_close(fd, handle);
	} else if (!npuipc_obj_import(fd, in, &handle)) {
		struct drm_npuipc_job job = { .object = handle };

		/* Waits on others' events; records on others' notifies. */
		job.kind = next_rand(rng) % 2 ? NPUIPC_JOB_WAIT_EVENT : NPUIPC_JOB_RECORD_NOTIFY;
		job.timeout_ns = job.kind == NPUIPC_JOB_WAIT_EVENT ? 200 * 1000 * 1000 : 0;
		npuipc_submit1(fd, stream, job);
	}
	close(in);
}

static void worker(unsigned int id, uint64_t seed, double end)
{
	uint64_t rng = seed ^ ((uint64_t)id << 32);
	int fd = npuipc_open_device(next_rand(&rng) % 2);
	uint32_t stream, event, notify;

	if (fd < 0)
		fd = npuipc_open_device(0);
	if (fd < 0 || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_EVENT, &event) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &notify))
		_exit(1);
	while (npuipc_chaos_now() < end) {
		uint32_t cls = next_rand(&rng) % 2, bo, bo2;
		uint64_t size = (cls ? 2 * MIB : 64 * 1024) * (1 + next_rand(&rng) % 2);
		struct drm_npuipc_job jobs[4];
		int out, status;
		size_t mapped;
		uint8_t *p;

		if (npuipc_bo_create(fd, size, cls, &bo))
			continue;	/* budget full: others will free */
		if (npuipc_bo_create(fd, size, cls, &bo2)) {
			npuipc_gem_close(fd, bo);
			continue;
		}
		p = npuipc_bo_mmap(fd, bo, PROT_READ | PROT_WRITE, &mapped);
		if (p != MAP_FAILED) {
			memset(p, (int)id, 4096);
			munmap(p, mapped);
		}
		jobs[0] = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_FILL, .dst = bo,
						   .size = size, .value = id & 0xff };
		jobs[1] = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_COPY, .dst = bo2,
						   .src = bo, .size = size };
		jobs[2] = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_RECORD_EVENT, .object = event };
		jobs[3] = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_WAIT_NOTIFY, .object = notify,
						   .timeout_ns = 50 * 1000 * 1000 };
		npuipc_submit(fd, stream, jobs, 3 + next_rand(&rng) % 2, NULL);

		switch (next_rand(&rng) % 4) {
		case 0:
			if (!npuipc_bo_export(fd, bo, 0, size, next_rand(&rng) % 2, &out)) {
				send_fd_dgram(out);
				close(out);
			}
			break;
		case 1:
			if (!npuipc_obj_export(fd, next_rand(&rng) % 2 ? event : notify, 0, &out)) {
				send_fd_dgram(out);
				close(out);
			}
			break;
		default:
			use_shared(fd, &rng, stream);
		}
		if (npuipc_wait(fd, stream, 2000LL * 1000 * 1000, NPUIPC_WAIT_RECOVER, &status) == -EIO)
			_exit(2);
		npuipc_wait(fd, stream, 0, NPUIPC_WAIT_RECOVER, NULL);
		/* Sometimes leave things for process exit to clean up. */
		if (next_rand(&rng) % 4) {
			npuipc_gem_close(fd, bo);
			npuipc_gem_close(fd, bo2);
		}
	}
}

int main(int argc, char **argv)
{
	struct npuipc_chaos chaos = {
		.procs = 16, .seconds = 20, .worker = worker,
		.min_pause_us = 20000, .max_pause_us = 100000,
	};
	unsigned int kills;
	int idle, status = npuipc_chaos_start(&chaos, argc, argv);

	if (status >= 0)
		return status;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, share))
		return 1;

	kills = npuipc_chaos_run(&chaos);
	/* fds still in flight in the socket go with it */
	close(share[0]);
	close(share[1]);

	idle = npuipc_all_devices_idle();
	printf("# %u SIGKILLs\n", kills);
	printf("%s 1 stress: every object and byte freed after %u SIGKILLs (seed %llu)\n",
	       idle ? "ok" : "not ok", kills, (unsigned long long)chaos.seed);
	return idle ? 0 : 1;
}
