// SPDX-License-Identifier: GPL-2.0
/*
 * Copy workers: COPY and FILL are user work of any length, so they run as
 * their submitter would: at nice 0 and within its cgroups' limits (cpu.max,
 * a cpuset), never on the engine's high-priority queue nor in a kworker of
 * the root cgroup. A worker is a kthread attached to the cgroups of the
 * process it works for (cgroup_attach_task_all(), as vhost does), shared by
 * all the files whose first COPY or FILL that process submitted, so that a
 * process adds at most one thread however many files it opens. It lives
 * while one of those files does.
 *
 * Known limits, as vhost's: the worker stays in the cgroups the process was
 * in when it was made; a file passed to another process goes on using its
 * first submitter's worker; and a cgroup holding a worker cannot be removed
 * until the files using it are closed.
 */
#include <linux/cgroup.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "npuipc_copy_worker.h"

static LIST_HEAD(npuipc_copy_workers);
/* Protects npuipc_copy_workers and each worker's users */
static DEFINE_MUTEX(npuipc_copy_workers_lock);

/*
 * The calling process's worker, made on first use. Process context. If the
 * cgroup core refuses the kthread (a security module may refuse to let it
 * join a cpuset), it works from the root cgroup rather than fail the user's
 * copies, and says so once.
 */
struct npuipc_copy_worker *npuipc_copy_worker_get(void)
{
	struct pid *tgid = task_tgid(current);
	struct npuipc_copy_worker *w;
	int ret;

	mutex_lock(&npuipc_copy_workers_lock);
	list_for_each_entry(w, &npuipc_copy_workers, node) {
		if (w->tgid == tgid) {
			w->users++;
			goto out;
		}
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w) {
		w = ERR_PTR(-ENOMEM);
		goto out;
	}
	w->worker = kthread_create_worker(0, "npuipc-copy/%d", pid_nr(tgid));
	if (IS_ERR(w->worker)) {
		ret = PTR_ERR(w->worker);
		kfree(w);
		w = ERR_PTR(ret);
		goto out;
	}
	ret = cgroup_attach_task_all(current, w->worker->task);
	if (ret)
		pr_notice_once("npuipc: a copy worker could not join its process's cgroups (%d); it runs in the root cgroup\n",
			       ret);
	w->tgid = get_pid(tgid);
	w->users = 1;
	list_add(&w->node, &npuipc_copy_workers);
out:
	mutex_unlock(&npuipc_copy_workers_lock);
	return w;
}

/*
 * A file using @w is closed, its streams shut down: none of them queues
 * work any more. The last one's close ends the worker.
 */
void npuipc_copy_worker_put(struct npuipc_copy_worker *w)
{
	bool last;

	mutex_lock(&npuipc_copy_workers_lock);
	last = !--w->users;
	if (last)
		list_del(&w->node);
	mutex_unlock(&npuipc_copy_workers_lock);
	if (!last)
		return;
	kthread_destroy_worker(w->worker);
	put_pid(w->tgid);
	kfree(w);
}
