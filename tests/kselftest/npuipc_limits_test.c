// SPDX-License-Identifier: GPL-2.0
/*
 * Limits and accounting: what a process can make the kernel allocate is
 * charged to its memory cgroup, destroyed objects are freed at once, and
 * every per-file and per-stream limit is reached, refused with its errno
 * and left without a leak.
 */
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "npuipc_test_util.h"

#define KIB 1024LL
#define MIB (1024LL * KIB)
#define SEC_NS 1000000000LL
#define CGROUP_ROOT "/sys/fs/cgroup"

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

static long long read_number(const char *path)
{
	char buf[64];

	if (npuipc_read_file(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* cgroup2 with the memory controller for children of the root; 0 or -errno. */
static int memory_cgroups_available(void)
{
	char buf[256];

	if (npuipc_read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) &&
	    mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL))
		return -errno;
	if (npuipc_read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		return -ENOENT;
	return write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
}

static uint64_t mem_free(int fd)
{
	struct drm_npuipc_get_info info = { 0 };

	if (npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info))
		return 0;
	return info.mem_free;
}


/* Each test runs in a memory cgroup of its own (the harness forks per test). */
FIXTURE(limits) {
	int fd;
	char cg[96];
	char path[160];
};

FIXTURE_SETUP(limits)
{
	char pid[16];
	int ret;

	self->cg[0] = '\0';
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ret = memory_cgroups_available();
	if (ret)
		SKIP(return, "no memory cgroups: %s", strerror(-ret));
	snprintf(self->cg, sizeof(self->cg), CGROUP_ROOT "/npuipc-limits-%d", getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755));
	snprintf(self->path, sizeof(self->path), "%s/cgroup.procs", self->cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, write_file(self->path, pid));
}

FIXTURE_TEARDOWN(limits)
{
	char pid[16];

	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
	if (self->cg[0]) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		EXPECT_EQ(0, write_file(CGROUP_ROOT "/cgroup.procs", pid));
		EXPECT_EQ(0, rmdir(self->cg));
	}
}

static long long cg_value(FIXTURE_DATA(limits) *self, const char *file)
{
	snprintf(self->path, sizeof(self->path), "%s/%s", self->cg, file);
	return read_number(self->path);
}

static int cg_set(FIXTURE_DATA(limits) *self, const char *file, const char *value)
{
	snprintf(self->path, sizeof(self->path), "%s/%s", self->cg, file);
	return write_file(self->path, value);
}

TEST_F(limits, buffer_pages_are_charged_to_the_creators_memory_cgroup)
{
	long long before, with, after;
	uint32_t bo;

	before = cg_value(self, "memory.current");
	ASSERT_LE(0, before);
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 16 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	with = cg_value(self, "memory.current");
	EXPECT_LE(before + 16 * MIB, with);
	ASSERT_EQ(0, npuipc_gem_close(self->fd, bo));
	after = cg_value(self, "memory.current");
	EXPECT_GT(before + 1 * MIB, after);
}

TEST_F(limits, buffer_beyond_the_cgroup_limit_fails_with_enomem_and_keeps_the_budget)
{
	uint64_t free_before = mem_free(self->fd);
	char limit[32];
	uint32_t bo = 0;

	snprintf(limit, sizeof(limit), "%lld", cg_value(self, "memory.current") + 8 * MIB);
	ASSERT_EQ(0, cg_set(self, "memory.max", limit));
	EXPECT_EQ(-ENOMEM, npuipc_bo_create(self->fd, 32 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	EXPECT_EQ(0, bo);
	EXPECT_EQ(free_before, mem_free(self->fd));
	ASSERT_EQ(0, cg_set(self, "memory.max", "max"));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 32 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

/*
 * A destroyed notify is freed when its last reference goes, not when its
 * owner's file closes: 20000 more create/destroy rounds cost nothing
 * (kept, they would charge some 2.5 MiB; the slack is the per-CPU charge
 * batches of the memory controller).
 */
/* Minutes, not the default 30 s: KASAN slows these loops on the debug kernel. */
TEST_F_TIMEOUT(limits, create_destroy_loops_keep_kernel_memory_flat, 600)
{
	static const uint32_t types[] = { NPUIPC_OBJ_NOTIFY, NPUIPC_OBJ_EVENT, NPUIPC_OBJ_STREAM };
	long long warm, after;
	uint32_t handle;
	unsigned int t;
	int i;

	for (t = 0; t < 3; t++) {
		for (i = 0; i < 1000; i++) {
			ASSERT_EQ(0, npuipc_obj_create(self->fd, types[t], &handle));
			ASSERT_EQ(0, npuipc_obj_destroy(self->fd, handle));
		}
		warm = cg_value(self, "memory.current");
		for (i = 0; i < 20000; i++) {
			ASSERT_EQ(0, npuipc_obj_create(self->fd, types[t], &handle));
			ASSERT_EQ(0, npuipc_obj_destroy(self->fd, handle));
		}
		after = cg_value(self, "memory.current");
		EXPECT_GT(warm + 1 * MIB, after) TH_LOG("object type %u", types[t]);
	}
}

TEST_F_TIMEOUT(limits, a_file_holds_at_most_max_imports_even_of_one_dma_buf, 600)
{
	static uint32_t handles[NPUIPC_MAX_IMPORTS];
	uint32_t bo, extra = 0;
	int dmabuf, i;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, bo, 0, 4 * KIB, 0, &dmabuf));
	for (i = 0; i < NPUIPC_MAX_IMPORTS; i++)
		ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &handles[i])) TH_LOG("import %d", i);
	EXPECT_EQ(-ENOSPC, npuipc_bo_import(self->fd, dmabuf, 0, &extra));
	EXPECT_EQ(0, extra);
	/* Buffers of its own do not count. */
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &extra));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, extra));
	ASSERT_EQ(0, npuipc_gem_close(self->fd, handles[0]));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &handles[0]));
	for (i = 0; i < NPUIPC_MAX_IMPORTS; i++)
		ASSERT_EQ(0, npuipc_gem_close(self->fd, handles[i]));
	close(dmabuf);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(limits, a_stream_holds_at_most_max_queued_jobs)
{
	static struct drm_npuipc_job jobs[NPUIPC_MAX_JOBS_PER_SUBMIT];
	uint32_t stream, releaser, notify, bo;
	int i, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	for (i = 0; i < NPUIPC_MAX_JOBS_PER_SUBMIT; i++)
		jobs[i] = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_FILL, .dst = bo,
						   .dst_offset = i, .size = 1, .value = 1 };
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	for (i = 0; i < NPUIPC_MAX_QUEUED_JOBS / NPUIPC_MAX_JOBS_PER_SUBMIT; i++) {
		ASSERT_EQ(0, npuipc_submit(self->fd, stream, jobs, NPUIPC_MAX_JOBS_PER_SUBMIT, NULL))
			TH_LOG("submit %d", i);
		jobs[0] = jobs[1];
	}
	EXPECT_EQ(-ENOSPC, npuipc_submit(self->fd, stream, jobs, 1, NULL));
	/* A full stream refuses work; others take it. */
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, stream, 60 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, npuipc_submit(self->fd, stream, jobs, NPUIPC_MAX_JOBS_PER_SUBMIT, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, stream, 60 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(limits, a_file_holds_at_most_max_objects_made_or_imported)
{
	uint32_t handle, extra = 0;
	int i, efd;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &handle));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, handle, 0, &efd));
	for (i = 1; i < NPUIPC_MAX_OBJECTS; i++)
		ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &handle)) TH_LOG("object %d", i);
	EXPECT_EQ(-ENOSPC, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &extra));
	EXPECT_EQ(-ENOSPC, npuipc_obj_import(self->fd, efd, &extra));
	EXPECT_EQ(0, extra);
	ASSERT_EQ(0, npuipc_obj_destroy(self->fd, handle));
	EXPECT_EQ(0, npuipc_obj_import(self->fd, efd, &extra));
	close(efd);
}

TEST_HARNESS_MAIN
