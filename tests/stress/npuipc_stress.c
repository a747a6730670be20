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
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#include "npuipc_test_util.h"

#define MIB (1024ULL * 1024ULL)
#define MAX_PROCS 64

static int share[2];	/* datagram socketpair: any worker sends, any receives */

static uint32_t next_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int send_fd_dgram(int fd)
{
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	memset(control.buf, 0, sizeof(control.buf));
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(share[1], &msg, MSG_DONTWAIT) == 1 ? 0 : -1;
}

static int recv_fd_dgram(void)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(share[0], &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
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

static void worker(unsigned int id, uint64_t seed)
{
	uint64_t rng = seed ^ ((uint64_t)id << 32) ^ (uint64_t)getpid();
	int fd = npuipc_open_device(next_rand(&rng) % 2);
	uint32_t stream, event, notify;

	if (fd < 0)
		fd = npuipc_open_device(0);
	if (fd < 0 || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_EVENT, &event) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &notify))
		_exit(1);
	for (;;) {
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

static pid_t spawn(unsigned int id, uint64_t seed)
{
	pid_t pid = fork();

	if (pid == 0)
		worker(id, seed);
	return pid;
}

int main(int argc, char **argv)
{
	unsigned int procs = 16, seconds = 20, i, kills = 0, idle;
	uint64_t seed = (uint64_t)time(NULL), rng;
	pid_t pids[MAX_PROCS];
	double end;
	int opt;

	static const struct option options[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'p')
			procs = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			seconds = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			seed = strtoull(optarg, NULL, 0);
		else
			return 2;
	}
	if (!procs || procs > MAX_PROCS) {
		fprintf(stderr, "npuipc_stress: --procs must be 1..%d\n", MAX_PROCS);
		return 2;
	}
	if (npuipc_count_devices() == 0) {
		printf("1..0 # SKIP no npuipc device\n");
		return 0;
	}
	printf("TAP version 13\n1..1\n# seed %llu, %u processes, %u s\n",
	       (unsigned long long)seed, procs, seconds);
	fflush(stdout);
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, share))
		return 1;

	rng = seed;
	for (i = 0; i < procs; i++)
		pids[i] = spawn(i, seed);
	end = now_s() + seconds;
	while (now_s() < end) {
		usleep(20000 + next_rand(&rng) % 80000);
		i = next_rand(&rng) % procs;
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
		kills++;
		pids[i] = spawn(i, seed + kills);
	}
	for (i = 0; i < procs; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	/* fds still in flight in the socket go with it */
	close(share[0]);
	close(share[1]);

	idle = 1;
	for (i = 0; i < npuipc_count_devices(); i++)
		idle &= npuipc_device_is_idle(i);
	printf("# %u SIGKILLs\n", kills);
	printf("%s 1 stress: every object and byte freed after %u SIGKILLs (seed %llu)\n",
	       idle ? "ok" : "not ok", kills, (unsigned long long)seed);
	return idle ? 0 : 1;
}
