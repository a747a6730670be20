// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process notify sharing, process B: import the lender's
 * notify on device 1 and record it from a stream.
 * usage: ipc_notify_borrower DIR
 */
#include "example_util.h"

int main(int argc, char **argv)
{
	char key[65];
	aclrtNotify notify;
	aclrtStream stream;

	example_name = "notify borrower B";
	if (argc != 2)
		return 2;
	read_file(argv[1], "ipc_notify", key, sizeof(key));
	CHECK(aclrtSetDevice(1));
	CHECK(aclrtCreateStream(&stream));
	CHECK(aclrtNotifyImportByKey(&notify, key, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS));
	SAY("imported the notify on device 1");
	CHECK(aclrtRecordNotify(notify, stream));
	CHECK(aclrtSynchronizeStream(stream));
	SAY("recorded it");
	CHECK(aclrtDestroyNotify(notify));
	CHECK(aclrtDestroyStream(stream));
	CHECK(aclrtResetDeviceForce(1));
	return 0;
}
