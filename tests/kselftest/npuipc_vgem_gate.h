/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A gate for tests whose held-back fences must leave npuipc (out-fences,
 * sync_files): another driver's fence instead of a notify wait.
 */
#ifndef NPUIPC_VGEM_GATE_H
#define NPUIPC_VGEM_GATE_H

#include <linux/dma-buf.h>

#include "npuipc_test_util.h"
#include "vgem_drm.h"

/*
 * A gate whose fences may leave npuipc: another driver's fence, which that
 * driver signals by its own rules. vgem signals its fence when told to
 * (npuipc_vgem_gate_open()) or by itself after 10 s; its sync_file is
 * waited for by a WAIT_SYNC_FILE job (npuipc_vgem_gate_job()).
 */
struct npuipc_vgem_gate {
	int vgem;
	uint32_t bo;
	uint32_t fence;
	int sync_file;
};

/* 0; 1 when vgem is not loaded; -errno when the gate cannot be made. */
static inline int npuipc_vgem_gate_init(struct npuipc_vgem_gate *gate)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 1, .bpp = 32 };
	struct drm_vgem_fence_attach attach = { .flags = VGEM_FENCE_WRITE };
	struct dma_buf_export_sync_file sync = { .flags = DMA_BUF_SYNC_READ };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC };
	int ret;

	*gate = (struct npuipc_vgem_gate){ .sync_file = -1 };
	gate->vgem = npuipc_open_vgem();
	if (gate->vgem < 0)
		return 1;
	ret = npuipc_ioctl(gate->vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb);
	if (ret)
		return ret;
	gate->bo = attach.handle = prime.handle = dumb.handle;
	ret = npuipc_ioctl(gate->vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach);
	if (!ret)
		ret = npuipc_ioctl(gate->vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
	if (ret)
		return ret;
	gate->fence = attach.out_fence;
	ret = npuipc_ioctl(prime.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &sync);
	close(prime.fd);
	gate->sync_file = ret ? -1 : sync.fd;
	return ret;
}

/*
 * In a test: skips without vgem, fails when the gate cannot be made. vgem
 * opens the gate by itself after 10 s: a test keeps it closed far less.
 */
#define NPUIPC_VGEM_GATE_INIT(gate)						\
	do {									\
		int gate_ret_ = npuipc_vgem_gate_init(gate);			\
										\
		if (gate_ret_ > 0)						\
			SKIP(return, "vgem is not loaded (modprobe vgem)");	\
		ASSERT_EQ(0, gate_ret_);					\
	} while (0)

static inline struct drm_npuipc_job npuipc_vgem_gate_job(const struct npuipc_vgem_gate *gate)
{
	return npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, gate->sync_file);
}

static inline int npuipc_vgem_gate_open(struct npuipc_vgem_gate *gate)
{
	struct drm_vgem_fence_signal signal = { .fence = gate->fence };

	return npuipc_ioctl(gate->vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &signal);
}

/* Opens the gate if it is still closed, and lets go of everything. */
static inline void npuipc_vgem_gate_fini(struct npuipc_vgem_gate *gate)
{
	struct drm_gem_close gem_close = { .handle = gate->bo };

	if (gate->vgem < 0)
		return;
	npuipc_vgem_gate_open(gate);
	if (gate->sync_file >= 0)
		close(gate->sync_file);
	npuipc_ioctl(gate->vgem, DRM_IOCTL_GEM_CLOSE, &gem_close);
	close(gate->vgem);
	gate->vgem = -1;
}

#endif /* NPUIPC_VGEM_GATE_H */
