/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_DRV_H__
#define __NPUIPC_DRV_H__

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <drm/drm_device.h>
#include <drm/drm_print.h>

#define DRIVER_NAME	"npuipc"
#define DRIVER_DESC	"Mock NPU for inter-process communication"
#define DRIVER_DATE	"20261130"
#define DRIVER_MAJOR	0
#define DRIVER_MINOR	1

/* Upper bounds for module parameters; far above any useful test setup. */
#define NPUIPC_MAX_VIRTUAL_DEVICES	16
#define NPUIPC_MAX_MEM_MIB		(64 * 1024)

struct gen_pool;
struct npuipc_fabric;

struct npuipc_device {
	struct drm_device drm;
	unsigned int index;
	u64 caps;
	u64 mem_total;

	/* Protects mem_used */
	spinlock_t mem_lock;
	u64 mem_used;

	/* GEM objects of this device that are still alive, and imports among them. */
	atomic_t live_objects;
	atomic_t live_imports;

	/* Protects exports */
	struct mutex exports_lock;
	/* Live dma-bufs exported from this device's buffers. */
	struct list_head exports;

	/*
	 * A PCI device's memory (npuipc_pci.c): its BAR at @bar_phys, mapped
	 * write-combined at @bar, allocated from @bar_pool (whose addresses
	 * start at NPUIPC_BAR_POOL_BASE: a gen_pool takes 0 for failure, and
	 * aligns addresses, so the base is aligned to the largest page class,
	 * as the BAR is to its size).
	 * NULL for a virtual device, whose memory is RAM.
	 */
	struct gen_pool *bar_pool;
	phys_addr_t bar_phys;
	void __iomem *bar;
	u32 pci_address;	/* GET_INFO's */
	/* A fabric window (npuipc_fabric.c): @bar is the whole window. */
	const struct npuipc_fabric *fabric;
};

#define NPUIPC_BAR_POOL_BASE	SZ_1G

/*
 * Objects alive in the whole module, by kind, for debugfs (npuipc_state)
 * and the tests' leak checks. Module-wide rather than per device: events,
 * notifies and fences travel between devices and outlive files.
 */
enum npuipc_kind {
	NPUIPC_KIND_STREAM,
	NPUIPC_KIND_EVENT,
	NPUIPC_KIND_NOTIFY,
	/* A job and its fence, freed an RCU grace period after the last put. */
	NPUIPC_KIND_JOB,
	NPUIPC_KIND_DMABUF,		/* exported dma-bufs */
	NPUIPC_KIND_OBJECT_FILE,	/* exported event and notify fds */
	NPUIPC_KIND_COUNT,
};

extern atomic_t npuipc_live[NPUIPC_KIND_COUNT];

static inline void npuipc_live_inc(enum npuipc_kind kind)
{
	atomic_inc(&npuipc_live[kind]);
}

static inline void npuipc_live_dec(enum npuipc_kind kind)
{
	atomic_dec(&npuipc_live[kind]);
}

static inline struct npuipc_device *to_npuipc(struct drm_device *drm)
{
	return container_of(drm, struct npuipc_device, drm);
}

/*
 * An ioctl's check of its argument: true when @cond refuses it, logging
 * which check that was (drm_dbg, shown with drm.debug=0x2) so that a user
 * facing -EINVAL need not guess.
 */
#define npuipc_refuse(drm, cond)						\
	({									\
		bool refused_ = (cond);						\
		if (unlikely(refused_))						\
			drm_dbg_driver((drm), "%s: refused: %s\n", __func__, #cond); \
		refused_;							\
	})

/**
 * npuipc_timeout_jiffies() - a timeout of @ns nanoseconds in jiffies
 * @ns: the timeout; beyond S64_MAX / 2 (146 years) it is as good as endless.
 *
 * Rounded up, plus the partial jiffy now, so never shorter than asked;
 * at most MAX_JIFFY_OFFSET.
 */
static inline unsigned long npuipc_timeout_jiffies(u64 ns)
{
	ns = min_t(u64, ns, S64_MAX / 2);
	return min_t(u64, nsecs_to_jiffies64(ns + TICK_NSEC - 1) + 1, MAX_JIFFY_OFFSET);
}

void npuipc_device_init(struct npuipc_device *ndev, unsigned int index,
		       u64 mem_total, u64 caps);
int npuipc_device_add_sysfs(struct npuipc_device *ndev);
void npuipc_device_unplug(struct npuipc_device *ndev);
int npuipc_mem_charge(struct npuipc_device *ndev, u64 bytes);
void npuipc_mem_uncharge(struct npuipc_device *ndev, u64 bytes);
u64 npuipc_mem_used(struct npuipc_device *ndev);

extern const struct drm_driver npuipc_drm_driver;

#endif /* __NPUIPC_DRV_H__ */
