// SPDX-License-Identifier: GPL-2.0
/*
 * Streams, jobs, events and notifies: in-order asynchronous execution,
 * fences and sync files, cross-stream and cross-process synchronisation,
 * timeouts, faults (SIGKILL, dead creators, device timeout) and every input
 * SUBMIT, WAIT and the OBJ_* ioctls must refuse.
 */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"
#include "npuipc_vgem_gate.h"

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define SEC_NS 1000000000LL

FIXTURE(stream) {
	int fd;
	uint32_t stream;
	uint32_t a, b;		/* 1 MiB normal buffers */
	uint8_t *map_a, *map_b;
	size_t size;
	char job_timeout_ms[32];	/* restored by the teardown, whatever failed */
};

#define JOB_TIMEOUT_PARAM "/sys/module/npuipc/parameters/job_timeout_ms"

FIXTURE_SETUP(stream)
{
	ASSERT_EQ(0, npuipc_read_file(JOB_TIMEOUT_PARAM, self->job_timeout_ms,
				      sizeof(self->job_timeout_ms)));
	self->map_a = self->map_b = MAP_FAILED;
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->stream));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 1 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &self->a));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 1 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &self->b));
	self->map_a = npuipc_bo_mmap(self->fd, self->a, PROT_READ | PROT_WRITE, &self->size);
	self->map_b = npuipc_bo_mmap(self->fd, self->b, PROT_READ | PROT_WRITE, &self->size);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_NE(MAP_FAILED, self->map_b);
}

FIXTURE_TEARDOWN(stream)
{
	if (self->map_a != MAP_FAILED)
		munmap(self->map_a, self->size);
	if (self->map_b != MAP_FAILED)
		munmap(self->map_b, self->size);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_EQ(0, npuipc_write_file(JOB_TIMEOUT_PARAM, self->job_timeout_ms));
	EXPECT_TRUE(npuipc_device_is_idle(0));
	EXPECT_TRUE(npuipc_device_is_idle(1));
}

/*
 * The leak oracle itself: every kind is counted from its creation to its
 * free. The fixture holds one stream and two buffers.
 */
TEST_F(stream, debugfs_counts_each_kind_of_object_from_creation_to_free)
{
	uint32_t s2, event, notify, imported;
	int event_fd, dmabuf, status;

	EXPECT_EQ(2, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "imports"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "streams"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "events"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "notifies"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "jobs"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "dmabufs"));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "object_files"));

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &s2));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_submit1(self->fd, s2, npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event)));
	ASSERT_EQ(0, npuipc_wait(self->fd, s2, 10 * SEC_NS, 0, &status));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &event_fd));
	/* Read-only: a buffer's whole read-write export imports as itself. */
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->a, 0, self->size, NPUIPC_BO_EXPORT_READ_ONLY,
				      &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	EXPECT_EQ(3, npuipc_debugfs_value(self->fd, "live_objects"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "imports"));
	EXPECT_EQ(2, npuipc_debugfs_value(self->fd, "streams"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "events"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "notifies"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "jobs"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "dmabufs"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "object_files"));

	close(event_fd);
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "object_files"));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "imports"));
	close(dmabuf);
	/* Buffer a keeps its latest export until its handle is closed (below). */
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "dmabufs"));
	/* Done jobs let go of their objects on a work item: polled. */
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, notify));
	EXPECT_EQ(0, npuipc_debugfs_settles_at(self->fd, "notifies", 0));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
	EXPECT_EQ(0, npuipc_debugfs_settles_at(self->fd, "events", 0));
	/* The stream holds its last job's fence until it goes. */
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "jobs"));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, s2));
	EXPECT_EQ(1, npuipc_debugfs_settles_at(self->fd, "streams", 1));
	EXPECT_EQ(0, npuipc_debugfs_settles_at(self->fd, "jobs", 0));
	EXPECT_EQ(2, npuipc_debugfs_value(self->fd, "live_objects"));

	munmap(self->map_a, self->size);
	self->map_a = MAP_FAILED;
	EXPECT_EQ(0, npuipc_gem_close(self->fd, self->a));
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "dmabufs"));
	EXPECT_EQ(1, npuipc_debugfs_value(self->fd, "live_objects"));
}

/*
 * debugfs npuipc_streams shows why a stream does not move: its depth, its
 * head job and what that waits on, and the notify with the parked wait.
 */
TEST_F(stream, debugfs_shows_each_streams_depth_head_job_and_parked_waits)
{
	uint32_t notify, event, releaser;
	char state[4096], line[160];

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(notify), npuipc_fill_job(self->a, 0, 4096, 9) }, 2, NULL));

	ASSERT_EQ(0, npuipc_streams_state(self->fd, state, sizeof(state)));
	TH_LOG("%s", state);
	snprintf(line, sizeof(line), "  stream %u: 2 queued, error 0, claim idle\n"
		 "    head: wait_notify on notify ", self->stream);
	EXPECT_NE(NULL, strstr(state, line));
	/* 60 s in jiffies, back in ms: 60000 and a few. */
	EXPECT_NE(NULL, strstr(state, ", parked, timeout 600"));
	snprintf(line, sizeof(line), "  notify %u (", notify);
	EXPECT_NE(NULL, strstr(state, line));
	EXPECT_NE(NULL, strstr(state, "): not set, 1 parked waits\n"));
	snprintf(line, sizeof(line), "  event %u: never recorded\n", event);
	EXPECT_NE(NULL, strstr(state, line));

	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser,
				    npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser,
				    npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, releaser, 10 * SEC_NS, 0, NULL));
	/*
	 * A job's fence signals before its stream lets go of it (on the
	 * driver's work item): the state settles a moment after the wait.
	 */
	snprintf(line, sizeof(line), "  stream %u: 0 queued, error 0, claim idle\n", self->stream);
	for (int i = 0; i < 1000; i++) {
		ASSERT_EQ(0, npuipc_streams_state(self->fd, state, sizeof(state)));
		if (strstr(state, line))
			break;
		usleep(10000);
	}
	EXPECT_NE(NULL, strstr(state, line)) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "): not set, 0 parked waits\n"));
	snprintf(line, sizeof(line), "  event %u: last record fence npuipc ", event);
	EXPECT_NE(NULL, strstr(state, line));
	EXPECT_NE(NULL, strstr(state, " signalled\n"));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, notify));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, releaser));
}

TEST_F(stream, fill_then_copy_run_in_order)
{
	struct drm_npuipc_job jobs[] = {
		npuipc_fill_job(self->a, 0, 1 * MIB, 0x5a),
		npuipc_copy_job(self->b, 4096, self->a, 0, 64 * KIB),
	};
	int status;

	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_a, 1 * MIB, 0x5a));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 4096, 0));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b + 4096, 64 * KIB, 0x5a));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b + 4096 + 64 * KIB, 1 * MIB - 4096 - 64 * KIB, 0));
}

TEST_F(stream, many_jobs_run_in_submission_order)
{
	struct drm_npuipc_job jobs[NPUIPC_MAX_JOBS_PER_SUBMIT];
	unsigned int i, round;

	/* Each job copies the previous byte forward and refills its source. */
	for (round = 0; round < 4; round++) {
		for (i = 0; i < NPUIPC_MAX_JOBS_PER_SUBMIT; i++) {
			if (i % 2 == 0)
				jobs[i] = npuipc_fill_job(self->a, 0, 4096, (uint8_t)(round * 128 + i / 2));
			else
				jobs[i] = npuipc_copy_job(self->b, (i / 2) * 4096, self->a, 0, 4096);
		}
		ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, NPUIPC_MAX_JOBS_PER_SUBMIT, NULL));
		ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 30 * SEC_NS, 0, NULL));
		for (i = 0; i < NPUIPC_MAX_JOBS_PER_SUBMIT / 2; i++)
			ASSERT_TRUE(npuipc_all_bytes_are(self->map_b + i * 4096, 4096, (uint8_t)(round * 128 + i)));
	}
}

TEST_F(stream, submit_returns_before_the_jobs_run)
{
	struct drm_npuipc_job jobs[2];
	uint32_t notify, other;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &other));
	/* The copy's source is written only once the wait is checked: a copy run early copies zeros. */
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_copy_job(self->a, 0, self->b, 0, 4096);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	usleep(100000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_EQ(0, self->map_a[0]);
	memset(self->map_b, 0x77, 4096);
	__sync_synchronize();

	ASSERT_EQ(0, npuipc_submit1(self->fd, other, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(0x77, self->map_a[0]);
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, other));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, notify));
}

TEST_F(stream, out_fence_is_a_pollable_sync_file)
{
	struct npuipc_vgem_gate gate;
	struct drm_npuipc_job jobs[2];
	struct pollfd pfd = { .events = POLLIN };
	int fence;

	NPUIPC_VGEM_GATE_INIT(&gate);
	jobs[0] = npuipc_vgem_gate_job(&gate);
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 1);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, &fence));
	pfd.fd = fence;
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	EXPECT_EQ(0, npuipc_sync_file_status(fence));
	ASSERT_EQ(0, npuipc_vgem_gate_open(&gate));
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_EQ(1, npuipc_sync_file_status(fence));
	EXPECT_EQ(1, self->map_a[0]);
	close(fence);
	npuipc_vgem_gate_fini(&gate);
}

TEST_F(stream, event_orders_work_across_streams)
{
	uint32_t notify, event, other, releaser;
	struct drm_npuipc_job jobs[3];

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &other));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_fill_job(self->a, 0, 1 * MIB, 0x42);
	jobs[2] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 3, NULL));
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event);
	jobs[1] = npuipc_copy_job(self->b, 0, self->a, 0, 1 * MIB);
	ASSERT_EQ(0, npuipc_submit(self->fd, other, jobs, 2, NULL));
	usleep(50000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, other, 0, 0, NULL));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, other, 10 * SEC_NS, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 1 * MIB, 0x42));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, event));
}

/*
 * A record hands a satisfied wait straight to the head of the waiting
 * stream; the work behind that wait must still run, in order, and the
 * next stream's wait must see it done.
 */
TEST_F(stream, chain_of_streams_released_by_one_record_runs_in_order)
{
	enum { LINKS = 32 };
	uint32_t gate, releaser, streams[LINKS], events[LINKS];
	struct drm_npuipc_job jobs[3];
	int i, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	memset(self->map_a, 0x5a, 4096);
	/* Link i copies page i - 1 of b into page i, after link i - 1 recorded. */
	for (i = 0; i < LINKS; i++) {
		ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &streams[i]));
		ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &events[i]));
		if (i == 0) {
			jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, gate);
			jobs[1] = npuipc_copy_job(self->b, 0, self->a, 0, 4096);
		} else {
			jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, events[i - 1]);
			jobs[1] = npuipc_copy_job(self->b, i * 4096, self->b, (i - 1) * 4096, 4096);
		}
		jobs[2] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, events[i]);
		ASSERT_EQ(0, npuipc_submit(self->fd, streams[i], jobs, 3, NULL));
	}
	usleep(50000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, streams[LINKS - 1], 0, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, LINKS * 4096, 0));

	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, gate)));
	ASSERT_EQ(0, npuipc_wait(self->fd, streams[LINKS - 1], 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, LINKS * 4096, 0x5a));
	for (i = 0; i < LINKS; i++) {
		EXPECT_EQ(0, npuipc_wait(self->fd, streams[i], 0, 0, &status));
		EXPECT_EQ(0, status);
	}
}

/* A hand-off completes a bounded run of records; the worker does the rest. */
TEST_F(stream, every_record_behind_a_released_wait_completes)
{
	enum { RECORDS = 100 };
	struct drm_npuipc_job jobs[RECORDS + 2];
	uint32_t gate, releaser, event;
	int i, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, gate);
	for (i = 1; i <= RECORDS; i++)
		jobs[i] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	jobs[RECORDS + 1] = npuipc_fill_job(self->a, 0, 4096, 9);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, RECORDS + 2, NULL));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, gate)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(9, self->map_a[4095]);
}

static int64_t sync_file_timestamp(int fd)
{
	struct sync_fence_info fence = { 0 };
	struct sync_file_info info = { .num_fences = 1,
				       .sync_fence_info = (uintptr_t)&fence };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) || fence.status != 1)
		return -1;
	return fence.timestamp_ns;
}

/*
 * The stream waits on another stream's fence, so that its release is an
 * npuipc hand-off (the record completes the waiter and the records behind
 * it); that other stream is held by another driver's fence, so that every
 * fence may leave as a sync_file.
 */
TEST_F(stream, fences_signal_in_submission_order_when_a_record_releases_the_stream)
{
	struct npuipc_vgem_gate gate;
	uint32_t early, late, holder;
	int fences[4], held, i;

	NPUIPC_VGEM_GATE_INIT(&gate);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &early));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &late));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &holder));
	ASSERT_EQ(0, npuipc_submit(self->fd, holder,
				   (struct drm_npuipc_job[]){ npuipc_vgem_gate_job(&gate) }, 1, &held));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream,
				   (struct drm_npuipc_job[]){
					npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, held) },
				   1, &fences[0]));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream,
				   (struct drm_npuipc_job[]){ npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, early) },
				   1, &fences[1]));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream,
				   (struct drm_npuipc_job[]){ npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, late) },
				   1, &fences[2]));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream,
				   (struct drm_npuipc_job[]){ npuipc_fill_job(self->a, 0, 1 * MIB, 3) },
				   1, &fences[3]));
	ASSERT_EQ(0, npuipc_vgem_gate_open(&gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	for (i = 0; i < 4; i++)
		ASSERT_LE(0, sync_file_timestamp(fences[i]));
	for (i = 1; i < 4; i++)
		EXPECT_LE(sync_file_timestamp(fences[i - 1]), sync_file_timestamp(fences[i]));
	EXPECT_EQ(3, self->map_a[1 * MIB - 1]);
	for (i = 0; i < 4; i++)
		close(fences[i]);
	close(held);
	npuipc_vgem_gate_fini(&gate);
}

TEST_F(stream, waiting_on_a_never_recorded_event_completes_at_once)
{
	uint32_t event;
	int status, fence;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, NPUIPC_OBJ_EXPORT_SYNC_FILE, &fence));
	EXPECT_EQ(1, npuipc_sync_file_status(fence));
	close(fence);
}

TEST_F(stream, event_wait_takes_the_most_recent_record_as_of_submit)
{
	uint32_t notify, event, waiter, releaser;
	struct drm_npuipc_job jobs[2];

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &waiter));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	/* A completed record, then the waiter waits: complete at once. */
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	ASSERT_EQ(0, npuipc_submit1(self->fd, waiter, npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event)));
	ASSERT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, NULL));
	/* A record stuck behind a notify: a later wait waits for it ... */
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	/* Behind the wait, a copy whose source is written once the wait is checked. */
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event);
	jobs[1] = npuipc_copy_job(self->a, 0, self->b, 0, 4096);
	ASSERT_EQ(0, npuipc_submit(self->fd, waiter, jobs, 2, NULL));
	usleep(50000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, waiter, 0, 0, NULL));
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, event, 0, 0, NULL));
	memset(self->map_b, 0x5c, 4096);
	__sync_synchronize();
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	EXPECT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(0, npuipc_wait(self->fd, event, 10 * SEC_NS, 0, NULL));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_a, 4096, 0x5c));
}

TEST_F(stream, event_fd_polls_readable_when_its_record_completes)
{
	struct pollfd pfd = { .events = POLLIN };
	uint32_t notify, event, releaser;
	struct drm_npuipc_job jobs[2];

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &pfd.fd));
	EXPECT_EQ(1, poll(&pfd, 1, 0));	/* never recorded: complete */
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	close(pfd.fd);
}

TEST_F(stream, one_record_satisfies_one_notify_wait)
{
	uint32_t notify, releaser;
	struct drm_npuipc_job jobs[3];

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	/* The copy's source is written only once the wait is checked: a copy run early copies zeros. */
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[2] = npuipc_copy_job(self->a, 0, self->b, 0, 4096);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 3, NULL));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, releaser, 10 * SEC_NS, 0, NULL));
	usleep(100000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_EQ(0, self->map_a[0]);
	memset(self->map_b, 9, 4096);
	__sync_synchronize();
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(9, self->map_a[0]);
}

TEST_F(stream, record_before_wait_is_kept_and_the_wait_resets_it)
{
	struct pollfd pfd = { .events = POLLIN };
	uint32_t notify;
	int nfd;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, notify, 0, &nfd));
	pfd.fd = nfd;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	close(nfd);
}

TEST_F(stream, reset_notify_drops_a_record_no_wait_consumed)
{
	struct pollfd pfd = { .events = POLLIN };
	struct drm_npuipc_job wait = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, 0);
	uint32_t notify;
	int nfd, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, notify, 0, &nfd));
	pfd.fd = nfd;
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	/* The dropped record no longer satisfies a wait. */
	wait.object = notify;
	wait.timeout_ns = 50 * 1000 * 1000;
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, wait));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 0, NPUIPC_WAIT_RECOVER, &status));
	/* Nor does it lose a later record. */
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	close(nfd);
}

TEST_F(stream, reset_notify_of_an_unset_notify_changes_nothing)
{
	uint32_t notify;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
}

TEST_F(stream, notify_wait_timeout_fails_later_work_until_recovered)
{
	struct drm_npuipc_job wait = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, 0);
	struct drm_npuipc_job jobs[3];
	uint32_t notify, event;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	wait.object = notify;
	wait.timeout_ns = 50 * 1000 * 1000;
	jobs[0] = wait;
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 3);
	jobs[2] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 3, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	EXPECT_EQ(0, self->map_a[0]);
	EXPECT_EQ(-EIO, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->a, 0, 4096, 4)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 0, NPUIPC_WAIT_RECOVER, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->a, 0, 4096, 4)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(4, self->map_a[0]);
}

/*
 * job_timeout_ms is read when a job starts: copies queued behind a gate
 * before it changed run under the new value once the gate opens.
 */
TEST_F(stream, a_new_job_timeout_applies_to_queued_jobs_when_they_start)
{
	uint32_t big_a, big_b, gate;
	int status, pfd;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * MIB, NPUIPC_PAGE_CLASS_HUGE, &big_a));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * MIB, NPUIPC_PAGE_CLASS_HUGE, &big_b));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(gate),
		npuipc_copy_job(big_b, 0, big_a, 0, 64 * MIB), npuipc_copy_job(big_a, 0, big_b, 0, 64 * MIB),
		npuipc_copy_job(big_b, 0, big_a, 0, 64 * MIB), npuipc_copy_job(big_a, 0, big_b, 0, 64 * MIB) },
		5, NULL));
	pfd = open(JOB_TIMEOUT_PARAM, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, pfd);
	ASSERT_EQ(1, write(pfd, "0", 1));
	ASSERT_EQ(0, npuipc_release_gate(self->fd, gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 30 * SEC_NS, 0, &status));
	ASSERT_LT(0, write(pfd, self->job_timeout_ms, strlen(self->job_timeout_ms)));
	close(pfd);
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 0, NPUIPC_WAIT_RECOVER, &status));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_a));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_b));
}

TEST_F(stream, job_running_past_the_device_timeout_fails)
{
	uint32_t big_a, big_b;
	int status, pfd;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * MIB, NPUIPC_PAGE_CLASS_HUGE, &big_a));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * MIB, NPUIPC_PAGE_CLASS_HUGE, &big_b));
	pfd = open(JOB_TIMEOUT_PARAM, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, pfd);
	ASSERT_EQ(1, write(pfd, "0", 1));
	/*
	 * A worker's CPU time moves on at scheduler ticks: 256 MiB of copies
	 * span many ticks on the fastest machine, and the first copy to see
	 * one fails the stream, which leaves the others unrun.
	 */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_copy_job(big_b, 0, big_a, 0, 64 * MIB), npuipc_copy_job(big_a, 0, big_b, 0, 64 * MIB),
		npuipc_copy_job(big_b, 0, big_a, 0, 64 * MIB), npuipc_copy_job(big_a, 0, big_b, 0, 64 * MIB) },
		4, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 30 * SEC_NS, 0, &status));
	ASSERT_LT(0, write(pfd, self->job_timeout_ms, strlen(self->job_timeout_ms)));
	close(pfd);
	EXPECT_EQ(-ETIMEDOUT, status);
	/* Recovered, the stream runs again. */
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 0, NPUIPC_WAIT_RECOVER, &status));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->a, 0, 4096, 8)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_a));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_b));
}

TEST_F(stream, destroying_a_stream_cancels_its_pending_jobs)
{
	struct drm_npuipc_job jobs[3];
	uint32_t notify, doomed, event;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &doomed));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	jobs[0] = npuipc_gate_job(notify);
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 5);
	jobs[2] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, doomed, jobs, 3, NULL));
	ASSERT_EQ(0, npuipc_obj_destroy(self->fd, doomed));
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	EXPECT_EQ(0, self->map_a[0]);
	/* The notify lost its parked waiter: a record now just sets it. */
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
}

TEST_F(stream, sync_file_and_syncobj_waits)
{
	struct drm_syncobj_create signalled = { .flags = DRM_SYNCOBJ_CREATE_SIGNALED };
	struct drm_syncobj_create empty = { 0 };
	struct drm_npuipc_job job;
	int fence, status;

	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->a, 0, 4096, 6) }, 1, &fence));
	job = npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, fence);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, job));
	close(fence);
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &signalled));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream,
				    npuipc_object_job(NPUIPC_JOB_WAIT_SYNCOBJ, signalled.handle)));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &empty));
	EXPECT_EQ(-EINVAL, npuipc_submit1(self->fd, self->stream,
					  npuipc_object_job(NPUIPC_JOB_WAIT_SYNCOBJ, empty.handle)));
	EXPECT_EQ(-ENOENT, npuipc_submit1(self->fd, self->stream,
					  npuipc_object_job(NPUIPC_JOB_WAIT_SYNCOBJ, empty.handle + 100)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(6, self->map_a[0]);
}

/* Puts the sync_file @fence at @point of the timeline syncobj @timeline. */
static int timeline_add(int fd, uint32_t timeline, uint64_t point, int fence)
{
	struct drm_syncobj_create create = { 0 };
	struct drm_syncobj_handle import = { .flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
					     .fd = fence };
	struct drm_syncobj_transfer transfer = { .dst_handle = timeline, .dst_point = point };
	struct drm_syncobj_destroy destroy = { 0 };
	int ret;

	ret = npuipc_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &create);
	if (ret)
		return ret;
	import.handle = transfer.src_handle = destroy.handle = create.handle;
	ret = npuipc_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &import);
	if (!ret)
		ret = npuipc_ioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &transfer);
	npuipc_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &destroy);
	return ret;
}

/*
 * A timeline point chains npuipc fences: when one signals, the chain arms
 * its callback on the next from an irq_work, in hard interrupt context,
 * under that npuipc fence's lock (which lockdep then checks on the debug
 * kernel).
 */
TEST_F(stream, timeline_syncobj_point_chained_over_npuipc_fences_releases_a_stream)
{
	struct drm_syncobj_create timeline = { 0 };
	struct npuipc_vgem_gate gates[2];
	int fences[2], i, status;
	uint32_t waiter;

	for (i = 0; i < 2; i++)
		NPUIPC_VGEM_GATE_INIT(&gates[i]);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &waiter));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &timeline));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
			npuipc_vgem_gate_job(&gates[i]),
			npuipc_fill_job(self->a, i * 4096, 4096, 0x31 + i) }, 2, &fences[i]));
		ASSERT_EQ(0, timeline_add(self->fd, timeline.handle, i + 1, fences[i]));
	}
	ASSERT_EQ(0, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		(struct drm_npuipc_job){ .kind = NPUIPC_JOB_WAIT_SYNCOBJ,
					 .object = timeline.handle, .value = 2 },
		npuipc_copy_job(self->b, 0, self->a, 0, 2 * 4096) }, 2, NULL));

	ASSERT_EQ(0, npuipc_vgem_gate_open(&gates[0]));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = fences[0], .events = POLLIN }, 1, 10000));
	usleep(50000);
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, waiter, 0, 0, NULL));
	ASSERT_EQ(0, npuipc_vgem_gate_open(&gates[1]));
	ASSERT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b, 4096, 0x31));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map_b + 4096, 4096, 0x32));
	for (i = 0; i < 2; i++) {
		close(fences[i]);
		npuipc_vgem_gate_fini(&gates[i]);
	}
}

/*
 * A wait submitted to an idle stream runs in the submitting thread; a
 * record racing it may come while that thread still holds the stream, and
 * must not be lost (the wait would then never complete). 300 rounds, each
 * record released into the submit of its wait. The window is a few
 * instructions wide: without the fix (the direct run kicking the worker
 * when it gives the claim back) this did not strand a wait in one try
 * under TCG; it guards the path, it does not prove the race absent.
 */
TEST_F(stream, a_record_racing_the_direct_submission_of_its_wait_is_never_lost)
{
	uint32_t notify, recorder;
	int go[2], done[2], i, status = -1000;
	char c;
	pid_t child;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &recorder));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		/* Shares the DRM file: records the parent's notify each round. */
		close(go[1]);
		close(done[0]);
		while (read(go[0], &c, 1) == 1) {
			if (npuipc_submit1(self->fd, recorder,
					   npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)) ||
			    write(done[1], "d", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(1, write(go[1], "g", 1));
		ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream,
					    npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
		ASSERT_EQ(1, read(done[0], &c, 1));
		ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, &status))
			TH_LOG("round %d: the wait was stranded", i);
		ASSERT_EQ(0, status);
	}
	close(go[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(done[0]);
}

/* WAIT itself: a timeout that expires, and a negative one (no limit). */
TEST_F(stream, wait_with_an_expiring_timeout_is_etime_and_a_negative_one_waits_until_done)
{
	uint32_t gate, releaser;
	int status = -1000;
	pid_t child;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(gate), npuipc_fill_job(self->a, 0, 4096, 9) }, 2, NULL));
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, 50 * 1000 * 1000, 0, &status));
	EXPECT_EQ(0, self->map_a[0]);

	/* The child shares the DRM file: it opens the gate 200 ms from now. */
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		usleep(200 * 1000);
		_exit(npuipc_submit1(self->fd, releaser,
				     npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, gate)) ? 1 : 0);
	}
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, -1, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(9, self->map_a[0]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A WAIT_EVENT, WAIT_SYNC_FILE or WAIT_SYNCOBJ job whose fence does not
 * signal within its timeout_ns fails with -ETIMEDOUT and puts its stream in
 * error; the fence waited for is left as it was.
 */
TEST_F(stream, wait_jobs_on_an_event_a_sync_file_and_a_syncobj_time_out)
{
	struct drm_syncobj_create create = { 0 };
	struct drm_syncobj_handle import = { .flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE };
	struct npuipc_vgem_gate gate;
	struct drm_npuipc_job waits[3];
	uint32_t event, waiter;
	int fence, status, i;

	NPUIPC_VGEM_GATE_INIT(&gate);
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &waiter));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_vgem_gate_job(&gate), npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2,
				     &fence));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &create));
	import.handle = create.handle;
	import.fd = fence;
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &import));

	waits[0] = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event);
	waits[1] = npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, fence);
	waits[2] = npuipc_object_job(NPUIPC_JOB_WAIT_SYNCOBJ, create.handle);
	for (i = 0; i < 3; i++) {
		waits[i].timeout_ns = 50 * 1000 * 1000;
		ASSERT_EQ(0, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
			waits[i], npuipc_fill_job(self->b, 0, 4096, 1) }, 2, NULL));
		ASSERT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, &status));
		EXPECT_EQ(-ETIMEDOUT, status) TH_LOG("wait job %d", i);
		EXPECT_EQ(0, self->map_b[0]) TH_LOG("wait job %d", i);
		ASSERT_EQ(0, npuipc_wait(self->fd, waiter, 0, NPUIPC_WAIT_RECOVER, &status));
		EXPECT_EQ(-ETIMEDOUT, status);
	}
	EXPECT_EQ(0, npuipc_sync_file_status(fence));
	ASSERT_EQ(0, npuipc_vgem_gate_open(&gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, npuipc_sync_file_status(fence));
	close(fence);
	npuipc_vgem_gate_fini(&gate);
}

/* A timeline point nothing was put at: refused at submit, nothing queued. */
TEST_F(stream, wait_on_a_timeline_point_without_a_fence_is_refused)
{
	struct drm_syncobj_create timeline = { 0 };
	struct drm_npuipc_job jobs[2];
	int fence, status;

	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &timeline));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->a, 0, 4096, 5) }, 1, &fence));
	ASSERT_EQ(0, timeline_add(self->fd, timeline.handle, 1, fence));
	close(fence);
	jobs[0] = (struct drm_npuipc_job){ .kind = NPUIPC_JOB_WAIT_SYNCOBJ,
					   .object = timeline.handle, .value = 2 };
	jobs[1] = npuipc_fill_job(self->b, 0, 4096, 6);
	EXPECT_EQ(-EINVAL, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	jobs[0].value = 1;
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(5, self->map_a[0]);
	EXPECT_EQ(6, self->map_b[0]);
}

/* OBJ_EXPORT and SUBMIT with OUT_FENCE at RLIMIT_NOFILE: -EMFILE, nothing queued. */
TEST_F(stream, fd_returning_ioctls_at_the_fd_limit_fail_with_emfile_and_change_nothing)
{
	uint32_t event;
	int fillers[64], n, fd = -1, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	n = npuipc_fill_fd_table(fillers, 64);
	ASSERT_LT(0, n);
	EXPECT_EQ(-EMFILE, npuipc_obj_export(self->fd, event, 0, &fd));
	EXPECT_EQ(-EMFILE, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->a, 0, 4096, 8) }, 1, &fd));
	EXPECT_EQ(-1, fd);
	/* No ASSERT while the table is full: teardown needs fds. */
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, self->map_a[0]);
	/* debugfs takes an fd to read: counted once the table has room. */
	npuipc_empty_fd_table(fillers, n);
	EXPECT_EQ(0, npuipc_debugfs_value(self->fd, "object_files"));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &fd));
	close(fd);
}

/*
 * The fence export rule: a fence that depends on userspace (behind a
 * notify wait, whatever its timeout) never leaves npuipc as a sync_file.
 */
TEST_F(stream, out_fence_behind_a_notify_wait_is_refused_whatever_its_timeout)
{
	static const uint64_t timeouts[] = { 0, 1, 50 * 1000 * 1000, 61 * SEC_NS };
	struct drm_npuipc_job jobs[2];
	uint32_t notify;
	int fence = -1, status;
	unsigned int i;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 1);
	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		jobs[0].timeout_ns = timeouts[i];
		EXPECT_EQ(-EDEADLK, npuipc_submit(self->fd, self->stream, jobs, 2, &fence))
			TH_LOG("timeout %llu ns", (unsigned long long)timeouts[i]);
	}
	EXPECT_EQ(-1, fence);
	/* Nothing was queued: work submitted now runs at once. */
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->a, 0, 4096, 2)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(2, self->map_a[0]);
}

/* Through an event into another stream, with timeouts on both waits. */
TEST_F(stream, a_timed_notify_wait_reaches_another_streams_fences_through_an_event)
{
	struct drm_npuipc_job wait;
	uint32_t notify, event, waiter, releaser;
	int fence = -1, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &waiter));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(notify), npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	wait = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event);
	wait.timeout_ns = 60 * SEC_NS;
	EXPECT_EQ(-EDEADLK, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		wait, npuipc_fill_job(self->b, 0, 4096, 1) }, 2, &fence));
	EXPECT_EQ(-1, fence);
	ASSERT_EQ(0, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		wait, npuipc_fill_job(self->b, 0, 4096, 1) }, 2, NULL));
	/* Work on the waiting stream's queue behind it is held back too. */
	EXPECT_EQ(-EDEADLK, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->b, 0, 4096, 2) }, 1, &fence));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, waiter, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, self->map_b[0]);
	/* Driver-only work exports. */
	ASSERT_EQ(0, npuipc_submit(self->fd, waiter, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->b, 0, 4096, 3) }, 1, &fence));
	EXPECT_EQ(1, poll(&(struct pollfd){ .fd = fence, .events = POLLIN }, 1, 10000));
	EXPECT_EQ(1, npuipc_sync_file_status(fence));
	close(fence);
}

TEST_F(stream, out_fence_of_later_work_is_refused_until_the_notify_wait_completes)
{
	uint32_t notify, releaser;
	int fence = -1, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
	EXPECT_EQ(-EDEADLK, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->a, 0, 4096, 1) }, 1, &fence));
	/* A timed wait behind it does not make later work exportable. */
	EXPECT_EQ(-EDEADLK, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(notify) }, 1, &fence));
	EXPECT_EQ(-1, fence);
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	/* Signalled, the unbounded wait no longer holds anything back. */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->a, 0, 4096, 3) }, 1, &fence));
	EXPECT_EQ(1, poll(&(struct pollfd){ .fd = fence, .events = POLLIN }, 1, 10000));
	EXPECT_EQ(1, npuipc_sync_file_status(fence));
	EXPECT_EQ(3, self->map_a[0]);
	close(fence);
}

TEST_F(stream, event_record_behind_a_notify_wait_exports_as_an_event_fd_not_a_sync_file)
{
	uint32_t notify, event, timed_event, releaser;
	int fd = -1, status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &timed_event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event),
		npuipc_gate_job(notify),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, timed_event) }, 4, NULL));
	EXPECT_EQ(-EDEADLK, npuipc_obj_export(self->fd, event, NPUIPC_OBJ_EXPORT_SYNC_FILE, &fd));
	EXPECT_EQ(-EDEADLK, npuipc_obj_export(self->fd, timed_event, NPUIPC_OBJ_EXPORT_SYNC_FILE,
					      &fd));
	EXPECT_EQ(-1, fd);
	/* npuipc's own event fd may wait forever, as an eventfd can. */
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &fd));
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 0));
	close(fd);
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, NPUIPC_OBJ_EXPORT_SYNC_FILE, &fd));
	EXPECT_EQ(1, npuipc_sync_file_status(fd));
	close(fd);
}

/*
 * B waits on A's event, recorded behind A's notify wait: B's fences depend
 * on userspace too, whatever the timeouts of either wait.
 */
TEST_F(stream, a_notify_wait_reaches_fences_of_another_process_through_an_event)
{
	int sv[2], status, efd;
	uint32_t notify, event, releaser;
	char ok;
	pid_t child;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int fd = npuipc_open_device(0), in, out = -1, st;
		struct drm_npuipc_job wait;
		uint32_t ev, s, bounded;

		in = npuipc_recv_fd(sv[1]);
		if (fd < 0 || in < 0 || npuipc_obj_import(fd, in, &ev) ||
		    npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &s) ||
		    npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &bounded))
			_exit(1);
		wait = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, ev);
		if (npuipc_submit(fd, s, &wait, 1, &out) != -EDEADLK || out != -1)
			_exit(2);
		if (npuipc_submit(fd, s, &wait, 1, NULL))
			_exit(3);
		/* With a timeout, the wait still waits on A's notify. */
		wait.timeout_ns = 60 * SEC_NS;
		if (npuipc_submit(fd, bounded, &wait, 1, &out) != -EDEADLK || out != -1)
			_exit(5);
		if (write(sv[1], "w", 1) != 1)
			_exit(6);
		if (npuipc_wait(fd, s, 10 * SEC_NS, 0, &st) || st)
			_exit(7);
		/* Once A's record is done, B's work exports again. */
		wait.timeout_ns = 0;
		if (npuipc_submit(fd, bounded, &wait, 1, &out) || out < 0)
			_exit(8);
		if (poll(&(struct pollfd){ .fd = out, .events = POLLIN }, 1, 10000) != 1 ||
		    npuipc_sync_file_status(out) != 1)
			_exit(9);
		_exit(0);
	}
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &efd));
	ASSERT_EQ(0, npuipc_send_fd(sv[0], efd));
	close(efd);
	ASSERT_EQ(1, read(sv[0], &ok, 1));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	close(sv[1]);
}

/*
 * A foreign waiter: a dma-buf holding an npuipc out-fence as its write
 * fence. Its readers wait for the work, which the driver completes by
 * itself once another driver's fence before it signals.
 */
TEST_F(stream, dma_buf_that_imported_an_out_fence_is_released_when_the_work_is_done)
{
	struct dma_buf_import_sync_file import = { .flags = DMA_BUF_SYNC_WRITE };
	struct npuipc_vgem_gate gate;
	struct drm_npuipc_job jobs[2];
	int fence, dmabuf;

	NPUIPC_VGEM_GATE_INIT(&gate);
	jobs[0] = npuipc_vgem_gate_job(&gate);
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 6);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, &fence));
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->a, 0, 4096, 0, &dmabuf));
	import.fd = fence;
	ASSERT_EQ(0, npuipc_ioctl(dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &import));
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = dmabuf, .events = POLLIN }, 1, 0));
	ASSERT_EQ(0, npuipc_vgem_gate_open(&gate));
	EXPECT_EQ(1, poll(&(struct pollfd){ .fd = dmabuf, .events = POLLIN }, 1, 10000));
	EXPECT_EQ(1, npuipc_sync_file_status(fence));
	EXPECT_EQ(6, self->map_a[0]);
	close(dmabuf);
	close(fence);
	npuipc_vgem_gate_fini(&gate);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* SIGALRM after @first_us, then every @every_us (0: once), with or without SA_RESTART. */
static void alarm_in(long first_us, long every_us, int flags)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = flags };
	struct itimerval it = {
		.it_value = { .tv_sec = first_us / 1000000, .tv_usec = first_us % 1000000 },
		.it_interval = { .tv_sec = every_us / 1000000, .tv_usec = every_us % 1000000 },
	};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

TEST_F(stream, wait_interrupted_without_sa_restart_fails_with_eintr_and_keeps_the_rest_of_its_timeout)
{
	struct drm_npuipc_wait args = { .timeout_ns = 10 * SEC_NS };
	uint32_t notify, releaser;
	int ret, err;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
	args.handle = self->stream;
	/* Again every 100 ms: one that fired before the call cannot be the only one. */
	alarm_in(100000, 100000, 0);
	ret = ioctl(self->fd, DRM_IOCTL_NPUIPC_WAIT, &args);
	err = errno;
	alarm_in(0, 0, 0);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	EXPECT_LT(0, args.timeout_ns);
	EXPECT_GT(10 * SEC_NS, args.timeout_ns);
	EXPECT_EQ(0, args.status);
	/* The largest timeout neither overflows nor returns at once. */
	args.timeout_ns = INT64_MAX;
	alarm_in(100000, 100000, 0);
	ret = ioctl(self->fd, DRM_IOCTL_NPUIPC_WAIT, &args);
	err = errno;
	alarm_in(0, 0, 0);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	EXPECT_LT(0, args.timeout_ns);
	EXPECT_GT(INT64_MAX, args.timeout_ns);
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, INT64_MAX, 0, NULL));
}

/*
 * With SA_RESTART the kernel restarts the interrupted call: with what was
 * left of its timeout, so that signals every 20 ms cannot keep a 300 ms
 * wait going. (Restarted with its full timeout, it would never end.)
 */
TEST_F(stream, wait_restarted_after_signals_keeps_its_first_deadline)
{
	struct drm_npuipc_wait args = { .timeout_ns = 300 * 1000 * 1000 };
	uint32_t notify, releaser;
	struct timespec start;
	double took;
	int ret, err;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify)));
	args.handle = self->stream;
	clock_gettime(CLOCK_MONOTONIC, &start);
	alarm_in(20000, 20000, SA_RESTART);
	ret = ioctl(self->fd, DRM_IOCTL_NPUIPC_WAIT, &args);
	err = errno;
	alarm_in(0, 0, 0);
	took = seconds_since(&start);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ETIME, err);
	EXPECT_GT(10.0, took);
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
}

/* Destroyed mid-copy, a stream stops within a MiB: the copies left are cancelled. */
TEST_F(stream, destroying_a_stream_during_long_copies_cancels_them)
{
	struct drm_npuipc_job jobs[34];
	uint32_t big_a, big_b, doomed, gate, event;
	int started, status, i;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * MIB, NPUIPC_PAGE_CLASS_HUGE, &big_a));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * MIB, NPUIPC_PAGE_CLASS_HUGE, &big_b));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &doomed));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit(self->fd, doomed, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->a, 0, 4096, 1) }, 1, &started));
	/*
	 * 2 GiB of copying, started once the fill is done; halfway, a gate
	 * never opened, so that no machine is fast enough to finish first.
	 */
	for (i = 0; i < 33; i++)
		jobs[i] = npuipc_copy_job(i % 2 ? big_a : big_b, 0, i % 2 ? big_b : big_a, 0, 64 * MIB);
	jobs[16] = npuipc_gate_job(gate);
	jobs[33] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, doomed, jobs, 34, NULL));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = started, .events = POLLIN }, 1, 10000));
	ASSERT_EQ(0, npuipc_obj_destroy(self->fd, doomed));
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	close(started);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_a));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_b));
}

TEST_F(stream, copy_between_devices_through_a_peer_import)
{
	uint32_t remote_stream, remote_bo, imported;
	int peer = npuipc_open_device(1), dmabuf, status;
	uint8_t *remote;
	size_t size;

	if (peer < 0)
		SKIP(return, "needs two npuipc devices");
	ASSERT_EQ(0, npuipc_bo_create(peer, 1 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &remote_bo));
	ASSERT_EQ(0, npuipc_obj_create(peer, NPUIPC_OBJ_STREAM, &remote_stream));
	memset(self->map_a, 0x31, 1 * MIB);
	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->a, 0, 1 * MIB, NPUIPC_BO_EXPORT_READ_ONLY, &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(peer, dmabuf, NPUIPC_BO_IMPORT_PEER_ACCESS, &imported));
	ASSERT_EQ(0, npuipc_submit1(peer, remote_stream, npuipc_copy_job(remote_bo, 0, imported, 0, 1 * MIB)));
	/* A read-only import is never a copy target. */
	EXPECT_EQ(-EACCES, npuipc_submit1(peer, remote_stream, npuipc_copy_job(imported, 0, remote_bo, 0, 4096)));
	ASSERT_EQ(0, npuipc_wait(peer, remote_stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	remote = npuipc_bo_mmap(peer, remote_bo, PROT_READ, &size);
	ASSERT_NE(MAP_FAILED, remote);
	EXPECT_TRUE(npuipc_all_bytes_are(remote, size, 0x31));
	munmap(remote, size);
	close(dmabuf);
	close(peer);
}

/*
 * Scenario two of the seed: A records an event, B waits for it on its own
 * stream, with the event passed as an fd over a Unix socket.
 */
TEST_F(stream, event_shared_with_another_process)
{
	int sv[2], status, efd;
	uint32_t notify, event, releaser;
	struct drm_npuipc_job jobs[3];
	char ok;
	pid_t child;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		/* B, on device 1 if there is one */
		int fd = npuipc_open_device(1), in, st;
		uint32_t ev, s;

		if (fd < 0)
			fd = npuipc_open_device(0);
		in = npuipc_recv_fd(sv[1]);
		if (in < 0 || npuipc_obj_import(fd, in, &ev) || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &s))
			_exit(1);
		if (read(sv[1], &ok, 1) != 1)	/* A has submitted its record */
			_exit(2);
		if (npuipc_submit1(fd, s, npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, ev)))
			_exit(3);
		if (npuipc_wait(fd, s, 0, 0, NULL) != -ETIME)
			_exit(4);	/* A's record is held back: B must wait */
		if (write(sv[1], "w", 1) != 1)
			_exit(5);
		if (npuipc_wait(fd, s, 10 * SEC_NS, 0, &st) || st)
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &efd));
	ASSERT_EQ(0, npuipc_send_fd(sv[0], efd));
	close(efd);
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 1);
	jobs[2] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 3, NULL));
	ASSERT_EQ(1, write(sv[0], "s", 1));
	ASSERT_EQ(1, read(sv[0], &ok, 1));	/* B is waiting */
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &releaser));
	ASSERT_EQ(0, npuipc_submit1(self->fd, releaser, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	close(sv[1]);
}

/*
 * Scenario three: A creates and owns a notify and waits on it; B imports
 * it, may record but not wait, and its record releases A's stream.
 */
TEST_F(stream, notify_shared_with_another_process)
{
	int sv[2], status, nfd;
	uint32_t notify;
	struct drm_npuipc_job jobs[2];
	pid_t child;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int fd = npuipc_open_device(1), in;
		uint32_t n, s;
		char go;

		if (fd < 0)
			fd = npuipc_open_device(0);
		in = npuipc_recv_fd(sv[1]);
		if (in < 0 || npuipc_obj_import(fd, in, &n) || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &s))
			_exit(1);
		if (npuipc_submit1(fd, s, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, n)) != -EPERM)
			_exit(2);	/* only the owner waits */
		if (read(sv[1], &go, 1) != 1)
			_exit(3);
		if (npuipc_submit1(fd, s, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, n)))
			_exit(4);
		if (npuipc_wait(fd, s, 10 * SEC_NS, 0, NULL))
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(0, npuipc_obj_export(self->fd, notify, 0, &nfd));
	ASSERT_EQ(0, npuipc_send_fd(sv[0], nfd));
	close(nfd);
	jobs[0] = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);
	jobs[1] = npuipc_fill_job(self->a, 0, 4096, 0x66);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	ASSERT_EQ(1, write(sv[0], "g", 1));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(0x66, self->map_a[0]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	close(sv[1]);
}

/*
 * A process killed with jobs queued: every fence signals, with an error
 * where cancelled, and whoever waits on its event gets an error, not a hang.
 */
TEST_F(stream, killed_process_cancels_its_jobs_and_waiters_get_an_error)
{
	struct npuipc_vgem_gate gate;
	int sv[2], status, fence, efd;
	uint32_t event;
	pid_t child;

	/* The parent's: the child's death must not open it. */
	NPUIPC_VGEM_GATE_INIT(&gate);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int fd = npuipc_open_device(0), out, ev_fd;
		struct drm_npuipc_job jobs[3];
		uint32_t s, ev, bo;

		if (fd < 0 || npuipc_obj_create(fd, NPUIPC_OBJ_STREAM, &s) ||
		    npuipc_obj_create(fd, NPUIPC_OBJ_EVENT, &ev) ||
		    npuipc_bo_create(fd, 1 * MIB, NPUIPC_PAGE_CLASS_NORMAL, &bo))
			_exit(1);
		jobs[0] = npuipc_vgem_gate_job(&gate);	/* never opened */
		jobs[1] = npuipc_fill_job(bo, 0, 1 * MIB, 1);
		jobs[2] = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, ev);
		if (npuipc_submit(fd, s, jobs, 3, &out) || npuipc_obj_export(fd, ev, 0, &ev_fd))
			_exit(2);
		if (npuipc_send_fd(sv[1], out) || npuipc_send_fd(sv[1], ev_fd))
			_exit(3);
		pause();
		_exit(4);
	}
	fence = npuipc_recv_fd(sv[0]);
	efd = npuipc_recv_fd(sv[0]);
	ASSERT_LE(0, fence);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, npuipc_obj_import(self->fd, efd, &event));
	close(efd);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event)));
	EXPECT_EQ(0, npuipc_sync_file_status(fence));

	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(-ECANCELED, npuipc_sync_file_status(fence));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	EXPECT_EQ(0, npuipc_sync_file_status(gate.sync_file));	/* still closed */
	close(fence);
	close(sv[0]);
	close(sv[1]);
	npuipc_vgem_gate_fini(&gate);
}

TEST_F(stream, notify_fd_hangs_up_when_its_owner_goes)
{
	struct pollfd pfd = { .events = POLLIN };
	int sv[2], status;
	pid_t child;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int fd = npuipc_open_device(0), out;
		uint32_t n;

		if (fd < 0 || npuipc_obj_create(fd, NPUIPC_OBJ_NOTIFY, &n) ||
		    npuipc_obj_export(fd, n, 0, &out) || npuipc_send_fd(sv[1], out))
			_exit(1);
		pause();
		_exit(2);
	}
	pfd.fd = npuipc_recv_fd(sv[0]);
	ASSERT_LE(0, pfd.fd);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_TRUE(pfd.revents & POLLHUP);
	close(pfd.fd);
	close(sv[0]);
	close(sv[1]);
}

/* SUBMIT: every refused input, each leaving nothing queued. */
static void expect_submit_rejected(struct __test_metadata *_metadata, FIXTURE_DATA(stream) *self,
				   struct drm_npuipc_job job, int err)
{
	struct drm_npuipc_job jobs[2] = { npuipc_fill_job(self->a, 0, 4096, 0xee), job };

	EXPECT_EQ(err, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	/* The valid first job was not queued either. */
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_EQ(0, self->map_a[0]);
}

TEST_F(stream, submit_rejects_unknown_stream)
{
	struct drm_npuipc_job job = npuipc_fill_job(self->a, 0, 4096, 1);

	EXPECT_EQ(-ENOENT, npuipc_submit(self->fd, self->stream + 100, &job, 1, NULL));
	EXPECT_EQ(-ENOENT, npuipc_submit(self->fd, 0, &job, 1, NULL));
}

TEST_F(stream, submit_rejects_a_handle_that_is_not_a_stream)
{
	struct drm_npuipc_job job = npuipc_fill_job(self->a, 0, 4096, 1);
	uint32_t event;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	EXPECT_EQ(-EINVAL, npuipc_submit(self->fd, event, &job, 1, NULL));
}

TEST_F(stream, submit_rejects_unknown_job_kind)
{
	struct drm_npuipc_job job = { .kind = 99 };

	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job.kind = 0;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job.kind = NPUIPC_JOB_WAIT_VALUE + 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
}

TEST_F(stream, submit_rejects_out_of_bounds_ranges)
{
	expect_submit_rejected(_metadata, self, npuipc_fill_job(self->b, 1 * MIB - 4096, 8192, 1), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_fill_job(self->b, 2 * MIB, 1, 1), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_copy_job(self->b, 0, self->a, 1, 1 * MIB), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_copy_job(self->b, UINT64_MAX - 10, self->a, 0, 20), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_fill_job(self->b, 0, 0, 1), -EINVAL);
}

TEST_F(stream, submit_rejects_overlapping_copy_within_one_buffer)
{
	expect_submit_rejected(_metadata, self, npuipc_copy_job(self->b, 4096, self->b, 0, 8192), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_copy_job(self->b, 0, self->b, 4095, 4096), -EINVAL);
}

TEST_F(stream, submit_rejects_unknown_buffer_handles)
{
	expect_submit_rejected(_metadata, self, npuipc_fill_job(self->b + 100, 0, 4096, 1), -ENOENT);
	expect_submit_rejected(_metadata, self, npuipc_copy_job(self->b, 0, self->b + 100, 0, 4096), -ENOENT);
}

TEST_F(stream, submit_rejects_a_read_only_copy_target)
{
	uint32_t imported;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->b, 0, 1 * MIB, NPUIPC_BO_EXPORT_READ_ONLY, &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &imported));
	expect_submit_rejected(_metadata, self, npuipc_copy_job(imported, 0, self->a, 0, 4096), -EACCES);
	expect_submit_rejected(_metadata, self, npuipc_fill_job(imported, 0, 4096, 1), -EACCES);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, imported));
	close(dmabuf);
}

TEST_F(stream, submit_rejects_waits_and_resets_on_a_notify_it_does_not_own)
{
	int other = npuipc_open_device(0), nfd;
	uint32_t notify, imported;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, npuipc_obj_create(other, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_export(other, notify, 0, &nfd));
	ASSERT_EQ(0, npuipc_obj_import(self->fd, nfd, &imported));
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, imported), -EPERM);
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, imported), -EPERM);
	/* Recording is allowed. */
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, imported)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	close(nfd);
	close(other);
}

TEST_F(stream, submit_rejects_unknown_objects_and_bad_fds)
{
	int pipefd[2];

	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, 999), -ENOENT);
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, self->stream), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, 999), -ENOENT);
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, 999), -ENOENT);
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, self->stream), -EINVAL);
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, 999), -EBADF);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	expect_submit_rejected(_metadata, self, npuipc_object_job(NPUIPC_JOB_WAIT_SYNC_FILE, pipefd[0]), -EINVAL);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST_F(stream, submit_rejects_nonzero_unused_fields)
{
	struct drm_npuipc_job job;
	uint32_t notify, event;
	int status;

	/* Objects of the right kind: only the unused field is wrong. */
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));

	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.flags = NPUIPC_FILL_U32 << 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_copy_job(self->b, 0, self->b, 8192, 4096);
	job.flags = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	job.flags = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.pad = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.src = self->a;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.value = 256;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.timeout_ns = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.src_offset = 4096;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->b, 0, 4096, 1);
	job.object = event;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_copy_job(self->b, 0, self->a, 0, 4096);
	job.object = event;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_copy_job(self->b, 0, self->a, 0, 4096);
	job.value = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_copy_job(self->b, 0, self->a, 0, 4096);
	job.timeout_ns = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	job.dst = self->a;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event);
	job.dst_offset = 4096;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify);
	job.timeout_ns = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, notify);
	job.timeout_ns = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, notify);
	job.value = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	job = npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event);
	job.size = 1;
	expect_submit_rejected(_metadata, self, job, -EINVAL);
	/* The same jobs with those fields zero are taken. */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->b, 0, 4096, 1),
		npuipc_copy_job(self->b, 0, self->a, 0, 4096),
		npuipc_object_job(NPUIPC_JOB_RECORD_NOTIFY, notify),
		npuipc_object_job(NPUIPC_JOB_RESET_NOTIFY, notify),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event),
		npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event) }, 6, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
}

TEST_F(stream, submit_rejects_bad_counts_sizes_flags_and_padding)
{
	struct drm_npuipc_job job = npuipc_fill_job(self->a, 0, 4096, 1);
	struct drm_npuipc_submit args = {
		.stream = self->stream, .jobs = (uintptr_t)&job, .job_count = 1,
		.job_size = sizeof(job),
	};
	struct drm_npuipc_submit bad;
	unsigned int bit;

	bad = args;
	bad.job_count = 0;
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	bad = args;
	bad.job_count = NPUIPC_MAX_JOBS_PER_SUBMIT + 1;
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	bad = args;
	bad.job_size = sizeof(job) - 8;
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	bad = args;
	bad.pad = 1;
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	bad = args;
	bad.out_fence_fd = 1;
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	bad = args;
	bad.jobs = 16;
	NPUIPC_EXPECT_REFUSED(-EFAULT, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	for (bit = 0; bit < 32; bit++) {
		if (NPUIPC_SUBMIT_FLAGS_VALID & (1U << bit))
			continue;
		bad = args;
		bad.flags = 1U << bit;
		NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_SUBMIT, &bad);
	}
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_EQ(0, self->map_a[0]);
}

/* OBJ_* and WAIT: every refused input. */
TEST_F(stream, obj_create_rejects_unknown_type_flags_padding_and_out_fields)
{
	struct drm_npuipc_obj_create args;
	unsigned int bit;

	args = (struct drm_npuipc_obj_create){ .type = 0 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);
	args = (struct drm_npuipc_obj_create){ .type = 4 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);
	args = (struct drm_npuipc_obj_create){ .type = NPUIPC_OBJ_EVENT, .pad = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);
	args = (struct drm_npuipc_obj_create){ .type = NPUIPC_OBJ_EVENT, .handle = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);
	for (bit = 0; bit < 32; bit++) {
		args = (struct drm_npuipc_obj_create){ .type = NPUIPC_OBJ_EVENT, .flags = 1U << bit };
		NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_CREATE, &args);
	}
}

TEST_F(stream, obj_destroy_rejects_unknown_handles_and_flags)
{
	struct drm_npuipc_obj_destroy args = { .handle = self->stream, .flags = 1 };

	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_DESTROY, &args);
	EXPECT_EQ(-ENOENT, npuipc_obj_destroy(self->fd, self->stream + 100));
	EXPECT_EQ(-ENOENT, npuipc_obj_destroy(self->fd, 0));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, self->stream));
	EXPECT_EQ(-ENOENT, npuipc_obj_destroy(self->fd, self->stream));
}

TEST_F(stream, obj_export_rejects_streams_bad_flags_and_out_fields)
{
	struct drm_npuipc_obj_export args;
	uint32_t notify;
	int fd;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	EXPECT_EQ(-EINVAL, npuipc_obj_export(self->fd, self->stream, 0, &fd));
	EXPECT_EQ(-EINVAL, npuipc_obj_export(self->fd, notify, NPUIPC_OBJ_EXPORT_SYNC_FILE, &fd));
	EXPECT_EQ(-EINVAL, npuipc_obj_export(self->fd, notify, 2, &fd));
	EXPECT_EQ(-ENOENT, npuipc_obj_export(self->fd, notify + 100, 0, &fd));
	args = (struct drm_npuipc_obj_export){ .handle = notify, .pad = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_EXPORT, &args);
	args = (struct drm_npuipc_obj_export){ .handle = notify, .fd = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_EXPORT, &args);
}

TEST_F(stream, obj_import_rejects_foreign_fds_bad_fds_and_out_fields)
{
	struct drm_npuipc_obj_import args;
	uint32_t event, handle;
	int fence, efd;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, NPUIPC_OBJ_EXPORT_SYNC_FILE, &fence));
	EXPECT_EQ(-EINVAL, npuipc_obj_import(self->fd, fence, &handle));	/* a sync_file */
	EXPECT_EQ(-EINVAL, npuipc_obj_import(self->fd, self->fd, &handle));
	EXPECT_EQ(-EBADF, npuipc_obj_import(self->fd, -1, &handle));
	close(fence);
	EXPECT_EQ(-EBADF, npuipc_obj_import(self->fd, fence, &handle));
	ASSERT_EQ(0, npuipc_obj_export(self->fd, event, 0, &efd));
	args = (struct drm_npuipc_obj_import){ .fd = efd, .flags = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args);
	args = (struct drm_npuipc_obj_import){ .fd = efd, .handle = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args);
	args = (struct drm_npuipc_obj_import){ .fd = efd, .type = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args);
	args = (struct drm_npuipc_obj_import){ .fd = efd };
	EXPECT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args));
	EXPECT_EQ(NPUIPC_OBJ_EVENT, args.type);
	close(efd);
}

TEST_F(stream, wait_rejects_notifies_bad_flags_a_set_status_and_unknown_handles)
{
	struct drm_npuipc_wait args;
	uint32_t notify, event;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	EXPECT_EQ(-EINVAL, npuipc_wait(self->fd, notify, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, npuipc_wait(self->fd, event, 0, NPUIPC_WAIT_RECOVER, NULL));
	EXPECT_EQ(-EINVAL, npuipc_wait(self->fd, self->stream, 0, 2, NULL));
	EXPECT_EQ(-ENOENT, npuipc_wait(self->fd, 999, 0, 0, NULL));
	/* Its pad of old: ignored on entry, and written (0, a healthy stream). */
	args = (struct drm_npuipc_wait){ .handle = self->stream, .failed_job = 1 };
	EXPECT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_WAIT, &args));
	EXPECT_EQ(0, args.failed_job);
	args = (struct drm_npuipc_wait){ .handle = self->stream, .status = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_WAIT, &args);
}

TEST(uapi_stream_structures_are_padded_to_8_bytes)
{
	EXPECT_EQ(16, sizeof(struct drm_npuipc_obj_create));
	EXPECT_EQ(8, sizeof(struct drm_npuipc_obj_destroy));
	EXPECT_EQ(16, sizeof(struct drm_npuipc_obj_export));
	EXPECT_EQ(16, sizeof(struct drm_npuipc_obj_import));
	EXPECT_EQ(64, sizeof(struct drm_npuipc_job));
	EXPECT_EQ(32, sizeof(struct drm_npuipc_submit));
	EXPECT_EQ(24, sizeof(struct drm_npuipc_wait));
}

TEST_HARNESS_MAIN
