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
#define NPUIPC_UAPI_VERSION 1

/* The device is RAM-backed and created by the module's parameters. */
#define NPUIPC_CAP_VIRTUAL		(1ULL << 0)
/* DRM syncobjs, binary and timeline, are available on the device. */
#define NPUIPC_CAP_SYNCOBJ_TIMELINE	(1ULL << 1)

#define DRM_NPUIPC_GET_INFO	0x00

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

#if defined(__cplusplus)
}
#endif

#endif /* NPUIPC_DRM_H */
