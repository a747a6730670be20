/* SPDX-License-Identifier: GPL-2.0 */
#ifndef NPUIPC_COPY_WORKER_H
#define NPUIPC_COPY_WORKER_H

#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/uidgid.h>

struct pid;

/*
 * Runs the COPY and FILL jobs of every file whose first such job a process
 * submitted: one kthread per process (up to max_copy_workers per user), at
 * nice 0, in that process's cgroups.
 */
struct npuipc_copy_worker {
	struct list_head node;		/* in the module's list of workers */
	struct pid *tgid;		/* the process it was made for */
	kuid_t uid;			/* and that process's user */
	struct kthread_worker *worker;
	unsigned int users;		/* files using it */
};

struct npuipc_copy_worker *npuipc_copy_worker_get(void);
void npuipc_copy_worker_put(struct npuipc_copy_worker *w);

#endif /* NPUIPC_COPY_WORKER_H */
