/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_NOTIFY_H__
#define __NPUIPC_NOTIFY_H__

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "npuipc_object.h"

struct npuipc_file;
struct npuipc_job;

/* A notify: a flag with an owner; records set it, the owner's waits consume it. */
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

static inline struct npuipc_notify *to_npuipc_notify(struct npuipc_object *obj)
{
	return container_of(obj, struct npuipc_notify, base);
}

bool npuipc_notify_owned_by(struct npuipc_notify *notify, struct npuipc_file *nfile);
void npuipc_notify_orphan_all(struct npuipc_file *nfile);
struct npuipc_job *npuipc_notify_record(struct npuipc_notify *notify);
void npuipc_notify_reset(struct npuipc_notify *notify);
int npuipc_notify_wait(struct npuipc_notify *notify, struct npuipc_job *job,
		       bool expired);
struct npuipc_job *npuipc_notify_unpark(struct npuipc_notify *notify,
				       struct npuipc_job *job);

#endif /* __NPUIPC_NOTIFY_H__ */
