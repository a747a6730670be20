// SPDX-License-Identifier: GPL-2.0
/*
 * Host memory registration (BO_USERPTR): a range of the caller's memory
 * pinned as the pages of a buffer object, which jobs copy and fill as
 * device memory and mmap() maps again. Long-term pins, counted as RDMA
 * counts its memory registrations: in the process's pinned memory
 * (mm->pinned_vm, VmPin), limited by RLIMIT_MEMLOCK without CAP_IPC_LOCK.
 * Unlike account_locked_vm() that needs no mmap_lock, which the last put
 * of a buffer may be made under (munmap or exit of a mapping of it).
 */
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "npuipc_compat.h"
#include "npuipc_drv.h"
#include "npuipc_gem.h"
#include "npuipc_userptr.h"
#include "drm/npuipc_drm.h"

/* Pinned at a time, so that a fatal signal is seen between batches. */
#define NPUIPC_USERPTR_BATCH	512

static int npuipc_userptr_account(struct mm_struct *mm, pgoff_t npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Whether the device may write the range long-term, and whether the
 * process may (then a read-only pin still pins for writing, so that it
 * takes the pages the process writes, not the shared zero page or a page
 * a later write copies away from). Device writes go only to anonymous,
 * shmem and hugetlb memory: a file's page cache must see its writes
 * through page_mkwrite, which a pin bypasses (6.5 and later refuse such
 * pins themselves). With mmap_lock held.
 */
static int npuipc_userptr_check_range(struct mm_struct *mm, unsigned long start,
				      unsigned long end, bool read_only, bool *writable)
{
	struct vm_area_struct *vma;
	unsigned long addr;

	*writable = true;
	for (addr = start; addr < end; addr = vma->vm_end) {
		vma = vma_lookup(mm, addr);
		if (!vma)
			return -EFAULT;
		if (!(vma->vm_flags & VM_WRITE))
			*writable = false;
		if (!vma_is_anonymous(vma) && !is_vm_hugetlb_page(vma) &&
		    !(vma->vm_file && shmem_mapping(vma->vm_file->f_mapping))) {
			if (!read_only)
				return -EFAULT;
			*writable = false;
		}
	}
	if (!read_only && !*writable)
		return -EFAULT;
	return 0;
}

static int npuipc_userptr_pin(struct npuipc_bo *bo, unsigned long addr, pgoff_t npages,
			      bool read_only)
{
	struct mm_struct *mm = current->mm;
	pgoff_t done = 0;
	bool writable;
	long ret;

	while (done < npages) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		/* The range is checked and pinned under one lock, a batch at a time. */
		if (mmap_read_lock_killable(mm)) {
			ret = -EINTR;
			goto err_unpin;
		}
		ret = npuipc_userptr_check_range(mm, addr + (done << PAGE_SHIFT),
						 addr + (npages << PAGE_SHIFT), read_only, &writable);
		if (!ret)
			ret = npuipc_pin_user_pages(addr + (done << PAGE_SHIFT),
						    min_t(pgoff_t, npages - done, NPUIPC_USERPTR_BATCH),
						    FOLL_LONGTERM | (writable ? FOLL_WRITE : 0),
						    bo->mem.pages + done);
		mmap_read_unlock(mm);
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

	ret = npuipc_userptr_account(current->mm, npages);
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
	bo->userptr_file = file;
	/* From here npuipc_bo_free() undoes all of it. */
	return npuipc_bo_publish(drm, bo, args->size, file, &args->handle);

err_free_pages:
	kvfree(bo->mem.pages);
err_free_bo:
	kfree(bo);
err_unaccount:
	atomic64_sub(npages, &current->mm->pinned_vm);
	return ret;
}

void npuipc_userptr_release(struct npuipc_bo *bo)
{
	pgoff_t npages = bo->base.size >> PAGE_SHIFT;

	/* The device may have written them: dirty, unless it could not. */
	unpin_user_pages_dirty_lock(bo->mem.pages, npages, !(bo->bo_flags & NPUIPC_BO_READ_ONLY));
	kvfree(bo->mem.pages);
	bo->mem.pages = NULL;
	atomic64_sub(npages, &bo->userptr_mm->pinned_vm);
	mmdrop(bo->userptr_mm);
	bo->userptr_mm = NULL;
}
