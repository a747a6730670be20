// SPDX-License-Identifier: GPL-2.0
/*
 * PRIME: buffers leave a device as dma-bufs and come in from any exporter,
 * through DRM's own PRIME ioctls and npuipc's BO_EXPORT and BO_IMPORT
 * alike. DRM's PRIME helpers keep the bookkeeping (one whole read-write
 * dma-buf per buffer, one handle per dma-buf per file); npuipc makes the
 * dma-bufs and the buffers that stand for imports. BO_EXPORT adds range
 * and read-only exports on top: a dma-buf npuipc exports is one
 * page-aligned range of a buffer, read-write or read-only, and nothing
 * reaches outside it: mmap, device mappings and CPU-access syncs all go
 * through the range here.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/error-injection.h>
#include <linux/file.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>

#include "npuipc_compat.h"
#include "npuipc_drv.h"
#include "npuipc_file.h"
#include "npuipc_gem.h"
#include "npuipc_prime.h"
#include "drm/npuipc_drm.h"

/* One exported range of a buffer: the dma-buf's private data. */
struct npuipc_export {
	struct npuipc_bo *bo;		/* holds a GEM reference */
	struct dma_buf *dmabuf;
	pgoff_t first_page;
	pgoff_t npages;
	bool read_only;
	pid_t exporter_pid;
	/*
	 * The dma-buf file's inode, held until the export is released: its
	 * address space holds every user mapping of the dma-buf, and the
	 * file itself may be gone while the export is still listed.
	 */
	struct inode *inode;
	/* Protects importers and the mappings hung on attachments' priv */
	struct mutex lock;
	int importers;
	struct list_head node;		/* in npuipc_device.exports */
	/* Leased memory (its buffer's mem.lease): where the dma-buf is mapped. */
	struct npuipc_lease_mapping lease_map;
};

static const char *const npuipc_page_class_names[NPUIPC_PAGE_CLASS_COUNT] = {
	[NPUIPC_PAGE_CLASS_NORMAL] = "normal",
	[NPUIPC_PAGE_CLASS_HUGE] = "huge",
	[NPUIPC_PAGE_CLASS_HUGE1G] = "huge1g",
};

/* The export's memory: its buffer's, from the export's first page on. */
static struct npuipc_mem npuipc_export_mem(struct npuipc_export *exp)
{
	return npuipc_mem_from(&exp->bo->mem, exp->first_page);
}

static struct npuipc_device *npuipc_export_device(struct npuipc_export *exp)
{
	return to_npuipc(exp->bo->base.dev);
}

/* The importer_priv of npuipc's own attachments, which never map. */
static const char npuipc_own_importer;

/*
 * npuipc never maps an attachment, so a dynamic exporter has nothing to
 * move it out of: attaching as a dynamic importer keeps the core from
 * pinning and mapping the memory at attach, as it does for a static
 * importer of a dynamic exporter.
 */
static void npuipc_import_move_notify(struct dma_buf_attachment *attach)
{
}

static const struct dma_buf_attach_ops npuipc_import_attach_ops = {
	.move_notify = npuipc_import_move_notify,
};

/*
 * Importers are counted for debugfs (npuipc_exports). The dma-buf's name is
 * left to userspace (DMA_BUF_SET_NAME): any holder of the fd may set it, so
 * it cannot carry the driver's word, and a PID in it would be a global PID
 * shown inside containers.
 *
 * BAR memory has no struct pages: another device could reach it only by
 * PCI peer-to-peer DMA, at a bus address or through the IOMMU depending on
 * the topology, which the interfaces a module has on 6.1 do not tell apart
 * (and Debian's kernels build no CONFIG_PCI_P2PDMA). So no other driver
 * attaches to it; npuipc's own imports never map.
 */
static int npuipc_dmabuf_attach(struct dma_buf *dmabuf,
				struct dma_buf_attachment *attach)
{
	struct npuipc_export *exp = dmabuf->priv;

	if (!exp->bo->mem.pages && attach->importer_priv != &npuipc_own_importer)
		return -EOPNOTSUPP;

	mutex_lock(&exp->lock);
	WRITE_ONCE(exp->importers, exp->importers + 1);
	mutex_unlock(&exp->lock);
	return 0;
}

static void npuipc_dmabuf_detach(struct dma_buf *dmabuf,
				 struct dma_buf_attachment *attach)
{
	struct npuipc_export *exp = dmabuf->priv;

	mutex_lock(&exp->lock);
	WRITE_ONCE(exp->importers, exp->importers - 1);
	mutex_unlock(&exp->lock);
}

/* One device mapping of an export: what CPU-access syncs must sync. */
struct npuipc_mapping {
	struct sg_table sgt;
	enum dma_data_direction dir;
};

static struct sg_table *npuipc_dmabuf_map(struct dma_buf_attachment *attach,
					  enum dma_data_direction dir)
{
	struct npuipc_export *exp = attach->dmabuf->priv;
	struct npuipc_mem mem = npuipc_export_mem(exp);
	struct npuipc_mapping *map;
	int ret;

	/* A device that may write cannot map read-only memory. */
	if (exp->read_only && dir != DMA_TO_DEVICE)
		return ERR_PTR(-EACCES);
	/* BAR memory: only npuipc's own imports attach, and they never map. */
	if (WARN_ON_ONCE(!mem.pages))
		return ERR_PTR(-EOPNOTSUPP);

	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map)
		return ERR_PTR(-ENOMEM);
	map->dir = dir;
	ret = sg_alloc_table_from_pages(&map->sgt, mem.pages, exp->npages,
					0, exp->npages << PAGE_SHIFT, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(attach->dev, &map->sgt, dir, 0);
	if (ret)
		goto err_free_table;
	/* The core caches it (cache_sgt_mapping): one mapping per attachment. */
	mutex_lock(&exp->lock);
	attach->priv = map;
	mutex_unlock(&exp->lock);
	return &map->sgt;

err_free_table:
	sg_free_table(&map->sgt);
err_free:
	kfree(map);
	return ERR_PTR(ret);
}
ALLOW_ERROR_INJECTION(npuipc_dmabuf_map, ERRNO);

static void npuipc_dmabuf_unmap(struct dma_buf_attachment *attach,
				struct sg_table *sgt, enum dma_data_direction dir)
{
	struct npuipc_mapping *map = container_of(sgt, struct npuipc_mapping, sgt);
	struct npuipc_export *exp = attach->dmabuf->priv;

	mutex_lock(&exp->lock);
	attach->priv = NULL;
	mutex_unlock(&exp->lock);
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(map);
}

static void npuipc_dmabuf_release(struct dma_buf *dmabuf)
{
	struct npuipc_export *exp = dmabuf->priv;
	struct npuipc_device *ndev = npuipc_export_device(exp);

	mutex_lock(&ndev->exports_lock);
	list_del(&exp->node);
	mutex_unlock(&ndev->exports_lock);
	if (exp->bo->mem.lease)
		npuipc_lease_untrack(exp->bo->mem.lease, &exp->lease_map);
	iput(exp->inode);
	drm_gem_object_put(&exp->bo->base);
	drm_dev_put(&ndev->drm);
	mutex_destroy(&exp->lock);
	kfree(exp);
	npuipc_live_dec(NPUIPC_KIND_DMABUF);
}

/*
 * CPU access through DMA_BUF_IOCTL_SYNC: sync every device mapping, each in
 * its own direction (syncing a device-read-only mapping for the CPU would
 * copy stale bounce buffers back over the memory).
 */
static int npuipc_dmabuf_sync(struct dma_buf *dmabuf,
			      enum dma_data_direction dir, bool for_cpu)
{
	struct npuipc_export *exp = dmabuf->priv;
	struct dma_buf_attachment *attach;

	/* DMA_BUF_SYNC_WRITE announces CPU writes: refused on read-only. */
	if (exp->read_only && dir != DMA_FROM_DEVICE)
		return -EPERM;

	dma_resv_lock(dmabuf->resv, NULL);
	mutex_lock(&exp->lock);
	list_for_each_entry(attach, &dmabuf->attachments, node) {
		struct npuipc_mapping *map = attach->priv;

		if (!map)
			continue;
		if (for_cpu && map->dir != DMA_TO_DEVICE)
			dma_sync_sgtable_for_cpu(attach->dev, &map->sgt, map->dir);
		else if (!for_cpu && map->dir != DMA_FROM_DEVICE)
			dma_sync_sgtable_for_device(attach->dev, &map->sgt, map->dir);
	}
	mutex_unlock(&exp->lock);
	dma_resv_unlock(dmabuf->resv);
	return 0;
}

static int npuipc_dmabuf_begin_cpu_access(struct dma_buf *dmabuf,
					  enum dma_data_direction dir)
{
	return npuipc_dmabuf_sync(dmabuf, dir, true);
}

static int npuipc_dmabuf_end_cpu_access(struct dma_buf *dmabuf,
					enum dma_data_direction dir)
{
	return npuipc_dmabuf_sync(dmabuf, dir, false);
}

static vm_fault_t npuipc_dmabuf_vm_fault(struct vm_fault *vmf)
{
	struct npuipc_export *exp = vmf->vma->vm_private_data;
	struct npuipc_mem mem = npuipc_export_mem(exp);

	return npuipc_fault_pages(vmf, &mem, exp->npages, vmf->pgoff);
}

#if NPUIPC_HAVE_PMD_PFNMAP
static vm_fault_t npuipc_dmabuf_vm_huge_fault(struct vm_fault *vmf, unsigned int order)
{
	struct npuipc_export *exp = vmf->vma->vm_private_data;
	struct npuipc_mem mem = npuipc_export_mem(exp);

	return npuipc_huge_fault_pages(vmf, order, &mem, exp->npages, vmf->pgoff);
}
#endif

/* The mapping holds the dma-buf's file, and so the export, alive. */
static const struct vm_operations_struct npuipc_dmabuf_vm_ops = {
	.fault = npuipc_dmabuf_vm_fault,
	NPUIPC_VM_HUGE_FAULT(npuipc_dmabuf_vm_huge_fault)
};

static int npuipc_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct npuipc_export *exp = dmabuf->priv;
	struct npuipc_mem mem = npuipc_export_mem(exp);
	int ret;

	/* The dma-buf core has checked that the range lies in the dma-buf. */
	ret = npuipc_mmap_prepare(vma, &mem, exp->read_only);
	if (ret)
		return ret;
	vma->vm_ops = &npuipc_dmabuf_vm_ops;
	vma->vm_private_data = exp;
	return 0;
}

static const struct dma_buf_ops npuipc_dmabuf_ops = {
	.cache_sgt_mapping = true,
	.attach = npuipc_dmabuf_attach,
	.detach = npuipc_dmabuf_detach,
	.map_dma_buf = npuipc_dmabuf_map,
	.unmap_dma_buf = npuipc_dmabuf_unmap,
	.release = npuipc_dmabuf_release,
	.begin_cpu_access = npuipc_dmabuf_begin_cpu_access,
	.end_cpu_access = npuipc_dmabuf_end_cpu_access,
	.mmap = npuipc_dmabuf_mmap,
};

static struct npuipc_export *npuipc_dmabuf_to_export(struct dma_buf *dmabuf)
{
	return dmabuf->ops == &npuipc_dmabuf_ops ? dmabuf->priv : NULL;
}

/**
 * npuipc_dmabuf_bo() - the buffer a dma-buf was exported from
 * @dmabuf: any dma-buf
 *
 * Return: the buffer, held while @dmabuf is, or NULL for another
 * exporter's dma-buf.
 */
struct npuipc_bo *npuipc_dmabuf_bo(struct dma_buf *dmabuf)
{
	struct npuipc_export *exp = npuipc_dmabuf_to_export(dmabuf);

	return exp ? exp->bo : NULL;
}

static noinline struct dma_buf *npuipc_dmabuf_export(struct npuipc_bo *bo, u64 offset,
					    u64 size, bool read_only)
{
	struct npuipc_device *ndev = to_npuipc(bo->base.dev);
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct npuipc_export *exp;
	struct dma_buf *dmabuf;

	exp = kzalloc(sizeof(*exp), GFP_KERNEL_ACCOUNT);
	if (!exp)
		return ERR_PTR(-ENOMEM);
	exp->bo = bo;
	exp->first_page = offset >> PAGE_SHIFT;
	exp->npages = size >> PAGE_SHIFT;
	exp->read_only = read_only;
	exp->exporter_pid = task_tgid_nr(current);
	mutex_init(&exp->lock);

	info.ops = &npuipc_dmabuf_ops;
	info.size = size;
	info.flags = read_only ? O_RDONLY : O_RDWR;
	info.priv = exp;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		mutex_destroy(&exp->lock);
		kfree(exp);
		return dmabuf;
	}
	/*
	 * Released with the dma-buf, in npuipc_dmabuf_release(). The device
	 * too: the dma-buf may outlive every file of it, even its unbinding.
	 */
	drm_gem_object_get(&bo->base);
	drm_dev_get(&ndev->drm);
	npuipc_live_inc(NPUIPC_KIND_DMABUF);
	exp->dmabuf = dmabuf;
	exp->inode = file_inode(dmabuf->file);
	ihold(exp->inode);
	if (bo->mem.lease)
		npuipc_lease_track(bo->mem.lease, &exp->lease_map, exp->inode->i_mapping, NULL);

	mutex_lock(&ndev->exports_lock);
	list_add_tail(&exp->node, &ndev->exports);
	mutex_unlock(&ndev->exports_lock);
	return dmabuf;
}
ALLOW_ERROR_INJECTION(npuipc_dmabuf_export, ERRNO);

/**
 * npuipc_gem_prime_export() - DRM's export hook: a buffer's whole dma-buf
 * @obj: the buffer
 * @flags: the flags DRM asks for, which do not matter
 *
 * DRM's export hook (PRIME_HANDLE_TO_FD, and BO_EXPORT of a whole buffer
 * for reading and writing): the buffer's whole read-write dma-buf, which
 * DRM keeps as the object's dma_buf while the buffer has handles and hands
 * out again. It is read-write whatever DRM_RDWR says, since every later
 * caller gets the same one; read-only sharing is BO_EXPORT's. DRM never
 * asks for an import's: it passes on the imported dma-buf instead.
 *
 * Return: the new dma-buf, or an ERR_PTR().
 */
struct dma_buf *npuipc_gem_prime_export(struct drm_gem_object *obj, int flags)
{
	struct npuipc_bo *bo = to_npuipc_bo(obj);

	if (WARN_ON(bo->dmabuf))
		return ERR_PTR(-EINVAL);
	/* A process's own memory leaves it by no fd (BO_USERPTR). */
	if (bo->bo_flags & NPUIPC_BO_USERPTR)
		return ERR_PTR(-EPERM);
	return npuipc_dmabuf_export(bo, 0, obj->size, false);
}

/*
 * @bo's latest export, with a new reference, if it is of @npages from
 * @first with this access. Exporting a range again costs an fd, not a new
 * dma-buf (its file, inode and export) to make and, later, release: what
 * an IPC export does each time it shares the same memory.
 */
static struct dma_buf *npuipc_bo_reuse_export(struct npuipc_bo *bo, pgoff_t first,
					      pgoff_t npages, bool read_only)
{
	struct dma_buf *dmabuf = NULL;
	struct npuipc_export *exp;

	spin_lock(&bo->export_lock);
	if (bo->last_export) {
		exp = bo->last_export->priv;
		if (exp->first_page == first && exp->npages == npages &&
		    exp->read_only == read_only) {
			dmabuf = bo->last_export;
			get_dma_buf(dmabuf);
		}
	}
	spin_unlock(&bo->export_lock);
	return dmabuf;
}

/*
 * Keeps @dmabuf as @bo's latest export, and with it the buffer (the export
 * holds a GEM reference): only while the buffer has its handle, whose
 * close lets go of it (npuipc_bo_forget_exports()), so the two never keep
 * each other alive.
 */
static void npuipc_bo_remember_export(struct npuipc_bo *bo, struct dma_buf *dmabuf)
{
	struct dma_buf *old = dmabuf;

	get_dma_buf(dmabuf);
	spin_lock(&bo->export_lock);
	if (!bo->handle_closed) {
		old = bo->last_export;
		bo->last_export = dmabuf;
	}
	spin_unlock(&bo->export_lock);
	if (old)
		dma_buf_put(old);
}

/**
 * npuipc_bo_forget_exports() - let go of a buffer's latest export
 * @bo: the buffer
 *
 * @bo's handle is closed: its latest export lives on only in its holders.
 */
void npuipc_bo_forget_exports(struct npuipc_bo *bo)
{
	struct dma_buf *old;

	spin_lock(&bo->export_lock);
	old = bo->last_export;
	bo->last_export = NULL;
	bo->handle_closed = true;
	spin_unlock(&bo->export_lock);
	if (old)
		dma_buf_put(old);
}

/**
 * npuipc_ioctl_bo_export() - export a range of a buffer as a dma-buf (BO_EXPORT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_bo_export
 * @file: the calling DRM file, which holds the buffer's handle
 *
 * The whole buffer, read-write, goes through DRM's PRIME export; any other
 * range, or read-only access, is a dma-buf of its own, reused while it is
 * the buffer's latest export of that range and access.
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_bo_export in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_bo_export(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct drm_npuipc_bo_export *args = data;
	struct drm_gem_object *obj;
	struct dma_buf *dmabuf;
	struct npuipc_bo *bo;
	u64 page_size;
	bool read_only;
	int fd, ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_BO_EXPORT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->fd))
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_npuipc_bo(obj);
	read_only = args->flags & NPUIPC_BO_EXPORT_READ_ONLY;

	ret = -EINVAL;
	if (npuipc_refuse(drm, bo->dmabuf))	/* an import */
		goto out_put;
	ret = -EPERM;
	if (bo->bo_flags & NPUIPC_BO_USERPTR)	/* the caller's own memory */
		goto out_put;
	ret = -EINVAL;
	page_size = npuipc_page_class_size(bo->page_class);
	if (npuipc_refuse(drm, !args->size || !IS_ALIGNED(args->offset, page_size) ||
			  !IS_ALIGNED(args->size, page_size) || args->offset > obj->size ||
			  args->size > obj->size - args->offset))
		goto out_put;

	if (!args->offset && args->size == obj->size && !read_only) {
		drm_gem_object_put(obj);
		return drm_gem_prime_handle_to_fd(drm, file, args->handle, DRM_CLOEXEC | DRM_RDWR,
						  &args->fd);
	}

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_put;
	}
	dmabuf = npuipc_bo_reuse_export(bo, args->offset >> PAGE_SHIFT, args->size >> PAGE_SHIFT,
					read_only);
	if (!dmabuf) {
		dmabuf = npuipc_dmabuf_export(bo, args->offset, args->size, read_only);
		if (IS_ERR(dmabuf)) {
			put_unused_fd(fd);
			ret = PTR_ERR(dmabuf);
			goto out_put;
		}
		npuipc_bo_remember_export(bo, dmabuf);
	}
	args->fd = fd;
	fd_install(fd, dmabuf->file);
	ret = 0;
out_put:
	drm_gem_object_put(obj);
	return ret;
}

/**
 * npuipc_gem_prime_import() - DRM's import hook: a buffer for a dma-buf
 * @drm: the importing device
 * @dmabuf: the dma-buf imported
 *
 * DRM's import hook (PRIME_FD_TO_HANDLE, and BO_IMPORT through it), called
 * when the importing file has no handle for @dmabuf yet: a new buffer that
 * stands for the dma-buf's memory, attached but never mapped. DRM gives it
 * a handle and keeps one handle per dma-buf per file, so that importing a
 * dma-buf again, or a buffer's own whole export into its file, returns the
 * handle the file already has.
 *
 * Return: the new buffer's GEM object, or an ERR_PTR(): -EINVAL for a dma-buf
 * that is not whole pages, -ENOMEM, or the error of attaching to it.
 */
struct drm_gem_object *npuipc_gem_prime_import(struct drm_device *drm, struct dma_buf *dmabuf)
{
	struct npuipc_export *exp = npuipc_dmabuf_to_export(dmabuf);
	struct npuipc_bo *bo;
	int ret;

	/* GEM objects are whole pages; some exporters make odd sizes. */
	if (npuipc_refuse(drm, !PAGE_ALIGNED(dmabuf->size)))
		return ERR_PTR(-EINVAL);

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->bo_flags = NPUIPC_BO_IMPORTED;
	if (exp) {
		if (exp->bo->base.dev != drm)
			bo->bo_flags |= NPUIPC_BO_PEER;
		bo->bo_flags |= exp->bo->bo_flags & NPUIPC_BO_FABRIC;
		bo->page_class = exp->bo->page_class;
		if (exp->read_only)
			bo->bo_flags |= NPUIPC_BO_READ_ONLY;
	} else {
		bo->page_class = NPUIPC_PAGE_CLASS_NORMAL;
		bo->bo_flags |= NPUIPC_BO_FOREIGN;
	}
	if (!(dmabuf->file->f_mode & FMODE_WRITE))
		bo->bo_flags |= NPUIPC_BO_READ_ONLY;

	bo->attach = dma_buf_dynamic_attach(dmabuf, drm->dev,
					    dma_buf_is_dynamic(dmabuf) ? &npuipc_import_attach_ops : NULL,
					    (void *)&npuipc_own_importer);
	if (IS_ERR(bo->attach)) {
		ret = PTR_ERR(bo->attach);
		kfree(bo);
		return ERR_PTR(ret);
	}
	if (exp)
		bo->mem = npuipc_export_mem(exp);
	get_dma_buf(dmabuf);
	bo->dmabuf = dmabuf;
	atomic_inc(&to_npuipc(drm)->live_imports);

	ret = npuipc_bo_init(drm, bo, dmabuf->size);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	return &bo->base;
}
ALLOW_ERROR_INJECTION(npuipc_gem_prime_import, ERRNO);

/**
 * npuipc_ioctl_bo_import() - import a dma-buf as a buffer (BO_IMPORT)
 * @drm: the device
 * @data: the ioctl's argument, struct drm_npuipc_bo_import
 * @file: the calling DRM file, which gets the buffer's handle
 *
 * PRIME_FD_TO_HANDLE with npuipc's one addition: memory of another npuipc
 * device comes in only when the caller asks for peer access.
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_bo_import in
 * uapi/drm/npuipc_drm.h).
 */
int npuipc_ioctl_bo_import(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct drm_npuipc_bo_import *args = data;
	struct npuipc_export *exp;
	struct drm_gem_object *obj;
	struct dma_buf *dmabuf;
	bool peer;
	int ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_BO_IMPORT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->handle || args->size))
		return -EINVAL;

	dmabuf = dma_buf_get(args->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	exp = npuipc_dmabuf_to_export(dmabuf);
	peer = exp && exp->bo->base.dev != drm;
	dma_buf_put(dmabuf);
	/*
	 * A caller's safeguard, not a rule of the memory's: PRIME imports
	 * peer memory too. So another thread putting another dma-buf at @fd
	 * meanwhile defeats nothing.
	 */
	if (peer && !(args->flags & NPUIPC_BO_IMPORT_PEER_ACCESS))
		return -EXDEV;

	ret = drm_gem_prime_fd_to_handle(drm, file, args->fd, &args->handle);
	if (ret)
		return ret;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		args->handle = 0;	/* closed by another thread already */
		return -ENOENT;
	}
	args->size = obj->size;
	drm_gem_object_put(obj);
	return 0;
}

/**
 * npuipc_exports_revoke_mappings() - unmap the dma-bufs exported from a device
 * @ndev: the device
 *
 * Removes every user mapping of the dma-bufs exported from @ndev.
 */
void npuipc_exports_revoke_mappings(struct npuipc_device *ndev)
{
	struct npuipc_export *exp;

	mutex_lock(&ndev->exports_lock);
	list_for_each_entry(exp, &ndev->exports, node)
		unmap_mapping_range(exp->inode->i_mapping, 0, 0, 1);
	mutex_unlock(&ndev->exports_lock);
}

/**
 * npuipc_exports_show() - print a device's exports for debugfs
 * @m: the seq_file of debugfs's npuipc_exports
 * @ndev: the device
 *
 * A header, then one line per live dma-buf exported from @ndev.
 */
void npuipc_exports_show(struct seq_file *m, struct npuipc_device *ndev)
{
	struct npuipc_export *exp;

	seq_puts(m, "offset size class access exporter_pid importers\n");
	mutex_lock(&ndev->exports_lock);
	list_for_each_entry(exp, &ndev->exports, node)
		seq_printf(m, "%llu %llu %s %s %d %d\n",
			   (u64)exp->first_page << PAGE_SHIFT,
			   (u64)exp->npages << PAGE_SHIFT,
			   npuipc_page_class_names[exp->bo->page_class],
			   exp->read_only ? "ro" : "rw", exp->exporter_pid,
			   READ_ONCE(exp->importers));
	mutex_unlock(&ndev->exports_lock);
}
