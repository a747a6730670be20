/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the npuipc kselftests: finding npuipc render nodes,
 * reading module parameters and the per-device debugfs state.
 */
#ifndef NPUIPC_TEST_UTIL_H
#define NPUIPC_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <dirent.h>
#include <stdbool.h>
#include <linux/sync_file.h>

#include "drm.h"
#include "drm/npuipc_drm.h"

#define NPUIPC_RENDER_MINOR_FIRST 128
#define NPUIPC_RENDER_MINOR_LAST 191

/*
 * ioctl() returning -errno. Unlike libdrm's drmIoctl() it never retries, so
 * a test sees an -EINTR or -EAGAIN of the driver's own. (The tests that
 * install a signal handler without SA_RESTART call ioctl() themselves.)
 */
static inline int npuipc_ioctl(int fd, unsigned long request, void *arg)
{
	int ret = ioctl(fd, request, arg);

	return ret == -1 ? -errno : ret;
}

/*
 * In a kselftest: the ioctl fails with @err and writes nothing back into
 * *@arg (DRM copies the argument back to userspace whatever the result, so
 * the driver must leave it as it came).
 */
#define NPUIPC_EXPECT_REFUSED(err, fd, request, arg)				\
	do {									\
		unsigned char sent_[_IOC_SIZE(request)];			\
										\
		memcpy(sent_, (arg), sizeof(sent_));				\
		EXPECT_EQ((err), npuipc_ioctl((fd), (request), (arg)));		\
		EXPECT_EQ(0, memcmp(sent_, (arg), sizeof(sent_)));		\
	} while (0)

static inline int npuipc_is_npuipc_fd(int fd)
{
	char name[32] = { 0 };
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	if (npuipc_ioctl(fd, DRM_IOCTL_VERSION, &v))
		return 0;
	return strcmp(name, NPUIPC_DRIVER_NAME) == 0;
}

/*
 * GET_INFO of render node @minor: 1 with *@info filled when it is an npuipc
 * node, 0 when it is absent or another driver's, -errno when GET_INFO fails.
 */
static inline int npuipc_render_node_info(int minor, struct drm_npuipc_get_info *info)
{
	char path[32];
	int fd, ret;

	snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memset(info, 0, sizeof(*info));
	ret = npuipc_is_npuipc_fd(fd);
	if (ret)
		ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, info) ?: 1;
	close(fd);
	return ret;
}

/*
 * Opens the render node of the npuipc device with @index; -ENODEV when there
 * is none. Render minors are not device indices: vgem or a real GPU may take
 * some, so every node is asked.
 */
static inline int npuipc_open_device(unsigned int index)
{
	char path[64];
	int minor, fd;

	for (minor = NPUIPC_RENDER_MINOR_FIRST; minor <= NPUIPC_RENDER_MINOR_LAST; minor++) {
		struct drm_npuipc_get_info info = { 0 };

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (npuipc_is_npuipc_fd(fd) &&
		    !npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_GET_INFO, &info) &&
		    info.device_index == index)
			return fd;
		close(fd);
	}
	return -ENODEV;
}

/* Number of npuipc render nodes present. */
static inline unsigned int npuipc_count_devices(void)
{
	unsigned int n = 0;
	int fd;

	while ((fd = npuipc_open_device(n)) >= 0) {
		close(fd);
		n++;
	}
	return n;
}

/* Reads a whole sysfs/debugfs file into @buf; -errno on failure. */
static inline int npuipc_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * Value of "key: value" in the device's debugfs npuipc_state file; -1 when
 * the file or key is missing.
 */
static inline long long npuipc_debugfs_value(int fd, const char *key)
{
	char path[96], buf[1024], *line;
	size_t keylen = strlen(key);
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%u/npuipc_state",
		 minor(st.st_rdev));
	if (npuipc_read_file(path, buf, sizeof(buf)))
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, key, keylen) && line[keylen] == ':')
			return strtoll(line + keylen + 1, NULL, 0);
	return -1;
}

/* Writes @text to the file at @path (sysfs, cgroupfs); 0, -errno or -1. */
static inline int npuipc_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Polls (10 s at most, as npuipc_device_is_idle() does) until debugfs @key
 * of @fd reads @value, since some frees come after RCU grace periods or from
 * a worker; returns the last value read.
 */
static inline long long npuipc_debugfs_settles_at(int fd, const char *key, long long value)
{
	long long now = npuipc_debugfs_value(fd, key);
	int i;

	for (i = 0; i < 1000 && now != value; i++) {
		usleep(10000);
		now = npuipc_debugfs_value(fd, key);
	}
	return now;
}

/* The value of "@key:" in /proc/self/fdinfo/@fd, as text, into @out; 0 or -1. */
static inline int npuipc_fdinfo_value(int fd, const char *key, char *out, size_t size)
{
	char path[64], buf[2048], *line;
	size_t keylen = strlen(key);

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (npuipc_read_file(path, buf, sizeof(buf)))
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, key, keylen) && line[keylen] == ':') {
			line += keylen + 1;
			line += strspn(line, " \t");
			snprintf(out, size, "%s", line);
			return 0;
		}
	}
	return -1;
}

/* Module parameter as an integer list; returns how many values were read. */
static inline int npuipc_module_param(const char *name, long *values, int max)
{
	char path[96], buf[256], *p = buf, *end;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/module/npuipc/parameters/%s", name);
	if (npuipc_read_file(path, buf, sizeof(buf)))
		return -1;
	while (n < max) {
		long v = strtol(p, &end, 0);

		if (end == p)
			break;
		values[n++] = v;
		p = end + (*end == ',');
	}
	return n;
}

/* Whether the module binds mock PCI NPUs (bind_ivshmem=1). */
static inline bool npuipc_binds_pci(void)
{
	char text[8];

	return !npuipc_read_file("/sys/module/npuipc/parameters/bind_ivshmem", text, sizeof(text)) &&
	       text[0] == 'Y';
}

#define NPUIPC_MAX_PCI_NPUS 16

/*
 * The mock PCI NPUs the module binds with bind_ivshmem=1: QEMU's ivshmem
 * devices (PCI 1af4:1110), in PCI address order (the probe order): their
 * BAR2 sizes. Returns how many.
 */
static inline int npuipc_pci_npu_sizes(unsigned long long *sizes, int max)
{
	struct dirent **names;
	int n, i, found = 0;

	n = scandir("/sys/bus/pci/devices", &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		char path[300], text[256];
		unsigned long long start = 0, end = 0;
		char *line;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", names[i]->d_name);
		if (npuipc_read_file(path, text, sizeof(text)) || strcmp(text, "0x1af4\n"))
			goto next;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", names[i]->d_name);
		if (npuipc_read_file(path, text, sizeof(text)) || strcmp(text, "0x1110\n"))
			goto next;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", names[i]->d_name);
		if (npuipc_read_file(path, text, sizeof(text)))
			goto next;
		/* Lines "start end flags"; BAR2's is the third. */
		line = strchr(text, '\n');
		line = line ? strchr(line + 1, '\n') : NULL;
		if (found < max && line && sscanf(line + 1, "%llx %llx", &start, &end) == 2)
			sizes[found++] = end - start + 1;
next:
		free(names[i]);
	}
	if (n > 0)
		free(names);
	return found;
}

/*
 * The devices the module should have: num_devices virtual ones, then, with
 * bind_ivshmem=1, one per mock PCI NPU.
 */
static inline unsigned int npuipc_expected_device_count(void)
{
	unsigned long long sizes[NPUIPC_MAX_PCI_NPUS];
	long num = 0;

	if (npuipc_module_param("num_devices", &num, 1) != 1)
		return 0;
	return num + (npuipc_binds_pci() ? npuipc_pci_npu_sizes(sizes, NPUIPC_MAX_PCI_NPUS) : 0);
}

/* Whether device @index is a mock PCI NPU (it comes after the virtual ones). */
static inline bool npuipc_expected_pci(unsigned int index)
{
	long num = 0;

	return npuipc_module_param("num_devices", &num, 1) == 1 && index >= (unsigned long)num;
}

/*
 * Device @index's budget: a virtual device's from mem_mib (256 MiB by
 * default; the last value given holds for the devices after it), a PCI
 * device's its BAR.
 */
static inline unsigned long long npuipc_expected_mem_total(unsigned int index)
{
	unsigned long long sizes[NPUIPC_MAX_PCI_NPUS];
	long mib[16], num = 0;
	int n;

	npuipc_module_param("num_devices", &num, 1);
	if (index >= (unsigned long)num) {
		n = npuipc_pci_npu_sizes(sizes, NPUIPC_MAX_PCI_NPUS);
		return index - (unsigned long)num < (unsigned long)n ? sizes[index - num] : 0;
	}
	n = npuipc_module_param("mem_mib", mib, 16);
	if (n <= 0)
		return 256ULL << 20;
	return (unsigned long long)mib[index < (unsigned int)n ? index : (unsigned int)n - 1] << 20;
}

static inline int npuipc_bo_create(int fd, uint64_t size, uint32_t page_class,
				   uint32_t *handle)
{
	struct drm_npuipc_bo_create args = { .size = size, .page_class = page_class };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_BO_CREATE, &args);

	if (!ret)
		*handle = args.handle;
	return ret;
}

static inline int npuipc_bo_info(int fd, uint32_t handle, struct drm_npuipc_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_BO_INFO, info);
}

static inline int npuipc_bo_export(int fd, uint32_t handle, uint64_t offset,
				   uint64_t size, uint32_t flags, int *dmabuf_fd)
{
	struct drm_npuipc_bo_export args = {
		.handle = handle, .flags = flags, .offset = offset, .size = size,
	};
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_BO_EXPORT, &args);

	if (!ret)
		*dmabuf_fd = args.fd;
	return ret;
}

static inline int npuipc_bo_import(int fd, int dmabuf_fd, uint32_t flags,
				   uint32_t *handle)
{
	struct drm_npuipc_bo_import args = { .fd = dmabuf_fd, .flags = flags };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_BO_IMPORT, &args);

	if (!ret)
		*handle = args.handle;
	return ret;
}

static inline int npuipc_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	return npuipc_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args);
}

/* Maps a whole buffer through the DRM fd; MAP_FAILED with errno set on error. */
static inline void *npuipc_bo_mmap(int fd, uint32_t handle, int prot, size_t *size)
{
	struct drm_npuipc_bo_info info;
	int ret = npuipc_bo_info(fd, handle, &info);

	if (ret) {
		errno = -ret;
		return MAP_FAILED;
	}
	*size = info.size;
	return mmap(NULL, info.size, prot, MAP_SHARED, fd, info.mmap_offset);
}

/* Sends one fd over a Unix socket with SCM_RIGHTS; -errno on failure. */
static inline int npuipc_send_fd_flags(int sock, int fd, int flags)
{
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	memset(control.buf, 0, sizeof(control.buf));
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, flags) == 1 ? 0 : -errno;
}

static inline int npuipc_send_fd(int sock, int fd)
{
	return npuipc_send_fd_flags(sock, fd, 0);
}

/* Receives one fd sent by npuipc_send_fd(); -errno on failure. */
static inline int npuipc_recv_fd_flags(int sock, int flags)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags) != 1)
		return -EPROTO;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

static inline int npuipc_recv_fd(int sock)
{
	return npuipc_recv_fd_flags(sock, 0);
}

/*
 * Lowers RLIMIT_NOFILE to 32 and fills the fd table with up to @max fds of
 * /dev/null, kept in @fillers: the next new fd is -EMFILE. Returns how many
 * it opened, or -1 (with none left open) if the table did not fill.
 */
static inline int npuipc_fill_fd_table(int *fillers, int max)
{
	struct rlimit lim = { .rlim_cur = 32, .rlim_max = 32 };
	int n = 0, fd;

	if (setrlimit(RLIMIT_NOFILE, &lim))
		return -1;
	while (n < max && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fillers[n++] = fd;
	if (n < max && errno == EMFILE)
		return n;
	while (n > 0)
		close(fillers[--n]);
	return -1;
}

static inline void npuipc_empty_fd_table(const int *fillers, int n)
{
	while (n > 0)
		close(fillers[--n]);
}

/*
 * Field @key of /proc/self/smaps, in kB, for the mapping that starts at
 * @addr (FilePmdMapped: what PMD entries map of a file); -1 if none.
 */
static inline long npuipc_smaps_kib(const void *addr, const char *key)
{
	char line[512], start[32];
	size_t keylen = strlen(key);
	long value = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)(uintptr_t)addr);
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line starts with its address, in lower-case hex. */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
			if (in)
				break;
			in = !strncmp(line, start, strlen(start));
		} else if (in && !strncmp(line, key, keylen) && line[keylen] == ':') {
			value = strtol(line + keylen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return value;
}

/*
 * Whether the running kernel maps PFN maps with 2 MiB entries where the
 * driver asks (huge_fault + vmf_insert_pfn_pmd): 6.12 on, on x86-64.
 */
static inline bool npuipc_kernel_has_huge_pfnmap(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 12);
}

/* True when all @size bytes at @p are @value. */
static inline int npuipc_all_bytes_are(const uint8_t *p, size_t size, uint8_t value)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (p[i] != value)
			return 0;
	return 1;
}

/*
 * What the leak check counts (debugfs npuipc_state): the device's memory
 * and GEM objects (buffers and imports), then live objects of the whole
 * module by kind.
 */
static const char *const npuipc_leak_counters[] = {
	"mem_used", "live_objects", "imports", "streams", "events",
	"notifies", "jobs", "dmabufs", "object_files",
};

/* True when every leak counter of the device behind @fd reads 0. */
static inline int npuipc_counters_are_zero(int fd)
{
	size_t i;

	for (i = 0; i < sizeof(npuipc_leak_counters) / sizeof(npuipc_leak_counters[0]); i++)
		if (npuipc_debugfs_value(fd, npuipc_leak_counters[i]) != 0)
			return 0;
	return 1;
}

/*
 * True once device @index holds no memory and the module no object of any
 * kind. Objects of exited processes go when their files are released, which
 * may trail the exit a little, done jobs are let go by a work item, and
 * fences freed an RCU grace period after their last reference (thousands
 * of them after the limits tests, under KASAN), so this polls for up to
 * ten seconds; then it prints what is left.
 */
static inline int npuipc_device_is_idle(unsigned int index)
{
	int fd = npuipc_open_device(index), i, idle = 0;
	size_t k;

	if (fd < 0) {
		fprintf(stderr, "# device %u: cannot open it to check it is idle: %s\n", index,
			strerror(-fd));
		return 0;
	}
	for (i = 0; i < 1000 && !idle; i++) {
		idle = npuipc_counters_are_zero(fd);
		if (!idle)
			usleep(10000);
	}
	if (!idle)
		for (k = 0; k < sizeof(npuipc_leak_counters) / sizeof(npuipc_leak_counters[0]); k++)
			fprintf(stderr, "# device %u: %s %lld\n", index, npuipc_leak_counters[k],
				(long long)npuipc_debugfs_value(fd, npuipc_leak_counters[k]));
	close(fd);
	return idle;
}

static inline int npuipc_obj_create(int fd, uint32_t type, uint32_t *handle)
{
	struct drm_npuipc_obj_create args = { .type = type };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);

	if (!ret)
		*handle = args.handle;
	return ret;
}

static inline int npuipc_obj_destroy(int fd, uint32_t handle)
{
	struct drm_npuipc_obj_destroy args = { .handle = handle };

	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_OBJ_DESTROY, &args);
}

static inline int npuipc_obj_export(int fd, uint32_t handle, uint32_t flags, int *out)
{
	struct drm_npuipc_obj_export args = { .handle = handle, .flags = flags };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_OBJ_EXPORT, &args);

	if (!ret)
		*out = args.fd;
	return ret;
}

/* Imports an event or notify fd; its NPUIPC_OBJ_* type in *@type if asked. */
static inline int npuipc_obj_import_typed(int fd, int obj_fd, uint32_t *handle, uint32_t *type)
{
	struct drm_npuipc_obj_import args = { .fd = obj_fd };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args);

	if (!ret) {
		*handle = args.handle;
		if (type)
			*type = args.type;
	}
	return ret;
}

static inline int npuipc_obj_import(int fd, int obj_fd, uint32_t *handle)
{
	return npuipc_obj_import_typed(fd, obj_fd, handle, NULL);
}

/* This file's block of debugfs npuipc_streams, into @out; 0 or -1. */
static inline int npuipc_streams_state(int fd, char *out, size_t size)
{
	static char all[1 << 16];
	char path[96], head[64], *start, *end;
	struct stat st;
	long long client;
	char value[32];

	if (fstat(fd, &st) || npuipc_fdinfo_value(fd, "drm-client-id", value, sizeof(value)))
		return -1;
	client = strtoll(value, NULL, 10);
	snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%u/npuipc_streams", minor(st.st_rdev));
	if (npuipc_read_file(path, all, sizeof(all)))
		return -1;
	snprintf(head, sizeof(head), "client %lld pid %d\n", client, getpid());
	start = strstr(all, head);
	if (!start)
		return -1;
	end = strstr(start + 1, "\nclient ");
	snprintf(out, size, "%.*s", end ? (int)(end - start + 1) : (int)strlen(start), start);
	return 0;
}

/* Submits @count jobs; *out_fence gets a sync_file fd when non-NULL. */
static inline int npuipc_submit(int fd, uint32_t stream, const struct drm_npuipc_job *jobs,
				unsigned int count, int *out_fence)
{
	struct drm_npuipc_submit args = {
		.stream = stream,
		.flags = out_fence ? NPUIPC_SUBMIT_OUT_FENCE : 0,
		.jobs = (uintptr_t)jobs,
		.job_count = count,
		.job_size = sizeof(*jobs),
	};
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_SUBMIT, &args);

	if (!ret && out_fence)
		*out_fence = args.out_fence_fd;
	return ret;
}

static inline int npuipc_submit1(int fd, uint32_t stream, struct drm_npuipc_job job)
{
	return npuipc_submit(fd, stream, &job, 1, NULL);
}

/* vgem's card node (another exporter in the same kernel), or -1. */
static inline int npuipc_open_vgem(void)
{
	char path[32], name[32];
	int minor, fd;

	for (minor = 0; minor < 64; minor++) {
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		snprintf(path, sizeof(path), "/dev/dri/card%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!npuipc_ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/* Jobs, as the stream tests build them. */
static inline struct drm_npuipc_job npuipc_fill_job(uint32_t dst, uint64_t offset, uint64_t size,
						    uint8_t value)
{
	return (struct drm_npuipc_job){ .kind = NPUIPC_JOB_FILL, .dst = dst,
					.dst_offset = offset, .size = size, .value = value };
}

static inline struct drm_npuipc_job npuipc_copy_job(uint32_t dst, uint64_t dst_offset,
						    uint32_t src, uint64_t src_offset,
						    uint64_t size)
{
	return (struct drm_npuipc_job){ .kind = NPUIPC_JOB_COPY, .dst = dst, .src = src,
					.dst_offset = dst_offset, .src_offset = src_offset,
					.size = size };
}

static inline struct drm_npuipc_job npuipc_object_job(uint32_t kind, uint32_t object)
{
	return (struct drm_npuipc_job){ .kind = kind, .object = object };
}

/*
 * A wait for @notify bounded by a timeout far past any test (60 s). Like
 * every notify wait, it depends on userspace: the fences behind it never
 * leave npuipc as sync_files (-EDEADLK). For that, see npuipc_vgem_gate.h.
 */
static inline struct drm_npuipc_job npuipc_gate_job(uint32_t notify)
{
	struct drm_npuipc_job job = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);

	job.timeout_ns = 60 * 1000000000ULL;
	return job;
}


/* Status of a sync_file: 1 signalled, 0 pending, <0 signalled with error. */
static inline int npuipc_sync_file_status(int fd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000;
	return info.status;
}

/* Waits for a stream or event; returns -errno, *status the job status. */
static inline int npuipc_wait(int fd, uint32_t handle, int64_t timeout_ns,
			      uint32_t flags, int *status)
{
	struct drm_npuipc_wait args = { .handle = handle, .flags = flags,
					.timeout_ns = timeout_ns };
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_WAIT, &args);

	if (status)
		*status = args.status;
	return ret;
}

/*
 * Records @notify from a stream of its own, releasing what waits on it;
 * 0 once the record ran, or -errno.
 */
static inline int npuipc_release_gate(int fd, uint32_t notify)
{
	uint32_t releaser;
	int ret;

	ret = npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &releaser);
	if (ret)
		return ret;
	ret = npuipc_submit1(fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify));
	if (!ret)
		ret = npuipc_wait(fd, releaser, 10 * 1000000000LL, 0, NULL);
	npuipc_obj_destroy(fd, releaser);
	return ret;
}

#endif /* NPUIPC_TEST_UTIL_H */
