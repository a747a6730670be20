// SPDX-License-Identifier: MIT
/*
 * The runtime's built-in tasks and managed memory, as CANN's built_in_task
 * and managed_memory samples use them: a buffer reduced into itself
 * (aclrtReduceAsync, SUM of floats), managed memory the host fills and
 * reads through the same pointer while the device reduces it (with advice
 * and a prefetch), a cache prefetch, and a copy whose addresses a
 * descriptor in device memory gives (aclrtMemcpyAsyncWithDesc). The
 * program checks every result.
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
