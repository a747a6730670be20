// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process memory sharing, process A (lender): allocate
 * device memory on device 0, fill it, export a key, hand the key over
 * through a file, and read back what the borrower wrote into it.
 * usage: ipc_memory_lender DIR [withpid]
 * withpid: as CANN's "withpid" samples, the key is exported with PID
 * validation and lists the borrower's aclrtDeviceGetBareTgid, which the
 * borrower writes to DIR/borrower_pid.
 */
#include "example_util.h"

int main(int argc, char **argv)
{
	const size_t size = 2 << 20; /* a multiple of the 2 MiB page */
	char key[65];
	void *ptrA = NULL;
	unsigned char *bytes;
	char done;
	int ok;

	example_name = "memory lender A";
	if (argc != 2 && !(argc == 3 && strcmp(argv[2], "withpid") == 0))
		return 2;
	CHECK(aclrtSetDevice(0));
	CHECK(aclrtMalloc(&ptrA, size, ACL_MEM_MALLOC_HUGE_FIRST));
	bytes = ptrA;
	memset(bytes, 'A', size); /* device memory is host-visible */
	SAY("allocated %zu bytes on device 0, filled with 'A'", size);
	if (argc == 3) {
		int32_t pid;

		CHECK(aclrtIpcMemGetExportKey(ptrA, size, key, sizeof(key), 0));
		read_file(argv[1], "borrower_pid", &pid, sizeof(pid));
		CHECK(aclrtIpcMemSetImportPid(key, &pid, 1));
		SAY("exported key %s for the borrower's bare tgid %d only", key, pid);
	} else {
		CHECK(aclrtIpcMemGetExportKey(ptrA, size, key, sizeof(key),
					      ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
		SAY("exported key %s", key);
	}
	write_file(argv[1], "ipc_mem", key, sizeof(key));
	read_file(argv[1], "ipc_mem_done", &done, 1);
	ok = memcmp(bytes, "BBBBBBBB", 8) == 0 && bytes[8] == 'A' && bytes[size - 1] == 'A';
	SAY("borrower is done; the memory now starts \"%.12s\": %s", (char *)bytes,
	    ok ? "the borrower's write is here" : "UNEXPECTED");
	CHECK(aclrtIpcMemClose(key));
	CHECK(aclrtFree(ptrA));
	CHECK(aclrtResetDeviceForce(0));
	SAY("closed the key, freed the memory");
	return ok ? 0 : 1;
}
