// SPDX-License-Identifier: GPL-2.0
/*
 * Mock PCI NPUs: QEMU's ivshmem-plain device (PCI 1af4:1110), whose BAR2
 * is RAM of its memory backend's size (a power of two), bound as an npuipc
 * device whose device memory is that BAR, as on a real NPU: I/O memory
 * without struct pages, allocated from a range allocator, mapped to users
 * write-combined (npuipc_gem.c) and exported to npuipc devices only
 * (npuipc_prime.c).
 *
 * Binding is opt-in (bind_ivshmem=1): an ivshmem device is usually meant
 * for something else. With fabric_sdid set, an ivshmem device whose BAR
 * starts with a fabric header is bound as a fabric window instead
 * (npuipc_fabric.c), its memory this server's part of the BAR. Remove (unbind, or unplug) revokes every user
 * mapping of the BAR; its memory and budget stay until the last holder
 * of a buffer lets go (the drm_device outlives the PCI device).
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/genalloc.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "npuipc_drv.h"
#include "npuipc_fabric.h"
#include "npuipc_pci.h"
#include "npuipc_prime.h"
#include "drm/npuipc_drm.h"

#define NPUIPC_IVSHMEM_BAR	2

static bool bind_ivshmem;
module_param(bind_ivshmem, bool, 0444);
MODULE_PARM_DESC(bind_ivshmem,
		 "Bind QEMU's ivshmem-plain devices (PCI 1af4:1110) as mock NPUs "
		 "whose memory is their BAR2 (default off)");

/*
 * Indices of PCI NPUs: after the virtual ones, the lowest free first.
 * Fabric windows are no NPUs: theirs start at NPUIPC_FABRIC_FIRST_INDEX,
 * so that NPU indices stay 0..N-1 without a gap.
 */
static DEFINE_IDA(npuipc_pci_indices);
static DEFINE_IDA(npuipc_fabric_indices);
static unsigned int npuipc_pci_first_index;

static void npuipc_pci_free_index(void *index)
{
	ida_free(&npuipc_pci_indices, (unsigned long)index);
}

static void npuipc_fabric_free_index(void *index)
{
	ida_free(&npuipc_fabric_indices, (unsigned long)index);
}

/* drm_device release: the last buffer of the BAR is gone. */
static void npuipc_pci_fini_bar(struct drm_device *drm, void *data)
{
	struct npuipc_device *ndev = to_npuipc(drm);

	if (ndev->bar_pool)
		gen_pool_destroy(ndev->bar_pool);
}

/*
 * The BAR's kernel mapping, write-combined, goes at unbind with the region
 * (after remove(): drm_dev_unplug() has waited for every access, each of
 * which is inside drm_dev_enter()). Its range allocator lives as long as
 * the DRM device, since buffers freed later return their ranges to it.
 */
static int npuipc_pci_init_bar(struct npuipc_device *ndev, struct pci_dev *pdev,
			       resource_size_t start, resource_size_t len,
			       u64 mem_offset, u64 mem_size)
{
	int ret = drmm_add_action(&ndev->drm, npuipc_pci_fini_bar, NULL);

	if (ret)
		return ret;
	ndev->bar_phys = start;
	ndev->bar = devm_ioremap_wc(&pdev->dev, start, len);
	if (!ndev->bar)
		return -ENOMEM;
	ndev->bar_pool = gen_pool_create(PAGE_SHIFT, -1);
	if (!ndev->bar_pool)
		return -ENOMEM;
	return gen_pool_add(ndev->bar_pool, NPUIPC_BAR_POOL_BASE + mem_offset, mem_size, -1);
}

/*
 * An npuipc device over the BAR: a mock NPU whose memory is all of it, or,
 * with @fabric, a fabric window whose memory is this server's part.
 */
static int npuipc_pci_add(struct pci_dev *pdev, resource_size_t start, resource_size_t len,
			  const struct npuipc_fabric *fabric)
{
	u64 mem_offset = fabric ? npuipc_fabric_own(fabric)->offset : 0;
	u64 mem_size = fabric ? npuipc_fabric_own(fabric)->size : len;
	struct ida *indices = fabric ? &npuipc_fabric_indices : &npuipc_pci_indices;
	struct npuipc_device *ndev;
	int index, ret;

	/* Imported dma-bufs are mapped for this device like for real hardware. */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	ndev = devm_drm_dev_alloc(&pdev->dev, &npuipc_drm_driver, struct npuipc_device, drm);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	index = ida_alloc_min(indices, fabric ? NPUIPC_FABRIC_FIRST_INDEX : npuipc_pci_first_index,
			      GFP_KERNEL);
	if (index < 0)
		return index;
	ret = devm_add_action_or_reset(&pdev->dev, fabric ? npuipc_fabric_free_index :
				       npuipc_pci_free_index, (void *)(long)index);
	if (ret)
		return ret;

	npuipc_device_init(ndev, index, mem_size,
			   NPUIPC_CAP_PCI | (fabric ? NPUIPC_CAP_FABRIC : 0));
	/* (16 bits of domain: VMD's domains above 0xffff do not fit.) */
	ndev->pci_address = (pci_domain_nr(pdev->bus) & 0xffff) << 16 |
			    pdev->bus->number << 8 | pdev->devfn;
	ret = npuipc_pci_init_bar(ndev, pdev, start, len, mem_offset, mem_size);
	if (ret)
		return ret;
	if (fabric) {
		/* Lives as long as the DRM device: buffers outlive the unbind. */
		struct npuipc_fabric *kept = drmm_kmalloc(&ndev->drm, sizeof(*kept), GFP_KERNEL);

		if (!kept)
			return -ENOMEM;
		*kept = *fabric;
		ndev->fabric = kept;
	}
	pci_set_drvdata(pdev, ndev);
	ret = npuipc_device_add_sysfs(ndev);
	if (ret)
		return ret;
	return drm_dev_register(&ndev->drm, 0);
}

static int npuipc_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct npuipc_fabric *fabric;
	resource_size_t start, len;
	int ret;

	if (!bind_ivshmem && !npuipc_fabric_wanted())
		return -ENODEV;
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	start = pci_resource_start(pdev, NPUIPC_IVSHMEM_BAR);
	len = pci_resource_len(pdev, NPUIPC_IVSHMEM_BAR);
	if (!(pci_resource_flags(pdev, NPUIPC_IVSHMEM_BAR) & IORESOURCE_MEM))
		return -ENODEV;
	if (len > (resource_size_t)NPUIPC_MAX_MEM_MIB << 20) {
		dev_err(&pdev->dev, "BAR%d of %pa bytes: at most %u MiB\n",
			NPUIPC_IVSHMEM_BAR, &len, NPUIPC_MAX_MEM_MIB);
		return -ENODEV;
	}
	/* Managed: pcim_enable_device() releases it on unbind. */
	ret = pci_request_region(pdev, NPUIPC_IVSHMEM_BAR, DRIVER_NAME);
	if (ret)
		return ret;
	/* A window, whatever the parameters: never a mock NPU's memory. */
	fabric = kzalloc(sizeof(*fabric), GFP_KERNEL);
	if (!fabric)
		return -ENOMEM;
	ret = npuipc_fabric_read(pdev, start, len, fabric);
	if (ret == -ENOENT) {
		kfree(fabric);
		fabric = NULL;
		if (!bind_ivshmem)
			return -ENODEV;
		if (len < SZ_2M) {
			dev_err(&pdev->dev, "BAR%d of %pa bytes: a mock NPU needs 2 MiB to %u MiB\n",
				NPUIPC_IVSHMEM_BAR, &len, NPUIPC_MAX_MEM_MIB);
			return -ENODEV;
		}
	} else if (ret) {
		kfree(fabric);
		return ret;
	}
	ret = npuipc_pci_add(pdev, start, len, fabric);
	kfree(fabric);
	return ret;
}

/*
 * No new access from here on: ioctls fail -ENODEV, faults SIGBUS, copies
 * -ENODEV. Every user mapping of the BAR goes: drm_dev_unplug() zaps those
 * made through the device's DRM fds, and those of the dma-bufs exported
 * from it, whoever mapped them, go here.
 */
static void npuipc_pci_remove(struct pci_dev *pdev)
{
	struct npuipc_device *ndev = pci_get_drvdata(pdev);

	npuipc_device_unplug(ndev);
	npuipc_exports_revoke_mappings(ndev);
}

/*
 * No MODULE_DEVICE_TABLE: an ivshmem device must not make udev load
 * npuipc (binding is opt-in anyway).
 */
static const struct pci_device_id npuipc_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* ivshmem */
	{ }
};

static struct pci_driver npuipc_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = npuipc_pci_ids,
	.probe = npuipc_pci_probe,
	.remove = npuipc_pci_remove,
};

/**
 * npuipc_pci_register() - register npuipc's PCI driver
 * @first_index: the index of the first PCI device
 *
 * PCI devices take indices from @first_index on (after the virtual ones).
 *
 * Return: 0 or a negative errno from pci_register_driver().
 */
int npuipc_pci_register(unsigned int first_index)
{
	npuipc_pci_first_index = first_index;
	return pci_register_driver(&npuipc_pci_driver);
}

/**
 * npuipc_pci_unregister() - unregister npuipc's PCI driver
 */
void npuipc_pci_unregister(void)
{
	pci_unregister_driver(&npuipc_pci_driver);
}
