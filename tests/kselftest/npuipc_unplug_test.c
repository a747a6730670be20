// SPDX-License-Identifier: GPL-2.0
/*
 * Unplug with live users (tools/check step 9, and make check-debug): run
 * in a vm-run guest with two --pci-npu devices and num_devices=1
 * bind_ivshmem=1, so that device 0 is virtual and devices 1 and 2 are mock
 * PCI NPUs.
 *
 * Device 1 is removed while a buffer of its BAR is mapped here, exported,
 * imported and mapped by another process through device 0, and while a
 * stream of it has work queued behind a wait: every mapping is revoked
 * (SIGBUS), its ioctls fail with -ENODEV, the queued work's fence signals
 * an error, the importer's copies from it fail, and a rescan or QEMU's
 * device_add brings a usable device back at the same index. A virtual
 * device unbound through sysfs keeps its importers' data (its memory is
 * RAM). Nothing of it may leak: vm-run unloads the module at the end.
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define MIB (1024ULL * 1024ULL)
#define PCI_INDEX 1
#define BUF_SIZE (2 * MIB)

static sigjmp_buf bus_jump;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jump, 1);
}

/* 1 if reading @p raises SIGBUS, 0 if it reads @want, -1 otherwise. */
static int read_faults(const volatile uint8_t *p, uint8_t want)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int ret;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(bus_jump, 1))
		ret = 1;
	else
		ret = *p == want ? 0 : -1;
	sigaction(SIGBUS, &old, NULL);
	return ret;
}

/* The sysfs directory of device @index's PCI device, into @path. */
static int pci_dir_of(unsigned int index, char *path, size_t size)
{
	int minor;

	for (minor = NPUIPC_RENDER_MINOR_FIRST; minor <= NPUIPC_RENDER_MINOR_LAST; minor++) {
		struct drm_npuipc_get_info info;
		char link[64];

		if (npuipc_render_node_info(minor, &info) != 1 || info.device_index != index)
			continue;
		snprintf(link, sizeof(link), "/sys/class/drm/renderD%d/device", minor);
		return realpath(link, path) ? 0 : -errno;
	}
	return -ENODEV;
}

/* Waits (60 s: a re-probe is slow on the debug kernel) until device @index is there (@present) or gone. */
static bool device_settles(unsigned int index, bool present)
{
	int i, fd;

	for (i = 0; i < 6000; i++) {
		fd = npuipc_open_device(index);
		if (fd >= 0)
			close(fd);
		if ((fd >= 0) == present)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The other process: imports @dmabuf on device @index (peer access), maps
 * it and checks it holds @pattern, tells the parent (one byte on @sock),
 * waits for its word that the exporter is gone, then reports (a byte
 * each): what reading its mapping does (read_faults(): 1 SIGBUS, 0 the
 * pattern), and the status of a copy from the import (as a positive errno).
 */
static void importer(int sock, int dmabuf, unsigned int index, uint8_t pattern)
{
	uint32_t import, local, stream;
	uint8_t *map, report[2] = { 0xff, 0xff };
	int fd = npuipc_open_device(index), status = 0;
	size_t size;
	char go;

	if (fd < 0 || npuipc_bo_import(fd, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &import) ||
	    npuipc_bo_create(fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &local) ||
	    npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &stream))
		_exit(2);
	map = npuipc_bo_mmap(fd, import, PROT_READ, &size);
	if (map == MAP_FAILED || read_faults(map, pattern))
		_exit(3);
	if (write(sock, "r", 1) != 1 || read(sock, &go, 1) != 1)
		_exit(4);
	report[0] = read_faults(map, pattern);
	if (!npuipc_submit1(fd, stream, npuipc_copy_job(local, 0, import, 0, BUF_SIZE)) &&
	    !npuipc_wait(fd, stream, 10LL * 1000000000, NPUIPC_WAIT_RECOVER, &status))
		report[1] = -status;
	_exit(write(sock, report, 2) == 2 ? 0 : 5);
}

FIXTURE(unplug) {
	unsigned long long bar_size;	/* device 1's, and the one plugged back */
	int fd, watch_fd, sock;
	uint32_t bo, stream, gate, event;
	uint32_t watched;	/* the event, imported into device 0 */
	uint8_t *map;
	pid_t child;
	char pci_dir[PATH_MAX];
};

FIXTURE_SETUP(unplug)
{
	int pair[2], dmabuf, event_fd;
	size_t size;
	char ready;

	self->fd = self->watch_fd = self->sock = -1;
	self->child = 0;
	self->map = MAP_FAILED;
	self->pci_dir[0] = '\0';
	if (!npuipc_binds_pci() || !npuipc_expected_pci(PCI_INDEX))
		SKIP(return, "needs num_devices=1 bind_ivshmem=1 and mock PCI NPUs");
	ASSERT_EQ(0, pci_dir_of(PCI_INDEX, self->pci_dir, sizeof(self->pci_dir)));
	self->fd = npuipc_open_device(PCI_INDEX);
	ASSERT_LE(0, self->fd);
	self->bar_size = npuipc_expected_mem_total(PCI_INDEX);

	/* A buffer of the BAR, mapped here with a pattern in it. */
	ASSERT_EQ(0, npuipc_bo_create(self->fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &self->bo));
	self->map = npuipc_bo_mmap(self->fd, self->bo, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, self->map);
	memset(self->map, 0x5a, BUF_SIZE);

	/*
	 * Work queued behind a gate no one opens, then a record of an event,
	 * watched from device 0 (which stays): pending until the unplug.
	 */
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &self->gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &self->event));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(self->gate), npuipc_fill_job(self->bo, 0, BUF_SIZE, 0x11),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, self->event) }, 3, NULL));
	self->watch_fd = npuipc_open_device(0);
	ASSERT_LE(0, self->watch_fd);
	ASSERT_EQ(0, npuipc_obj_export(self->fd, self->event, 0, &event_fd));
	ASSERT_EQ(0, npuipc_obj_import(self->watch_fd, event_fd, &self->watched));
	close(event_fd);
	ASSERT_EQ(-ETIME, npuipc_wait(self->watch_fd, self->watched, 0, 0, NULL));

	/* Another process imports and maps the buffer through device 0. */
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->bo, 0, BUF_SIZE, 0, &dmabuf));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(pair[0]);
		importer(pair[1], dmabuf, 0, 0x5a);
	}
	close(pair[1]);
	close(dmabuf);
	self->sock = pair[0];
	ASSERT_EQ(1, read(self->sock, &ready, 1)) TH_LOG("the importer did not get ready");
}

/* Waits (60 s) until the PCI device at @dir is gone: its remove is over. */
static bool pci_dir_gone(const char *dir)
{
	int i;

	for (i = 0; i < 6000; i++) {
		if (access(dir, F_OK))
			return true;
		usleep(10000);
	}
	return false;
}

FIXTURE_TEARDOWN(unplug)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->map != MAP_FAILED)
		munmap(self->map, BUF_SIZE);
	if (self->watch_fd >= 0)
		close(self->watch_fd);
	if (self->sock >= 0)
		close(self->sock);
	if (self->fd >= 0)
		close(self->fd);
	/* A test that failed half way must not leave device 1 gone for the next. */
	if (self->pci_dir[0] && access(self->pci_dir, F_OK)) {
		npuipc_write_file("/sys/bus/pci/rescan", "1");
		device_settles(PCI_INDEX, true);
	}
	/* Nothing of the unplugged device's users may outlive them. */
	EXPECT_TRUE(npuipc_device_is_idle(0));
	EXPECT_TRUE(npuipc_device_is_idle(2));
}

/* What every unplug of device 1 must do to its users, checked here. */
static void expect_unplugged(struct __test_metadata *_metadata,
			     FIXTURE_DATA(unplug) *self)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NPUIPC_GET_INFO, DRM_IOCTL_NPUIPC_BO_CREATE, DRM_IOCTL_NPUIPC_BO_INFO,
		DRM_IOCTL_NPUIPC_BO_EXPORT, DRM_IOCTL_NPUIPC_BO_IMPORT, DRM_IOCTL_NPUIPC_OBJ_CREATE,
		DRM_IOCTL_NPUIPC_OBJ_DESTROY, DRM_IOCTL_NPUIPC_OBJ_EXPORT, DRM_IOCTL_NPUIPC_OBJ_IMPORT,
		DRM_IOCTL_NPUIPC_SUBMIT, DRM_IOCTL_NPUIPC_WAIT, DRM_IOCTL_GEM_CLOSE,
		DRM_IOCTL_PRIME_HANDLE_TO_FD, DRM_IOCTL_PRIME_FD_TO_HANDLE,
	};
	uint8_t report[2];
	unsigned int i;
	int status;

	/* Every ioctl of the file, whatever its argument. */
	for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		uint64_t arg[16] = { 0 };

		ASSERT_GE(sizeof(arg), _IOC_SIZE(requests[i]));
		EXPECT_EQ(-ENODEV, npuipc_ioctl(self->fd, requests[i], arg))
			TH_LOG("ioctl %#lx", requests[i]);
	}
	EXPECT_EQ(1, read_faults(self->map, 0x5a)) TH_LOG("the exporter's mapping");
	/* The queued work was cancelled: the record behind it ended with an error. */
	EXPECT_EQ(0, npuipc_wait(self->watch_fd, self->watched, 10LL * 1000000000, 0, &status));
	EXPECT_EQ(-ECANCELED, status);

	ASSERT_EQ(1, write(self->sock, "g", 1));
	ASSERT_EQ(2, read(self->sock, report, 2));
	EXPECT_EQ(1, report[0]) TH_LOG("the importer's mapping did not fault");
	EXPECT_EQ(ENODEV, report[1]) TH_LOG("the importer's copy ended with status -%u", report[1]);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("importer status %d", status);
}

/* The device is back at its index, empty and usable. */
static void expect_back(struct __test_metadata *_metadata, unsigned long long bar_size)
{
	struct drm_npuipc_get_info info = { 0 };
	uint32_t bo;
	uint8_t *map;
	size_t size;
	int fd;

	ASSERT_TRUE(device_settles(PCI_INDEX, true));
	fd = npuipc_open_device(PCI_INDEX);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_TRUE(info.caps & NPUIPC_CAP_PCI);
	EXPECT_EQ(bar_size, info.mem_total);
	EXPECT_EQ(info.mem_total, info.mem_free);
	ASSERT_EQ(0, npuipc_bo_create(fd, BUF_SIZE, NPUIPC_PAGE_CLASS_HUGE, &bo));
	map = npuipc_bo_mmap(fd, bo, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(1, npuipc_all_bytes_are(map, BUF_SIZE, 0));
	map[7] = 7;
	EXPECT_EQ(7, map[7]);
	munmap(map, size);
	close(fd);
}

/* Minutes, not the harness's 30 s: the debug kernel is slow to re-probe. */
TEST_F_TIMEOUT(unplug, sysfs_remove_revokes_mappings_and_cancels_work_and_a_rescan_brings_it_back, 180)
{
	char path[PATH_MAX + 16];

	/* Pending until the unplug: a gate that timed out would cancel it too. */
	ASSERT_EQ(-ETIME, npuipc_wait(self->watch_fd, self->watched, 0, 0, NULL));
	snprintf(path, sizeof(path), "%s/remove", self->pci_dir);
	ASSERT_EQ(0, npuipc_write_file(path, "1"));
	EXPECT_TRUE(pci_dir_gone(self->pci_dir));
	EXPECT_TRUE(device_settles(PCI_INDEX, false));
	expect_unplugged(_metadata, self);
	/* Device 2 did not move. */
	EXPECT_TRUE(device_settles(2, true));

	ASSERT_EQ(0, npuipc_write_file("/sys/bus/pci/rescan", "1"));
	expect_back(_metadata, self->bar_size);
}

/*
 * QEMU unplugs the device (the guest's pciehp removes it, after the 5 s a
 * button press leaves to cancel), then plugs one back.
 */
TEST_F_TIMEOUT(unplug, qemu_device_del_revokes_mappings_and_cancels_work_and_device_add_brings_one_back, 180)
{
	const char *qmp = getenv("NPUIPC_VM_QMP");
	/* A backend id of its own: QEMU keeps the old ones. */
	int plugs = getpid();
	char cmd[512];

	if (!qmp)
		SKIP(return, "NPUIPC_VM_QMP (tools/vm-qmp) is not set");
	ASSERT_EQ(-ETIME, npuipc_wait(self->watch_fd, self->watched, 0, 0, NULL));
	/* Device 1 is the first of --pci-npu: QOM id npu0 on port npuport0. */
	snprintf(cmd, sizeof(cmd), "%s device_del '{\"id\": \"npu0\"}' > /dev/null", qmp);
	ASSERT_EQ(0, system(cmd));
	EXPECT_TRUE(pci_dir_gone(self->pci_dir));
	EXPECT_TRUE(device_settles(PCI_INDEX, false));
	expect_unplugged(_metadata, self);

	/* QEMU 7.2 needs a fresh memory backend per plug (Documentation/testing.md). */
	snprintf(cmd, sizeof(cmd),
		 "%s object-add '{\"qom-type\": \"memory-backend-ram\", \"id\": \"npumem0.%d\", "
		 "\"size\": %llu, \"share\": true}' > /dev/null && "
		 "%s device_add '{\"driver\": \"ivshmem-plain\", \"id\": \"npu0\", "
		 "\"memdev\": \"npumem0.%d\", \"bus\": \"npuport0\"}' > /dev/null",
		 qmp, plugs, self->bar_size, qmp, plugs);
	ASSERT_EQ(0, system(cmd));
	expect_back(_metadata, self->bar_size);
}

/*
 * A virtual device unbound through sysfs: its ioctls fail with -ENODEV,
 * but its memory is RAM, so a mapping here, and an importer in another
 * process (through PCI device 2), keep its data, and the importer's copies
 * from it go on working; bound again, it is back at its index.
 */
TEST(virtual_device_unbind_keeps_mapped_data_and_bind_brings_it_back)
{
	const char *name = "npuipc-vdev.0";
	struct drm_npuipc_get_info info = { 0 };
	uint8_t *map, report[2];
	int fd = npuipc_open_device(0), pair[2], dmabuf, status;
	uint32_t bo;
	size_t size;
	pid_t child;
	char ready;

	if (!npuipc_binds_pci() || !npuipc_expected_pci(2))
		SKIP(return, "needs num_devices=1 bind_ivshmem=1 and two mock PCI NPUs");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, npuipc_bo_create(fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	map = npuipc_bo_mmap(fd, bo, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, map);
	memset(map, 0x3c, BUF_SIZE);
	ASSERT_EQ(0, npuipc_bo_export(fd, bo, 0, BUF_SIZE, 0, &dmabuf));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(pair[0]);
		importer(pair[1], dmabuf, 2, 0x3c);
	}
	close(pair[1]);
	close(dmabuf);
	ASSERT_EQ(1, read(pair[0], &ready, 1));

	ASSERT_EQ(0, npuipc_write_file("/sys/bus/platform/drivers/npuipc-vdev/unbind", name));
	EXPECT_EQ(-ENODEV, npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(0, read_faults(map, 0x3c));
	EXPECT_EQ(1, npuipc_all_bytes_are(map, BUF_SIZE, 0x3c));
	ASSERT_EQ(1, write(pair[0], "g", 1));
	ASSERT_EQ(2, read(pair[0], report, 2));
	EXPECT_EQ(0, report[0]) TH_LOG("the importer's mapping lost the data (%u)", report[0]);
	EXPECT_EQ(0, report[1]) TH_LOG("the importer's copy ended with status -%u", report[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("importer status %d", status);
	close(pair[0]);
	munmap(map, size);
	close(fd);

	ASSERT_EQ(0, npuipc_write_file("/sys/bus/platform/drivers/npuipc-vdev/bind", name));
	ASSERT_TRUE(device_settles(0, true));
	fd = npuipc_open_device(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_TRUE(info.caps & NPUIPC_CAP_VIRTUAL);
	EXPECT_EQ(info.mem_total, info.mem_free);
	close(fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
	EXPECT_TRUE(npuipc_device_is_idle(2));
}

TEST_HARNESS_MAIN
