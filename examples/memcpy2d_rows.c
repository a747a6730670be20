// SPDX-License-Identifier: MIT
/*
 * A CANN program's 2-D copies: a host image of 480 rows of 640 bytes (a
 * pitch of 768) goes to device memory of pitch 1024, is copied on the
 * device into a second buffer of pitch 640, and comes back row by row,
 * all in one stream's order; the program checks every byte.
 * usage: memcpy2d_rows
 */
#include "example_util.h"

enum { WIDTH = 640, HEIGHT = 480, HOST_PITCH = 768, DEV_PITCH = 1024, PACKED = WIDTH };

int main(void)
{
	static unsigned char image[HOST_PITCH * HEIGHT], back[WIDTH * HEIGHT];
	aclrtStream stream;
	void *a, *b;
	size_t r, c;

	example_name = "2-D copies";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtMalloc(&a, DEV_PITCH * HEIGHT, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtMalloc(&b, PACKED * HEIGHT, ACL_MEM_MALLOC_HUGE_FIRST));
	for (r = 0; r < HEIGHT; r++)
		for (c = 0; c < HOST_PITCH; c++)
			image[r * HOST_PITCH + c] = c < WIDTH ? (unsigned char)(r ^ c) : 0xEE;

	CHECK(aclrtMemcpy2dAsync(a, DEV_PITCH, image, HOST_PITCH, WIDTH, HEIGHT,
				 ACL_MEMCPY_HOST_TO_DEVICE, stream));
	CHECK(aclrtMemcpy2dAsync(b, PACKED, a, DEV_PITCH, WIDTH, HEIGHT,
				 ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
	CHECK(aclrtMemcpy2dAsync(back, WIDTH, b, PACKED, WIDTH, HEIGHT,
				 ACL_MEMCPY_DEVICE_TO_HOST, stream));
	CHECK(aclrtSynchronizeStream(stream));
	for (r = 0; r < HEIGHT; r++)
		for (c = 0; c < WIDTH; c++)
			if (back[r * WIDTH + c] != (unsigned char)(r ^ c)) {
				fprintf(stderr, "%s: row %zu byte %zu is %u\n", example_name, r, c,
					back[r * WIDTH + c]);
				return 1;
			}
	SAY("%d rows of %d bytes went to the device (pitch %d), across it (pitch %d) and back",
	    HEIGHT, WIDTH, DEV_PITCH, PACKED);
	/* The synchronous copy: host to device only, as CANN's. */
	CHECK(aclrtMemcpy2d(a, DEV_PITCH, image, HOST_PITCH, WIDTH, HEIGHT, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtFree(b));
	CHECK(aclrtFree(a));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	SAY("done");
	return 0;
}
