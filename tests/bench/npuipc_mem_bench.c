// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory benchmark, run in the guest: tools/vm-run -- npuipc_mem_bench
 *
 * 1. Sharing latency, like for like: process A exports 2 MiB and passes the
 *    fd over a Unix socket; process B imports it into another device, maps
 *    it and reads every page once. Two pairs, each against a memfd of the
 *    same page size (pass, mmap, read every page):
 *      NORMAL class (4 KiB pages) against a memfd,            goal <= 1.2x;
 *      HUGE class (2 MiB chunks) against a MFD_HUGETLB memfd, goal <= 1.5x,
 *      with the 2 MiB page reserved here (vm.nr_hugepages, restored after).
 *    Batches of the four interleave; each ratio is the median of the
 *    per-batch ratios (of per-round medians), with its spread.
 * 2. CPU copy bandwidth into imported device memory against the same copy
 *    into anonymous memory. Goal: at least 0.9x.
 *
 * Not a test: it prints the figures and judges each goal (bench_goal), a
 * miss being reported, not failed. It fails when it cannot reserve the
 * hugetlb floor's page: a goal without its floor cannot be judged.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "npuipc_test_util.h"

#define MIB (1024ULL * 1024ULL)
#define SHARE_SIZE (2 * MIB)
#define SHARE_BATCHES 7
#define SHARE_ROUNDS 30
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

/* Median microseconds of export (npuipc) + pass + import + map + touch. */
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

/*
 * COPY_SIZE bytes of anonymous memory, 2 MiB-aligned, in transparent huge
 * pages when @huge and in 4 KiB pages otherwise.
 */
static uint8_t *anonymous_floor(int huge)
{
	uint8_t *room = mmap(NULL, COPY_SIZE + 2 * MIB, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *at;

	if (room == MAP_FAILED)
		die("mmap anonymous", errno);
	at = (uint8_t *)(((uintptr_t)room + 2 * MIB - 1) / (2 * MIB) * (2 * MIB));
	if (madvise(at, COPY_SIZE, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		die("madvise", errno);
	return at;
}

/* A 2 MiB buffer of @page_class, written once, as the exporter holds it. */
static uint32_t filled_buffer(int dev, uint32_t page_class)
{
	uint32_t handle;
	size_t size;
	void *p;
	int ret = npuipc_bo_create(dev, SHARE_SIZE, page_class, &handle);

	if (ret)
		die("BO_CREATE", ret);
	p = npuipc_bo_mmap(dev, handle, PROT_READ | PROT_WRITE, &size);
	if (p == MAP_FAILED)
		die("mmap", errno);
	memset(p, 1, size);
	munmap(p, size);
	return handle;
}

/* A 2 MiB memfd (of huge pages with MFD_HUGETLB), written once; -1 if refused. */
static int filled_memfd(unsigned int flags)
{
	int fd = memfd_create("floor", MFD_CLOEXEC | flags);
	void *p;

	if (fd < 0 || ftruncate(fd, SHARE_SIZE))
		goto fail;
	p = mmap(NULL, SHARE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	memset(p, 1, SHARE_SIZE);	/* both sides share memory that exists */
	munmap(p, SHARE_SIZE);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Prints the median of the per-batch ratios @subject/@floor, their spread, and its verdict. */
static void report_ratio(const char *what, double *subject, double *floor, double goal)
{
	double ratios[SHARE_BATCHES], lo = 1e30, hi = 0, ratio;
	int b;

	for (b = 0; b < SHARE_BATCHES; b++) {
		ratios[b] = subject[b] / floor[b];
		lo = ratios[b] < lo ? ratios[b] : lo;
		hi = ratios[b] > hi ? ratios[b] : hi;
	}
	ratio = bench_median(ratios, SHARE_BATCHES);
	printf("  %s: %.1f us; floor %.1f us; ratio %.2f (spread %.2f-%.2f)\n",
	       what, bench_median(subject, SHARE_BATCHES), bench_median(floor, SHARE_BATCHES),
	       ratio, lo, hi);
	bench_goal(what, ratio, "<=", goal);
}

/*
 * The two like-for-like pairs, interleaved batch by batch: NORMAL against a
 * 4 KiB-page memfd, HUGE against a hugetlb memfd. -1 if the hugetlb floor
 * could not be measured.
 */
static int sharing(int dev)
{
	double normal[SHARE_BATCHES], memfd_4k[SHARE_BATCHES];
	double huge[SHARE_BATCHES], memfd_2m[SHARE_BATCHES];
	uint32_t normal_bo = filled_buffer(dev, NPUIPC_PAGE_CLASS_NORMAL);
	uint32_t huge_bo = filled_buffer(dev, NPUIPC_PAGE_CLASS_HUGE);
	long hugepages = bench_read_nr_hugepages();
	int fd_4k = filled_memfd(0), fd_2m = -1, b, ret;

	if (fd_4k < 0)
		die("memfd", errno);
	/* One more 2 MiB page than the system had, given back at the end. */
	if (hugepages >= 0 && bench_write_nr_hugepages(hugepages + 1) == 0)
		fd_2m = filled_memfd(MFD_HUGETLB);
	for (b = 0; b < SHARE_BATCHES; b++) {
		normal[b] = share_round_trip(1, dev, normal_bo, -1);
		memfd_4k[b] = share_round_trip(0, dev, 0, fd_4k);
		huge[b] = share_round_trip(1, dev, huge_bo, -1);
		if (fd_2m >= 0)
			memfd_2m[b] = share_round_trip(0, dev, 0, fd_2m);
	}
	printf("sharing 2 MiB (export, pass, import into the peer device, mmap, read every page),\n"
	       "medians of %d interleaved batches of %d rounds:\n", SHARE_BATCHES, SHARE_ROUNDS);
	report_ratio("NORMAL class vs 4 KiB-page memfd", normal, memfd_4k, 1.2);
	if (fd_2m >= 0)
		report_ratio("HUGE class vs hugetlb memfd (2 MiB pages)", huge, memfd_2m, 1.5);
	else
		fprintf(stderr, "npuipc_mem_bench: HUGE class vs hugetlb memfd: no floor: "
			"could not reserve a 2 MiB hugetlb page (%s)\n", BENCH_NR_HUGEPAGES);
	ret = fd_2m >= 0 ? 0 : -1;
	close(fd_4k);
	if (fd_2m >= 0)
		close(fd_2m);
	if (hugepages >= 0)
		bench_write_nr_hugepages(hugepages);
	npuipc_gem_close(dev, normal_bo);
	npuipc_gem_close(dev, huge_bo);
	return ret;
}

int main(void)
{
	int dev = npuipc_open_device(0), peer = npuipc_open_device(1);
	double dev_bw, anon_bw;
	uint32_t copy_bo, imported;
	uint8_t *src, *anon, *devmem;
	int dmabuf, ret, no_floor, huge;
	long pmd_before;
	size_t size;

	if (dev < 0) {
		fprintf(stderr, "npuipc_mem_bench: no npuipc device (run it in tools/vm-run)\n");
		return 1;
	}
	if (peer < 0)
		peer = dev;

	/* 1. sharing latency */
	no_floor = sharing(dev);

	/* 2. copy bandwidth into imported device memory */
	src = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
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

	/*
	 * Like with like: the floor is anonymous memory mapped in the pages
	 * the device memory got, 2 MiB where the kernel maps huge PFN maps
	 * (6.12; debugfs pmd_maps grows as the copy faults it in), else 4 KiB.
	 */
	pmd_before = npuipc_debugfs_value(peer, "pmd_maps");
	dev_bw = copy_bandwidth(devmem, src);
	huge = npuipc_debugfs_value(peer, "pmd_maps") > pmd_before;
	anon = anonymous_floor(huge);
	anon_bw = copy_bandwidth(anon, src);

	printf("copy into imported device memory: %.0f MiB/s; anonymous memory %.0f MiB/s; ratio %.2f "
	       "(both in %s pages; the floor's AnonHugePages: %ld KiB)\n",
	       dev_bw, anon_bw, dev_bw / anon_bw, huge ? "2 MiB" : "4 KiB",
	       npuipc_smaps_kib(anon, "AnonHugePages"));
	/* A floor in other pages than the measured side, even in part, is no floor. */
	if (npuipc_smaps_kib(anon, "AnonHugePages") != (huge ? (long)(COPY_SIZE >> 10) : 0)) {
		fprintf(stderr, "npuipc_mem_bench: the copy's floor is not in %s pages\n",
			huge ? "2 MiB" : "4 KiB");
		no_floor = 1;
	}
	bench_goal("copy into imported device memory vs anonymous memory", dev_bw / anon_bw, ">=", 0.9);

	munmap(devmem, size);
	npuipc_gem_close(peer, imported);
	close(dmabuf);
	npuipc_gem_close(dev, copy_bo);
	munmap(src, COPY_SIZE);
	munmap(anon, COPY_SIZE);
	close(peer == dev ? -1 : peer);
	close(dev);
	return no_floor ? 1 : 0;
}
