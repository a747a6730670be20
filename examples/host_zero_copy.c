// SPDX-License-Identifier: MIT
/*
 * A CANN program's zero-copy host memory, as CANN's host_register sample
 * sets it up: pinned host buffers registered as mapped (aclrtHostRegisterV2),
 * their device addresses taken (aclrtHostGetDevicePointer), and the device
 * working on them there: a copy from one into device memory and back into
 * the other, a 32-bit pattern set in between. The program writes the input
 * and reads the output at their host addresses only, and checks every byte.
 * usage: host_zero_copy
 */
#include <stdint.h>

#include "example_util.h"

enum { SIZE = 256 * 1024 };

int main(void)
{
	unsigned char *in, *out;
	void *in_dev, *out_dev, *work;
	aclrtStream stream;
	size_t i;

	example_name = "host zero copy";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtMallocHost((void **)&in, SIZE));
	CHECK(aclrtMallocHost((void **)&out, SIZE));
	CHECK(aclrtHostRegisterV2(in, SIZE, ACL_HOST_REG_MAPPED));
	CHECK(aclrtHostRegisterV2(out, SIZE, ACL_HOST_REG_MAPPED));
	CHECK(aclrtHostGetDevicePointer(in, &in_dev, 0));
	CHECK(aclrtHostGetDevicePointer(out, &out_dev, 0));
	CHECK(aclrtMalloc(&work, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
	SAY("registered two host buffers: device addresses %p and %p", in_dev, out_dev);

	for (i = 0; i < SIZE; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	memset(out, 0, SIZE);
	CHECK(aclrtMemcpyAsync(work, SIZE, in_dev, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
	CHECK(aclrtMemsetD32Async(work, SIZE, 0xA5A5A5A5u, 4, stream));
	CHECK(aclrtMemcpyAsync(out_dev, SIZE, work, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
	CHECK(aclrtSynchronizeStream(stream));
	for (i = 0; i < SIZE; i++) {
		unsigned char want = i < 16 ? 0xA5 : (unsigned char)(i * 7 + 3);

		if (out[i] != want) {
			fprintf(stderr, "%s: byte %zu is %u, not %u\n", example_name, i, out[i], want);
			return 1;
		}
	}
	SAY("the device read the input and wrote the output in place: every byte checked");

	CHECK(aclrtFree(work));
	CHECK(aclrtHostUnregister(out));
	CHECK(aclrtHostUnregister(in));
	CHECK(aclrtFreeHost(out));
	CHECK(aclrtFreeHost(in));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	return 0;
}
