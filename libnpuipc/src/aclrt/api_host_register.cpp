// SPDX-License-Identifier: MIT
// Host memory registration (aclrtHostRegister, aclrt_host_register(3)).
// The pages around a range of the process's memory become a buffer of the
// current context's device (the driver pins them: BO_USERPTR), and its
// mapping through the device is the range's device address: the same
// pages, seen at a second address. Copies, sets and value tasks reach
// them there as device memory; the process keeps using its own address.
#include <pthread.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// A registered range: its device memory (published in Runtime::allocations
// when MAPPED) and where in it the range starts.
struct Registration {
    uint64_t size = 0;
    uintptr_t offset = 0; // of the range in the first page
    bool mapped = false;
    std::shared_ptr<Allocation> alloc;
};

// Protects registrations: by the host address registered. Taken before
// Runtime::mu.
std::mutex registrations_mu;
std::map<uintptr_t, Registration> registrations;

// A fork child takes registrations_mu free and none of the parent's
// registrations: their buffers and mappings are the parent's, so they are
// left, not released. Registered after the runtime's own handlers, so that
// its prepare (registrations_mu) runs before theirs (Runtime::mu).
void forget_registrations_in_child()
{
    new std::map<uintptr_t, Registration>(std::move(registrations)); // left, never freed
    registrations.clear();
    registrations_mu.unlock();
}

void register_fork_handlers()
{
    static std::once_flag once;
    std::call_once(once, [] {
        pthread_atfork([] { registrations_mu.lock(); }, [] { registrations_mu.unlock(); },
                       forget_registrations_in_child);
    });
}

// Whether the registration's device is still the one it was made on: a
// reset (or aclFinalize) of the device ends its registrations, which go
// at the next look. With registrations_mu held.
bool alive(const Registration &reg)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    auto state = rt.devices.find(reg.alloc->device);
    return state != rt.devices.end() && state->second.dev == reg.alloc->dev;
}

void forget_dead_registrations()
{
    for (auto it = registrations.begin(); it != registrations.end();)
        it = alive(it->second) ? std::next(it) : registrations.erase(it);
}

// ACL_ERROR_RT_CONTEXT_NULL without a current context, as CANN's calls.
aclError require_context()
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    return rt.current_context(ctx);
}

uintptr_t page_size()
{
    static const uintptr_t size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

// The registration whose range holds `p`, or end().
std::map<uintptr_t, Registration>::iterator registration_of(uintptr_t p)
{
    auto it = registrations.upper_bound(p);
    if (it == registrations.begin())
        return registrations.end();
    --it;
    return p - it->first < it->second.size ? it : registrations.end();
}

aclError register_range(void *ptr, uint64_t size, bool mapped, void **devPtr)
{
    Runtime &rt = Runtime::get();
    register_fork_handlers();
    std::shared_ptr<const Device> dev;
    uint32_t device;
    if (aclError err = rt.current_device(device, dev))
        return err;
    Result<DeviceInfo> info = dev->info();
    if (!info.ok())
        return fail_errno(info.error(), Op::Generic, "querying the device");
    if (info.value().uapi_version < 11)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "the loaded npuipc.ko (uapi %u) cannot register host memory: uapi 11 can",
                    info.value().uapi_version);
    const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
    if (start > UINT64_MAX - page_size() || size > UINT64_MAX - page_size() - start)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the range at %p of %lu bytes wraps around", ptr,
                    static_cast<unsigned long>(size));
    const uintptr_t first = start & ~(page_size() - 1);
    const uint64_t bytes = ((start + size + page_size() - 1) & ~(page_size() - 1)) - first;

    std::lock_guard<std::mutex> lock(registrations_mu);
    forget_dead_registrations();
    // Overlaps: the last range starting before the end, if it reaches in.
    auto next = registrations.lower_bound(start + size);
    if (next != registrations.begin() && std::prev(next)->first + std::prev(next)->second.size > start)
        return fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "%p: part of the range is registered already",
                    ptr);
    Result<BufferHandle> h = register_user_memory(dev, reinterpret_cast<void *>(first), bytes, Access::ReadWrite);
    if (!h.ok()) {
        if (h.error() == EFAULT)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "%p: the range is not memory the device may pin (unmapped, not writable, a file "
                        "mapping, or device memory)",
                        ptr);
        if (h.error() == ENOMEM)
            return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                        "%p: pinning %lu bytes exceeds RLIMIT_MEMLOCK, or memory ran out", ptr,
                        static_cast<unsigned long>(bytes));
        return fail_errno(h.error(), Op::Generic, "registering host memory");
    }
    auto alloc = std::make_shared<Allocation>();
    alloc->buffer = std::move(h.value());
    Result<BufferInfo> binfo = dev->buffer_info(alloc->buffer.get());
    if (!binfo.ok())
        return fail_errno(binfo.error(), Op::Generic, "querying the registered memory");
    Result<Mapping> map = Mapping::map(*dev, binfo.value().mmap_offset, bytes);
    if (!map.ok())
        return fail_errno(map.error(), Op::Generic, "mapping the registered memory");
    alloc->mapping = std::move(map.value());
    alloc->base = reinterpret_cast<uintptr_t>(alloc->mapping.addr());
    alloc->size = bytes;
    alloc->device = device;
    alloc->dev = dev;
    alloc->registered_host = start;
    Registration reg;
    reg.size = size;
    reg.offset = start - first;
    reg.mapped = mapped;
    reg.alloc = alloc;
    if (mapped) {
        std::lock_guard<std::mutex> rlock(rt.mu);
        auto state = rt.devices.find(device);
        if (state == rt.devices.end() || state->second.dev != dev)
            return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %u was reset meanwhile", device);
        std::unique_lock<std::shared_mutex> mlock(rt.mem_mu);
        rt.allocations.emplace(alloc->base, alloc);
    }
    registrations.emplace(start, std::move(reg));
    if (devPtr)
        *devPtr = reinterpret_cast<void *>(alloc->base + (start - first));
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr)
{
    return api("aclrtHostRegister", [&] {
        if (!ptr || !devPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", ptr ? "devPtr" : "ptr");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        const uint32_t t = static_cast<uint32_t>(type);
        if (t & ~static_cast<uint32_t>(ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY))
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "unknown registration type 0x%x", t);
        // CANN documents READONLY as reserved; npuipc's copies write device
        // addresses from the host too, which a read-only view cannot take.
        if (t & ACL_HOST_REGISTER_READONLY)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "READONLY registration is reserved, as in CANN");
        return register_range(ptr, size, true, devPtr);
    });
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)
{
    return api("aclrtHostRegisterV2", [&] {
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        constexpr uint32_t known =
            ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;
        if (flag == 0 || (flag & ~known))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag 0x%x: a non-empty set of ACL_HOST_REG_*", flag);
        if (flag & ACL_HOST_REG_READONLY)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_HOST_REG_READONLY is reserved, as in CANN");
        // PINNED alone pins the pages and gives no device address.
        return register_range(ptr, size, flag & (ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY), nullptr);
    });
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)
{
    return api("aclrtHostGetDevicePointer", [&] {
        if (!pHost || !pDevice)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", pHost ? "pDevice" : "pHost");
        if (flag != 0)
            return fail(ACL_ERROR_INVALID_PARAM, "flag %u: must be 0", flag);
        if (aclError err = require_context())
            return err;
        const uintptr_t p = reinterpret_cast<uintptr_t>(pHost);
        std::lock_guard<std::mutex> lock(registrations_mu);
        forget_dead_registrations();
        auto it = registration_of(p);
        if (it == registrations.end() || !it->second.mapped)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not in host memory registered as mapped", pHost);
        *pDevice = reinterpret_cast<void *>(it->second.alloc->base + it->second.offset + (p - it->first));
        return ACL_SUCCESS;
    });
}

aclError aclrtHostUnregister(void *ptr)
{
    return api("aclrtHostUnregister", [&] {
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (aclError err = require_context())
            return err;
        std::shared_ptr<Allocation> alloc;
        {
            std::lock_guard<std::mutex> lock(registrations_mu);
            forget_dead_registrations();
            auto it = registrations.find(reinterpret_cast<uintptr_t>(ptr));
            if (it == registrations.end())
                return fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
                            "%p is not the start of a registered range", ptr);
            alloc = std::move(it->second.alloc);
            registrations.erase(it);
        }
        // Work queued on it keeps the pages (and the device address) until
        // it is done.
        Runtime &rt = Runtime::get();
        std::unique_lock<std::shared_mutex> mlock(rt.mem_mu);
        auto it = rt.allocations.find(alloc->base);
        if (it != rt.allocations.end() && it->second == alloc)
            rt.allocations.erase(it);
        return ACL_SUCCESS;
    });
}

aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType, aclrtHostMemMapCapability *capabilities)
{
    return api("aclrtHostMemMapCapabilities", [&] {
        if (!capabilities)
            return fail(ACL_ERROR_INVALID_PARAM, "capabilities is NULL");
        Runtime &rt = Runtime::get();
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(static_cast<int32_t>(deviceId)))
                return err;
        }
        if (static_cast<uint32_t>(hacType) > ACL_RT_HAC_TYPE_CCU)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown accelerator type %d", static_cast<int>(hacType));
        if (aclError err = require_context())
            return err;
        // The mock NPU's copy engine reaches registered memory (its task
        // scheduler and DMA engines); it has no compute cores, RDMA,
        // media or collective engines.
        switch (hacType) {
        case ACL_RT_HAC_TYPE_STARS:
        case ACL_RT_HAC_TYPE_PCIEDMA:
        case ACL_RT_HAC_TYPE_SDMA:
            *capabilities = ACL_RT_HOST_MEM_MAP_SUPPORTED;
            break;
        default:
            *capabilities = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
        }
        return ACL_SUCCESS;
    });
}

} // extern "C"
