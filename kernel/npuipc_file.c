// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file state: the handle table of streams, events and notifies, the
 * file's copy worker, and what the file shows of itself (fdinfo, and its
 * objects in debugfs).
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/error-injection.h>
#include <linux/idr.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "npuipc_compat.h"
#include "npuipc_copy_worker.h"
#include "npuipc_drv.h"
#include "npuipc_file.h"
#include "npuipc_gem.h"
#include "npuipc_notify.h"
#include "npuipc_object.h"
#include "drm/npuipc_drm.h"

/* drm-client-id: unique for the life of the module, never reused. */
static atomic64_t npuipc_client_ids = ATOMIC64_INIT(0);

/**
 * npuipc_file_open() - set up npuipc's state of a newly opened DRM file
 * @drm: the device opened
 * @file: the new DRM file, whose driver_priv the state becomes
 *
 * The state has a drm-client-id unique for the life of the module and an
 * empty handle table.
 *
 * Return: 0, or -ENOMEM.
 */
int npuipc_file_open(struct drm_device *drm, struct drm_file *file)
{
	struct npuipc_file *nfile = kzalloc(sizeof(*nfile), GFP_KERNEL);

	if (!nfile)
		return -ENOMEM;
	nfile->ndev = to_npuipc(drm);
	nfile->client_id = npuipc_drm_client_id(file, atomic64_inc_return(&npuipc_client_ids));
	xa_init_flags(&nfile->objects, XA_FLAGS_ALLOC1);
	mutex_init(&nfile->copy_worker_lock);
	spin_lock_init(&nfile->owned_lock);
	INIT_LIST_HEAD(&nfile->owned_notifies);
	file->driver_priv = nfile;
	return 0;
}
ALLOW_ERROR_INJECTION(npuipc_file_open, ERRNO);

/* Everything a handle held: a stream stops. */
static void npuipc_file_drop_handle(struct npuipc_object *obj)
{
	if (obj->funcs->close)
		obj->funcs->close(obj);
	npuipc_object_put(obj);
}

/**
 * npuipc_file_postclose() - free a closed DRM file's npuipc state
 * @drm: the device the file was opened on
 * @file: the DRM file closed
 *
 * Drops every handle, streams first (their parked jobs must leave the
 * notifies' lists), orphans the notifies the file made, and lets go of the
 * file's copy worker once no stream queues copy work any more.
 */
void npuipc_file_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_object *obj;
	unsigned long handle;

	/* Streams first: their parked jobs must leave the notifies' lists. */
	xa_for_each(&nfile->objects, handle, obj) {
		if (obj->funcs->close) {
			xa_erase(&nfile->objects, handle);
			npuipc_file_drop_handle(obj);
		}
	}
	xa_for_each(&nfile->objects, handle, obj) {
		xa_erase(&nfile->objects, handle);
		npuipc_file_drop_handle(obj);
	}
	npuipc_notify_orphan_all(nfile);
	xa_destroy(&nfile->objects);
	/* Every stream is shut down and freed: none queues copy work any more. */
	if (nfile->copy_worker)
		npuipc_copy_worker_put(nfile->copy_worker);
	mutex_destroy(&nfile->copy_worker_lock);
	kfree(nfile);
}

/**
 * npuipc_file_add_object() - give an object a handle in a file
 * @nfile: the file's npuipc state
 * @obj: the object
 * @handle: where the new handle goes
 *
 * Gives @obj a handle, which takes over the caller's reference. On failure
 * the caller keeps its reference.
 *
 * Return: 0, -ENOSPC when the file has NPUIPC_MAX_OBJECTS handles, or -ENOMEM.
 */
int npuipc_file_add_object(struct npuipc_file *nfile, struct npuipc_object *obj,
			   u32 *handle)
{
	int ret = xa_alloc(&nfile->objects, handle, obj,
			   XA_LIMIT(1, NPUIPC_MAX_OBJECTS), GFP_KERNEL_ACCOUNT);

	if (!ret)
		atomic_inc(&nfile->object_count);
	return ret == -EBUSY ? -ENOSPC : ret;
}
ALLOW_ERROR_INJECTION(npuipc_file_add_object, ERRNO);

/**
 * npuipc_file_lookup_object() - look up the object of a handle
 * @nfile: the file's npuipc state
 * @handle: the handle
 * @type: the NPUIPC_OBJ_* type the object must be of, or 0 for any type
 *
 * Return: the object, referenced; ERR_PTR(-ENOENT) for no such handle, or
 * ERR_PTR(-EINVAL) for an object of another type.
 */
struct npuipc_object *npuipc_file_lookup_object(struct npuipc_file *nfile,
						u32 handle, u32 type)
{
	struct npuipc_object *obj;

	xa_lock(&nfile->objects);
	obj = xa_load(&nfile->objects, handle);
	if (!obj)
		obj = ERR_PTR(-ENOENT);
	else if (type && npuipc_object_type(obj) != type)
		obj = ERR_PTR(-EINVAL);	/* logged below, out of the lock */
	else
		npuipc_object_get(obj);
	xa_unlock(&nfile->objects);
	if (obj == ERR_PTR(-EINVAL))
		drm_dbg_driver(&nfile->ndev->drm, "refused: handle %u is not of type %u\n",
			       handle, type);
	return obj;
}

/**
 * npuipc_file_destroy_object() - drop a handle of a file
 * @nfile: the file's npuipc state
 * @handle: the handle to drop
 *
 * Everything the handle held goes: its reference, and a stream stops.
 *
 * Return: 0, or -ENOENT for no such handle.
 */
int npuipc_file_destroy_object(struct npuipc_file *nfile, u32 handle)
{
	struct npuipc_object *obj = xa_erase(&nfile->objects, handle);

	if (!obj)
		return -ENOENT;
	atomic_dec(&nfile->object_count);
	npuipc_file_drop_handle(obj);
	return 0;
}

/*
 * The object of the lowest handle at or above *@handle, referenced, and
 * its handle in *@handle; NULL past the last. Taken out of the table's
 * lock, so that the caller may take the object's own locks and sleep.
 */
static struct npuipc_object *npuipc_file_next_object(struct npuipc_file *nfile,
						     unsigned long *handle)
{
	struct npuipc_object *obj;

	xa_lock(&nfile->objects);
	obj = xa_find(&nfile->objects, handle, ULONG_MAX, XA_PRESENT);
	if (obj)
		npuipc_object_get(obj);
	xa_unlock(&nfile->objects);
	return obj;
}

/**
 * npuipc_file_unplug() - stop a file's objects as its device is unplugged
 * @file: a DRM file of the unplugged device
 *
 * The file's device is unplugged: its streams stop, their pending jobs
 * cancelled (fences signal -ECANCELED and whoever waits on them wakes),
 * and no more run; its notifies lose their owner, whose waits can no
 * longer come (their pollers see EPOLLHUP). Handles stay until the file
 * is closed.
 */
void npuipc_file_unplug(struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_object *obj;
	unsigned long handle = 0;

	for (; (obj = npuipc_file_next_object(nfile, &handle)); handle++) {
		if (obj->funcs->close)
			obj->funcs->close(obj);
		npuipc_object_put(obj);
	}
	npuipc_notify_orphan_all(nfile);
}

/**
 * npuipc_file_copy_worker() - choose a file's copy worker if it has none
 * @nfile: the file's npuipc state
 *
 * The file's copy worker, chosen by its first COPY or FILL submit: the
 * submitting process's (npuipc_copy_worker.c).
 *
 * Context: Process context, no lock held.
 * Return: 0 once the file has a worker, or the error of npuipc_copy_worker_get().
 */
int npuipc_file_copy_worker(struct npuipc_file *nfile)
{
	struct npuipc_copy_worker *w;
	int ret = 0;

	if (smp_load_acquire(&nfile->copy_worker))
		return 0;
	mutex_lock(&nfile->copy_worker_lock);
	if (!nfile->copy_worker) {
		w = npuipc_copy_worker_get();
		if (IS_ERR(w))
			ret = PTR_ERR(w);
		else
			smp_store_release(&nfile->copy_worker, w);
	}
	mutex_unlock(&nfile->copy_worker_lock);
	return ret;
}

/**
 * npuipc_file_show_fdinfo() - print a DRM file's fdinfo keys
 * @p: the printer of the fd's fdinfo
 * @file: the DRM file
 *
 * The keys every DRM driver shares, where DRM does not print them itself
 * (drm_show_fdinfo(), 6.5 on): drm-driver, drm-client-id, drm-pdev (a PCI
 * device's address). Then this driver's: drm-engine-copy, the time the
 * engine spent on this file's COPY and FILL jobs; drm-memory-device,
 * buffers of this device's memory (its one region) the file holds handles
 * to. Imports are no region of this device: npuipc-memory-imported counts
 * them (other devices' or other exporters' memory, or this device's
 * through a dma-buf).
 *
 * Then npuipc's own keys, so that a user sees its processes' objects
 * without debugfs: npuipc-buffers (GEM handles, imports included),
 * npuipc-imports (the handles of imports among them),
 * npuipc-streams, npuipc-events, npuipc-notifies (handles of this file),
 * npuipc-jobs (submitted on its streams and not yet completed).
 */
void npuipc_file_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	unsigned int buffers = 0, imports = 0, types[NPUIPC_OBJ_NOTIFY + 1] = { 0 }, jobs = 0;
	u64 owned = 0, imported = 0;
	struct drm_gem_object *obj;
	struct npuipc_object *nobj;
	unsigned long handle;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		/* A dma-buf's, or another server's (FABRIC_IMPORT). */
		if (to_npuipc_bo(obj)->bo_flags & NPUIPC_BO_IMPORTED) {
			imported += obj->size;
			imports++;
		} else {
			owned += obj->size;
		}
		buffers++;
	}
	spin_unlock(&file->table_lock);

	/* Under the xarray's lock no handle is destroyed, so each object lives. */
	xa_lock(&nfile->objects);
	xa_for_each(&nfile->objects, handle, nobj) {
		if (npuipc_object_type(nobj) < ARRAY_SIZE(types))
			types[npuipc_object_type(nobj)]++;
		if (nobj->funcs->queued_jobs)
			jobs += nobj->funcs->queued_jobs(nobj);
	}
	xa_unlock(&nfile->objects);

	if (!NPUIPC_DRM_SHOWS_FDINFO) {
		drm_printf(p, "drm-driver:\t%s\n", DRIVER_NAME);
		drm_printf(p, "drm-client-id:\t%llu\n", nfile->client_id);
		if (nfile->ndev->caps & NPUIPC_CAP_PCI)
			drm_printf(p, "drm-pdev:\t%s\n", dev_name(nfile->ndev->drm.dev));
	}
	drm_printf(p, "drm-engine-copy:\t%llu ns\n", (u64)atomic64_read(&nfile->engine_copy_ns));
	drm_printf(p, "drm-memory-device:\t%llu KiB\n", owned >> 10);
	drm_printf(p, "npuipc-memory-imported:\t%llu KiB\n", imported >> 10);
	drm_printf(p, "npuipc-buffers:\t%u\n", buffers);
	drm_printf(p, "npuipc-imports:\t%u\n", imports);
	drm_printf(p, "npuipc-streams:\t%u\n", types[NPUIPC_OBJ_STREAM]);
	drm_printf(p, "npuipc-events:\t%u\n", types[NPUIPC_OBJ_EVENT]);
	drm_printf(p, "npuipc-notifies:\t%u\n", types[NPUIPC_OBJ_NOTIFY]);
	drm_printf(p, "npuipc-jobs:\t%u\n", jobs);
}

/* The DRM fd's show_fdinfo where DRM has no drm_show_fdinfo() (before 6.5). */
void npuipc_file_seq_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_printer p = drm_seq_file_printer(m);

	npuipc_file_show_fdinfo(&p, f->private_data);
}

/**
 * npuipc_file_show_objects() - print a file's objects for debugfs
 * @m: the seq_file of debugfs's npuipc_streams
 * @file: the DRM file
 *
 * The file's objects, for debugfs's npuipc_streams: a line for the client,
 * then each object as its type shows it.
 */
void npuipc_file_show_objects(struct seq_file *m, struct drm_file *file)
{
	struct npuipc_file *nfile = to_npuipc_file(file);
	struct npuipc_object *obj;
	unsigned long handle = 0;

	seq_printf(m, "client %llu pid %d\n", nfile->client_id, pid_nr(file->pid));
	for (; (obj = npuipc_file_next_object(nfile, &handle)); handle++) {
		obj->funcs->show(m, handle, obj);
		npuipc_object_put(obj);
		cond_resched();	/* up to NPUIPC_MAX_OBJECTS, with filelist_mutex held */
	}
}
