// SPDX-License-Identifier: MIT
// Copies whose addresses the device reads when the stream gets there
// (aclrt_memory(3)): aclrtMemcpyAsyncWithOffset takes the device addresses
// of two 64-bit words holding the base addresses, and aclrtMemcpyAsyncWithDesc
// a descriptor in device memory that aclrtSetMemcpyDesc filled, so earlier
// work on the stream (or a model's update) may change what is copied. The
// driver's copy jobs name their buffers when they are queued, so these are
// tasks of the runtime's copier thread in the stream's order: it reads the
// words once the stream reaches the copy, checks that both ranges are this
// process's device memory, and copies; a bad address there fails the copy,
// for the stream's next synchronize.
#include <cstring>

#include "aclrt/capture.h"
#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace npuipc_rt {

aclError device_range(const void *ptr, size_t count, uint32_t device, const char *what,
                      std::shared_ptr<Allocation> &hold, void *&at)
{
    Place p;
    if (aclError err = locate(Runtime::get(), ptr, count, p))
        return err;
    if (!p.alloc)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s %p is not device memory", what, ptr);
    if (p.alloc->device != device)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s %p is memory of another device than the stream's", what, ptr);
    if (aclError err = stable_address(*p.alloc, ptr, at))
        return err;
    hold = std::move(p.alloc);
    return ACL_SUCCESS;
}

} // namespace npuipc_rt

namespace {

// The descriptor aclrtSetMemcpyDesc writes, laid out as CANN's A2/A3
// runtime lays it (aclrtGetMemcpyDescSize reports its size).
struct MemcpyDesc {
    uint32_t reserved[3];
    uint32_t length;
    uint64_t src;
    uint64_t dst;
};
static_assert(sizeof(MemcpyDesc) == 32, "CANN's copy descriptor is 32 bytes");

constexpr size_t kMaxCount = 4ULL << 30;          // the copy engine's limit in CANN
constexpr size_t kMaxOffset = 0xFFFFFFFFFFFFULL;  // 48 bits of the task's offsets
constexpr uintptr_t kDescAlignment = 64;

// Sets the copy's ranges from the addresses read at run time.
aclError resolve_ranges(HostCopy &copy, uint64_t dst, uint64_t src, size_t count)
{
    copy.count = count;
    if (count == 0)
        return ACL_SUCCESS;
    const uint32_t device = copy.stream->device;
    void *at = nullptr;
    if (aclError err = device_range(reinterpret_cast<void *>(dst), count, device, "the destination read from device memory",
                                    copy.dest, at))
        return err;
    copy.dst = at;
    if (aclError err = device_range(reinterpret_cast<void *>(src), count, device, "the source read from device memory",
                                    copy.source, at))
        return err;
    copy.src = at;
    return ACL_SUCCESS;
}

// The stream a call names, of the current context, not stopped.
aclError copy_stream(aclrtStream handle, std::shared_ptr<Stream> &s)
{
    if (aclError err = find_stream(handle, s))
        return err;
    return stopped_context_error(*s);
}

aclError copy_with_offset(void **dst, size_t destMax, size_t dstDataOffset, const void **src, size_t count,
                          size_t srcDataOffset, aclrtStream stream)
{
    std::shared_ptr<Stream> s;
    if (aclError err = copy_stream(stream, s))
        return err;
    // The words holding the base addresses, read when the stream gets there.
    std::shared_ptr<Allocation> dst_word, src_word;
    void *dst_at = nullptr, *src_at = nullptr;
    if (aclError err = device_range(dst, sizeof(uint64_t), s->device, "dst", dst_word, dst_at))
        return err;
    if (aclError err = device_range(src, sizeof(uint64_t), s->device, "src", src_word, src_at))
        return err;
    if (captured(*s, "aclrtMemcpyAsyncWithOffset", [=](aclrtStream to) {
            return copy_with_offset(dst, destMax, dstDataOffset, src, count, srcDataOffset, to);
        }))
        return ACL_SUCCESS;
    HostCopy copy;
    copy.stream = s;
    copy.resolve = [=](HostCopy &c) {
        (void)dst_word; // held until the copy is done
        (void)src_word;
        uint64_t dst_base, src_base;
        std::memcpy(&dst_base, dst_at, sizeof(dst_base));
        std::memcpy(&src_base, src_at, sizeof(src_base));
        if (dst_base > UINT64_MAX - dstDataOffset || src_base > UINT64_MAX - srcDataOffset)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "a base address read from device memory plus its offset wraps");
        return resolve_ranges(c, dst_base + dstDataOffset, src_base + srcDataOffset, count);
    };
    return queue_copy(Runtime::get(), std::move(copy));
}

aclError copy_with_desc(void *desc, aclrtStream stream)
{
    std::shared_ptr<Stream> s;
    if (aclError err = copy_stream(stream, s))
        return err;
    std::shared_ptr<Allocation> held;
    void *at = nullptr;
    if (aclError err = device_range(desc, sizeof(MemcpyDesc), s->device, "desc", held, at))
        return err;
    if (captured(*s, "aclrtMemcpyAsyncWithDesc", [=](aclrtStream to) { return copy_with_desc(desc, to); }))
        return ACL_SUCCESS;
    HostCopy copy;
    copy.stream = s;
    copy.resolve = [held, at](HostCopy &c) {
        MemcpyDesc d;
        std::memcpy(&d, at, sizeof(d));
        return resolve_ranges(c, d.dst, d.src, d.length);
    };
    return queue_copy(Runtime::get(), std::move(copy));
}

} // namespace

extern "C" {

aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src,
                                    size_t count, size_t srcDataOffset, aclrtMemcpyKind kind, aclrtStream stream)
{
    return api("aclrtMemcpyAsyncWithOffset", [&] {
        if (count == 0)
            return ACL_SUCCESS; // as CANN, before anything else
        if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "kind %d: this copy is ACL_MEMCPY_INNER_DEVICE_TO_DEVICE only",
                        static_cast<int>(kind));
        if (!dst || !src)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%s is NULL", dst ? "src" : "dst");
        if (count > destMax)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "count %zu is larger than destMax %zu", count, destMax);
        if (count > kMaxCount)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "count %zu is above 4 GiB", count);
        if (dstDataOffset > kMaxOffset || srcDataOffset > kMaxOffset)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "an offset is above 48 bits");
        if (dstDataOffset >= destMax || count > destMax - dstDataOffset)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "%zu bytes at offset %zu do not fit the destination's %zu bytes", count, dstDataOffset,
                        destMax);
        return copy_with_offset(dst, destMax, dstDataOffset, src, count, srcDataOffset, stream);
    });
}

aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize)
{
    return api("aclrtGetMemcpyDescSize", [&] {
        if (!descSize)
            return fail(ACL_ERROR_INVALID_PARAM, "descSize is NULL");
        if (static_cast<uint32_t>(kind) > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown copy kind %d", static_cast<int>(kind));
        if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "descriptors describe ACL_MEMCPY_INNER_DEVICE_TO_DEVICE copies only");
        *descSize = sizeof(MemcpyDesc);
        return ACL_SUCCESS;
    });
}

aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count,
                            void *config)
{
    return api("aclrtSetMemcpyDesc", [&] {
        if (!desc)
            return fail(ACL_ERROR_INVALID_PARAM, "desc is NULL");
        if (static_cast<uint32_t>(kind) > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown copy kind %d", static_cast<int>(kind));
        if (!srcAddr || !dstAddr)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", srcAddr ? "dstAddr" : "srcAddr");
        if (count == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "count is 0");
        if (config)
            return fail(ACL_ERROR_INVALID_PARAM, "config must be NULL");
        if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "descriptors describe ACL_MEMCPY_INNER_DEVICE_TO_DEVICE copies only");
        if (count > UINT32_MAX) // the descriptor's length is 32 bits
            return fail(ACL_ERROR_RT_PARAM_INVALID, "count %zu does not fit the descriptor's 32 bits", count);
        if (reinterpret_cast<uintptr_t>(desc) % kDescAlignment)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "desc %p is not 64-byte aligned", desc);
        uint32_t device = 0;
        std::shared_ptr<const Device> dev;
        if (aclError err = Runtime::get().current_device(device, dev))
            return err;
        std::shared_ptr<Allocation> held;
        void *at = nullptr;
        if (aclError err = device_range(desc, sizeof(MemcpyDesc), device, "desc", held, at))
            return err;
        if (aclError err = device_range(srcAddr, count, device, "srcAddr", held, at))
            return err;
        if (aclError err = device_range(dstAddr, count, device, "dstAddr", held, at))
            return err;
        MemcpyDesc d;
        std::memset(&d, 0, sizeof(d));
        d.length = static_cast<uint32_t>(count);
        d.src = reinterpret_cast<uintptr_t>(srcAddr);
        d.dst = reinterpret_cast<uintptr_t>(dstAddr);
        return aclrtMemcpy(desc, sizeof(d), &d, sizeof(d), ACL_MEMCPY_HOST_TO_DEVICE);
    });
}

aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream)
{
    return api("aclrtMemcpyAsyncWithDesc", [&] {
        if (!desc)
            return fail(ACL_ERROR_INVALID_PARAM, "desc is NULL");
        if (static_cast<uint32_t>(kind) > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown copy kind %d", static_cast<int>(kind));
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL: this copy takes no default stream");
        if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "descriptors describe ACL_MEMCPY_INNER_DEVICE_TO_DEVICE copies only");
        return copy_with_desc(desc, stream);
    });
}

} // extern "C"
