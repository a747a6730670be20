// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process memory sharing, process B (borrower): read the
 * key from a file, import the memory on device 1 (peer access enabled by
 * the import flag), read it, write into it, and close it.
 * usage: ipc_memory_borrower DIR [withpid]
 * withpid: first writes its aclrtDeviceGetBareTgid to DIR/borrower_pid,
 * for the lender's allowlist.
 */
#include "example_util.h"

int main(int argc, char **argv)
{
	char key[65];
	void *ptrB = NULL;
	unsigned char *bytes;
	int ok;

	example_name = "memory borrower B";
	if (argc != 2 && !(argc == 3 && strcmp(argv[2], "withpid") == 0))
		return 2;
	CHECK(aclrtSetDevice(1));
	if (argc == 3) {
		int32_t pid;

		CHECK(aclrtDeviceGetBareTgid(&pid));
		SAY("my bare tgid (host PID) is %d; pid in my namespace is %d", pid, (int)getpid());
		write_file(argv[1], "borrower_pid", &pid, sizeof(pid));
	}
	read_file(argv[1], "ipc_mem", key, sizeof(key));
	CHECK(aclrtIpcMemImportByKey(&ptrB, key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS));
	bytes = ptrB;
	ok = bytes[0] == 'A' && bytes[(2 << 20) - 1] == 'A';
	SAY("imported the key on device 1; the memory starts \"%.8s\": %s", (char *)bytes,
	    ok ? "the lender's data" : "UNEXPECTED");
	memcpy(bytes, "BBBBBBBB", 8);
	SAY("wrote \"BBBBBBBB\" at the start");
	CHECK(aclrtIpcMemClose(key));
	CHECK(aclrtResetDeviceForce(1));
	SAY("closed the import");
	write_file(argv[1], "ipc_mem_done", "1", 1);
	return ok ? 0 : 1;
}
