// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: allocation in page-size classes from a device's budget,
 * zero fill, CPU mapping through the DRM fd, BO_INFO, and every input
 * BO_CREATE and BO_INFO must refuse.
 */
#include <stdint.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)

static uint64_t mem_free(int fd)
{
	struct drm_npuipc_get_info info = { 0 };

	if (npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info))
		return 0;
	return info.mem_free;
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

FIXTURE(bo) {
	int fd;
};

FIXTURE_SETUP(bo)
{
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
}

FIXTURE_TEARDOWN(bo)
{
	if (self->fd >= 0)
		close(self->fd);
	/* Nothing a test made may outlive it. */
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

TEST_F(bo, create_charges_the_budget_and_close_returns_it)
{
	uint64_t before = mem_free(self->fd);
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 1 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	EXPECT_EQ(before - 1 * MIB, mem_free(self->fd));
	EXPECT_EQ(1 * MIB, npuipc_debugfs_value(self->fd, "mem_used"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
	ASSERT_EQ(0, npuipc_gem_close(self->fd, handle));
	EXPECT_EQ(before, mem_free(self->fd));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
}

TEST_F(bo, info_reports_size_class_and_flags)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * MIB, NPUIPC_PAGE_CLASS_HUGE, &handle));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, handle, &info));
	EXPECT_EQ(4 * MIB, info.size);
	EXPECT_EQ(NPUIPC_PAGE_CLASS_HUGE, info.page_class);
	EXPECT_EQ(0, info.bo_flags);
	EXPECT_NE(0, info.mmap_offset);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, new_buffers_are_zero_filled_even_after_reuse)
{
	const int classes[] = { NPUIPC_PAGE_CLASS_NORMAL, NPUIPC_PAGE_CLASS_HUGE };
	unsigned int c, round;

	for (c = 0; c < 2; c++) {
		for (round = 0; round < 3; round++) {
			uint32_t handle;
			size_t size;
			uint8_t *p;

			ASSERT_EQ(0, npuipc_bo_create(self->fd, 8 * MIB, classes[c], &handle));
			p = npuipc_bo_mmap(self->fd, handle, PROT_READ | PROT_WRITE, &size);
			ASSERT_NE(MAP_FAILED, p);
			EXPECT_TRUE(npuipc_all_bytes_are(p, size, 0));
			/* Dirty it for the next round's buffer, likely the same pages. */
			memset(p, 0xa5, size);
			munmap(p, size);
			ASSERT_EQ(0, npuipc_gem_close(self->fd, handle));
		}
	}
}

TEST_F(bo, full_device_returns_enomem_and_changes_nothing)
{
	uint64_t total = mem_free(self->fd);
	uint32_t handle, extra;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, total, NPUIPC_PAGE_CLASS_HUGE, &handle));
	EXPECT_EQ(0, mem_free(self->fd));
	EXPECT_EQ(-ENOMEM, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &extra));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
	ASSERT_EQ(0, npuipc_gem_close(self->fd, handle));
	EXPECT_EQ(-ENOMEM, npuipc_bo_create(self->fd, total + 2 * MIB, NPUIPC_PAGE_CLASS_HUGE, &extra));
	EXPECT_EQ(total, mem_free(self->fd));
}

/* A 1 GiB page beyond the free budget: -ENOMEM, and the budget untouched. */
TEST_F(bo, huge1g_buffer_beyond_the_budget_is_refused)
{
	uint64_t free_bytes = mem_free(self->fd);
	uint64_t beyond = (free_bytes / GIB + 1) * GIB;
	uint32_t handle = 0;

	EXPECT_EQ(-ENOMEM, npuipc_bo_create(self->fd, beyond, NPUIPC_PAGE_CLASS_HUGE1G, &handle));
	EXPECT_EQ(0, handle);
	EXPECT_EQ(free_bytes, mem_free(self->fd));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
}

TEST_F(bo, huge1g_buffer_is_allocated_where_the_budget_allows)
{
	uint64_t free_bytes = mem_free(self->fd);
	uint32_t handle;
	size_t size;
	uint8_t *p;

	if (free_bytes < 1 * GIB)
		SKIP(return, "budget below 1 GiB (step 4 of make check has one)");
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 1 * GIB, NPUIPC_PAGE_CLASS_HUGE1G, &handle));
	p = npuipc_bo_mmap(self->fd, handle, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(1 * GIB, size);
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(0, p[size - 1]);
	p[size - 1] = 1;
	munmap(p, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, mmap_through_drm_fd_reads_back_what_was_written)
{
	uint32_t handle;
	size_t size, i;
	uint32_t *p, *q;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	p = npuipc_bo_mmap(self->fd, handle, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < size / 4; i++)
		p[i] = i * 2654435761u;
	q = npuipc_bo_mmap(self->fd, handle, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, q);
	for (i = 0; i < size / 4; i++)
		ASSERT_EQ((uint32_t)(i * 2654435761u), q[i]);
	munmap(p, size);
	munmap(q, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, mapping_keeps_the_buffer_alive_after_its_handle_is_closed)
{
	uint32_t handle;
	size_t size;
	uint8_t *p;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 * MIB, NPUIPC_PAGE_CLASS_HUGE, &handle));
	p = npuipc_bo_mmap(self->fd, handle, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	p[100] = 42;
	ASSERT_EQ(0, npuipc_gem_close(self->fd, handle));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(42, p[100]);
	munmap(p, size);
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
}

/*
 * A fault maps its whole 2 MiB window: the chunk of a huge class, and the
 * pages around it in the normal class, as the page cache maps around a
 * fault (changed on purpose: normal memory used to cost a fault per page).
 */
TEST_F(bo, touching_2mib_costs_one_fault_in_every_class)
{
	uint32_t huge, normal;
	long huge_faults, normal_faults, before;
	volatile uint8_t *p;
	size_t size, i;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 * MIB, NPUIPC_PAGE_CLASS_HUGE, &huge));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &normal));

	p = npuipc_bo_mmap(self->fd, huge, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	before = minor_faults();
	for (i = 0; i < size; i += 4096)
		p[i] = 1;
	huge_faults = minor_faults() - before;
	munmap((void *)p, size);

	p = npuipc_bo_mmap(self->fd, normal, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	before = minor_faults();
	for (i = 0; i < size; i += 4096)
		p[i] = 1;
	normal_faults = minor_faults() - before;
	munmap((void *)p, size);

	TH_LOG("faults touching 2 MiB: huge %ld, normal %ld", huge_faults, normal_faults);
	EXPECT_LE(huge_faults, 2);
	EXPECT_LE(normal_faults, 2);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, huge));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, normal));
}

/*
 * A mapping of 2 MiB or more through the DRM fd is placed 2 MiB-aligned.
 * Every mapping is a PFN map, of 4 KiB entries on 6.1, whatever the class
 * (smaps: no FilePmdMapped, which driver pages mapped by PMD entries as
 * file THPs showed before).
 */
TEST_F(bo, huge_memory_is_mapped_2mib_aligned_by_pfn)
{
	uint32_t huge, normal;
	uint8_t *p;
	size_t size;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * MIB, NPUIPC_PAGE_CLASS_HUGE, &huge));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &normal));

	p = npuipc_bo_mmap(self->fd, huge, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, (uintptr_t)p % (2 * MIB));
	memset(p, 0x5a, size);
	EXPECT_EQ(0, npuipc_smaps_kib(p, "FilePmdMapped"));
	EXPECT_TRUE(npuipc_all_bytes_are(p, size, 0x5a));
	munmap(p, size);

	p = npuipc_bo_mmap(self->fd, normal, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, size);
	EXPECT_EQ(0, npuipc_smaps_kib(p, "FilePmdMapped"));
	munmap(p, size);

	EXPECT_EQ(0, npuipc_gem_close(self->fd, huge));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, normal));
}

/*
 * Touches every page of a fresh @size mapping of @handle at @where (NULL:
 * where the DRM fd places it) and returns how many 2 MiB entries that took
 * (debugfs pmd_maps), the data checked.
 */
static long pmd_maps_touching(int fd, uint32_t handle, size_t size, int dmabuf, void *where)
{
	long before = npuipc_debugfs_value(fd, "pmd_maps"), after;
	uint8_t *p;
	size_t i;

	if (before < 0)
		return -1;
	if (dmabuf >= 0)
		p = mmap(where, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, dmabuf, 0);
	else
		p = npuipc_bo_mmap(fd, handle, PROT_READ | PROT_WRITE, &size);
	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < size; i += 4096)
		p[i] = (uint8_t)(i >> 12);
	after = npuipc_debugfs_value(fd, "pmd_maps");
	for (i = 0; i < size; i += 4096)
		if (p[i] != (uint8_t)(i >> 12))
			after = -1;
	/* A mapping placed by hand gives its range back to the reservation. */
	if (where)
		mmap(p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	else
		munmap(p, size);
	return after < 0 ? -1 : after - before;
}

/*
 * Where the kernel has huge PFN maps (6.12), each 2 MiB of a huge buffer
 * mapped 2 MiB-aligned is one PMD entry, through the DRM fd and through a
 * dma-buf mapped at an aligned address, while a mapping off alignment takes
 * 4 KiB entries; on 6.1 every entry is 4 KiB. A NORMAL buffer's scattered
 * pages of a virtual device never form a 2 MiB run.
 */
TEST_F(bo, huge_memory_takes_one_pmd_per_2mib_where_the_kernel_has_huge_pfn_maps)
{
	long per_2mib = npuipc_kernel_has_huge_pfnmap() ? 1 : 0;
	struct drm_npuipc_get_info info = { 0 };
	uint32_t huge, normal;
	uint8_t *room, *aligned;
	int dmabuf;

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 8 * MIB, NPUIPC_PAGE_CLASS_HUGE, &huge));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &normal));
	EXPECT_EQ(4 * per_2mib, pmd_maps_touching(self->fd, huge, 8 * MIB, -1, NULL));
	if (info.caps & NPUIPC_CAP_VIRTUAL)
		EXPECT_EQ(0, pmd_maps_touching(self->fd, normal, 4 * MIB, -1, NULL));

	ASSERT_EQ(0, npuipc_bo_export(self->fd, huge, 0, 8 * MIB, 0, &dmabuf));
	room = mmap(NULL, 10 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, room);
	aligned = (uint8_t *)(((uintptr_t)room + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
	EXPECT_EQ(4 * per_2mib, pmd_maps_touching(self->fd, huge, 8 * MIB, dmabuf, aligned));
	/*
	 * 4 KiB off alignment: each 2 MiB of address space the mapping covers
	 * maps memory that is no aligned physical run.
	 */
	EXPECT_EQ(0, pmd_maps_touching(self->fd, huge, 8 * MIB, dmabuf, aligned + 4096));
	munmap(room, 10 * MIB);
	close(dmabuf);

	EXPECT_EQ(0, npuipc_gem_close(self->fd, huge));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, normal));
}

static void fill_page_numbers(uint8_t *p, size_t size, size_t first_page)
{
	size_t i;

	for (i = 0; i < size; i += 4096)
		memset(p + i, (uint8_t)(first_page + i / 4096), 4096);
}

static int has_page_numbers(const uint8_t *p, size_t size, size_t first_page)
{
	size_t i;

	for (i = 0; i < size; i += 4096)
		if (!npuipc_all_bytes_are(p + i, 4096, (uint8_t)(first_page + i / 4096)))
			return 0;
	return 1;
}

/*
 * A mapping of a huge buffer that is then split (a page unmapped in the
 * middle of a chunk) or moved to an address that is not 2 MiB-aligned
 * (mremap) goes on reaching the same pages, reading and writing; so does
 * a forked child. MADV_DONTNEED is refused (the mm cannot tell what a PFN
 * map maps). The teardown finds the memory back in the budget.
 */
TEST_F(bo, huge_mapping_split_moved_or_forked_reaches_the_same_pages)
{
	uint8_t *p, *moved, *room, *view;
	uint32_t handle;
	int status;
	size_t size;
	pid_t child;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 6 * MIB, NPUIPC_PAGE_CLASS_HUGE, &handle));
	p = npuipc_bo_mmap(self->fd, handle, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	fill_page_numbers(p, size, 0);
	EXPECT_EQ(0, npuipc_smaps_kib(p, "FilePmdMapped"));

	/* Split: the first chunk loses one page. */
	ASSERT_EQ(0, munmap(p + 1 * MIB, 4096));
	EXPECT_TRUE(has_page_numbers(p, 1 * MIB, 0));
	EXPECT_TRUE(has_page_numbers(p + 1 * MIB + 4096, 1 * MIB - 4096, 257));

	EXPECT_EQ(-1, madvise(p + 4 * MIB + 8192, 4096, MADV_DONTNEED));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(has_page_numbers(p + 4 * MIB, 2 * MIB, 1024));

	/* Forked: the child reaches the third chunk and writes to it. */
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		_exit(has_page_numbers(p + 4 * MIB, 2 * MIB, 1024) &&
		      (memset(p + 5 * MIB, 0xcd, 4096), 1) ? 0 : 1);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(p + 5 * MIB, 4096, 0xcd));

	/* Moved: the second chunk, to 4 KiB past a 2 MiB boundary. */
	room = mmap(NULL, 6 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, room);
	moved = (uint8_t *)(((uintptr_t)room + 2 * MIB - 1) / (2 * MIB) * (2 * MIB)) + 4096;
	ASSERT_EQ(moved, mremap(p + 2 * MIB, 2 * MIB, 2 * MIB, MREMAP_MAYMOVE | MREMAP_FIXED,
				moved));
	EXPECT_TRUE(has_page_numbers(moved, 2 * MIB, 512));
	EXPECT_EQ(0, npuipc_smaps_kib(moved, "FilePmdMapped"));
	memset(moved + 4096, 0xee, 4096);

	/* What the moved mapping wrote is in the buffer. */
	view = npuipc_bo_mmap(self->fd, handle, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, view);
	EXPECT_TRUE(npuipc_all_bytes_are(view + 2 * MIB + 4096, 4096, 0xee));
	EXPECT_TRUE(has_page_numbers(view + 2 * MIB + 8192, 2 * MIB - 8192, 514));

	munmap(view, size);
	munmap(room, 6 * MIB);
	munmap(p, 1 * MIB);
	munmap(p + 1 * MIB + 4096, 1 * MIB - 4096);
	munmap(p + 4 * MIB, 2 * MIB);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

/*
 * Puts a page of @handle's mapping at @offset into a new pipe with
 * vmsplice(), which takes it by GUP-fast; unmaps and closes the buffer.
 * Returns the pipe's read end, or -errno of vmsplice().
 */
static int pipe_page_of_freed_buffer(int fd, uint32_t handle, size_t offset)
{
	struct iovec iov = { .iov_len = 4096 };
	int pipefd[2], ret;
	size_t size;

	iov.iov_base = npuipc_bo_mmap(fd, handle, PROT_READ | PROT_WRITE, &size);
	if (iov.iov_base == MAP_FAILED || pipe(pipefd))
		return -errno;
	memset(iov.iov_base, 0x3c, size);
	iov.iov_base = (uint8_t *)iov.iov_base + offset;
	ret = vmsplice(pipefd[1], &iov, 1, 0) == 4096 ? pipefd[0] : -errno;
	munmap((uint8_t *)iov.iov_base - offset, size);
	close(pipefd[1]);
	if (ret < 0)
		close(pipefd[0]);
	npuipc_gem_close(fd, handle);
	return ret;
}

/*
 * GUP, GUP-fast included, takes nothing from a PFN map: vmsplice() of a
 * page of a huge buffer fails, and the memory goes back to the budget with
 * the buffer, at once.
 */
TEST_F(bo, gup_takes_nothing_from_a_mapping_and_memory_goes_with_its_buffer)
{
	long long before = npuipc_debugfs_value(self->fd, "mem_used");
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * MIB, NPUIPC_PAGE_CLASS_HUGE, &handle));
	EXPECT_EQ(-EFAULT, pipe_page_of_freed_buffer(self->fd, handle, 2 * MIB + 4096));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(before, npuipc_debugfs_value(self->fd, "mem_used"));
}

TEST_F(bo, private_mapping_is_refused)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, handle, &info));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, info.size, PROT_READ, MAP_PRIVATE, self->fd, info.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, mapping_past_the_end_is_refused)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, handle, &info));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, info.size + 4096, PROT_READ, MAP_SHARED, self->fd, info.mmap_offset));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, info.mmap_offset + info.size));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

/* BO_CREATE: every refused input, each leaving the device untouched. */
static void expect_create_rejected(struct __test_metadata *_metadata, int fd,
				   struct drm_npuipc_bo_create args, int err)
{
	uint64_t before = mem_free(fd);

	NPUIPC_EXPECT_REFUSED(err, fd, DRM_IOCTL_NPUIPC_BO_CREATE, &args);
	EXPECT_EQ(before, mem_free(fd));
	EXPECT_EQ(0, npuipc_debugfs_value(fd, "live_objects"));
}

TEST_F(bo, create_rejects_zero_size)
{
	struct drm_npuipc_bo_create args = { .size = 0 };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_size_above_the_maximum)
{
	struct drm_npuipc_bo_create args = { .size = NPUIPC_BO_MAX_SIZE + 4 * KIB };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_size_that_would_overflow)
{
	struct drm_npuipc_bo_create args = { .size = UINT64_MAX & ~4095ULL };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_size_not_a_multiple_of_4k_for_normal_pages)
{
	struct drm_npuipc_bo_create args = { .size = 4 * KIB + 1 };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_size_not_a_multiple_of_2m_for_huge_pages)
{
	struct drm_npuipc_bo_create args = { .size = 1 * MIB, .page_class = NPUIPC_PAGE_CLASS_HUGE };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_size_not_a_multiple_of_1g_for_huge1g_pages)
{
	struct drm_npuipc_bo_create args = { .size = 2 * MIB, .page_class = NPUIPC_PAGE_CLASS_HUGE1G };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_unknown_page_class)
{
	struct drm_npuipc_bo_create args = { .size = 4 * KIB, .page_class = NPUIPC_PAGE_CLASS_COUNT };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
	args.page_class = UINT32_MAX;
	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_each_unknown_flag)
{
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		struct drm_npuipc_bo_create args = { .size = 4 * KIB, .flags = 1U << bit };

		expect_create_rejected(_metadata, self->fd, args, -EINVAL);
	}
}

TEST_F(bo, create_rejects_nonzero_pad)
{
	struct drm_npuipc_bo_create args = { .size = 4 * KIB, .pad = 1 };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, create_rejects_nonzero_handle_on_entry)
{
	struct drm_npuipc_bo_create args = { .size = 4 * KIB, .handle = 1 };

	expect_create_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(bo, info_rejects_unknown_handle)
{
	struct drm_npuipc_bo_info info;

	EXPECT_EQ(-ENOENT, npuipc_bo_info(self->fd, 12345, &info));
	EXPECT_EQ(-ENOENT, npuipc_bo_info(self->fd, 0, &info));
}

TEST_F(bo, info_rejects_closed_handle)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	ASSERT_EQ(0, npuipc_gem_close(self->fd, handle));
	EXPECT_EQ(-ENOENT, npuipc_bo_info(self->fd, handle, &info));
}

TEST_F(bo, info_rejects_each_unknown_flag)
{
	unsigned int bit;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	for (bit = 0; bit < 32; bit++) {
		struct drm_npuipc_bo_info info = { .handle = handle, .flags = 1U << bit };

		EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_INFO, &info));
	}
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, info_rejects_nonzero_out_fields_on_entry)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	info = (struct drm_npuipc_bo_info){ .handle = handle, .size = 1 };
	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_INFO, &info));
	info = (struct drm_npuipc_bo_info){ .handle = handle, .mmap_offset = 1 };
	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_INFO, &info));
	info = (struct drm_npuipc_bo_info){ .handle = handle, .page_class = 1 };
	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_INFO, &info));
	info = (struct drm_npuipc_bo_info){ .handle = handle, .bo_flags = 1 };
	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_INFO, &info));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, handles_of_one_file_are_unknown_to_another)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;
	int other = npuipc_open_device(0);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	EXPECT_EQ(-ENOENT, npuipc_bo_info(other, handle, &info));
	close(other);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, handle));
}

TEST_F(bo, closing_the_drm_fd_frees_every_buffer_it_held)
{
	uint32_t handle;
	int other = npuipc_open_device(0), i;

	ASSERT_LE(0, other);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, npuipc_bo_create(other, 1 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	EXPECT_EQ(8, npuipc_debugfs_value(self->fd, "live_objects"));
	close(other);
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "mem_used"));
}

TEST(uapi_bo_structures_are_padded_to_8_bytes)
{
	EXPECT_EQ(24, sizeof(struct drm_npuipc_bo_create));
	EXPECT_EQ(40, sizeof(struct drm_npuipc_bo_info));
	EXPECT_EQ(32, sizeof(struct drm_npuipc_bo_export));
	EXPECT_EQ(24, sizeof(struct drm_npuipc_bo_import));
	EXPECT_EQ(40, sizeof(struct drm_npuipc_fabric_info));
	EXPECT_EQ(48, sizeof(struct drm_npuipc_fabric_import));
	EXPECT_EQ(16, sizeof(struct drm_npuipc_fabric_hold));
	EXPECT_EQ(16, sizeof(struct drm_npuipc_fabric_renew));
	EXPECT_EQ(32, sizeof(struct npuipc_fabric_part));
	EXPECT_EQ(64 + 32 * NPUIPC_FABRIC_MAX_PARTS, sizeof(struct npuipc_fabric_header));
}

TEST_F(bo, bo_info_of_the_32_byte_version_11_structure_still_works)
{
	/* A binary of uapi 11: the structure before fabric_offset. */
	struct { __u32 handle, flags; __u64 size, mmap_offset; __u32 page_class, bo_flags; }
		old = { 0 };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_BO_INFO, old);

	ASSERT_EQ(32, sizeof(old));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 * MIB, NPUIPC_PAGE_CLASS_HUGE, &old.handle));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, cmd, &old));
	EXPECT_EQ(2 * MIB, old.size);
	EXPECT_EQ(NPUIPC_PAGE_CLASS_HUGE, old.page_class);
	EXPECT_EQ(0, old.bo_flags);
}

TEST_F(bo, fabric_ioctls_on_an_npu_are_not_supported)
{
	struct drm_npuipc_fabric_info info = { 0 };
	struct drm_npuipc_fabric_import import = { .offset = 2 * MIB, .size = 4096, .sdid = 1 };
	struct drm_npuipc_fabric_hold hold = { .timeout_ms = 1 };
	uint32_t handle;

	NPUIPC_EXPECT_REFUSED(-EOPNOTSUPP, self->fd, DRM_IOCTL_NPUIPC_FABRIC_INFO, &info);
	NPUIPC_EXPECT_REFUSED(-EOPNOTSUPP, self->fd, DRM_IOCTL_NPUIPC_FABRIC_IMPORT, &import);
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, handle, 0, 4096, 0, &hold.fd));
	NPUIPC_EXPECT_REFUSED(-EOPNOTSUPP, self->fd, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &hold);
	close(hold.fd);
}

TEST_F(bo, bo_info_reports_no_fabric_offset_and_rejects_one_on_entry)
{
	struct drm_npuipc_bo_info info;
	uint32_t handle;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &handle));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, handle, &info));
	EXPECT_EQ(0, info.fabric_offset);
	EXPECT_EQ(0, info.bo_flags & NPUIPC_BO_FABRIC);
	info = (struct drm_npuipc_bo_info){ .handle = handle, .fabric_offset = 4096 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_BO_INFO, &info);
}

TEST_HARNESS_MAIN
