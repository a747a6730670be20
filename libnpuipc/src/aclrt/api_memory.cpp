// SPDX-License-Identifier: MIT
// Device memory: aclrtMalloc maps a buffer of the driver into the process,
// so a device pointer is an address the host can read and write; copies
// and fills on streams become the driver's COPY and FILL jobs.
#include <cerrno>
#include <cstring>
#include <sys/mman.h>

#include "aclrt/memory_place.h"
#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

constexpr uint64_t kHugeFirstNormalMax = 1ULL << 20;

uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

// The page classes to try, in order, for a policy (CANN: any value other
// than the eight policies allocates with the default, HUGE_FIRST).
std::vector<PageClass> classes_for(aclrtMemMallocPolicy policy, size_t size)
{
    switch (static_cast<int>(policy)) {
    case ACL_MEM_MALLOC_HUGE_ONLY:
    case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
        return {PageClass::Huge};
    case ACL_MEM_MALLOC_NORMAL_ONLY:
    case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
        return {PageClass::Normal};
    case ACL_MEM_MALLOC_HUGE1G_ONLY:
    case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
        return {PageClass::Huge1G};
    default:
        if (size <= kHugeFirstNormalMax)
            return {PageClass::Normal};
        return {PageClass::Huge, PageClass::Normal};
    }
}

} // namespace

namespace npuipc_rt {

aclError locate(Runtime &rt, const void *ptr, size_t count, Place &out)
{
    uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    if (count > UINTPTR_MAX - p)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%zu bytes at %p run past the end of the address space",
                    count, ptr);
    out.alloc = rt.find_allocation(ptr, count);
    if (out.alloc) {
        if (!out.alloc->accessible.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "%p is mapped without access (aclrtMemMapNoAccess): aclrtMemSetAccess first", ptr);
        out.offset = p - out.alloc->base;
        return ACL_SUCCESS;
    }
    // Partly inside device memory: a range crossing an allocation's end.
    if (rt.find_allocation(ptr, 1) ||
        rt.find_allocation(reinterpret_cast<const char *>(ptr) + count - 1, 1))
        return fail(ACL_ERROR_RT_PARAM_INVALID,
                    "%zu bytes at %p do not lie inside one device allocation", count, ptr);
    return ACL_SUCCESS;
}

// Checks a copy's arguments and kind against where its pointers lie.
aclError check_copy(Runtime &rt, void *dst, size_t destMax, const void *src, size_t count,
                    aclrtMemcpyKind kind, Place &d, Place &s)
{
    if (!dst || !src)
        return fail(ACL_ERROR_INVALID_PARAM, "dst and src must not be NULL");
    if (static_cast<unsigned>(kind) > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
        return fail(ACL_ERROR_INVALID_PARAM, "unknown copy kind %d", kind);
    if (count > destMax)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "count %zu is larger than destMax %zu", count,
                    destMax);
    if (aclError err = locate(rt, dst, count, d))
        return err;
    if (aclError err = locate(rt, src, count, s))
        return err;
    bool dd = d.alloc != nullptr, sd = s.alloc != nullptr;
    bool ok = true;
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
        ok = !dd && !sd;
        break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
        ok = dd && !sd;
        break;
    case ACL_MEMCPY_DEVICE_TO_HOST:
        ok = !dd && sd;
        break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
        ok = dd && sd;
        break;
    default: // ACL_MEMCPY_DEFAULT: inferred from the pointers
        break;
    }
    if (!ok)
        return fail(ACL_ERROR_RT_PARAM_INVALID,
                    "copy kind %d does not match the memory: dst is %s, src is %s memory", kind,
                    dd ? "device" : "host", sd ? "device" : "host");
    return ACL_SUCCESS;
}

// The device of the current context, which a synchronous copy or set works
// in: refused, as CANN's, once the context stopped on a failure.
aclError working_device(Runtime &rt, uint32_t &device)
{
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    if (aclError err = rt.current_context(ctx))
        return err;
    if (aclError err = ctx->failure->error.load(std::memory_order_acquire))
        return fail(err, "the context stopped at a failed task (ACL_STOP_ON_FAILURE)");
    device = ctx->device;
    return ACL_SUCCESS;
}

aclError check_peer(Runtime &rt, uint32_t device, const Place &p)
{
    if (p.alloc && !rt.peer_enabled(device, p.alloc->device))
        return fail(ACL_ERROR_RT_NO_PERMISSION,
                    "memory of device %u used from device %u without peer access "
                    "(aclrtDeviceEnablePeerAccess)",
                    p.alloc->device, device);
    return ACL_SUCCESS;
}

bool stream_idle(Stream &stream)
{
    Result<int> r = stream.dev->wait(stream.handle.get(), 0);
    return r.ok() && r.value() == 0;
}

} // namespace npuipc_rt

namespace {

// Host memory into device memory, in stream order: the source is read now.
// An idle stream takes it directly; otherwise it goes through a staging
// buffer that a COPY job moves when the stream gets there.
aclError copy_from_host(Runtime &rt, Stream &stream, const Place &d, const void *src,
                        size_t count)
{
    if (stream_idle(stream) && stream.device == d.alloc->device) {
        std::memcpy(reinterpret_cast<char *>(d.alloc->base) + d.offset, src, count);
        return ACL_SUCCESS;
    }
    uint32_t dst_handle;
    if (aclError err = buffer_on(rt, *d.alloc, stream, dst_handle))
        return err;
    uint64_t size = round_up(count, 4096);
    Result<BufferHandle> h = create_buffer(stream.dev, size, PageClass::Normal);
    if (!h.ok())
        return fail_errno(h.error(), Op::AllocMemory, "allocating a staging buffer");
    BufferHandle staging = std::move(h.value());
    Result<BufferInfo> info = stream.dev->buffer_info(staging.get());
    if (!info.ok())
        return fail_errno(info.error(), Op::Generic, "querying the staging buffer");
    Result<Mapping> map = Mapping::map(*stream.dev, info.value().mmap_offset, size);
    if (!map.ok())
        return fail_errno(map.error(), Op::AllocMemory, "mapping the staging buffer");
    std::memcpy(map.value().addr(), src, count);
    // The queued job holds the staging buffer; closing our handle is safe.
    return submit(stream, prep_copy(dst_handle, d.offset, staging.get(), 0, count));
}

} // namespace

aclError npuipc_rt::copy_async(void *dst, size_t destMax, const void *src, size_t count,
                               aclrtMemcpyKind kind, aclrtStream handle)
{
    Runtime &rt = Runtime::get();
    Place d, s;
    if (aclError err = check_copy(rt, dst, destMax, src, count, kind, d, s))
        return err;
    std::shared_ptr<Stream> stream;
    if (aclError err = find_stream(handle, stream))
        return err;
    // Refused like every launch, although an idle stream's copy from or
    // into host memory may not reach the driver.
    if (aclError err = stopped_context_error(*stream))
        return err;
    if (aclError err = check_peer(rt, stream->device, d))
        return err;
    if (aclError err = check_peer(rt, stream->device, s))
        return err;
    if (d.alloc && s.alloc) {
        // The driver refuses overlapping ranges of one buffer.
        bool same = d.alloc == s.alloc || (d.alloc->physical && d.alloc->physical == s.alloc->physical);
        if (same && d.offset < s.offset + count && s.offset < d.offset + count)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "source and destination overlap inside one allocation");
    }
    if (captured(*stream, "aclrtMemcpyAsync",
                 [=](aclrtStream to) { return copy_async(dst, destMax, src, count, kind, to); }))
        return ACL_SUCCESS;
    if (d.alloc && s.alloc) {
        uint32_t dst_handle, src_handle;
        if (aclError err = buffer_on(rt, *d.alloc, *stream, dst_handle))
            return err;
        if (aclError err = buffer_on(rt, *s.alloc, *stream, src_handle))
            return err;
        return submit(*stream, prep_copy(dst_handle, d.offset, src_handle, s.offset, count));
    }
    if (d.alloc)
        return copy_from_host(rt, *stream, d, src, count);
    // Into host memory, when the stream gets there; at once if it has
    // nothing left to do.
    if (stream_idle(*stream)) {
        std::memmove(dst, src, count);
        return ACL_SUCCESS;
    }
    HostCopy copy;
    copy.stream = std::move(stream);
    copy.dst = dst;
    copy.src = src;
    copy.count = count;
    copy.source = std::move(s.alloc);
    return queue_copy(rt, std::move(copy));
}

namespace npuipc_rt {

aclError malloc_device(void **devPtr, size_t size, aclrtMemMallocPolicy policy, std::shared_ptr<ManagedState> managed)
{
    Runtime &rt = Runtime::get();
    std::shared_ptr<const Device> dev;
    uint32_t device;
    if (aclError err = rt.current_device(device, dev))
        return err;
    int err = ENOMEM;
    for (PageClass page_class : classes_for(policy, size)) {
        uint64_t page = page_size(page_class);
        if (size > kMaxBufferSize) {
            err = ENOMEM;
            break;
        }
        uint64_t rounded = round_up(size, page);
        Result<BufferHandle> h = create_buffer(dev, rounded, page_class);
        if (!h.ok()) {
            err = h.error();
            continue;
        }
        auto alloc = std::make_shared<Allocation>();
        alloc->buffer = std::move(h.value());
        Result<BufferInfo> info = dev->buffer_info(alloc->buffer.get());
        if (!info.ok())
            return fail_errno(info.error(), Op::Generic, "querying the new buffer");
        // Aligned to its page size, so that exported ranges, whose start
        // must be a multiple of it, can be named by address.
        Result<Mapping> map = Mapping::map(*dev, info.value().mmap_offset, rounded, page);
        if (!map.ok()) {
            err = map.error();
            continue;
        }
        alloc->mapping = std::move(map.value());
        alloc->base = reinterpret_cast<uintptr_t>(alloc->mapping.addr());
        alloc->size = rounded;
        alloc->page_class = page_class;
        alloc->device = device;
        alloc->dev = dev;
        alloc->managed = managed;
        {
            // A reset of the device since the start would have missed it.
            std::lock_guard<std::mutex> lock(rt.mu);
            auto state = rt.devices.find(device);
            if (state == rt.devices.end() || state->second.dev != dev)
                return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %u was reset meanwhile", device);
            alloc->charge = UsageCharge(rt.usage_of(device, UsageKind::Malloc), rounded);
            std::unique_lock<std::shared_mutex> mlock(rt.mem_mu);
            rt.allocations.emplace(alloc->base, alloc);
        }
        *devPtr = alloc->mapping.addr();
        return ACL_SUCCESS;
    }
    return fail_errno(err, Op::AllocMemory, "allocating device memory");
}

aclError malloc_host(void **hostPtr, size_t size)
{
    void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot allocate %zu bytes of host memory", size);
    Runtime &rt = Runtime::get();
    std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
    rt.host_allocations.emplace(reinterpret_cast<uintptr_t>(p), size);
    *hostPtr = p;
    return ACL_SUCCESS;
}

bool host_allocation_of(Runtime &rt, const void *ptr, uintptr_t &base, size_t &size)
{
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::shared_lock<std::shared_mutex> lock(rt.mem_mu);
    auto it = rt.host_allocations.upper_bound(p);
    if (it == rt.host_allocations.begin())
        return false;
    --it;
    if (p - it->first >= it->second)
        return false;
    base = it->first;
    size = it->second;
    return true;
}

} // namespace npuipc_rt

extern "C" {

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return api("aclrtMalloc", [&] {
        if (!devPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        return malloc_device(devPtr, size, policy);
    });
}

aclError aclrtFree(void *devPtr)
{
    return api("aclrtFree", [&] {
        if (!devPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
        Runtime &rt = Runtime::get();
        std::shared_ptr<Allocation> alloc;
        {
            std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
            auto it = rt.allocations.find(reinterpret_cast<uintptr_t>(devPtr));
            if (it == rt.allocations.end())
                return fail(ACL_ERROR_RT_PARAM_INVALID,
                            "%p is not the start of memory aclrtMalloc returned", devPtr);
            if (!it->second->import_key.empty())
                return fail(ACL_ERROR_RT_PARAM_INVALID,
                            "%p was imported by key: aclrtIpcMemClose releases it", devPtr);
            if (it->second->physical)
                return fail(ACL_ERROR_RT_PARAM_INVALID,
                            "%p is mapped physical memory: aclrtUnmapMem releases it", devPtr);
            if (it->second->registered_host)
                return fail(ACL_ERROR_RT_PARAM_INVALID,
                            "%p is registered host memory: aclrtHostUnregister releases it", devPtr);
            alloc = std::move(it->second);
            rt.allocations.erase(it);
        }
        // Freed memory is shared no more: its keys die (importers keep theirs).
        std::vector<std::string> keys;
        {
            std::lock_guard<std::mutex> lock(alloc->mu);
            keys = take_keys_of_dead(alloc->export_keys, alloc->dead);
        }
        revoke_keys(keys);
        // Unmapped and closed here; queued jobs hold the buffer until done.
        return ACL_SUCCESS;
    });
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    return api("aclrtMallocHost", [&] {
        if (!hostPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        return malloc_host(hostPtr, size);
    });
}

aclError aclrtFreeHost(void *hostPtr)
{
    return api("aclrtFreeHost", [&] {
        if (!hostPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL");
        Runtime &rt = Runtime::get();
        std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
        auto it = rt.host_allocations.find(reinterpret_cast<uintptr_t>(hostPtr));
        if (it == rt.host_allocations.end())
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "%p is not memory aclrtMallocHost returned", hostPtr);
        ::munmap(hostPtr, it->second);
        rt.host_allocations.erase(it);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind)
{
    return api("aclrtMemcpy", [&] {
        if (count == 0)
            return ACL_SUCCESS; // as CANN: nothing to copy, whatever the pointers
        Runtime &rt = Runtime::get();
        Place d, s;
        if (aclError err = check_copy(rt, dst, destMax, src, count, kind, d, s))
            return err;
        if (aclError err = check_capture_mode())
            return err;
        if (d.alloc || s.alloc) {
            uint32_t device;
            if (aclError err = working_device(rt, device))
                return err;
            if (aclError err = check_peer(rt, device, d))
                return err;
            if (aclError err = check_peer(rt, device, s))
                return err;
        }
        // Device memory is mapped into the process: a synchronous copy is
        // the CPU's own, at memcpy speed.
        std::memmove(dst, src, count);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream)
{
    return api("aclrtMemcpyAsync", [&] {
        if (count == 0)
            return ACL_SUCCESS; // as CANN: nothing to queue, whatever the pointers
        return copy_async(dst, destMax, src, count, kind, stream);
    });
}

// CANN's deprecated form of aclrtMemcpyAsync: the condition is whether
// host memory is pinned, which npuipc's queued copies do not need (host
// memory is read or written by the copier thread in the stream's order).
aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count,
                                       aclrtMemcpyKind kind, aclrtStream stream)
{
    return api("aclrtMemcpyAsyncWithCondition", [&] {
        if (count == 0)
            return ACL_SUCCESS;
        if (!dst || !src)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", dst ? "src" : "dst");
        if (static_cast<uint32_t>(kind) > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
            return fail(ACL_ERROR_INVALID_PARAM, "kind %d is not a kind this copy takes", static_cast<int>(kind));
        return copy_async(dst, destMax, src, count, kind, stream);
    });
}

// Whether `count` bytes at `ptr` lie inside one aclrtMallocHost allocation.
static bool in_host_allocation(Runtime &rt, const void *ptr, size_t count)
{
    uintptr_t base = 0;
    size_t size = 0;
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    return host_allocation_of(rt, ptr, base, size) && count <= size - (p - base);
}

// `host_ok`: aclrtMallocHost memory is a target too (p.alloc stays null).
static aclError check_memset(Runtime &rt, void *devPtr, size_t maxCount, size_t count, bool host_ok,
                             Place &p)
{
    if (!devPtr)
        return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    if (count > maxCount)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "count %zu is larger than maxCount %zu", count,
                    maxCount);
    if (aclError err = locate(rt, devPtr, count, p))
        return err;
    if (!p.alloc && !(host_ok && in_host_allocation(rt, devPtr, count)))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not device memory%s", devPtr,
                    host_ok ? " nor inside one aclrtMallocHost allocation" : "");
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    return api("aclrtMemset", [&] {
        if (count == 0)
            return ACL_SUCCESS; // as CANN: nothing to set, whatever the pointer
        Runtime &rt = Runtime::get();
        Place p;
        // As CANN, host memory from aclrtMallocHost is set too (its samples do).
        if (aclError err = check_memset(rt, devPtr, maxCount, count, true, p))
            return err;
        if (aclError err = check_capture_mode())
            return err;
        if (!p.alloc) {
            std::memset(devPtr, value & 0xff, count);
            return ACL_SUCCESS;
        }
        uint32_t device;
        if (aclError err = working_device(rt, device))
            return err;
        if (aclError err = check_peer(rt, device, p))
            return err;
        std::memset(devPtr, value & 0xff, count);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream)
{
    return api("aclrtMemsetAsync", [&] {
        if (count == 0)
            return ACL_SUCCESS; // as CANN: nothing to queue, whatever the pointer
        Runtime &rt = Runtime::get();
        Place p;
        if (aclError err = check_memset(rt, devPtr, maxCount, count, false, p))
            return err;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        uint32_t dst_handle;
        if (aclError err = buffer_on(rt, *p.alloc, *s, dst_handle))
            return err;
        if (captured(*s, "aclrtMemsetAsync",
                     [=](aclrtStream to) { return aclrtMemsetAsync(devPtr, maxCount, value, count, to); }))
            return ACL_SUCCESS;
        return submit(*s, prep_fill(dst_handle, p.offset, count, static_cast<uint8_t>(value)));
    });
}

aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize)
{
    return api("aclrtMemGetAddressRange", [&] {
        // As CANN: either output may be NULL, not both; aclrtMallocHost
        // memory has its range too.
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (!pbase && !psize)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "pbase and psize are both NULL");
        Runtime &rt = Runtime::get();
        uintptr_t base = 0;
        size_t size = 0;
        if (std::shared_ptr<Allocation> alloc = rt.find_allocation(ptr, 1)) {
            base = alloc->base;
            size = alloc->size;
        } else if (!host_allocation_of(rt, ptr, base, size)) {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is neither device memory nor aclrtMallocHost memory",
                        ptr);
        }
        if (pbase)
            *pbase = reinterpret_cast<void *>(base);
        if (psize)
            *psize = size;
        return ACL_SUCCESS;
    });
}

} // extern "C"
