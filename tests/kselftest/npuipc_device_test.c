// SPDX-License-Identifier: GPL-2.0
/*
 * Virtual devices and DRM_IOCTL_NPUIPC_GET_INFO: what the module parameters
 * create, what the device reports, and every input the ioctl must refuse.
 */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/wait.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define MIB (1024ULL * 1024ULL)

FIXTURE(device) {
	int fd;
};

FIXTURE_SETUP(device)
{
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
}

FIXTURE_TEARDOWN(device)
{
	if (self->fd >= 0)
		close(self->fd);
	/* Nothing a test made may outlive it. */
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

TEST_F(device, get_info_reports_version_index_budget_and_caps)
{
	struct drm_npuipc_get_info info = { 0 };

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_UAPI_VERSION, info.uapi_version);
	/* (The fixture found device 0 by its index: see the next test.) */
	EXPECT_EQ(npuipc_expected_mem_total(0), info.mem_total);
	EXPECT_EQ(info.mem_total, info.mem_free);
	/* Exactly one kind: RAM-backed virtual, or a PCI device's BAR. */
	EXPECT_EQ(npuipc_expected_pci(0) ? NPUIPC_CAP_PCI : NPUIPC_CAP_VIRTUAL,
		  info.caps & (NPUIPC_CAP_PCI | NPUIPC_CAP_VIRTUAL));
	EXPECT_TRUE(info.caps & NPUIPC_CAP_SYNCOBJ_TIMELINE);
	EXPECT_TRUE(info.caps & NPUIPC_CAP_RESET_NOTIFY);
	EXPECT_TRUE(info.caps & NPUIPC_CAP_CALLER_TGID);
	EXPECT_TRUE(info.caps & NPUIPC_CAP_BOUNDED_FENCES);
	EXPECT_TRUE(info.caps & NPUIPC_CAP_PRIME);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(0, info.pad);
	/* The tests run in the initial PID namespace. */
	EXPECT_EQ(getpid(), info.caller_tgid);
	EXPECT_EQ(0, info.pad2);
	EXPECT_EQ(0, info.pad3);
	EXPECT_EQ(NPUIPC_MAX_OBJECTS, info.objects_free) TH_LOG("a new file holds no object");
	EXPECT_EQ(0, info.pad4);
}

/* objects_free counts this file's handles of streams, events and notifies. */
TEST_F(device, get_info_counts_the_files_free_object_handles)
{
	uint32_t stream = 0, event = 0, imported = 0;
	struct drm_npuipc_get_info info = { 0 };
	int other = npuipc_open_device(0), obj_fd = -1;

	ASSERT_GE(other, 0);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_MAX_OBJECTS - 2, info.objects_free);
	/* Another file's handles are its own. */
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, npuipc_ioctl(other, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_MAX_OBJECTS, info.objects_free);
	/* An import takes a handle of the importing file. */
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &obj_fd));
	ASSERT_EQ(0, npuipc_obj_import(other, obj_fd, &imported));
	close(obj_fd);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, npuipc_ioctl(other, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_MAX_OBJECTS - 1, info.objects_free);
	EXPECT_EQ(0, npuipc_obj_destroy(other, imported));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, stream));
	/* A failed destroy changes nothing. */
	EXPECT_EQ(-ENOENT, npuipc_obj_destroy(self->fd, stream));
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_MAX_OBJECTS - 1, info.objects_free);
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_MAX_OBJECTS, info.objects_free);
	close(other);
}

/*
 * A PCI device's pci_address is the address of the device its render node
 * belongs to (domain << 16 | bus << 8 | devfn); a virtual device's is 0.
 */
TEST_F(device, get_info_reports_each_pci_devices_address)
{
	unsigned int seen = 0;
	int minor;

	for (minor = NPUIPC_RENDER_MINOR_FIRST; minor <= NPUIPC_RENDER_MINOR_LAST; minor++) {
		struct drm_npuipc_get_info info;
		unsigned int domain, bus, dev, fn;
		char path[96], target[256], *name;
		int ours = npuipc_render_node_info(minor, &info);
		ssize_t n;

		ASSERT_LE(0, ours) TH_LOG("renderD%d", minor);
		if (!ours)
			continue;
		seen++;
		if (!npuipc_expected_pci(info.device_index)) {
			EXPECT_EQ(0, info.pci_address) TH_LOG("renderD%d", minor);
			continue;
		}
		snprintf(path, sizeof(path), "/sys/class/drm/renderD%d/device", minor);
		n = readlink(path, target, sizeof(target) - 1);
		ASSERT_LT(0, n) TH_LOG("%s", path);
		target[n] = '\0';
		name = strrchr(target, '/');
		ASSERT_NE(NULL, name);
		ASSERT_EQ(4, sscanf(name + 1, "%x:%x:%x.%x", &domain, &bus, &dev, &fn)) TH_LOG("%s", target);
		EXPECT_EQ(domain << 16 | bus << 8 | dev << 3 | fn, info.pci_address)
			TH_LOG("renderD%d is %s", minor, name + 1);
	}
	EXPECT_EQ(npuipc_expected_device_count(), seen);
}

/* 0 is never a handle: the first buffer and the first object of a file get 1. */
TEST_F(device, handles_of_a_new_file_start_at_1)
{
	uint32_t buffer = 0, stream = 0;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &buffer));
	EXPECT_EQ(1, buffer);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));
	EXPECT_EQ(1, stream);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, buffer));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, stream));
}

/*
 * Indices, read from every render node rather than searched for: the
 * npuipc nodes carry 0 .. N-1 (the virtual devices, then the PCI ones),
 * each once, in the order of their minors (devices are made in index
 * order).
 */
TEST_F(device, render_nodes_carry_each_index_once_in_minor_order)
{
	unsigned int expected = 0;
	int minor;

	for (minor = NPUIPC_RENDER_MINOR_FIRST; minor <= NPUIPC_RENDER_MINOR_LAST; minor++) {
		struct drm_npuipc_get_info info;
		int ours = npuipc_render_node_info(minor, &info);

		ASSERT_LE(0, ours) TH_LOG("renderD%d", minor);
		if (!ours)
			continue;
		EXPECT_EQ(expected, info.device_index) TH_LOG("renderD%d", minor);
		expected++;
	}
	EXPECT_EQ(npuipc_expected_device_count(), expected);
}

/* udev names nodes by it (/dev/npuipc/N); it must be there before the node. */
TEST_F(device, sysfs_npuipc_index_of_each_node_is_its_get_info_index)
{
	unsigned int seen = 0;
	int minor;

	for (minor = NPUIPC_RENDER_MINOR_FIRST; minor <= NPUIPC_RENDER_MINOR_LAST; minor++) {
		struct drm_npuipc_get_info info;
		char path[96], text[32], expected[32];
		int ours = npuipc_render_node_info(minor, &info);

		ASSERT_LE(0, ours) TH_LOG("renderD%d", minor);
		if (!ours)
			continue;
		snprintf(path, sizeof(path), "/sys/class/drm/renderD%d/device/npuipc_index", minor);
		ASSERT_EQ(0, npuipc_read_file(path, text, sizeof(text))) TH_LOG("%s", path);
		snprintf(expected, sizeof(expected), "%u\n", info.device_index);
		EXPECT_STREQ(expected, text);
		seen++;
	}
	EXPECT_EQ(npuipc_expected_device_count(), seen);
}

TEST_F(device, get_info_reports_the_initial_namespace_pid_from_a_pid_namespace)
{
	int pipefd[2], status;
	uint32_t seen = 0;
	pid_t child;

	ASSERT_EQ(0, pipe(pipefd));
	if (unshare(CLONE_NEWPID))
		SKIP(return, "no PID namespaces: %s", strerror(errno));
	child = fork();	/* the first child of the new namespace: its PID 1 */
	ASSERT_LE(0, child);
	if (child == 0) {
		struct drm_npuipc_get_info info = { 0 };

		if (getpid() != 1 || npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info))
			_exit(1);
		_exit(write(pipefd[1], &info.caller_tgid, sizeof(info.caller_tgid)) ==
		      sizeof(info.caller_tgid) ? 0 : 1);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(sizeof(seen), read(pipefd[0], &seen, sizeof(seen)));
	EXPECT_EQ(child, seen);
	close(pipefd[0]);
	close(pipefd[1]);
}

static long long fdinfo_number(int fd, const char *key)
{
	char value[64];

	return npuipc_fdinfo_value(fd, key, value, sizeof(value)) ? -1 : strtoll(value, NULL, 10);
}

/* Documentation/gpu/drm-usage-stats.rst: what tools such as gputop read. */
TEST_F(device, fdinfo_reports_usage_stats_in_the_drm_format)
{
	struct drm_npuipc_job fill = { .kind = NPUIPC_JOB_FILL, .size = 1 << 20, .value = 7 };
	char value[64];
	uint32_t bo, imported, stream;
	int other, dmabuf, status, i;

	ASSERT_EQ(0, npuipc_fdinfo_value(self->fd, "drm-driver", value, sizeof(value)));
	EXPECT_STREQ("npuipc", value);
	other = npuipc_open_device(0);
	ASSERT_LE(0, other);
	EXPECT_LT(0, fdinfo_number(self->fd, "drm-client-id"));
	EXPECT_NE(fdinfo_number(self->fd, "drm-client-id"), fdinfo_number(other, "drm-client-id"));
	ASSERT_EQ(0, npuipc_fdinfo_value(self->fd, "drm-memory-device", value, sizeof(value)));
	EXPECT_STREQ("0 KiB", value);
	ASSERT_EQ(0, npuipc_fdinfo_value(self->fd, "drm-engine-copy", value, sizeof(value)));
	EXPECT_STREQ("0 ns", value);
	/* drm-pdev: a PCI device's address, as GET_INFO reports it. */
	if (npuipc_expected_pci(0)) {
		struct drm_npuipc_get_info info = { 0 };
		char expected[32];

		ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
		snprintf(expected, sizeof(expected), "%04x:%02x:%02x.%u", info.pci_address >> 16,
			 (info.pci_address >> 8) & 0xff, (info.pci_address >> 3) & 0x1f,
			 info.pci_address & 7);
		ASSERT_EQ(0, npuipc_fdinfo_value(self->fd, "drm-pdev", value, sizeof(value)));
		EXPECT_STREQ(expected, value);
	} else {
		EXPECT_NE(0, npuipc_fdinfo_value(self->fd, "drm-pdev", value, sizeof(value)));
	}

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 2 << 20, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	EXPECT_EQ(2048, fdinfo_number(self->fd, "drm-memory-device"));
	EXPECT_EQ(0, fdinfo_number(self->fd, "npuipc-memory-imported"));
	/* The other file imports it: its own memory stays 0. */
	ASSERT_EQ(0, npuipc_bo_export(self->fd, bo, 0, 1 << 20, 0, &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(other, dmabuf, 0, &imported));
	EXPECT_EQ(0, fdinfo_number(other, "drm-memory-device"));
	EXPECT_EQ(1024, fdinfo_number(other, "npuipc-memory-imported"));
	EXPECT_EQ(1, fdinfo_number(other, "npuipc-imports"));
	EXPECT_EQ(1, fdinfo_number(other, "npuipc-buffers"));
	EXPECT_EQ(0, fdinfo_number(self->fd, "npuipc-imports"));
	EXPECT_EQ(1, fdinfo_number(self->fd, "npuipc-buffers"));

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));
	fill.dst = bo;
	/*
	 * The engine time comes from the scheduler clock, which stands still
	 * between late timer ticks where the kernel found the TSC unstable
	 * (a loaded TCG host): one fill may count 0 ns there, hundreds cannot.
	 */
	for (i = 0; i < 256 && fdinfo_number(self->fd, "drm-engine-copy") <= 0; i++) {
		ASSERT_EQ(0, npuipc_submit1(self->fd, stream, fill));
		ASSERT_EQ(0, npuipc_wait(self->fd, stream, 10 * 1000000000LL, 0, &status));
		EXPECT_EQ(0, status);
	}
	EXPECT_LT(0, fdinfo_number(self->fd, "drm-engine-copy"));
	EXPECT_EQ(0, fdinfo_number(other, "drm-engine-copy"));

	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, stream));
	EXPECT_EQ(0, npuipc_gem_close(other, imported));
	EXPECT_EQ(0, fdinfo_number(other, "npuipc-imports"));
	close(dmabuf);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
	EXPECT_EQ(0, fdinfo_number(self->fd, "drm-memory-device"));
	close(other);
}

/*
 * npuipc's own fdinfo keys: what a user's npuipc-smi shows of its own
 * processes without debugfs. Jobs count until they complete: a wait behind
 * no record yet and the two jobs behind it are three.
 */
TEST_F(device, fdinfo_counts_the_files_buffers_objects_and_pending_jobs)
{
	struct drm_npuipc_job jobs[3] = {
		{ .kind = NPUIPC_JOB_WAIT_NOTIFY, .timeout_ns = 60000000000LL },
		{ .kind = NPUIPC_JOB_FILL, .size = 4096, .value = 1 },
		{ .kind = NPUIPC_JOB_FILL, .size = 4096, .value = 2 },
	};
	struct drm_npuipc_job record = { .kind = NPUIPC_JOB_RECORD_NOTIFY };
	uint32_t bo, streams[2], event, notify;
	int other, i;

	other = npuipc_open_device(0);
	ASSERT_LE(0, other);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, fdinfo_number(self->fd, (const char *[]){ "npuipc-buffers",
			"npuipc-streams", "npuipc-events", "npuipc-notifies", "npuipc-jobs" }[i]));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 4096, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &streams[i]));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	jobs[0].object = record.object = notify;
	jobs[1].dst = jobs[2].dst = bo;
	ASSERT_EQ(0, npuipc_submit(self->fd, streams[0], jobs, 3, NULL));
	EXPECT_EQ(1, fdinfo_number(self->fd, "npuipc-buffers"));
	EXPECT_EQ(2, fdinfo_number(self->fd, "npuipc-streams"));
	EXPECT_EQ(1, fdinfo_number(self->fd, "npuipc-events"));
	EXPECT_EQ(1, fdinfo_number(self->fd, "npuipc-notifies"));
	EXPECT_EQ(3, fdinfo_number(self->fd, "npuipc-jobs"));
	/* Another file of the same process counts its own. */
	EXPECT_EQ(0, fdinfo_number(other, "npuipc-streams"));
	EXPECT_EQ(0, fdinfo_number(other, "npuipc-jobs"));

	ASSERT_EQ(0, npuipc_submit(self->fd, streams[1], &record, 1, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, streams[0], 10000000000LL, 0, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, streams[1], 10000000000LL, 0, NULL));
	EXPECT_EQ(0, fdinfo_number(self->fd, "npuipc-jobs"));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, streams[0]));
	EXPECT_EQ(1, fdinfo_number(self->fd, "npuipc-streams"));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, streams[1]));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, notify));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, bo));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, fdinfo_number(self->fd, (const char *[]){ "npuipc-buffers",
			"npuipc-streams", "npuipc-events", "npuipc-notifies", "npuipc-jobs" }[i]));
	close(other);
}

TEST_F(device, get_info_of_the_40_byte_version_3_structure_still_works)
{
	/* An old binary: the structure before caller_tgid, its own ioctl number. */
	struct { __u32 flags, pad, uapi_version, device_index; __u64 mem_total, mem_free, caps; }
		old = { 0 };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_GET_INFO, old);

	ASSERT_EQ(0, npuipc_ioctl(self->fd, cmd, &old));
	EXPECT_EQ(NPUIPC_UAPI_VERSION, old.uapi_version);
	EXPECT_EQ(npuipc_expected_mem_total(0), old.mem_total);
}

TEST_F(device, get_info_of_the_56_byte_version_7_structure_still_works)
{
	/* A binary of uapi 7: the structure before objects_free. */
	struct { __u32 flags, pad, uapi_version, device_index; __u64 mem_total, mem_free, caps;
		 __u32 caller_tgid, pad2, pci_address, pad3; } old = { 0 };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_GET_INFO, old);

	ASSERT_EQ(56, sizeof(old));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, cmd, &old));
	EXPECT_EQ(NPUIPC_UAPI_VERSION, old.uapi_version);
	EXPECT_EQ(getpid(), old.caller_tgid);
}

TEST_F(device, module_parameters_create_that_many_devices_with_their_budgets)
{
	unsigned int i, num = npuipc_expected_device_count();

	ASSERT_EQ(num, npuipc_count_devices());
	for (i = 0; i < num; i++) {
		struct drm_npuipc_get_info info = { 0 };
		int fd = npuipc_open_device(i);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
		EXPECT_EQ(npuipc_expected_mem_total(i), info.mem_total);
		close(fd);
	}
}

TEST_F(device, driver_name_is_npuipc)
{
	char name[32] = { 0 };
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_VERSION, &v));
	EXPECT_STREQ(NPUIPC_DRIVER_NAME, name);
}

TEST_F(device, debugfs_state_matches_get_info)
{
	struct drm_npuipc_get_info info = { 0 };

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ((long long)info.device_index, npuipc_debugfs_value(self->fd, "device_index"));
	EXPECT_EQ((long long)info.mem_total, npuipc_debugfs_value(self->fd, "mem_total"));
	EXPECT_EQ((long long)info.mem_free, npuipc_debugfs_value(self->fd, "mem_free"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "mem_used"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
}

TEST_F(device, timeline_syncobjs_are_supported)
{
	struct drm_get_cap cap = { .capability = DRM_CAP_SYNCOBJ_TIMELINE };
	struct drm_syncobj_create create = { 0 };
	struct drm_syncobj_timeline_array query = { 0 };
	struct drm_syncobj_destroy destroy = { 0 };
	uint64_t point = 0;

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_GET_CAP, &cap));
	EXPECT_EQ(1, cap.value);

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &create));
	query.handles = (uintptr_t)&create.handle;
	query.points = (uintptr_t)&point;
	query.count_handles = 1;
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_QUERY, &query));
	EXPECT_EQ(0, point);
	destroy.handle = create.handle;
	EXPECT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &destroy));
}

/* Each bad input is its own test, named after what it sets. */
static void expect_get_info_rejected(struct __test_metadata *_metadata, int fd,
				     struct drm_npuipc_get_info *bad)
{
	NPUIPC_EXPECT_REFUSED(-EINVAL, fd, DRM_IOCTL_NPUIPC_GET_INFO, bad);
}

TEST_F(device, get_info_rejects_each_unknown_flag)
{
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		struct drm_npuipc_get_info info = { .flags = 1U << bit };

		if (NPUIPC_GET_INFO_FLAGS_VALID & (1U << bit))
			continue;
		expect_get_info_rejected(_metadata, self->fd, &info);
	}
}

/*
 * With drm.debug's driver category on, a refused argument leaves a line in
 * the kernel log naming the function and the check that failed.
 */
TEST_F(device, a_refused_argument_logs_the_failed_check_with_drm_debug)
{
	struct drm_npuipc_get_info info = { .pad = 1 };
	char old[32], record[1024];
	int kmsg, found = 0;
	ssize_t n;

	ASSERT_EQ(0, npuipc_read_file("/sys/module/drm/parameters/debug", old, sizeof(old)));
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	ASSERT_EQ(0, npuipc_write_file("/sys/module/drm/parameters/debug", "0x2"));
	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(0, npuipc_write_file("/sys/module/drm/parameters/debug", old));
	while ((n = read(kmsg, record, sizeof(record) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		record[n] = '\0';
		found |= strstr(record, "npuipc_ioctl_get_info: refused: args->pad ||") != NULL;
	}
	close(kmsg);
	EXPECT_TRUE(found);
}

TEST_F(device, get_info_rejects_nonzero_pad)
{
	struct drm_npuipc_get_info info = { .pad = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_uapi_version_on_entry)
{
	struct drm_npuipc_get_info info = { .uapi_version = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_device_index_on_entry)
{
	struct drm_npuipc_get_info info = { .device_index = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_mem_total_on_entry)
{
	struct drm_npuipc_get_info info = { .mem_total = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_mem_free_on_entry)
{
	struct drm_npuipc_get_info info = { .mem_free = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_caps_on_entry)
{
	struct drm_npuipc_get_info info = { .caps = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_caller_tgid_on_entry)
{
	struct drm_npuipc_get_info info = { .caller_tgid = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_pci_address_on_entry)
{
	struct drm_npuipc_get_info info = { .pci_address = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_pad3)
{
	struct drm_npuipc_get_info info = { .pad3 = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_objects_free_on_entry)
{
	struct drm_npuipc_get_info info = { .objects_free = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_pad4)
{
	struct drm_npuipc_get_info info = { .pad4 = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_nonzero_pad2)
{
	struct drm_npuipc_get_info info = { .pad2 = 1 };

	expect_get_info_rejected(_metadata, self->fd, &info);
}

TEST_F(device, get_info_rejects_unmapped_argument_with_efault)
{
	EXPECT_EQ(-EFAULT, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_GET_INFO, NULL));
}

TEST_F(device, unknown_driver_ioctl_is_rejected)
{
	struct drm_npuipc_get_info info = { 0 };
	unsigned long unknown = DRM_IOWR(DRM_COMMAND_BASE + 0x3f,
					 struct drm_npuipc_get_info);

	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, unknown, &info));
}

TEST(uapi_structures_are_padded_to_8_bytes)
{
	EXPECT_EQ(0, sizeof(struct drm_npuipc_get_info) % 8);
	EXPECT_EQ(64, sizeof(struct drm_npuipc_get_info));
	EXPECT_EQ(56, offsetof(struct drm_npuipc_get_info, objects_free));
	EXPECT_EQ(48, offsetof(struct drm_npuipc_get_info, pci_address));
	EXPECT_EQ(40, offsetof(struct drm_npuipc_get_info, caller_tgid));
	EXPECT_EQ(32, offsetof(struct drm_npuipc_get_info, caps));
}

TEST_HARNESS_MAIN
