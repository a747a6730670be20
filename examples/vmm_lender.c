// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process memory sharing with the VMM API, process A:
 * allocate physical memory on device 0, map it into a reserved address
 * range, fill it, export a 64-bit shareable handle through a file, and
 * read back what the borrower wrote.
 * usage: vmm_lender DIR
 */
#include "example_util.h"

int main(int argc, char **argv)
{
	const size_t dataSize = 1024 * sizeof(float);
	aclrtPhysicalMemProp prop = { 0 };
	aclrtMemAccessDesc desc = { 0 };
	aclrtDrvMemHandle handle = NULL;
	size_t granularity = 0, alignedSize;
	uint64_t shareableHandle = 0;
	void *virPtr = NULL;
	unsigned char *bytes;
	char done;
	int ok;

	example_name = "vmm lender A";
	if (argc != 2)
		return 2;
	CHECK(aclrtSetDevice(0));
	prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.memAttr = ACL_HBM_MEM_NORMAL;
	CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
	alignedSize = ((dataSize + granularity - 1) / granularity) * granularity;
	CHECK(aclrtMallocPhysical(&handle, alignedSize, &prop, 0));
	CHECK(aclrtReserveMemAddress(&virPtr, alignedSize, 0, NULL, 0));
	CHECK(aclrtMapMem(virPtr, alignedSize, 0, handle, 0));
	desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	desc.location.id = 0;
	desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	CHECK(aclrtMemSetAccess(virPtr, alignedSize, &desc, 1));
	bytes = virPtr;
	memset(bytes, 'V', alignedSize);
	SAY("mapped %zu bytes of physical memory at %p (granularity %zu), filled with 'V'", alignedSize,
	    virPtr, granularity);
	CHECK(aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
					      ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, &shareableHandle));
	SAY("exported shareable handle 0x%016llx", (unsigned long long)shareableHandle);
	write_file(argv[1], "vmm_mem", &shareableHandle, sizeof(shareableHandle));
	read_file(argv[1], "vmm_mem_done", &done, 1);
	ok = memcmp(bytes, "WWWW", 4) == 0 && bytes[4] == 'V';
	SAY("borrower is done; the memory now starts \"%.8s\": %s", (char *)bytes,
	    ok ? "the borrower's write is here" : "UNEXPECTED");
	CHECK(aclrtUnmapMem(virPtr));
	CHECK(aclrtReleaseMemAddress(virPtr));
	CHECK(aclrtFreePhysical(handle));
	CHECK(aclrtResetDeviceForce(0));
	SAY("unmapped, released, freed");
	return ok ? 0 : 1;
}
