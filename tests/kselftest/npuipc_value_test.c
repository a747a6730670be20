// SPDX-License-Identifier: GPL-2.0
/*
 * Word jobs. WRITE_VALUE stores a 64-bit word when its stream reaches it;
 * WAIT_VALUE holds its stream until a word compares true, whoever changes
 * it (a job of another stream, or a process through its mapping). Each
 * comparison, timeouts, aborts, the fence export rule, and every input
 * SUBMIT refuses for them. A FILL with NPUIPC_FILL_U32 sets 32-bit words.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "npuipc_harness.h"
#include "npuipc_test_util.h"

#define SEC_NS 1000000000LL
#define SHORT_TIMEOUT_NS (50 * 1000 * 1000ULL)
#define WORD 128		/* offset of the word the tests use */
#define MARKER 4096		/* a page a FILL behind the wait marks */

FIXTURE(value) {
	int fd;
	uint32_t stream, other;
	uint32_t buf;		/* 64 KiB, mapped */
	uint8_t *map;
	size_t size;
};

FIXTURE_SETUP(value)
{
	self->map = MAP_FAILED;
	self->fd = npuipc_open_device(0);
	if (self->fd < 0)
		SKIP(return, "no npuipc device (is npuipc.ko loaded?)");
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->stream));
	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_STREAM, &self->other));
	ASSERT_EQ(0, npuipc_bo_create(self->fd, 64 * 1024, NPUIPC_PAGE_CLASS_NORMAL, &self->buf));
	self->map = npuipc_bo_mmap(self->fd, self->buf, PROT_READ | PROT_WRITE, &self->size);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(value)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->size);
	if (self->fd >= 0)
		close(self->fd);
	EXPECT_TRUE(npuipc_device_is_idle(0));
}

static struct drm_npuipc_job write_value_job(uint32_t dst, uint64_t offset, uint64_t value)
{
	return (struct drm_npuipc_job){ .kind = NPUIPC_JOB_WRITE_VALUE, .dst = dst,
					.dst_offset = offset, .value = value };
}

static struct drm_npuipc_job wait_value_job(uint32_t dst, uint64_t offset, uint32_t compare,
					    uint64_t value)
{
	return (struct drm_npuipc_job){ .kind = NPUIPC_JOB_WAIT_VALUE, .dst = dst,
					.dst_offset = offset, .flags = compare, .value = value };
}

static volatile uint64_t *word(FIXTURE_DATA(value) *self, size_t offset)
{
	return (volatile uint64_t *)(self->map + offset);
}

/*
 * Queues a wait for the word with @compare and @value and a FILL of the
 * marker page behind it; checks that the FILL has not run after a while.
 */
static void queue_held_wait(struct __test_metadata *_metadata, FIXTURE_DATA(value) *self,
			    uint32_t compare, uint64_t value)
{
	struct drm_npuipc_job jobs[] = {
		wait_value_job(self->buf, WORD, compare, value),
		npuipc_fill_job(self->buf, MARKER, 4096, 0x5a),
	};

	memset(self->map + MARKER, 0, 4096);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, SHORT_TIMEOUT_NS, 0, NULL));
	EXPECT_EQ(0, self->map[MARKER]);
}

/* The word is changed to @now: the wait must end and the FILL run. */
static void release_held_wait(struct __test_metadata *_metadata, FIXTURE_DATA(value) *self,
			      uint64_t now)
{
	int status = -1;

	*word(self, WORD) = now;
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map + MARKER, 4096, 0x5a));
}

TEST_F(value, write_value_stores_the_word_when_its_stream_reaches_it)
{
	struct drm_npuipc_job jobs[2];
	uint32_t gate;

	ASSERT_EQ(0, npuipc_obj_create(self->fd, NPUIPC_OBJ_NOTIFY, &gate));
	memset(self->map, 0xee, 256);
	jobs[0] = npuipc_gate_job(gate);
	jobs[1] = write_value_job(self->buf, WORD, 0x0123456789abcdefULL);
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	usleep(20000);
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeULL, *word(self, WORD));
	ASSERT_EQ(0, npuipc_release_gate(self->fd, gate));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, NULL));
	EXPECT_EQ(0x0123456789abcdefULL, *word(self, WORD));
	/* The words on either side are untouched. */
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeULL, *word(self, WORD - 8));
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeULL, *word(self, WORD + 8));
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, gate));
}

/* GEQ compares as counters that wrap: (int64_t)(word - value) >= 0. */
TEST_F(value, wait_geq_holds_until_the_word_counts_up_to_the_value)
{
	*word(self, WORD) = 4;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_GEQ, 5);
	release_held_wait(_metadata, self, 6);

	/* A counter past the wrap is past a value just below it... */
	*word(self, WORD) = 0xfffffffffffffff0ULL;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_GEQ, 0xfffffffffffffff8ULL);
	release_held_wait(_metadata, self, 0x10);

	/* ...and a word more than half the range ahead is behind. */
	*word(self, WORD) = (1ULL << 63) + 7;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_GEQ, 7);
	release_held_wait(_metadata, self, 7);
}

TEST_F(value, wait_eq_holds_until_the_word_equals_the_value)
{
	*word(self, WORD) = 6;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_EQ, 5);
	*word(self, WORD) = 4;	/* below: still held */
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, SHORT_TIMEOUT_NS, 0, NULL));
	EXPECT_EQ(0, self->map[MARKER]);
	release_held_wait(_metadata, self, 5);
}

TEST_F(value, wait_and_holds_until_the_word_shares_a_bit_with_the_value)
{
	*word(self, WORD) = 0xf0;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_AND, 0x0f00);
	release_held_wait(_metadata, self, 0x0100);
}

TEST_F(value, wait_nor_holds_until_some_bit_is_clear_in_both)
{
	*word(self, WORD) = 0xffffffff00000000ULL;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_NOR, 0x00000000ffffffffULL);
	release_held_wait(_metadata, self, 0xfffffffe00000000ULL);
}

TEST_F(value, a_write_value_on_another_stream_releases_the_wait)
{
	struct drm_npuipc_job jobs[] = {
		wait_value_job(self->buf, WORD, NPUIPC_WAIT_VALUE_EQ, 42),
		npuipc_fill_job(self->buf, MARKER, 4096, 0x5a),
	};
	int status = -1;

	*word(self, WORD) = 0;
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 2, NULL));
	EXPECT_EQ(-ETIME, npuipc_wait(self->fd, self->stream, SHORT_TIMEOUT_NS, 0, NULL));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->other, write_value_job(self->buf, WORD, 42)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(42, *word(self, WORD));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map + MARKER, 4096, 0x5a));
}

TEST_F(value, the_last_word_of_a_buffer_is_one)
{
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, write_value_job(self->buf, 64 * 1024 - 8, 5)));
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream,
				    wait_value_job(self->buf, 64 * 1024 - 8, NPUIPC_WAIT_VALUE_EQ, 5)));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, NULL));
	EXPECT_EQ(5, *word(self, 64 * 1024 - 8));
}

TEST_F(value, write_value_sets_adds_ors_and_ands_the_word)
{
	struct drm_npuipc_job jobs[4] = {
		write_value_job(self->buf, WORD, 5),
		write_value_job(self->buf, WORD, 3),
		write_value_job(self->buf, WORD, 0x10),
		write_value_job(self->buf, WORD, 0x1c),
	};

	*word(self, WORD) = 0xffff;
	jobs[1].flags = NPUIPC_WRITE_VALUE_ADD;
	jobs[2].flags = NPUIPC_WRITE_VALUE_OR;
	jobs[3].flags = NPUIPC_WRITE_VALUE_AND;
	ASSERT_EQ(0, npuipc_submit(self->fd, self->stream, jobs, 4, NULL));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, NULL));
	EXPECT_EQ((((5 + 3) | 0x10) & 0x1c), *word(self, WORD));
}

/* One thread's share of the additions: its own stream, its own CPU. */
struct adder {
	int fd;
	uint32_t stream, buf;
	int cpu;
	int ret;
};

static void *add_ones(void *arg)
{
	struct drm_npuipc_job jobs[NPUIPC_MAX_JOBS_PER_SUBMIT];
	struct adder *a = arg;
	cpu_set_t cpus;
	unsigned int i, round;

	CPU_ZERO(&cpus);
	CPU_SET(a->cpu, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	for (i = 0; i < NPUIPC_MAX_JOBS_PER_SUBMIT; i++) {
		jobs[i] = write_value_job(a->buf, WORD, 1);
		jobs[i].flags = NPUIPC_WRITE_VALUE_ADD;
	}
	/* Each submit to the idle stream runs its jobs in this thread. */
	for (round = 0; round < 16 && !a->ret; round++) {
		a->ret = npuipc_submit(a->fd, a->stream, jobs, NPUIPC_MAX_JOBS_PER_SUBMIT, NULL);
		if (!a->ret)
			a->ret = npuipc_wait(a->fd, a->stream, 10 * SEC_NS, 0, NULL);
	}
	return NULL;
}

/*
 * Two streams adding to one word, from threads on two CPUs, lose none of
 * each other's additions.
 */
TEST_F(value, additions_from_two_streams_on_two_cpus_are_atomic)
{
	struct adder a = { self->fd, self->stream, self->buf, 0, 0 };
	struct adder b = { self->fd, self->other, self->buf, 1, 0 };
	pthread_t ta, tb;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: nothing runs side by side");
	*word(self, WORD) = 0;
	ASSERT_EQ(0, pthread_create(&ta, NULL, add_ones, &a));
	ASSERT_EQ(0, pthread_create(&tb, NULL, add_ones, &b));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(2 * 16 * NPUIPC_MAX_JOBS_PER_SUBMIT, *word(self, WORD));
}

TEST_F(value, unsigned_comparisons_and_all_bits_hold_until_true)
{
	*word(self, WORD) = 9;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_LT, 9);
	release_held_wait(_metadata, self, 8);

	*word(self, WORD) = 9;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_GT, 9);
	release_held_wait(_metadata, self, 10);

	/* Unsigned, not cyclic: a word past half the range is above. */
	*word(self, WORD) = 7;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_GE, 8);
	release_held_wait(_metadata, self, (1ULL << 63) + 9);	/* behind 8 for GEQ */

	*word(self, WORD) = 0x0f;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_ALL, 0x30);
	release_held_wait(_metadata, self, 0x3f);
}

TEST_F(value, a_clearing_wait_sets_the_word_to_zero_as_it_ends)
{
	*word(self, WORD) = 2;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_GE | NPUIPC_WAIT_VALUE_CLEAR, 3);
	EXPECT_EQ(2, *word(self, WORD));	/* not reached: not cleared */
	release_held_wait(_metadata, self, 5);
	EXPECT_EQ(0, *word(self, WORD));
}

TEST_F(value, a_wait_that_is_already_true_completes_at_once)
{
	*word(self, WORD) = 9;
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream,
				    wait_value_job(self->buf, WORD, NPUIPC_WAIT_VALUE_EQ, 9)));
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, NULL));
}

TEST_F(value, a_wait_past_its_timeout_fails_the_stream_with_etimedout)
{
	struct drm_npuipc_job job = wait_value_job(self->buf, WORD, NPUIPC_WAIT_VALUE_EQ, 1);
	int status = 0;

	*word(self, WORD) = 0;
	job.timeout_ns = SHORT_TIMEOUT_NS;
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, job));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, NPUIPC_WAIT_RECOVER, &status));
	EXPECT_EQ(-ETIMEDOUT, status);
}

TEST_F(value, an_abort_cancels_a_waiting_wait_value)
{
	struct drm_npuipc_stream_abort abort_args = { .stream = self->stream };
	char streams[4096];
	int status = -1;

	*word(self, WORD) = 0;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_EQ, 1);
	/* debugfs names what the head waits for. */
	ASSERT_EQ(0, npuipc_streams_state(self->fd, streams, sizeof(streams)));
	EXPECT_NE(NULL, strstr(streams, "head: wait_value for word == 0x1 at offset 128"));
	ASSERT_EQ(0, npuipc_ioctl(self->fd, DRM_IOCTL_NPUIPC_STREAM_ABORT, &abort_args));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, self->map[MARKER]);
}

TEST_F(value, no_sync_file_leaves_behind_a_wait_value_whatever_its_timeout)
{
	struct drm_npuipc_job job = wait_value_job(self->buf, WORD, NPUIPC_WAIT_VALUE_EQ, 1);
	int fence = -1;

	*word(self, WORD) = 0;
	job.timeout_ns = SHORT_TIMEOUT_NS;
	EXPECT_EQ(-EDEADLK, npuipc_submit(self->fd, self->stream, &job, 1, &fence));
	EXPECT_EQ(-1, fence);
	/* Nothing was queued. */
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
}

TEST_F(value, a_stream_destroyed_while_waiting_cancels_the_wait)
{
	*word(self, WORD) = 0;
	queue_held_wait(_metadata, self, NPUIPC_WAIT_VALUE_EQ, 1);
	EXPECT_EQ(0, npuipc_obj_destroy(self->fd, self->stream));
	EXPECT_EQ(0, self->map[MARKER]);
}

/* Refused with @err, nothing queued and the word unchanged. */
static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(value) *self,
			   struct drm_npuipc_job job, int err)
{
	*word(self, WORD) = 3;
	EXPECT_EQ(err, npuipc_submit1(self->fd, self->stream, job));
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 0, 0, NULL));
	EXPECT_EQ(3, *word(self, WORD));
}

TEST_F(value, submit_refuses_bad_value_jobs)
{
	struct drm_npuipc_job job;

	expect_refused(_metadata, self, write_value_job(self->buf, WORD + 4, 1), -EINVAL);
	expect_refused(_metadata, self, wait_value_job(self->buf, WORD + 1, 0, 1), -EINVAL);
	expect_refused(_metadata, self, write_value_job(self->buf, 64 * 1024, 1), -EINVAL);
	expect_refused(_metadata, self, wait_value_job(self->buf, 64 * 1024, 0, 1), -EINVAL);
	expect_refused(_metadata, self, wait_value_job(self->buf, ~7ULL, 0, 1), -EINVAL);
	expect_refused(_metadata, self, write_value_job(self->buf, ~7ULL, 1), -EINVAL);
	expect_refused(_metadata, self, wait_value_job(self->buf, WORD, NPUIPC_WAIT_VALUE_ALL + 1, 1),
		       -EINVAL);
	expect_refused(_metadata, self, wait_value_job(self->buf, WORD, NPUIPC_WAIT_VALUE_CLEAR << 1, 1),
		       -EINVAL);
	job = write_value_job(self->buf, WORD, 1);
	job.flags = NPUIPC_WRITE_VALUE_AND + 1;
	expect_refused(_metadata, self, job, -EINVAL);
	job = write_value_job(self->buf, WORD, 1);
	job.flags = NPUIPC_WAIT_VALUE_CLEAR;	/* clearing is for waits only */
	expect_refused(_metadata, self, job, -EINVAL);
	job = write_value_job(self->buf, WORD, 1);
	job.timeout_ns = SEC_NS;
	expect_refused(_metadata, self, job, -EINVAL);
	job = write_value_job(self->buf, WORD, 1);
	job.size = 8;
	expect_refused(_metadata, self, job, -EINVAL);
	job = wait_value_job(self->buf, WORD, 0, 1);
	job.src = self->buf;
	expect_refused(_metadata, self, job, -EINVAL);
	job = wait_value_job(self->buf, WORD, 0, 1);
	job.src_offset = 8;
	expect_refused(_metadata, self, job, -EINVAL);
	job = wait_value_job(self->buf, WORD, 0, 1);
	job.object = 1;
	expect_refused(_metadata, self, job, -EINVAL);
	job = write_value_job(self->buf, WORD, 1);
	job.pad = 1;
	expect_refused(_metadata, self, job, -EINVAL);
	expect_refused(_metadata, self, write_value_job(0xdead, WORD, 1), -ENOENT);
	expect_refused(_metadata, self, wait_value_job(0xdead, WORD, 0, 1), -ENOENT);
	/* Other kinds still take no flags, FILL only its own. */
	job = npuipc_copy_job(self->buf, 0, self->buf, 4096, 8);
	job.flags = NPUIPC_WAIT_VALUE_EQ;
	expect_refused(_metadata, self, job, -EINVAL);
	job = npuipc_fill_job(self->buf, 0, 8, 1);
	job.flags = NPUIPC_FILL_U32 << 1;
	expect_refused(_metadata, self, job, -EINVAL);
}

TEST_F(value, a_word_fill_sets_each_32_bit_word_of_its_range_across_pages)
{
	struct drm_npuipc_job job = npuipc_fill_job(self->buf, 4092, 8200, 0);
	size_t i;

	memset(self->map, 0xee, 16384);
	job.flags = NPUIPC_FILL_U32;
	job.value = 0xdeadbeef;
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream, job));
	ASSERT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, NULL));
	for (i = 4092; i < 4092 + 8200; i += 4)
		ASSERT_EQ(0xdeadbeef, *(volatile uint32_t *)(self->map + i)) TH_LOG("offset %zu", i);
	EXPECT_TRUE(npuipc_all_bytes_are(self->map, 4092, 0xee));
	EXPECT_TRUE(npuipc_all_bytes_are(self->map + 4092 + 8200, 16384 - 4092 - 8200, 0xee));
}

TEST_F(value, a_word_fill_needs_whole_words_and_a_32_bit_value)
{
	struct drm_npuipc_job job = npuipc_fill_job(self->buf, 8, 16, 0);

	job.flags = NPUIPC_FILL_U32;
	job.value = 0x100000000ULL;
	expect_refused(_metadata, self, job, -EINVAL);
	job.value = 1;
	job.dst_offset = 2;
	expect_refused(_metadata, self, job, -EINVAL);
	job.dst_offset = 8;
	job.size = 6;
	expect_refused(_metadata, self, job, -EINVAL);
	/* Without the flag, the value is still one byte. */
	job = npuipc_fill_job(self->buf, 8, 16, 0);
	job.value = 0x100;
	expect_refused(_metadata, self, job, -EINVAL);
}

TEST_F(value, a_read_only_buffer_can_be_waited_on_but_not_written)
{
	uint32_t ro;
	int dmabuf;

	ASSERT_EQ(0, npuipc_bo_export(self->fd, self->buf, 0, 64 * 1024, NPUIPC_BO_EXPORT_READ_ONLY,
				      &dmabuf));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, dmabuf, 0, &ro));
	close(dmabuf);
	expect_refused(_metadata, self, write_value_job(ro, WORD, 1), -EACCES);
	/* A clearing wait writes its word. */
	expect_refused(_metadata, self,
		       wait_value_job(ro, WORD, NPUIPC_WAIT_VALUE_GE | NPUIPC_WAIT_VALUE_CLEAR, 0), -EACCES);
	*word(self, WORD) = 11;
	ASSERT_EQ(0, npuipc_submit1(self->fd, self->stream,
				    wait_value_job(ro, WORD, NPUIPC_WAIT_VALUE_EQ, 11)));
	EXPECT_EQ(0, npuipc_wait(self->fd, self->stream, 5 * SEC_NS, 0, NULL));
	EXPECT_EQ(0, npuipc_gem_close(self->fd, ro));
}

TEST_F(value, another_exporters_buffer_is_refused_with_eopnotsupp)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 1, .bpp = 32 };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_gem_close gem_close = { 0 };
	uint32_t foreign;
	int vgem;

	vgem = npuipc_open_vgem();
	if (vgem < 0)
		SKIP(return, "vgem is not loaded (modprobe vgem)");
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
	prime.handle = dumb.handle;
	gem_close.handle = dumb.handle;
	ASSERT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	ASSERT_EQ(0, npuipc_bo_import(self->fd, prime.fd, 0, &foreign));
	expect_refused(_metadata, self, write_value_job(foreign, WORD, 1), -EOPNOTSUPP);
	expect_refused(_metadata, self, wait_value_job(foreign, WORD, 0, 1), -EOPNOTSUPP);
	EXPECT_EQ(0, npuipc_gem_close(self->fd, foreign));
	close(prime.fd);
	EXPECT_EQ(0, npuipc_ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gem_close));
	close(vgem);
}

TEST_HARNESS_MAIN
