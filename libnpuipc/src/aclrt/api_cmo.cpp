// SPDX-License-Identifier: MIT
// Cache maintenance (aclrtCmoAsync, the barrier and descriptor forms) and
// aclrtDeviceL2CacheFlush (aclrt_memory(3)). A mock NPU's memory is the host's
// RAM, which the CPU's coherent caches serve for the copy engine and for
// every mapping alike: there is no device cache to prefetch into, write
// back, invalidate or flush, and a barrier has no operation to wait for.
// The calls check what CANN checks, and that their memory is device memory
// of the stream's device, and then have nothing left to do.
#include <cstring>

#include "aclrt/capture.h"
#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// The descriptor aclrtCmoSetDesc writes, laid out and filled as CANN's
// A2/A3 runtime does (the source and length; aclrtCmoGetDescSize reports
// its size).
struct CmoDesc {
    uint32_t reserved[2];
    uint16_t outer_count;
    uint16_t inner_count;
    uint32_t inner_length;
    uint64_t src;
    uint32_t outer_stride;
    uint32_t inner_stride;
};
static_assert(sizeof(CmoDesc) == 32, "CANN's CMO descriptor is 32 bytes");

constexpr uint32_t kLastCmoType = ACL_RT_CMO_TYPE_FLUSH;

// `size` bytes at `ptr`: device memory of `device`.
aclError check_device_range(const void *ptr, size_t size, uint32_t device, const char *what)
{
    Place p;
    if (aclError err = locate(Runtime::get(), ptr, size, p))
        return err;
    if (!p.alloc)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s %p is not device memory", what, ptr);
    if (p.alloc->device != device)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s %p is memory of another device than the stream's", what, ptr);
    return ACL_SUCCESS;
}


// The descriptor and barrier forms are tasks of model streams in CANN.
aclError require_model_stream(const Stream &s)
{
    if (!s.bound.load(std::memory_order_acquire) && !s.capturing.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_INTERNAL_ERROR,
                    "the stream is in no model: bind it with aclmdlRIBindStream or capture it first");
    return ACL_SUCCESS;
}

// A task with nothing to do still meets a stopped context, as a launch does.
aclError no_operation(const Stream &s)
{
    return stopped_context_error(s);
}

} // namespace

extern "C" {

aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream)
{
    return api("aclrtCmoAsync", [&] {
        if (!src)
            return fail(ACL_ERROR_INVALID_PARAM, "src is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        if (static_cast<uint32_t>(cmoType) > kLastCmoType)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "cmoType %d is not a cache operation",
                        static_cast<int>(cmoType));
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of_current_context(stream, s))
            return err;
        if (s->bound.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "a stream bound to a model takes aclrtCmoAsyncWithDesc, not aclrtCmoAsync");
        if (aclError err = check_device_range(src, size, s->device, "src"))
            return err;
        return no_operation(*s);
    });
}

aclError aclrtCmoAsyncWithBarrier(void *src, size_t size, aclrtCmoType cmoType, uint32_t barrierId,
                                  aclrtStream stream)
{
    return api("aclrtCmoAsyncWithBarrier", [&] {
        if (!src)
            return fail(ACL_ERROR_INVALID_PARAM, "src is NULL");
        if (size == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of_current_context(stream, s))
            return err;
        if (static_cast<uint32_t>(cmoType) > kLastCmoType)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "cmoType %d is not a cache operation",
                        static_cast<int>(cmoType));
        // Only an invalidation carries a barrier others may wait for.
        if (cmoType == ACL_RT_CMO_TYPE_INVALID && barrierId == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "an invalidation needs a barrierId above 0");
        if (cmoType != ACL_RT_CMO_TYPE_INVALID && barrierId != 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "only an invalidation takes a barrierId (%u given)", barrierId);
        if (aclError err = require_model_stream(*s))
            return err;
        if (aclError err = check_device_range(src, size, s->device, "src"))
            return err;
        return no_operation(*s);
    });
}

aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo *taskInfo, aclrtStream stream, uint32_t flag)
{
    (void)flag; // reserved; CANN does not check it
    return api("aclrtCmoWaitBarrier", [&] {
        if (!taskInfo)
            return fail(ACL_ERROR_INVALID_PARAM, "taskInfo is NULL");
        if (taskInfo->barrierNum == 0 || taskInfo->barrierNum > ACL_RT_CMO_MAX_BARRIER_NUM)
            return fail(ACL_ERROR_INVALID_PARAM, "barrierNum is %zu, not 1 to %u", taskInfo->barrierNum,
                        ACL_RT_CMO_MAX_BARRIER_NUM);
        for (size_t i = 0; i < taskInfo->barrierNum; i++) {
            if (taskInfo->cmoInfo[i].cmoType != ACL_RT_CMO_TYPE_INVALID)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "cmoInfo[%zu] waits for a cache operation other than an invalidation", i);
            if (taskInfo->cmoInfo[i].barrierId == 0)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "cmoInfo[%zu].barrierId is 0", i);
        }
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of_current_context(stream, s))
            return err;
        if (aclError err = require_model_stream(*s))
            return err;
        return no_operation(*s);
    });
}

aclError aclrtCmoGetDescSize(size_t *size)
{
    return api("aclrtCmoGetDescSize", [&] {
        if (!size)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is NULL");
        *size = sizeof(CmoDesc);
        return ACL_SUCCESS;
    });
}

aclError aclrtCmoSetDesc(void *cmoDesc, void *src, size_t size)
{
    return api("aclrtCmoSetDesc", [&] {
        if (!cmoDesc)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "cmoDesc is NULL");
        if (!src)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "src is NULL");
        if (size == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
        uint32_t device = 0;
        std::shared_ptr<const Device> dev;
        if (aclError err = Runtime::get().current_device(device, dev))
            return err;
        if (aclError err = check_device_range(cmoDesc, sizeof(CmoDesc), device, "cmoDesc"))
            return err;
        CmoDesc desc;
        std::memset(&desc, 0, sizeof(desc));
        desc.inner_length = static_cast<uint32_t>(size); // CANN keeps 32 bits
        desc.src = reinterpret_cast<uintptr_t>(src);
        return aclrtMemcpy(cmoDesc, sizeof(desc), &desc, sizeof(desc), ACL_MEMCPY_HOST_TO_DEVICE);
    });
}

aclError aclrtCmoAsyncWithDesc(void *cmoDesc, aclrtCmoType cmoType, aclrtStream stream, const void *reserve)
{
    return api("aclrtCmoAsyncWithDesc", [&] {
        if (reserve)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "reserve must be NULL");
        if (!cmoDesc)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "cmoDesc is NULL");
        if (static_cast<uint32_t>(cmoType) > kLastCmoType)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "cmoType %d is not a cache operation",
                        static_cast<int>(cmoType));
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of_current_context(stream, s))
            return err;
        if (aclError err = require_model_stream(*s))
            return err;
        if (aclError err = check_device_range(cmoDesc, sizeof(CmoDesc), s->device, "cmoDesc"))
            return err;
        return no_operation(*s);
    });
}

aclError aclrtDeviceL2CacheFlush(void *rsv)
{
    return api("aclrtDeviceL2CacheFlush", [&] {
        if (rsv)
            return fail(ACL_ERROR_INVALID_PARAM, "rsv must be NULL");
        uint32_t device = 0;
        std::shared_ptr<const Device> dev;
        return Runtime::get().current_device(device, dev);
    });
}

} // extern "C"
