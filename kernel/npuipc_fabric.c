// SPDX-License-Identifier: GPL-2.0
/*
 * Fabric windows: memory that the servers of a fabric share, each server
 * seeing all of it as the BAR of a PCI device (for the emulated servers of
 * tools/vm-pair, one host file behind an ivshmem-plain device in each
 * guest). Nothing on the device says which ivshmem device is a window, nor
 * which server this is: the window's first 2 MiB hold a header that
 * whoever builds the fabric writes (the parts of the window, one per
 * server, by sdid), and the module is told its server's sdid
 * (fabric_sdid). A window is an npuipc device (NPUIPC_CAP_FABRIC) whose
 * memory is this server's part: BO_CREATE allocates from it as from a
 * PCI NPU's BAR (npuipc_pci.c, npuipc_gem.c), and FABRIC_IMPORT maps a
 * range of another server's part. Which ranges a server may import is the
 * fabric daemons' business (they hold the secrets and the allowlists);
 * the driver keeps imports to the daemons (DRM_ROOT_ONLY) and to whole
 * ranges of one other server's part. A window's header is read whatever
 * the parameters when npuipc may bind ivshmem devices at all, so that a
 * window is never taken for a mock NPU's memory.
 */
#include <linux/file.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>

#include "npuipc_drv.h"
#include "npuipc_fabric.h"
#include "npuipc_fabric_lease.h"
#include "npuipc_gem.h"

static int fabric_sdid = -1;
module_param(fabric_sdid, int, 0444);
MODULE_PARM_DESC(fabric_sdid,
		 "This server's SuperPOD device id: take the fabric window whose "
		 "header gives it a part (default -1: bind no fabric window)");

/**
 * npuipc_fabric_wanted() - whether the module may bind a fabric window
 *
 * Return: true when fabric_sdid names this server.
 */
bool npuipc_fabric_wanted(void)
{
	return fabric_sdid >= 0;
}

/**
 * npuipc_fabric_check_params() - check the module's fabric parameters
 *
 * Return: 0, or -EINVAL for a fabric_sdid below -1.
 */
int npuipc_fabric_check_params(void)
{
	if (fabric_sdid >= -1)
		return 0;
	pr_err("npuipc: fabric_sdid=%d: -1 (none) or a server's sdid\n", fabric_sdid);
	return -EINVAL;
}

static bool npuipc_fabric_part_ok(const struct npuipc_fabric_part *part, u64 window_size)
{
	return !part->flags && !part->reserved && part->size &&
	       IS_ALIGNED(part->offset, SZ_2M) && IS_ALIGNED(part->size, SZ_2M) &&
	       part->offset >= NPUIPC_FABRIC_HEADER_SIZE && part->offset < window_size &&
	       part->size <= window_size - part->offset;
}

/* Parts within the window, apart, of distinct servers; this server's found. */
static int npuipc_fabric_check(struct pci_dev *pdev, const struct npuipc_fabric_header *hdr,
			       resource_size_t len, struct npuipc_fabric *fabric)
{
	bool found = false;
	u32 i, j;

	if (hdr->version != NPUIPC_FABRIC_VERSION || hdr->size != len ||
	    !hdr->nparts || hdr->nparts > NPUIPC_FABRIC_MAX_PARTS ||
	    memchr_inv(hdr->reserved, 0, sizeof(hdr->reserved)) ||
	    memchr_inv(&hdr->parts[hdr->nparts], 0,
		       (NPUIPC_FABRIC_MAX_PARTS - hdr->nparts) * sizeof(hdr->parts[0]))) {
		dev_err(&pdev->dev, "fabric window: bad header (version %u, %u parts, size %llu)\n",
			hdr->version, hdr->nparts, hdr->size);
		return -EINVAL;
	}
	for (i = 0; i < hdr->nparts; i++) {
		const struct npuipc_fabric_part *a = &hdr->parts[i];

		if (!npuipc_fabric_part_ok(a, len)) {
			dev_err(&pdev->dev, "fabric window: bad part %u\n", i);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			const struct npuipc_fabric_part *b = &hdr->parts[j];

			if (a->sdid == b->sdid ||
			    (a->offset < b->offset + b->size && b->offset < a->offset + a->size)) {
				dev_err(&pdev->dev, "fabric window: parts %u and %u clash\n", j, i);
				return -EINVAL;
			}
		}
		fabric->parts[i] = *a;
		if (a->sdid == fabric_sdid) {
			fabric->own = i;
			found = true;
		}
	}
	if (!found) {
		dev_err(&pdev->dev, "fabric window: no part for sdid %d\n", fabric_sdid);
		return -ENODEV;
	}
	fabric->sdid = fabric_sdid;
	fabric->nparts = hdr->nparts;
	fabric->window_size = len;
	return 0;
}

/**
 * npuipc_fabric_read() - read and check the header of a possible window
 * @pdev: the PCI device, its BAR's region requested
 * @start: the BAR's physical address
 * @len: its bytes
 * @fabric: filled in for a window of this server
 *
 * Return: 0 for a window with a part for this server; -ENOENT when the
 * BAR holds no fabric header (another ivshmem device); -EINVAL for a bad
 * header, -ENODEV for a window when fabric_sdid is unset or the header has
 * no part for it, -ENOMEM.
 */
int npuipc_fabric_read(struct pci_dev *pdev, resource_size_t start, resource_size_t len,
		       struct npuipc_fabric *fabric)
{
	struct npuipc_fabric_header *hdr;
	void __iomem *io;
	int ret = -ENOENT;

	if (len < NPUIPC_FABRIC_HEADER_SIZE + SZ_2M)
		return -ENOENT;
	hdr = kmalloc(sizeof(*hdr), GFP_KERNEL);
	if (!hdr)
		return -ENOMEM;
	io = ioremap(start, sizeof(*hdr));
	if (!io) {
		kfree(hdr);
		return -ENOMEM;
	}
	memcpy_fromio(hdr, io, sizeof(*hdr));
	iounmap(io);
	if (hdr->magic == NPUIPC_FABRIC_MAGIC && !npuipc_fabric_wanted()) {
		dev_info(&pdev->dev, "a fabric window: not bound without fabric_sdid\n");
		ret = -ENODEV;
	} else if (hdr->magic == NPUIPC_FABRIC_MAGIC) {
		ret = npuipc_fabric_check(pdev, hdr, len, fabric);
	}
	kfree(hdr);
	return ret;
}

/**
 * npuipc_ioctl_fabric_info() - describe this server's view of the fabric
 * @drm: the device
 * @data: struct drm_npuipc_fabric_info
 * @file: the calling DRM file
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_fabric_info).
 */
int npuipc_ioctl_fabric_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	const struct npuipc_fabric *fabric = to_npuipc(drm)->fabric;
	struct drm_npuipc_fabric_info *args = data;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_FABRIC_INFO_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->sdid || args->window_size || args->part_offset ||
			  args->part_size || args->nparts || args->pad))
		return -EINVAL;
	if (!fabric)
		return -EOPNOTSUPP;
	args->sdid = fabric->sdid;
	args->window_size = fabric->window_size;
	args->part_offset = npuipc_fabric_own(fabric)->offset;
	args->part_size = npuipc_fabric_own(fabric)->size;
	args->nparts = fabric->nparts;
	return 0;
}

static const struct npuipc_fabric_part *npuipc_fabric_part(const struct npuipc_fabric *fabric,
							     u32 sdid)
{
	u32 i;

	for (i = 0; i < fabric->nparts; i++)
		if (fabric->parts[i].sdid == sdid)
			return &fabric->parts[i];
	return NULL;
}

/**
 * npuipc_ioctl_fabric_import() - map a range of another server's part
 * @drm: the device, a fabric window
 * @data: struct drm_npuipc_fabric_import
 * @file: the calling DRM file, which gets the buffer's handle
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_fabric_import).
 */
int npuipc_ioctl_fabric_import(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npuipc_device *ndev = to_npuipc(drm);
	const struct npuipc_fabric *fabric = ndev->fabric;
	struct drm_npuipc_fabric_import *args = data;
	const struct npuipc_fabric_part *part;
	struct npuipc_fabric_lease *lease;
	struct file *lease_file;
	struct npuipc_bo *bo;
	int fd, ret;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_FABRIC_IMPORT_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->handle || args->lease_fd || args->pad2))
		return -EINVAL;
	if (args->lease_deadline_ns) {
		ret = npuipc_lease_check_deadline(args->lease_deadline_ns);
		if (npuipc_refuse(drm, ret))
			return ret;
	}
	if (!fabric)
		return -EOPNOTSUPP;
	part = npuipc_fabric_part(fabric, args->sdid);
	if (npuipc_refuse(drm, !part || part == npuipc_fabric_own(fabric)))
		return -EINVAL;
	if (npuipc_refuse(drm, !args->size || !PAGE_ALIGNED(args->offset) ||
			  !PAGE_ALIGNED(args->size) || args->offset < part->offset ||
			  args->size > part->size ||
			  args->offset - part->offset > part->size - args->size))
		return -EINVAL;

	/* The lease fd: reserved, then built, installed last. */
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	lease = npuipc_lease_create();
	if (!lease) {
		ret = -ENOMEM;
		goto err_put_fd;
	}
	lease_file = npuipc_lease_file(lease);
	if (IS_ERR(lease_file)) {
		ret = PTR_ERR(lease_file);
		npuipc_lease_put(lease);
		goto err_put_fd;
	}
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo) {
		ret = -ENOMEM;
		goto err_fput;
	}
	bo->page_class = NPUIPC_PAGE_CLASS_NORMAL;
	bo->bo_flags = NPUIPC_BO_IMPORTED | NPUIPC_BO_FABRIC;
	spin_lock_init(&bo->export_lock);
	bo->mem.phys = ndev->bar_phys + args->offset;
	bo->mem.iomem = ndev->bar + args->offset;
	bo->mem.dev = drm;
	/* The buffer's reference, dropped when its last holder goes. */
	kref_get(&lease->ref);
	bo->mem.lease = lease;
	/* Before the buffer is reachable: no access outlives the deadline. */
	npuipc_lease_start(lease, args->lease_deadline_ns);
	ret = npuipc_bo_publish(drm, bo, args->size, file, &args->handle);
	if (ret)
		goto err_fput;
	fd_install(fd, lease_file);
	args->lease_fd = fd;
	return 0;

err_fput:
	fput(lease_file);
err_put_fd:
	put_unused_fd(fd);
	return ret;
}
