// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process event sharing, process B: open the lender's IPC
 * event on device 1, make a stream wait for its record, and synchronize:
 * the synchronize returns only once the lender's record has completed.
 * usage: ipc_event_borrower DIR
 */
#include "example_util.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	aclrtStream stream;
	aclrtEvent event;
	aclrtIpcEventHandle handle;
	aclrtEventRecordedStatus status;
	double t0, waited;

	example_name = "event borrower B";
	if (argc != 2)
		return 2;
	read_file(argv[1], "ipc_event", &handle, ACL_IPC_EVENT_HANDLE_SIZE);
	CHECK(aclrtSetDevice(1));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtIpcOpenEventHandle(handle, &event));
	SAY("opened the IPC event on device 1");
	t0 = now_ms();
	CHECK(aclrtStreamWaitEvent(stream, event));
	CHECK(aclrtSynchronizeStream(stream));
	waited = now_ms() - t0;
	CHECK(aclrtQueryEventStatus(event, &status));
	SAY("the stream's wait returned after %.0f ms; event status %s", waited,
	    status == ACL_EVENT_RECORDED_STATUS_COMPLETE ? "COMPLETE" : "NOT_READY");
	CHECK(aclrtDestroyEvent(event));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDeviceForce(1));
	write_file(argv[1], "ipc_event_done", "1", 1);
	return status == ACL_EVENT_RECORDED_STATUS_COMPLETE ? 0 : 1;
}
