// SPDX-License-Identifier: MIT
/*
 * Cross-server memory sharing, the client (see fabric_server.c): asks the
 * server for its fabric handle over UDP, imports it on device 0, maps it,
 * checks with aclrtMemcpy that it holds the server's 123s, writes 456 into
 * each int the same way, tells the server, and unmaps.
 * usage: fabric_client SERVER_IP [PORT]   (run with npuipc-fabricd up)
 */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "example_util.h"

#define COUNT 1024

/*
 * Sends @word until the server answers with @size bytes (1 s apart, 240
 * times), other answers (a repeated one) ignored: 0, or -1.
 */
static int ask(int sock, const struct sockaddr_in *server, const char *word, void *answer,
	       size_t size)
{
	char buf[256];
	ssize_t n;
	int i;

	for (i = 0; i < 240; i++) {
		if (sendto(sock, word, strlen(word), 0, (const struct sockaddr *)server,
			   sizeof(*server)) < 0)
			return -1;
		n = recv(sock, buf, sizeof(buf), 0);
		if (n == (ssize_t)size) {
			memcpy(answer, buf, size);
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	int port = argc > 2 ? atoi(argv[2]) : 8888;
	aclrtPhysicalMemProp prop = { 0 };
	aclrtMemAccessDesc desc = { 0 };
	aclrtMemFabricHandle shareable;
	aclrtDrvMemHandle handle = NULL;
	struct sockaddr_in server = { 0 };
	struct timeval tv = { 1, 0 };
	static int32_t data[COUNT];
	void *virPtr = NULL;
	size_t granularity = 0, size;
	int sock, i, ok = 1;
	char ack[4];

	example_name = "fabric client";
	server.sin_family = AF_INET;
	server.sin_port = htons(port);
	if (argc < 2 || inet_pton(AF_INET, argv[1], &server.sin_addr) != 1 || port <= 0 || port > 65535)
		return 2;
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	if (sock < 0 || setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    ask(sock, &server, "hello", &shareable, sizeof(shareable)) != 0) {
		fprintf(stderr, "fabric client: no handle from %s:%d\n", argv[1], port);
		return 1;
	}
	SAY("received a fabric handle from %s:%d", argv[1], port);
	CHECK(aclrtMemImportFromShareableHandleV2(&shareable, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &handle));
	/* The server's size: its data rounded up to the same granularity. */
	prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.memAttr = ACL_HBM_MEM_NORMAL;
	CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
	size = (sizeof(data) + granularity - 1) / granularity * granularity;
	CHECK(aclrtReserveMemAddress(&virPtr, size, 0, NULL, 0));
	CHECK(aclrtMapMem(virPtr, size, 0, handle, 0));
	desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	desc.location.id = 0;
	CHECK(aclrtMemSetAccess(virPtr, size, &desc, 1));
	CHECK(aclrtMemcpy(data, sizeof(data), virPtr, sizeof(data), ACL_MEMCPY_DEVICE_TO_HOST));
	for (i = 0; i < COUNT; i++)
		ok &= data[i] == 123;
	SAY("imported and mapped at %p; it holds %d ... %d: %s", virPtr, data[0], data[COUNT - 1],
	    ok ? "the server's writes are here" : "UNEXPECTED");
	for (i = 0; i < COUNT; i++)
		data[i] = 456;
	CHECK(aclrtMemcpy(virPtr, sizeof(data), data, sizeof(data), ACL_MEMCPY_HOST_TO_DEVICE));
	SAY("wrote 456 into each");
	if (ask(sock, &server, "done", ack, 3) != 0 || memcmp(ack, "ack", 3) != 0) {
		fprintf(stderr, "fabric client: the server did not acknowledge\n");
		ok = 0;
	}
	close(sock);
	CHECK(aclrtUnmapMem(virPtr));
	CHECK(aclrtReleaseMemAddress(virPtr));
	CHECK(aclrtFreePhysical(handle));
	CHECK(aclrtResetDeviceForce(0));
	CHECK(aclFinalize());
	SAY("unmapped, released");
	return ok ? 0 : 1;
}
