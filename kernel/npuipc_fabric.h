/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_FABRIC_H__
#define __NPUIPC_FABRIC_H__

#include <linux/types.h>
#include "drm/npuipc_drm.h"

struct drm_device;
struct drm_file;
struct pci_dev;

/* A server's view of a fabric window: the header read at probe, checked. */
struct npuipc_fabric {
	u32 sdid;
	u32 nparts;
	u64 window_size;
	/* This server's part: @parts[@own]. */
	u32 own;
	struct npuipc_fabric_part parts[NPUIPC_FABRIC_MAX_PARTS];
};

static inline const struct npuipc_fabric_part *npuipc_fabric_own(const struct npuipc_fabric *f)
{
	return &f->parts[f->own];
}

bool npuipc_fabric_wanted(void);
int npuipc_fabric_check_params(void);
int npuipc_fabric_read(struct pci_dev *pdev, resource_size_t start, resource_size_t len,
		       struct npuipc_fabric *fabric);

int npuipc_ioctl_fabric_info(struct drm_device *drm, void *data, struct drm_file *file);
int npuipc_ioctl_fabric_import(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __NPUIPC_FABRIC_H__ */
