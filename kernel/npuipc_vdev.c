// SPDX-License-Identifier: GPL-2.0
/*
 * Virtual npuipc devices: RAM-backed NPUs created by module parameters.
 *
 * Each one is a platform device bound to a small platform driver, so that a
 * virtual device and a PCI one (bound by a pci_driver) go through the same
 * probe/remove life cycle and the same drm_dev_unplug() on removal.
 */
#include <linux/dma-mapping.h>
#include <linux/platform_device.h>

#include <drm/drm_drv.h>

#include "npuipc_drv.h"
#include "npuipc_vdev.h"
#include "drm/npuipc_drm.h"

#define NPUIPC_VDEV_NAME		"npuipc-vdev"
#define NPUIPC_DEFAULT_MEM_MIB		256

struct npuipc_vdev_config {
	unsigned int index;
	u64 mem_total;
};

static struct platform_device *npuipc_vdevs[NPUIPC_MAX_VIRTUAL_DEVICES];
static unsigned int npuipc_num_vdevs;

static int npuipc_vdev_probe(struct platform_device *pdev)
{
	const struct npuipc_vdev_config *cfg = dev_get_platdata(&pdev->dev);
	struct npuipc_device *ndev;
	int ret;

	/* Imported dma-bufs are mapped for this device like for real hardware. */
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	ndev = devm_drm_dev_alloc(&pdev->dev, &npuipc_drm_driver,
				  struct npuipc_device, drm);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);

	npuipc_device_init(ndev, cfg->index, cfg->mem_total, NPUIPC_CAP_VIRTUAL);
	platform_set_drvdata(pdev, ndev);
	ret = npuipc_device_add_sysfs(ndev);
	if (ret)
		return ret;

	return drm_dev_register(&ndev->drm, 0);
}

static void npuipc_vdev_remove(struct platform_device *pdev)
{
	struct npuipc_device *ndev = platform_get_drvdata(pdev);

	/* Its memory is RAM: mappings and importers keep their data. */
	npuipc_device_unplug(ndev);
}

static struct platform_driver npuipc_vdev_driver = {
	.probe = npuipc_vdev_probe,
	.remove_new = npuipc_vdev_remove,
	.driver = {
		.name = NPUIPC_VDEV_NAME,
	},
};

static void npuipc_vdev_unregister_devices(void)
{
	while (npuipc_num_vdevs)
		platform_device_unregister(npuipc_vdevs[--npuipc_num_vdevs]);
}

/**
 * npuipc_vdev_create_all() - create the virtual devices
 * @count: how many virtual devices to create
 * @mem_mib: each device's memory budget in MiB
 * @mem_mib_count: how many values @mem_mib holds; the last applies to the
 *	devices after it, and with none every device gets the default
 *
 * Registers the virtual devices' platform driver and one platform device per
 * virtual device; on any failure, undoes all of it.
 *
 * Return: 0; -EINVAL for a budget outside the allowed range, -ENODEV when a
 * device fails to probe, or the error of registering the driver or a device.
 */
int npuipc_vdev_create_all(unsigned int count, const unsigned int *mem_mib,
			   unsigned int mem_mib_count)
{
	struct npuipc_vdev_config cfg;
	struct platform_device *pdev;
	unsigned int i, mib;
	int ret;

	ret = platform_driver_register(&npuipc_vdev_driver);
	if (ret)
		return ret;

	for (i = 0; i < count; i++) {
		mib = mem_mib_count ? mem_mib[min(i, mem_mib_count - 1)] :
				      NPUIPC_DEFAULT_MEM_MIB;
		if (!mib || mib > NPUIPC_MAX_MEM_MIB) {
			pr_err("npuipc: mem_mib=%u for device %u is outside 1..%u\n",
			       mib, i, NPUIPC_MAX_MEM_MIB);
			ret = -EINVAL;
			goto err_unregister;
		}
		cfg.index = i;
		cfg.mem_total = (u64)mib << 20;

		pdev = platform_device_register_data(NULL, NPUIPC_VDEV_NAME, i,
						     &cfg, sizeof(cfg));
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			goto err_unregister;
		}
		npuipc_vdevs[npuipc_num_vdevs++] = pdev;

		/* A failed probe leaves the device registered but unbound. */
		if (!pdev->dev.driver) {
			pr_err("npuipc: virtual device %u failed to probe\n", i);
			ret = -ENODEV;
			goto err_unregister;
		}
	}
	return 0;

err_unregister:
	npuipc_vdev_unregister_devices();
	platform_driver_unregister(&npuipc_vdev_driver);
	return ret;
}

/**
 * npuipc_vdev_destroy_all() - remove the virtual devices
 *
 * Unregisters every virtual device, then their platform driver.
 */
void npuipc_vdev_destroy_all(void)
{
	npuipc_vdev_unregister_devices();
	platform_driver_unregister(&npuipc_vdev_driver);
}
