// SPDX-License-Identifier: GPL-2.0
/*
 * What a process's first COPY or FILL costs, run in the guest: the SUBMIT
 * that makes the process's copy worker (a kthread) and attaches it to the
 * process's cgroups (cgroup_attach_task_all(), which takes the cgroup
 * core's global locks), against a later SUBMIT of the same FILL in the same
 * process, which finds the worker and attaches nothing. Each round is a
 * new process; the figure is the median of the rounds. No goal: the cost is
 * paid once per process, and is reported so that keeping the attach (for
 * cpu.max and the other limits) is a choice made with its price known.
 */
#include <sys/wait.h>

#include "bench_util.h"
#include "npuipc_test_util.h"

#define ROUNDS 41

static int one_process(int out)
{
	struct drm_npuipc_job fill = { .kind = NPUIPC_JOB_FILL, .size = 4096, .value = 1 };
	double times[2], t;
	uint32_t bo, stream;
	int fd, status, i;

	fd = npuipc_open_device(0);
	if (fd < 0 || npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &bo) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream))
		return 1;
	fill.dst = bo;
	for (i = 0; i < 2; i++) {
		t = bench_now_us();
		if (npuipc_submit1(fd, stream, fill))
			return 2;
		times[i] = bench_now_us() - t;
		if (npuipc_wait(fd, stream, 10LL * 1000000000, 0, &status) || status)
			return 3;
	}
	return write(out, times, sizeof(times)) == sizeof(times) ? 0 : 4;
}

int main(void)
{
	double first[ROUNDS], later[ROUNDS];
	int pipefd[2], status, i;
	pid_t child;

	if (pipe(pipefd))
		return 1;
	for (i = 0; i < ROUNDS; i++) {
		double times[2];

		child = fork();
		if (child < 0)
			return 1;
		if (child == 0)
			_exit(one_process(pipefd[1]));
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status) || read(pipefd[0], times, sizeof(times)) != sizeof(times)) {
			fprintf(stderr, "npuipc_worker_bench: round %d failed (status %d)\n", i, status);
			return 1;
		}
		first[i] = times[0];
		later[i] = times[1];
	}
	printf("a process's first SUBMIT of a FILL (makes and attaches its copy worker): %.1f us\n",
	       bench_median(first, ROUNDS));
	printf("its second SUBMIT of the same FILL: %.1f us (median of %d processes)\n",
	       bench_median(later, ROUNDS), ROUNDS);
	return 0;
}
