// SPDX-License-Identifier: MIT
/*
 * A CANN program's 2-D copies: a host image of 480 rows of 640 bytes (a
 * pitch of 768) goes to device memory of pitch 1024, is copied on the
 * device into a second buffer of pitch 640, and comes back row by row,
 * all queued in one stream behind a start signal; the program checks
 * every byte.
 * usage: memcpy2d_rows
 */
#include "example_util.h"

enum { WIDTH = 640, HEIGHT = 480, HOST_PITCH = 768, DEV_PITCH = 1024, PACKED = WIDTH };

int main(void)
{
	static unsigned char image[HOST_PITCH * HEIGHT], back[WIDTH * HEIGHT];
	aclrtStream stream, starter;
	aclrtNotify go;
	void *a, *b;
	size_t r, c;

	example_name = "2-D copies";
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtCreateStream(&starter));
	CHECK(aclrtCreateNotify(&go, ACL_NOTIFY_DEFAULT));
	CHECK(aclrtMalloc(&a, DEV_PITCH * HEIGHT, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK(aclrtMalloc(&b, PACKED * HEIGHT, ACL_MEM_MALLOC_HUGE_FIRST));
	for (r = 0; r < HEIGHT; r++)
		for (c = 0; c < HOST_PITCH; c++)
			image[r * HOST_PITCH + c] = c < WIDTH ? (unsigned char)(r ^ c) : 0xEE;

	/* The stream waits for a start signal: the copies are queued, not made. */
	CHECK(aclrtWaitAndResetNotify(go, stream, 30));
	CHECK(aclrtMemcpy2dAsync(a, DEV_PITCH, image, HOST_PITCH, WIDTH, HEIGHT,
				 ACL_MEMCPY_HOST_TO_DEVICE, stream));
	memset(image, 0, sizeof(image)); /* read at the call: may be reused at once */
	CHECK(aclrtMemcpy2dAsync(b, PACKED, a, DEV_PITCH, WIDTH, HEIGHT,
				 ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
	CHECK(aclrtMemcpy2dAsync(back, WIDTH, b, PACKED, WIDTH, HEIGHT,
				 ACL_MEMCPY_DEVICE_TO_HOST, stream));
	CHECK(aclrtRecordNotify(go, starter));
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
	/* The synchronous copy: between host and device only, as CANN's. */
	CHECK(aclrtMemcpy2d(a, DEV_PITCH, image, HOST_PITCH, WIDTH, HEIGHT, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK(aclrtDestroyNotify(go));
	CHECK(aclrtDestroyStream(starter));
	CHECK(aclrtFree(b));
	CHECK(aclrtFree(a));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDevice(0));
	CHECK(aclFinalize());
	SAY("done");
	return 0;
}
