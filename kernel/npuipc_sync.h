/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_SYNC_H__
#define __NPUIPC_SYNC_H__

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "npuipc_object.h"

struct dma_fence;
struct file;
struct npuipc_job;

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

struct npuipc_notify {
	struct npuipc_object base;
	/* Protects set, waiters and owner */
	spinlock_t lock;
	bool set;
	/* WAIT_NOTIFY jobs parked until a record, first come first served. */
	struct list_head waiters;
	/* The creating file; NULL once it is closed. */
	struct npuipc_file *owner;
	struct list_head owner_node;	/* in owner->owned_notifies */
	/* Pollers of exported notify fds. */
	wait_queue_head_t poll_wq;
};

struct npuipc_event *npuipc_event_create(void);
void npuipc_event_free(struct npuipc_event *event);
struct dma_fence *npuipc_event_last(struct npuipc_event *event);
void npuipc_event_record(struct npuipc_event *event, struct dma_fence *fence);

struct npuipc_notify *npuipc_notify_create(struct npuipc_file *owner);
void npuipc_notify_free(struct npuipc_notify *notify);
bool npuipc_notify_owned_by(struct npuipc_notify *notify, struct npuipc_file *nfile);
void npuipc_notify_orphan_all(struct npuipc_file *nfile);
struct npuipc_job *npuipc_notify_record(struct npuipc_notify *notify);
void npuipc_notify_reset(struct npuipc_notify *notify);
int npuipc_notify_wait(struct npuipc_notify *notify, struct npuipc_job *job,
		       bool expired);
struct npuipc_job *npuipc_notify_unpark(struct npuipc_notify *notify,
				       struct npuipc_job *job);

struct file *npuipc_sync_export_file(struct npuipc_object *obj);
struct npuipc_object *npuipc_sync_import_file(struct file *file);

#endif /* __NPUIPC_SYNC_H__ */
