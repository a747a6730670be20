/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_EVENT_H__
#define __NPUIPC_EVENT_H__

#include <linux/dma-fence.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "npuipc_object.h"

/* An event: the fence of its most recent record. */
struct npuipc_event {
	struct npuipc_object base;
	/* Protects last and poll_fence */
	spinlock_t lock;
	/* Fence of the most recent record; NULL until the first record. */
	struct dma_fence *last;
	/* Pollers of exported event fds, woken through poll_cb on poll_fence. */
	wait_queue_head_t poll_wq;
	struct dma_fence *poll_fence;
	struct dma_fence_cb poll_cb;
};

static inline struct npuipc_event *to_npuipc_event(struct npuipc_object *obj)
{
	return container_of(obj, struct npuipc_event, base);
}

struct dma_fence *npuipc_event_last(struct npuipc_event *event);
void npuipc_event_record(struct npuipc_event *event, struct dma_fence *fence);

#endif /* __NPUIPC_EVENT_H__ */
