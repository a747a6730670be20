// SPDX-License-Identifier: GPL-2.0
/*
 * How fabric memory's lifetime crosses servers (Documentation/fabric.md,
 * Lifetime across servers). The servers' kernels know nothing of each
 * other: their fabric daemons keep leases over the link, and each kernel
 * gives its daemon the two levers a lease needs.
 *
 * On the importing server, a FABRIC_IMPORT comes with a lease fd and a
 * term, which the daemon renews (FABRIC_RENEW) as the owner's daemon
 * renews its grant. Until the term ends or the fd is closed (the daemon
 * let the lease go, or died), the import is memory like any other; then
 * it is revoked: every user mapping of it, and
 * of the dma-bufs and peer imports made from it, is zapped, later faults
 * get SIGBUS and jobs -ENODEV, so that nobody on this server reaches the
 * range once its owner may give it to another allocation. The kernel
 * keeps the term, not the daemon: a daemon stopped or starved past it
 * cannot keep an import the owner no longer grants. The fd polls
 * readable when the import's last holder let go, which the daemon tells
 * the owner.
 *
 * On the owning server, FABRIC_HOLD keeps a buffer of the window allocated
 * for a while whoever else holds it: its daemon holds what it granted for
 * as long as an importer's lease may still run, so that the range is not
 * reused under an importer even when the daemon dies. A hold only ever
 * grows: nobody, a restarted daemon included, cuts one short.
 */
#include <linux/anon_inodes.h>
#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include "npuipc_drv.h"
#include "npuipc_fabric_lease.h"
#include "npuipc_gem.h"
#include "npuipc_prime.h"
#include "drm/npuipc_drm.h"

/* Every access to leased memory (a fault, a stretch of a job) is a reader. */
DEFINE_STATIC_SRCU(npuipc_lease_srcu);
/* Leases' terms and holds' ends; destroyed at module exit, after the last. */
static struct workqueue_struct *npuipc_fabric_wq;

/**
 * npuipc_lease_enter() - begin an access to leased memory
 * @lease: the memory's lease
 * @idx: set for npuipc_lease_exit()
 *
 * Return: true when the access may go on (call npuipc_lease_exit() after),
 * false when the lease is revoked (nothing to exit).
 */
bool npuipc_lease_enter(const struct npuipc_fabric_lease *lease, int *idx)
{
	*idx = srcu_read_lock(&npuipc_lease_srcu);
	/* From the term's end on, before the timer has revoked. */
	if (!READ_ONCE(lease->revoked) && ktime_get_boottime_ns() < READ_ONCE(lease->end_ns))
		return true;
	srcu_read_unlock(&npuipc_lease_srcu, *idx);
	return false;
}

/**
 * npuipc_lease_exit() - end an access begun by npuipc_lease_enter()
 * @idx: what npuipc_lease_enter() set
 */
void npuipc_lease_exit(int idx)
{
	srcu_read_unlock(&npuipc_lease_srcu, idx);
}

/**
 * npuipc_lease_track() - note an address space that maps leased memory
 * @lease: the memory's lease
 * @m: the entry, embedded in the buffer or export that maps it
 * @mapping: the address space
 * @vma_node: the buffer's offset node in it, or NULL for all of it
 */
void npuipc_lease_track(struct npuipc_fabric_lease *lease, struct npuipc_lease_mapping *m,
			struct address_space *mapping, struct drm_vma_offset_node *vma_node)
{
	m->mapping = mapping;
	m->vma_node = vma_node;
	mutex_lock(&lease->lock);
	list_add_tail(&m->node, &lease->mappings);
	mutex_unlock(&lease->lock);
}

/**
 * npuipc_lease_untrack() - forget an entry of npuipc_lease_track()
 * @lease: the memory's lease
 * @m: the entry; one never tracked (its node zeroed) is ignored
 */
void npuipc_lease_untrack(struct npuipc_fabric_lease *lease, struct npuipc_lease_mapping *m)
{
	if (!m->node.next)
		return;
	mutex_lock(&lease->lock);
	list_del(&m->node);
	mutex_unlock(&lease->lock);
	m->node.next = NULL;
}

static void npuipc_lease_free(struct kref *ref)
{
	struct npuipc_fabric_lease *lease = container_of(ref, struct npuipc_fabric_lease, ref);

	WARN_ON(!list_empty(&lease->mappings));
	mutex_destroy(&lease->lock);
	kfree(lease);
}

/**
 * npuipc_lease_put() - drop a reference to a lease
 * @lease: the lease
 */
void npuipc_lease_put(struct npuipc_fabric_lease *lease)
{
	kref_put(&lease->ref, npuipc_lease_free);
}

/**
 * npuipc_lease_released() - the import's last holder let go
 * @lease: its lease, whose reference the import held
 */
void npuipc_lease_released(struct npuipc_fabric_lease *lease)
{
	mutex_lock(&lease->lock);
	lease->released = true;
	mutex_unlock(&lease->lock);
	wake_up_all(&lease->wait);
	npuipc_lease_put(lease);
}

/*
 * No access that began before the revocation is still going when the
 * mappings are zapped, and none that begins after maps anything.
 */
static void npuipc_lease_revoke(struct npuipc_fabric_lease *lease)
{
	struct npuipc_lease_mapping *m;

	mutex_lock(&lease->lock);
	if (lease->released || lease->revoked) {
		mutex_unlock(&lease->lock);
		return;
	}
	WRITE_ONCE(lease->revoked, true);
	mutex_unlock(&lease->lock);
	synchronize_srcu(&npuipc_lease_srcu);

	mutex_lock(&lease->lock);
	list_for_each_entry(m, &lease->mappings, node) {
		if (m->vma_node)
			drm_vma_node_unmap(m->vma_node, m->mapping);
		else
			unmap_mapping_range(m->mapping, 0, 0, 1);
	}
	mutex_unlock(&lease->lock);
}

/*
 * The delay of a timer for @end_ns: it may fire a jiffy early (and the
 * rest is waited out, as is a term moved meanwhile) or late, by up to an
 * eighth of the delay (the timer wheel's granularity).
 */
static unsigned long npuipc_lease_delay(u64 end_ns)
{
	u64 now = ktime_get_boottime_ns();

	return end_ns > now ? nsecs_to_jiffies(end_ns - now) + 1 : 0;
}

static void npuipc_lease_expire(struct work_struct *work)
{
	struct npuipc_fabric_lease *lease =
		container_of(to_delayed_work(work), struct npuipc_fabric_lease, expire);
	unsigned long delay;

	mutex_lock(&lease->lock);
	delay = npuipc_lease_delay(lease->end_ns);
	if (delay && !lease->revoked)
		queue_delayed_work(npuipc_fabric_wq, &lease->expire, delay);
	mutex_unlock(&lease->lock);
	if (!delay)
		npuipc_lease_revoke(lease);
}

/* The term's work runs only while the file is open: it holds no reference. */
static int npuipc_lease_release(struct inode *inode, struct file *file)
{
	struct npuipc_fabric_lease *lease = file->private_data;

	cancel_delayed_work_sync(&lease->expire);
	npuipc_lease_revoke(lease);
	npuipc_lease_put(lease);
	return 0;
}

static __poll_t npuipc_lease_poll(struct file *file, poll_table *wait)
{
	struct npuipc_fabric_lease *lease = file->private_data;
	bool released;

	poll_wait(file, &lease->wait, wait);
	mutex_lock(&lease->lock);
	released = lease->released;
	mutex_unlock(&lease->lock);
	return released ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations npuipc_lease_fops = {
	.owner = THIS_MODULE,
	.release = npuipc_lease_release,
	.poll = npuipc_lease_poll,
	.llseek = noop_llseek,
};

/**
 * npuipc_lease_create() - a new lease, not revoked, not released
 *
 * Return: the lease with one reference, or NULL without memory.
 */
struct npuipc_fabric_lease *npuipc_lease_create(void)
{
	struct npuipc_fabric_lease *lease = kzalloc(sizeof(*lease), GFP_KERNEL_ACCOUNT);

	if (!lease)
		return NULL;
	kref_init(&lease->ref);
	mutex_init(&lease->lock);
	INIT_LIST_HEAD(&lease->mappings);
	init_waitqueue_head(&lease->wait);
	INIT_DELAYED_WORK(&lease->expire, npuipc_lease_expire);
	lease->end_ns = U64_MAX;
	return lease;
}

/**
 * npuipc_lease_check_deadline() - check a term's end as userspace gives it
 * @deadline_ns: CLOCK_BOOTTIME nanoseconds
 *
 * Return: 0; -ETIMEDOUT when it has passed, -EINVAL when it lies more than
 * NPUIPC_FABRIC_LEASE_MAX_MS ahead.
 */
int npuipc_lease_check_deadline(u64 deadline_ns)
{
	u64 now = ktime_get_boottime_ns();

	if (deadline_ns <= now)
		return -ETIMEDOUT;
	if (deadline_ns - now > (u64)NPUIPC_FABRIC_LEASE_MAX_MS * NSEC_PER_MSEC)
		return -EINVAL;
	return 0;
}

/**
 * npuipc_lease_start() - start a lease's term
 * @lease: the lease, its file made
 * @deadline_ns: the term's end (checked), 0 for none
 */
void npuipc_lease_start(struct npuipc_fabric_lease *lease, u64 deadline_ns)
{
	if (!deadline_ns)
		return;
	WRITE_ONCE(lease->end_ns, deadline_ns);
	queue_delayed_work(npuipc_fabric_wq, &lease->expire, npuipc_lease_delay(deadline_ns));
}

/**
 * npuipc_ioctl_fabric_renew() - move the end of an import's term (FABRIC_RENEW)
 * @drm: the device, a fabric window
 * @data: struct drm_npuipc_fabric_renew
 * @file: the calling DRM file
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_fabric_renew).
 */
int npuipc_ioctl_fabric_renew(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_npuipc_fabric_renew *args = data;
	struct npuipc_fabric_lease *lease;
	struct file *lease_file;
	int ret = 0;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_FABRIC_RENEW_FLAGS_VALID))
		return -EINVAL;
	ret = npuipc_lease_check_deadline(args->deadline_ns);
	if (npuipc_refuse(drm, ret == -EINVAL))
		return ret;
	if (!to_npuipc(drm)->fabric)
		return -EOPNOTSUPP;
	lease_file = fget(args->lease_fd);
	if (!lease_file)
		return -EBADF;
	if (npuipc_refuse(drm, lease_file->f_op != &npuipc_lease_fops)) {
		fput(lease_file);
		return -EINVAL;
	}
	lease = lease_file->private_data;
	/* Under the lock: a term that ended is not brought back. */
	mutex_lock(&lease->lock);
	if (lease->revoked || ktime_get_boottime_ns() >= lease->end_ns) {
		ret = -ENODEV;
	} else if (!ret) {
		WRITE_ONCE(lease->end_ns, args->deadline_ns);
		mod_delayed_work(npuipc_fabric_wq, &lease->expire,
				 npuipc_lease_delay(args->deadline_ns));
	}
	mutex_unlock(&lease->lock);
	fput(lease_file);
	return ret;
}

/**
 * npuipc_lease_file() - the lease fd's file
 * @lease: the lease, whose reference the file takes over on success
 *
 * Return: the file (O_RDONLY; its fd to be made O_CLOEXEC) or an ERR_PTR().
 */
struct file *npuipc_lease_file(struct npuipc_fabric_lease *lease)
{
	return anon_inode_getfile("[npuipc_fabric_lease]", &npuipc_lease_fops, lease, O_RDONLY);
}

/*
 * FABRIC_HOLD: a buffer of the window kept until @until, through a
 * reference to one of its dma-bufs. One hold a buffer (npuipc_bo.fabric_hold).
 */
struct npuipc_fabric_hold {
	struct delayed_work work;
	struct npuipc_bo *bo;
	struct dma_buf *dmabuf;
	unsigned long until;	/* jiffies */
};

/* Protects every npuipc_bo.fabric_hold and the holds' @until */
static DEFINE_MUTEX(npuipc_hold_lock);

static void npuipc_hold_expire(struct work_struct *work)
{
	struct npuipc_fabric_hold *hold =
		container_of(to_delayed_work(work), struct npuipc_fabric_hold, work);

	mutex_lock(&npuipc_hold_lock);
	if (time_before(jiffies, hold->until)) {	/* renewed meanwhile */
		queue_delayed_work(npuipc_fabric_wq, &hold->work, hold->until - jiffies);
		mutex_unlock(&npuipc_hold_lock);
		return;
	}
	/* Only this work queues itself: nothing is left pending. */
	hold->bo->fabric_hold = NULL;
	mutex_unlock(&npuipc_hold_lock);
	dma_buf_put(hold->dmabuf);
	kfree(hold);
}

/*
 * Every pending term has a lease fd open and every pending hold a dma-buf
 * referenced, and both keep the module: at exit, no work is left to run.
 */
int npuipc_fabric_lease_init(void)
{
	npuipc_fabric_wq = alloc_workqueue("npuipc_fabric", 0, 0);
	return npuipc_fabric_wq ? 0 : -ENOMEM;
}

void npuipc_fabric_lease_fini(void)
{
	destroy_workqueue(npuipc_fabric_wq);
}

/**
 * npuipc_ioctl_fabric_hold() - keep a buffer of the window allocated (FABRIC_HOLD)
 * @drm: the device, a fabric window
 * @data: struct drm_npuipc_fabric_hold
 * @file: the calling DRM file
 *
 * Return: 0 or a negative errno (see struct drm_npuipc_fabric_hold).
 */
int npuipc_ioctl_fabric_hold(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_npuipc_fabric_hold *args = data;
	unsigned long delay = msecs_to_jiffies(args->timeout_ms);
	struct npuipc_fabric_hold *hold, *fresh = NULL;
	struct dma_buf *dmabuf;
	struct npuipc_bo *bo;
	int ret = 0;

	if (npuipc_refuse(drm, args->flags & ~NPUIPC_FABRIC_HOLD_FLAGS_VALID))
		return -EINVAL;
	if (npuipc_refuse(drm, args->pad || !args->timeout_ms ||
			  args->timeout_ms > NPUIPC_FABRIC_HOLD_MAX_MS))
		return -EINVAL;
	if (!to_npuipc(drm)->fabric)
		return -EOPNOTSUPP;
	dmabuf = dma_buf_get(args->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	bo = npuipc_dmabuf_bo(dmabuf);
	/* This server's own fabric memory, allocated here. */
	if (npuipc_refuse(drm, !bo || bo->base.dev != drm ||
			  (bo->bo_flags & (NPUIPC_BO_IMPORTED | NPUIPC_BO_FABRIC)) !=
			  NPUIPC_BO_FABRIC)) {
		ret = -EINVAL;
		goto out;
	}
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh) {
		ret = -ENOMEM;
		goto out;
	}

	mutex_lock(&npuipc_hold_lock);
	hold = bo->fabric_hold;
	if (!hold) {
		INIT_DELAYED_WORK(&fresh->work, npuipc_hold_expire);
		fresh->bo = bo;
		fresh->dmabuf = dmabuf;	/* the hold keeps dma_buf_get()'s reference */
		fresh->until = jiffies + delay;
		dmabuf = NULL;
		bo->fabric_hold = fresh;
		queue_delayed_work(npuipc_fabric_wq, &fresh->work, delay);
		fresh = NULL;
	} else if (time_after(jiffies + delay, hold->until)) {
		/* The work, when it runs, waits out the rest. */
		hold->until = jiffies + delay;
	}
	mutex_unlock(&npuipc_hold_lock);
	kfree(fresh);
out:
	if (dmabuf)
		dma_buf_put(dmabuf);
	return ret;
}
