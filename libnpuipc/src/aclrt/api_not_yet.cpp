// SPDX-License-Identifier: MIT
// The VMM entry points: declared by the headers and exported, so CANN
// programs link; they return ACL_ERROR_RT_FEATURE_NOT_SUPPORT until they are
// implemented (Documentation/library.md).
#include "aclrt/runtime.h"

using namespace npuipc_rt;

namespace {

aclError not_yet(const char *name)
{
    return api(name, [] {
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not implemented yet by libnpuipc");
    });
}

} // namespace

extern "C" {

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *, aclrtMemGranularityOptions,
                                          size_t *)
{
    return not_yet("aclrtMemGetAllocationGranularity");
}
aclError aclrtMallocPhysical(aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *, uint64_t)
{
    return not_yet("aclrtMallocPhysical");
}
aclError aclrtFreePhysical(aclrtDrvMemHandle)
{
    return not_yet("aclrtFreePhysical");
}
aclError aclrtReserveMemAddress(void **, size_t, size_t, void *, uint64_t)
{
    return not_yet("aclrtReserveMemAddress");
}
aclError aclrtReleaseMemAddress(void *)
{
    return not_yet("aclrtReleaseMemAddress");
}
aclError aclrtMapMem(void *, size_t, size_t, aclrtDrvMemHandle, uint64_t)
{
    return not_yet("aclrtMapMem");
}
aclError aclrtUnmapMem(void *)
{
    return not_yet("aclrtUnmapMem");
}
aclError aclrtMemSetAccess(void *, size_t, aclrtMemAccessDesc *, size_t)
{
    return not_yet("aclrtMemSetAccess");
}
aclError aclrtMemGetAccess(void *, aclrtMemLocation *, uint64_t *)
{
    return not_yet("aclrtMemGetAccess");
}
aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle, aclrtMemHandleType, uint64_t,
                                         uint64_t *)
{
    return not_yet("aclrtMemExportToShareableHandle");
}
aclError aclrtMemImportFromShareableHandle(uint64_t, int32_t, aclrtDrvMemHandle *)
{
    return not_yet("aclrtMemImportFromShareableHandle");
}
aclError aclrtMemSetPidToShareableHandle(uint64_t, int32_t *, size_t)
{
    return not_yet("aclrtMemSetPidToShareableHandle");
}
aclError aclrtMemRetainAllocationHandle(void *, aclrtDrvMemHandle *)
{
    return not_yet("aclrtMemRetainAllocationHandle");
}
aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle, aclrtPhysicalMemProp *)
{
    return not_yet("aclrtMemGetAllocationPropertiesFromHandle");
}

} // extern "C"
