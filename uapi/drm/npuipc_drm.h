/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * npuipc: uapi of the mock NPU DRM render driver.
 *
 * Shared by the kernel module, libnpuipc and the tests. Every structure is
 * made of fixed-width fields, padded explicitly to a multiple of 8 bytes;
 * user pointers travel as __u64. Every ioctl rejects, with -EINVAL, flag bits
 * outside its *_FLAGS_VALID mask, non-zero padding and non-zero output fields,
 * and rejects unknown object handles with -ENOENT. An ioctl that fails
 * changes nothing.
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
#define NPUIPC_UAPI_VERSION 2

/* The device is RAM-backed and created by the module's parameters. */
#define NPUIPC_CAP_VIRTUAL		(1ULL << 0)
/* DRM syncobjs, binary and timeline, are available on the device. */
#define NPUIPC_CAP_SYNCOBJ_TIMELINE	(1ULL << 1)
/* Buffer objects: create, export as dma-buf, import (uapi version 2). */
#define NPUIPC_CAP_BO			(1ULL << 2)

#define DRM_NPUIPC_GET_INFO	0x00
#define DRM_NPUIPC_BO_CREATE	0x01
#define DRM_NPUIPC_BO_INFO	0x02
#define DRM_NPUIPC_BO_EXPORT	0x03
#define DRM_NPUIPC_BO_IMPORT	0x04

/**
 * struct drm_npuipc_get_info - describe the device behind this DRM fd
 * @flags: in, must be 0 (NPUIPC_GET_INFO_FLAGS_VALID).
 * @pad: must be 0.
 * @uapi_version: out, NPUIPC_UAPI_VERSION of the running module.
 * @device_index: out, the device's npuipc index: 0..N-1 for virtual devices,
 *	in creation order. Stable for the life of the module, independent of
 *	the DRM minor numbers.
 * @mem_total: out, device-memory budget in bytes.
 * @mem_free: out, bytes of that budget not held by any object.
 * @caps: out, NPUIPC_CAP_* bits.
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
#define NPUIPC_BO_IMPORTED	(1U << 0)	/* made by BO_IMPORT */
#define NPUIPC_BO_READ_ONLY	(1U << 1)	/* no write access by any path */
#define NPUIPC_BO_PEER		(1U << 2)	/* memory of another npuipc device */
#define NPUIPC_BO_FOREIGN	(1U << 3)	/* dma-buf of another exporter */

/**
 * struct drm_npuipc_bo_info - describe a buffer object
 * @handle: in, GEM handle.
 * @flags: in, must be 0 (NPUIPC_BO_INFO_FLAGS_VALID).
 * @size: out, bytes reachable through the handle.
 * @mmap_offset: out, offset to mmap() the buffer through this DRM fd with
 *	MAP_SHARED (private mappings are refused).
 * @page_class: out, NPUIPC_PAGE_CLASS_* (NORMAL for foreign dma-bufs).
 * @bo_flags: out, NPUIPC_BO_*.
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
 * the buffer alive until the dma-buf itself is released. Its fdinfo "name"
 * line reads "npuipc dev=D class=C pid=P importers=N".
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad or @fd, size zero, a range not
 *		aligned to the page class or past the end, or @handle names an
 *		imported buffer (pass on its dma-buf fd instead).
 *	-ENOENT: @handle names no object of this file.
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
 * Importing an npuipc export into its own device yields the same memory,
 * without a copy. Importing it into another npuipc device is peer access
 * and needs NPUIPC_BO_IMPORT_PEER_ACCESS. The import is read-only when the
 * export is, or when @fd was opened read-only. Each import is a new handle.
 *
 * Errors:
 *	-EINVAL: unknown flags, non-zero @pad or out field, or @fd is not a
 *		dma-buf.
 *	-EBADF: @fd is not an open file descriptor.
 *	-EXDEV: @fd is memory of another npuipc device and
 *		NPUIPC_BO_IMPORT_PEER_ACCESS was not given.
 *	-EACCES: the exporter refuses the mapping this import needs.
 *	-ENOMEM: out of memory.
 */
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

#if defined(__cplusplus)
}
#endif

#endif /* NPUIPC_DRM_H */
