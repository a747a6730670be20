/* SPDX-License-Identifier: GPL-2.0 */
#ifndef NPUIPC_DEBUG_STATE_H
#define NPUIPC_DEBUG_STATE_H

struct drm_device;
struct seq_file;

void npuipc_streams_show(struct seq_file *m, struct drm_device *drm);

#endif /* NPUIPC_DEBUG_STATE_H */
