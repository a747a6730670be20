// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects (GEM): device memory charged to a device's budget,
 * allocated in page-size classes and mapped to userspace as a PFN map;
 * and the GEM side of imports (npuipc_prime.c makes them): mapped through
 * their exporter, freed by letting go of the dma-buf.
 */
#include <linux/dma-buf.h>
#include <linux/error-injection.h>
#include <linux/genalloc.h>
#include <linux/huge_mm.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mutex.h>
#include <linux/pfn_t.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_vma_manager.h>

#include "npuipc_compat.h"
#include "npuipc_drv.h"
#include "npuipc_file.h"
#include "npuipc_gem.h"
#include "npuipc_prime.h"
#include "npuipc_userptr.h"
#include "drm/npuipc_drm.h"

/**
 * npuipc_page_class_size() - the page size of a page class
 * @page_class: an NPUIPC_PAGE_CLASS_* value
 *
 * Return: 2 MiB for NPUIPC_PAGE_CLASS_HUGE, 1 GiB for NPUIPC_PAGE_CLASS_HUGE1G,
 * 4 KiB for any other class.
 */
u64 npuipc_page_class_size(u32 page_class)
{
	switch (page_class) {
	case NPUIPC_PAGE_CLASS_HUGE:
		return SZ_2M;
	case NPUIPC_PAGE_CLASS_HUGE1G:
		return SZ_1G;
	default:
		return SZ_4K;
	}
}

static unsigned int npuipc_chunk_order(u32 page_class)
{
	return page_class == NPUIPC_PAGE_CLASS_NORMAL ? 0 : NPUIPC_CHUNK_ORDER;
}

/*
 * Device memory is only shared: a private (COW) mapping would give the
 * process a copy instead. (VM_MAYSHARE, as the mm drops VM_SHARED from
 * shared mappings of files opened read-only.) Read-only memory can never
 * gain write access, not even by a later mprotect().
 */
static int npuipc_mmap_check(struct vm_area_struct *vma, bool read_only)
{
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (read_only) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	return 0;
}

/**
 * npuipc_mmap_prepare() - check a mapping of npuipc memory and make it a PFN map
 * @vma: the new mapping
 * @mem: the memory it maps
 * @read_only: whether the memory may only be read
 *
 * Checks a mapping of npuipc memory and makes it a PFN map, as DRM maps GEM
 * objects and TTM fills them: no struct page behind any entry, so GUP (and
 * GUP-fast, which respects the entries' special bit) takes nothing from it
 * and the memory goes with its buffer; for a BAR a write-combined one, as
 * a GPU driver maps its VRAM. 6.1 maps PFN maps with 4 KiB entries only;
 * from 6.12 a 2 MiB run takes one PMD (npuipc_huge_fault_pages()).
 *
 * Return: 0; -EINVAL for a private mapping or a mixed map, -EACCES for a
 * writable mapping of read-only memory.
 */
int npuipc_mmap_prepare(struct vm_area_struct *vma, const struct npuipc_mem *mem,
			bool read_only)
{
	int ret = npuipc_mmap_check(vma, read_only);

	if (ret)
		return ret;
	/* A mixed map (an importer's, forwarding to us) cannot also be a PFN map. */
	if (vma->vm_flags & VM_MIXEDMAP)
		return -EINVAL;
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	/* Decrypted, as ioremap_wc() maps it for the kernel (SME, TDX). */
	if (!mem->pages)
		vma->vm_page_prot = pgprot_decrypted(pgprot_writecombine(vma->vm_page_prot));
	return 0;
}

/*
 * Maps page @index of @mem at the faulting address and, as TTM prefaults
 * around a fault, the rest of its 2 MiB window (within the VMA, @npages
 * and the fault's own PMD: at most NPUIPC_CHUNK_PAGES entries), so that touching 2 MiB
 * costs one fault rather than 512. Each entry goes in through
 * vmf_insert_pfn_prot(), with the mm's own checks (PAT, pfn_modify_allowed);
 * what a racing fault mapped is left as it is.
 */
static vm_fault_t npuipc_fault_window(struct vm_fault *vmf, const struct npuipc_mem *mem,
				      pgoff_t npages, pgoff_t index)
{
	struct vm_area_struct *vma = vmf->vma;
	pgoff_t before = (vmf->address - vma->vm_start) >> PAGE_SHIFT;
	pgoff_t after = (vma->vm_end - vmf->address) >> PAGE_SHIFT;
	unsigned long start;
	pgoff_t first, last, i, pmd_before;
	vm_fault_t ret;

	if (index >= npages)
		return VM_FAULT_SIGBUS;
	ret = vmf_insert_pfn_prot(vma, vmf->address, npuipc_mem_pfn(mem, index),
				  vma->vm_page_prot);
	if (ret & VM_FAULT_ERROR)
		return ret;

	first = max(round_down(index, NPUIPC_CHUNK_PAGES), index - before);
	last = min3(round_down(index, NPUIPC_CHUNK_PAGES) + NPUIPC_CHUNK_PAGES,
		    npages, index + after);
	/*
	 * Nor past the faulting address's own 2 MiB of address space: a page
	 * table made under a neighbouring PMD would race a huge fault there.
	 */
	pmd_before = (vmf->address & ~PMD_MASK) >> PAGE_SHIFT;
	if (index >= pmd_before)
		first = max(first, index - pmd_before);
	last = min(last, index - pmd_before + PTRS_PER_PMD);
	start = vmf->address - ((index - first) << PAGE_SHIFT);
	for (i = first; i < last; i++) {
		if (i == index)
			continue;
		/* Only a prefault: the faulting page is in. */
		if (vmf_insert_pfn_prot(vma, start + ((i - first) << PAGE_SHIFT),
					npuipc_mem_pfn(mem, i), vma->vm_page_prot) & VM_FAULT_ERROR)
			break;
	}
	return VM_FAULT_NOPAGE;
}

/**
 * npuipc_mem_enter() - begin an access to memory that may go away
 * @mem: the memory
 * @guard: set for npuipc_mem_exit()
 *
 * BAR memory is reached only while its device is there, and another
 * server's fabric memory only while its import's lease holds. RAM always.
 *
 * Return: true when the access may go on (npuipc_mem_exit() after), false
 * when the memory is gone (nothing to exit).
 */
bool npuipc_mem_enter(const struct npuipc_mem *mem, struct npuipc_mem_guard *guard)
{
	if (mem->dev && !drm_dev_enter(mem->dev, &guard->dev_idx))
		return false;
	if (mem->lease && !npuipc_lease_enter(mem->lease, &guard->lease_idx)) {
		if (mem->dev)
			drm_dev_exit(guard->dev_idx);
		return false;
	}
	return true;
}

/**
 * npuipc_mem_exit() - end an access begun by npuipc_mem_enter()
 * @mem: the memory
 * @guard: what npuipc_mem_enter() set
 */
void npuipc_mem_exit(const struct npuipc_mem *mem, const struct npuipc_mem_guard *guard)
{
	if (mem->lease)
		npuipc_lease_exit(guard->lease_idx);
	if (mem->dev)
		drm_dev_exit(guard->dev_idx);
}

/**
 * npuipc_fault_pages() - handle a fault in a mapping of npuipc memory
 * @vmf: the fault
 * @mem: the memory mapped
 * @npages: how many pages of @mem the mapping covers; a fault past them is SIGBUS
 * @index: the page of @mem at the faulting address
 *
 * A fault in a mapping of @mem, through a DRM fd or a dma-buf. A BAR is
 * gone with its device: once unplugged (its mappings revoked), touching
 * it is SIGBUS, as is touching a revoked fabric import. RAM outlives the
 * device.
 *
 * Return: VM_FAULT_NOPAGE once the page is mapped, VM_FAULT_SIGBUS, or the
 * error of inserting the page.
 */
vm_fault_t npuipc_fault_pages(struct vm_fault *vmf, const struct npuipc_mem *mem,
			      pgoff_t npages, pgoff_t index)
{
	struct npuipc_mem_guard guard;
	vm_fault_t ret;

	if (!npuipc_mem_enter(mem, &guard))
		return VM_FAULT_SIGBUS;
	ret = npuipc_fault_window(vmf, mem, npages, index);
	npuipc_mem_exit(mem, &guard);
	return ret;
}

atomic_long_t npuipc_pmd_maps = ATOMIC_LONG_INIT(0);

#if NPUIPC_HAVE_PMD_PFNMAP
/*
 * Whether pages @first to @first + 511 of @mem are one naturally aligned
 * 2 MiB run of physical memory, which one PMD can map: BAR memory at an
 * aligned address, or RAM of a folio of 2 MiB or more (the HUGE and
 * HUGE1G classes allocate a chunk as one compound page, its pages in order).
 */
static bool npuipc_mem_is_pmd_run(const struct npuipc_mem *mem, pgoff_t first)
{
	struct page *page;

	if (!IS_ALIGNED(npuipc_mem_pfn(mem, first), HPAGE_PMD_NR))
		return false;
	if (!mem->pages)
		return true;
	page = mem->pages[first];
	return folio_order(page_folio(page)) >= HPAGE_PMD_ORDER &&
	       mem->pages[first + HPAGE_PMD_NR - 1] == nth_page(page, HPAGE_PMD_NR - 1);
}

static vm_fault_t npuipc_fault_pmd(struct vm_fault *vmf, const struct npuipc_mem *mem,
				   pgoff_t npages, pgoff_t index)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address & HPAGE_PMD_MASK;
	pgoff_t before = (vmf->address - addr) >> PAGE_SHIFT;
	pgoff_t first = index - before;
	vm_fault_t ret;

	if (index >= npages)
		return VM_FAULT_SIGBUS;
	if (addr < vma->vm_start || vma->vm_end - addr < HPAGE_PMD_SIZE || index < before ||
	    npages - first < HPAGE_PMD_NR || !npuipc_mem_is_pmd_run(mem, first))
		return VM_FAULT_FALLBACK;
	ret = vmf_insert_pfn_pmd(vmf, __pfn_to_pfn_t(npuipc_mem_pfn(mem, first), PFN_DEV),
				 vmf->flags & FAULT_FLAG_WRITE);
	/* A racing fault that found the entry in place counts too. */
	if (ret == VM_FAULT_NOPAGE)
		atomic_long_inc(&npuipc_pmd_maps);
	return ret;
}

/**
 * npuipc_huge_fault_pages() - handle a huge fault in a mapping of npuipc memory
 * @vmf: the fault
 * @order: the order of the entry the mm asks for
 * @mem: the memory mapped
 * @npages: how many pages of @mem the mapping covers
 * @index: the page of @mem at the faulting address
 *
 * Maps the 2 MiB around the faulting address with one PMD when that much
 * of @mem is one aligned run of physical memory lying wholly in the
 * mapping, as a huge page of hugetlbfs is mapped; otherwise the mm falls
 * back to npuipc_fault_pages(). Built only where the kernel has huge PFN
 * maps (NPUIPC_HAVE_PMD_PFNMAP).
 *
 * Return: VM_FAULT_NOPAGE once mapped, VM_FAULT_FALLBACK, VM_FAULT_SIGBUS
 * past the mapped pages or for an unplugged BAR, or the error of inserting.
 */
vm_fault_t npuipc_huge_fault_pages(struct vm_fault *vmf, unsigned int order,
				   const struct npuipc_mem *mem, pgoff_t npages, pgoff_t index)
{
	struct npuipc_mem_guard guard;
	vm_fault_t ret;

	if (order != HPAGE_PMD_ORDER)
		return VM_FAULT_FALLBACK;
	if (!npuipc_mem_enter(mem, &guard))
		return VM_FAULT_SIGBUS;
	ret = npuipc_fault_pmd(vmf, mem, npages, index);
	npuipc_mem_exit(mem, &guard);
	return ret;
}

#endif

/* vm_pgoff stays DRM's fake offset, so that drm_vma_node_unmap() finds the mapping. */
static pgoff_t npuipc_bo_vm_index(struct vm_fault *vmf)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;

	return vmf->pgoff - drm_vma_node_start(&obj->vma_node);
}

static vm_fault_t npuipc_bo_vm_fault(struct vm_fault *vmf)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;

	return npuipc_fault_pages(vmf, &to_npuipc_bo(obj)->mem, obj->size >> PAGE_SHIFT,
				  npuipc_bo_vm_index(vmf));
}

#if NPUIPC_HAVE_PMD_PFNMAP
static vm_fault_t npuipc_bo_vm_huge_fault(struct vm_fault *vmf, unsigned int order)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;

	/* A process's pages are no 2 MiB runs of their own: 4 KiB at a time. */
	if (to_npuipc_bo(obj)->bo_flags & NPUIPC_BO_USERPTR)
		return VM_FAULT_FALLBACK;
	return npuipc_huge_fault_pages(vmf, order, &to_npuipc_bo(obj)->mem,
				       obj->size >> PAGE_SHIFT, npuipc_bo_vm_index(vmf));
}
#endif

/**
 * npuipc_get_unmapped_area() - choose where an mmap() of the DRM fd goes
 * @file: the DRM fd's file
 * @addr: the address the caller asked for, if any
 * @len: the mapping's length
 * @pgoff: the mapping's offset, in pages
 * @flags: the mmap() flags
 *
 * Where an mmap() of the DRM fd goes: 2 MiB-aligned when it is 2 MiB or
 * more, as hugetlbfs aligns its mappings: a fault fills a buffer's 2 MiB
 * window, which then lies in one page table. A mapping
 * always starts at its buffer's start (DRM looks the fake offset up
 * exactly), so @pgoff needs no say. A placement the caller asked for (a
 * hint that is free, MAP_FIXED) is kept.
 *
 * Return: the mapping's address, or a negative errno from
 * mm_get_unmapped_area().
 */
unsigned long npuipc_get_unmapped_area(struct file *file, unsigned long addr,
				       unsigned long len, unsigned long pgoff,
				       unsigned long flags)
{
	struct mm_struct *mm = current->mm;
	unsigned long padded = len + SZ_2M, ret;

	if ((flags & MAP_FIXED) || len < SZ_2M || padded < len)
		return mm_get_unmapped_area(mm, file, addr, len, pgoff, flags);
	if (addr) {
		ret = mm_get_unmapped_area(mm, file, addr, len, pgoff, flags);
		if (ret == addr)
			return ret;
	}
	ret = mm_get_unmapped_area(mm, file, 0, padded, pgoff, flags);
	if (IS_ERR_VALUE(ret))
		return mm_get_unmapped_area(mm, file, addr, len, pgoff, flags);
	return round_up(ret, SZ_2M);
}

static const struct vm_operations_struct npuipc_bo_vm_ops = {
	.fault = npuipc_bo_vm_fault,
	NPUIPC_VM_HUGE_FAULT(npuipc_bo_vm_huge_fault)
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static int npuipc_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct npuipc_bo *bo = to_npuipc_bo(obj);
	int ret;

	if (!bo->dmabuf)
		return npuipc_mmap_prepare(vma, &bo->mem, bo->bo_flags & NPUIPC_BO_READ_ONLY);

	/*
	 * An import is mapped by its exporter, which alone knows the memory
	 * and enforces its range and access, and picks the kind of mapping
	 * (a foreign exporter may insert pages, which a PFN map forbids).
	 * dma_buf_mmap() moves the mapping to the dma-buf's file, so the GEM
	 * reference drm_gem_mmap_obj() took for our vm_ops is not needed.
	 */
	ret = npuipc_mmap_check(vma, bo->bo_flags & NPUIPC_BO_READ_ONLY);
	if (ret)
		return ret;
	vm_flags_set(vma, VM_DONTEXPAND);
	vma->vm_private_data = NULL;
	vma->vm_ops = NULL;
	/* DRM found the object by its fake offset: the mapping starts at its start. */
	ret = dma_buf_mmap(bo->dmabuf, vma, 0);
	if (!ret)
		drm_gem_object_put(obj);
	return ret;
}

/* Frees what was allocated of @npages at @pages, chunks of @order. */
static void npuipc_free_page_array(struct page **pages, pgoff_t npages, unsigned int order)
{
	pgoff_t i;

	for (i = 0; i < npages; i += 1UL << order) {
		if (pages[i])
			__free_pages(pages[i], order);
		if (!(i & (NPUIPC_CHUNK_PAGES - 1)))
			cond_resched();
	}
	kvfree(pages);
}

static void npuipc_bo_free_pages(struct npuipc_bo *bo, pgoff_t npages)
{
	npuipc_free_page_array(bo->mem.pages, npages, npuipc_chunk_order(bo->page_class));
	bo->mem.pages = NULL;
}

/* Frees @bo's pages and returns them to the budget: no mapping is left. */
static void npuipc_bo_release_pages(struct npuipc_device *ndev, struct npuipc_bo *bo)
{
	npuipc_bo_free_pages(bo, bo->base.size >> PAGE_SHIFT);
	npuipc_mem_uncharge(ndev, bo->base.size);
}

static void npuipc_bo_free(struct drm_gem_object *obj)
{
	struct npuipc_device *ndev = to_npuipc(obj->dev);
	struct npuipc_bo *bo = to_npuipc_bo(obj);

	if (bo->dmabuf) {
		if (bo->mem.lease)
			npuipc_lease_untrack(bo->mem.lease, &bo->lease_map);
		atomic_dec(&ndev->live_imports);
		dma_buf_detach(bo->dmabuf, bo->attach);
		dma_buf_put(bo->dmabuf);
	} else if (bo->bo_flags & NPUIPC_BO_USERPTR) {
		npuipc_userptr_release(bo);
	} else if (bo->mem.pages) {
		npuipc_bo_release_pages(ndev, bo);
	} else if (bo->bo_flags & NPUIPC_BO_IMPORTED) {
		/* FABRIC_IMPORT: another server's memory, not charged here. */
		npuipc_lease_untrack(bo->mem.lease, &bo->lease_map);
		npuipc_lease_released(bo->mem.lease);
	} else {
		gen_pool_free(ndev->bar_pool, bo->bar_addr, obj->size);
		npuipc_mem_uncharge(ndev, obj->size);
	}
	drm_gem_free_mmap_offset(obj);
	drm_gem_object_release(obj);
	atomic_dec(&ndev->live_objects);
	kfree(bo);
	drm_dev_put(&ndev->drm);	/* taken in npuipc_bo_init() */
}

/*
 * A handle to an import costs kernel memory (the object and an attachment):
 * a file holds NPUIPC_MAX_IMPORTS at most. Another exporter's memory counts
 * against its device's size too, as if it were the device's own: a file's
 * imports of foreign dma-bufs may add up to the device's mem_total.
 */
static int npuipc_bo_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_bo *bo = to_npuipc_bo(obj);

	/* A process's own memory: no other file opens it (GEM_OPEN of a flink name). */
	if ((bo->bo_flags & NPUIPC_BO_USERPTR) && bo->userptr_file && bo->userptr_file != file)
		return -EPERM;

	if (!bo->dmabuf)
		return 0;
	if (atomic_inc_return(&nfile->imports) > NPUIPC_MAX_IMPORTS)
		goto err_imports;
	if ((bo->bo_flags & NPUIPC_BO_FOREIGN) &&
	    atomic64_add_return(obj->size, &nfile->foreign_bytes) > nfile->ndev->mem_total) {
		atomic64_sub(obj->size, &nfile->foreign_bytes);
		goto err_imports;
	}
	return 0;

err_imports:
	atomic_dec(&nfile->imports);
	return -ENOSPC;
}

/* Closing a handle of a buffer ends the reuse of its range exports. */
static void npuipc_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_bo *bo = to_npuipc_bo(obj);

	if (!bo->dmabuf) {
		npuipc_bo_forget_exports(bo);
		return;
	}
	atomic_dec(&nfile->imports);
	if (bo->bo_flags & NPUIPC_BO_FOREIGN)
		atomic64_sub(obj->size, &nfile->foreign_bytes);
}

static const struct drm_gem_object_funcs npuipc_bo_funcs = {
	.free = npuipc_bo_free,
	.open = npuipc_bo_open,
	.close = npuipc_bo_close,
	.export = npuipc_gem_prime_export,
	.mmap = npuipc_bo_mmap,
	.vm_ops = &npuipc_bo_vm_ops,
};

/**
 * npuipc_bo_init() - make a filled-in buffer a GEM object
 * @drm: the device the buffer belongs to
 * @bo: the buffer, its memory filled in
 * @size: the buffer's size, in bytes
 *
 * Turns a filled-in @bo into a GEM object of @size bytes, with the one
 * reference the caller holds. From here on, npuipc_bo_free() undoes
 * everything, whatever fails: on an error the caller puts that reference.
 *
 * Return: 0, or the error of creating the buffer's mmap offset.
 */
int npuipc_bo_init(struct drm_device *drm, struct npuipc_bo *bo, size_t size)
{
	int ret;

	drm_gem_private_object_init(drm, &bo->base, size);
	bo->base.funcs = &npuipc_bo_funcs;
	/*
	 * Put in npuipc_bo_free(): the device (and a PCI device's BAR pool)
	 * outlives its buffers, which a job may hold after the last file of
	 * an unplugged device is closed.
	 */
	drm_dev_get(drm);
	atomic_inc(&to_npuipc(drm)->live_objects);
	ret = drm_gem_create_mmap_offset(&bo->base);
	/* Once its offset is in place: a revocation reads it to unmap. */
	if (!ret && bo->mem.lease)
		npuipc_lease_track(bo->mem.lease, &bo->lease_map, drm->anon_inode->i_mapping,
				   &bo->base.vma_node);
	return ret;
}

int npuipc_bo_publish(struct drm_device *drm, struct npuipc_bo *bo, size_t size,
		      struct drm_file *file, u32 *handle)
{
	int ret;

	ret = npuipc_bo_init(drm, bo, size);
	if (!ret)
		ret = drm_gem_handle_create(file, &bo->base, handle);
	/* On success the handle holds the only reference. */
	drm_gem_object_put(&bo->base);
	return ret;
}

static noinline int npuipc_bo_alloc_pages(struct npuipc_bo *bo, u64 size)
{
	unsigned int order = npuipc_chunk_order(bo->page_class);
	/*
	 * Fail rather than wake the OOM killer: the budget is the limit, and
	 * so is the creator's memory cgroup, which is charged for the pages.
	 */
	gfp_t gfp = GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | __GFP_RETRY_MAYFAIL |
		    __GFP_ACCOUNT;
	pgoff_t npages = size >> PAGE_SHIFT, i, j;
	struct page *page;

	bo->mem.pages = kvcalloc(npages, sizeof(*bo->mem.pages), GFP_KERNEL_ACCOUNT);
	if (!bo->mem.pages)
		return -ENOMEM;

	for (i = 0; i < npages; i += 1UL << order) {
		if (fatal_signal_pending(current)) {
			npuipc_bo_free_pages(bo, npages);
			return -EINTR;
		}
		/*
		 * A huge class's chunk is 2 MiB of contiguous memory, as the
		 * device's pages are, and one compound page: mappings reach it
		 * by PFN, but a foreign importer handed its pages may take a
		 * reference on any of them, which holds the whole chunk.
		 */
		page = alloc_pages(order ? gfp | __GFP_COMP : gfp, order);
		if (!page) {
			npuipc_bo_free_pages(bo, npages);
			return -ENOMEM;
		}
		for (j = 0; j < 1UL << order; j++)
			bo->mem.pages[i + j] = nth_page(page, j);
		cond_resched();
	}
	return 0;
}
ALLOW_ERROR_INJECTION(npuipc_bo_alloc_pages, ERRNO);

/*
 * A range of the device's BAR, aligned to the class's page size, zeroed
 * 2 MiB at a time (a user may have left anything in the range).
 */
static int npuipc_bo_alloc_bar(struct npuipc_device *ndev, struct npuipc_bo *bo, u64 size)
{
	struct genpool_data_align align = { .align = npuipc_page_class_size(bo->page_class) };
	int idx, ret = 0;
	u64 done;

	bo->bar_addr = gen_pool_alloc_algo(ndev->bar_pool, size, gen_pool_first_fit_align,
					   &align);
	if (!bo->bar_addr)
		return -ENOMEM;	/* the budget fits, but no aligned range is free */
	bo->mem.phys = ndev->bar_phys + (bo->bar_addr - NPUIPC_BAR_POOL_BASE);
	bo->mem.iomem = ndev->bar + (bo->bar_addr - NPUIPC_BAR_POOL_BASE);
	bo->mem.dev = &ndev->drm;
	/* Entered a chunk at a time: an unplug waits for no more than that. */
	for (done = 0; done < size && !ret; done += SZ_2M) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
		} else if (!drm_dev_enter(&ndev->drm, &idx)) {
			ret = -ENODEV;
		} else {
			memset_io(bo->mem.iomem + done, 0, min_t(u64, SZ_2M, size - done));
			drm_dev_exit(idx);
			cond_resched();
		}
	}
	if (ret)
		gen_pool_free(ndev->bar_pool, bo->bar_addr, size);
	return ret;
}

/**
 * npuipc_ioctl_bo_create() - create a buffer of device memory (BO_CREATE)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_bo_create
 * @file: the calling DRM file, which gets the buffer's handle
 *
 * Charges the buffer's size to the device's budget and allocates it, zeroed,
 * from a PCI device's BAR or as pages of RAM, in the page class asked for.
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_bo_create in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct npuipc_device *ndev = to_npuipc(drm);
	struct drm_npuipc_bo_create *args = data;
	struct npuipc_bo *bo;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_BO_CREATE_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->handle))
		return -EINVAL;
	if (npuipc_refuse(drm, args->page_class >= NPUIPC_PAGE_CLASS_COUNT))
		return -EINVAL;
	if (npuipc_refuse(drm, !args->size || args->size > NPUIPC_BO_MAX_SIZE ||
	    !IS_ALIGNED(args->size, npuipc_page_class_size(args->page_class))))
		return -EINVAL;

	ret = npuipc_mem_charge(ndev, args->size);
	if (ret)
		return ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	bo->page_class = args->page_class;
	spin_lock_init(&bo->export_lock);
	if (ndev->bar_pool)
		ret = npuipc_bo_alloc_bar(ndev, bo, args->size);
	else
		ret = npuipc_bo_alloc_pages(bo, args->size);
	if (ret)
		goto err_free_bo;
	if (ndev->fabric)
		bo->bo_flags |= NPUIPC_BO_FABRIC;

	return npuipc_bo_publish(drm, bo, args->size, file, &args->handle);

err_free_bo:
	kfree(bo);
err_uncharge:
	npuipc_mem_uncharge(ndev, args->size);
	return ret;
}

/**
 * npuipc_ioctl_bo_info() - describe a buffer (BO_INFO)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_bo_info
 * @file: the calling DRM file, which holds the buffer's handle
 *
 * Reports the buffer's size, mmap offset, page class and flags.
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_bo_info in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_npuipc_bo_info *args = data;
	struct drm_gem_object *obj;
	struct npuipc_bo *bo;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_BO_INFO_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->size || args->mmap_offset || args->page_class ||
			  args->bo_flags || args->fabric_offset))
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_npuipc_bo(obj);
	args->size = obj->size;
	args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	args->page_class = bo->page_class;
	args->bo_flags = bo->bo_flags;
	/* Fabric memory is a window's BAR, owned here or seen through a dma-buf. */
	if (bo->bo_flags & NPUIPC_BO_FABRIC)
		args->fabric_offset = bo->mem.phys - to_npuipc(bo->mem.dev)->bar_phys;
	drm_gem_object_put(obj);
	return 0;
}
