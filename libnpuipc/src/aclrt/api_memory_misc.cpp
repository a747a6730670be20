// SPDX-License-Identifier: MIT
// The smaller memory calls: 32-bit sets (the driver's word FILL on device
// memory), cached memory and frees after a device synchronize, cache
// maintenance on a coherent mock NPU, memory type checks, and the primary
// context's state. CANN's checks and codes, in CANN's order.
#include <cstring>

#include "aclrt/memory_place.h"
#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// Memory types aclrtCheckMemType knows: CANN's runtime takes the bit 0x20
// for reserved addresses, not its header's ACL_RT_MEM_TYPE_RSVD (0x10).
constexpr uint32_t kMemTypeRsvd = 0x20;
constexpr uint32_t kKnownMemTypes = ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | kMemTypeRsvd;

// CANN's checks of a 32-bit set; where the words lie in `p` (p.alloc null:
// aclrtMallocHost memory), `bytes` their size.
aclError check_memset_d32(Runtime &rt, void *ptr, size_t memSize, size_t N, Place &p, size_t &bytes)
{
    if (!ptr)
        return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
    if (reinterpret_cast<uintptr_t>(ptr) % sizeof(uint32_t))
        return fail(ACL_ERROR_INVALID_PARAM, "ptr %p is not 4-byte aligned", ptr);
    if (N > memSize / sizeof(uint32_t))
        return fail(ACL_ERROR_INVALID_PARAM, "%zu words do not fit in memSize %zu", N, memSize);
    bytes = N * sizeof(uint32_t);
    if (aclError err = locate(rt, ptr, bytes, p))
        return err;
    uintptr_t base = 0;
    size_t size = 0;
    if (!p.alloc && !(host_allocation_of(rt, ptr, base, size) &&
                      bytes <= size - (reinterpret_cast<uintptr_t>(ptr) - base)))
        return fail(ACL_ERROR_INVALID_PARAM, "%p is neither device memory nor aclrtMallocHost memory", ptr);
    return ACL_SUCCESS;
}

void set_words(void *ptr, uint32_t value, size_t N)
{
    auto *w = static_cast<uint32_t *>(ptr);
    for (size_t i = 0; i < N; i++)
        w[i] = value;
}

// With a current context, as CANN's cache operations need one.
aclError need_context()
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    return rt.current_context(ctx);
}

// What aclrtFlush and aclrtInvalidate check: the memory of a mock NPU is
// coherent with the host (a mapping of the device's pages), so there is no
// cache to maintain once the arguments are right.
aclError cache_operation(void *devPtr, size_t size)
{
    if (!devPtr)
        return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    if (size == 0)
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    return need_context();
}

} // namespace

extern "C" {

aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N)
{
    return api("aclrtMemsetD32", [&] {
        if (N == 0)
            return ACL_SUCCESS; // as CANN: before the pointer is looked at
        Runtime &rt = Runtime::get();
        Place p;
        size_t bytes = 0;
        if (aclError err = check_memset_d32(rt, ptr, memSize, N, p, bytes))
            return err;
        if (aclError err = check_capture_mode())
            return err;
        if (p.alloc) {
            uint32_t device;
            if (aclError err = working_device(rt, device))
                return err;
            if (aclError err = check_peer(rt, device, p))
                return err;
        }
        set_words(ptr, value, N); // device memory through its mapping
        return ACL_SUCCESS;
    });
}

aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N, aclrtStream stream)
{
    return api("aclrtMemsetD32Async", [&] {
        if (N == 0)
            return ACL_SUCCESS;
        Runtime &rt = Runtime::get();
        Place p;
        size_t bytes = 0;
        if (aclError err = check_memset_d32(rt, ptr, memSize, N, p, bytes))
            return err;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (captured(*s, "aclrtMemsetD32Async",
                     [=](aclrtStream to) { return aclrtMemsetD32Async(ptr, memSize, value, N, to); }))
            return ACL_SUCCESS;
        if (!p.alloc) {
            set_words(ptr, value, N); // as CANN: host memory is set at the call
            return ACL_SUCCESS;
        }
        if (aclError err = require_uapi(*s, 10, "word fills"))
            return err;
        uint32_t handle;
        if (aclError err = buffer_on(rt, *p.alloc, *s, handle))
            return err;
        return submit(*s, prep_fill_u32(handle, p.offset, bytes, value));
    });
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return api("aclrtMallocCached", [&] {
        if (!devPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        // As CANN: the P2P policies fall back to the default one.
        switch (policy) {
        case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
        case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
        case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
        case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
            policy = ACL_MEM_MALLOC_HUGE_FIRST;
            break;
        default:
            break;
        }
        return malloc_device(devPtr, size, policy);
    });
}

aclError aclrtFreeWithDevSync(void *devPtr)
{
    return api("aclrtFreeWithDevSync", [&] {
        if (!devPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
        // The current context's device first; its failure frees nothing.
        if (aclError err = aclrtSynchronizeDevice())
            return err;
        return aclrtFree(devPtr);
    });
}

aclError aclrtFreeHostWithDevSync(void *hostPtr)
{
    return api("aclrtFreeHostWithDevSync", [&] {
        if (!hostPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL");
        if (aclError err = aclrtSynchronizeDevice())
            return err;
        return aclrtFreeHost(hostPtr);
    });
}

aclError aclrtMemFlush(void *devPtr, size_t size)
{
    return api("aclrtMemFlush", [&] { return cache_operation(devPtr, size); });
}

aclError aclrtMemInvalidate(void *devPtr, size_t size)
{
    return api("aclrtMemInvalidate", [&] { return cache_operation(devPtr, size); });
}

aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult,
                           uint32_t reserve)
{
    return api("aclrtCheckMemType", [&] {
        if (!addrList)
            return fail(ACL_ERROR_INVALID_PARAM, "addrList is NULL");
        if (!checkResult)
            return fail(ACL_ERROR_INVALID_PARAM, "checkResult is NULL");
        *checkResult = 0;
        if (reserve != 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "reserve is %u, not 0", reserve);
        if (size == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
        if (memType & ~kKnownMemTypes)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "memType %#x has bits of no memory type", memType);
        if (aclError err = need_context())
            return err;
        // A mock NPU has device memory (aclrtMalloc, mapped VMM memory) and
        // reserved address ranges; no DVPP memory.
        Runtime &rt = Runtime::get();
        for (uint32_t i = 0; i < size; i++) {
            const void *addr = addrList[i];
            std::shared_ptr<Allocation> alloc = addr ? rt.find_allocation(addr, 1) : nullptr;
            const bool dev = alloc && !alloc->physical;
            const bool rsvd = alloc && alloc->physical;
            if (!((memType & ACL_RT_MEM_TYPE_DEV) && dev) && !((memType & kMemTypeRsvd) && rsvd))
                return ACL_SUCCESS; // *checkResult stays 0
        }
        *checkResult = 1;
        return ACL_SUCCESS;
    });
}

aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active)
{
    return api("aclrtGetPrimaryCtxState", [&] {
        if (!active)
            return fail(ACL_ERROR_INVALID_PARAM, "active is NULL");
        if (flags)
            return fail(ACL_ERROR_INVALID_PARAM, "flags is reserved: it must be NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        uint32_t index;
        if (aclError err = rt.check_device_id(deviceId, index))
            return err;
        // Active while the device is set in the process; asking sets nothing.
        auto it = rt.devices.find(index);
        *active = it != rt.devices.end() && it->second.refs > 0 ? 1 : 0;
        return ACL_SUCCESS;
    });
}

} // extern "C"
