// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory benchmark, run in the guest: tools/vm-run -- npuipc_mem_bench
 *
 * 1. Sharing latency: process A exports a 2 MiB buffer and passes the fd
 *    over a Unix socket; process B imports it into another device, maps it
 *    and reads every page once. Floor: the same with a memfd (pass, mmap,
 *    read every page). Goal: at most 2x the floor.
 * 2. CPU copy bandwidth into imported device memory against the same copy
 *    into anonymous memory. Goal: at least 0.9x.
 *
 * Both sides of each ratio are measured in the same run; figures are
 * medians. Not a test: it prints the figures and whether the goals hold.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "npuipc_test_util.h"

#define MIB (1024ULL * 1024ULL)
#define SHARE_SIZE (2 * MIB)
#define SHARE_ROUNDS 200
#define COPY_SIZE (64 * MIB)
#define COPY_ROUNDS 15

static void die(const char *what, int err)
{
	fprintf(stderr, "npuipc_mem_bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static unsigned int read_every_page(const volatile uint8_t *p, size_t size)
{
	unsigned int sum = 0;
	size_t i;

	for (i = 0; i < size; i += 4096)
		sum += p[i];
	return sum;
}

/* B's side of one round: map what arrived, read every page, drop it all. */
static void consumer(int sock, int use_npuipc)
{
	int dev = use_npuipc ? npuipc_open_device(1) : -1;
	int peer = NPUIPC_BO_IMPORT_PEER_ACCESS;
	char ack = 'a';

	if (use_npuipc && dev < 0) {
		dev = npuipc_open_device(0);	/* one device: import into it */
		peer = 0;
	}
	for (;;) {
		int fd = npuipc_recv_fd(sock);
		volatile uint8_t *p;
		uint32_t handle = 0;
		size_t size = SHARE_SIZE;

		if (fd < 0)
			_exit(0);	/* A closed the socket: done */
		if (use_npuipc) {
			int ret = npuipc_bo_import(dev, fd, peer, &handle);

			if (ret)
				die("BO_IMPORT", ret);
			p = npuipc_bo_mmap(dev, handle, PROT_READ, &size);
		} else {
			p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		}
		if (p == MAP_FAILED)
			die("mmap", errno);
		read_every_page(p, size);
		munmap((void *)p, size);
		if (use_npuipc)
			npuipc_gem_close(dev, handle);
		close(fd);
		if (write(sock, &ack, 1) != 1)
			_exit(1);
	}
}

/* Median microseconds of export(or dup) + pass + import + map + touch. */
static double share_round_trip(int use_npuipc, int dev, uint32_t handle, int memfd)
{
	double samples[SHARE_ROUNDS];
	int sv[2], i, status;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		die("socketpair", errno);
	child = fork();
	if (child == 0) {
		close(sv[0]);
		consumer(sv[1], use_npuipc);
	}
	close(sv[1]);
	for (i = 0; i < SHARE_ROUNDS; i++) {
		double t0 = bench_now_us();
		int fd, ret;
		char ack;

		if (use_npuipc) {
			ret = npuipc_bo_export(dev, handle, 0, SHARE_SIZE, 0, &fd);
			if (ret)
				die("BO_EXPORT", ret);
		} else {
			fd = memfd;
		}
		ret = npuipc_send_fd(sv[0], fd);
		if (ret)
			die("sendmsg", ret);
		if (read(sv[0], &ack, 1) != 1)
			die("read ack", errno);
		if (use_npuipc)
			close(fd);
		samples[i] = bench_now_us() - t0;
	}
	close(sv[0]);
	waitpid(child, &status, 0);
	return bench_median(samples, SHARE_ROUNDS);
}

/* Median MiB/s of memcpy of COPY_SIZE bytes from src into dst. */
static double copy_bandwidth(uint8_t *dst, const uint8_t *src)
{
	double samples[COPY_ROUNDS];
	int i;

	memcpy(dst, src, COPY_SIZE);	/* warm up: fault everything in */
	for (i = 0; i < COPY_ROUNDS; i++) {
		double t0 = bench_now_us();

		memcpy(dst, src, COPY_SIZE);
		samples[i] = (COPY_SIZE / (double)MIB) / ((bench_now_us() - t0) / 1e6);
	}
	return bench_median(samples, COPY_ROUNDS);
}

int main(void)
{
	int dev = npuipc_open_device(0), peer = npuipc_open_device(1);
	double npuipc_us, memfd_us, dev_bw, anon_bw;
	uint32_t share_bo, copy_bo, imported;
	uint8_t *src, *anon, *devmem, *p;
	int memfd, dmabuf, ret;
	size_t size;

	if (dev < 0) {
		fprintf(stderr, "npuipc_mem_bench: no npuipc device (run it in tools/vm-run)\n");
		return 1;
	}
	if (peer < 0)
		peer = dev;

	/* 1. sharing latency */
	ret = npuipc_bo_create(dev, SHARE_SIZE, NPUIPC_PAGE_CLASS_HUGE, &share_bo);
	if (ret)
		die("BO_CREATE", ret);
	p = npuipc_bo_mmap(dev, share_bo, PROT_READ | PROT_WRITE, &size);
	if (p == MAP_FAILED)
		die("mmap", errno);
	memset(p, 1, size);
	munmap(p, size);
	memfd = memfd_create("floor", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, SHARE_SIZE))
		die("memfd", errno);
	p = mmap(NULL, SHARE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED)
		die("mmap memfd", errno);
	memset(p, 1, SHARE_SIZE);	/* both sides share memory that exists */
	munmap(p, SHARE_SIZE);

	memfd_us = share_round_trip(0, dev, 0, memfd);
	npuipc_us = share_round_trip(1, dev, share_bo, memfd);
	close(memfd);
	npuipc_gem_close(dev, share_bo);

	/* 2. copy bandwidth into imported device memory */
	src = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	anon = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || anon == MAP_FAILED)
		die("mmap anonymous", errno);
	memset(src, 3, COPY_SIZE);
	ret = npuipc_bo_create(dev, COPY_SIZE, NPUIPC_PAGE_CLASS_HUGE, &copy_bo);
	if (!ret)
		ret = npuipc_bo_export(dev, copy_bo, 0, COPY_SIZE, 0, &dmabuf);
	if (!ret)
		ret = npuipc_bo_import(peer, dmabuf, peer == dev ? 0 : NPUIPC_BO_IMPORT_PEER_ACCESS, &imported);
	if (ret)
		die("device memory for the copy", ret);
	devmem = npuipc_bo_mmap(peer, imported, PROT_READ | PROT_WRITE, &size);
	if (devmem == MAP_FAILED)
		die("mmap import", errno);

	anon_bw = copy_bandwidth(anon, src);
	dev_bw = copy_bandwidth(devmem, src);

	printf("share 2 MiB (export, pass, import, mmap, touch): %.1f us; memfd floor %.1f us; ratio %.2f (goal <= 2.00: %s)\n",
	       npuipc_us, memfd_us, npuipc_us / memfd_us,
	       npuipc_us / memfd_us <= 2.0 ? "met" : "MISSED");
	printf("copy into imported device memory: %.0f MiB/s; anonymous memory %.0f MiB/s; ratio %.2f (goal >= 0.90: %s)\n",
	       dev_bw, anon_bw, dev_bw / anon_bw, dev_bw / anon_bw >= 0.9 ? "met" : "MISSED");

	munmap(devmem, size);
	npuipc_gem_close(peer, imported);
	close(dmabuf);
	npuipc_gem_close(dev, copy_bo);
	munmap(src, COPY_SIZE);
	munmap(anon, COPY_SIZE);
	close(peer == dev ? -1 : peer);
	close(dev);
	return 0;
}
