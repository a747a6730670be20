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
 *    Goal: at most 2x the floor.
 * 2. Device-to-device copy bandwidth (a COPY job from device 0 memory into
 *    device 1 memory through a peer import), against memcpy of the same
 *    size. Goal: at least 0.8x.
 *
 * Every ratio compares figures measured in the same run; figures are medians.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "npuipc_test_util.h"

#define ROUNDS 300
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

/* Untimed handshake between the two processes. */
static void sync_peer(int sock)
{
	char c = 's';

	if (write(sock, &c, 1) != 1 || read(sock, &c, 1) != 1)
		exit(1);
}

static double eventfd_one_way_us(void)
{
	int ab = eventfd(0, EFD_CLOEXEC), ba = eventfd(0, EFD_CLOEXEC);
	double samples[ROUNDS];
	uint64_t v = 1;
	pid_t child;
	int i;

	child = fork();
	if (child == 0) {
		for (i = 0; i < ROUNDS; i++) {
			if (read(ab, &v, 8) != 8 || write(ba, &v, 8) != 8)
				_exit(1);
		}
		_exit(0);
	}
	for (i = 0; i < ROUNDS; i++) {
		double t0 = bench_now_us();

		if (write(ab, &v, 8) != 8 || read(ba, &v, 8) != 8)
			exit(1);
		samples[i] = (bench_now_us() - t0) / 2;
	}
	waitpid(child, NULL, 0);
	close(ab);
	close(ba);
	return bench_median(samples, ROUNDS);
}

/*
 * One side of the notify ping-pong: owns @mine, records @theirs (imported).
 * The initiator times each round trip.
 */
static void notify_side(int fd, uint32_t mine, uint32_t theirs, int initiator,
			double *samples)
{
	uint32_t waits, records;
	int i;

	check(npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &waits), "stream");
	check(npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &records), "stream");
	for (i = 0; i < ROUNDS; i++) {
		double t0 = bench_now_us();

		check(npuipc_submit1(fd, waits, job(NPUIPC_JOB_WAIT_NOTIFY, mine)), "submit wait");
		if (initiator)
			check(npuipc_submit1(fd, records, job(NPUIPC_JOB_RECORD_NOTIFY, theirs)), "record");
		check(npuipc_wait(fd, waits, FOREVER, 0, NULL), "wait");
		if (!initiator)
			check(npuipc_submit1(fd, records, job(NPUIPC_JOB_RECORD_NOTIFY, theirs)), "record");
		if (samples)
			samples[i] = (bench_now_us() - t0) / 2;
	}
}

/*
 * One side of the event ping-pong. Each round, both sides queue a record of
 * their event behind a gate, and a wait for the other's event; then the
 * initiator opens its gate, and the other opens its own once its wait
 * returns.
 */
static void event_side(int fd, int sock, uint32_t mine, uint32_t theirs, int initiator,
		       double *samples)
{
	uint32_t gate, gated, waits, opener;
	struct drm_npuipc_job armed[2];
	int i;

	check(npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &gate), "notify");
	check(npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &gated), "stream");
	check(npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &waits), "stream");
	check(npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &opener), "stream");
	armed[0] = job(NPUIPC_JOB_WAIT_NOTIFY, gate);
	armed[1] = job(NPUIPC_JOB_RECORD_EVENT, mine);
	for (i = 0; i < ROUNDS; i++) {
		double t0;

		check(npuipc_submit(fd, gated, armed, 2, NULL), "arm record");
		sync_peer(sock);	/* both records are queued */
		check(npuipc_submit1(fd, waits, job(NPUIPC_JOB_WAIT_EVENT, theirs)), "submit wait");
		sync_peer(sock);	/* both waits are queued */
		t0 = bench_now_us();
		if (initiator)
			check(npuipc_submit1(fd, opener, job(NPUIPC_JOB_RECORD_NOTIFY, gate)), "open");
		check(npuipc_wait(fd, waits, FOREVER, 0, NULL), "wait");
		if (!initiator)
			check(npuipc_submit1(fd, opener, job(NPUIPC_JOB_RECORD_NOTIFY, gate)), "open");
		if (samples)
			samples[i] = (bench_now_us() - t0) / 2;
		check(npuipc_wait(fd, gated, FOREVER, 0, NULL), "drain");
	}
}

/* Runs the notify and event ping-pongs between this process and a child. */
static void npuipc_one_way_us(double *notify_us, double *event_us)
{
	double samples[ROUNDS];
	int sv[2], status, in;
	uint32_t my_notify, my_event, peer_notify, peer_event;
	pid_t child;

	check(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) ? errno : 0, "socketpair");
	child = fork();
	if (child == 0) {
		int fd = npuipc_open_device(1), out;

		if (fd < 0)
			fd = npuipc_open_device(0);
		check(npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &my_notify), "notify");
		check(npuipc_obj_create(fd, NPUIPC_OBJ_EVENT, &my_event), "event");
		check(npuipc_obj_export(fd, my_notify, 0, &out), "export");
		check(npuipc_send_fd(sv[1], out), "send");
		check(npuipc_obj_export(fd, my_event, 0, &out), "export");
		check(npuipc_send_fd(sv[1], out), "send");
		in = npuipc_recv_fd(sv[1]);
		check(npuipc_obj_import(fd, in, &peer_notify), "import");
		in = npuipc_recv_fd(sv[1]);
		check(npuipc_obj_import(fd, in, &peer_event), "import");
		notify_side(fd, my_notify, peer_notify, 0, NULL);
		event_side(fd, sv[1], my_event, peer_event, 0, NULL);
		_exit(0);
	}
	{
		int fd = npuipc_open_device(0), out;

		check(npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &my_notify), "notify");
		check(npuipc_obj_create(fd, NPUIPC_OBJ_EVENT, &my_event), "event");
		in = npuipc_recv_fd(sv[0]);
		check(npuipc_obj_import(fd, in, &peer_notify), "import");
		in = npuipc_recv_fd(sv[0]);
		check(npuipc_obj_import(fd, in, &peer_event), "import");
		check(npuipc_obj_export(fd, my_notify, 0, &out), "export");
		check(npuipc_send_fd(sv[0], out), "send");
		check(npuipc_obj_export(fd, my_event, 0, &out), "export");
		check(npuipc_send_fd(sv[0], out), "send");
		notify_side(fd, my_notify, peer_notify, 1, samples);
		*notify_us = bench_median(samples, ROUNDS);
		event_side(fd, sv[0], my_event, peer_event, 1, samples);
		*event_us = bench_median(samples, ROUNDS);
		close(fd);
	}
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		exit(1);
}

static void copy_bandwidth(double *device_mibs, double *memcpy_mibs)
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
	for (i = 0; i < COPY_ROUNDS; i++) {
		double t0 = bench_now_us();

		check(npuipc_submit1(fd1, stream, copy), "copy");
		check(npuipc_wait(fd1, stream, FOREVER, 0, NULL), "wait");
		dev[i] = (COPY_SIZE / (double)MIB) / ((bench_now_us() - t0) / 1e6);
	}

	a = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		exit(1);
	memset(a, 1, COPY_SIZE);
	memcpy(b, a, COPY_SIZE);
	for (i = 0; i < COPY_ROUNDS; i++) {
		double t0 = bench_now_us();

		memcpy(b, a, COPY_SIZE);
		host[i] = (COPY_SIZE / (double)MIB) / ((bench_now_us() - t0) / 1e6);
	}
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
	double floor_us, notify_us, event_us, dev_mibs, host_mibs;
	int fd = npuipc_open_device(0);

	if (fd < 0) {
		fprintf(stderr, "npuipc_sync_bench: no npuipc device (run it in tools/vm-run)\n");
		return 1;
	}
	close(fd);
	floor_us = eventfd_one_way_us();
	npuipc_one_way_us(&notify_us, &event_us);
	copy_bandwidth(&dev_mibs, &host_mibs);

	printf("notify record in A -> wait returns in B: %.1f us; eventfd floor %.1f us; ratio %.2f (goal <= 2.00: %s)\n",
	       notify_us, floor_us, notify_us / floor_us, notify_us / floor_us <= 2.0 ? "met" : "MISSED");
	printf("event record in A -> wait returns in B: %.1f us; eventfd floor %.1f us; ratio %.2f (goal <= 2.00: %s)\n",
	       event_us, floor_us, event_us / floor_us, event_us / floor_us <= 2.0 ? "met" : "MISSED");
	printf("device-to-device copy of 64 MiB: %.0f MiB/s; memcpy %.0f MiB/s; ratio %.2f (goal >= 0.80: %s)\n",
	       dev_mibs, host_mibs, dev_mibs / host_mibs, dev_mibs / host_mibs >= 0.8 ? "met" : "MISSED");
	return 0;
}
