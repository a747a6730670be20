// SPDX-License-Identifier: GPL-2.0
/*
 * Fabric windows across two servers: run on both servers of a
 * `tools/vm-pair --bind-window` (make check step 10,
 * tests/vm/fabric_pair_test.sh), server N loaded with fabric_sdid=N, with
 * NPUIPC_SERVER and NPUIPC_PEER set. Each server runs every test; the
 * tests that cross servers meet the peer over the link (TCP, one port per
 * test) and both run them at once.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define MIB (1024ULL * 1024ULL)
#define SERVERS 2
#define SHARE_SIZE (4 * MIB)
#define PORT_BASE 7780
/* vm-run may boot a guest twice (a stuck boot is retried after 120 s). */
#define PEER_WAIT_S 240

static unsigned int this_server(void)
{
	const char *s = getenv("NPUIPC_SERVER");

	return s ? (unsigned int)atoi(s) : 0;
}

/* The render node of this server's fabric window, or -ENODEV. */
static int open_window(void)
{
	int minor;

	for (minor = NPUIPC_RENDER_MINOR_FIRST; minor <= NPUIPC_RENDER_MINOR_LAST; minor++) {
		struct drm_npuipc_get_info info;

		if (npuipc_render_node_info(minor, &info) == 1 && (info.caps & NPUIPC_CAP_FABRIC)) {
			char path[32];

			snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
			return open(path, O_RDWR | O_CLOEXEC);
		}
	}
	return -ENODEV;
}

static int fabric_info(int fd, struct drm_npuipc_fabric_info *info)
{
	memset(info, 0, sizeof(*info));
	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_FABRIC_INFO, info);
}

/* CLOCK_BOOTTIME @ms from now, in nanoseconds: a lease's deadline. */
static uint64_t boottime_in(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec + ms * 1000000LL;
}

/*
 * FABRIC_IMPORT with a term of @term_ms (0: none): the buffer's handle and
 * its lease fd (closing it revokes).
 */
static int fabric_import_term(int fd, uint32_t sdid, uint64_t offset, uint64_t size,
			      uint32_t term_ms, uint32_t *handle, int *lease)
{
	struct drm_npuipc_fabric_import args = {
		.offset = offset, .size = size, .sdid = sdid,
		.lease_deadline_ns = term_ms ? boottime_in(term_ms) : 0,
	};
	int ret = npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_FABRIC_IMPORT, &args);

	if (!ret) {
		*handle = args.handle;
		*lease = args.lease_fd;
	}
	return ret;
}

static int fabric_import_leased(int fd, uint32_t sdid, uint64_t offset, uint64_t size,
				uint32_t *handle, int *lease)
{
	return fabric_import_term(fd, sdid, offset, size, 0, handle, lease);
}

/* An import that lives as long as the test's process. */
static int fabric_import(int fd, uint32_t sdid, uint64_t offset, uint64_t size, uint32_t *handle)
{
	int lease;

	return fabric_import_leased(fd, sdid, offset, size, handle, &lease);
}

static int fabric_renew(int fd, int lease, int64_t term_ms)
{
	struct drm_npuipc_fabric_renew args = { .lease_fd = lease,
						.deadline_ns = boottime_in(term_ms) };

	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_FABRIC_RENEW, &args);
}

static int fabric_hold(int fd, int dmabuf, uint32_t timeout_ms)
{
	struct drm_npuipc_fabric_hold args = { .fd = dmabuf, .timeout_ms = timeout_ms };

	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args);
}

/* The window's size: its BAR's, as vm-pair-guest names it. */
static uint64_t window_file_size(void)
{
	const char *bar = getenv("NPUIPC_FABRIC_BAR");
	struct stat st;

	return bar && !stat(bar, &st) ? (uint64_t)st.st_size : 0;
}

/* Where the header of tools/fabric-window puts server @sdid's part. */
static uint64_t part_size_of(uint64_t window_size)
{
	return (window_size - NPUIPC_FABRIC_HEADER_SIZE) / SERVERS / (2 * MIB) * (2 * MIB);
}

static uint64_t part_offset_of(uint64_t window_size, uint32_t sdid)
{
	return NPUIPC_FABRIC_HEADER_SIZE + sdid * part_size_of(window_size);
}

/*
 * A connection to the peer for test @port: server 0 listens, server 1
 * connects; both give up after PEER_WAIT_S.
 */
static int meet_peer(unsigned int port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(PORT_BASE + port) };
	struct timeval tv = { .tv_sec = PEER_WAIT_S };
	const char *peer = getenv("NPUIPC_PEER");
	int fd, one = 1, i;

	if (!peer)
		return -1;
	if (this_server() == 0) {
		struct pollfd pfd;
		int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (lfd < 0)
			return -1;
		addr.sin_addr.s_addr = htonl(INADDR_ANY);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
		if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 1) ||
		    poll(&pfd, 1, PEER_WAIT_S * 1000) != 1) {
			close(lfd);
			return -1;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		close(lfd);
	} else {
		fd = -1;
		inet_pton(AF_INET, peer, &addr.sin_addr);
		for (i = 0; i < PEER_WAIT_S * 10 && fd < 0; i++) {
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
				close(fd);
				fd = -1;
				usleep(100000);
			}
		}
	}
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	return fd;
}

/* Sends @n bytes and receives the peer's @n: 0, or -1. */
static int swap_with_peer(int sock, const void *mine, void *theirs, size_t n)
{
	size_t got = 0;
	ssize_t r;

	if (send(sock, mine, n, MSG_NOSIGNAL) != (ssize_t)n)
		return -1;
	while (got < n) {
		r = recv(sock, (char *)theirs + got, n - got, 0);
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

/* A range of fabric memory, as one server tells the other. */
struct range_msg {
	uint64_t offset;
	uint64_t size;
	uint32_t sdid;
	uint32_t pad;
};

FIXTURE(fabric) {
	int win, npu;
	struct drm_npuipc_fabric_info info;
};

FIXTURE_SETUP(fabric)
{
	self->win = open_window();
	ASSERT_LE(0, self->win);
	self->npu = npuipc_open_device(0);
	ASSERT_LE(0, self->npu);
	ASSERT_EQ(0, fabric_info(self->win, &self->info));
}

FIXTURE_TEARDOWN(fabric)
{
	close(self->npu);
	close(self->win);
}

TEST_F(fabric, info_reports_this_servers_part_as_the_header_gives_it)
{
	EXPECT_EQ(this_server(), self->info.sdid);
	EXPECT_EQ(SERVERS, self->info.nparts);
	EXPECT_EQ(window_file_size(), self->info.window_size);
	EXPECT_EQ(part_offset_of(self->info.window_size, self->info.sdid), self->info.part_offset);
	EXPECT_EQ(part_size_of(self->info.window_size), self->info.part_size);
}

TEST_F(fabric, window_is_a_pci_fabric_device_whose_budget_is_its_part)
{
	struct drm_npuipc_get_info info = { 0 };

	ASSERT_EQ(0, npuipc_ioctl(self->win, DRM_IOCTL_NPUIPC_GET_INFO, &info));
	EXPECT_EQ(NPUIPC_CAP_FABRIC | NPUIPC_CAP_PCI,
		  info.caps & (NPUIPC_CAP_FABRIC | NPUIPC_CAP_PCI));
	/* Memory, not an NPU: nothing of streams. */
	EXPECT_EQ(0, info.caps & (NPUIPC_CAP_STREAMS | NPUIPC_CAP_SYNCOBJ_TIMELINE |
				  NPUIPC_CAP_RESET_NOTIFY | NPUIPC_CAP_BOUNDED_FENCES));
	EXPECT_EQ(self->info.part_size, info.mem_total);
	EXPECT_EQ(NPUIPC_UAPI_VERSION, info.uapi_version);
	EXPECT_LE(NPUIPC_FABRIC_FIRST_INDEX, info.device_index);
}

TEST_F(fabric, bo_create_allocates_from_this_servers_part_only)
{
	struct drm_npuipc_bo_info a, b;
	uint32_t ha, hb;

	ASSERT_EQ(0, npuipc_bo_create(self->win, 2 * MIB, NPUIPC_PAGE_CLASS_HUGE, &ha));
	ASSERT_EQ(0, npuipc_bo_create(self->win, 64 * 1024, NPUIPC_PAGE_CLASS_NORMAL, &hb));
	ASSERT_EQ(0, npuipc_bo_info(self->win, ha, &a));
	ASSERT_EQ(0, npuipc_bo_info(self->win, hb, &b));
	EXPECT_EQ(NPUIPC_BO_FABRIC, a.bo_flags);
	EXPECT_EQ(NPUIPC_BO_FABRIC, b.bo_flags);
	EXPECT_LE(self->info.part_offset, a.fabric_offset);
	EXPECT_GE(self->info.part_offset + self->info.part_size, a.fabric_offset + a.size);
	EXPECT_EQ(0, a.fabric_offset % (2 * MIB));
	EXPECT_LE(self->info.part_offset, b.fabric_offset);
	EXPECT_GE(self->info.part_offset + self->info.part_size, b.fabric_offset + b.size);
	EXPECT_TRUE(a.fabric_offset + a.size <= b.fabric_offset ||
		    b.fabric_offset + b.size <= a.fabric_offset);
}

TEST_F(fabric, bo_create_beyond_the_part_is_refused_with_enomem)
{
	uint32_t h;

	EXPECT_EQ(-ENOMEM, npuipc_bo_create(self->win, self->info.part_size + 2 * MIB,
					    NPUIPC_PAGE_CLASS_HUGE, &h));
}

TEST_F(fabric, window_runs_no_streams)
{
	uint32_t h;

	EXPECT_EQ(-EOPNOTSUPP, npuipc_obj_create(self->win, NPUIPC_OBJ_STREAM, &h));
	EXPECT_EQ(-EOPNOTSUPP, npuipc_obj_create(self->win, NPUIPC_OBJ_EVENT, &h));
}

TEST_F(fabric, an_npu_is_no_fabric_window)
{
	struct drm_npuipc_fabric_info info;
	uint32_t h;

	EXPECT_EQ(-EOPNOTSUPP, fabric_info(self->npu, &info));
	EXPECT_EQ(-EOPNOTSUPP, fabric_import(self->npu, !this_server(), self->info.part_offset,
					     4096, &h));
}

TEST_F(fabric, info_rejects_unknown_flags_padding_and_out_fields)
{
	struct drm_npuipc_fabric_info info = { .flags = 1 };

	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_INFO, &info);
	info = (struct drm_npuipc_fabric_info){ .pad = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_INFO, &info);
	info = (struct drm_npuipc_fabric_info){ .sdid = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_INFO, &info);
	info = (struct drm_npuipc_fabric_info){ .part_size = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_INFO, &info);
}

/* FABRIC_IMPORT of the peer's part, changed by @tweak, fails with @err. */
#define EXPECT_IMPORT_REFUSED(err, tweak)						\
	do {										\
		uint32_t peer_ = !this_server();					\
		struct drm_npuipc_fabric_import args = {				\
			.offset = part_offset_of(self->info.window_size, peer_),	\
			.size = 4096, .sdid = peer_,					\
		};									\
		tweak;									\
		NPUIPC_EXPECT_REFUSED(err, self->win, DRM_IOCTL_NPUIPC_FABRIC_IMPORT, &args); \
	} while (0)

TEST_F(fabric, import_takes_the_first_and_the_last_page_of_the_other_part)
{
	uint32_t peer = !this_server(), first, last, whole;
	uint64_t offset = part_offset_of(self->info.window_size, peer);
	uint64_t part = part_size_of(self->info.window_size);
	struct drm_npuipc_bo_info info;

	ASSERT_EQ(0, fabric_import(self->win, peer, offset, 4096, &first));
	ASSERT_EQ(0, fabric_import(self->win, peer, offset + part - 4096, 4096, &last));
	ASSERT_EQ(0, fabric_import(self->win, peer, offset, part, &whole));
	ASSERT_EQ(0, npuipc_bo_info(self->win, last, &info));
	EXPECT_EQ(offset + part - 4096, info.fabric_offset);
	EXPECT_EQ(4096, info.size);
	ASSERT_EQ(0, npuipc_bo_info(self->win, whole, &info));
	EXPECT_EQ(part, info.size);
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_FABRIC, info.bo_flags);
}

TEST_F(fabric, window_imports_no_events_or_notifies)
{
	struct drm_npuipc_obj_import import = { 0 };
	uint32_t event;
	int fd;

	ASSERT_EQ(0, npuipc_obj_create(self->npu, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_export(self->npu, event, 0, &fd));
	import.fd = fd;
	EXPECT_EQ(-EOPNOTSUPP, npuipc_ioctl(self->win, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &import));
	close(fd);
}

TEST_F(fabric, import_rejects_unknown_flags_padding_handle_lease_fd_and_bad_deadlines)
{
	EXPECT_IMPORT_REFUSED(-EINVAL, args.flags = 1);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.pad = 1);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.handle = 1);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.lease_fd = 1);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.pad2 = 1);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.lease_deadline_ns =
					       boottime_in(NPUIPC_FABRIC_LEASE_MAX_MS + 1000));
	EXPECT_IMPORT_REFUSED(-ETIMEDOUT, args.lease_deadline_ns = boottime_in(-1));
}

TEST_F(fabric, import_rejects_unaligned_and_empty_ranges)
{
	EXPECT_IMPORT_REFUSED(-EINVAL, args.offset += 512);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.size = 4097);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.size = 0);
}

TEST_F(fabric, import_rejects_ranges_outside_the_named_part)
{
	uint64_t part = self->info.part_size;

	EXPECT_IMPORT_REFUSED(-EINVAL, args.offset -= 4096);
	EXPECT_IMPORT_REFUSED(-EINVAL, args.size = part + 4096);
	EXPECT_IMPORT_REFUSED(-EINVAL, (args.offset += part - 4096, args.size = 8192));
	EXPECT_IMPORT_REFUSED(-EINVAL, (args.offset += 4096, args.size = -4096ULL));
	EXPECT_IMPORT_REFUSED(-EINVAL, args.offset = 0);
}

TEST_F(fabric, import_rejects_this_servers_own_part_and_unknown_servers)
{
	EXPECT_IMPORT_REFUSED(-EINVAL, (args.sdid = this_server(),
					args.offset = self->info.part_offset));
	EXPECT_IMPORT_REFUSED(-EINVAL, args.sdid = 7);
}

TEST_F(fabric, import_needs_cap_sys_admin_and_says_eacces)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t h;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(fabric_import(self->win, !this_server(),
				    part_offset_of(self->info.window_size, !this_server()),
				    4096, &h) == -EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(fabric, an_npus_import_of_fabric_memory_reports_where_it_lies)
{
	struct drm_npuipc_bo_info own, seen;
	uint32_t bo, import;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_create(self->win, 2 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo));
	ASSERT_EQ(0, npuipc_bo_export(self->win, bo, MIB, MIB, 0, &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(self->npu, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &import));
	close(dmabuf);
	ASSERT_EQ(0, npuipc_bo_info(self->win, bo, &own));
	ASSERT_EQ(0, npuipc_bo_info(self->npu, import, &seen));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_PEER | NPUIPC_BO_FABRIC, seen.bo_flags);
	EXPECT_EQ(own.fabric_offset + MIB, seen.fabric_offset);
	EXPECT_EQ(MIB, seen.size);
}

/* Buffer @bo of @fd as seen by NPU @npu through a dma-buf: its handle there. */
static int npu_view(int fd, uint32_t bo, int npu, uint32_t *handle)
{
	int dmabuf, ret = npuipc_bo_export(fd, bo, 0, SHARE_SIZE, 0, &dmabuf);

	if (ret)
		return ret;
	ret = npuipc_bo_import(npu, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, handle);
	close(dmabuf);
	return ret;
}

/* Runs @job on a fresh stream of @npu and waits for it: the job's status. */
static int npu_run(int npu, struct drm_npuipc_job job)
{
	uint32_t stream = 0;
	int status = -1000, ret;

	ret = npuipc_obj_create(npu, NPUIPC_OBJ_STREAM, &stream);
	if (ret)
		return ret;
	ret = npuipc_submit1(npu, stream, job);
	if (!ret)
		ret = npuipc_wait(npu, stream, 30LL * 1000000000, 0, &status);
	if (!ret)
		ret = status;
	npuipc_obj_destroy(npu, stream);
	return ret;
}

/*
 * How a read of @p ends in a child process: 0 when it read @want, SIGBUS
 * (or another signal) when it was killed, -1 when it read something else.
 */
static int child_read(const volatile uint8_t *p, uint8_t want)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -2;
	if (pid == 0)
		_exit(*p == want ? 0 : 1);
	if (waitpid(pid, &status, 0) != pid)
		return -2;
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	return WEXITSTATUS(status) ? -1 : 0;
}

/* Whether the lease fd polls readable (its import's last holder let go). */
static int lease_released(int lease)
{
	struct pollfd pfd = { .fd = lease, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/*
 * The last 4 MiB of the peer's part: read, never written, by the lease
 * tests, which run while the peer may use the start of its part.
 */
static uint64_t peer_tail(const struct drm_npuipc_fabric_info *info)
{
	uint32_t peer = !this_server();

	return part_offset_of(info->window_size, peer) + part_size_of(info->window_size) -
	       SHARE_SIZE;
}

TEST_F(fabric, import_gives_a_cloexec_lease_fd_that_polls_readable_once_its_last_holder_goes)
{
	uint32_t bo;
	int lease, dmabuf;

	ASSERT_EQ(0, fabric_import_leased(self->win, !this_server(), peer_tail(&self->info),
					  SHARE_SIZE, &bo, &lease));
	ASSERT_LE(0, lease);
	EXPECT_EQ(FD_CLOEXEC, fcntl(lease, F_GETFD) & FD_CLOEXEC);
	EXPECT_FALSE(lease_released(lease));
	ASSERT_EQ(0, npuipc_bo_export(self->win, bo, 0, SHARE_SIZE, 0, &dmabuf));
	ASSERT_EQ(0, npuipc_gem_close(self->win, bo));
	EXPECT_FALSE(lease_released(lease));	/* the dma-buf holds it */
	close(dmabuf);
	EXPECT_TRUE(lease_released(lease));
	close(lease);
}

/*
 * Every way this server reaches an import: the window's mapping, a dma-buf
 * of it mapped, an NPU's import of that mapped and copied from. Closing
 * the lease takes them all away: SIGBUS, never the bytes, and -ENODEV.
 */
TEST_F(fabric, closing_the_lease_revokes_every_mapping_and_job_of_the_import)
{
	uint32_t bo, on_npu, local;
	const volatile uint8_t *win_map, *buf_map, *npu_map;
	uint8_t first;
	size_t size;
	int lease, dmabuf;

	ASSERT_EQ(0, fabric_import_leased(self->win, !this_server(), peer_tail(&self->info),
					  SHARE_SIZE, &bo, &lease));
	win_map = npuipc_bo_mmap(self->win, bo, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, win_map);
	first = win_map[0];
	ASSERT_EQ(0, npuipc_bo_export(self->win, bo, 0, SHARE_SIZE, 0, &dmabuf));
	buf_map = mmap(NULL, SHARE_SIZE, PROT_READ, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, buf_map);
	ASSERT_EQ(0, npuipc_bo_import(self->npu, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &on_npu));
	npu_map = npuipc_bo_mmap(self->npu, on_npu, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, npu_map);
	ASSERT_EQ(0, npuipc_bo_create(self->npu, SHARE_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &local));
	EXPECT_EQ(first, buf_map[0]);
	EXPECT_EQ(first, npu_map[0]);
	EXPECT_EQ(0, npu_run(self->npu, npuipc_copy_job(local, 0, on_npu, 0, SHARE_SIZE)));

	close(lease);
	EXPECT_EQ(SIGBUS, child_read(win_map, first));
	EXPECT_EQ(SIGBUS, child_read(buf_map, first));
	EXPECT_EQ(SIGBUS, child_read(npu_map, first));
	EXPECT_EQ(SIGBUS, child_read(win_map + SHARE_SIZE - 1, 0));
	EXPECT_EQ(-ENODEV, npu_run(self->npu, npuipc_copy_job(local, 0, on_npu, 0, SHARE_SIZE)));
	EXPECT_EQ(-ENODEV, npu_run(self->npu, npuipc_fill_job(on_npu, 0, SHARE_SIZE, 1)));
	munmap((void *)npu_map, SHARE_SIZE);
	/* A mapping made after the revocation reaches nothing either. */
	npu_map = npuipc_bo_mmap(self->npu, on_npu, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, npu_map);
	EXPECT_EQ(SIGBUS, child_read(npu_map, first));
	munmap((void *)npu_map, SHARE_SIZE);
	munmap((void *)buf_map, SHARE_SIZE);
	munmap((void *)win_map, SHARE_SIZE);
	close(dmabuf);
}

/* Whether a child's read of @p ends in SIGBUS within @ms (never reading other bytes). */
static bool sigbus_within(const volatile uint8_t *p, uint8_t want, int ms)
{
	int i, r;

	for (i = 0; i <= ms / 100; i++) {
		r = child_read(p, want);
		if (r == SIGBUS)
			return true;
		if (r)
			return false;
		usleep(100000);
	}
	return false;
}

/*
 * Each mapping is read here first: a child inherits the pages mapped, so
 * that only the timer's zap, not the refusal of new faults, keeps it out.
 */
TEST_F(fabric, an_import_is_revoked_at_its_deadline_unless_renewed_and_renewing_moves_it)
{
	const volatile uint8_t *short_map, *renewed_map;
	uint32_t short_bo, renewed_bo;
	int short_lease, renewed_lease;
	uint8_t first;
	size_t size;

	ASSERT_EQ(0, fabric_import_term(self->win, !this_server(), peer_tail(&self->info),
					SHARE_SIZE, 2000, &short_bo, &short_lease));
	ASSERT_EQ(0, fabric_import_leased(self->win, !this_server(), peer_tail(&self->info),
					  SHARE_SIZE, &renewed_bo, &renewed_lease));
	ASSERT_EQ(0, fabric_renew(self->win, renewed_lease, 60000));
	short_map = npuipc_bo_mmap(self->win, short_bo, PROT_READ, &size);
	renewed_map = npuipc_bo_mmap(self->win, renewed_bo, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, short_map);
	ASSERT_NE(MAP_FAILED, renewed_map);
	first = short_map[0];
	ASSERT_EQ(first, renewed_map[0]);

	EXPECT_TRUE(sigbus_within(short_map, first, 8000));
	EXPECT_EQ(-ENODEV, fabric_renew(self->win, short_lease, 5000));
	EXPECT_EQ(0, child_read(renewed_map, first));
	/* Sooner, too. */
	ASSERT_EQ(0, fabric_renew(self->win, renewed_lease, 300));
	EXPECT_TRUE(sigbus_within(renewed_map, first, 5000));
	EXPECT_EQ(-ENODEV, fabric_renew(self->win, renewed_lease, 5000));
	munmap((void *)short_map, SHARE_SIZE);
	munmap((void *)renewed_map, SHARE_SIZE);
	close(short_lease);
	close(renewed_lease);
}

TEST_F(fabric, renew_rejects_flags_deadlines_past_or_too_far_and_what_is_no_lease)
{
	struct drm_npuipc_fabric_renew args;
	const volatile uint8_t *map;
	uint32_t bo;
	int lease, dmabuf;
	uint8_t first;
	size_t size;

	ASSERT_EQ(0, fabric_import_leased(self->win, !this_server(), peer_tail(&self->info),
					  SHARE_SIZE, &bo, &lease));
	map = npuipc_bo_mmap(self->win, bo, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, map);
	first = map[0];
	args = (struct drm_npuipc_fabric_renew){ .lease_fd = lease, .flags = 1,
						 .deadline_ns = boottime_in(1000) };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_RENEW, &args);
	args = (struct drm_npuipc_fabric_renew){
		.lease_fd = lease, .deadline_ns = boottime_in(NPUIPC_FABRIC_LEASE_MAX_MS + 1000) };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_RENEW, &args);
	EXPECT_EQ(-ETIMEDOUT, fabric_renew(self->win, lease, -1));
	EXPECT_EQ(-EBADF, fabric_renew(self->win, -1, 1000));
	ASSERT_EQ(0, npuipc_bo_export(self->win, bo, 0, SHARE_SIZE, 0, &dmabuf));
	EXPECT_EQ(-EINVAL, fabric_renew(self->win, dmabuf, 1000));
	EXPECT_EQ(-EOPNOTSUPP, fabric_renew(self->npu, lease, 1000));
	/* No refusal gave the import a deadline, nor revoked it. */
	usleep(200000);
	EXPECT_EQ(0, child_read(map, first));
	munmap((void *)map, SHARE_SIZE);
	close(dmabuf);
	close(lease);
}

TEST_F(fabric, renew_needs_cap_sys_admin_and_says_eacces)
{
	uint32_t bo;
	int lease, status;
	pid_t pid;

	ASSERT_EQ(0, fabric_import_leased(self->win, !this_server(), peer_tail(&self->info),
					  SHARE_SIZE, &bo, &lease));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(fabric_renew(self->win, lease, 1000) == -EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(lease);
}

/* A dma-buf of fresh fabric memory of this server: its offset in the window. */
static int own_fabric_dmabuf(int win, uint64_t *offset, int *dmabuf)
{
	struct drm_npuipc_bo_info info;
	uint32_t bo = 0;
	int ret = npuipc_bo_create(win, SHARE_SIZE, NPUIPC_PAGE_CLASS_HUGE, &bo);

	if (ret)
		return ret;
	ret = npuipc_bo_info(win, bo, &info);
	if (!ret)
		ret = npuipc_bo_export(win, bo, 0, SHARE_SIZE, 0, dmabuf);
	if (!ret)
		*offset = info.fabric_offset;
	npuipc_gem_close(win, bo);
	return ret;
}

/* Where the next allocation of SHARE_SIZE lies (first fit: the lowest free range). */
static uint64_t next_offset(int win)
{
	uint64_t offset = 0;
	int dmabuf;

	if (own_fabric_dmabuf(win, &offset, &dmabuf))
		return 0;
	close(dmabuf);
	return offset;
}

TEST_F(fabric, hold_keeps_a_range_allocated_after_its_last_holder_until_it_ends)
{
	uint64_t held, offset = 0;
	int dmabuf, i;

	ASSERT_EQ(0, own_fabric_dmabuf(self->win, &held, &dmabuf));
	ASSERT_EQ(0, fabric_hold(self->win, dmabuf, 2000));
	close(dmabuf);
	EXPECT_NE(held, next_offset(self->win));
	for (i = 0; i < 80 && offset != held; i++) {
		usleep(100000);
		offset = next_offset(self->win);
	}
	EXPECT_EQ(held, offset);
}

/* Until @offset is allocated again, for 8 s at most: whether it was. */
static bool freed_within_8s(int win, uint64_t offset)
{
	int i;

	for (i = 0; i < 80; i++) {
		if (next_offset(win) == offset)
			return true;
		usleep(100000);
	}
	return false;
}

TEST_F(fabric, a_later_hold_moves_the_end_and_a_sooner_one_does_not)
{
	uint64_t held;
	int dmabuf;

	ASSERT_EQ(0, own_fabric_dmabuf(self->win, &held, &dmabuf));
	ASSERT_EQ(0, fabric_hold(self->win, dmabuf, 100));
	ASSERT_EQ(0, fabric_hold(self->win, dmabuf, 3000));
	ASSERT_EQ(0, fabric_hold(self->win, dmabuf, 1));
	close(dmabuf);
	usleep(500000);
	EXPECT_NE(held, next_offset(self->win));	/* held to 3 s */
	EXPECT_TRUE(freed_within_8s(self->win, held));
}

TEST_F(fabric, hold_rejects_flags_padding_long_holds_and_what_is_not_this_parts_memory)
{
	struct drm_npuipc_fabric_hold args;
	uint64_t offset;
	uint32_t bo, on_npu;
	int dmabuf, remote, lease, npu_buf;

	ASSERT_EQ(0, own_fabric_dmabuf(self->win, &offset, &dmabuf));
	args = (struct drm_npuipc_fabric_hold){ .fd = dmabuf, .timeout_ms = 1, .flags = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args);
	args = (struct drm_npuipc_fabric_hold){ .fd = dmabuf, .timeout_ms = 1, .pad = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args);
	args = (struct drm_npuipc_fabric_hold){ .fd = dmabuf,
						.timeout_ms = NPUIPC_FABRIC_HOLD_MAX_MS + 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args);
	args = (struct drm_npuipc_fabric_hold){ .fd = dmabuf };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->win, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args);
	EXPECT_EQ(-EOPNOTSUPP, fabric_hold(self->npu, dmabuf, 1));
	EXPECT_EQ(-EBADF, fabric_hold(self->win, -1, 1));

	/* Not a dma-buf; a dma-buf of an import; one of an NPU's memory. */
	ASSERT_EQ(0, fabric_import_leased(self->win, !this_server(), peer_tail(&self->info),
					  SHARE_SIZE, &bo, &lease));
	EXPECT_EQ(-EINVAL, fabric_hold(self->win, lease, 1));
	ASSERT_EQ(0, npuipc_bo_export(self->win, bo, 0, SHARE_SIZE, 0, &remote));
	EXPECT_EQ(-EINVAL, fabric_hold(self->win, remote, 1));
	ASSERT_EQ(0, npuipc_bo_create(self->npu, SHARE_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &on_npu));
	ASSERT_EQ(0, npuipc_bo_export(self->npu, on_npu, 0, SHARE_SIZE, 0, &npu_buf));
	EXPECT_EQ(-EINVAL, fabric_hold(self->win, npu_buf, 1));
	close(npu_buf);
	close(remote);
	close(lease);
	close(dmabuf);
	/* Nothing was held: the range is free at once. */
	EXPECT_EQ(offset, next_offset(self->win));
}

TEST_F(fabric, hold_needs_cap_sys_admin_and_says_eacces)
{
	uint64_t offset;
	int dmabuf, status;
	pid_t pid;

	ASSERT_EQ(0, own_fabric_dmabuf(self->win, &offset, &dmabuf));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(fabric_hold(self->win, dmabuf, 1) == -EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(dmabuf);
}

/*
 * Each server fills fabric memory of its own part through its NPU, tells
 * the other where it is, and the other imports it: its NPU copies out what
 * the owner wrote and its mapping shows it; then the importer's NPU writes
 * the owner's memory, and the owner's NPU sees that. Both ways at once.
 */
/* Both servers meet here: a second boot of one may take minutes. */
TEST_F_TIMEOUT(fabric, servers_share_bytes_both_ways_through_their_npus_and_mappings,
	       PEER_WAIT_S + 60)
{
	uint8_t me = this_server(), peer = !me, *map, *local_map;
	struct drm_npuipc_bo_info info;
	struct range_msg mine = { 0 }, theirs = { 0 };
	uint32_t own, own_npu, remote, remote_npu, local;
	char sync_out = 'w', sync_in = 0;
	size_t size;
	int sock;

	ASSERT_EQ(0, npuipc_bo_create(self->win, SHARE_SIZE, NPUIPC_PAGE_CLASS_HUGE, &own));
	ASSERT_EQ(0, npu_view(self->win, own, self->npu, &own_npu));
	ASSERT_EQ(0, npu_run(self->npu, npuipc_fill_job(own_npu, 0, SHARE_SIZE, 0xa0 + me)));
	ASSERT_EQ(0, npuipc_bo_info(self->win, own, &info));
	mine = (struct range_msg){ .offset = info.fabric_offset, .size = SHARE_SIZE, .sdid = me };

	sock = meet_peer(0);
	ASSERT_LE(0, sock);
	ASSERT_EQ(0, swap_with_peer(sock, &mine, &theirs, sizeof(mine)));
	ASSERT_EQ(peer, theirs.sdid);
	ASSERT_EQ(SHARE_SIZE, theirs.size);

	/* The peer's bytes, through this server's NPU and through a mapping. */
	ASSERT_EQ(0, fabric_import(self->win, theirs.sdid, theirs.offset, theirs.size, &remote));
	ASSERT_EQ(0, npuipc_bo_info(self->win, remote, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_FABRIC, info.bo_flags);
	EXPECT_EQ(theirs.offset, info.fabric_offset);
	ASSERT_EQ(0, npu_view(self->win, remote, self->npu, &remote_npu));
	ASSERT_EQ(0, npuipc_bo_create(self->npu, SHARE_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &local));
	ASSERT_EQ(0, npu_run(self->npu, npuipc_copy_job(local, 0, remote_npu, 0, SHARE_SIZE)));
	local_map = npuipc_bo_mmap(self->npu, local, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, local_map);
	EXPECT_TRUE(npuipc_all_bytes_are(local_map, SHARE_SIZE, 0xa0 + peer));
	map = npuipc_bo_mmap(self->win, remote, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_TRUE(npuipc_all_bytes_are(map, SHARE_SIZE, 0xa0 + peer));

	/* This server writes the peer's memory; the peer reads it at home. */
	ASSERT_EQ(0, npu_run(self->npu, npuipc_fill_job(remote_npu, 0, SHARE_SIZE, 0xb0 + me)));
	ASSERT_EQ(0, swap_with_peer(sock, &sync_out, &sync_in, 1));
	ASSERT_EQ('w', sync_in);
	ASSERT_EQ(0, npu_run(self->npu, npuipc_copy_job(local, 0, own_npu, 0, SHARE_SIZE)));
	EXPECT_TRUE(npuipc_all_bytes_are(local_map, SHARE_SIZE, 0xb0 + peer));
	EXPECT_TRUE(npuipc_all_bytes_are(map, SHARE_SIZE, 0xb0 + me));

	/* Done with the peer's memory before the peer frees it. */
	munmap(map, SHARE_SIZE);
	munmap(local_map, SHARE_SIZE);
	sync_out = 'd';
	ASSERT_EQ(0, swap_with_peer(sock, &sync_out, &sync_in, 1));
	EXPECT_EQ('d', sync_in);
	close(sock);
}

TEST_HARNESS_MAIN
