// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory between processes and devices: dma-buf export of whole
 * buffers and ranges, read-only exports, import into the same device, peer
 * import into another, interoperation with vgem, lifetime across processes
 * and SIGKILL, fdinfo and debugfs, and every input BO_EXPORT and BO_IMPORT
 * must refuse.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/dma-buf.h>
#include <xf86drm.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define KIB 1024ULL
#define MIB (1024ULL * KIB)

static void fill_pattern(uint8_t *p, size_t size, uint8_t seed)
{
	size_t i;

	for (i = 0; i < size; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

static int has_pattern(const uint8_t *p, size_t size, size_t start, uint8_t seed)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (p[i] != (uint8_t)((start + i) * 31 + seed))
			return 0;
	return 1;
}

static int same_file(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_ino == sb.st_ino &&
	       sa.st_dev == sb.st_dev;
}

static off_t dmabuf_size(int fd)
{
	return lseek(fd, 0, SEEK_END);
}

/* Reads the value of "key:" in /proc/self/fdinfo/<fd> into @out. */
FIXTURE(export) {
	int fd;		/* device 0 */
	int peer_fd;	/* device 1, or -1 */
	uint32_t handle;	/* 8 MiB huge buffer on device 0, filled with pattern 7 */
	uint8_t *map;
	size_t size;
};

FIXTURE_SETUP(export)
{
	self->fd = npuipc_open_device(0);
	self->peer_fd = -1;
	self->map = MAP_FAILED;
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	self->peer_fd = npuipc_open_device(1);
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 8 * MIB, NPUIPC_PAGE_CLASS_HUGE, &self->handle));
	self->map = npuipc_bo_mmap(self->fd, self->handle, PROT_READ | PROT_WRITE, &self->size);
	ASSERT_NE(MAP_FAILED, self->map);
	fill_pattern(self->map, self->size, 7);
}

FIXTURE_TEARDOWN(export)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->size);
	if (self->peer_fd >= 0)
		close(self->peer_fd);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
	EXPECT_TRUE(npuipc_device_is_idle(1));
}

TEST_F(export, whole_buffer_export_is_a_cloexec_rw_dmabuf_of_the_same_bytes)
{
	int dmabuf;
	uint8_t *p;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, self->size, 0, &dmabuf));
	EXPECT_EQ(FD_CLOEXEC, fcntl(dmabuf, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_RDWR, fcntl(dmabuf, F_GETFL) & O_ACCMODE);
	EXPECT_EQ((off_t)self->size, dmabuf_size(dmabuf));
	p = mmap(NULL, self->size, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, self->size, 0, 7));
	p[5] = 0x55;
	EXPECT_EQ(0x55, self->map[5]);
	munmap(p, self->size);
	close(dmabuf);
}

TEST_F(export, range_export_reaches_exactly_the_range)
{
	const uint64_t off = 2 * MIB, len = 4 * MIB;
	int dmabuf;
	uint8_t *p;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, off, len, 0, &dmabuf));
	EXPECT_EQ((off_t)len, dmabuf_size(dmabuf));
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, len, off, 7));
	munmap(p, len);
	/* Nothing past the range: not by size, not by mmap offset. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len + 4096, PROT_READ, MAP_SHARED, dmabuf, 0));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, dmabuf, len));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * MIB, PROT_READ, MAP_SHARED, dmabuf, 3 * MIB));
	close(dmabuf);
}

TEST_F(export, import_into_the_same_device_is_the_same_memory_without_a_copy)
{
	struct drm_npuipc_bo_info info;
	long long used = npuipc_debugfs_value(self->fd, "mem_used");
	uint32_t imported;
	size_t size;
	uint8_t *p;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB, 0, &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, imported, &info));
	EXPECT_EQ(2 * MIB, info.size);
	EXPECT_EQ(NPUIPC_PAGE_CLASS_HUGE, info.page_class);
	EXPECT_EQ(NPUIPC_BO_IMPORTED, info.bo_flags);
	EXPECT_EQ(used, npuipc_debugfs_value(self->fd, "mem_used"));

	p = npuipc_bo_mmap(self->fd, imported, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, size, 2 * MIB, 7));
	p[0] = 0xee;
	EXPECT_EQ(0xee, self->map[2 * MIB]);
	munmap(p, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	close(dmabuf);
}

TEST_F(export, import_into_another_device_needs_peer_access)
{
	struct drm_npuipc_bo_info info;
	uint32_t imported;
	size_t size;
	uint8_t *p;
	int dmabuf;

	if (self->peer_fd < 0)
		SKIP(return, "needs two npuipc devices");
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, self->size, 0, &dmabuf));
	EXPECT_EQ(-EXDEV, npuipc_bo_import(self->peer_fd, dmabuf, 0, &imported));
	EXPECT_EQ(0, npuipc_debugfs_value(self->peer_fd, "live_objects"));
	ASSERT_EQ(0, npuipc_bo_import(self->peer_fd, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->peer_fd, imported, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_PEER, info.bo_flags);
	EXPECT_EQ(0, npuipc_debugfs_value(self->peer_fd, "mem_used"));
	p = npuipc_bo_mmap(self->peer_fd, imported, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, size, 0, 7));
	p[size - 1] = 0x11;
	EXPECT_EQ(0x11, self->map[size - 1]);
	munmap(p, size);
	EXPECT_EQ(0, npuipc_gem_close(self->peer_fd, imported));
	close(dmabuf);
}

TEST_F(export, read_only_export_cannot_be_written_through_any_path)
{
	struct drm_dma_buf_sync_like { uint64_t flags; } sync;
	struct drm_npuipc_bo_info info;
	uint32_t imported;
	size_t size;
	uint8_t *p;
	int dmabuf, memfd;
	uint8_t byte = 0xff;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB,
				      NPUIPC_BO_EXPORT_READ_ONLY, &dmabuf));
	EXPECT_EQ(O_RDONLY, fcntl(dmabuf, F_GETFL) & O_ACCMODE);

	/* mmap for writing, directly or by a later mprotect */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0));
	p = mmap(NULL, 2 * MIB, PROT_READ, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, 2 * MIB, 0, 7));
	EXPECT_EQ(-1, mprotect(p, 2 * MIB, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);

	/* writes through /proc/self/mem (the ptrace path) */
	memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, memfd);
	EXPECT_EQ(-1, pwrite(memfd, &byte, 1, (off_t)(uintptr_t)p));
	close(memfd);
	EXPECT_EQ(7, p[0]);
	munmap(p, 2 * MIB);

	/* CPU-access sync announcing writes */
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE;
	EXPECT_EQ(-EPERM, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
	EXPECT_EQ(0, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	EXPECT_EQ(0, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));

	/* import: read-only, and its mapping too */
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, imported, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_READ_ONLY, info.bo_flags);
	EXPECT_EQ(MAP_FAILED, npuipc_bo_mmap(self->fd, imported, PROT_READ | PROT_WRITE, &size));
	EXPECT_EQ(EACCES, errno);
	p = npuipc_bo_mmap(self->fd, imported, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, size);
	/* An import is not exported again: the dma-buf fd is what is passed on. */
	EXPECT_EQ(-EINVAL, npuipc_bo_export(self->fd, imported, 0, 2 * MIB, 0, &memfd));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	close(dmabuf);
}

/*
 * A read-only export of huge memory mapped 2 MiB-aligned (a PFN map) stays
 * unwritable. What is the driver's and what the kernel's, each checked
 * where it can fail: the dma-buf fd is O_RDONLY (the driver's part; the
 * VFS then refuses write mappings and the mm a later mprotect()); a
 * read-only import mapped through the DRM fd, which is O_RDWR, refuses
 * mprotect(PROT_WRITE) where a read-write buffer's mapping allows it (the
 * driver clears VM_MAYWRITE); process_vm_writev() reaches no PFN map,
 * read-only or not (checked on both mappings).
 */
TEST_F(export, read_only_export_mapped_2mib_aligned_cannot_be_written)
{
	struct iovec local, remote;
	uint8_t *room, *at, *p, *rw;
	uint8_t byte = 0xff;
	int dmabuf, memfd;
	uint32_t imported;
	size_t size;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB,
				      NPUIPC_BO_EXPORT_READ_ONLY, &dmabuf));
	room = mmap(NULL, 4 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, room);
	at = (uint8_t *)(((uintptr_t)room + 2 * MIB - 1) / (2 * MIB) * (2 * MIB));
	p = mmap(at, 2 * MIB, PROT_READ, MAP_SHARED | MAP_FIXED, dmabuf, 0);
	ASSERT_EQ(at, p);
	EXPECT_TRUE(has_pattern(p, 2 * MIB, 2 * MIB, 7));
	EXPECT_EQ(0, npuipc_smaps_kib(p, "FilePmdMapped"));

	memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, memfd);
	EXPECT_EQ(-1, pwrite(memfd, &byte, 1, (off_t)(uintptr_t)p));
	close(memfd);
	local = (struct iovec){ .iov_base = &byte, .iov_len = 1 };
	remote = (struct iovec){ .iov_base = p, .iov_len = 1 };
	EXPECT_EQ(-1, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, mprotect(p, 2 * MIB, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_TRUE(has_pattern(p, 2 * MIB, 2 * MIB, 7));

	/* The driver's own refusal, on a file that may write. */
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	p = npuipc_bo_mmap(self->fd, imported, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, size);
	rw = npuipc_bo_mmap(self->fd, self->handle, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, rw);
	EXPECT_EQ(0, mprotect(rw, size, PROT_READ | PROT_WRITE));
	/* The kernel's: no PFN map is reached by process_vm_writev(). */
	remote = (struct iovec){ .iov_base = rw, .iov_len = 1 };
	EXPECT_EQ(-1, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	munmap(rw, size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));

	munmap(room, 4 * MIB);
	close(dmabuf);
}

/*
 * Exporting a range again, with the same access, hands out a new fd of the
 * same dma-buf, as DRM's PRIME does for a whole object; another range or
 * access is another dma-buf.
 */
TEST_F(export, exporting_a_range_again_hands_out_the_same_dma_buf)
{
	int first, again, other_range, read_only;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB, 0, &first));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB, 0, &again));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &other_range));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB,
				      NPUIPC_BO_EXPORT_READ_ONLY, &read_only));
	EXPECT_TRUE(same_file(first, again));
	EXPECT_FALSE(same_file(first, other_range));
	EXPECT_FALSE(same_file(first, read_only));
	EXPECT_EQ(O_RDONLY, fcntl(read_only, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(O_RDWR, fcntl(again, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(3, npuipc_debugfs_value(self->fd, "dmabufs"));
	close(first);
	close(again);
	close(other_range);
	close(read_only);
}

/*
 * The buffer keeps its latest export for the next one while it has its
 * handle: closing every fd leaves it, closing the handle lets it go (and
 * the buffer with it once unmapped).
 */
TEST_F(export, buffer_lets_go_of_its_latest_export_with_its_handle)
{
	struct stat first, second;
	int dmabuf, again;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &dmabuf));
	ASSERT_EQ(0, fstat(dmabuf, &first));
	close(dmabuf);
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "dmabufs"));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &again));
	ASSERT_EQ(0, fstat(again, &second));
	EXPECT_EQ(first.st_ino, second.st_ino);
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "dmabufs"));
	close(again);

	munmap(self->map, self->size);
	self->map = MAP_FAILED;
	EXPECT_EQ(0, npuipc_gem_close(self->fd, self->handle));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "dmabufs"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "mem_used"));
}

TEST_F(export, dma_buf_sync_is_accepted_on_a_read_write_export)
{
	struct { uint64_t flags; } sync;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, self->size, 0, &dmabuf));
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));
	sync.flags = 0x80;	/* unknown flag: refused by the dma-buf core */
	EXPECT_EQ(-EINVAL, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync));
	close(dmabuf);
}

TEST_F(export, dmabuf_mapping_outlives_every_fd_and_handle)
{
	uint8_t *p;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, self->size, 0, &dmabuf));
	p = mmap(NULL, self->size, PROT_READ, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, p);
	close(dmabuf);
	munmap(self->map, self->size);
	self->map = MAP_FAILED;
	ASSERT_EQ(0, npuipc_gem_close(self->fd, self->handle));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_TRUE(has_pattern(p, self->size, 0, 7));
	munmap(p, self->size);
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "mem_used"));
}

/*
 * The importers debugfs counts for the export of [@offset, @offset + @size)
 * made by this process on @fd's device; -1 if it is not listed.
 */
static int listed_importers(int fd, unsigned long long offset, unsigned long long size)
{
	char path[96], listing[4096], prefix[96];
	const char *line;
	struct stat st;
	int importers;

	if (fstat(fd, &st))
		return -1;
	snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%u/npuipc_exports", minor(st.st_rdev));
	if (npuipc_read_file(path, listing, sizeof(listing)))
		return -1;
	snprintf(prefix, sizeof(prefix), "\n%llu %llu huge rw %d ", offset, size, getpid());
	line = strstr(listing, prefix);
	if (!line || sscanf(line + strlen(prefix), "%d", &importers) != 1)
		return -1;
	return importers;
}

/*
 * What the driver knows of an export (range, class, access, exporter,
 * importers) is in debugfs; the dma-buf's name is the user's to set.
 */
TEST_F(export, debugfs_counts_importers_and_the_name_is_left_to_userspace)
{
	char value[128];
	uint32_t imported;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 4 * MIB, 0, &dmabuf));
	ASSERT_EQ(0, npuipc_fdinfo_value(dmabuf, "size", value, sizeof(value)));
	EXPECT_STREQ("4194304", value);
	EXPECT_EQ(0, listed_importers(self->fd, 2 * MIB, 4 * MIB));
	/* No name line: the driver sets none. */
	EXPECT_NE(0, npuipc_fdinfo_value(dmabuf, "name", value, sizeof(value)));

	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	EXPECT_EQ(1, listed_importers(self->fd, 2 * MIB, 4 * MIB));
	ASSERT_EQ(0, ioctl(dmabuf, DMA_BUF_SET_NAME_B, "weights"));
	ASSERT_EQ(0, npuipc_fdinfo_value(dmabuf, "name", value, sizeof(value)));
	EXPECT_STREQ("weights", value);

	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	EXPECT_EQ(0, listed_importers(self->fd, 2 * MIB, 4 * MIB));
	/* The driver never overwrites it. */
	ASSERT_EQ(0, npuipc_fdinfo_value(dmabuf, "name", value, sizeof(value)));
	EXPECT_STREQ("weights", value);
	close(dmabuf);
	/* Listed while the buffer keeps it as its latest export, for its handle. */
	EXPECT_EQ(0, listed_importers(self->fd, 2 * MIB, 4 * MIB));
	munmap(self->map, self->size);
	self->map = MAP_FAILED;
	EXPECT_EQ(0, npuipc_gem_close(self->fd, self->handle));
	EXPECT_EQ(-1, listed_importers(self->fd, 2 * MIB, 4 * MIB));
}

/*
 * The first scenario of the seed document: process A lends memory to
 * process B over a Unix socket and exits first; B still reads what A wrote,
 * and everything is freed once B is done.
 */
TEST_F(export, importer_reads_what_an_exporter_that_already_exited_wrote)
{
	int sv[2], status, dmabuf;
	pid_t exporter;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	exporter = fork();
	ASSERT_LE(0, exporter);
	if (exporter == 0) {
		int fd = npuipc_open_device(0), out;
		uint32_t handle;
		size_t size;
		uint8_t *p;

		if (fd < 0 || npuipc_bo_create(fd, 4 * MIB, NPUIPC_PAGE_CLASS_HUGE, &handle))
			_exit(1);
		p = npuipc_bo_mmap(fd, handle, PROT_READ | PROT_WRITE, &size);
		if (p == MAP_FAILED)
			_exit(2);
		fill_pattern(p, size, 99);
		if (npuipc_bo_export(fd, handle, 0, size, 0, &out) || npuipc_send_fd(sv[1], out))
			_exit(3);
		_exit(0);	/* every fd, handle and mapping of A goes here */
	}
	close(sv[1]);
	ASSERT_EQ(exporter, waitpid(exporter, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	dmabuf = npuipc_recv_fd(sv[0]);
	ASSERT_LE(0, dmabuf);
	close(sv[0]);
	if (self->peer_fd >= 0) {
		uint32_t imported;
		size_t size;
		uint8_t *p;

		ASSERT_EQ(0, npuipc_bo_import(self->peer_fd, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &imported));
		p = npuipc_bo_mmap(self->peer_fd, imported, PROT_READ, &size);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_TRUE(has_pattern(p, size, 0, 99));
		munmap(p, size);
		EXPECT_EQ(0, npuipc_gem_close(self->peer_fd, imported));
	} else {
		uint8_t *p = mmap(NULL, 4 * MIB, PROT_READ, MAP_SHARED, dmabuf, 0);

		ASSERT_NE(MAP_FAILED, p);
		EXPECT_TRUE(has_pattern(p, 4 * MIB, 0, 99));
		munmap(p, 4 * MIB);
	}
	close(dmabuf);
}

/* SIGKILL at any point leaves nothing behind: counters return to zero. */
TEST_F(export, killed_holders_leave_nothing_behind)
{
	int sv[2], status, i, dmabuf;
	pid_t pids[2];

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, self->size, 0, &dmabuf));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			/* Hold everything: own buffers, an import, mappings. */
			int fd = npuipc_open_device(i), mine;
			uint32_t handle, imported;
			size_t size;
			void *p, *q;

			if (fd < 0 || npuipc_bo_create(fd, 2 * MIB, NPUIPC_PAGE_CLASS_HUGE, &handle) ||
			    npuipc_bo_export(fd, handle, 0, 2 * MIB, 0, &mine) ||
			    npuipc_bo_import(fd, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &imported))
				_exit(1);
			p = npuipc_bo_mmap(fd, handle, PROT_READ | PROT_WRITE, &size);
			q = npuipc_bo_mmap(fd, imported, PROT_READ | PROT_WRITE, &size);
			if (p == MAP_FAILED || q == MAP_FAILED)
				_exit(2);
			if (write(sv[1], "r", 1) != 1)
				_exit(3);
			pause();
			_exit(4);
		}
	}
	for (i = 0; i < 2; i++) {
		char c;

		ASSERT_EQ(1, read(sv[0], &c, 1));
	}
	close(sv[0]);
	close(sv[1]);
	close(dmabuf);
	munmap(self->map, self->size);
	self->map = MAP_FAILED;
	ASSERT_EQ(0, npuipc_gem_close(self->fd, self->handle));
	EXPECT_LE(3, npuipc_debugfs_value(self->fd, "live_objects"));

	for (i = 0; i < 2; i++) {
		kill(pids[i], SIGKILL);
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
	}
	/* The fixture's teardown checks both devices are idle again. */
}

/* vgem, another exporter in the same kernel, both ways. */
static void *vgem_mmap(int vgem, uint32_t handle, size_t size, int prot)
{
	struct drm_mode_map_dumb map = { .handle = handle };

	if (npuipc_ioctl(vgem, DRM_IOCTL_MODE_MAP_DUMB, &map))
		return MAP_FAILED;
	return mmap(NULL, size, prot, MAP_SHARED, vgem, map.offset);
}

/*
 * A vgem dumb buffer, mapped at *@map and filled with pattern @seed, as a
 * read-write dma-buf fd; -1 on failure.
 */
static int vgem_dmabuf(int vgem, struct drm_mode_create_dumb *dumb, uint8_t seed, uint8_t **map)
{
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };

	if (npuipc_ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, dumb))
		return -1;
	*map = vgem_mmap(vgem, dumb->handle, dumb->size, PROT_READ | PROT_WRITE);
	if (*map == MAP_FAILED)
		return -1;
	fill_pattern(*map, dumb->size, seed);
	prime.handle = dumb->handle;
	if (npuipc_ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime))
		return -1;
	return prime.fd;
}


TEST_F(export, vgem_buffers_import_and_ours_import_into_vgem)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 256, .bpp = 32 };
	struct drm_prime_handle prime = { 0 }, back = { 0 };
	struct drm_gem_close gem_close = { 0 };
	struct drm_npuipc_bo_info info;
	uint32_t imported;
	uint8_t *vp, *p;
	size_t size;
	int vgem, dmabuf;

	vgem = npuipc_open_vgem();
	if (vgem < 0)
		SKIP(return, "vgem is not loaded (modprobe vgem)");

	/* vgem -> npuipc */
	prime.fd = vgem_dmabuf(vgem, &dumb, 3, &vp);
	ASSERT_LE(0, prime.fd);
	ASSERT_EQ(0, npuipc_bo_import(self->fd, prime.fd, 0, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, imported, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_FOREIGN, info.bo_flags);
	EXPECT_EQ(dumb.size, info.size);
	p = npuipc_bo_mmap(self->fd, imported, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, size, 0, 3));
	munmap(p, size);
	munmap(vp, dumb.size);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	close(prime.fd);

	/*
	 * npuipc -> vgem. vgem cannot CPU-map imports (DRM refuses dumb maps
	 * of imported objects), so what is checked is that vgem attached and
	 * mapped our dma-buf, and that its handle stands for our memory.
	 * A BAR has no struct pages: vgem, which does not do PCI peer-to-peer,
	 * is refused it.
	 */
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB, 0, &dmabuf));
	prime = (struct drm_prime_handle){ .fd = dmabuf };
	if (npuipc_expected_pci(0)) {
		EXPECT_EQ(-EOPNOTSUPP, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
		EXPECT_EQ(0, listed_importers(self->fd, 2 * MIB, 2 * MIB));
		close(dmabuf);
		close(vgem);
		return;
	}
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
	EXPECT_EQ(1, listed_importers(self->fd, 2 * MIB, 2 * MIB));
	back.handle = prime.handle;
	back.flags = DRM_CLOEXEC;
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &back));
	EXPECT_TRUE(same_file(dmabuf, back.fd));
	close(back.fd);
	gem_close.handle = prime.handle;
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gem_close));
	EXPECT_EQ(0, listed_importers(self->fd, 2 * MIB, 2 * MIB));
	close(dmabuf);

	/* vgem maps for writing, so a read-only export is refused to it. */
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB,
				      NPUIPC_BO_EXPORT_READ_ONLY, &dmabuf));
	prime = (struct drm_prime_handle){ .fd = dmabuf };
	EXPECT_NE(0, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
	close(dmabuf);
	close(vgem);
}

/*
 * A dma-buf fd opened read-only (PRIME without DRM_RDWR) imports
 * read-only, whoever exported it: its mapping refuses writing.
 */
TEST_F(export, a_read_only_dma_buf_fd_imports_read_only)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 16, .bpp = 32 };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC };
	struct drm_gem_close gem_close = { 0 };
	struct drm_npuipc_bo_info info;
	uint32_t imported;
	size_t size;
	void *p;
	int vgem;

	vgem = npuipc_open_vgem();
	if (vgem < 0)
		SKIP(return, "vgem is not loaded (modprobe vgem)");
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
	prime.handle = gem_close.handle = dumb.handle;
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	EXPECT_EQ(O_RDONLY, fcntl(prime.fd, F_GETFL) & O_ACCMODE);

	ASSERT_EQ(0, npuipc_bo_import(self->fd, prime.fd, 0, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, imported, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_FOREIGN | NPUIPC_BO_READ_ONLY, info.bo_flags);
	EXPECT_EQ(MAP_FAILED, npuipc_bo_mmap(self->fd, imported, PROT_READ | PROT_WRITE, &size));
	EXPECT_EQ(EACCES, errno);
	p = npuipc_bo_mmap(self->fd, imported, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, size);

	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	close(prime.fd);
	EXPECT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gem_close));
	close(vgem);
}

/* A vgem buffer of @size bytes (a multiple of 4 KiB) as a dma-buf fd. */
static int vgem_export(int vgem, uint64_t size)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = size / 4096, .bpp = 32 };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_gem_close gem_close = { 0 };

	if (npuipc_ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -1;
	prime.handle = dumb.handle;
	gem_close.handle = dumb.handle;
	if (npuipc_ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime))
		prime.fd = -1;
	npuipc_ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gem_close);
	return prime.fd;
}

/*
 * Another exporter's memory counts against the device's size: a file's
 * imports of it add up to mem_total at most (the same dma-buf once).
 */
TEST_F(export, a_files_foreign_imports_add_up_to_the_device_size_at_most)
{
	uint64_t total = npuipc_expected_mem_total(0);
	uint32_t half, rest, again, extra = 0;
	int vgem, other, a, b, c;

	vgem = npuipc_open_vgem();
	if (vgem < 0)
		SKIP(return, "vgem is not loaded (modprobe vgem)");
	a = vgem_export(vgem, total / 2);
	b = vgem_export(vgem, total / 2);
	c = vgem_export(vgem, 4 * KIB);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, npuipc_bo_import(self->fd, a, 0, &half));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, b, 0, &rest));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, a, 0, &again));
	EXPECT_EQ(half, again);
	EXPECT_EQ(-ENOSPC, npuipc_bo_import(self->fd, c, 0, &extra));
	EXPECT_EQ(0, extra);
	EXPECT_EQ(2, npuipc_debugfs_value(self->fd, "imports"));
	/* Another file has a limit of its own. */
	other = npuipc_open_device(0);
	ASSERT_LE(0, other);
	EXPECT_EQ(0, npuipc_bo_import(other, c, 0, &extra));
	close(other);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, half));
	EXPECT_EQ(0, npuipc_bo_import(self->fd, c, 0, &extra));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, extra));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, rest));
	close(a);
	close(b);
	close(c);
	close(vgem);
}

/*
 * Another exporter's memory is reached only through its own CPU-access
 * protocol, which a job may not use: its fence must signal whatever the
 * exporter's locks and fences do.
 */
TEST_F(export, engine_refuses_copy_and_fill_on_another_exporters_buffer)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 16, .bpp = 32 };
	struct drm_npuipc_job job;
	uint32_t imported, stream;
	uint8_t *vp;
	int vgem, dmabuf, status;

	vgem = npuipc_open_vgem();
	if (vgem < 0)
		SKIP(return, "vgem is not loaded (modprobe vgem)");
	dmabuf = vgem_dmabuf(vgem, &dumb, 5, &vp);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &stream));

	job = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_FILL, .dst = imported, .size = 4096,
				       .value = 1 };
	EXPECT_EQ(-EOPNOTSUPP, npuipc_submit(self->fd, stream, &job, 1, NULL));
	job = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_COPY, .dst = self->handle,
				       .src = imported, .size = 4096 };
	EXPECT_EQ(-EOPNOTSUPP, npuipc_submit(self->fd, stream, &job, 1, NULL));
	job = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_COPY, .dst = imported,
				       .src = self->handle, .size = 4096 };
	EXPECT_EQ(-EOPNOTSUPP, npuipc_submit(self->fd, stream, &job, 1, NULL));
	/* Nothing ran: the stream is idle and vgem's bytes are as written. */
	ASSERT_EQ(0, npuipc_wait(self->fd, stream, 0, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(has_pattern(vp, dumb.size, 0, 5));

	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, stream));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	munmap(vp, dumb.size);
	close(dmabuf);
	close(vgem);
}

/*
 * DRM's PRIME ioctls, through libdrm, go through npuipc's own export and
 * import: a buffer's PRIME dma-buf is its whole read-write export, and a
 * file has one handle per dma-buf, whichever ioctl imported it.
 */
TEST_F(export, prime_handle_to_fd_is_the_buffers_whole_read_write_export)
{
	int prime, again, exported;
	uint8_t *p;

	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->handle, DRM_CLOEXEC | DRM_RDWR, &prime));
	EXPECT_EQ(FD_CLOEXEC, fcntl(prime, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_RDWR, fcntl(prime, F_GETFL) & O_ACCMODE);
	EXPECT_EQ((off_t)self->size, dmabuf_size(prime));
	/* Without DRM_RDWR too: every caller gets the one read-write dma-buf. */
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->handle, 0, &again));
	EXPECT_EQ(0, fcntl(again, F_GETFD) & FD_CLOEXEC);
	EXPECT_TRUE(same_file(prime, again));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, self->size, 0, &exported));
	EXPECT_TRUE(same_file(prime, exported));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "dmabufs"));

	p = mmap(NULL, self->size, PROT_READ | PROT_WRITE, MAP_SHARED, prime, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, self->size, 0, 7));
	p[9] = 0x99;
	EXPECT_EQ(0x99, self->map[9]);
	munmap(p, self->size);
	close(prime);
	close(again);
	close(exported);
}

TEST_F(export, importing_a_buffers_own_prime_export_returns_its_handle)
{
	uint32_t imported, again;
	int prime;

	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->handle, DRM_CLOEXEC | DRM_RDWR, &prime));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, prime, &imported));
	EXPECT_EQ(self->handle, imported);
	ASSERT_EQ(0, npuipc_bo_import(self->fd, prime, 0, &again));
	EXPECT_EQ(self->handle, again);
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
	close(prime);
}

TEST_F(export, a_dma_buf_imported_again_into_a_file_is_the_same_handle)
{
	struct drm_npuipc_bo_info info;
	uint32_t first, by_prime, again;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB, 0, &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &first));
	EXPECT_NE(self->handle, first);
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, dmabuf, &by_prime));
	EXPECT_EQ(first, by_prime);
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &again));
	EXPECT_EQ(first, again);
	EXPECT_EQ(2, npuipc_debugfs_value(self->fd, "live_objects"));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, first, &info));
	EXPECT_EQ(2 * MIB, info.size);
	EXPECT_EQ(NPUIPC_BO_IMPORTED, info.bo_flags);

	/* One GEM_CLOSE closes it for every import. */
	EXPECT_EQ(0, npuipc_gem_close(self->fd, first));
	EXPECT_EQ(-ENOENT, npuipc_bo_info(self->fd, first, &info));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
	/* And the next import is a new one. */
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, dmabuf, &again));
	EXPECT_EQ(2, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, again));
	close(dmabuf);
}

/*
 * Another file of the same device imports a buffer's PRIME dma-buf as a
 * buffer of its own that reaches the same memory.
 */
TEST_F(export, another_file_imports_a_prime_export_as_its_own_import)
{
	struct drm_npuipc_bo_info info;
	int other, prime, again;
	uint32_t imported;
	size_t size;
	uint8_t *p;

	other = npuipc_open_device(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->handle, DRM_CLOEXEC | DRM_RDWR, &prime));
	ASSERT_EQ(0, drmPrimeFDToHandle(other, prime, &imported));
	ASSERT_EQ(0, npuipc_bo_info(other, imported, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED, info.bo_flags);
	EXPECT_EQ(self->size, info.size);
	p = npuipc_bo_mmap(other, imported, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, size, 0, 7));
	p[3] = 0x33;
	EXPECT_EQ(0x33, self->map[3]);
	munmap(p, size);
	/* Its re-export is the same dma-buf, as PRIME passes imports on. */
	ASSERT_EQ(0, drmPrimeHandleToFD(other, imported, DRM_CLOEXEC, &again));
	EXPECT_TRUE(same_file(prime, again));
	close(again);
	close(prime);
	close(other);
}

/* Read-only and range exports keep their rules through PRIME's ioctls. */
TEST_F(export, prime_passes_on_a_read_only_range_export_with_its_rules)
{
	struct drm_npuipc_bo_info info;
	uint32_t imported;
	int ro, prime;
	size_t size;
	uint8_t *p;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB,
				      NPUIPC_BO_EXPORT_READ_ONLY, &ro));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, ro, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->fd, imported, &info));
	EXPECT_EQ(2 * MIB, info.size);
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_READ_ONLY, info.bo_flags);
	p = npuipc_bo_mmap(self->fd, imported, PROT_READ | PROT_WRITE, &size);
	EXPECT_EQ(MAP_FAILED, p);
	p = npuipc_bo_mmap(self->fd, imported, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, size, 2 * MIB, 7));
	munmap(p, size);

	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, imported, DRM_CLOEXEC | DRM_RDWR, &prime));
	EXPECT_TRUE(same_file(ro, prime));
	EXPECT_EQ(O_RDONLY, fcntl(prime, F_GETFL) & O_ACCMODE);
	EXPECT_EQ((off_t)(2 * MIB), dmabuf_size(prime));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_SHARED, prime, 0));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4 * MIB, PROT_READ, MAP_SHARED, prime, 0));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	close(prime);
	close(ro);
}

/* PRIME imports memory of another npuipc device; BO_IMPORT asks first. */
TEST_F(export, prime_imports_peer_memory_and_bo_import_needs_peer_access)
{
	struct drm_npuipc_bo_info info;
	uint32_t imported, again = 0;
	int prime;

	if (self->peer_fd < 0)
		SKIP(return, "needs two npuipc devices");
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->handle, DRM_CLOEXEC | DRM_RDWR, &prime));
	EXPECT_EQ(-EXDEV, npuipc_bo_import(self->peer_fd, prime, 0, &again));
	EXPECT_EQ(0, npuipc_debugfs_value(self->peer_fd, "live_objects"));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->peer_fd, prime, &imported));
	ASSERT_EQ(0, npuipc_bo_info(self->peer_fd, imported, &info));
	EXPECT_EQ(NPUIPC_BO_IMPORTED | NPUIPC_BO_PEER, info.bo_flags);
	ASSERT_EQ(0, npuipc_bo_import(self->peer_fd, prime, NPUIPC_BO_IMPORT_PEER_ACCESS, &again));
	EXPECT_EQ(imported, again);
	EXPECT_EQ(0, npuipc_gem_close(self->peer_fd, imported));
	close(prime);
}

TEST_F(export, prime_handle_to_fd_rejects_unknown_flags_and_handles)
{
	struct drm_prime_handle prime = { .handle = self->handle, .flags = DRM_CLOEXEC | 0x4 };

	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	prime = (struct drm_prime_handle){ .handle = self->handle + 100, .flags = DRM_CLOEXEC };
	EXPECT_EQ(-ENOENT, npuipc_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "dmabufs"));
}

TEST_F(export, prime_fd_to_handle_rejects_what_is_not_a_dma_buf)
{
	struct drm_prime_handle prime = { .fd = self->fd };
	int closed = dup(self->fd);

	EXPECT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
	ASSERT_LE(0, closed);
	close(closed);
	prime = (struct drm_prime_handle){ .fd = closed };
	EXPECT_EQ(-EBADF, npuipc_ioctl(self->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
	prime = (struct drm_prime_handle){ .fd = -1 };
	EXPECT_EQ(-EBADF, npuipc_ioctl(self->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
}

/* BO_EXPORT: every refused input. */
static void expect_export_rejected(struct __test_metadata *_metadata, int fd,
				   struct drm_npuipc_bo_export args, int err)
{
	NPUIPC_EXPECT_REFUSED(err, fd, DRM_IOCTL_NPUIPC_BO_EXPORT, &args);
}

/* A dma-buf maps only shared, and only within its size: -EINVAL otherwise. */
TEST_F(export, dmabuf_mmap_private_or_past_the_end_is_einval)
{
	void *p;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 2 * MIB, 2 * MIB, 0, &dmabuf));
	p = mmap(NULL, 2 * MIB, PROT_READ, MAP_PRIVATE, dmabuf, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4 * MIB, PROT_READ, MAP_SHARED, dmabuf, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dmabuf, 2 * MIB);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* The last page is inside. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dmabuf, 2 * MIB - 4096);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(has_pattern(p, 4096, 4 * MIB - 4096, 7));
	munmap(p, 4096);
	close(dmabuf);
}

/* BO_EXPORT at RLIMIT_NOFILE: -EMFILE, and no export is left behind. */
TEST_F(export, export_at_the_fd_limit_fails_with_emfile_and_leaves_no_export)
{
	int fillers[64], n, fd = -1;

	n = npuipc_fill_fd_table(fillers, 64);
	ASSERT_LT(0, n);
	/* No ASSERT while the table is full: teardown needs fds. */
	EXPECT_EQ(-EMFILE, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &fd));
	EXPECT_EQ(-1, fd);
	/* debugfs takes an fd to read: counted once the table has room. */
	npuipc_empty_fd_table(fillers, n);
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "dmabufs"));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &fd));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "dmabufs"));
	close(fd);
}

TEST_F(export, export_rejects_zero_size)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle, .size = 0 };

	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(export, export_rejects_offset_not_aligned_to_the_page_class)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle, .offset = 4 * KIB, .size = 2 * MIB };

	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(export, export_rejects_size_not_aligned_to_the_page_class)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle, .size = 1 * MIB };

	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(export, export_rejects_unaligned_range_of_normal_pages)
{
	uint32_t normal;
	struct drm_npuipc_bo_export args = { .offset = 100, .size = 4 * KIB };

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * KIB, NPUIPC_PAGE_CLASS_NORMAL, &normal));
	args.handle = normal;
	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
	args.offset = 0;
	args.size = 4 * KIB + 1;
	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, normal));
}

TEST_F(export, export_rejects_range_past_the_end)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle, .offset = 6 * MIB, .size = 4 * MIB };

	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
	args.offset = 10 * MIB;
	args.size = 2 * MIB;
	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
	/* offset + size wrapping around 2^64 */
	args.offset = 2 * MIB;
	args.size = UINT64_MAX - 2 * MIB + 1 - 2 * MIB + 1 + 2 * MIB - 1;
	args.size &= ~(2 * MIB - 1);
	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(export, export_rejects_unknown_handle)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle + 1000, .size = 2 * MIB };

	expect_export_rejected(_metadata, self->fd, args, -ENOENT);
}

TEST_F(export, export_rejects_each_unknown_flag)
{
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		struct drm_npuipc_bo_export args = {
			.handle = self->handle, .size = 2 * MIB, .flags = 1U << bit,
		};

		if (NPUIPC_BO_EXPORT_FLAGS_VALID & (1U << bit))
			continue;
		expect_export_rejected(_metadata, self->fd, args, -EINVAL);
	}
}

TEST_F(export, export_rejects_nonzero_pad)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle, .size = 2 * MIB, .pad = 1 };

	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
}

TEST_F(export, export_rejects_nonzero_fd_on_entry)
{
	struct drm_npuipc_bo_export args = { .handle = self->handle, .size = 2 * MIB, .fd = 3 };

	expect_export_rejected(_metadata, self->fd, args, -EINVAL);
}

/* BO_IMPORT: every refused input. */
static void expect_import_rejected(struct __test_metadata *_metadata, int fd,
				   struct drm_npuipc_bo_import args, int err)
{
	NPUIPC_EXPECT_REFUSED(err, fd, DRM_IOCTL_NPUIPC_BO_IMPORT, &args);
	EXPECT_EQ(1, npuipc_debugfs_value(fd, "live_objects"));
}

TEST_F(export, import_rejects_a_negative_fd)
{
	struct drm_npuipc_bo_import args = { .fd = -1 };

	expect_import_rejected(_metadata, self->fd, args, -EBADF);
}

TEST_F(export, import_rejects_a_closed_fd)
{
	struct drm_npuipc_bo_import args = { 0 };
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &dmabuf));
	close(dmabuf);
	args.fd = dmabuf;
	expect_import_rejected(_metadata, self->fd, args, -EBADF);
}

TEST_F(export, import_rejects_an_fd_that_is_not_a_dmabuf)
{
	struct drm_npuipc_bo_import args = { 0 };
	int pipefd[2];

	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	args.fd = pipefd[0];
	expect_import_rejected(_metadata, self->fd, args, -EINVAL);
	args.fd = self->fd;	/* the DRM fd itself */
	expect_import_rejected(_metadata, self->fd, args, -EINVAL);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST_F(export, import_rejects_each_unknown_flag)
{
	unsigned int bit;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &dmabuf));
	for (bit = 0; bit < 32; bit++) {
		struct drm_npuipc_bo_import args = { .fd = dmabuf, .flags = 1U << bit };

		if (NPUIPC_BO_IMPORT_FLAGS_VALID & (1U << bit))
			continue;
		expect_import_rejected(_metadata, self->fd, args, -EINVAL);
	}
	close(dmabuf);
}

TEST_F(export, import_rejects_nonzero_pad_and_out_fields)
{
	struct drm_npuipc_bo_import args;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->handle, 0, 2 * MIB, 0, &dmabuf));
	args = (struct drm_npuipc_bo_import){ .fd = dmabuf, .pad = 1 };
	expect_import_rejected(_metadata, self->fd, args, -EINVAL);
	args = (struct drm_npuipc_bo_import){ .fd = dmabuf, .handle = 1 };
	expect_import_rejected(_metadata, self->fd, args, -EINVAL);
	args = (struct drm_npuipc_bo_import){ .fd = dmabuf, .size = 1 };
	expect_import_rejected(_metadata, self->fd, args, -EINVAL);
	close(dmabuf);
}

TEST_HARNESS_MAIN
