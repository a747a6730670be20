/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_USERPTR_H__
#define __NPUIPC_USERPTR_H__

struct drm_device;
struct drm_file;
struct npuipc_bo;

int npuipc_ioctl_bo_userptr(struct drm_device *drm, void *data, struct drm_file *file);
/* Unpins a BO_USERPTR buffer's pages and gives them back to its owner's limit. */
void npuipc_userptr_release(struct npuipc_bo *bo);

#endif /* __NPUIPC_USERPTR_H__ */
