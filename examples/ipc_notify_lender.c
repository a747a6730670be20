// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process notify sharing, process A (the creator, the only
 * one that may wait): create a notify, hand its key over through a file,
 * and make a stream wait for the borrower's record (at most 30 s).
 * usage: ipc_notify_lender DIR
 */
#include "example_util.h"

int main(int argc, char **argv)
{
	char key[65];
	aclrtNotify notify;
	aclrtStream stream;
	aclError waited;

	example_name = "notify lender A";
	if (argc != 2)
		return 2;
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
	CHECK(aclrtNotifyGetExportKey(notify, key, sizeof(key),
				      ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
	SAY("exported notify key %s", key);
	CHECK(aclrtWaitAndResetNotify(notify, stream, 30));
	SAY("queued a wait on the notify");
	write_file(argv[1], "ipc_notify", key, sizeof(key));
	waited = aclrtSynchronizeStream(stream);
	SAY("the wait %s", waited == ACL_SUCCESS ? "was satisfied by the borrower's record" : "FAILED");
	CHECK(aclrtDestroyNotify(notify));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDeviceForce(0));
	return waited == ACL_SUCCESS ? 0 : 1;
}
