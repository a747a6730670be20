// SPDX-License-Identifier: GPL-2.0
/*
 * Copy workers: COPY and FILL are user work of any length, so they run as
 * their submitter would: at nice 0 and within its cgroups' limits (cpu.max,
 * a cpuset, pids.max), never on the engine's high-priority queue nor in a
 * kworker of the root cgroup. A worker is a kthread attached to the cgroups
 * of the process it works for (cgroup_attach_task_all(), as vhost does; an
 * attach the cgroup core refuses fails the SUBMIT, as vhost's ioctl does),
 * shared by all the files whose first COPY or FILL that process submitted,
 * and it lives while one of those files does.
 *
 * Files outlive processes, so a user could still pile up workers (files
 * kept open after each process that chose them exits): past
 * max_copy_workers per user, a new process shares one of that user's
 * workers (moved into its cgroups) instead of making another.
 *
 * Known limits: a file passed to another process goes on using its first
 * submitter's worker, and a cgroup holding a worker cannot be removed until
 * the files using it are closed.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/error-injection.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "npuipc_copy_worker.h"

static unsigned int max_copy_workers = 64;
module_param(max_copy_workers, uint, 0644);
MODULE_PARM_DESC(max_copy_workers,
		 "Copy worker threads one user may have; past it new processes share them "
		 "(default 64, at least 1)");

static LIST_HEAD(npuipc_copy_workers);
/* Protects npuipc_copy_workers and each worker's users */
static DEFINE_MUTEX(npuipc_copy_workers_lock);

/* Whether @task is in the calling process's default-hierarchy cgroup. */
static bool npuipc_same_cgroup(struct task_struct *task)
{
	bool same;

	rcu_read_lock();
	same = task_dfl_cgroup(task) == task_dfl_cgroup(current);
	rcu_read_unlock();
	return same;
}

/*
 * Moves @w into the calling process's cgroups unless it is there already
 * (the process moved, or the worker is shared past the per-user limit).
 */
static int npuipc_copy_worker_follow(struct npuipc_copy_worker *w)
{
	if (npuipc_same_cgroup(w->worker->task))
		return 0;
	return cgroup_attach_task_all(current, w->worker->task);
}

/**
 * npuipc_copy_worker_get() - get the calling process's copy worker
 *
 * Description: The calling process's worker, made on first use: a process's
 * worker, or, past the per-user limit, one of its user's. A worker found is
 * moved into the caller's cgroups unless it is there already.
 *
 * Context: Process context.
 * Return: the worker, with a use counted for the caller (npuipc_copy_worker_put()
 * gives it back), or an ERR_PTR(): -EINTR when killed waiting for the workers'
 * lock, -ENOMEM, or the error of creating the kthread or of attaching it to the
 * caller's cgroups.
 */
struct npuipc_copy_worker *npuipc_copy_worker_get(void)
{
	struct pid *tgid = task_tgid(current);
	kuid_t uid = current_uid();
	struct npuipc_copy_worker *w, *mine = NULL, *users_own = NULL;
	unsigned int owned = 0;
	int ret;

	if (mutex_lock_killable(&npuipc_copy_workers_lock))
		return ERR_PTR(-EINTR);
	list_for_each_entry(w, &npuipc_copy_workers, node) {
		if (w->tgid == tgid)
			mine = w;
		if (uid_eq(w->uid, uid)) {
			owned++;
			users_own = w;
		}
	}
	w = mine;
	if (!w && owned >= max(READ_ONCE(max_copy_workers), 1U))
		w = users_own;
	if (w) {
		ret = npuipc_copy_worker_follow(w);
		if (ret) {
			w = ERR_PTR(ret);
			goto out;
		}
		w->users++;
		goto out;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w) {
		w = ERR_PTR(-ENOMEM);
		goto out;
	}
	w->worker = kthread_create_worker(0, "npuipc-cp/%d", pid_nr(tgid));
	ret = PTR_ERR_OR_ZERO(w->worker);
	if (!ret) {
		ret = cgroup_attach_task_all(current, w->worker->task);
		if (ret)
			kthread_destroy_worker(w->worker);
	}
	if (ret) {
		kfree(w);
		w = ERR_PTR(ret);
		goto out;
	}
	w->tgid = get_pid(tgid);
	w->uid = uid;
	w->users = 1;
	list_add(&w->node, &npuipc_copy_workers);
out:
	mutex_unlock(&npuipc_copy_workers_lock);
	return w;
}
ALLOW_ERROR_INJECTION(npuipc_copy_worker_get, ERRNO);

/**
 * npuipc_copy_worker_put() - give back a file's use of its copy worker
 * @w: the worker the closed file used
 *
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
