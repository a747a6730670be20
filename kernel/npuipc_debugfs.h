/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_DEBUGFS_H__
#define __NPUIPC_DEBUGFS_H__

struct dma_fence;
struct drm_minor;
struct seq_file;

void npuipc_debugfs_init(struct drm_minor *minor);
void npuipc_debugfs_show_fence(struct seq_file *m, struct dma_fence *fence);

#endif /* __NPUIPC_DEBUGFS_H__ */
