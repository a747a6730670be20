// SPDX-License-Identifier: MIT
/*
 * Two streams ordered through a word of device memory, as CANN's
 * multi-stream sample orders them: a consumer stream, queued first, waits
 * for a counter to reach each chunk's number (aclrtValueWait, GEQ) before
 * copying that chunk out; a producer stream fills each chunk and then
 * writes its number to the counter (aclrtValueWrite). The program checks
 * every byte the consumer copied.
 * usage: value_sync
 */
#include <stdint.h>

#include "example_util.h"

enum { CHUNKS = 16, CHUNK = 64 * 1024 };

int main(void)
{
	static unsigned char back[CHUNKS * CHUNK];
	aclrtStream producer, consumer;
	void *counter, *in, *out;
	size_t i, b;

	example_name = "value sync";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&producer));
	CHECK(aclrtCreateStream(&consumer));
	CHECK(aclrtMalloc(&counter, sizeof(uint64_t), ACL_MEM_MALLOC_NORMAL_ONLY));
	CHECK(aclrtMalloc(&in, CHUNKS * CHUNK, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtMalloc(&out, CHUNKS * CHUNK, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtMemset(counter, sizeof(uint64_t), 0, sizeof(uint64_t)));
	CHECK(aclrtMemset(out, CHUNKS * CHUNK, 0, CHUNKS * CHUNK));

	/* The consumer first: each copy waits for its chunk's number. */
	for (i = 1; i <= CHUNKS; i++) {
		CHECK(aclrtValueWait(counter, i, ACL_STREAM_WAIT_VALUE_GEQ, consumer));
		CHECK(aclrtMemcpyAsync((char *)out + (i - 1) * CHUNK, CHUNK, (char *)in + (i - 1) * CHUNK,
				       CHUNK, ACL_MEMCPY_DEVICE_TO_DEVICE, consumer));
	}
	SAY("the consumer waits for %d chunks", CHUNKS);
	for (i = 1; i <= CHUNKS; i++) {
		CHECK(aclrtMemsetAsync((char *)in + (i - 1) * CHUNK, CHUNK, (int32_t)i, CHUNK, producer));
		CHECK(aclrtValueWrite(counter, i, 0, producer));
	}
	CHECK(aclrtSynchronizeStream(producer));
	CHECK(aclrtSynchronizeStream(consumer));
	CHECK(aclrtMemcpy(back, sizeof(back), out, sizeof(back), ACL_MEMCPY_DEVICE_TO_HOST));
	for (i = 0; i < CHUNKS; i++)
		for (b = 0; b < CHUNK; b++)
			if (back[i * CHUNK + b] != i + 1) {
				fprintf(stderr, "%s: chunk %zu byte %zu is %u\n", example_name, i, b,
					back[i * CHUNK + b]);
				return 1;
			}
	SAY("every chunk was copied after it was filled");
	CHECK(aclrtFree(out));
	CHECK(aclrtFree(in));
	CHECK(aclrtFree(counter));
	CHECK(aclrtDestroyStream(consumer));
	CHECK(aclrtDestroyStream(producer));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return 0;
}
