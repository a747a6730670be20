// SPDX-License-Identifier: GPL-2.0
/*
 * npuipc: DRM render driver of a mock NPU whose device memory, events and
 * notifies are shared between processes as file descriptors.
 *
 * This file holds what every npuipc device shares, whatever backs it: the
 * DRM driver, its ioctls, memory accounting and the module's entry points.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>

#include "npuipc_compat.h"
#include "npuipc_fabric.h"
#include "npuipc_fabric_lease.h"
#include "npuipc_debugfs.h"
#include "npuipc_drv.h"
#include "npuipc_engine.h"
#include "npuipc_file.h"
#include "npuipc_gem.h"
#include "npuipc_userptr.h"
#include "npuipc_object.h"
#include "npuipc_pci.h"
#include "npuipc_prime.h"
#include "npuipc_stream.h"
#include "npuipc_vdev.h"
#include "drm/npuipc_drm.h"

static unsigned int num_devices = 2;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of virtual NPU devices to create (0-16, default 2)");

static unsigned int mem_mib[NPUIPC_MAX_VIRTUAL_DEVICES];
static unsigned int mem_mib_count;
module_param_array(mem_mib, uint, &mem_mib_count, 0444);
MODULE_PARM_DESC(mem_mib,
		 "Device-memory budget of each virtual device in MiB, comma separated "
		 "(default 256 each; the last value given applies to the devices after it)");

atomic_t npuipc_live[NPUIPC_KIND_COUNT];

/**
 * npuipc_device_init() - initialize the state every npuipc device shares
 * @ndev: the device to initialize
 * @index: the device's npuipc index
 * @mem_total: the device-memory budget, in bytes
 * @caps: the bus driver's NPUIPC_CAP_* flags, to which the capabilities of
 *	every npuipc device are added
 *
 * Sets the budget with nothing charged, the capabilities, the live-object
 * counters and an empty list of exports.
 */
void npuipc_device_init(struct npuipc_device *ndev, unsigned int index,
		       u64 mem_total, u64 caps)
{
	ndev->index = index;
	ndev->mem_total = mem_total;
	ndev->caps = caps | NPUIPC_CAP_BO | NPUIPC_CAP_CALLER_TGID | NPUIPC_CAP_PRIME;
	/* A fabric window is memory: it runs nothing. */
	if (!(caps & NPUIPC_CAP_FABRIC))
		ndev->caps |= NPUIPC_CAP_SYNCOBJ_TIMELINE | NPUIPC_CAP_STREAMS |
			      NPUIPC_CAP_RESET_NOTIFY | NPUIPC_CAP_BOUNDED_FENCES;
	spin_lock_init(&ndev->mem_lock);
	ndev->mem_used = 0;
	atomic_set(&ndev->live_objects, 0);
	atomic_set(&ndev->live_imports, 0);
	mutex_init(&ndev->exports_lock);
	INIT_LIST_HEAD(&ndev->exports);
}

/*
 * /sys/devices/.../npuipc_index on the device a driver of ours binds: the
 * device index, so that udev can name the render node by it (/dev/npuipc/N)
 * and tools can find it without opening the node.
 */
static ssize_t npuipc_index_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	struct npuipc_device *ndev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", ndev->index);
}
static DEVICE_ATTR_RO(npuipc_index);

static struct attribute *npuipc_dev_attrs[] = {
	&dev_attr_npuipc_index.attr,
	NULL,
};

static const struct attribute_group npuipc_dev_group = {
	.attrs = npuipc_dev_attrs,
};

/**
 * npuipc_device_add_sysfs() - add the npuipc_index attribute to a device
 * @ndev: the device, already the drvdata of its bus device
 *
 * Called by a bus driver's probe once its drvdata is the npuipc_device and
 * before drm_dev_register(): udev reads the attribute when the render
 * node's uevent comes, which a driver's dev_groups (added after probe)
 * would race with. Removed with the driver's other managed resources.
 *
 * Return: 0 or a negative errno.
 */
int npuipc_device_add_sysfs(struct npuipc_device *ndev)
{
	return devm_device_add_group(ndev->drm.dev, &npuipc_dev_group);
}

/**
 * npuipc_device_unplug() - unplug a device whose bus device is removed
 * @ndev: the device being removed
 *
 * A bus driver's remove: no new access to the device (ioctls fail -ENODEV,
 * and BAR memory is left alone, see npuipc_gem.c), and every stream of its
 * files stops, so that nothing waits for work on a device that is gone.
 * Objects, buffers and the budget go with their last holders.
 */
void npuipc_device_unplug(struct npuipc_device *ndev)
{
	struct drm_file *file;

	/* First: it waits for debugfs readers, who hold the file list's lock. */
	drm_dev_unplug(&ndev->drm);
	mutex_lock(&ndev->drm.filelist_mutex);
	list_for_each_entry(file, &ndev->drm.filelist, lhead)
		npuipc_file_unplug(file);
	mutex_unlock(&ndev->drm.filelist_mutex);
}

/**
 * npuipc_mem_charge() - charge memory to a device's budget
 * @ndev: the device whose budget is charged
 * @bytes: how much to reserve
 *
 * Reserves @bytes of the device's budget.
 *
 * Return: 0, or -ENOMEM when it does not fit.
 */
int npuipc_mem_charge(struct npuipc_device *ndev, u64 bytes)
{
	int ret = 0;

	spin_lock(&ndev->mem_lock);
	if (bytes > ndev->mem_total - ndev->mem_used)
		ret = -ENOMEM;
	else
		ndev->mem_used += bytes;
	spin_unlock(&ndev->mem_lock);
	return ret;
}

/**
 * npuipc_mem_uncharge() - give memory back to a device's budget
 * @ndev: the device whose budget was charged
 * @bytes: how much to give back, as charged by npuipc_mem_charge()
 *
 * Giving back more than is charged warns and leaves nothing charged.
 */
void npuipc_mem_uncharge(struct npuipc_device *ndev, u64 bytes)
{
	spin_lock(&ndev->mem_lock);
	if (WARN_ON(bytes > ndev->mem_used))
		bytes = ndev->mem_used;
	ndev->mem_used -= bytes;
	spin_unlock(&ndev->mem_lock);
}

/**
 * npuipc_mem_used() - how much of a device's budget is charged
 * @ndev: the device
 *
 * Return: the bytes of @ndev's budget in use.
 */
u64 npuipc_mem_used(struct npuipc_device *ndev)
{
	u64 used;

	spin_lock(&ndev->mem_lock);
	used = ndev->mem_used;
	spin_unlock(&ndev->mem_lock);
	return used;
}

static int npuipc_ioctl_get_info(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct npuipc_device *ndev = to_npuipc(drm);
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct drm_npuipc_get_info *args = data;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_GET_INFO_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || args->uapi_version || args->device_index ||
	    args->mem_total || args->mem_free || args->caps ||
	    args->caller_tgid || args->pad2 || args->pci_address || args->pad3 ||
	    args->objects_free || args->pad4))
		return -EINVAL;

	args->uapi_version = NPUIPC_UAPI_VERSION;
	args->device_index = ndev->index;
	args->mem_total = ndev->mem_total;
	args->mem_free = ndev->mem_total - npuipc_mem_used(ndev);
	args->caps = ndev->caps;
	/* The PID an IPC exporter lists: the same from every namespace. */
	args->caller_tgid = task_tgid_nr(current);
	args->pci_address = ndev->pci_address;
	/* The count moves after the table: a racing destroy and create may
	 * pass the limit for a moment. */
	args->objects_free = NPUIPC_MAX_OBJECTS - min_t(int, atomic_read(&nfile->object_count),
							NPUIPC_MAX_OBJECTS);
	return 0;
}

static const struct drm_ioctl_desc npuipc_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NPUIPC_GET_INFO, npuipc_ioctl_get_info, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_BO_CREATE, npuipc_ioctl_bo_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_BO_INFO, npuipc_ioctl_bo_info, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_BO_EXPORT, npuipc_ioctl_bo_export, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_BO_IMPORT, npuipc_ioctl_bo_import, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_OBJ_CREATE, npuipc_ioctl_obj_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_OBJ_DESTROY, npuipc_ioctl_obj_destroy, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_OBJ_EXPORT, npuipc_ioctl_obj_export, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_OBJ_IMPORT, npuipc_ioctl_obj_import, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_SUBMIT, npuipc_ioctl_submit, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_WAIT, npuipc_ioctl_wait, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_STREAM_SET_PARAM, npuipc_ioctl_stream_set_param, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_STREAM_ABORT, npuipc_ioctl_stream_abort, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_BO_USERPTR, npuipc_ioctl_bo_userptr, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NPUIPC_FABRIC_INFO, npuipc_ioctl_fabric_info, DRM_RENDER_ALLOW),
	/* Only the fabric daemon imports: whether a server may is its decision. */
	DRM_IOCTL_DEF_DRV(NPUIPC_FABRIC_IMPORT, npuipc_ioctl_fabric_import,
			  DRM_RENDER_ALLOW | DRM_ROOT_ONLY),
	/* Holding memory past its holders' lives is the daemon's to do. */
	DRM_IOCTL_DEF_DRV(NPUIPC_FABRIC_HOLD, npuipc_ioctl_fabric_hold,
			  DRM_RENDER_ALLOW | DRM_ROOT_ONLY),
	DRM_IOCTL_DEF_DRV(NPUIPC_FABRIC_RENEW, npuipc_ioctl_fabric_renew,
			  DRM_RENDER_ALLOW | DRM_ROOT_ONLY),
};

static const struct file_operations npuipc_fops = {
	.owner		= THIS_MODULE,
	DRM_GEM_FOPS,
	.get_unmapped_area = npuipc_get_unmapped_area,
	NPUIPC_FOPS_SHOW_FDINFO(npuipc_file_seq_show_fdinfo)
};

const struct drm_driver npuipc_drm_driver = {
	.driver_features	= DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ |
				  DRIVER_SYNCOBJ_TIMELINE,
	.ioctls			= npuipc_ioctls,
	.num_ioctls		= ARRAY_SIZE(npuipc_ioctls),
	.fops			= &npuipc_fops,
	NPUIPC_DRIVER_SHOW_FDINFO(npuipc_file_show_fdinfo)
	.open			= npuipc_file_open,
	.postclose		= npuipc_file_postclose,
	.gem_prime_import	= npuipc_gem_prime_import,
	NPUIPC_DRM_PRIME_HOOKS
	.debugfs_init		= npuipc_debugfs_init,

	.name			= DRIVER_NAME,
	.desc			= DRIVER_DESC,
	.date			= DRIVER_DATE,
	.major			= DRIVER_MAJOR,
	.minor			= DRIVER_MINOR,
};

static int __init npuipc_init(void)
{
	int ret;

	/* Page classes and export ranges are counted in 4 KiB pages. */
	BUILD_BUG_ON(PAGE_SIZE != SZ_4K);

	if (num_devices > NPUIPC_MAX_VIRTUAL_DEVICES) {
		pr_err("npuipc: num_devices=%u is above the limit of %u\n",
		       num_devices, NPUIPC_MAX_VIRTUAL_DEVICES);
		return -EINVAL;
	}
	ret = npuipc_fabric_check_params();
	if (ret)
		return ret;
	ret = npuipc_engine_init();
	if (ret)
		return ret;
	ret = npuipc_fabric_lease_init();
	if (ret)
		goto err_engine;
	ret = npuipc_vdev_create_all(num_devices, mem_mib, mem_mib_count);
	if (ret)
		goto err_hold;
	ret = npuipc_pci_register(num_devices);
	if (ret)
		goto err_vdevs;
	return 0;

err_vdevs:
	npuipc_vdev_destroy_all();
err_hold:
	npuipc_fabric_lease_fini();
err_engine:
	npuipc_engine_fini();
	return ret;
}

static void __exit npuipc_exit(void)
{
	npuipc_pci_unregister();
	npuipc_vdev_destroy_all();
	npuipc_fabric_lease_fini();
	npuipc_engine_fini();
}

module_init(npuipc_init);
module_exit(npuipc_exit);

MODULE_AUTHOR("npuipc developers");
MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_VERSION(NPUIPC_VERSION);
MODULE_IMPORT_NS(DMA_BUF);
