// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime and concurrency: what holds a stream and what releases it, which
 * record a waiter completes on, waiters whose process is killed or whose
 * file is closed under them, sources and targets of a queued copy dropped
 * before it runs, and threads of one file racing each other. Each scenario
 * has one exact outcome, and every test ends with the leak oracle: both
 * devices back to zero objects and bytes.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/dma-buf.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"
#include "npuipc_vgem_gate.h"

#define SEC_NS 1000000000LL
#define BUF_SIZE (1024 * 1024)

FIXTURE(lifetime) {
	int fd;
	uint32_t stream, gate, a, b;	/* a, b: 1 MiB normal buffers */
	uint8_t *map_a, *map_b;
	size_t size;
};

FIXTURE_SETUP(lifetime)
{
	self->map_a = self->map_b = MAP_FAILED;
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &self->gate));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &self->a));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &self->b));
	self->map_a = npuipc_bo_mmap(self->fd, self->a, PROT_READ | PROT_WRITE, &self->size);
	self->map_b = npuipc_bo_mmap(self->fd, self->b, PROT_READ | PROT_WRITE, &self->size);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_NE(MAP_FAILED, self->map_b);
}

FIXTURE_TEARDOWN(lifetime)
{
	if (self->map_a != MAP_FAILED)
		munmap(self->map_a, self->size);
	if (self->map_b != MAP_FAILED)
		munmap(self->map_b, self->size);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
	EXPECT_TRUE(npuipc_device_is_idle(1));
}

/*
 * Polls (10 s at most) until the task whose /proc syscall file is @path
 * sits in ioctl(): a waiter really blocked in WAIT, not about to enter it.
 */
static int blocked_in_ioctl(const char *path)
{
	char buf[128];
	int i;

	for (i = 0; i < 1000; i++) {
		if (!npuipc_read_file(path, buf, sizeof(buf)) && !strncmp(buf, "16 ", 3))
			return 1;
		usleep(10000);
	}
	return 0;
}

static int thread_blocked_in_ioctl(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	return blocked_in_ioctl(path);
}

/*
 * WAIT_SYNC_FILE holds its stream until the fence signals: here the fence
 * of another stream's job behind a gate (another driver's fence, so that
 * the job's fence may leave as a sync_file). The copy after the wait then
 * sees what that job wrote, and not before.
 */
TEST_F(lifetime, wait_sync_file_on_another_streams_pending_fence_holds_the_stream)
{
	struct npuipc_vgem_gate gate;
	struct drm_npuipc_job first[2];
	uint32_t waiter;
	int fence, status;

	NPUIPC_VGEM_GATE_INIT(&gate);
	first[0] = npuipc_vgem_gate_job(&gate);
	first[1] = npuipc_fill_job(self->a, 0, 4096, 0x11);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &waiter));
	memset(self->map_a, 0x77, 4096);	/* what a copy that did not wait would take */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, first, 2, &fence));
	ASSERT_EQ(0, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, fence),
		npuipc_copy_job(self->b, 0, self->a, 0, 4096) }, 2, NULL));
	close(fence);	/* the queued wait holds the fence, not the fd */
	usleep(100000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, waiter, 0, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 4096, 0));

	ASSERT_EQ(0, npuipc_vgem_gate_open(&gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 4096, 0x11));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, waiter));
	npuipc_vgem_gate_fini(&gate);
}

/*
 * The same with another driver's fence: a vgem fence attached to a vgem
 * buffer, taken from its dma-buf as a sync_file. vgem signals it when told
 * to (or after 10 s on its own).
 */
TEST_F(lifetime, wait_sync_file_on_a_pending_vgem_fence_holds_the_stream)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 1, .bpp = 32 };
	struct drm_vgem_fence_attach attach = { .flags = VGEM_FENCE_WRITE };
	struct dma_buf_export_sync_file sync = { .flags = DMA_BUF_SYNC_READ };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC };
	struct drm_vgem_fence_signal signal = { 0 };
	struct drm_gem_close gem_close = { 0 };
	int vgem, status;

	vgem = npuipc_open_vgem();
	if (vgem < 0)
		SKIP(return, "vgem is not loaded (modprobe vgem)");
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
	attach.handle = prime.handle = gem_close.handle = dumb.handle;
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach));
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	ASSERT_EQ(0, ioctl(prime.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &sync));
	EXPECT_EQ(0, npuipc_sync_file_status(sync.fd));

	/* The copy's source is written only once the wait is checked: a copy run early copies zeros. */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, sync.fd),
		npuipc_copy_job(self->a, 0, self->b, 0, 4096) }, 2, NULL));
	usleep(100000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_a, 4096, 0));
	memset(self->map_b, 0x22, 4096);
	__sync_synchronize();

	signal.fence = attach.out_fence;
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &signal));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_a, 4096, 0x22));
	close(sync.fd);
	close(prime.fd);
	EXPECT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gem_close));
	close(vgem);
}

struct host_waiter {
	int fd;
	uint32_t handle;
	atomic_int ret;
	atomic_int status;
	atomic_int tid;
};

static void *host_wait(void *p)
{
	struct host_waiter *w = p;
	int status = 0;

	atomic_store(&w->tid, gettid());
	atomic_store(&w->ret, npuipc_wait(w->fd, w->handle, -1, 0, &status));
	atomic_store(&w->status, status);
	return NULL;
}

/*
 * A wait on an event takes the record that was the latest when it was
 * submitted, a job's or the host's: a later record still pending does not
 * hold it back.
 */
TEST_F(lifetime, a_waiter_completes_on_the_record_it_saw_not_a_later_one)
{
	static struct host_waiter host;
	uint32_t event, waiter, second_gate, later;
	pthread_t thread;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &waiter));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &later));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &second_gate));
	/* Record 1, pending behind the gate; a job and a host thread wait on it. */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(self->gate),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	ASSERT_EQ(0, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event),
		npuipc_fill_job(self->b, 0, 4096, 0x33) }, 2, NULL));
	host = (struct host_waiter){ .fd = self->fd, .handle = event, .ret = 1 };
	ASSERT_EQ(0, pthread_create(&thread, NULL, host_wait, &host));
	while (!atomic_load(&host.tid))
		usleep(1000);
	EXPECT_TRUE(thread_blocked_in_ioctl(atomic_load(&host.tid)));
	/* Record 2, later and pending behind another gate. */
	EXPECT_EQ(0, npuipc_submit(self->fd, later, (struct drm_npuipc_job[]){
		npuipc_gate_job(second_gate),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	/* Both waiters are held by record 1 so far. */
	usleep(50000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, waiter, 0, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 4096, 0));
	EXPECT_EQ(1, atomic_load(&host.ret));

	EXPECT_EQ(0, npuipc_release_gate(self->fd, self->gate));
	EXPECT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(0, atomic_load(&host.ret));
	EXPECT_EQ(0, atomic_load(&host.status));
	EXPECT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 4096, 0x33));
	/* The event's latest record is record 2: still pending. */
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, event, 0, 0, NULL));
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, later, 0, 0, NULL));

	EXPECT_EQ(0, npuipc_release_gate(self->fd, second_gate));
	EXPECT_EQ(0, npuipc_wait(self->fd, event, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, waiter));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, later));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, second_gate));
}

/*
 * A stream destroyed by one thread while another waits on it without
 * limit: the wait ends, reporting that its jobs were cancelled.
 */
TEST_F(lifetime, destroying_a_stream_under_a_waiting_thread_ends_the_wait_with_ecanceled)
{
	static struct host_waiter host;
	pthread_t thread;

	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(self->gate), npuipc_fill_job(self->a, 0, 4096, 0x44) }, 2, NULL));
	host = (struct host_waiter){ .fd = self->fd, .handle = self->stream, .ret = 1 };
	ASSERT_EQ(0, pthread_create(&thread, NULL, host_wait, &host));
	while (!atomic_load(&host.tid))
		usleep(1000);
	EXPECT_TRUE(thread_blocked_in_ioctl(atomic_load(&host.tid)));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, self->stream));
	EXPECT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(0, atomic_load(&host.ret));
	EXPECT_EQ(-ECANCELED, atomic_load(&host.status));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_a, 4096, 0));	/* the FILL never ran */
}

/*
 * A process blocked without limit in WAIT on an event it imported, its
 * record pending in this process, is SIGKILLed: it dies at once, and once
 * the record completes nothing of it is left.
 */
TEST_F(lifetime, a_process_killed_while_blocked_in_wait_on_an_imported_event_ends_and_frees_everything)
{
	int sv[2], event_fd, status = 0, i;
	char ready = 0, path[64];
	uint32_t event;
	pid_t child;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(self->gate),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &event_fd));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		uint32_t imported;
		int fd = npuipc_open_device(0);	/* a file of its own */

		if (fd < 0 || npuipc_obj_import(fd, event_fd, &imported) ||
		    write(sv[1], "r", 1) != 1)
			_exit(1);
		npuipc_wait(fd, imported, -1, 0, NULL);
		_exit(2);	/* the record never completes before the kill */
	}
	close(event_fd);
	close(sv[1]);	/* a child that fails closes its end: no read hangs */
	EXPECT_EQ(1, read(sv[0], &ready, 1));
	close(sv[0]);
	/* Blocked in the WAIT ioctl, not about to enter it. */
	snprintf(path, sizeof(path), "/proc/%d/syscall", child);
	EXPECT_TRUE(ready == 'r' && blocked_in_ioctl(path));
	EXPECT_EQ(0, kill(child, SIGKILL));
	/* It dies at once: 20 s allows the slowest kernel, within the harness's 30 s. */
	for (i = 0; i < 2000 && waitpid(child, &status, WNOHANG) == 0; i++)
		usleep(10000);
	ASSERT_GT(2000, i) TH_LOG("the child killed in WAIT did not die within 20 s");
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));

	ASSERT_EQ(0, npuipc_release_gate(self->fd, self->gate));
	EXPECT_EQ(0, npuipc_wait(self->fd, event, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
}

/*
 * One thread waits without limit on an event of a file another thread then
 * closes. The wait holds the file (its ioctl has it), so it does not fail:
 * it completes when the record comes, through a notify another file
 * imported. Then the file goes, and everything with it.
 */
TEST_F(lifetime, closing_the_drm_fd_while_another_thread_waits_ends_the_wait_on_its_record)
{
	static struct host_waiter host;
	uint32_t event, gate_import;
	int gate_fd, other;
	pthread_t thread;

	other = npuipc_open_device(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(self->gate),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, self->gate, 0, &gate_fd));
	ASSERT_EQ(0, npuipc_obj_import(other, gate_fd, &gate_import));
	close(gate_fd);

	host = (struct host_waiter){ .fd = self->fd, .handle = event, .ret = 1 };
	ASSERT_EQ(0, pthread_create(&thread, NULL, host_wait, &host));
	while (!atomic_load(&host.tid))
		usleep(1000);
	EXPECT_TRUE(thread_blocked_in_ioctl(atomic_load(&host.tid)));
	/* The mappings hold the file too: drop them with the fd. */
	munmap(self->map_a, self->size);
	munmap(self->map_b, self->size);
	self->map_a = self->map_b = MAP_FAILED;
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	usleep(100000);
	EXPECT_EQ(1, atomic_load(&host.ret));	/* still waiting */

	EXPECT_EQ(0, npuipc_release_gate(other, gate_import));
	EXPECT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(0, atomic_load(&host.ret));
	close(other);
}

/*
 * Copies queued behind a gate hold their buffers: src into dst, then dst
 * into the fixture's b. Every handle, mapping and dma-buf of src and dst
 * goes before the gate opens; the copies still land in b, and the memory
 * returns once they have run.
 */
TEST_F(lifetime, queued_copies_land_after_their_buffers_handles_mappings_and_dma_bufs_go)
{
	int src_dmabuf, dst_dmabuf, status;
	uint32_t src, dst;
	uint8_t *map_src;
	size_t size;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &src));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, BUF_SIZE, NPUIPC_PAGE_CLASS_NORMAL, &dst));
	map_src = npuipc_bo_mmap(self->fd, src, PROT_READ | PROT_WRITE, &size);
	ASSERT_NE(MAP_FAILED, map_src);
	memset(map_src, 0x5a, BUF_SIZE);
	ASSERT_EQ(0, npuipc_bo_export(self->fd, src, 0, BUF_SIZE, 0, &src_dmabuf));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, dst, 0, BUF_SIZE, 0, &dst_dmabuf));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(self->gate),
		npuipc_copy_job(dst, 0, src, 0, BUF_SIZE),
		npuipc_copy_job(self->b, 0, dst, 0, BUF_SIZE) }, 3, NULL));

	EXPECT_EQ(0, npuipc_gem_close(self->fd, src));
	EXPECT_EQ(0, munmap(map_src, size));
	EXPECT_EQ(0, close(src_dmabuf));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, dst));
	EXPECT_EQ(0, close(dst_dmabuf));
	/* Not run yet, and both buffers still held, by the queued copies. */
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_EQ(4 * BUF_SIZE, npuipc_debugfs_value(self->fd, "mem_used"));

	ASSERT_EQ(0, npuipc_release_gate(self->fd, self->gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, BUF_SIZE, 0x5a));
	/* Only the fixture's two buffers are left (the jobs' references go from a worker). */
	EXPECT_EQ(2 * BUF_SIZE, npuipc_debugfs_settles_at(self->fd, "mem_used", 2 * BUF_SIZE));
}

/* ---- threads of one file racing each other ---- */

#define RACE_SLOTS 4
#define RACE_SECONDS 3
/* A slow machine races for longer, until every thread did this many. */
#define RACE_MIN_OPS 51
#define RACE_MAX_SECONDS 120
#define RACE_BUF (64 * 1024)

struct race {
	int fd;
	uint32_t never;	/* a notify no one records: waits on it time out */
	_Atomic uint32_t streams[RACE_SLOTS], buffers[RACE_SLOTS];
	atomic_int stop;
	atomic_int bad_errno, bad_op;	/* the first undocumented result */
};

static unsigned int pick(unsigned int *seed)
{
	return rand_r(seed) % RACE_SLOTS;
}

static void undocumented(struct race *r, int op, int err)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&r->bad_errno, &none, err ? err : 1))
		atomic_store(&r->bad_op, op);
}

enum { OP_SUBMIT = 1, OP_DESTROY, OP_CREATE, OP_WAIT, OP_GEM_CLOSE, OP_BO_CREATE };

/*
 * SUBMIT: a stream or buffer may be gone (-ENOENT), a stream full
 * (-ENOSPC, documented: retry later), or in error (-EIO) after one of the
 * 1 ms notify waits queued now and then timed out; nothing else may fail.
 * Every 64 submits a bounded wait lets the queues drain.
 */
static long race_submit(struct race *r, unsigned int *seed, atomic_long *done)
{
	long ops = 0;

	while (!atomic_load(&r->stop)) {
		uint32_t dst = atomic_load(&r->buffers[pick(seed)]);
		uint32_t src = atomic_load(&r->buffers[pick(seed)]);
		struct drm_npuipc_job job = src == dst ?
			npuipc_fill_job(dst, 0, RACE_BUF, 7) :
			npuipc_copy_job(dst, 0, src, 0, RACE_BUF);
		int ret;

		if (ops % 64 == 63) {
			ret = npuipc_wait(r->fd, atomic_load(&r->streams[pick(seed)]), 100000000LL, 0,
					  NULL);
			if (ret && ret != -ETIME && ret != -ENOENT)
				undocumented(r, OP_WAIT, ret);
		}
		if (rand_r(seed) % 16 == 0) {
			job = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, r->never);
			job.timeout_ns = 1000000;
		}
		ret = npuipc_submit1(r->fd, atomic_load(&r->streams[pick(seed)]), job);
		if (ret && ret != -ENOENT && ret != -ENOSPC && ret != -EIO)
			undocumented(r, OP_SUBMIT, ret);
		atomic_store(done, ++ops);
	}
	return ops;
}

/* Destroy and recreate streams: this thread alone does, so both succeed. */
static long race_destroy(struct race *r, unsigned int *seed, atomic_long *done)
{
	long ops = 0;

	while (!atomic_load(&r->stop)) {
		unsigned int i = pick(seed);
		uint32_t stream;
		int ret = npuipc_obj_destroy(r->fd, atomic_load(&r->streams[i]));

		if (ret)
			undocumented(r, OP_DESTROY, ret);
		ret = npuipc_obj_create(r->fd, NPUIPC_OBJ_STREAM, &stream);
		if (ret)
			undocumented(r, OP_CREATE, ret);
		atomic_store(&r->streams[i], ret ? 0 : stream);
		atomic_store(done, ++ops);
		usleep(rand_r(seed) % 2000);
	}
	return ops;
}

/*
 * WAIT with RECOVER, bounded: done, with status 0, -ETIMEDOUT (a notify
 * wait timed out; recovered now) or -ECANCELED (the stream destroyed while
 * the wait ran); not done in time; or the stream already gone.
 */
static long race_wait(struct race *r, unsigned int *seed, atomic_long *done)
{
	long ops = 0;

	while (!atomic_load(&r->stop)) {
		int status = 0;
		int ret = npuipc_wait(r->fd, atomic_load(&r->streams[pick(seed)]),
				      (rand_r(seed) % 3) * 1000000LL, NPUIPC_WAIT_RECOVER, &status);

		if ((ret && ret != -ETIME && ret != -ENOENT) ||
		    (!ret && status && status != -ECANCELED && status != -ETIMEDOUT))
			undocumented(r, OP_WAIT, ret ? ret : status);
		atomic_store(done, ++ops);
	}
	return ops;
}

/*
 * Close and recreate buffers under the submits: this thread alone does.
 * Queued jobs keep closed buffers alive, so the budget may run out for a
 * while (-ENOMEM, documented): the slot stays empty until a later try.
 */
static long race_gem_close(struct race *r, unsigned int *seed, atomic_long *done)
{
	long ops = 0;

	while (!atomic_load(&r->stop)) {
		unsigned int i = pick(seed);
		uint32_t bo, old = atomic_load(&r->buffers[i]);
		int ret = old ? npuipc_gem_close(r->fd, old) : 0;

		if (ret)
			undocumented(r, OP_GEM_CLOSE, ret);
		ret = npuipc_bo_create(r->fd, RACE_BUF, NPUIPC_PAGE_CLASS_NORMAL, &bo);
		if (ret && ret != -ENOMEM)
			undocumented(r, OP_BO_CREATE, ret);
		atomic_store(&r->buffers[i], ret ? 0 : bo);
		atomic_store(done, ++ops);
		usleep(rand_r(seed) % 2000);
	}
	return ops;
}

struct racer {
	struct race *race;
	long (*fn)(struct race *, unsigned int *, atomic_long *);
	atomic_long done;	/* operations so far, for the test to watch */
	unsigned int seed;
	long ops;
};

static void *run_racer(void *p)
{
	struct racer *t = p;

	t->ops = t->fn(t->race, &t->seed, &t->done);
	return NULL;
}

/* Past the harness's 30 s: on a slow machine the race runs up to 120 s. */
TEST_F_TIMEOUT(lifetime, threads_racing_submit_destroy_wait_recover_and_gem_close_get_only_documented_errnos,
	       RACE_MAX_SECONDS + 60)
{
	long (*fns[])(struct race *, unsigned int *, atomic_long *) = {
		race_submit, race_submit, race_destroy, race_wait, race_gem_close };
	static const char *const names[] = { "submit", "submit", "destroy", "wait", "gem_close" };
	/* Static: an ASSERT leaving this frame must not pull them from under the threads. */
	static struct racer racers[5];
	static struct race r;
	pthread_t threads[5];
	unsigned int i;

	memset(&r, 0, sizeof(r));
	r.fd = self->fd;
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &r.never));

	for (i = 0; i < RACE_SLOTS; i++) {
		uint32_t h;

		ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &h));
		atomic_store(&r.streams[i], h);
		ASSERT_EQ(0, npuipc_bo_create(self->fd, RACE_BUF, NPUIPC_PAGE_CLASS_NORMAL, &h));
		atomic_store(&r.buffers[i], h);
	}
	for (i = 0; i < 5; i++) {
		racers[i] = (struct racer){ .race = &r, .fn = fns[i], .seed = 1000 + i };
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, run_racer, &racers[i]));
	}
	sleep(RACE_SECONDS);
	for (int tenths = 0; tenths < (RACE_MAX_SECONDS - RACE_SECONDS) * 10; tenths++) {
		for (i = 0; i < 5 && atomic_load(&racers[i].done) >= RACE_MIN_OPS; i++)
			;
		if (i == 5)
			break;
		usleep(100000);
	}
	atomic_store(&r.stop, 1);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, pthread_join(threads[i], NULL));
		TH_LOG("%s: %ld operations", names[i], racers[i].ops);
		/* Each thread really raced: far more than a handful each. */
		EXPECT_LE(RACE_MIN_OPS, racers[i].ops) TH_LOG("%s did almost nothing", names[i]);
	}
	EXPECT_EQ(0, atomic_load(&r.bad_errno))
		TH_LOG("operation %d returned %d", atomic_load(&r.bad_op), atomic_load(&r.bad_errno));

	for (i = 0; i < RACE_SLOTS; i++) {
		int status;

		EXPECT_EQ(0, npuipc_wait(self->fd, r.streams[i], 10 * SEC_NS, NPUIPC_WAIT_RECOVER,
					 &status));
		EXPECT_EQ(0, npuipc_obj_destroy(self->fd, r.streams[i]));
		if (r.buffers[i])
			EXPECT_EQ(0, npuipc_gem_close(self->fd, r.buffers[i]));
	}
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, r.never));
}

TEST_HARNESS_MAIN
