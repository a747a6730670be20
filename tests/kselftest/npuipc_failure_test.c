// SPDX-License-Identifier: GPL-2.0
/*
 * What a stream does after a failed job (STREAM_SET_PARAM's failure mode),
 * which job WAIT names as the failed one, and STREAM_ABORT: the jobs it
 * cancels, the stream running again afterwards, and every input both
 * ioctls refuse.
 */
#include <stdint.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define SEC_NS 1000000000LL
#define SHORT_TIMEOUT_NS (50 * 1000 * 1000ULL)

FIXTURE(failure) {
	int fd;
	uint32_t stream;
	uint32_t buf;		/* 64 KiB, mapped */
	uint8_t *map;
	size_t size;
};

FIXTURE_SETUP(failure)
{
	self->map = MAP_FAILED;
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->stream));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * 1024, NPUIPC_PAGE_CLASS_NORMAL, &self->buf));
	self->map = npuipc_bo_mmap(self->fd, self->buf, PROT_READ | PROT_WRITE, &self->size);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(failure)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->size);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

static int set_param(int fd, uint32_t stream, uint32_t param, uint64_t value)
{
	struct drm_npuipc_stream_set_param args = { .stream = stream, .param = param,
						    .value = value };

	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
}

static int abort_stream(int fd, uint32_t stream)
{
	struct drm_npuipc_stream_abort args = { .stream = stream };

	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_STREAM_ABORT, &args);
}

/* WAIT on @handle: -errno; the out fields in *@out. */
static int wait_out(int fd, uint32_t handle, int64_t timeout_ns, uint32_t flags,
		    struct drm_npuipc_wait *out)
{
	*out = (struct drm_npuipc_wait){ .handle = handle, .flags = flags, .timeout_ns = timeout_ns };
	return npuipc_ioctl(fd, DRM_IOCTL_NPUIPC_WAIT, out);
}

/* A notify wait that times out after SHORT_TIMEOUT_NS: a job that fails. */
static struct drm_npuipc_job failing_job(uint32_t notify)
{
	struct drm_npuipc_job job = npuipc_object_job(NPUIPC_JOB_WAIT_NOTIFY, notify);

	job.timeout_ns = SHORT_TIMEOUT_NS;
	return job;
}

/*
 * Queues a fill and a record behind a gate that stays closed, aborts the
 * stream, and checks that neither ran and that no error is left to report;
 * the gate's notify in *@gate.
 */
static void abort_a_gated_fill(struct __test_metadata *_metadata, FIXTURE_DATA(failure) *self,
			       uint32_t *gate)
{
	struct drm_npuipc_wait out;
	uint32_t event;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_gate_job(*gate), npuipc_fill_job(self->buf, 0, 4096, 9),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 3, NULL));
	ASSERT_EQ(0, abort_stream(self->fd, self->stream));
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 0, 0, &out));
	EXPECT_EQ(0, out.status);
	EXPECT_EQ(0, out.failed_job);
}

TEST_F(failure, a_stream_that_continues_runs_the_jobs_behind_a_failure_and_takes_new_ones)
{
	struct drm_npuipc_wait out;
	uint32_t notify, event;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, set_param(self->fd, self->stream, NPUIPC_STREAM_PARAM_FAILURE_MODE,
			       NPUIPC_FAILURE_CONTINUE));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_fill_job(self->buf, 0, 4096, 1), failing_job(notify),
		npuipc_fill_job(self->buf, 0, 4096, 2),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 4, NULL));
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 10 * SEC_NS, 0, &out));
	EXPECT_EQ(-ETIMEDOUT, out.status);
	EXPECT_EQ(2, out.failed_job);
	/* The jobs behind it ran, and new ones are taken before any recovery. */
	EXPECT_EQ(2, self->map[0]);
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->buf, 0, 4096, 3)));
	/* The error is reported until a recovery clears it, then no more. */
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 10 * SEC_NS, NPUIPC_WAIT_RECOVER, &out));
	EXPECT_EQ(-ETIMEDOUT, out.status);
	EXPECT_EQ(2, out.failed_job);
	EXPECT_EQ(3, self->map[0]);
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 0, 0, &out));
	EXPECT_EQ(0, out.status);
	EXPECT_EQ(0, out.failed_job);
}

TEST_F(failure, a_stream_that_continues_reports_its_first_failure_until_recovered)
{
	struct drm_npuipc_wait out;
	uint32_t notify;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, set_param(self->fd, self->stream, NPUIPC_STREAM_PARAM_FAILURE_MODE,
			       NPUIPC_FAILURE_CONTINUE));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		failing_job(notify), npuipc_fill_job(self->buf, 0, 4096, 7), failing_job(notify) },
		3, NULL));
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 10 * SEC_NS, NPUIPC_WAIT_RECOVER, &out));
	EXPECT_EQ(-ETIMEDOUT, out.status);
	EXPECT_EQ(1, out.failed_job);
	EXPECT_EQ(7, self->map[0]);
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 0, 0, &out));
	EXPECT_EQ(0, out.status);
}

TEST_F(failure, a_stream_stops_at_its_first_failure_by_default_and_names_the_failed_job)
{
	struct drm_npuipc_wait out;
	uint32_t notify;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->buf, 0, 4096, 1)));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		failing_job(notify), npuipc_fill_job(self->buf, 0, 4096, 2) }, 2, NULL));
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 10 * SEC_NS, 0, &out));
	EXPECT_EQ(-ETIMEDOUT, out.status);
	EXPECT_EQ(2, out.failed_job);
	EXPECT_EQ(1, self->map[0]);
	EXPECT_EQ(-EIO, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->buf, 0, 4096, 3)));
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 0, NPUIPC_WAIT_RECOVER, &out));
	EXPECT_EQ(-ETIMEDOUT, out.status);
	EXPECT_EQ(2, out.failed_job);
}

TEST_F(failure, switched_back_to_stop_a_stream_halts_at_its_next_failure)
{
	uint32_t notify;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, set_param(self->fd, self->stream, NPUIPC_STREAM_PARAM_FAILURE_MODE,
			       NPUIPC_FAILURE_CONTINUE));
	ASSERT_EQ(0, set_param(self->fd, self->stream, NPUIPC_STREAM_PARAM_FAILURE_MODE,
			       NPUIPC_FAILURE_STOP));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		failing_job(notify), npuipc_fill_job(self->buf, 0, 4096, 5) }, 2, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, NPUIPC_WAIT_RECOVER, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_EQ(0, self->map[0]);
}

TEST_F(failure, abort_cancels_every_queued_job_and_the_stream_runs_again)
{
	uint32_t gate;
	int status;

	abort_a_gated_fill(_metadata, self, &gate);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->buf, 0, 4096, 4)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(4, self->map[0]);
	/* The gate lost its parked waiter: a record now just sets it. */
	ASSERT_EQ(0, npuipc_release_gate(self->fd, gate));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_gate_job(gate)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
}

/*
 * A head waiting for another stream's record stops waiting: the record,
 * made later, completes its own stream and touches nothing of the aborted one.
 */
TEST_F(failure, abort_stops_a_wait_for_another_streams_record)
{
	uint32_t recorder, gate, event;
	int status;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &recorder));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit(self->fd, recorder, (struct drm_npuipc_job[]){
		npuipc_gate_job(gate), npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 2, NULL));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_object_job(NPUIPC_JOB_WAIT_EVENT, event),
		npuipc_fill_job(self->buf, 0, 4096, 6) }, 2, NULL));
	ASSERT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	ASSERT_EQ(0, abort_stream(self->fd, self->stream));
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(0, npuipc_release_gate(self->fd, gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, recorder, 10 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 0, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, recorder));
}

TEST_F(failure, abort_clears_an_unreported_failure_and_of_an_idle_stream_changes_nothing)
{
	struct drm_npuipc_wait out;
	uint32_t notify;

	ASSERT_EQ(0, abort_stream(self->fd, self->stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, failing_job(notify)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	ASSERT_EQ(0, abort_stream(self->fd, self->stream));
	ASSERT_EQ(0, wait_out(self->fd, self->stream, 0, NPUIPC_WAIT_RECOVER, &out));
	EXPECT_EQ(0, out.status);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_fill_job(self->buf, 0, 4096, 2)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, 0, NULL));
	EXPECT_EQ(2, self->map[0]);
}

/* A stream that continues after failures is aborted all the same. */
TEST_F(failure, abort_of_a_stream_that_continues_cancels_its_queued_jobs_too)
{
	uint32_t gate;
	int status;

	ASSERT_EQ(0, set_param(self->fd, self->stream, NPUIPC_STREAM_PARAM_FAILURE_MODE,
			       NPUIPC_FAILURE_CONTINUE));
	abort_a_gated_fill(_metadata, self, &gate);
	/* Still continuing: a failure does not halt it. */
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		failing_job(gate), npuipc_fill_job(self->buf, 0, 4096, 4) }, 2, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, NPUIPC_WAIT_RECOVER, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_EQ(4, self->map[0]);
}

/*
 * Copies on the copy worker: the one running ends, those behind it are
 * cancelled, and the stream copies again afterwards.
 */
TEST_F(failure, abort_during_long_copies_cancels_those_not_yet_run)
{
	uint32_t big_a, big_b, event;
	int status;

	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 << 20, NPUIPC_PAGE_CLASS_HUGE, &big_a));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 << 20, NPUIPC_PAGE_CLASS_HUGE, &big_b));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		npuipc_copy_job(big_b, 0, big_a, 0, 64 << 20), npuipc_copy_job(big_a, 0, big_b, 0, 64 << 20),
		npuipc_copy_job(big_b, 0, big_a, 0, 64 << 20), npuipc_copy_job(big_a, 0, big_b, 0, 64 << 20),
		npuipc_fill_job(self->buf, 0, 4096, 8),
		npuipc_object_job(NPUIPC_JOB_RECORD_EVENT, event) }, 6, NULL));
	ASSERT_EQ(0, abort_stream(self->fd, self->stream));
	ASSERT_EQ(0, npuipc_wait(self->fd, event, 0, 0, &status));
	EXPECT_EQ(-ECANCELED, status);
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, npuipc_copy_job(big_b, 0, big_a, 0, 4096)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 30 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_a));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, big_b));
}

TEST_F(failure, set_param_rejects_unknown_flags_params_values_padding_and_handles)
{
	struct drm_npuipc_stream_set_param args;
	uint32_t event;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	args = (struct drm_npuipc_stream_set_param){ .stream = self->stream,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE, .flags = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = self->stream,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE, .pad = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = self->stream, .param = 0 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = self->stream, .param = 2 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = self->stream,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE, .value = 2 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = self->stream,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE, .value = 1ULL << 32 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = event,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
	args = (struct drm_npuipc_stream_set_param){ .stream = 999,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE };
	NPUIPC_EXPECT_REFUSED(-ENOENT, self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args);
}

/* A refused SET_PARAM changed nothing: the stream still stops at a failure. */
TEST_F(failure, a_refused_set_param_leaves_the_failure_mode_as_it_was)
{
	struct drm_npuipc_stream_set_param args = { .stream = self->stream,
		.param = NPUIPC_STREAM_PARAM_FAILURE_MODE, .value = NPUIPC_FAILURE_CONTINUE,
		.flags = 1 };
	uint32_t notify;

	ASSERT_EQ(-EINVAL, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &notify));
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, (struct drm_npuipc_job[]){
		failing_job(notify), npuipc_fill_job(self->buf, 0, 4096, 5) }, 2, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 10 * SEC_NS, NPUIPC_WAIT_RECOVER, NULL));
	EXPECT_EQ(0, self->map[0]);
}

TEST_F(failure, abort_rejects_unknown_flags_and_handles)
{
	struct drm_npuipc_stream_abort args;
	uint32_t event;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_EVENT, &event));
	args = (struct drm_npuipc_stream_abort){ .stream = self->stream, .flags = 1 };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_ABORT, &args);
	args = (struct drm_npuipc_stream_abort){ .stream = event };
	NPUIPC_EXPECT_REFUSED(-EINVAL, self->fd, DRM_IOCTL_NPUIPC_STREAM_ABORT, &args);
	args = (struct drm_npuipc_stream_abort){ .stream = 999 };
	NPUIPC_EXPECT_REFUSED(-ENOENT, self->fd, DRM_IOCTL_NPUIPC_STREAM_ABORT, &args);
}

TEST(uapi_failure_structures_are_padded_to_8_bytes)
{
	EXPECT_EQ(24, sizeof(struct drm_npuipc_stream_set_param));
	EXPECT_EQ(8, sizeof(struct drm_npuipc_stream_abort));
	EXPECT_EQ(24, sizeof(struct drm_npuipc_wait));
}

TEST_HARNESS_MAIN
