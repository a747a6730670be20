// SPDX-License-Identifier: MIT
/*
 * Cross-server memory sharing, the server: CANN's cross-server sample
 * (physical memory exported as a FABRIC handle that a process on another
 * server imports), checking what it sees. It allocates physical memory on
 * device 0 (fabric memory: this server's part of the fabric window),
 * writes 123 into each of its 1024 ints (aclrtMemcpy), exports the
 * memory without PID validation, sends the handle to the client that asks
 * over UDP, waits for the client's word that it wrote 456 into each, and
 * checks that it did.
 * usage: fabric_server [PORT]   (default 8888; run with npuipc-fabricd up)
 */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "example_util.h"

#define COUNT 1024

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 8888;
	aclrtPhysicalMemProp prop = { 0 };
	aclrtMemAccessDesc desc = { 0 };
	aclrtMemFabricHandle shareable = { { 0 } };
	aclrtDrvMemHandle handle = NULL;
	size_t granularity = 0, size;
	static int32_t data[COUNT];
	struct sockaddr_in addr = { 0 }, client;
	socklen_t client_len;
	struct timeval tv = { 240, 0 };
	void *virPtr = NULL;
	int sock, i, ok = 1;
	char msg[8];
	ssize_t n;

	example_name = "fabric server";
	if (port <= 0 || port > 65535)
		return 2;
	CHECK(aclInit(NULL));
	CHECK(aclrtSetDevice(0));
	prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.memAttr = ACL_HBM_MEM_NORMAL;
	CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
	size = (sizeof(data) + granularity - 1) / granularity * granularity;
	CHECK(aclrtMallocPhysical(&handle, size, &prop, 0));
	CHECK(aclrtReserveMemAddress(&virPtr, size, 0, NULL, 0));
	CHECK(aclrtMapMem(virPtr, size, 0, handle, 0));
	desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	desc.location.id = 0;
	CHECK(aclrtMemSetAccess(virPtr, size, &desc, 1));
	for (i = 0; i < COUNT; i++)
		data[i] = 123;
	CHECK(aclrtMemcpy(virPtr, sizeof(data), data, sizeof(data), ACL_MEMCPY_HOST_TO_DEVICE));
	SAY("wrote 123 into %d ints of physical memory at %p", COUNT, virPtr);
	CHECK(aclrtMemExportToShareableHandleV2(handle, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
						ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &shareable));
	SAY("exported a fabric handle");

	sock = socket(AF_INET, SOCK_DGRAM, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = INADDR_ANY;
	addr.sin_port = htons(port);
	if (sock < 0 || bind(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		fprintf(stderr, "fabric server: cannot serve UDP port %d\n", port);
		return 1;
	}
	SAY("waiting on UDP port %d", port);
	/* A "hello" (sent again until answered) gets the handle; "done" ends it. */
	for (;;) {
		client_len = sizeof(client);
		n = recvfrom(sock, msg, sizeof(msg), 0, (struct sockaddr *)&client, &client_len);
		if (n < 0) {
			fprintf(stderr, "fabric server: no word from the client\n");
			return 1;
		}
		if (n == 5 && !memcmp(msg, "hello", 5)) {
			sendto(sock, &shareable, sizeof(shareable), 0, (struct sockaddr *)&client, client_len);
		} else if (n == 4 && !memcmp(msg, "done", 4)) {
			sendto(sock, "ack", 3, 0, (struct sockaddr *)&client, client_len);
			break;
		}
	}
	/* A lost "ack": the client says "done" again; answer for 2 s more. */
	tv.tv_sec = 2;
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recvfrom(sock, msg, sizeof(msg), 0, (struct sockaddr *)&client, &client_len)) >= 0)
		if (n == 4 && !memcmp(msg, "done", 4))
			sendto(sock, "ack", 3, 0, (struct sockaddr *)&client, client_len);
	close(sock);

	CHECK(aclrtMemcpy(data, sizeof(data), virPtr, sizeof(data), ACL_MEMCPY_DEVICE_TO_HOST));
	for (i = 0; i < COUNT; i++)
		ok &= data[i] == 456;
	SAY("the client is done; the memory holds %d ... %d: %s", data[0], data[COUNT - 1],
	    ok ? "the client's writes are here" : "UNEXPECTED");
	CHECK(aclrtUnmapMem(virPtr));
	CHECK(aclrtReleaseMemAddress(virPtr));
	CHECK(aclrtFreePhysical(handle));
	CHECK(aclrtResetDeviceForce(0));
	CHECK(aclFinalize());
	SAY("unmapped, released, freed");
	return ok ? 0 : 1;
}
