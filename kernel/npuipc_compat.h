/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels npuipc builds for (Debian 12's 6.1 and
 * 6.12), in one place: the newer kernel's interface, provided on the older
 * one, so that the code reads as written for the newer kernel.
 */
#ifndef __NPUIPC_COMPAT_H__
#define __NPUIPC_COMPAT_H__

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/version.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* A VMA's flags, read-only from 6.3 on, change through these. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
/* pin_user_pages() without the VMA array, which 6.5 dropped. */
static inline long npuipc_pin_user_pages(unsigned long start, unsigned long nr_pages,
					 unsigned int gup_flags, struct page **pages)
{
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
}
#else
#define npuipc_pin_user_pages pin_user_pages
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
/* The mm's own placement of a mapping, a function of its own from 6.10 on. */
static inline unsigned long mm_get_unmapped_area(struct mm_struct *mm, struct file *file,
						 unsigned long addr, unsigned long len,
						 unsigned long pgoff, unsigned long flags)
{
	return mm->get_unmapped_area(file, addr, len, pgoff, flags);
}
#endif

/*
 * DRM's PRIME ioctls: from 6.6 on DRM calls its PRIME helpers by itself;
 * before, a driver names them (and without them the ioctls are -ENOSYS).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
#define NPUIPC_DRM_PRIME_HOOKS						\
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,		\
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
#else
#define NPUIPC_DRM_PRIME_HOOKS
#endif

/*
 * fdinfo: from 6.5 DRM prints the keys every driver shares (drm-driver,
 * drm-client-id from its own client ids, drm-pdev) through
 * drm_show_fdinfo() and asks the driver for the rest; before, the driver
 * prints them all (NPUIPC_DRM_SHOWS_FDINFO says which).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define NPUIPC_DRM_SHOWS_FDINFO true
#define NPUIPC_FOPS_SHOW_FDINFO(fn) .show_fdinfo = drm_show_fdinfo,
#define NPUIPC_DRIVER_SHOW_FDINFO(fn) .show_fdinfo = (fn),
static inline u64 npuipc_drm_client_id(const struct drm_file *file, u64 own)
{
	return file->client_id;
}
#else
#define NPUIPC_DRM_SHOWS_FDINFO false
#define NPUIPC_FOPS_SHOW_FDINFO(fn) .show_fdinfo = (fn),
#define NPUIPC_DRIVER_SHOW_FDINFO(fn)
static inline u64 npuipc_drm_client_id(const struct drm_file *file, u64 own)
{
	return own;
}
#endif

/*
 * Huge PFN maps: from 6.12 (where the architecture supports them) a PFN map
 * may take 2 MiB entries through ->huge_fault() and vmf_insert_pfn_pmd(),
 * with the special bit that GUP-fast respects. On 6.1 GUP-fast would take a
 * PFN map's PMD as pages, so its PFN maps have 4 KiB entries only, and the
 * huge fault handlers are not built (#if NPUIPC_HAVE_PMD_PFNMAP).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0) && defined(CONFIG_ARCH_SUPPORTS_PMD_PFNMAP)
#define NPUIPC_HAVE_PMD_PFNMAP 1
#define NPUIPC_VM_HUGE_FAULT(fn) .huge_fault = (fn),
#else
#define NPUIPC_HAVE_PMD_PFNMAP 0
#define NPUIPC_VM_HUGE_FAULT(fn)
#endif

#endif /* __NPUIPC_COMPAT_H__ */
