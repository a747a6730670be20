// SPDX-License-Identifier: GPL-2.0
/*
 * Execution benchmark, run in the guest: tools/vm-run -- npuipc_sync_bench
 *
 * 1. Cross-process latency, record in process A to wait returning in
 *    process B, as half of a ping-pong between A and B:
 *      notify: B's stream waits on its notify, A records it;
 *      event:  B's stream waits on A's event, whose record sits behind a
 *              gate (a notify of A) that A opens;
 *    floor: an eventfd ping-pong between the same two processes.
 *    The three ping-pongs take turns in batches, so that all see the same
 *    conditions (the guest's vCPUs share their host with QEMU itself); A
 *    and B are pinned to different CPUs. Goal: at most 2x the floor.
 * 2. Device-to-device copy bandwidth (a COPY job from device 0 memory into
 *    device 1 memory through a peer import), against memcpy of the same
 *    size. Goal: at least 0.8x.
 *
 * Every ratio compares figures measured in the same run: the median of the
 * per-batch (or per-round) ratios, printed with their spread; the verdict
 * (bench_goal) comes from the median.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "npuipc_test_util.h"

#define BATCHES 6
#define BATCH_ROUNDS 50
#define ROUNDS (BATCHES * BATCH_ROUNDS)
#define MIB (1024ULL * 1024ULL)
#define COPY_SIZE (64 * MIB)
#define COPY_ROUNDS 9
#define FOREVER (-1LL)

static void check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "npuipc_sync_bench: %s: %s\n", what, strerror(ret < 0 ? -ret : ret));
		exit(1);
	}
}

static struct drm_npuipc_job job(uint32_t kind, uint32_t object)
{
	return (struct drm_npuipc_job){ .kind = kind, .object = object };
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Untimed handshake between the two processes. */
static void sync_peer(int sock)
{
	char c = 's';

	if (write(sock, &c, 1) != 1 || read(sock, &c, 1) != 1)
		exit(1);
}

/* What one side of the ping-pongs owns and imported. */
struct side {
	int sock;
	int initiator;
	int efd_out, efd_in;	/* eventfds: to the peer, from the peer */
	int fd;			/* npuipc device */
	uint32_t my_notify, peer_notify, my_event, peer_event;
	uint32_t waits, records, gate, gated, opener;
};

/* Per batch: each round trip timed by the initiator, halved. */
static void eventfd_batch(struct side *s, double *samples)
{
	uint64_t v = 1;
	int i;

	sync_peer(s->sock);
	for (i = 0; i < BATCH_ROUNDS; i++) {
		double t0 = bench_now_us();

		if (s->initiator && write(s->efd_out, &v, 8) != 8)
			exit(1);
		if (read(s->efd_in, &v, 8) != 8)
			exit(1);
		if (!s->initiator && write(s->efd_out, &v, 8) != 8)
			exit(1);
		if (samples)
			samples[i] = (bench_now_us() - t0) / 2;
	}
}

/*
 * Each round, both sides queue a wait on their notify; then the initiator
 * records the other's, and the other records back once its wait returns.
 */
static void notify_batch(struct side *s, double *samples)
{
	int i;

	for (i = 0; i < BATCH_ROUNDS; i++) {
		double t0;

		check(npuipc_submit1(s->fd, s->waits, job(NPUIPC_JOB_WAIT_NOTIFY, s->my_notify)),
		      "submit wait");
		sync_peer(s->sock);	/* both waits are queued */
		t0 = bench_now_us();
		if (s->initiator)
			check(npuipc_submit1(s->fd, s->records,
					     job(NPUIPC_JOB_RECORD_NOTIFY, s->peer_notify)), "record");
		check(npuipc_wait(s->fd, s->waits, FOREVER, 0, NULL), "wait");
		if (!s->initiator)
			check(npuipc_submit1(s->fd, s->records,
					     job(NPUIPC_JOB_RECORD_NOTIFY, s->peer_notify)), "record");
		if (samples)
			samples[i] = (bench_now_us() - t0) / 2;
	}
}

/*
 * Each round, both sides queue a record of their event behind a gate, and
 * a wait for the other's event; then the initiator opens its gate, and the
 * other opens its own once its wait returns.
 */
static void event_batch(struct side *s, double *samples)
{
	struct drm_npuipc_job armed[2] = {
		job(NPUIPC_JOB_WAIT_NOTIFY, s->gate),
		job(NPUIPC_JOB_RECORD_EVENT, s->my_event),
	};
	int i;

	for (i = 0; i < BATCH_ROUNDS; i++) {
		double t0;

		check(npuipc_submit(s->fd, s->gated, armed, 2, NULL), "arm record");
		sync_peer(s->sock);	/* both records are queued */
		check(npuipc_submit1(s->fd, s->waits, job(NPUIPC_JOB_WAIT_EVENT, s->peer_event)),
		      "submit wait");
		sync_peer(s->sock);	/* both waits are queued */
		t0 = bench_now_us();
		if (s->initiator)
			check(npuipc_submit1(s->fd, s->opener, job(NPUIPC_JOB_RECORD_NOTIFY, s->gate)),
			      "open");
		check(npuipc_wait(s->fd, s->waits, FOREVER, 0, NULL), "wait");
		if (!s->initiator)
			check(npuipc_submit1(s->fd, s->opener, job(NPUIPC_JOB_RECORD_NOTIFY, s->gate)),
			      "open");
		if (samples)
			samples[i] = (bench_now_us() - t0) / 2;
		check(npuipc_wait(s->fd, s->gated, FOREVER, 0, NULL), "drain");
	}
}

/* Creates this side's objects and swaps notify and event fds with the peer. */
static void side_setup(struct side *s, int device)
{
	int out, in;

	s->fd = npuipc_open_device(device);
	if (s->fd < 0)
		s->fd = npuipc_open_device(0);
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_NOTIFY, &s->my_notify), "notify");
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_EVENT, &s->my_event), "event");
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_NOTIFY, &s->gate), "notify");
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_STREAM, &s->waits), "stream");
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_STREAM, &s->records), "stream");
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_STREAM, &s->gated), "stream");
	check(npuipc_obj_create(s->fd, NPUIPC_OBJ_STREAM, &s->opener), "stream");
	check(npuipc_obj_export(s->fd, s->my_notify, 0, &out), "export");
	check(npuipc_send_fd(s->sock, out), "send");
	close(out);
	check(npuipc_obj_export(s->fd, s->my_event, 0, &out), "export");
	check(npuipc_send_fd(s->sock, out), "send");
	close(out);
	in = npuipc_recv_fd(s->sock);
	check(npuipc_obj_import(s->fd, in, &s->peer_notify), "import");
	close(in);
	in = npuipc_recv_fd(s->sock);
	check(npuipc_obj_import(s->fd, in, &s->peer_event), "import");
	close(in);
}

/* Runs the batches on one side; the initiator collects the samples. */
static void side_run(struct side *s, double *floor, double *notify, double *event)
{
	int b, off;

	for (b = 0; b < BATCHES; b++) {
		off = b * BATCH_ROUNDS;
		eventfd_batch(s, floor ? floor + off : NULL);
		notify_batch(s, notify ? notify + off : NULL);
		event_batch(s, event ? event + off : NULL);
	}
}

/* The three ping-pongs between this process (A) and a child (B). */
/* Per-round one-way hops of the three ping-pongs, batch after batch. */
static double floor_rounds[ROUNDS], notify_rounds[ROUNDS], event_rounds[ROUNDS];

/* The three ping-pongs between this process (A) and a child (B). */
static void one_way_us(void)
{
	int ab = eventfd(0, EFD_CLOEXEC), ba = eventfd(0, EFD_CLOEXEC), sv[2], status;
	struct side s = { 0 };
	pid_t child;

	if (ab < 0 || ba < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		check(errno, "eventfd/socketpair");
	child = fork();
	if (child == 0) {
		pin_to_cpu(1);
		s = (struct side){ .sock = sv[1], .efd_out = ba, .efd_in = ab };
		side_setup(&s, 1);
		side_run(&s, NULL, NULL, NULL);
		_exit(0);
	}
	pin_to_cpu(0);
	s = (struct side){ .sock = sv[0], .initiator = 1, .efd_out = ab, .efd_in = ba };
	side_setup(&s, 0);
	side_run(&s, floor_rounds, notify_rounds, event_rounds);
	close(s.fd);
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		exit(1);
}

/* Prints a latency's median, the floor's, their batch ratio with its spread, and its verdict. */
static void report_hop(const char *what, double *subject, double goal)
{
	double lo, hi, ratio = bench_batch_ratio(subject, floor_rounds, BATCHES, BATCH_ROUNDS, &lo, &hi);
	double subject_us = bench_median(subject, ROUNDS), floor_us = bench_median(floor_rounds, ROUNDS);

	printf("%s: %.1f us; eventfd floor %.1f us; ratio %.2f (spread %.2f-%.2f)\n",
	       what, subject_us, floor_us, ratio, lo, hi);
	bench_goal(what, ratio, "<=", goal);
}

static void copy_bandwidth(double *device_mibs, double *memcpy_mibs, double *ratio, double *lo,
			   double *hi)
{
	int fd0 = npuipc_open_device(0), fd1 = npuipc_open_device(1), dmabuf, i;
	double dev[COPY_ROUNDS], host[COPY_ROUNDS];
	uint32_t src, dst, imported, stream;
	struct drm_npuipc_job copy = { .kind = NPUIPC_JOB_COPY, .size = COPY_SIZE };
	uint8_t *a, *b;

	if (fd1 < 0)
		fd1 = fd0;
	check(npuipc_bo_create(fd0, COPY_SIZE, NPUIPC_PAGE_CLASS_HUGE, &src), "bo");
	check(npuipc_bo_create(fd1, COPY_SIZE, NPUIPC_PAGE_CLASS_HUGE, &dst), "bo");
	check(npuipc_bo_export(fd0, src, 0, COPY_SIZE, NPUIPC_BO_EXPORT_READ_ONLY, &dmabuf), "export");
	check(npuipc_bo_import(fd1, dmabuf, fd1 == fd0 ? 0 : NPUIPC_BO_IMPORT_PEER_ACCESS, &imported), "import");
	check(npuipc_obj_create(fd1, NPUIPC_OBJ_STREAM, &stream), "stream");
	copy.dst = dst;
	copy.src = imported;
	check(npuipc_submit1(fd1, stream, copy), "warm-up copy");
	check(npuipc_wait(fd1, stream, FOREVER, 0, NULL), "wait");
	a = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		exit(1);
	memset(a, 1, COPY_SIZE);
	memcpy(b, a, COPY_SIZE);
	/* Interleaved: each round times a device copy, then a memcpy. */
	for (i = 0; i < COPY_ROUNDS; i++) {
		double t0 = bench_now_us();

		check(npuipc_submit1(fd1, stream, copy), "copy");
		check(npuipc_wait(fd1, stream, FOREVER, 0, NULL), "wait");
		dev[i] = (COPY_SIZE / (double)MIB) / ((bench_now_us() - t0) / 1e6);
		t0 = bench_now_us();
		memcpy(b, a, COPY_SIZE);
		host[i] = (COPY_SIZE / (double)MIB) / ((bench_now_us() - t0) / 1e6);
	}
	*ratio = bench_batch_ratio(dev, host, COPY_ROUNDS, 1, lo, hi);
	*device_mibs = bench_median(dev, COPY_ROUNDS);
	*memcpy_mibs = bench_median(host, COPY_ROUNDS);
	munmap(a, COPY_SIZE);
	munmap(b, COPY_SIZE);
	close(dmabuf);
	if (fd1 != fd0)
		close(fd1);
	close(fd0);
}

int main(void)
{
	double dev_mibs, host_mibs, ratio, lo, hi;
	int fd = npuipc_open_device(0);

	if (fd < 0) {
		fprintf(stderr, "npuipc_sync_bench: no npuipc device (run it in tools/vm-run)\n");
		return 1;
	}
	close(fd);
	one_way_us();
	copy_bandwidth(&dev_mibs, &host_mibs, &ratio, &lo, &hi);

	printf("medians of %d interleaved batches of %d rounds; ratios: the median of the per-batch ratios\n",
	       BATCHES, BATCH_ROUNDS);
	report_hop("notify record in A -> wait returns in B", notify_rounds, 2.0);
	report_hop("event record in A -> wait returns in B", event_rounds, 2.0);
	printf("device-to-device copy of 64 MiB: %.0f MiB/s; memcpy %.0f MiB/s; ratio %.2f (spread %.2f-%.2f over %d interleaved rounds)\n",
	       dev_mibs, host_mibs, ratio, lo, hi, COPY_ROUNDS);
	bench_goal("device-to-device copy of 64 MiB vs memcpy", ratio, ">=", 0.8);
	return 0;
}
