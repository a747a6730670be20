// SPDX-License-Identifier: GPL-2.0
/*
 * Host memory registration (BO_USERPTR): a range of the process's memory
 * becomes a buffer whose pages are that memory. Jobs read and write it as
 * device memory, its mapping is a second view of the same pages, it cannot
 * be exported, it counts against RLIMIT_MEMLOCK, it outlives an munmap of
 * the range, and every input BO_USERPTR refuses.
 */
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdint.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define SEC_NS 1000000000LL
#define RANGE (64 * 1024)

/* VmPin of this process, in KiB; -1 if unreadable. */
static long vm_pin_kib(void)
{
	char buf[4096], *line;

	if (npuipc_read_file("/proc/self/status", buf, sizeof(buf)))
		return -1;
	line = strstr(buf, "VmPin:");
	return line ? strtol(line + 6, NULL, 10) : -1;
}

static int userptr(int fd, void *addr, uint64_t size, uint32_t flags, uint32_t *handle)
{
	struct drm_npuipc_bo_userptr args = { .addr = (uintptr_t)addr, .size = size, .flags = flags };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_BO_USERPTR, &args);

	if (!ret && handle)
		*handle = args.handle;
	return ret;
}

FIXTURE(userptr) {
	int fd;
	uint32_t stream;
	uint32_t dev;		/* a device buffer of RANGE bytes */
	uint8_t *host;		/* RANGE bytes of anonymous memory */
};

FIXTURE_SETUP(userptr)
{
	self->host = MAP_FAILED;
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->stream));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, RANGE, NPUIPC_PAGE_CLASS_NORMAL, &self->dev));
	self->host = mmap(NULL, RANGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->host);
}

FIXTURE_TEARDOWN(userptr)
{
	if (self->host != MAP_FAILED)
		munmap(self->host, RANGE);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

static void run(struct __test_metadata *_metadata, FIXTURE_DATA(userptr) *self,
		struct drm_npuipc_job job)
{
	int status = -1;

	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, job));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
}

TEST_F(userptr, jobs_read_and_write_the_processs_own_pages)
{
	uint8_t *view;
	uint32_t bo;
	size_t size;

	memset(self->host, 0x3c, RANGE);
	ASSERT_EQ(0, userptr(self->fd, self->host, RANGE, 0, &bo));
	/* The device reads what the process wrote ... */
	run(_metadata, self, npuipc_copy_job(self->dev, 0, bo, 0, RANGE));
	view = npuipc_bo_mmap(self->fd, self->dev, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, view);
	EXPECT_TRUE(npuipc_all_bytes_are(view, RANGE, 0x3c));
	munmap(view, size);
	/* ... and the process reads what the device wrote, at its own address. */
	run(_metadata, self, npuipc_fill_job(bo, 4096, 8192, 0xa5));
	EXPECT_TRUE(npuipc_all_bytes_are(self->host + 4096, 8192, 0xa5));
	EXPECT_TRUE(npuipc_all_bytes_are(self->host, 4096, 0x3c));
	EXPECT_TRUE(npuipc_all_bytes_are(self->host + 12288, RANGE - 12288, 0x3c));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(userptr, pins_show_as_the_processs_pinned_memory_until_the_buffer_goes)
{
	long before = vm_pin_kib();
	uint32_t bo;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, userptr(self->fd, self->host, RANGE, 0, &bo));
	EXPECT_EQ(before + RANGE / 1024, vm_pin_kib());
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
	EXPECT_EQ(before, vm_pin_kib());
}

/*
 * The mapping holds the buffer after its handle closed: the last put then
 * comes from munmap, or from the exit of a process still mapping it, with
 * the process's mmap_lock held. Each in a child, under an alarm.
 */
TEST_F(userptr, the_last_put_may_come_from_munmap_or_exit)
{
	int round;

	for (round = 0; round < 2; round++) {
		pid_t pid = fork();
		int status;

		ASSERT_LE(0, pid);
		if (pid == 0) {
			uint8_t *view;
			uint32_t bo;
			size_t size;

			alarm(10);
			if (userptr(self->fd, self->host, RANGE, 0, &bo))
				_exit(10);
			view = npuipc_bo_mmap(self->fd, bo, PROT_READ, &size);
			if (view == MAP_FAILED || npuipc_gem_close(self->fd, bo))
				_exit(11);
			if (round == 0 && munmap(view, size))
				_exit(12);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
}

TEST_F(userptr, the_buffers_mapping_is_a_second_view_of_the_same_pages)
{
	struct drm_npuipc_bo_info info = { 0 };
	uint8_t *view;
	uint32_t bo;
	size_t size;

	ASSERT_EQ(0, userptr(self->fd, self->host, RANGE, 0, &bo));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, bo, &info));
	EXPECT_EQ(RANGE, info.size);
	EXPECT_EQ(NPUIPC_BO_USERPTR, info.bo_flags);
	EXPECT_EQ(NPUIPC_PAGE_CLASS_NORMAL, info.page_class);
	view = npuipc_bo_mmap(self->fd, bo, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, view);
	self->host[100] = 0x11;
	EXPECT_EQ(0x11, view[100]);
	view[RANGE - 1] = 0x22;
	EXPECT_EQ(0x22, self->host[RANGE - 1]);
	munmap(view, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(userptr, read_only_ranges_are_read_by_jobs_and_never_written)
{
	struct drm_npuipc_bo_info info = { 0 };
	uint8_t *ro;
	size_t size;
	uint32_t bo;

	memset(self->host, 0x77, RANGE);
	ASSERT_EQ(0, mprotect(self->host, RANGE, PROT_READ));
	/* Without READ_ONLY the pages would have to be writable. */
	EXPECT_EQ(-EFAULT, userptr(self->fd, self->host, RANGE, 0, &bo));
	ASSERT_EQ(0, userptr(self->fd, self->host, RANGE, NPUIPC_BO_USERPTR_READ_ONLY, &bo));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, bo, &info));
	EXPECT_EQ(NPUIPC_BO_USERPTR | NPUIPC_BO_READ_ONLY, info.bo_flags);
	run(_metadata, self, npuipc_copy_job(self->dev, 0, bo, 0, RANGE));
	EXPECT_EQ(-EACCES, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(bo, 0, 4096, 1)));
	EXPECT_EQ(-EACCES, npuipc_submit1(self->fd, self->stream, npuipc_copy_job(bo, 0, self->dev, 0, 4096)));
	ro = npuipc_bo_mmap(self->fd, bo, PROT_READ | PROT_WRITE, &size);
	EXPECT_EQ(MAP_FAILED, ro);
	EXPECT_TRUE(npuipc_all_bytes_are(self->host, RANGE, 0x77));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(userptr, the_buffer_cannot_leave_the_process)
{
	uint32_t bo;
	int fd = -1;

	ASSERT_EQ(0, userptr(self->fd, self->host, RANGE, 0, &bo));
	struct drm_prime_handle prime = { .handle = bo, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1 };

	EXPECT_EQ(-EPERM, npuipc_bo_export(self->fd, bo, 0, RANGE, 0, &fd));
	EXPECT_EQ(-EPERM, npuipc_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(userptr, the_pages_outlive_an_munmap_of_the_range_until_the_buffer_goes)
{
	uint8_t *view;
	uint32_t bo;
	size_t size;

	memset(self->host, 0x5e, RANGE);
	ASSERT_EQ(0, userptr(self->fd, self->host, RANGE, 0, &bo));
	ASSERT_EQ(0, munmap(self->host, RANGE));
	self->host = MAP_FAILED;
	run(_metadata, self, npuipc_fill_job(bo, 0, 4096, 0x9d));
	view = npuipc_bo_mmap(self->fd, bo, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, view);
	EXPECT_TRUE(npuipc_all_bytes_are(view, 4096, 0x9d));
	EXPECT_TRUE(npuipc_all_bytes_are(view + 4096, RANGE - 4096, 0x5e));
	munmap(view, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(userptr, bad_input_is_refused_and_changes_nothing)
{
	uint32_t bo = 0;
	struct drm_npuipc_bo_userptr args = { .addr = (uintptr_t)self->host, .size = RANGE, .handle = 7 };
	long long objects = npuipc_debugfs_value(self->fd, "live_objects");
	long pinned = vm_pin_kib();
	void *gap;

	EXPECT_EQ(-EINVAL, userptr(self->fd, self->host, RANGE, 2, &bo));
	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_USERPTR, &args));
	EXPECT_EQ(-EINVAL, userptr(self->fd, self->host, 0, 0, &bo));
	EXPECT_EQ(-EINVAL, userptr(self->fd, self->host, 100, 0, &bo));
	EXPECT_EQ(-EINVAL, userptr(self->fd, self->host + 8, 4096, 0, &bo));
	EXPECT_EQ(-EINVAL, userptr(self->fd, (void *)(uintptr_t)-4096, 8192, 0, &bo));
	EXPECT_EQ(-EINVAL, userptr(self->fd, self->host, NPUIPC_BO_MAX_SIZE + 4096, 0, &bo));
	EXPECT_EQ(-EFAULT, userptr(self->fd, (void *)(uintptr_t)(1ULL << 62), 4096, 0, &bo));
	/* A hole in the middle of the range: nothing stays pinned. */
	gap = self->host + 2 * 4096;
	ASSERT_EQ(0, munmap(gap, 4096));
	EXPECT_EQ(-EFAULT, userptr(self->fd, self->host, RANGE, 0, &bo));
	EXPECT_EQ(objects, npuipc_debugfs_value(self->fd, "live_objects"));
	ASSERT_LE(0, pinned);
	EXPECT_EQ(pinned, vm_pin_kib());
}

/* Without CAP_IPC_LOCK, pins count against RLIMIT_MEMLOCK. */
TEST_F(userptr, pins_count_against_the_memlock_limit)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct data[2] = { 0 };
		struct rlimit lim = { .rlim_cur = 2 * RANGE, .rlim_max = 2 * RANGE };
		uint32_t a, b;

		if (syscall(SYS_capget, &hdr, data))
			_exit(10);
		data[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
		data[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
		if (syscall(SYS_capset, &hdr, data) || setrlimit(RLIMIT_MEMLOCK, &lim))
			_exit(11);
		uint8_t *big = mmap(NULL, 4 * RANGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (big == MAP_FAILED)
			_exit(12);
		if (userptr(self->fd, big, 2 * RANGE, 0, &a))
			_exit(13);
		if (userptr(self->fd, big + 2 * RANGE, 4096, 0, &b) != -ENOMEM)
			_exit(14);
		/* Freed pins are given back. */
		if (npuipc_gem_close(self->fd, a) || userptr(self->fd, big + 2 * RANGE, RANGE, 0, &b))
			_exit(15);
		_exit(npuipc_gem_close(self->fd, b) ? 16 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
