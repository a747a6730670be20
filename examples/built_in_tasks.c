// SPDX-License-Identifier: MIT
/*
 * The runtime's built-in tasks and managed memory, as CANN's built_in_task
 * and managed_memory samples use them: a buffer reduced into itself
 * (aclrtReduceAsync, SUM of floats), managed memory the host fills and
 * reads through the same pointer while the device reduces it (with advice
 * and a prefetch), a cache prefetch, and a copy whose addresses a
 * descriptor in device memory gives (aclrtMemcpyAsyncWithDesc), and
 * CANN's random-number task (a 16-byte counter zeroed, uniform numbers and
 * a dropout mask). The program checks every result.
 * usage: built_in_tasks
 */
#include <stdint.h>

#include "example_util.h"

enum { N = 1024 };

static int check_floats(const char *what, const float *got, float first, float step)
{
	size_t i;

	for (i = 0; i < N; i++)
		if (got[i] != first + step * (float)i) {
			fprintf(stderr, "%s: %s[%zu] is %f, not %f\n", example_name, what, i, got[i],
				first + step * (float)i);
			return 1;
		}
	return 0;
}

int main(void)
{
	static float host[N];
	aclrtStream stream;
	void *buf, *copy, *desc;
	float *x, *y;
	size_t i, desc_size = 0;
	aclrtMemManagedLocation device0 = {ACL_MEM_LOCATIONTYPE_DEVICE, 0};

	example_name = "built-in tasks";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));

	/* CANN's reduce sample: dst = dst + src with dst and src one buffer. */
	for (i = 0; i < N; i++)
		host[i] = (float)(i + 1);
	CHECK(aclrtMalloc(&buf, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtMemcpy(buf, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtCmoAsync(buf, sizeof(host), ACL_RT_CMO_TYPE_PREFETCH, stream));
	CHECK(aclrtReduceAsync(buf, buf, sizeof(host), ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, stream, NULL));
	CHECK(aclrtSynchronizeStream(stream));
	CHECK(aclrtMemcpy(host, sizeof(host), buf, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
	if (check_floats("the reduced buffer", host, 2.0f, 2.0f))
		return 1;
	SAY("a buffer reduced into itself doubled: %.0f %.0f %.0f ...", host[0], host[1], host[2]);

	/* Managed memory: the host writes and reads, the device reduces. */
	CHECK(aclrtMemAllocManaged((void **)&x, sizeof(host), ACL_RT_MEM_ATTACH_GLOBAL));
	CHECK(aclrtMemAllocManaged((void **)&y, sizeof(host), ACL_RT_MEM_ATTACH_GLOBAL));
	for (i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 100.0f;
	}
	CHECK(aclrtMemManagedAdvise(x, 2 << 20, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device0));
	CHECK(aclrtMemManagedPrefetchAsync(x, 2 << 20, device0, 0, stream));
	CHECK(aclrtReduceAsync(x, y, sizeof(host), ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, stream, NULL));
	CHECK(aclrtSynchronizeStream(stream));
	if (check_floats("managed x", x, 100.0f, 1.0f))
		return 1;
	SAY("managed memory: the host reads what the device summed: %.0f %.0f ...", x[0], x[1]);

	/* A copy whose addresses a descriptor in device memory gives. */
	CHECK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &desc_size));
	CHECK(aclrtMalloc(&desc, desc_size, ACL_MEM_MALLOC_NORMAL_ONLY));
	CHECK(aclrtMalloc(&copy, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, x, copy, sizeof(host), NULL));
	CHECK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream));
	CHECK(aclrtSynchronizeStream(stream));
	CHECK(aclrtMemcpy(host, sizeof(host), copy, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
	if (check_floats("the descriptor's copy", host, 100.0f, 1.0f))
		return 1;
	SAY("a %zu-byte descriptor copied %zu bytes", desc_size, sizeof(host));

	/* CANN's random sample: uniform floats in [0, 1), then a dropout mask
	 * continuing from the counter the first task moved on. */
	{
		aclrtRandomNumTaskInfo task;
		uint32_t counter[4];
		float lo = 0.0f, hi = 1.0f, ratio = 0.0f;
		void *state;

		CHECK(aclrtMalloc(&state, 16, ACL_MEM_MALLOC_NORMAL_ONLY));
		CHECK(aclrtMemset(state, 16, 0, 16));
		memset(&task, 0, sizeof(task));
		task.dataType = ACL_FLOAT;
		task.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
		task.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.size = sizeof(float);
		memcpy(task.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.valueOrAddr, &lo, sizeof(lo));
		task.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.size = sizeof(float);
		memcpy(task.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.valueOrAddr, &hi, sizeof(hi));
		task.randomResultAddr = copy;
		task.randomCounterAddr = state;
		task.randomSeed.size = 8;
		task.randomSeed.valueOrAddr[0] = 42;
		task.randomNum.size = 8;
		task.randomNum.valueOrAddr[0] = N & 0xFF;
		task.randomNum.valueOrAddr[1] = N >> 8;
		CHECK(aclrtRandomNumAsync(&task, stream, NULL));
		CHECK(aclrtSynchronizeStream(stream));
		CHECK(aclrtMemcpy(host, sizeof(host), copy, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
		for (i = 0; i < N; i++)
			if (!(host[i] >= 0.0f && host[i] < 1.0f)) {
				fprintf(stderr, "%s: uniform number %zu is %f\n", example_name, i, host[i]);
				return 1;
			}
		/* A ratio of 0 keeps every element: all N bits set. */
		task.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK;
		task.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation.size = sizeof(float);
		memcpy(task.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation.valueOrAddr, &ratio,
		       sizeof(ratio));
		CHECK(aclrtRandomNumAsync(&task, stream, NULL));
		CHECK(aclrtSynchronizeStream(stream));
		CHECK(aclrtMemcpy(counter, sizeof(counter), state, sizeof(counter), ACL_MEMCPY_DEVICE_TO_HOST));
		CHECK(aclrtMemcpy(host, N / 8, copy, N / 8, ACL_MEMCPY_DEVICE_TO_HOST));
		for (i = 0; i < N / 8; i++)
			if (((unsigned char *)host)[i] != 0xFF) {
				fprintf(stderr, "%s: mask byte %zu is %#x\n", example_name, i, ((unsigned char *)host)[i]);
				return 1;
			}
		/* Four numbers a block: N/4 blocks each task. */
		if (counter[0] != N / 2 || counter[1] || counter[2] || counter[3]) {
			fprintf(stderr, "%s: the counter is %u, not %u\n", example_name, counter[0], N / 2);
			return 1;
		}
		SAY("random numbers: %d uniform floats in [0, 1), a %d-bit mask, the counter at %u blocks", N, N,
		    counter[0]);
		CHECK(aclrtFree(state));
	}

	CHECK(aclrtFree(copy));
	CHECK(aclrtFree(desc));
	CHECK(aclrtFree(y));
	CHECK(aclrtFree(x));
	CHECK(aclrtFree(buf));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return 0;
}
