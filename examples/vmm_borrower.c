// SPDX-License-Identifier: MIT
/*
 * The seed's inter-process memory sharing with the VMM API, process B:
 * import the lender's shareable handle on device 0, map it into a range of
 * its own, read it and write into it.
 * usage: vmm_borrower DIR
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
	int32_t deviceId = 0;
	void *virPtr = NULL;
	unsigned char *bytes;
	int ok;

	example_name = "vmm borrower B";
	if (argc != 2)
		return 2;
	read_file(argv[1], "vmm_mem", &shareableHandle, sizeof(shareableHandle));
	CHECK(aclrtMemImportFromShareableHandle(shareableHandle, deviceId, &handle));
	prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.memAttr = ACL_HBM_MEM_NORMAL;
	CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
	alignedSize = ((dataSize + granularity - 1) / granularity) * granularity;
	CHECK(aclrtReserveMemAddress(&virPtr, alignedSize, 0, NULL, 0));
	CHECK(aclrtMapMem(virPtr, alignedSize, 0, handle, 0));
	desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	desc.location.id = 0;
	desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	CHECK(aclrtMemSetAccess(virPtr, alignedSize, &desc, 1));
	bytes = virPtr;
	ok = bytes[0] == 'V' && bytes[alignedSize - 1] == 'V';
	SAY("imported handle 0x%016llx and mapped it at %p; it starts \"%.4s\": %s",
	    (unsigned long long)shareableHandle, virPtr, (char *)bytes, ok ? "the lender's data" : "UNEXPECTED");
	memcpy(bytes, "WWWW", 4);
	SAY("wrote \"WWWW\" at the start");
	CHECK(aclrtUnmapMem(virPtr));
	CHECK(aclrtReleaseMemAddress(virPtr));
	CHECK(aclrtFreePhysical(handle));
	SAY("unmapped, released, freed");
	write_file(argv[1], "vmm_mem_done", "1", 1);
	return ok ? 0 : 1;
}
