/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * npuipc: uapi of the mock NPU DRM render driver.
 *
 * Shared by the kernel module, libnpuipc and the tests. Every structure is
 * made of fixed-width fields, padded explicitly to a multiple of 8 bytes;
 * user pointers travel as __u64. Every ioctl rejects, with -EINVAL, flag bits
 * outside its *_FLAGS_VALID mask, non-zero padding and non-zero output fields,
 * rejects unknown object handles with -ENOENT, and handles of another
 * kind of object than expected with -EINVAL. An ioctl that fails changes
 * nothing.
 *
 * The full reference, with each ioctl's errors, is Documentation/uapi.md.
 */
#ifndef NPUIPC_DRM_H
#define NPUIPC_DRM_H

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* Name reported by DRM_IOCTL_VERSION; libraries find npuipc nodes by it. */
#define NPUIPC_DRIVER_NAME "npuipc"

/*
 * Bumped whenever an ioctl or a structure is added. Old structures never
 * change meaning; new fields go at the end, and the DRM core zero-extends
 * structures passed by older userspace.
 */
#define NPUIPC_UAPI_VERSION 13

/* The device is RAM-backed and created by the module's parameters. */
#define NPUIPC_CAP_VIRTUAL		(1ULL << 0)
/* DRM syncobjs, binary and timeline, are available on the device. */
#define NPUIPC_CAP_SYNCOBJ_TIMELINE	(1ULL << 1)
/* Buffer objects: create, export as dma-buf, import (uapi version 2). */
#define NPUIPC_CAP_BO			(1ULL << 2)
/* Streams, jobs, events and notifies (uapi version 3). */
#define NPUIPC_CAP_STREAMS		(1ULL << 3)
/* The RESET_NOTIFY job (uapi version 4). */
#define NPUIPC_CAP_RESET_NOTIFY		(1ULL << 4)
/* GET_INFO reports caller_tgid (uapi version 4). */
#define NPUIPC_CAP_CALLER_TGID		(1ULL << 5)
/*
 * The fence export rule (uapi version 5): a fence that may never signal
 * never leaves as a sync_file (-EDEADLK); COPY and FILL refuse another
 * exporter's buffers (-EOPNOTSUPP).
 */
#define NPUIPC_CAP_BOUNDED_FENCES	(1ULL << 6)
/*
 * The device is a PCI device (a mock NPU: QEMU's ivshmem-plain) whose
 * memory is its BAR; GET_INFO reports its pci_address (uapi version 6).
 */
#define NPUIPC_CAP_PCI			(1ULL << 7)
/*
 * DRM's PRIME ioctls (uapi version 7): PRIME_HANDLE_TO_FD exports a buffer
 * whole, read-write, as BO_EXPORT of the whole buffer does; PRIME_FD_TO_HANDLE
 * and BO_IMPORT keep one handle per dma-buf per file. No other driver may
 * attach to a dma-buf of BAR memory.
 */
#define NPUIPC_CAP_PRIME		(1ULL << 8)
/*
 * The device is this server's view of a memory fabric (uapi version 12):
 * a window that the servers of a fabric share, each allocating from its
 * own part (BO_CREATE here), importing ranges of the others' parts
 * (FABRIC_IMPORT). It runs no jobs of its own: an NPU reaches fabric
 * memory through a dma-buf exported from here. See Documentation/fabric.md.
 */
#define NPUIPC_CAP_FABRIC		(1ULL << 9)
/* GET_INFO's device_index of the first fabric window. */
#define NPUIPC_FABRIC_FIRST_INDEX	1024

#define DRM_NPUIPC_GET_INFO	0x00
#define DRM_NPUIPC_BO_CREATE	0x01
#define DRM_NPUIPC_BO_INFO	0x02
#define DRM_NPUIPC_BO_EXPORT	0x03
#define DRM_NPUIPC_BO_IMPORT	0x04
#define DRM_NPUIPC_OBJ_CREATE	0x05
#define DRM_NPUIPC_OBJ_DESTROY	0x06
#define DRM_NPUIPC_OBJ_EXPORT	0x07
#define DRM_NPUIPC_OBJ_IMPORT	0x08
#define DRM_NPUIPC_SUBMIT	0x09
#define DRM_NPUIPC_WAIT		0x0a
#define DRM_NPUIPC_STREAM_SET_PARAM	0x0b
#define DRM_NPUIPC_STREAM_ABORT	0x0c
#define DRM_NPUIPC_BO_USERPTR	0x0d
#define DRM_NPUIPC_FABRIC_INFO	0x0e
#define DRM_NPUIPC_FABRIC_IMPORT	0x0f
#define DRM_NPUIPC_FABRIC_HOLD	0x10
#define DRM_NPUIPC_FABRIC_RENEW	0x11

/**
 * struct drm_npuipc_get_info - describe the device behind this DRM fd
 * @flags: in, must be 0 (NPUIPC_GET_INFO_FLAGS_VALID).
 * @pad: must be 0.
 * @uapi_version: out, NPUIPC_UAPI_VERSION of the running module.
 * @device_index: out, the device's npuipc index: 0..N-1 for virtual devices,
 *	in creation order, then PCI devices in probe order, each taking the
 *	lowest index free (a device that comes back after an unplug may take
 *	its old one). Independent of the DRM minor numbers. A fabric window
 *	is no NPU: its index is NPUIPC_FABRIC_FIRST_INDEX or above.
 * @mem_total: out, device-memory budget in bytes.
 * @mem_free: out, bytes of that budget not held by any object.
 * @caps: out, NPUIPC_CAP_* bits.
 * @caller_tgid: out, the calling process's PID (thread-group id) in the
 *	initial PID namespace, whatever namespace it runs in (uapi version 4,
 *	NPUIPC_CAP_CALLER_TGID). Older userspace that passes the 40-byte
 *	structure does not see it.
 * @pad2: must be 0.
 * @pci_address: out, a PCI device's address (NPUIPC_CAP_PCI, uapi version 6)
 *	as domain << 16 | bus << 8 | devfn; 0 for a virtual device.
 * @pad3: must be 0.
 * @objects_free: out, how many more streams, events and notifies this file
 *	may hold now: NPUIPC_MAX_OBJECTS less its live handles (uapi
 *	version 8).
 * @pad4: must be 0.
 *
 * All out fields must be 0 on entry.
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad or non-zero out field.
 *	-ENODEV: the device was unplugged.
 *	-EFAULT: the argument is not readable or writable.
 */
struct drm_npuipc_get_info {
	__u32 flags;
	__u32 pad;
	__u32 uapi_version;
	__u32 device_index;
	__u64 mem_total;
	__u64 mem_free;
	__u64 caps;
	__u32 caller_tgid;
	__u32 pad2;
	__u32 pci_address;
	__u32 pad3;
	__u32 objects_free;
	__u32 pad4;
};

#define NPUIPC_GET_INFO_FLAGS_VALID	0x0

#define DRM_IOCTL_NPUIPC_GET_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_GET_INFO, struct drm_npuipc_get_info)

/*
 * Page-size classes of device memory. A buffer's size, and the offset and
 * size of every range exported from it, are multiples of its class's page
 * size, so that no mapping of an export can reach bytes outside it.
 */
#define NPUIPC_PAGE_CLASS_NORMAL	0	/* 4 KiB pages */
#define NPUIPC_PAGE_CLASS_HUGE		1	/* 2 MiB pages */
#define NPUIPC_PAGE_CLASS_HUGE1G	2	/* 1 GiB pages */
#define NPUIPC_PAGE_CLASS_COUNT		3

/* Largest buffer object, whatever the budget. */
#define NPUIPC_BO_MAX_SIZE		(64ULL << 30)

/**
 * struct drm_npuipc_bo_create - allocate device memory
 * @size: in, bytes: a non-zero multiple of the page class's page size, at
 *	most NPUIPC_BO_MAX_SIZE.
 * @page_class: in, NPUIPC_PAGE_CLASS_*.
 * @flags: in, must be 0 (NPUIPC_BO_CREATE_FLAGS_VALID).
 * @handle: out, GEM handle of the new buffer.
 * @pad: must be 0.
 *
 * The buffer is charged to the device's budget and zero-filled: no byte of
 * an earlier owner is visible. It is freed, and its budget returned, when
 * the last handle, mapping and exported dma-buf referring to it is gone.
 *
 * Errors:
 *	-EINVAL: unknown flags or page class, non-zero @pad or @handle, @size
 *		zero, not a multiple of the class's page size, or above
 *		NPUIPC_BO_MAX_SIZE.
 *	-ENOMEM: the device's budget, or system memory, cannot hold it.
 *	-EINTR: a fatal signal arrived while the memory was being allocated.
 */
struct drm_npuipc_bo_create {
	__u64 size;
	__u32 page_class;
	__u32 flags;
	__u32 handle;
	__u32 pad;
};

#define NPUIPC_BO_CREATE_FLAGS_VALID	0x0

/* drm_npuipc_bo_info.bo_flags */
#define NPUIPC_BO_IMPORTED	(1U << 0)	/* made by BO_IMPORT or FABRIC_IMPORT */
#define NPUIPC_BO_READ_ONLY	(1U << 1)	/* no write access by any path */
#define NPUIPC_BO_PEER		(1U << 2)	/* memory of another npuipc device */
#define NPUIPC_BO_FOREIGN	(1U << 3)	/* dma-buf of another exporter */
#define NPUIPC_BO_USERPTR	(1U << 4)	/* a process's memory, pinned (BO_USERPTR) */
#define NPUIPC_BO_FABRIC	(1U << 5)	/* memory of a fabric window (uapi 12) */

/**
 * struct drm_npuipc_bo_info - describe a buffer object
 * @handle: in, GEM handle.
 * @flags: in, must be 0 (NPUIPC_BO_INFO_FLAGS_VALID).
 * @size: out, bytes reachable through the handle.
 * @mmap_offset: out, offset to mmap() the buffer through this DRM fd with
 *	MAP_SHARED (private mappings are refused).
 * @page_class: out, NPUIPC_PAGE_CLASS_* (NORMAL for foreign dma-bufs).
 * @bo_flags: out, NPUIPC_BO_*.
 * @fabric_offset: out, for NPUIPC_BO_FABRIC memory, where the buffer
 *	starts in the fabric window (uapi version 12); 0 otherwise.
 *
 * Errors:
 *	-EINVAL: unknown flags or a non-zero out field.
 *	-ENOENT: @handle names no object of this file.
 */
struct drm_npuipc_bo_info {
	__u32 handle;
	__u32 flags;
	__u64 size;
	__u64 mmap_offset;
	__u32 page_class;
	__u32 bo_flags;
	__u64 fabric_offset;
};

#define NPUIPC_BO_INFO_FLAGS_VALID	0x0

/* Export for reading only: no importer can write by any path. */
#define NPUIPC_BO_EXPORT_READ_ONLY	(1U << 0)
#define NPUIPC_BO_EXPORT_FLAGS_VALID	NPUIPC_BO_EXPORT_READ_ONLY

/**
 * struct drm_npuipc_bo_export - export a byte range of a buffer as a dma-buf
 * @handle: in, GEM handle of a buffer created on this device.
 * @flags: in, NPUIPC_BO_EXPORT_*.
 * @offset: in, start of the range, a multiple of the buffer's page size.
 * @size: in, bytes, non-zero, a multiple of the page size, and
 *	@offset + @size <= the buffer's size.
 * @fd: out, the dma-buf fd (always O_CLOEXEC; O_RDONLY for read-only).
 * @pad: must be 0.
 *
 * The dma-buf reaches exactly [@offset, @offset + @size) of the buffer,
 * through mmap, import, device mapping and later copy jobs alike, and keeps
 * the buffer alive until the dma-buf itself is released. The whole buffer
 * exported read-write is the buffer's one PRIME dma-buf: the same file
 * PRIME_HANDLE_TO_FD returns, kept while the buffer has a handle. Another
 * range or a read-only export is handed out again while it is the buffer's
 * latest one. Its name
 * (DMA_BUF_SET_NAME, the fdinfo "name" line) is left to userspace; debugfs
 * npuipc_exports lists each live export with its importers.
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad or @fd, size zero, a range not
 *		aligned to the page class or past the end, or @handle names a
 *		BO_IMPORT buffer (pass on its dma-buf fd instead; a
 *		FABRIC_IMPORT buffer is exported as the window's own).
 *	-ENOENT: @handle names no object of this file.
 *	-EPERM: @handle names a BO_USERPTR buffer (uapi version 11).
 *	-EMFILE: no free file descriptor.
 *	-ENOMEM: out of memory.
 */
struct drm_npuipc_bo_export {
	__u32 handle;
	__u32 flags;
	__u64 offset;
	__u64 size;
	__s32 fd;
	__u32 pad;
};

/* Allow importing memory of another npuipc device (peer access). */
#define NPUIPC_BO_IMPORT_PEER_ACCESS	(1U << 0)
#define NPUIPC_BO_IMPORT_FLAGS_VALID	NPUIPC_BO_IMPORT_PEER_ACCESS

/**
 * struct drm_npuipc_bo_import - import a dma-buf as a buffer object
 * @fd: in, a dma-buf fd: an npuipc export, or another exporter's dma-buf.
 * @flags: in, NPUIPC_BO_IMPORT_*.
 * @handle: out, GEM handle of the imported buffer.
 * @pad: must be 0.
 * @size: out, bytes of the import.
 *
 * DRM's PRIME_FD_TO_HANDLE with one safeguard added: importing memory of
 * another npuipc device is peer access and needs
 * NPUIPC_BO_IMPORT_PEER_ACCESS (PRIME_FD_TO_HANDLE imports it without).
 * Importing an npuipc export into its own device yields the same memory,
 * without a copy. The import is read-only when the export is, or when the
 * dma-buf was made read-only. As with PRIME, a file has one handle per
 * dma-buf (uapi version 7; before, each import was a new handle): importing
 * a dma-buf the file already imported, or a buffer's own whole read-write
 * export (BO_EXPORT or PRIME_HANDLE_TO_FD) into the file that exported it,
 * returns the handle the file has, and one GEM_CLOSE closes it for all.
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad or out field, @fd is not a
 *		dma-buf, or its size is not a multiple of 4 KiB.
 *	-EBADF: @fd is not an open file descriptor.
 *	-EXDEV: @fd is memory of another npuipc device and
 *		NPUIPC_BO_IMPORT_PEER_ACCESS was not given.
 *	-ENOENT: another thread closed the handle before the import
 *		returned (the file already held one for this dma-buf, or
 *		guessed the new one): the import may be retried. @handle
 *		is left 0, as on every error.
 *	-ENOSPC: the file holds NPUIPC_MAX_IMPORTS imports, or its imports
 *		of other exporters' dma-bufs would add up to more than the
 *		device's mem_total: close some first.
 *	-ENOMEM: out of memory.
 */
/* Import handles one DRM file may hold at once (uapi version 5). */
#define NPUIPC_MAX_IMPORTS		16384

struct drm_npuipc_bo_import {
	__s32 fd;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	__u64 size;
};

#define DRM_IOCTL_NPUIPC_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_BO_CREATE, struct drm_npuipc_bo_create)
#define DRM_IOCTL_NPUIPC_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_BO_INFO, struct drm_npuipc_bo_info)
#define DRM_IOCTL_NPUIPC_BO_EXPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_BO_EXPORT, struct drm_npuipc_bo_export)
#define DRM_IOCTL_NPUIPC_BO_IMPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_BO_IMPORT, struct drm_npuipc_bo_import)

/* The device may reach it for reading only: jobs never write it. */
#define NPUIPC_BO_USERPTR_READ_ONLY	(1U << 0)
#define NPUIPC_BO_USERPTR_FLAGS_VALID	NPUIPC_BO_USERPTR_READ_ONLY

/**
 * struct drm_npuipc_bo_userptr - make a range of the caller's memory a buffer
 * @addr: in, start of the range in the calling process, page-aligned.
 * @size: in, bytes: a non-zero multiple of the page size, at most
 *	NPUIPC_BO_MAX_SIZE, the range not wrapping around.
 * @flags: in, NPUIPC_BO_USERPTR_*.
 * @handle: out, GEM handle of the new buffer (must be 0 on entry).
 *
 * Host memory registration (uapi version 11): the pages of the range are
 * pinned for as long as the buffer lives, and the buffer's memory is those
 * pages. Jobs copy and fill it as device memory, mmap() of the buffer maps
 * the same pages (a second view of them), and writes by either side are
 * the other's to read once the writing job completed (the usual ordering
 * of a job and a process's loads and stores). Pinned pages count as the
 * process's pinned memory (VmPin), limited by RLIMIT_MEMLOCK unless it has
 * CAP_IPC_LOCK, not against the device's budget. The device writes only
 * anonymous, shmem and hugetlb memory; other file mappings are pinned only
 * READ_ONLY. The buffer stays in the caller's file: BO_EXPORT,
 * PRIME_HANDLE_TO_FD and GEM_OPEN from another file refuse it (-EPERM).
 * Unmapping the range leaves the pages pinned until the buffer is freed;
 * the process no longer sees them. BO_INFO reports NPUIPC_BO_USERPTR (and
 * NPUIPC_BO_READ_ONLY).
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @handle, or @addr, @size not as
 *		above.
 *	-EFAULT: part of the range is not mapped, or, without
 *		NPUIPC_BO_USERPTR_READ_ONLY, not writable or a file mapping
 *		other than shmem and hugetlb; or not pinnable for long (PFN
 *		maps such as a buffer's mapping).
 *	-ENOMEM: RLIMIT_MEMLOCK, or kernel memory, does not allow it.
 *	-EINTR: a fatal signal arrived while the pages were being pinned.
 */
struct drm_npuipc_bo_userptr {
	__u64 addr;
	__u64 size;
	__u32 flags;
	__u32 handle;
};

#define DRM_IOCTL_NPUIPC_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_BO_USERPTR, struct drm_npuipc_bo_userptr)

/*
 * A memory fabric (uapi version 12, NPUIPC_CAP_FABRIC): one window of
 * memory that several servers map, described by a header at its start
 * that whoever builds the fabric writes (tools/fabric-window for the
 * emulated servers of tools/vm-pair): which part of the window each server
 * allocates from, by the server's SuperPOD device id (sdid). The module
 * takes the window of the sdid it is given (parameter fabric_sdid). Parts
 * are 2 MiB-aligned, lie after the header's 2 MiB and do not overlap;
 * unused parts and reserved fields are 0. Little-endian, as the servers.
 */
#define NPUIPC_FABRIC_MAGIC		0x315242414655504eULL	/* "NPUFABR1", little-endian */
#define NPUIPC_FABRIC_VERSION		1
#define NPUIPC_FABRIC_MAX_PARTS		16
#define NPUIPC_FABRIC_HEADER_SIZE	(2ULL << 20)

struct npuipc_fabric_part {
	__u32 sdid;
	__u32 flags;		/* must be 0 */
	__u64 offset;
	__u64 size;
	__u64 reserved;		/* must be 0 */
};

struct npuipc_fabric_header {
	__u64 magic;
	__u32 version;
	__u32 nparts;
	__u64 size;		/* of the whole window */
	__u64 reserved[5];	/* must be 0 */
	struct npuipc_fabric_part parts[NPUIPC_FABRIC_MAX_PARTS];
};

/**
 * struct drm_npuipc_fabric_info - describe this server's view of the fabric
 * @flags: in, must be 0 (NPUIPC_FABRIC_INFO_FLAGS_VALID).
 * @sdid: out, this server's sdid.
 * @window_size: out, bytes of the whole window.
 * @part_offset: out, where this server's part starts in the window.
 * @part_size: out, its bytes (BO_CREATE allocates from it).
 * @nparts: out, how many servers' parts the window has.
 * @pad: must be 0.
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad or out field.
 *	-EOPNOTSUPP: the device is not a fabric window.
 */
struct drm_npuipc_fabric_info {
	__u32 flags;
	__u32 sdid;
	__u64 window_size;
	__u64 part_offset;
	__u64 part_size;
	__u32 nparts;
	__u32 pad;
};

#define NPUIPC_FABRIC_INFO_FLAGS_VALID	0x0

/**
 * struct drm_npuipc_fabric_import - map a range of another server's part
 * @offset: in, where the range starts in the window, page-aligned.
 * @size: in, bytes: non-zero, page-aligned.
 * @sdid: in, the server whose part holds the whole range (not this one).
 * @flags: in, must be 0 (NPUIPC_FABRIC_IMPORT_FLAGS_VALID).
 * @handle: out, GEM handle of a buffer over the range (must be 0 on entry).
 * @pad: must be 0.
 * @lease_fd: out, the import's lease fd, O_CLOEXEC (must be 0 on entry;
 *	uapi version 13).
 * @pad2: must be 0.
 * @lease_deadline_ns: in, the end of the lease's term, in CLOCK_BOOTTIME
 *	nanoseconds: the import is revoked then unless FABRIC_RENEW moves
 *	it; 0 for none (it lives while its lease fd is open). At most
 *	NPUIPC_FABRIC_LEASE_MAX_MS from now.
 *
 * The range is the owning server's to allocate: this server's devices and
 * mappings reach the same bytes as the owner's, ordered as the fabric
 * orders them (Documentation/fabric.md). Whether an import is allowed is
 * the fabric daemons' decision, not the driver's: only a process with
 * CAP_SYS_ADMIN imports (DRM_ROOT_ONLY: -EACCES before any other check). The buffer is not charged to this server's part
 * (the owner's budget holds it); BO_INFO reports NPUIPC_BO_IMPORTED and
 * NPUIPC_BO_FABRIC; BO_EXPORT gives it to this server's processes.
 *
 * The import lives by its lease: until its term ends or its lease fd is
 * closed, whichever comes first. Then it is revoked: every user mapping
 * of the buffer, of the dma-bufs exported from it and of their imports on
 * other devices is removed, a later access is SIGBUS and a job on it
 * fails -ENODEV, whoever still holds the buffer. From the deadline on no
 * access begins; the mappings made before go when the kernel's timer
 * runs, later by up to an eighth of the term (the timer wheel). A
 * deadline that passes during the call leaves the import revoked at once.
 * The deadline is absolute, so that a daemon
 * that stalls between reading the clock and asking adds nothing to it.
 * The fd polls readable (EPOLLIN) once the buffer's last holder let go;
 * after that, nothing is revoked. The fabric daemon keeps the fd and
 * renews the term while the owner's daemon grants the range
 * (Documentation/fabric.md, Lifetime across servers). A caller built
 * against uapi 12 passes the 32-byte structure: its import has no term
 * and lives until the process exits or execs (the fd it never learns is
 * O_CLOEXEC).
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad, @pad2, @handle or @lease_fd,
 *		@lease_deadline_ns too far; @offset or @size not page-aligned,
 *		@size 0, or the range not wholly in the part of @sdid; @sdid
 *		this server's own or no server's.
 *	-EACCES: the caller lacks CAP_SYS_ADMIN.
 *	-EOPNOTSUPP: the device is not a fabric window.
 *	-ENODEV: the window was unplugged.
 *	-ETIMEDOUT: @lease_deadline_ns has passed.
 *	-EMFILE, -ENFILE: no fd for the lease.
 *	-ENOMEM: kernel memory.
 */
struct drm_npuipc_fabric_import {
	__u64 offset;
	__u64 size;
	__u32 sdid;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	__s32 lease_fd;
	__u32 pad2;
	__u64 lease_deadline_ns;
};

#define NPUIPC_FABRIC_IMPORT_FLAGS_VALID	0x0
#define NPUIPC_FABRIC_LEASE_MAX_MS	600000

/**
 * struct drm_npuipc_fabric_renew - move the end of a FABRIC_IMPORT's lease
 * @lease_fd: in, the import's lease fd.
 * @flags: in, must be 0 (NPUIPC_FABRIC_RENEW_FLAGS_VALID).
 * @deadline_ns: in, the term's new end, in CLOCK_BOOTTIME nanoseconds: in
 *	the future, at most NPUIPC_FABRIC_LEASE_MAX_MS from now.
 *
 * Sooner or later than the end it had (uapi version 13). Only a process
 * with CAP_SYS_ADMIN renews (-EACCES before any other check).
 *
 * Errors:
 *	-EINVAL: unknown flags, @deadline_ns too far; @lease_fd not a lease fd.
 *	-EBADF: @lease_fd is not an open file.
 *	-ETIMEDOUT: @deadline_ns has passed (nothing changed).
 *	-ENODEV: the import was revoked already, or its term ended.
 *	-EACCES: the caller lacks CAP_SYS_ADMIN.
 *	-EOPNOTSUPP: the device is not a fabric window.
 */
struct drm_npuipc_fabric_renew {
	__s32 lease_fd;
	__u32 flags;
	__u64 deadline_ns;
};

#define NPUIPC_FABRIC_RENEW_FLAGS_VALID	0x0

/**
 * struct drm_npuipc_fabric_hold - keep a buffer of this server's part allocated
 * @fd: in, a dma-buf of a buffer this window allocated (BO_CREATE here).
 * @timeout_ms: in, how long from now: 1 to NPUIPC_FABRIC_HOLD_MAX_MS.
 * @flags: in, must be 0 (NPUIPC_FABRIC_HOLD_FLAGS_VALID).
 * @pad: must be 0.
 *
 * Keeps the buffer, and so its range of the part, allocated until
 * @timeout_ms from now, whoever else holds or lets go of it, the caller's
 * process included (uapi version 13). Called again for the same buffer,
 * through any of its dma-bufs, by anyone, it moves the end later, never
 * sooner: a daemon that restarted cannot cut short what the one before
 * it held, nor one grant of a buffer another's. The owning server's
 * fabric daemon holds what it granted for as long as an importer's lease
 * may still run, so that a range is never allocated again under an
 * importer, even when the daemon dies. Only a process with CAP_SYS_ADMIN
 * holds (-EACCES before any other check).
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad, @timeout_ms 0 or above the
 *		limit; @fd a dma-buf of no buffer of this window's own part
 *		(another device's, an import's).
 *	-EBADF: @fd is not an open file. -EINVAL: not a dma-buf.
 *	-EACCES: the caller lacks CAP_SYS_ADMIN.
 *	-EOPNOTSUPP: the device is not a fabric window.
 *	-ENOMEM: kernel memory.
 */
struct drm_npuipc_fabric_hold {
	__s32 fd;
	__u32 timeout_ms;
	__u32 flags;
	__u32 pad;
};

#define NPUIPC_FABRIC_HOLD_FLAGS_VALID	0x0
#define NPUIPC_FABRIC_HOLD_MAX_MS	600000

#define DRM_IOCTL_NPUIPC_FABRIC_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_FABRIC_INFO, struct drm_npuipc_fabric_info)
#define DRM_IOCTL_NPUIPC_FABRIC_IMPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_FABRIC_IMPORT, struct drm_npuipc_fabric_import)
#define DRM_IOCTL_NPUIPC_FABRIC_HOLD \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NPUIPC_FABRIC_HOLD, struct drm_npuipc_fabric_hold)
#define DRM_IOCTL_NPUIPC_FABRIC_RENEW \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NPUIPC_FABRIC_RENEW, struct drm_npuipc_fabric_renew)

/*
 * Execution objects. Their handles live in a namespace of their own per
 * DRM file (not GEM handles), start at 1 and are never 0.
 *
 * STREAM: an in-order queue of jobs run by the device's engine,
 *	asynchronously to the submitter. Private to the file that made it.
 * EVENT: a marker recorded on a stream; complete when everything submitted
 *	before the record has finished. Shareable (OBJ_EXPORT/OBJ_IMPORT);
 *	every holder may record and wait.
 * NOTIFY: a flag owned by the device and file that created it. A record
 *	sets it (a record while it is set is absorbed); a wait-and-reset,
 *	allowed only to the owner, holds its stream until the flag is set and
 *	then clears it, so one record satisfies one wait. Shareable; importers
 *	may only record.
 */
#define NPUIPC_OBJ_STREAM	1
#define NPUIPC_OBJ_EVENT	2
#define NPUIPC_OBJ_NOTIFY	3

/**
 * struct drm_npuipc_obj_create - create a stream, event or notify
 * @type: in, NPUIPC_OBJ_*.
 * @flags: in, must be 0.
 * @handle: out.
 * @pad: must be 0.
 *
 * Errors: -EINVAL (unknown type or flags, non-zero @pad or @handle),
 *	-ENOMEM, -ENOSPC (the file has NPUIPC_MAX_OBJECTS objects).
 */
struct drm_npuipc_obj_create {
	__u32 type;
	__u32 flags;
	__u32 handle;
	__u32 pad;
};

#define NPUIPC_OBJ_CREATE_FLAGS_VALID	0x0
#define NPUIPC_MAX_OBJECTS		8192

/**
 * struct drm_npuipc_obj_destroy - drop a handle
 * @handle: in.
 * @flags: in, must be 0.
 *
 * Destroying a stream cancels its jobs that have not run: their fences
 * signal with -ECANCELED; a running COPY or FILL stops within one MiB of
 * work and signals -ECANCELED too. Events and notifies live on while
 * another handle, exported fd or queued job holds them, and are freed
 * with the last.
 *
 * Errors: -EINVAL (unknown flags), -ENOENT (no such handle).
 */
struct drm_npuipc_obj_destroy {
	__u32 handle;
	__u32 flags;
};

#define NPUIPC_OBJ_DESTROY_FLAGS_VALID	0x0

/* Export an event's most recent record as a sync_file instead of the event. */
#define NPUIPC_OBJ_EXPORT_SYNC_FILE	(1U << 0)
#define NPUIPC_OBJ_EXPORT_FLAGS_VALID	NPUIPC_OBJ_EXPORT_SYNC_FILE

/**
 * struct drm_npuipc_obj_export - export an event or notify as an fd
 * @handle: in, an event or notify.
 * @flags: in, NPUIPC_OBJ_EXPORT_*.
 * @fd: out (must be 0 on entry), O_CLOEXEC. An event or notify fd is
 *	pollable: an event fd is readable once its most recent record has
 *	completed (or if it was never recorded); a notify fd once the notify
 *	is set. With NPUIPC_OBJ_EXPORT_SYNC_FILE (events only) the fd is a
 *	sync_file of the most recent record (an already signalled one if
 *	never recorded).
 * @pad: must be 0.
 *
 * Errors: -EINVAL (unknown flags, non-zero @pad or @fd, a stream, or
 *	SYNC_FILE on a notify), -ENOENT, -EMFILE, -ENOMEM, -EDEADLK (SYNC_FILE
 *	of a record that may never complete: see NPUIPC_SUBMIT_OUT_FENCE).
 */
struct drm_npuipc_obj_export {
	__u32 handle;
	__u32 flags;
	__s32 fd;
	__u32 pad;
};

/**
 * struct drm_npuipc_obj_import - import an event or notify fd
 * @fd: in, an fd from OBJ_EXPORT (not a sync_file).
 * @flags: in, must be 0.
 * @handle: out, a new handle in this file.
 * @type: out, NPUIPC_OBJ_EVENT or NPUIPC_OBJ_NOTIFY.
 *
 * Errors: -EINVAL (unknown flags, non-zero out field, @fd not an npuipc
 *	event or notify), -EBADF, -ENOMEM, -ENOSPC.
 */
struct drm_npuipc_obj_import {
	__s32 fd;
	__u32 flags;
	__u32 handle;
	__u32 type;
};

#define NPUIPC_OBJ_IMPORT_FLAGS_VALID	0x0

/*
 * Job kinds. Fields a kind does not use must be 0.
 *
 * COPY: @size bytes from GEM @src at @src_offset to GEM @dst at @dst_offset.
 * FILL: @size bytes of GEM @dst at @dst_offset set to the byte @value; with
 *	@flags NPUIPC_FILL_U32 (uapi version 10), @dst_offset and @size whole
 *	32-bit words, each set to the word @value.
 * WAIT_SYNC_FILE: wait for the sync_file fd @object (taken at submit).
 * WAIT_SYNCOBJ: wait for syncobj @object at timeline point @value (0 for a
 *	binary syncobj); the point must have a fence at submit.
 * WAIT_EVENT: wait for the most recent record of event @object as of this
 *	submit; a never-recorded event is complete.
 * WAIT_NOTIFY: wait until notify @object is set, then reset it; owner only.
 * RECORD_EVENT: record event @object.
 * RECORD_NOTIFY: set notify @object when reached.
 * RESET_NOTIFY: clear notify @object when reached, dropping a record no
 *	wait has consumed; owner only (uapi version 4, NPUIPC_CAP_RESET_NOTIFY).
 * WRITE_VALUE: store the 64-bit @value at @dst_offset of GEM @dst (8-byte
 *	aligned, writable) when reached (uapi version 10); with @flags
 *	NPUIPC_WRITE_VALUE_ADD, _OR or _AND, combine it with the word instead,
 *	atomically with every other value job's update of a word.
 * WAIT_VALUE: wait until the 64-bit word at @dst_offset of GEM @dst
 *	(8-byte aligned) compares true with @value, the comparison being
 *	@flags, one of NPUIPC_WAIT_VALUE_* (uapi version 10); with
 *	NPUIPC_WAIT_VALUE_CLEAR too, the word (then writable) is set to 0 in
 *	the same atomic step as the comparison that ends the wait. Anything may
 *	change the word, a job or a process's mapping: the device re-reads it
 *	while the job waits, on the next timer tick, then at intervals
 *	doubling up to 16 ms. Like WAIT_NOTIFY it
 *	waits on userspace, whatever its timeout (NPUIPC_SUBMIT_OUT_FENCE).
 *
 * WAIT_* jobs take @timeout_ns (0: no timeout). A wait that times out, or
 * whose fence signals an error, fails with that error (-ETIMEDOUT,
 * -ECANCELED, ...); COPY and FILL fail with -ETIMEDOUT past the device's
 * job timeout. A failed job puts the stream in error, which
 * DRM_IOCTL_NPUIPC_WAIT reports and NPUIPC_WAIT_RECOVER clears. What the
 * stream does next is its failure mode (DRM_IOCTL_NPUIPC_STREAM_SET_PARAM):
 * by default (NPUIPC_FAILURE_STOP) its later jobs are cancelled
 * (-ECANCELED) and new submits fail with -EIO until the stream is
 * recovered or destroyed; with NPUIPC_FAILURE_CONTINUE its later jobs run
 * and it takes new ones.
 */
#define NPUIPC_JOB_COPY			1
#define NPUIPC_JOB_FILL			2
#define NPUIPC_JOB_WAIT_SYNC_FILE	3
#define NPUIPC_JOB_WAIT_SYNCOBJ		4
#define NPUIPC_JOB_WAIT_EVENT		5
#define NPUIPC_JOB_WAIT_NOTIFY		6
#define NPUIPC_JOB_RECORD_EVENT		7
#define NPUIPC_JOB_RECORD_NOTIFY	8
#define NPUIPC_JOB_RESET_NOTIFY		9
#define NPUIPC_JOB_WRITE_VALUE		10
#define NPUIPC_JOB_WAIT_VALUE		11

/* FILL's @flags. */
#define NPUIPC_FILL_U32			(1U << 0)
#define NPUIPC_FILL_FLAGS_VALID		NPUIPC_FILL_U32

/* WRITE_VALUE's @flags: how @value goes into the word w. */
#define NPUIPC_WRITE_VALUE_SET		0	/* w = value */
#define NPUIPC_WRITE_VALUE_ADD		1	/* w += value */
#define NPUIPC_WRITE_VALUE_OR		2	/* w |= value */
#define NPUIPC_WRITE_VALUE_AND		3	/* w &= value */

/* WAIT_VALUE comparisons (the low byte of @flags) of the word w with @value. */
#define NPUIPC_WAIT_VALUE_GEQ		0	/* (__s64)(w - value) >= 0: cyclic */
#define NPUIPC_WAIT_VALUE_EQ		1	/* w == value */
#define NPUIPC_WAIT_VALUE_AND		2	/* (w & value) != 0 */
#define NPUIPC_WAIT_VALUE_NOR		3	/* ~(w | value) != 0 */
#define NPUIPC_WAIT_VALUE_LT		4	/* w < value (unsigned) */
#define NPUIPC_WAIT_VALUE_GT		5	/* w > value (unsigned) */
#define NPUIPC_WAIT_VALUE_GE		6	/* w >= value (unsigned) */
#define NPUIPC_WAIT_VALUE_ALL		7	/* (w & value) == value */
#define NPUIPC_WAIT_VALUE_CMP_MASK	0xffU
/* With the comparison: the word is set to 0 as the wait ends. */
#define NPUIPC_WAIT_VALUE_CLEAR		(1U << 8)

struct drm_npuipc_job {
	__u32 kind;
	__u32 flags;		/* FILL's, WRITE_VALUE's and WAIT_VALUE's; otherwise 0 */
	__u32 dst;
	__u32 src;
	__u64 dst_offset;
	__u64 src_offset;
	__u64 size;
	__u64 value;
	__u32 object;
	__u32 pad;
	__u64 timeout_ns;
};

#define NPUIPC_MAX_JOBS_PER_SUBMIT	256
/* Jobs submitted to one stream and not yet complete (uapi version 5). */
#define NPUIPC_MAX_QUEUED_JOBS		16384

/*
 * Return a sync_file of the last job's fence in @out_fence_fd. Refused
 * (-EDEADLK, nothing queued) when that fence may never signal: the job, or
 * one before it on the stream not yet complete, waits without a timeout
 * (or one above 60 s) for a notify or for such a fence (an event recorded behind one, in any
 * process). Fences leaving npuipc must signal in bounded time, since other
 * drivers wait for them; npuipc's own event and notify fds may wait forever.
 */
#define NPUIPC_SUBMIT_OUT_FENCE		(1U << 0)
#define NPUIPC_SUBMIT_FLAGS_VALID	NPUIPC_SUBMIT_OUT_FENCE

/**
 * struct drm_npuipc_submit - queue jobs on a stream
 * @stream: in, stream handle.
 * @flags: in, NPUIPC_SUBMIT_*.
 * @jobs: in, user pointer to @job_count struct drm_npuipc_job.
 * @job_count: in, 1..NPUIPC_MAX_JOBS_PER_SUBMIT.
 * @job_size: in, sizeof(struct drm_npuipc_job).
 * @out_fence_fd: out (must be 0 on entry), with NPUIPC_SUBMIT_OUT_FENCE.
 * @pad: must be 0.
 *
 * Every job is checked before any is queued: all or nothing. Byte ranges
 * must lie inside their buffers, and a read-only buffer cannot be written.
 *
 * Errors:
 *	-EINVAL: unknown flags or job kind, non-zero padding, unused or out
 *		fields, a bad @job_count or @job_size, a range outside its
 *		buffer (overflow-safe), a FILL value above 255 (above
 *		U32_MAX, or a range not of whole words, with NPUIPC_FILL_U32), a value
 *		word not 8-byte aligned, an unknown comparison, a sync_file fd
 *		that is not one, a syncobj point with no fence.
 *	-ENOENT: unknown stream, GEM, event, notify or syncobj handle; a
 *		@stream or job object handle of the wrong kind gives -EINVAL.
 *	-EBADF: a WAIT_SYNC_FILE fd that is not open.
 *	-EACCES: a read-only buffer as COPY, FILL or WRITE_VALUE target.
 *	-EOPNOTSUPP: a buffer of a COPY, FILL or value job imported from another exporter
 *		(NPUIPC_BO_FOREIGN): only its exporter may reach its memory.
 *	-EDEADLK: NPUIPC_SUBMIT_OUT_FENCE on a fence that may never signal.
 *	-EPERM: WAIT_NOTIFY or RESET_NOTIFY on a notify this file does not own.
 *	-EIO: the stream is in error.
 *	-ENOSPC: the stream would hold more than NPUIPC_MAX_QUEUED_JOBS jobs
 *		not yet complete; retry once some have completed.
 *	-EFAULT, -ENOMEM, -EMFILE.
 *	-EINTR, or the cgroup core's error (e.g. -EACCES from a security
 *		module): the process's copy worker, the thread that runs COPY
 *		and FILL in its cgroups, could not be made or moved there for
 *		the file's first COPY or FILL; nothing is queued.
 */
struct drm_npuipc_submit {
	__u32 stream;
	__u32 flags;
	__u64 jobs;
	__u32 job_count;
	__u32 job_size;
	__s32 out_fence_fd;
	__u32 pad;
};

/* Clear a stream's error state once it is idle. */
#define NPUIPC_WAIT_RECOVER		(1U << 0)
#define NPUIPC_WAIT_FLAGS_VALID		NPUIPC_WAIT_RECOVER

/**
 * struct drm_npuipc_wait - wait on the host for a stream or an event
 * @handle: in, a stream (all jobs submitted so far) or an event (its most
 *	recent record).
 * @flags: in, NPUIPC_WAIT_*; RECOVER only for streams.
 * @timeout_ns: in, relative; 0 polls, negative waits without limit (still
 *	interruptible by signals). When a signal interrupts a positive
 *	timeout, what is left of it is written back here (the one exception
 *	to "a failing ioctl writes nothing"), so that the call the kernel
 *	restarts (SA_RESTART) ends at the first deadline.
 * @status: out (must be 0 on entry): 0, or the negative errno the stream
 *	is in error with / the record's fence signalled with.
 * @failed_job: out (uapi version 9; its value on entry is ignored): for a
 *	stream in error after a failed job, the sequence number of the job
 *	that failed first (the stream's first job is 1; the low 32 bits);
 *	otherwise 0 (a healthy stream, or one an abort or shutdown put in
 *	error).
 *
 * With NPUIPC_WAIT_RECOVER the wait covers, besides the jobs submitted so
 * far, the ones still being cancelled after the stream failed; then the
 * error is cleared and reported in @status. On a healthy stream RECOVER
 * changes nothing.
 *
 * A stream destroyed (by another thread) while the wait runs completes it:
 * @status is -ECANCELED when jobs were cancelled (0 when none was left).
 *
 * Errors: -ETIME (not complete in time), -EINTR (a signal, with a handler
 *	installed without SA_RESTART), -EINVAL (unknown flags, non-zero
 *	@status, RECOVER on an event, or a notify handle), -ENOENT.
 */
struct drm_npuipc_wait {
	__u32 handle;
	__u32 flags;
	__s64 timeout_ns;
	__s32 status;
	__u32 failed_job;
};

/* Values of NPUIPC_STREAM_PARAM_FAILURE_MODE. */
#define NPUIPC_FAILURE_STOP		0
#define NPUIPC_FAILURE_CONTINUE		1

/* What a stream does after a failed job (uapi version 9); see struct drm_npuipc_job. */
#define NPUIPC_STREAM_PARAM_FAILURE_MODE	1

#define NPUIPC_STREAM_SET_PARAM_FLAGS_VALID	0x0

/**
 * struct drm_npuipc_stream_set_param - set one of a stream's parameters
 * @stream: in, stream handle.
 * @param: in, NPUIPC_STREAM_PARAM_*.
 * @value: in, the parameter's new value.
 * @flags: in, must be 0.
 * @pad: must be 0.
 *
 * A new failure mode applies to failures from then on: a stream already
 * stopped by a failure stays stopped until recovered.
 *
 * Errors: -EINVAL (unknown flags or @param, a value out of its range,
 *	non-zero @pad, a handle that is not a stream), -ENOENT (unknown
 *	handle).
 */
struct drm_npuipc_stream_set_param {
	__u32 stream;
	__u32 param;
	__u64 value;
	__u32 flags;
	__u32 pad;
};

#define NPUIPC_STREAM_ABORT_FLAGS_VALID	0x0

/**
 * struct drm_npuipc_stream_abort - discard a stream's queued jobs
 * @stream: in, stream handle.
 * @flags: in, must be 0.
 *
 * Every job of the stream not yet complete is cancelled: its fence signals
 * -ECANCELED (a job running a copy ends first, within the job timeout; a
 * waiting job stops waiting). Submits racing with the abort fail with -EIO.
 * Once the queue is empty the stream's error is cleared: it takes new jobs
 * as a new stream would, in the failure mode it had. Interrupted by a
 * signal (-ERESTARTSYS, restarted by the kernel), the abort goes on and
 * the stream stays in error until an abort or a recovering WAIT ends.
 *
 * Errors: -EINVAL (unknown flags, a handle that is not a stream), -ENOENT
 *	(unknown handle), -EINTR.
 */
struct drm_npuipc_stream_abort {
	__u32 stream;
	__u32 flags;
};

#define DRM_IOCTL_NPUIPC_OBJ_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_OBJ_CREATE, struct drm_npuipc_obj_create)
#define DRM_IOCTL_NPUIPC_OBJ_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NPUIPC_OBJ_DESTROY, struct drm_npuipc_obj_destroy)
#define DRM_IOCTL_NPUIPC_OBJ_EXPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_OBJ_EXPORT, struct drm_npuipc_obj_export)
#define DRM_IOCTL_NPUIPC_OBJ_IMPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_OBJ_IMPORT, struct drm_npuipc_obj_import)
#define DRM_IOCTL_NPUIPC_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_SUBMIT, struct drm_npuipc_submit)
#define DRM_IOCTL_NPUIPC_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPUIPC_WAIT, struct drm_npuipc_wait)
#define DRM_IOCTL_NPUIPC_STREAM_SET_PARAM \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NPUIPC_STREAM_SET_PARAM, struct drm_npuipc_stream_set_param)
#define DRM_IOCTL_NPUIPC_STREAM_ABORT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NPUIPC_STREAM_ABORT, struct drm_npuipc_stream_abort)

#if defined(__cplusplus)
}
#endif

#endif /* NPUIPC_DRM_H */
