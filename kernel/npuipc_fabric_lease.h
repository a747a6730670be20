/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_FABRIC_LEASE_H__
#define __NPUIPC_FABRIC_LEASE_H__

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

struct address_space;
struct drm_device;
struct drm_file;
struct drm_vma_offset_node;
struct npuipc_bo;

/*
 * What a FABRIC_IMPORT's memory lives by on the importing server: the
 * lease fd its importer (the fabric daemon) holds, and the lease's term.
 * The term's end, or closing the fd, revokes the memory (faults SIGBUS,
 * jobs -ENODEV); the fd polls readable once the import's last holder let
 * go.
 */
struct npuipc_fabric_lease {
	struct kref ref;
	/*
	 * Read under npuipc_lease_srcu by every access: @revoked is set once;
	 * @end_ns is the term's end (CLOCK_BOOTTIME, U64_MAX for none).
	 */
	bool revoked;
	u64 end_ns;
	/* Protects @released, @mappings, and the writes of @revoked and @end_ns */
	struct mutex lock;
	bool released;
	/* Where the memory is mapped for users: struct npuipc_lease_mapping. */
	struct list_head mappings;
	wait_queue_head_t wait;
	/* The term's end: revokes. Cancelled when the lease fd is closed. */
	struct delayed_work expire;
};

/*
 * One address space whose mappings reach leased memory: a buffer's, in its
 * device's DRM fds (@vma_node), or a dma-buf's, all of it (@vma_node NULL).
 */
struct npuipc_lease_mapping {
	struct list_head node;
	struct address_space *mapping;
	struct drm_vma_offset_node *vma_node;
};

bool npuipc_lease_enter(const struct npuipc_fabric_lease *lease, int *idx);
void npuipc_lease_exit(int idx);

void npuipc_lease_track(struct npuipc_fabric_lease *lease, struct npuipc_lease_mapping *m,
			struct address_space *mapping, struct drm_vma_offset_node *vma_node);
void npuipc_lease_untrack(struct npuipc_fabric_lease *lease, struct npuipc_lease_mapping *m);
void npuipc_lease_released(struct npuipc_fabric_lease *lease);

struct npuipc_fabric_lease *npuipc_lease_create(void);
struct file *npuipc_lease_file(struct npuipc_fabric_lease *lease);
int npuipc_lease_check_deadline(u64 deadline_ns);
void npuipc_lease_start(struct npuipc_fabric_lease *lease, u64 deadline_ns);
void npuipc_lease_put(struct npuipc_fabric_lease *lease);

int npuipc_fabric_lease_init(void);
void npuipc_fabric_lease_fini(void);
int npuipc_ioctl_fabric_renew(struct drm_device *drm, void *data, struct drm_file *file);
int npuipc_ioctl_fabric_hold(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __NPUIPC_FABRIC_LEASE_H__ */
