// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process event sharing, process A: create an IPC event,
 * record it on a stream behind 300 ms of work, and hand its handle over
 * through a file; keep it until the borrower is done with it.
 * usage: ipc_event_lender DIR
 */
#include <pthread.h>

#include "example_util.h"

static void slow_work(void *arg)
{
	(void)arg;
	usleep(300000);
}

int main(int argc, char **argv)
{
	aclrtEvent event;
	aclrtStream stream;
	aclrtIpcEventHandle handle;
	pthread_t self = pthread_self();
	char done;

	example_name = "event lender A";
	if (argc != 2)
		return 2;
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtIpcGetEventHandle(event, &handle));
	SAY("exported IPC event handle %s", handle.reserved);
	/* The work: a host callback that holds the stream for 300 ms. */
	CHECK(aclrtSubscribeReport((uint64_t)self, stream));
	CHECK(aclrtLaunchCallback(slow_work, NULL, ACL_CALLBACK_BLOCK, stream));
	CHECK(aclrtRecordEvent(event, stream));
	SAY("recorded the event behind 300 ms of work");
	write_file(argv[1], "ipc_event", &handle, ACL_IPC_EVENT_HANDLE_SIZE);
	CHECK(aclrtProcessReport(10000));
	CHECK(aclrtSynchronizeStream(stream));
	SAY("the record has completed");
	/* The exporter keeps the event until the importer is done with it. */
	read_file(argv[1], "ipc_event_done", &done, 1);
	CHECK(aclrtUnSubscribeReport((uint64_t)self, stream));
	CHECK(aclrtDestroyEvent(event));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDeviceForce(0));
	return 0;
}
