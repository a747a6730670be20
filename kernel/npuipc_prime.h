/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_PRIME_H__
#define __NPUIPC_PRIME_H__

struct dma_buf;
struct drm_device;
struct drm_file;
struct drm_gem_object;
struct npuipc_bo;
struct npuipc_device;
struct seq_file;

struct dma_buf *npuipc_gem_prime_export(struct drm_gem_object *obj, int flags);
struct drm_gem_object *npuipc_gem_prime_import(struct drm_device *drm, struct dma_buf *dmabuf);

int npuipc_ioctl_bo_export(struct drm_device *drm, void *data,
			   struct drm_file *file);
int npuipc_ioctl_bo_import(struct drm_device *drm, void *data,
			   struct drm_file *file);

struct npuipc_bo *npuipc_dmabuf_bo(struct dma_buf *dmabuf);
void npuipc_bo_forget_exports(struct npuipc_bo *bo);
void npuipc_exports_revoke_mappings(struct npuipc_device *ndev);
void npuipc_exports_show(struct seq_file *m, struct npuipc_device *ndev);

#endif /* __NPUIPC_PRIME_H__ */
