/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_GEM_H__
#define __NPUIPC_GEM_H__

#include <linux/dma-direction.h>
#include <linux/mm_types.h>
#include <drm/drm_gem.h>

struct dma_buf;
struct dma_buf_attachment;
struct drm_device;
struct drm_file;
struct sg_table;

/* Huge and huge-1G memory is allocated, and faulted in, 2 MiB at a time. */
#define NPUIPC_CHUNK_ORDER	(21 - PAGE_SHIFT)
#define NPUIPC_CHUNK_PAGES	(1UL << NPUIPC_CHUNK_ORDER)

/*
 * A buffer object: either device memory this device owns (@pages), or an
 * import of a dma-buf (@dmabuf), which is mapped through its exporter.
 */
struct npuipc_bo {
	struct drm_gem_object base;
	u32 page_class;
	/* NPUIPC_BO_* flags reported by BO_INFO. */
	u32 bo_flags;

	/*
	 * One entry per 4 KiB page, for the engine and for faults. Owned
	 * memory: its own pages. An npuipc import: the exporter's array at the
	 * export's first page (the dma-buf keeps it alive). A foreign import:
	 * NULL (mapped by its exporter, never copied by the engine).
	 */
	struct page **pages;

	/*
	 * Imports: the dma-buf, this device's attachment and, for a foreign
	 * dma-buf, its mapping (which makes the exporter pin its memory).
	 * npuipc's own memory is reached through @pages: no mapping is made.
	 */
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	enum dma_data_direction dir;
};

static inline struct npuipc_bo *to_npuipc_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct npuipc_bo, base);
}

u64 npuipc_page_class_size(u32 page_class);

int npuipc_mmap_prepare(struct vm_area_struct *vma, bool read_only);
vm_fault_t npuipc_fault_pages(struct vm_fault *vmf, struct page **pages,
			      pgoff_t npages, pgoff_t index);

/* A filled-in @bo as a GEM object with a handle in @file. */
int npuipc_bo_publish(struct drm_device *drm, struct npuipc_bo *bo,
		      size_t size, struct drm_file *file, u32 *handle);

int npuipc_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int npuipc_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* __NPUIPC_GEM_H__ */
