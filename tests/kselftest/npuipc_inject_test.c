// SPDX-License-Identifier: GPL-2.0
/*
 * Each ioctl's -ENOMEM, made to happen: one of npuipc's allocating
 * functions (those kernel/ marks ALLOW_ERROR_INJECTION) fails once, for
 * this thread only, through fail_function. The ioctl must fail with
 * exactly -ENOMEM, write nothing back, leave no object, byte or fd behind,
 * and succeed when repeated without the fault. Needs a kernel with
 * CONFIG_FAIL_FUNCTION and debugfs (make check-debug's); skips elsewhere.
 */
#include <dirent.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define FEI "/sys/kernel/debug/fail_function"
#define WAIT_NS (10 * 1000000000LL)
#define NCOUNTERS (sizeof(npuipc_leak_counters) / sizeof(npuipc_leak_counters[0]))

/* What a refused ioctl must leave as it was. */
struct inject_state {
	long long counters[NCOUNTERS];
	int fds;
};

static int open_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* 0, or -1 when a counter or the fd count could not be read. */
static int inject_state_take(int fd, struct inject_state *s)
{
	size_t i;

	for (i = 0; i < NCOUNTERS; i++) {
		s->counters[i] = npuipc_debugfs_value(fd, npuipc_leak_counters[i]);
		if (s->counters[i] < 0)
			return -1;
	}
	s->fds = open_fd_count();
	return s->fds < 0 ? -1 : 0;
}

/*
 * Arms one failure of @fn, for tasks with make-it-fail set: -ENOMEM from
 * an ERRNO function, NULL from a NULL one (whose callers turn it into
 * -ENOMEM). 0 or -errno.
 */
static int inject_arm(const char *fn)
{
	char path[128], value[32];
	int ret;

	/* Nothing fires while the function is set up, whatever came before. */
	ret = npuipc_write_file(FEI "/probability", "0");
	if (!ret)
		ret = npuipc_write_file(FEI "/task-filter", "Y");
	if (!ret)
		ret = npuipc_write_file(FEI "/inject", fn);
	if (!ret) {
		/*
		 * -ENOMEM as the unsigned long it is read as. A NULL function
		 * refuses any value but 0, which it already has.
		 */
		snprintf(path, sizeof(path), FEI "/%s/retval", fn);
		if (npuipc_write_file(path, "0xfffffffffffffff4") &&
		    (npuipc_read_file(path, value, sizeof(value)) || strtoull(value, NULL, 16)))
			ret = -1; /* an ERRNO function that would return another error */
	}
	if (!ret)
		ret = npuipc_write_file(FEI "/interval", "1");
	if (!ret)
		ret = npuipc_write_file(FEI "/probability", "100");
	if (!ret)
		ret = npuipc_write_file(FEI "/verbose", "0");
	if (!ret)
		ret = npuipc_write_file(FEI "/times", "1");
	return ret;
}

/* Failures injected since inject_arm(): 1 once its one failure happened. */
static int injected(void)
{
	char buf[32];

	if (npuipc_read_file(FEI "/times", buf, sizeof(buf)))
		return -1;
	return 1 - atoi(buf);
}

static void inject_disarm(void)
{
	npuipc_write_file(FEI "/probability", "0");
	npuipc_write_file(FEI "/inject", "\n"); /* an empty line removes every function */
}

static int make_it_fail(bool on)
{
	return npuipc_write_file("/proc/thread-self/make-it-fail", on ? "1" : "0");
}

/*
 * In a test: runs the statements with @fn made to fail once, for this
 * thread only; the fault must fire, and the device's counters and the
 * process's fds must be as they were before.
 */
#define WHILE_FAILING_ONCE(fn, ...)							\
	do {										\
		struct inject_state before_, after_;					\
											\
		ASSERT_EQ(0, inject_arm(fn));						\
		ASSERT_EQ(0, inject_state_take(self->fd, &before_));			\
		ASSERT_EQ(0, make_it_fail(true));					\
		__VA_ARGS__;								\
		ASSERT_EQ(0, make_it_fail(false));					\
		EXPECT_EQ(1, injected());						\
		inject_disarm();							\
		ASSERT_EQ(0, inject_state_take(self->fd, &after_));			\
		EXPECT_EQ(0, memcmp(before_.counters, after_.counters,			\
				    sizeof(before_.counters)));				\
		EXPECT_EQ(before_.fds, after_.fds);					\
	} while (0)

/*
 * In a test: @request on @file fails with -ENOMEM once @fn is made to
 * fail, having written nothing back and left everything as it was.
 */
#define EXPECT_ENOMEM_FROM(fn, file, request, arg)					\
	WHILE_FAILING_ONCE(fn, NPUIPC_EXPECT_REFUSED(-ENOMEM, file, request, arg))

FIXTURE(inject) {
	int fd, other;	/* two files of device 0 */
};

FIXTURE_SETUP(inject)
{
	self->fd = self->other = -1;
	if (access(FEI "/inject", W_OK))
		SKIP(return, "no fail_function (a kernel without CONFIG_FAIL_FUNCTION, or no debugfs)");
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	self->other = npuipc_open_device(0);
	ASSERT_LE(0, self->other);
}

FIXTURE_TEARDOWN(inject)
{
	make_it_fail(false);
	inject_disarm();
	if (self->fd >= 0)
		close(self->fd);
	if (self->other >= 0)
		close(self->other);
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

TEST_F(inject, open_fails_with_enomem_when_the_files_state_cannot_be_allocated)
{
	char node[32];
	struct stat st;
	int fd = -1, err = 0;

	ASSERT_EQ(0, fstat(self->fd, &st));
	snprintf(node, sizeof(node), "/dev/dri/renderD%u", minor(st.st_rdev));
	WHILE_FAILING_ONCE("npuipc_file_open", fd = open(node, O_RDWR | O_CLOEXEC); err = errno);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ENOMEM, err);
	if (fd >= 0)
		close(fd);
	fd = open(node, O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
}

TEST_F(inject, bo_create_fails_with_enomem_when_its_pages_cannot_be_allocated)
{
	struct drm_npuipc_bo_create args = {
		.size = 2 << 20, .page_class = NPUIPC_PAGE_CLASS_NORMAL,
	};

	EXPECT_ENOMEM_FROM("npuipc_bo_alloc_pages", self->fd, DRM_IOCTL_NPUIPC_BO_CREATE, &args);
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_CREATE, &args));
	EXPECT_NE(0, args.handle);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, args.handle));
}

TEST_F(inject, bo_export_fails_with_enomem_when_its_dmabuf_cannot_be_made)
{
	struct drm_npuipc_bo_export whole = { .size = 2 << 20 };
	struct drm_npuipc_bo_export range = { .offset = 1 << 20, .size = 4096,
					      .flags = NPUIPC_BO_EXPORT_READ_ONLY };
	uint32_t bo;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 << 20, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	whole.handle = range.handle = bo;
	EXPECT_ENOMEM_FROM("npuipc_dmabuf_export", self->fd, DRM_IOCTL_NPUIPC_BO_EXPORT, &whole);
	EXPECT_ENOMEM_FROM("npuipc_dmabuf_export", self->fd, DRM_IOCTL_NPUIPC_BO_EXPORT, &range);
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_EXPORT, &whole));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_BO_EXPORT, &range));
	EXPECT_EQ(0, close(whole.fd));
	EXPECT_EQ(0, close(range.fd));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(inject, bo_import_fails_with_enomem_when_the_import_cannot_be_made)
{
	struct drm_npuipc_bo_import args = {};
	uint32_t bo;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 << 20, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, bo, 0, 2 << 20, 0, &dmabuf));
	args.fd = dmabuf;
	EXPECT_ENOMEM_FROM("npuipc_gem_prime_import", self->other, DRM_IOCTL_NPUIPC_BO_IMPORT, &args);
	ASSERT_EQ(0, npuipc_ioctl(self->other, DRM_IOCTL_NPUIPC_BO_IMPORT, &args));
	EXPECT_NE(0, args.handle);
	EXPECT_EQ(2 << 20, args.size);
	EXPECT_EQ(0, npuipc_gem_close(self->other, args.handle));
	EXPECT_EQ(0, close(dmabuf));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
}

TEST_F(inject, obj_create_fails_with_enomem_for_each_type_and_for_its_handle)
{
	static const struct { uint32_t type; const char *fn; } cases[] = {
		{ NPUIPC_OBJ_STREAM, "npuipc_stream_create" },
		{ NPUIPC_OBJ_EVENT, "npuipc_event_create" },
		{ NPUIPC_OBJ_NOTIFY, "npuipc_notify_create" },
		{ NPUIPC_OBJ_STREAM, "npuipc_file_add_object" },
		{ NPUIPC_OBJ_EVENT, "npuipc_file_add_object" },
		{ NPUIPC_OBJ_NOTIFY, "npuipc_file_add_object" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct drm_npuipc_obj_create args = { .type = cases[i].type };

		TH_LOG("type %u, %s failing", cases[i].type, cases[i].fn);
		EXPECT_ENOMEM_FROM(cases[i].fn, self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);
		ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args));
		EXPECT_EQ(0, npuipc_obj_destroy(self->fd, args.handle));
	}
}

TEST_F(inject, obj_export_fails_with_enomem_when_its_file_cannot_be_made)
{
	struct drm_npuipc_obj_export args = {};
	uint32_t event;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	args.handle = event;
	EXPECT_ENOMEM_FROM("npuipc_object_export_file", self->fd, DRM_IOCTL_NPUIPC_OBJ_EXPORT, &args);
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_OBJ_EXPORT, &args));
	EXPECT_EQ(0, close(args.fd));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
}

TEST_F(inject, obj_import_fails_with_enomem_when_no_handle_can_be_given)
{
	struct drm_npuipc_obj_import args = {};
	uint32_t notify;
	int fd;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, notify, 0, &fd));
	args.fd = fd;
	EXPECT_ENOMEM_FROM("npuipc_file_add_object", self->other, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args);
	ASSERT_EQ(0, npuipc_ioctl(self->other, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args));
	EXPECT_EQ(NPUIPC_OBJ_NOTIFY, args.type);
	EXPECT_EQ(0, npuipc_obj_destroy(self->other, args.handle));
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, notify));
}

/* A submit whose job cannot be allocated queues nothing and makes no out-fence. */
TEST_F(inject, submit_fails_with_enomem_when_a_job_cannot_be_allocated)
{
	struct drm_npuipc_job jobs[2];
	struct drm_npuipc_submit args = {
		.flags = NPUIPC_SUBMIT_OUT_FENCE, .jobs = (uintptr_t)jobs,
		.job_count = 2, .job_size = sizeof(jobs[0]),
	};
	uint32_t stream, event;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	jobs[0] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	jobs[1] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	args.stream = stream;
	EXPECT_ENOMEM_FROM("npuipc_job_alloc", self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &args);
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &args));
	EXPECT_EQ(0, npuipc_wait(self->fd, stream, WAIT_NS, 0, NULL));
	EXPECT_EQ(1, npuipc_sync_file_status(args.out_fence_fd));
	EXPECT_EQ(0, close(args.out_fence_fd));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, stream));
}

/*
 * A file's first FILL needs its process's copy worker: when it cannot be
 * made, the submit queues nothing, and the next one makes it.
 */
TEST_F(inject, submit_fails_with_enomem_when_the_copy_worker_cannot_be_made)
{
	struct drm_npuipc_job job;
	struct drm_npuipc_submit args = {
		.jobs = (uintptr_t)&job, .job_count = 1, .job_size = sizeof(job),
	};
	uint32_t stream, bo;
	uint8_t *map;
	size_t size;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 1 << 20, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	job = npuipc_fill_job(bo, 0, 1 << 20, 0x5a);
	args.stream = stream;
	EXPECT_ENOMEM_FROM("npuipc_copy_worker_get", self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &args);
	EXPECT_EQ(0, npuipc_wait(self->fd, stream, WAIT_NS, 0, NULL));
	map = npuipc_bo_mmap(self->fd, bo, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_TRUE(npuipc_all_bytes_are(map, size, 0)); /* nothing was queued */
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &args));
	EXPECT_EQ(0, npuipc_wait(self->fd, stream, WAIT_NS, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(map, size, 0x5a));
	munmap(map, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, stream));
}

TEST_HARNESS_MAIN
