// SPDX-License-Identifier: GPL-2.0
/*
 * Limits and accounting: what a process can make the kernel allocate is
 * charged to its memory cgroup, destroyed objects are freed at once, every
 * per-file and per-stream limit is reached, refused with its errno and left
 * without a leak, and copies run within their submitter's CPU limits
 * without starving others.
 */
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define KIB 1024LL
#define MIB (1024LL * KIB)
#define SEC_NS 1000000000LL
#define CGROUP_ROOT "/sys/fs/cgroup"

static long long read_number(const char *path)
{
	char buf[64];

	if (npuipc_read_file(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/*
 * Removes an emptied cgroup. A file's copy worker (a kthread attached to
 * its submitter's cgroups) leaves it as it exits, just after the file's
 * close returned: a few tries.
 */
static int rmdir_cgroup(const char *path)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!rmdir(path))
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
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
	return npuipc_write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
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
	ASSERT_EQ(0, npuipc_write_file(self->path, pid));
}

FIXTURE_TEARDOWN(limits)
{
	char pid[16];

	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
	if (self->cg[0]) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		EXPECT_EQ(0, npuipc_write_file(CGROUP_ROOT "/cgroup.procs", pid));
		EXPECT_EQ(0, rmdir_cgroup(self->cg));
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
	return npuipc_write_file(self->path, value);
}

/*
 * A virtual device's memory is RAM, charged to its creator's memory cgroup;
 * a PCI device's is its BAR, no host memory: nothing is charged.
 */
TEST_F(limits, buffer_pages_are_charged_to_the_creators_memory_cgroup)
{
	long long before, with, after;
	uint32_t bo;

	before = cg_value(self, "memory.current");
	ASSERT_LE(0, before);
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 16 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	with = cg_value(self, "memory.current");
	if (npuipc_expected_pci(0)) {
		EXPECT_GT(before + 1 * MIB, with);
	} else {
		EXPECT_LE(before + 16 * MIB, with);
	}
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
	if (npuipc_expected_pci(0)) {
		/* BAR memory is not the cgroup's: only the budget counts. */
		EXPECT_EQ(0, npuipc_bo_create(self->fd, 32 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
		EXPECT_EQ(free_before - 32 * MIB, mem_free(self->fd));
		EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
		ASSERT_EQ(0, cg_set(self, "memory.max", "max"));
		return;
	}
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

/*
 * Each page of one buffer exported as its own range: NPUIPC_MAX_IMPORTS
 * different dma-bufs. A file holds that many imports; one more is refused,
 * while a dma-buf it holds still imports (as the handle it has).
 */
TEST_F_TIMEOUT(limits, a_file_holds_at_most_max_imports, 600)
{
	static uint32_t handles[NPUIPC_MAX_IMPORTS];
	uint32_t bo, extra = 0, again;
	int dmabuf, i;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, (NPUIPC_MAX_IMPORTS + 1) * 4 * KIB,
				      NPUIPC_PAGE_CLASS_NORMAL, &bo));
	for (i = 0; i < NPUIPC_MAX_IMPORTS; i++) {
		ASSERT_EQ(0, npuipc_bo_export(self->fd, bo, i * 4 * KIB, 4 * KIB, 0, &dmabuf));
		ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &handles[i])) TH_LOG("import %d", i);
		if (i == NPUIPC_MAX_IMPORTS - 1)
			break;	/* kept for the re-import below */
		close(dmabuf);
	}
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &again));
	EXPECT_EQ(handles[NPUIPC_MAX_IMPORTS - 1], again);
	close(dmabuf);
	ASSERT_EQ(0, npuipc_bo_export(self->fd, bo, NPUIPC_MAX_IMPORTS * 4 * KIB, 4 * KIB, 0,
				      &dmabuf));
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

/* ---- CPU: copies run as their submitter, within its cgroup's limits ---- */

/* cgroup2 with @controller ("cpu", "cpuset") for children of the root. */
static int controller_available(const char *controller)
{
	char buf[256], enable[32];
	int ret = memory_cgroups_available();

	if (ret)
		return ret;
	if (npuipc_read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, controller))
		return -ENOENT;
	snprintf(enable, sizeof(enable), "+%s", controller);
	return npuipc_write_file(CGROUP_ROOT "/cgroup.subtree_control", enable);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define COPY_BYTES (8 * MIB)
/* A flood left behind by a test that failed part-way ends by itself. */
#define FLOOD_MAX_S 120.0

/*
 * A flood of copies: a child moved into a cgroup keeps its copy worker
 * busy without a pause, with a COPY of 8 MiB queued on each of two streams
 * (while it waits for one and queues the next, the other runs), until its
 * parent closes @stop. It counts the bytes copied after its first copy
 * was done, which it announces on @out.
 */
struct copy_flood {
	pid_t pid;
	int stop;	/* write end: closing it stops the flood */
	int out;	/* read end: one byte once started, then the byte count */
};

static void copy_flood_child(const char *cg, int stop, int out)
{
	struct pollfd pfd = { .fd = stop, .events = POLLIN };
	char path[160], pid[16];
	uint32_t streams[2], a, b;
	long long copied = 0;
	bool started = false;
	double end;
	int fd, i;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (npuipc_write_file(path, pid))
		_exit(1);
	fd = npuipc_open_device(0);
	if (fd < 0 || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &streams[0]) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &streams[1]) ||
	    npuipc_bo_create(fd, COPY_BYTES, NPUIPC_PAGE_CLASS_NORMAL, &a) ||
	    npuipc_bo_create(fd, COPY_BYTES, NPUIPC_PAGE_CLASS_NORMAL, &b))
		_exit(2);
	for (i = 0; i < 2; i++)
		if (npuipc_submit1(fd, streams[i], npuipc_copy_job(b, 0, a, 0, COPY_BYTES)))
			_exit(3);
	end = now_s() + FLOOD_MAX_S;
	for (i = 0; now_s() < end && poll(&pfd, 1, 0) == 0; i ^= 1) {
		if (npuipc_wait(fd, streams[i], 60 * SEC_NS, 0, NULL) ||
		    npuipc_submit1(fd, streams[i], npuipc_copy_job(b, 0, a, 0, COPY_BYTES)))
			_exit(3);
		if (started)
			copied += COPY_BYTES;
		else if (write(out, "s", 1) != 1)
			_exit(4);
		started = true;
	}
	_exit(write(out, &copied, sizeof(copied)) == sizeof(copied) ? 0 : 5);
}

/* Starts a flood in cgroup @cg and returns once its first copy is done. */
static int copy_flood_start(struct copy_flood *flood, const char *cg)
{
	int stop[2], out[2];
	char c;

	if (pipe(stop))
		return -errno;
	if (pipe(out)) {
		close(stop[0]);
		close(stop[1]);
		return -errno;
	}
	flood->pid = fork();
	if (flood->pid == 0) {
		close(stop[1]);
		close(out[0]);
		copy_flood_child(cg, stop[0], out[1]);
	}
	close(stop[0]);
	close(out[1]);
	flood->stop = stop[1];
	flood->out = out[0];
	if (flood->pid < 0 || read(flood->out, &c, 1) != 1)
		return -ECHILD;	/* the child's exit status says why */
	return 0;
}

/* Tells a flood to stop, without waiting for it. */
static void copy_flood_signal(struct copy_flood *flood)
{
	if (flood->stop >= 0)
		close(flood->stop);
	flood->stop = -1;
}

/* Stops a flood; the bytes it copied once started, or -1 if it failed. */
static long long copy_flood_stop(struct copy_flood *flood)
{
	long long copied = -1;
	int status = -1;

	copy_flood_signal(flood);
	if (flood->pid > 0)
		waitpid(flood->pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    read(flood->out, &copied, sizeof(copied)) != sizeof(copied))
		copied = -1;
	close(flood->out);
	return copied;
}

static int make_cgroup(char *path, size_t size, const char *name)
{
	snprintf(path, size, CGROUP_ROOT "/npuipc-%s-%d", name, getpid());
	return mkdir(path, 0755) ? -errno : 0;
}

static int cgroup_write(const char *cg, const char *file, const char *value)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return npuipc_write_file(path, value);
}

/*
 * A process whose cgroup may use 10% of one CPU copies: its copies run in
 * that cgroup (the file's copy worker joined it), so they go at most at a
 * fraction of the pace of the same copies in a cgroup without a limit.
 * Copies run by a kernel thread outside the cgroup went as fast in both.
 * Both floods run in the same window, so that a machine that slows down
 * part-way slows both.
 */
TEST(copies_are_held_to_the_cpu_limit_of_the_submitters_cgroup)
{
	char free_cg[96], limited_cg[96];
	struct copy_flood unlimited_flood, limited_flood;
	long long unlimited, limited;
	int ret = controller_available("cpu");

	if (ret)
		SKIP(return, "no cpu controller: %s", strerror(-ret));
	if (npuipc_count_devices() == 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, make_cgroup(free_cg, sizeof(free_cg), "cpu-free"));
	ASSERT_EQ(0, make_cgroup(limited_cg, sizeof(limited_cg), "cpu-limited"));
	ret = cgroup_write(limited_cg, "cpu.max", "10000 100000");
	if (ret == -ENOENT) {	/* the debug kernel's defconfig has no CFS bandwidth */
		rmdir_cgroup(free_cg);
		rmdir_cgroup(limited_cg);
		SKIP(return, "no cpu.max: a kernel without CONFIG_CFS_BANDWIDTH");
	}
	ASSERT_EQ(0, ret);

	/*
	 * The unlimited flood starts last and stops first, so its window is
	 * the shorter one; it inherits the limited flood's stop pipe, which
	 * closes when it exits.
	 */
	ASSERT_EQ(0, copy_flood_start(&limited_flood, limited_cg));
	ASSERT_EQ(0, copy_flood_start(&unlimited_flood, free_cg));
	usleep(2000000);
	copy_flood_signal(&unlimited_flood);
	copy_flood_signal(&limited_flood);
	unlimited = copy_flood_stop(&unlimited_flood);
	limited = copy_flood_stop(&limited_flood);
	TH_LOG("copied side by side in about 2 s: %lld MiB without a limit, %lld MiB at 10%% of a CPU",
	       unlimited / MIB, limited / MIB);
	ASSERT_LT(0, unlimited);
	ASSERT_LE(0, limited);
	/* 10% of a CPU against at least half of one: a third leaves room. */
	EXPECT_LT(limited * 3, unlimited);

	EXPECT_EQ(0, rmdir_cgroup(free_cg));
	EXPECT_EQ(0, rmdir_cgroup(limited_cg));
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A nice-0 CPU hog in the calling thread for @seconds of wall time: the
 * share of that time the hog ran. A share, unlike a count of iterations,
 * does not depend on how fast the machine is in this window or another.
 */
static double spin_share(double seconds)
{
	volatile unsigned long x = 0;
	double cpu = thread_cpu_s(), start = now_s(), wall;

	do {
		for (int i = 0; i < 1000; i++)
			x += i;
		wall = now_s() - start;
	} while (wall < seconds);
	return (thread_cpu_s() - cpu) / wall;
}

/*
 * The least share of its CPU a nice-0 hog may keep beside a flood of
 * copies. Measured on one CPU: copies at nice 0 leave it 45-47% (the debug
 * kernel under TCG too); copies at nice -20 left it 7-9%.
 */
#define NICE_0_SHARE_FLOOR 0.2

/*
 * On one CPU (a cpuset), a nice-0 CPU-bound process and a process flooding
 * the engine with large copies: the copies run at nice 0 too, so the hog
 * keeps a fair share of its CPU while the flood goes on (a half, beside the
 * copy worker; the flooding process mostly waits).
 */
TEST(a_flood_of_copies_does_not_starve_a_nice_0_process_on_its_cpu)
{
	struct copy_flood flood;
	double alone, beside_copies;
	long long copied;
	char cg[96], pid[16];
	int ret = controller_available("cpuset");

	if (ret)
		SKIP(return, "no cpuset controller: %s", strerror(-ret));
	if (npuipc_count_devices() == 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, make_cgroup(cg, sizeof(cg), "one-cpu"));
	ASSERT_EQ(0, cgroup_write(cg, "cpuset.cpus", "0"));
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, cgroup_write(cg, "cgroup.procs", pid));

	alone = spin_share(0.5);
	ASSERT_EQ(0, copy_flood_start(&flood, cg));
	beside_copies = spin_share(1.0);
	copied = copy_flood_stop(&flood);
	TH_LOG("the hog's share of its CPU: %.0f%% alone, %.0f%% beside a flood of copies (%lld MiB copied)",
	       alone * 100, beside_copies * 100, copied / MIB);
	/* The flood went on through the hog's window. */
	EXPECT_LT(0, copied);
	EXPECT_GT(beside_copies, NICE_0_SHARE_FLOOR);

	EXPECT_EQ(0, npuipc_write_file(CGROUP_ROOT "/cgroup.procs", pid));
	EXPECT_EQ(0, rmdir_cgroup(cg));
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

/*
 * Tasks whose name is @name (or starts with it, when @prefix): copy
 * workers, named npuipc-cp/PID (a name is 15 bytes at most).
 */
static int tasks_named(const char *name, bool prefix)
{
	char comm[32], path[300];
	struct dirent *e;
	int n = 0;
	DIR *proc = opendir("/proc");

	if (!proc)
		return -1;
	while ((e = readdir(proc))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (npuipc_read_file(path, comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		n += prefix ? !strncmp(comm, name, strlen(name)) : !strcmp(comm, name);
	}
	closedir(proc);
	return n;
}

/* The copy worker of process @pid, if it has one. */
static int copy_workers_of(pid_t pid)
{
	char name[32];

	snprintf(name, sizeof(name), "npuipc-cp/%d", pid);
	name[15] = '\0';
	return tasks_named(name, false);
}

/* Every copy worker of the machine. */
static int copy_workers(void)
{
	return tasks_named("npuipc-cp/", true);
}

/*
 * A process's files share one copy worker: three files copying make one
 * thread, which goes with the last of them.
 */
TEST(a_process_has_one_copy_worker_however_many_files_copy)
{
	uint32_t stream, a, b;
	int fds[3], i, n;

	if (npuipc_count_devices() == 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	EXPECT_EQ(0, copy_workers_of(getpid()));
	for (i = 0; i < 3; i++) {
		fds[i] = npuipc_open_device(0);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, npuipc_obj_create(fds[i], NPUIPC_OBJ_STREAM, &stream));
		ASSERT_EQ(0, npuipc_bo_create(fds[i], 4096, NPUIPC_PAGE_CLASS_NORMAL, &a));
		ASSERT_EQ(0, npuipc_bo_create(fds[i], 4096, NPUIPC_PAGE_CLASS_NORMAL, &b));
		ASSERT_EQ(0, npuipc_submit1(fds[i], stream, npuipc_copy_job(b, 0, a, 0, 4096)));
		ASSERT_EQ(0, npuipc_wait(fds[i], stream, 10 * SEC_NS, 0, NULL));
	}
	EXPECT_EQ(1, copy_workers_of(getpid()));
	close(fds[0]);
	close(fds[1]);
	EXPECT_EQ(1, copy_workers_of(getpid()));
	close(fds[2]);
	for (i = 0; i < 100 && (n = copy_workers_of(getpid())); i++)
		usleep(10000);
	EXPECT_EQ(0, n);
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

/*
 * Files outlive processes: with max_copy_workers=1, processes of one user
 * that each keep a file which copied share one worker rather than add one
 * each.
 */
static void three_processes_share_one_worker(struct __test_metadata *_metadata, const char *max)
{
	const char *param = "/sys/module/npuipc/parameters/max_copy_workers";
	int ready[2], done[2], i, status, before;
	char old[16], c;
	pid_t kids[3];

	ASSERT_EQ(0, npuipc_read_file(param, old, sizeof(old)));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	before = copy_workers();
	/* From here to its restore, nothing returns early: no ASSERT. */
	ASSERT_EQ(0, npuipc_write_file(param, max));
	for (i = 0; i < 3; i++) {
		kids[i] = fork();
		EXPECT_LE(0, kids[i]);
		if (kids[i] == 0) {
			uint32_t stream, a, b;
			int fd;

			close(done[1]);	/* its end of file is the parent's close */
			close(ready[0]);
			fd = npuipc_open_device(0);
			if (fd < 0 || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream) ||
			    npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &a) ||
			    npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &b) ||
			    npuipc_submit1(fd, stream, npuipc_copy_job(b, 0, a, 0, 4096)) ||
			    npuipc_wait(fd, stream, 10 * SEC_NS, 0, NULL))
				_exit(1);
			if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) < 0)
				_exit(2);
			_exit(0);
		}
	}
	close(ready[1]);	/* a child that fails closes its end: no read hangs */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(before + 1, copy_workers());
	close(done[1]);	/* the children end */
	for (i = 0; i < 3; i++) {
		waitpid(kids[i], &status, 0);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(ready[0]);
	close(done[0]);
	EXPECT_EQ(0, npuipc_write_file(param, old));
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

TEST(past_max_copy_workers_a_users_processes_share_one)
{
	if (npuipc_count_devices() == 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	three_processes_share_one_worker(_metadata, "1");
}

/* 0 is taken as 1 (the parameter's documented floor), never as "none". */
TEST(max_copy_workers_0_is_taken_as_1)
{
	if (npuipc_count_devices() == 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	three_processes_share_one_worker(_metadata, "0");
}

/*
 * Streams share their process's copy worker by turns: a small FILL on one
 * stream does not wait behind 64 large COPYs queued on another. The busy
 * stream's last job copies the FILL's buffer: it finds the FILL's bytes
 * only if the FILL ran before the copies ahead of it were done, an order
 * the jobs themselves record, however fast or slow the machine.
 */
TEST(a_stream_full_of_copies_does_not_hold_back_another_streams_fill)
{
	uint32_t busy, other, a, b, c, d;
	struct drm_npuipc_job copies[65];
	size_t size;
	uint8_t *seen;
	int fd, i, status;

	fd = npuipc_open_device(0);
	if (fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &busy));
	ASSERT_EQ(0, npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &other));
	ASSERT_EQ(0, npuipc_bo_create(fd, COPY_BYTES, NPUIPC_PAGE_CLASS_NORMAL, &a));
	ASSERT_EQ(0, npuipc_bo_create(fd, COPY_BYTES, NPUIPC_PAGE_CLASS_NORMAL, &b));
	ASSERT_EQ(0, npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &c));
	ASSERT_EQ(0, npuipc_bo_create(fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &d));
	for (i = 0; i < 64; i++)
		copies[i] = npuipc_copy_job(b, 0, a, 0, COPY_BYTES);
	copies[64] = npuipc_copy_job(d, 0, c, 0, 4096);
	ASSERT_EQ(0, npuipc_submit(fd, busy, copies, 65, NULL));
	ASSERT_EQ(0, npuipc_submit1(fd, other, npuipc_fill_job(c, 0, 4096, 0x5a)));
	ASSERT_EQ(0, npuipc_wait(fd, other, 60 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, npuipc_wait(fd, busy, 60 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	seen = npuipc_bo_mmap(fd, d, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, seen);
	/* 0 would be the FILL run after all 512 MiB of copies. */
	EXPECT_TRUE(npuipc_all_bytes_are(seen, 4096, 0x5a)) TH_LOG("the busy stream's last copy found 0x%02x", seen[0]);
	munmap(seen, size);
	close(fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

TEST_HARNESS_MAIN
