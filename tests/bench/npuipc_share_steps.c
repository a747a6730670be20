// SPDX-License-Identifier: GPL-2.0
/*
 * Where a share of 2 MiB spends its time, step by step, run in the guest:
 * tools/vm-run -- npuipc_share_steps [normal|huge]
 *
 * One process plays both sides of npuipc_mem_bench's round (export on
 * device 0; import into device 1, or device 0 when it is alone; BO_INFO,
 * mmap, first touch, the other reads, munmap, GEM_CLOSE, close of the
 * export's fd) and prints each step's median over 200 rounds; then the
 * steps of the floor, a memfd of the same page size (mmap, first touch,
 * the other reads, munmap), its hugetlb page reserved here
 * (vm.nr_hugepages + 1, restored after). Not a test and no goal: the
 * figures say where npuipc_mem_bench's ratios come from. It fails when it
 * cannot reserve that page, rather than print half the comparison.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

#include "bench_util.h"
#include "npuipc_test_util.h"

#define SIZE (2u << 20)
#define ROUNDS 200

enum { EXPORT, IMPORT, INFO, MMAP, TOUCH, READS, MUNMAP, GEM_CLOSE, CLOSE, NSTEPS };

static const char *const step_names[NSTEPS] = {
	"BO_EXPORT", "BO_IMPORT", "BO_INFO", "mmap", "first touch",
	"other reads", "munmap", "GEM_CLOSE", "close export fd",
};

static double samples[NSTEPS][ROUNDS];

static void die(const char *what, int err)
{
	fprintf(stderr, "npuipc_share_steps: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* Times the steps of a mapping of @fd at @offset: mmap to munmap. */
static void map_touch_unmap(int fd, off_t offset, int round)
{
	volatile uint8_t *p;
	unsigned int sum = 0;
	double t = bench_now_us(), now;
	size_t i;

	p = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, offset);
	if (p == MAP_FAILED)
		die("mmap", errno);
	now = bench_now_us();
	samples[MMAP][round] = now - t;
	t = now;
	sum += p[0];
	now = bench_now_us();
	samples[TOUCH][round] = now - t;
	t = now;
	for (i = 4096; i < SIZE; i += 4096)
		sum += p[i];
	now = bench_now_us();
	samples[READS][round] = now - t;
	t = now;
	munmap((void *)p, SIZE);
	samples[MUNMAP][round] = bench_now_us() - t;
	(void)sum;
}

static void print_steps(const char *title, const int *steps, int n)
{
	double total = 0, m;
	int i;

	printf("%s\n", title);
	for (i = 0; i < n; i++) {
		m = bench_median(samples[steps[i]], ROUNDS);
		total += m;
		printf("  %-16s %8.1f us\n", step_names[steps[i]], m);
	}
	printf("  %-16s %8.1f us\n", "all", total);
}

static void npuipc_steps(uint32_t page_class)
{
	static const int steps[] = { EXPORT, IMPORT, INFO, MMAP, TOUCH, READS, MUNMAP,
				     GEM_CLOSE, CLOSE };
	int dev = npuipc_open_device(0), peer = npuipc_open_device(1), flags = 0;
	uint32_t handle, imported;
	struct drm_npuipc_bo_info info;
	int round, fd, ret;
	double t, now;

	if (dev < 0)
		die("no npuipc device", ENODEV);
	if (peer < 0)
		peer = dev;
	else
		flags = NPUIPC_BO_IMPORT_PEER_ACCESS;
	ret = npuipc_bo_create(dev, SIZE, page_class, &handle);
	if (ret)
		die("BO_CREATE", ret);
	for (round = 0; round < ROUNDS; round++) {
		t = bench_now_us();
		ret = npuipc_bo_export(dev, handle, 0, SIZE, 0, &fd);
		if (ret)
			die("BO_EXPORT", ret);
		now = bench_now_us();
		samples[EXPORT][round] = now - t;
		t = now;
		ret = npuipc_bo_import(peer, fd, flags, &imported);
		if (ret)
			die("BO_IMPORT", ret);
		now = bench_now_us();
		samples[IMPORT][round] = now - t;
		t = now;
		ret = npuipc_bo_info(peer, imported, &info);
		if (ret)
			die("BO_INFO", ret);
		samples[INFO][round] = bench_now_us() - t;
		map_touch_unmap(peer, info.mmap_offset, round);
		t = bench_now_us();
		npuipc_gem_close(peer, imported);
		now = bench_now_us();
		samples[GEM_CLOSE][round] = now - t;
		t = now;
		close(fd);
		samples[CLOSE][round] = bench_now_us() - t;
	}
	print_steps(page_class == NPUIPC_PAGE_CLASS_HUGE ? "HUGE class, per share:" :
							   "NORMAL class, per share:",
		    steps, NSTEPS);
	npuipc_gem_close(dev, handle);
	if (peer != dev)
		close(peer);
	close(dev);
}

static void memfd_steps(int huge)
{
	static const int steps[] = { MMAP, TOUCH, READS, MUNMAP };
	long hugepages = huge ? bench_read_nr_hugepages() : 0;
	int fd, round;

	if (huge && (hugepages < 0 || bench_write_nr_hugepages(hugepages + 1) ||
		     bench_read_nr_hugepages() != hugepages + 1)) {
		/* The pool may not grow (no free 2 MiB of RAM): no floor. */
		if (hugepages >= 0)
			bench_write_nr_hugepages(hugepages);
		fprintf(stderr, "npuipc_share_steps: hugetlb memfd: no floor: "
			"could not reserve a 2 MiB hugetlb page (%s)\n", BENCH_NR_HUGEPAGES);
		exit(1);
	}
	fd = memfd_create("floor", MFD_CLOEXEC | (huge ? MFD_HUGETLB : 0));
	if (fd < 0 || ftruncate(fd, SIZE))
		die("memfd", errno);
	for (round = 0; round < ROUNDS; round++)
		map_touch_unmap(fd, 0, round);
	close(fd);
	if (huge)
		bench_write_nr_hugepages(hugepages);
	print_steps(huge ? "hugetlb memfd (2 MiB pages), per share:" :
			   "memfd (4 KiB pages), per share:",
		    steps, 4);
}

int main(int argc, char **argv)
{
	int huge = argc < 2 || strcmp(argv[1], "normal");

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "normal") && strcmp(argv[1], "huge"))) {
		fprintf(stderr, "usage: npuipc_share_steps [normal|huge]\n");
		return 2;
	}
	printf("one process, both sides of a share of 2 MiB; medians of %d rounds\n", ROUNDS);
	npuipc_steps(huge ? NPUIPC_PAGE_CLASS_HUGE : NPUIPC_PAGE_CLASS_NORMAL);
	memfd_steps(huge);
	return 0;
}
