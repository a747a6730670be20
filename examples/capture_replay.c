// SPDX-License-Identifier: MIT
/*
 * A CANN program's capture and replay, as CANN's model_ri samples do it:
 * a stream's work (a copy in from pinned host memory, a copy across the
 * device, a 32-bit set, a copy back out and a host function counting
 * runs) is captured once into a model runtime instance, then run four
 * times, each run reading new input; the program checks every byte of
 * each run's output.
 * usage: capture_replay
 */
#include <stdint.h>

#include "example_util.h"

enum { SIZE = 256 * 1024, RUNS = 4 };

static void count_run(void *args)
{
	(*(int *)args)++;
}

int main(void)
{
	aclrtStream stream;
	aclmdlRI model;
	unsigned char *in, *out;
	void *a, *b;
	int runs = 0;
	size_t i;

	example_name = "capture and replay";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtMallocHost((void **)&in, SIZE));
	CHECK(aclrtMallocHost((void **)&out, SIZE));
	CHECK(aclrtMalloc(&a, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtMalloc(&b, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));

	CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
	CHECK(aclrtMemcpyAsync(a, SIZE, in, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, stream));
	CHECK(aclrtMemcpyAsync(b, SIZE, a, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
	/* The first 16 bytes of each run's output: a 32-bit pattern. */
	CHECK(aclrtMemsetD32Async(b, SIZE, 0xA5A5A5A5u, 4, stream));
	CHECK(aclrtMemcpyAsync(out, SIZE, b, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, stream));
	CHECK(aclrtLaunchHostFunc(stream, count_run, &runs));
	CHECK(aclmdlRICaptureEnd(stream, &model));
	SAY("captured; nothing has run (%d runs)", runs);

	for (int run = 1; run <= RUNS; run++) {
		for (i = 0; i < SIZE; i++)
			in[i] = (unsigned char)(i * run + run);
		memset(out, 0, SIZE);
		CHECK(aclmdlRIExecuteAsync(model, stream));
		CHECK(aclrtSynchronizeStream(stream));
		for (i = 0; i < SIZE; i++) {
			unsigned char want = i < 16 ? 0xA5 : (unsigned char)(i * run + run);

			if (out[i] != want) {
				fprintf(stderr, "%s: run %d byte %zu is %u, not %u\n", example_name, run, i,
					out[i], want);
				return 1;
			}
		}
		SAY("run %d: every byte as the input made it", run);
	}
	if (runs != RUNS) {
		fprintf(stderr, "%s: the host function ran %d times, not %d\n", example_name, runs, RUNS);
		return 1;
	}
	CHECK(aclmdlRIDestroy(model));
	CHECK(aclrtFree(b));
	CHECK(aclrtFree(a));
	CHECK(aclrtFreeHost(out));
	CHECK(aclrtFreeHost(in));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return 0;
}
