// SPDX-License-Identifier: GPL-2.0
/*
 * Host memory registration (BO_USERPTR): a range of the caller's memory
 * pinned as the pages of a buffer object, which jobs copy and fill as
 * device memory and mmap() maps again. Long-term pins, counted against the
 * caller's RLIMIT_MEMLOCK as VFIO counts its pins (account_locked_vm()).
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "npuipc_drv.h"
#include "npuipc_gem.h"
#include "npuipc_userptr.h"
#include "drm/npuipc_drm.h"

/* Pinned at a time, so that a fatal signal is seen between batches. */
#define NPUIPC_USERPTR_BATCH	512

static int npuipc_userptr_pin(struct npuipc_bo *bo, unsigned long addr, pgoff_t npages,
			      bool read_only)
{
	unsigned int gup = FOLL_LONGTERM | (read_only ? 0 : FOLL_WRITE);
	pgoff_t done = 0;
	long ret;

	while (done < npages) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		ret = pin_user_pages_fast(addr + (done << PAGE_SHIFT),
					  min_t(pgoff_t, npages - done, NPUIPC_USERPTR_BATCH), gup,
					  bo->mem.pages + done);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			goto err_unpin;
		}
		done += ret;
		cond_resched();
	}
	return 0;

err_unpin:
	unpin_user_pages(bo->mem.pages, done);
	/* What cannot be pinned is a bad range to the caller, whatever GUP said. */
	return ret == -EINTR || ret == -ENOMEM ? ret : -EFAULT;
}

/**
 * npuipc_ioctl_bo_userptr() - make a range of the caller's memory a buffer
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_bo_userptr
 * @file: the calling DRM file, which gets the buffer's handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_bo_userptr in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_bo_userptr(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_npuipc_bo_userptr *args = data;
	bool read_only = args->flags & NPUIPC_BO_USERPTR_READ_ONLY;
	pgoff_t npages = args->size >> PAGE_SHIFT;
	struct npuipc_bo *bo;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_BO_USERPTR_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->handle))
		return -EINVAL;
	if (npuipc_refuse(drm, !args->size || args->size > NPUIPC_BO_MAX_SIZE ||
			  !PAGE_ALIGNED(args->size) || !PAGE_ALIGNED(args->addr) ||
			  args->addr + args->size < args->addr))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(args->addr), args->size))
		return -EFAULT;

	ret = account_locked_vm(current->mm, npages, true);
	if (ret)
		return ret;
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo) {
		ret = -ENOMEM;
		goto err_unaccount;
	}
	bo->mem.pages = kvcalloc(npages, sizeof(*bo->mem.pages), GFP_KERNEL_ACCOUNT);
	if (!bo->mem.pages) {
		ret = -ENOMEM;
		goto err_free_bo;
	}
	ret = npuipc_userptr_pin(bo, args->addr, npages, read_only);
	if (ret)
		goto err_free_pages;

	bo->page_class = NPUIPC_PAGE_CLASS_NORMAL;
	bo->bo_flags = NPUIPC_BO_USERPTR | (read_only ? NPUIPC_BO_READ_ONLY : 0);
	spin_lock_init(&bo->export_lock);
	mmgrab(current->mm);
	bo->userptr_mm = current->mm;
	/* From here npuipc_bo_free() undoes all of it. */
	return npuipc_bo_publish(drm, bo, args->size, file, &args->handle);

err_free_pages:
	kvfree(bo->mem.pages);
err_free_bo:
	kfree(bo);
err_unaccount:
	account_locked_vm(current->mm, npages, false);
	return ret;
}

void npuipc_userptr_release(struct npuipc_bo *bo)
{
	pgoff_t npages = bo->base.size >> PAGE_SHIFT;

	/* The device may have written them: dirty, unless it could not. */
	unpin_user_pages_dirty_lock(bo->mem.pages, npages, !(bo->bo_flags & NPUIPC_BO_READ_ONLY));
	kvfree(bo->mem.pages);
	bo->mem.pages = NULL;
	account_locked_vm(bo->userptr_mm, npages, false);
	mmdrop(bo->userptr_mm);
	bo->userptr_mm = NULL;
}
