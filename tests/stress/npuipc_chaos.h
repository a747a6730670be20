/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the stress run and the fuzzer share: command-line options, worker
 * processes SIGKILLed and respawned at random for a set time, and the
 * final check that every device is idle.
 */
#ifndef NPUIPC_CHAOS_H
#define NPUIPC_CHAOS_H

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "npuipc_test_util.h"

#define NPUIPC_CHAOS_MAX_PROCS 64

struct npuipc_chaos {
	unsigned int procs;
	unsigned int seconds;
	uint64_t seed;
	/* Pause between two kills, in microseconds. */
	unsigned int min_pause_us, max_pause_us;
	/* Checks a second of run the run must pass (--min-rate). */
	unsigned int min_rate;
	/* Runs in each worker until it is killed or @end (CLOCK_MONOTONIC s). */
	void (*worker)(unsigned int id, uint64_t seed, double end);
};

/*
 * What every worker did, in memory shared by all of them (set up before the
 * first fork): operations done, checks passed (what they are, the caller
 * says: data checked, calls that succeeded), and unexpected results with
 * the first one described. A SIGKILLed worker's counts stay.
 */
struct npuipc_chaos_stats {
	atomic_ulong ops;
	atomic_ulong checks;
	atomic_ulong failures;
	atomic_int described;
	char first_failure[256];
};

/* Shared between processes: only lock-free atomics work there. */
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
	       "the workers' counters need lock-free atomics");

static struct npuipc_chaos_stats *npuipc_chaos_stats;

static inline int npuipc_chaos_stats_init(void)
{
	void *p = mmap(NULL, sizeof(*npuipc_chaos_stats), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	npuipc_chaos_stats = p;
	return 0;
}

/* An unexpected result: counted, and the first one kept for the report. */
static inline void npuipc_chaos_fail(const char *fmt, ...)
{
	struct npuipc_chaos_stats *st = npuipc_chaos_stats;
	int none = 0;
	va_list ap;

	atomic_fetch_add(&st->failures, 1);
	if (!atomic_compare_exchange_strong(&st->described, &none, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(st->first_failure, sizeof(st->first_failure), fmt, ap);
	va_end(ap);
}

/*
 * Prints the counts and the TAP line that judges them: no unexpected
 * result (a worker's own failure or exit included), and at least
 * @min_checks checks passed, the work that proves something (a run that
 * only spun on refusals, or stalled, did almost nothing). Returns 1 when
 * it passed.
 */
static inline int npuipc_chaos_report(unsigned int tap_number, const char *what,
				      const char *checks_are, unsigned long min_checks)
{
	struct npuipc_chaos_stats *st = npuipc_chaos_stats;
	unsigned long ops = atomic_load(&st->ops), checks = atomic_load(&st->checks);
	unsigned long failures = atomic_load(&st->failures);
	int ok = !failures && checks >= min_checks;

	printf("# %lu operations, %lu %s, %lu unexpected results\n", ops, checks, checks_are, failures);
	if (failures)
		printf("# first unexpected result: %s\n", st->first_failure);
	if (checks < min_checks)
		printf("# fewer than %lu %s: the run did too little to count\n", min_checks, checks_are);
	printf("%s %u %s: %lu %s (at least %lu), every result as documented\n",
	       ok ? "ok" : "not ok", tap_number, what, checks, checks_are, min_checks);
	return ok;
}

static inline double npuipc_chaos_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * --procs N --seconds S --seed X --min-rate R; returns 0, or 2 on a bad
 * command line.
 */
static inline int npuipc_chaos_parse(struct npuipc_chaos *c, int argc, char **argv)
{
	static const struct option options[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ "min-rate", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	c->seed = (uint64_t)time(NULL);
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'p')
			c->procs = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			c->seconds = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			c->seed = strtoull(optarg, NULL, 0);
		else if (opt == 'm')
			c->min_rate = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (!c->procs || c->procs > NPUIPC_CHAOS_MAX_PROCS) {
		fprintf(stderr, "--procs must be 1..%d\n", NPUIPC_CHAOS_MAX_PROCS);
		return 2;
	}
	return 0;
}

/*
 * Parses the command line and prints the TAP header with the seed.
 * Returns -1 to go on, or the exit status: 2 for a bad command line, 1
 * (a failed test) when there is no npuipc device: a run with nothing to
 * run on tested nothing.
 */
static inline int npuipc_chaos_start(struct npuipc_chaos *c, int argc, char **argv)
{
	if (npuipc_chaos_parse(c, argc, argv))
		return 2;
	if (npuipc_count_devices() == 0) {
		printf("TAP version 13\n1..1\nnot ok 1 no npuipc device (is npuipc.ko loaded?)\n");
		return 1;
	}
	if (npuipc_chaos_stats_init()) {
		perror("mmap");
		return 1;
	}
	printf("TAP version 13\n1..2\n# seed %llu, %u processes, %u s\n",
	       (unsigned long long)c->seed, c->procs, c->seconds);
	fflush(stdout);
	return -1;
}

static inline pid_t npuipc_chaos_spawn(const struct npuipc_chaos *c, unsigned int id,
				       unsigned int generation, double end)
{
	pid_t pid = fork();

	if (pid == 0) {
		c->worker(id, c->seed + (uint64_t)generation * NPUIPC_CHAOS_MAX_PROCS + id, end);
		_exit(0);
	}
	if (pid < 0)
		npuipc_chaos_fail("fork: %s", strerrordesc_np(errno));
	return pid;
}

/*
 * Kills (when @kill_it) and reaps worker @pid: it must have ended by our
 * SIGKILL or exited 0; anything else (a crash, a failure exit) counts.
 */
static inline void npuipc_chaos_reap(pid_t pid, int kill_it)
{
	int status;

	if (pid <= 0)
		return;
	if (kill_it)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		npuipc_chaos_fail("waitpid %d: %s", pid, strerrordesc_np(errno));
	else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		npuipc_chaos_fail("worker %d died of signal %d", pid, WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		npuipc_chaos_fail("worker %d exited with %d", pid, WEXITSTATUS(status));
}

/* Runs the workers, killing one at random now and then; returns the kills. */
static inline unsigned int npuipc_chaos_run(const struct npuipc_chaos *c)
{
	pid_t pids[NPUIPC_CHAOS_MAX_PROCS];
	double end = npuipc_chaos_now() + c->seconds;
	uint64_t rng = c->seed | 1;
	unsigned int i, kills = 0;

	for (i = 0; i < c->procs; i++)
		pids[i] = npuipc_chaos_spawn(c, i, 0, end);
	while (npuipc_chaos_now() < end) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		usleep(c->min_pause_us + (rng >> 33) % (c->max_pause_us - c->min_pause_us + 1));
		i = (rng >> 17) % c->procs;
		npuipc_chaos_reap(pids[i], 1);
		kills++;
		pids[i] = npuipc_chaos_spawn(c, i, kills, end);
	}
	for (i = 0; i < c->procs; i++)
		npuipc_chaos_reap(pids[i], 1);
	return kills;
}

static inline int npuipc_all_devices_idle(void)
{
	unsigned int i, n = npuipc_count_devices();
	int idle = 1;

	for (i = 0; i < n; i++)
		idle &= npuipc_device_is_idle(i);
	return idle;
}

#endif /* NPUIPC_CHAOS_H */
