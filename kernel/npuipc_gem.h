/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_GEM_H__
#define __NPUIPC_GEM_H__

#include <linux/atomic.h>
#include <linux/dma-direction.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/iosys-map.h>
#include <linux/mm_types.h>
#include <drm/drm_gem.h>

#include "npuipc_fabric_lease.h"

struct dma_buf;
struct dma_buf_attachment;
struct drm_device;
struct drm_file;
struct sg_table;

/* Huge and huge-1G memory is allocated, and faulted in, 2 MiB at a time. */
#define NPUIPC_CHUNK_ORDER	(21 - PAGE_SHIFT)
#define NPUIPC_CHUNK_PAGES	(1UL << NPUIPC_CHUNK_ORDER)

/*
 * Where memory lies, page by page: system RAM (@pages, one entry per 4 KiB
 * page; a huge class's in 2 MiB contiguous chunks), or a
 * range of a PCI device's BAR (@phys, mapped write-combined in the kernel
 * at @iomem), which has no struct pages and goes with its device @dev
 * (drm_dev_enter() around every access). Neither: another exporter's
 * memory, which npuipc never touches. BAR memory of another server's part
 * of a fabric window also lives by its import's @lease (held by the
 * import, which every user of the memory holds).
 */
struct npuipc_mem {
	struct page **pages;
	phys_addr_t phys;
	void __iomem *iomem;
	struct drm_device *dev;
	struct npuipc_fabric_lease *lease;
};

/* The view of @mem from page @first on. */
static inline struct npuipc_mem npuipc_mem_from(const struct npuipc_mem *mem, pgoff_t first)
{
	struct npuipc_mem view = { NULL };

	if (mem->pages)
		view = (struct npuipc_mem){ .pages = mem->pages + first };
	else if (mem->iomem)
		view = (struct npuipc_mem){ .phys = mem->phys + ((phys_addr_t)first << PAGE_SHIFT),
					    .iomem = mem->iomem + (first << PAGE_SHIFT),
					    .dev = mem->dev, .lease = mem->lease };
	return view;
}

static inline unsigned long npuipc_mem_pfn(const struct npuipc_mem *mem, pgoff_t i)
{
	return mem->pages ? page_to_pfn(mem->pages[i]) : PHYS_PFN(mem->phys) + i;
}

/*
 * Page @i of @mem mapped in the kernel, until npuipc_mem_unmap_page() (in
 * reverse order of mapping): RAM through kmap_local_page(), BAR memory as
 * the I/O memory it is (write-combined), for the I/O accessors only.
 */
static inline struct iosys_map npuipc_mem_map_page(const struct npuipc_mem *mem, pgoff_t i)
{
	if (mem->pages)
		return (struct iosys_map)IOSYS_MAP_INIT_VADDR(kmap_local_page(mem->pages[i]));
	return (struct iosys_map)IOSYS_MAP_INIT_VADDR_IOMEM(mem->iomem + (i << PAGE_SHIFT));
}

static inline void npuipc_mem_unmap_page(const struct iosys_map *map)
{
	if (!map->is_iomem)
		kunmap_local(map->vaddr);
}

/* What npuipc_mem_enter() entered, for npuipc_mem_exit(). */
struct npuipc_mem_guard {
	int dev_idx;
	int lease_idx;
};

bool npuipc_mem_enter(const struct npuipc_mem *mem, struct npuipc_mem_guard *guard);
void npuipc_mem_exit(const struct npuipc_mem *mem, const struct npuipc_mem_guard *guard);

/*
 * A buffer object: either device memory this device owns (@mem), or an
 * import of a dma-buf (@dmabuf), which is mapped through its exporter.
 */
struct npuipc_bo {
	struct drm_gem_object base;
	u32 page_class;
	/* NPUIPC_BO_* flags reported by BO_INFO. */
	u32 bo_flags;

	/*
	 * Its memory, for the engine and for faults. Owned memory: its own
	 * pages, or its range of the device's BAR (at @bar_addr in the BAR's
	 * pool). An npuipc import: the exporter's, from the export's first
	 * page on (the dma-buf keeps it alive). A foreign import: neither
	 * (mapped by its exporter, never copied by the engine).
	 */
	struct npuipc_mem mem;
	unsigned long bar_addr;
	/*
	 * BO_USERPTR: the process whose pinned memory @mem holds (its mm,
	 * grabbed), and the one file that may hold a handle (never followed:
	 * compared only).
	 */
	struct mm_struct *userptr_mm;
	const struct drm_file *userptr_file;

	/*
	 * Owned memory: its latest range or read-only export, handed out
	 * again to an export of the same range and access while the buffer
	 * has its handle, as DRM keeps the whole read-write one (PRIME, the
	 * object's dma_buf; npuipc_prime.c).
	 * Protects @last_export and @handle_closed
	 */
	spinlock_t export_lock;
	struct dma_buf *last_export;
	bool handle_closed;

	/*
	 * Imports: the dma-buf and this device's attachment, never mapped:
	 * npuipc's own memory is reached through @mem, and the engine never
	 * touches another exporter's (the mock device does no DMA).
	 */
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;

	/* Leased memory (@mem.lease): where the buffer's DRM mappings are. */
	struct npuipc_lease_mapping lease_map;
	/* A window's own buffer: its FABRIC_HOLD, if any (npuipc_fabric_lease.c). */
	struct npuipc_fabric_hold *fabric_hold;
};

static inline struct npuipc_bo *to_npuipc_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct npuipc_bo, base);
}

u64 npuipc_page_class_size(u32 page_class);

int npuipc_mmap_prepare(struct vm_area_struct *vma, const struct npuipc_mem *mem,
			bool read_only);
unsigned long npuipc_get_unmapped_area(struct file *file, unsigned long addr,
				       unsigned long len, unsigned long pgoff,
				       unsigned long flags);
/* 2 MiB entries mapped since load, all devices (debugfs pmd_maps). */
extern atomic_long_t npuipc_pmd_maps;

vm_fault_t npuipc_fault_pages(struct vm_fault *vmf, const struct npuipc_mem *mem,
			      pgoff_t npages, pgoff_t index);
/* Where the kernel has huge PFN maps (NPUIPC_HAVE_PMD_PFNMAP) only. */
vm_fault_t npuipc_huge_fault_pages(struct vm_fault *vmf, unsigned int order,
				   const struct npuipc_mem *mem, pgoff_t npages, pgoff_t index);

int npuipc_bo_init(struct drm_device *drm, struct npuipc_bo *bo, size_t size);
/* A filled-in @bo as a GEM object with a handle in @file; frees it on error. */
int npuipc_bo_publish(struct drm_device *drm, struct npuipc_bo *bo, size_t size,
		      struct drm_file *file, u32 *handle);


int npuipc_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int npuipc_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* __NPUIPC_GEM_H__ */
