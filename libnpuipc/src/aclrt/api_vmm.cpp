// SPDX-License-Identifier: MIT
// Virtual memory management: physical memory is a driver buffer not yet
// mapped; a reservation is PROT_NONE address space of the process; mapping
// puts the buffer at the reserved address with MAP_FIXED, and unmapping
// puts PROT_NONE back, so an access after unmap faults and never reaches
// freed or foreign memory. Shareable handles are 64-bit names of IPC keys
// (npuipc/ipc.h): the fd travels as for aclrtIpcMemImportByKey.
#include <cerrno>
#include <cstring>
#include <sys/mman.h>

#include "aclrt/fabric_memory.h"
#include "aclrt/runtime.h"
#include "npuipc/ipc.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

constexpr uint64_t kReserveAlign = 2ULL << 20;
constexpr uint64_t kMaxAlign = 1ULL << 30;
// Far below the 47-bit user address space; keeps size + alignment exact.
constexpr uint64_t kMaxReservation = 1ULL << 44;

// The page class a memory attribute asks for.
bool class_of(aclrtMemAttr attr, PageClass &page_class)
{
    switch (attr) {
    case ACL_DDR_MEM_HUGE:
    case ACL_HBM_MEM_HUGE:
    case ACL_DDR_MEM_P2P_HUGE:
    case ACL_HBM_MEM_P2P_HUGE:
    case ACL_MEM_HUGE:
    case ACL_MEM_P2P_HUGE:
        page_class = PageClass::Huge;
        return true;
    case ACL_HBM_MEM_HUGE1G:
    case ACL_HBM_MEM_P2P_HUGE1G:
    case ACL_MEM_HUGE1G:
    case ACL_MEM_P2P_HUGE1G:
        page_class = PageClass::Huge1G;
        return true;
    case ACL_DDR_MEM:
    case ACL_HBM_MEM:
    case ACL_DDR_MEM_NORMAL:
    case ACL_HBM_MEM_NORMAL:
    case ACL_DDR_MEM_P2P_NORMAL:
    case ACL_HBM_MEM_P2P_NORMAL:
    case ACL_MEM_NORMAL:
    case ACL_MEM_P2P_NORMAL:
        page_class = PageClass::Normal;
        return true;
    default:
        return false;
    }
}

aclError check_prop(const aclrtPhysicalMemProp *prop, PageClass &page_class)
{
    if (!prop)
        return fail(ACL_ERROR_INVALID_PARAM, "prop is NULL");
    if (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE)
        return fail(ACL_ERROR_INVALID_PARAM, "handleType must be ACL_MEM_HANDLE_TYPE_NONE");
    if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED)
        return fail(ACL_ERROR_INVALID_PARAM, "allocationType must be ACL_MEM_ALLOCATION_TYPE_PINNED");
    if (prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
        return fail(ACL_ERROR_INVALID_PARAM, "location.type must be ACL_MEM_LOCATION_TYPE_DEVICE");
    if (!class_of(prop->memAttr, page_class))
        return fail(ACL_ERROR_INVALID_PARAM, "unknown memAttr %d", prop->memAttr);
    return ACL_SUCCESS;
}

// The device physical memory lives on (`id` as the application numbers it;
// `index` its npuipc index). Physical memory belongs to a device,
// not a context, so a device this process has not set is opened without
// setting it: no aclrtSetDevice reference is taken behind the application's
// back, and the device closes again when its last physical memory and
// mapping go (close_device_if_unused).
aclError device_for(int32_t id, uint32_t &index, std::shared_ptr<const Device> &dev)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (aclError err = rt.check_device_id(id, index))
        return err;
    DeviceState *state;
    if (aclError err = rt.open_device(index, state))
        return err;
    dev = state->dev;
    state->users++; // until the DeviceUse of the call ends
    return ACL_SUCCESS;
}

// Ends, with the call, the use device_for() began: closes the device again
// when the call failed before anything of it was made.
class DeviceUse {
public:
    DeviceUse(uint32_t index, std::shared_ptr<const Device> dev) : index_(index), dev_(std::move(dev)) {}
    ~DeviceUse()
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.devices.find(index_);
        if (it == rt.devices.end() || it->second.dev != dev_)
            return; // reset meanwhile: the use ended with it
        it->second.users--;
        rt.close_device_if_unused(index_);
    }
    DeviceUse(const DeviceUse &) = delete;
    DeviceUse &operator=(const DeviceUse &) = delete;

private:
    const uint32_t index_;
    const std::shared_ptr<const Device> dev_;
};

// `charged`: memory this process allocated (aclrtGetMemUsageInfo counts
// it), not one it imported.
aclError add_physical(std::shared_ptr<Physical> phys, aclrtDrvMemHandle *handle, bool charged)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    // A reset since device_for() released what it opened.
    auto it = rt.devices.find(phys->device);
    if (it == rt.devices.end() || it->second.dev != phys->dev)
        return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %u was reset meanwhile", phys->device);
    if (charged)
        phys->charge = UsageCharge(rt.usage_of(phys->device, UsageKind::Physical), phys->size);
    phys->imported = !charged;
    *handle = reinterpret_cast<aclrtDrvMemHandle>(rt.add_object(std::move(phys)));
    return ACL_SUCCESS;
}

aclError find_physical(aclrtDrvMemHandle handle, std::shared_ptr<Physical> &out)
{
    return find_object(handle, Kind::Physical, "physical memory handle", out);
}

// Another process's memory (a dma-buf) as physical memory of device
// `deviceId` (npuipc index `index`) in this process.
aclError add_imported_physical(uint32_t index, const std::shared_ptr<const Device> &dev, int memory,
                               Peer peer, int32_t deviceId, aclrtDrvMemHandle *handle)
{
    Result<BufferHandle> h = import_buffer(dev, memory, peer);
    if (!h.ok())
        return fail_errno(h.error(), Op::Generic, "importing the memory");
    BufferHandle buffer = std::move(h.value());
    Result<BufferInfo> info = dev->buffer_info(buffer.get());
    if (!info.ok())
        return fail_errno(info.error(), Op::Generic, "querying the memory");
    if (info.value().foreign)
        return fail(ACL_ERROR_RT_IPC_ERROR, "the exporter sent memory that is not npuipc's");
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = info.value().page_class == PageClass::Huge     ? ACL_HBM_MEM_HUGE
                   : info.value().page_class == PageClass::Huge1G ? ACL_HBM_MEM_HUGE1G
                                                                  : ACL_HBM_MEM_NORMAL;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = static_cast<uint32_t>(deviceId);
    return add_physical(std::make_shared<Physical>(index, dev, std::move(buffer), info.value().size,
                                                   info.value().page_class, prop),
                        handle, false);
}

// A 64-bit handle cannot be malformed, only unknown.
aclError fail_handle(int err, const char *what)
{
    return fail_ipc(err == EINVAL ? ESRCH : err, what);
}

// Maps all of `phys` at `virPtr`, inside a reservation; `accessible`
// false: no access until aclrtMemSetAccess (aclrtMemMapNoAccess).
aclError map_physical(void *virPtr, size_t size, const std::shared_ptr<Physical> &phys, bool accessible)
{
    uintptr_t p = reinterpret_cast<uintptr_t>(virPtr);
    Result<BufferInfo> info = phys->dev->buffer_info(phys->buffer.get());
    if (!info.ok())
        return fail_errno(info.error(), Op::Generic, "querying the physical memory");
    // The mapping holds the physical memory (and its buffer handle,
    // which stream jobs on the mapping use) whatever happens to the
    // application's handle.
    auto alloc = std::make_shared<Allocation>();
    alloc->base = p;
    alloc->size = size;
    alloc->page_class = phys->page_class;
    alloc->device = phys->device;
    alloc->dev = phys->dev;
    alloc->physical = phys;
    Runtime &rt = Runtime::get();
    std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
    auto r = rt.reservations.upper_bound(p);
    if (r == rt.reservations.begin() || (--r, p + size > r->second.base + r->second.size))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%zu bytes at %p are not inside one reservation", size,
                    virPtr);
    if (p % page_size(phys->page_class))
        return fail(ACL_ERROR_RT_ADDR_UNALIGNED, "%p is not aligned to the memory's page size", virPtr);
    auto next = rt.allocations.lower_bound(p);
    bool overlaps = (next != rt.allocations.end() && next->first < p + size);
    if (next != rt.allocations.begin()) {
        auto prev = std::prev(next);
        overlaps = overlaps || prev->first + prev->second->size > p;
    }
    if (overlaps)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the range is already mapped");
    void *at = ::mmap(virPtr, size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE, MAP_SHARED | MAP_FIXED,
                      phys->dev->fd(), static_cast<off_t>(info.value().mmap_offset));
    // As every device mapping: not inherited by fork children.
    if (at != MAP_FAILED && ::madvise(at, size, MADV_DONTFORK) != 0)
        at = MAP_FAILED;
    if (at == MAP_FAILED) {
        int err = errno;
        ::mmap(virPtr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        return fail_errno(err, Op::AllocMemory, "mapping the physical memory");
    }
    alloc->accessible.store(accessible, std::memory_order_release);
    rt.allocations.emplace(p, alloc);
    return ACL_SUCCESS;
}

// aclrtMapMem's and aclrtMemMapNoAccess's checks, then the mapping: the
// whole physical allocation (`size_code` otherwise, as CANN's), no offset
// or flags.
aclError map_whole(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags,
                   aclError size_code, bool accessible)
{
    if (flags != 0 || offset != 0)
        return fail(ACL_ERROR_INVALID_PARAM, "offset and flags must be 0");
    std::shared_ptr<Physical> phys;
    if (aclError err = find_physical(handle, phys))
        return err;
    if (size != phys->size)
        return fail(size_code, "size %zu: the whole physical allocation (%llu bytes) is mapped", size,
                    static_cast<unsigned long long>(phys->size));
    return map_physical(virPtr, size, phys, accessible);
}

} // namespace

extern "C" {

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option, size_t *granularity)
{
    return api("aclrtMemGetAllocationGranularity", [&] {
        if (!granularity)
            return fail(ACL_ERROR_INVALID_PARAM, "granularity is NULL");
        if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
            option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown option %d", option);
        PageClass page_class;
        if (aclError err = check_prop(prop, page_class))
            return err;
        *granularity = page_size(page_class);
        return ACL_SUCCESS;
    });
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                             uint64_t flags)
{
    return api("aclrtMallocPhysical", [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        if (flags != 0)
            return fail(ACL_ERROR_INVALID_PARAM, "flags must be 0");
        PageClass page_class;
        if (aclError err = check_prop(prop, page_class))
            return err;
        if (size == 0 || size % page_size(page_class))
            return fail(ACL_ERROR_INVALID_PARAM,
                        "size %zu is not a non-zero multiple of the granularity", size);
        uint32_t index;
        std::shared_ptr<const Device> dev;
        if (aclError err = device_for(static_cast<int32_t>(prop->location.id), index, dev))
            return err;
        DeviceUse use(index, dev);
        // On a server of a fabric, a device's physical memory is fabric
        // memory, as an Atlas A3's HBM is reachable across its SuperPOD:
        // it comes from this server's part of the window, and the device
        // sees it through an import.
        Result<UniqueFd> fabric_memory = fabric_allocate(size, page_class);
        if (!fabric_memory.ok() && fabric_memory.error() != ENODEV)
            return fail_errno(fabric_memory.error(), Op::AllocMemory, "allocating fabric memory");
        Result<BufferHandle> h = fabric_memory.ok()
                                     ? import_buffer(dev, fabric_memory.value().get(), Peer::Allow)
                                     : create_buffer(dev, size, page_class);
        if (!h.ok())
            return fail_errno(h.error(), Op::AllocMemory, "allocating physical memory");
        auto phys = std::make_shared<Physical>(index, dev, std::move(h.value()), size, page_class, *prop);
        if (fabric_memory.ok())
            phys->fabric_memory = std::move(fabric_memory.value());
        return add_physical(std::move(phys), handle, true);
    });
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
    return api("aclrtFreePhysical", [&] {
        std::shared_ptr<Physical> phys;
        if (aclError err = find_physical(handle, phys))
            return err;
        std::vector<std::string> keys;
        uint64_t name = 0;
        std::optional<fabric::Handle> fabric_export;
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            // Another thread's free may have taken the last reference.
            if (!rt.objects.count(phys->token))
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p was freed", handle);
            std::lock_guard<std::mutex> plock(phys->mu);
            if (--phys->handle_refs > 0)
                return ACL_SUCCESS;
            // The last handle: mappings keep the memory until unmapped;
            // sharing ends (importers keep theirs).
            rt.objects.erase(phys->token);
            if (phys->shareable) {
                name = phys->shareable;
                keys.push_back(phys->shared_key);
                phys->shareable = 0;
                phys->shared_key.clear();
            }
            if (phys->fabric_export)
                fabric_export = phys->fabric_export->handle;
            phys->fabric_export.reset();
            rt.close_device_if_unused(phys->device);
        }
        if (fabric_export)
            fabric_release(*fabric_export);
        ipc::unname(name);
        revoke_keys(keys);
        Runtime::get().revoke_pending();
        return ACL_SUCCESS;
    });
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags)
{
    return api("aclrtReserveMemAddress", [&] {
        if (!virPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
        if (size == 0 || size % 4096)
            return fail(ACL_ERROR_INVALID_PARAM, "size %zu is not a non-zero multiple of 4 KiB", size);
        if (flags != 0)
            return fail(ACL_ERROR_INVALID_PARAM, "flags must be 0");
        if (alignment & (alignment - 1))
            return fail(ACL_ERROR_INVALID_PARAM, "alignment %zu is not a power of two", alignment);
        if (alignment > kMaxAlign || size > kMaxReservation)
            return fail(ACL_ERROR_INVALID_PARAM, "size %zu or alignment %zu is too large", size, alignment);
        // 1 GiB-page memory needs 1 GiB-aligned addresses; CANN passes 0.
        size_t align = std::max<size_t>(alignment, size % kMaxAlign == 0 ? kMaxAlign : kReserveAlign);
        // Over-reserve, keep an aligned window, return the slack.
        void *room = ::mmap(expectPtr, size + align, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (room == MAP_FAILED)
            return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot reserve %zu bytes of address space", size);
        uintptr_t start = reinterpret_cast<uintptr_t>(room);
        uintptr_t base = (start + align - 1) & ~(align - 1);
        if (base > start)
            ::munmap(room, base - start);
        if (start + size + align > base + size)
            ::munmap(reinterpret_cast<void *>(base + size), start + size + align - (base + size));
        Runtime &rt = Runtime::get();
        std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
        rt.reservations[base] = Reservation{base, size};
        *virPtr = reinterpret_cast<void *>(base);
        return ACL_SUCCESS;
    });
}

aclError aclrtReleaseMemAddress(void *virPtr)
{
    return api("aclrtReleaseMemAddress", [&] {
        if (!virPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
        Runtime &rt = Runtime::get();
        std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
        auto it = rt.reservations.find(reinterpret_cast<uintptr_t>(virPtr));
        if (it == rt.reservations.end())
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not an address aclrtReserveMemAddress returned",
                        virPtr);
        const Reservation &r = it->second;
        auto mapped = rt.allocations.lower_bound(r.base);
        if (mapped != rt.allocations.end() && mapped->first < r.base + r.size)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the range is still mapped: aclrtUnmapMem first");
        ::munmap(virPtr, r.size);
        rt.reservations.erase(it);
        return ACL_SUCCESS;
    });
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)
{
    return api("aclrtMapMem", [&] {
        if (!virPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
        return map_whole(virPtr, size, offset, handle, flags, ACL_ERROR_INVALID_PARAM, true);
    });
}

aclError aclrtMemMapNoAccess(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)
{
    return api("aclrtMemMapNoAccess", [&] {
        if (!virPtr || !handle)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", virPtr ? "handle" : "virPtr");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        return map_whole(virPtr, size, offset, handle, flags, ACL_ERROR_RT_PARAM_INVALID, false);
    });
}

// A second mapping of the physical memory behind another, over a chosen
// link between dies: a mock NPU's devices have one path, the default one.
aclError aclrtMemMapSelectedLink(void *virPtrDst, size_t size, void *virPtrSrc, uint32_t linkIdx)
{
    return api("aclrtMemMapSelectedLink", [&] {
        if (!virPtrDst || !virPtrSrc || size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtrDst and virPtrSrc must be set, size not 0");
        if (linkIdx > ACL_RT_MEM_LINK_IDX_1)
            return fail(ACL_ERROR_INVALID_PARAM, "linkIdx %u: ACL_RT_MEM_LINK_IDX_0 or _1", linkIdx);
        std::shared_ptr<Allocation> src;
        {
            Runtime &rt = Runtime::get();
            std::shared_lock<std::shared_mutex> lock(rt.mem_mu);
            auto it = rt.allocations.find(reinterpret_cast<uintptr_t>(virPtrSrc));
            if (it != rt.allocations.end())
                src = it->second;
        }
        if (!src || !src->physical)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not the start of an aclrtMapMem mapping", virPtrSrc);
        if (size != src->size)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size %zu: the whole mapping (%llu bytes) is mapped", size,
                        static_cast<unsigned long long>(src->size));
        if (linkIdx != ACL_RT_MEM_LINK_IDX_0)
            return fail(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, "a mock NPU's devices have no link %u", linkIdx);
        return map_physical(virPtrDst, size, src->physical, true);
    });
}

aclError aclrtUnmapMem(void *virPtr)
{
    return api("aclrtUnmapMem", [&] {
        if (!virPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
        Runtime &rt = Runtime::get();
        std::shared_ptr<Allocation> alloc;
        {
            std::unique_lock<std::shared_mutex> lock(rt.mem_mu);
            auto it = rt.allocations.find(reinterpret_cast<uintptr_t>(virPtr));
            if (it == rt.allocations.end() || !it->second->physical)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not an address aclrtMapMem mapped", virPtr);
            // Back to reserved address space, in one step: no other mapping
            // can slip in, and an access faults.
            if (::mmap(virPtr, it->second->size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
                return fail_errno(errno, Op::Generic, "unmapping (the mapping stays)");
            alloc = std::move(it->second);
            rt.allocations.erase(it);
        }
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            rt.close_device_if_unused(alloc->device);
        }
        rt.revoke_pending();
        return ACL_SUCCESS;
    });
}

aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count)
{
    return api("aclrtMemSetAccess", [&] {
        if (!virPtr || !desc || count == 0 || size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr, desc, count and size must be set");
        std::shared_ptr<Allocation> alloc = Runtime::get().find_allocation(virPtr, size);
        if (!alloc || !alloc->physical)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%zu bytes at %p are not one aclrtMapMem mapping",
                        size, virPtr);
        for (size_t i = 0; i < count; i++) {
            if (desc[i].location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
                return fail(ACL_ERROR_INVALID_PARAM, "desc[%zu].location.type must be DEVICE", i);
            // CANN supports READWRITE, which mappings have from the start;
            // narrower access would have to hold for device jobs too.
            if (desc[i].flags != ACL_RT_MEM_ACCESS_FLAGS_READWRITE)
                return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "only ACL_RT_MEM_ACCESS_FLAGS_READWRITE is supported");
        }
        // A mapping made without access gets it now, for the host and the
        // device, if it is still mapped.
        Runtime &rt = Runtime::get();
        std::shared_lock<std::shared_mutex> mapped(rt.mem_mu);
        auto it = rt.allocations.find(alloc->base);
        if (it == rt.allocations.end() || it->second != alloc)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p was unmapped meanwhile", virPtr);
        std::lock_guard<std::mutex> lock(alloc->mu);
        if (!alloc->accessible.load(std::memory_order_acquire)) {
            if (::mprotect(reinterpret_cast<void *>(alloc->base), alloc->size, PROT_READ | PROT_WRITE) != 0)
                return fail_errno(errno, Op::Generic, "giving the mapping access");
            alloc->accessible.store(true, std::memory_order_release);
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)
{
    return api("aclrtMemGetAccess", [&] {
        if (!virPtr || !location || !flag)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr, location and flag must not be NULL");
        std::shared_ptr<Allocation> alloc = Runtime::get().find_allocation(virPtr, 1);
        if (!alloc || !alloc->physical)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not inside an aclrtMapMem mapping", virPtr);
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        int32_t id = rt.logical_id(alloc->device);
        if (id < 0)
            return fail(ACL_ERROR_RT_INVALID_DEVICEID, "the mapping's device is not visible");
        location->id = static_cast<uint32_t>(id);
        location->type = ACL_MEM_LOCATION_TYPE_DEVICE;
        *flag = alloc->accessible.load(std::memory_order_acquire) ? ACL_RT_MEM_ACCESS_FLAGS_READWRITE
                                                                  : ACL_RT_MEM_ACCESS_FLAGS_NONE;
        return ACL_SUCCESS;
    });
}

aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle)
{
    return api("aclrtMemRetainAllocationHandle", [&] {
        if (!virPtr || !handle)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr and handle must not be NULL");
        std::shared_ptr<Allocation> alloc = Runtime::get().find_allocation(virPtr, 1);
        if (!alloc || !alloc->physical)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not inside an aclrtMapMem mapping", virPtr);
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Physical> &phys = alloc->physical;
        std::lock_guard<std::mutex> plock(phys->mu);
        // Freed meanwhile: the mapping still holds it; it gets a handle anew.
        if (!rt.objects.count(phys->token)) {
            phys->handle_refs = 0;
            rt.objects.emplace(phys->token, phys);
        }
        phys->handle_refs++;
        *handle = reinterpret_cast<aclrtDrvMemHandle>(phys->token);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle, aclrtPhysicalMemProp *prop)
{
    return api("aclrtMemGetAllocationPropertiesFromHandle", [&] {
        if (!prop)
            return fail(ACL_ERROR_INVALID_PARAM, "prop is NULL");
        std::shared_ptr<Physical> phys;
        if (aclError err = find_physical(handle, phys))
            return err;
        *prop = phys->prop;
        return ACL_SUCCESS;
    });
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle)
{
    return api("aclrtMemExportToShareableHandle", [&] {
        if (!shareableHandle)
            return fail(ACL_ERROR_INVALID_PARAM, "shareableHandle is NULL");
        if (handleType != ACL_MEM_HANDLE_TYPE_NONE)
            return fail(ACL_ERROR_INVALID_PARAM, "handleType must be ACL_MEM_HANDLE_TYPE_NONE");
        if (flags & ~ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown export flags 0x%llx",
                        static_cast<unsigned long long>(flags));
        std::shared_ptr<Physical> phys;
        if (aclError err = find_physical(handle, phys))
            return err;
        // One shareable handle per physical allocation and process while
        // its key is open: made under the export lock, not phys->mu, which
        // the runtime takes under its own lock (publishing may wait for the
        // broker).
        std::lock_guard<std::mutex> elock(phys->export_mu);
        uint64_t old_name = 0;
        std::string old_key;
        {
            std::lock_guard<std::mutex> plock(phys->mu);
            old_name = phys->shareable;
            old_key = phys->shared_key;
        }
        if (old_name && ipc::published_here(old_key)) {
            *shareableHandle = old_name;
            return ACL_SUCCESS;
        }
        if (old_name) { // gone with the broker that served it: a new one
            {
                std::lock_guard<std::mutex> plock(phys->mu);
                if (phys->shareable == old_name) {
                    phys->shareable = 0;
                    phys->shared_key.clear();
                }
            }
            ipc::unname(old_name);
            (void)ipc::revoke(old_key);
        }
        std::weak_ptr<Physical> weak = phys;
        auto make_fd = [weak]() -> Result<UniqueFd> {
            std::shared_ptr<Physical> p = weak.lock();
            if (!p)
                return Status::from_errno(ESRCH);
            return p->dev->export_whole_buffer(p->buffer.get());
        };
        bool validate = !(flags & ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION);
        if (validate)
            note_pid_namespace();
        Result<std::string> key = ipc::publish(ipc::Kind::Memory, make_fd, validate, phys->device);
        if (!key.ok())
            return fail_handle(key.error(), "publishing the memory");
        Result<uint64_t> name = ipc::name_key(key.value());
        if (!name.ok()) {
            (void)ipc::revoke(key.value());
            return fail_handle(name.error(), "naming the key");
        }
        bool kept = false;
        {
            // Still the runtime's: neither freed nor dropped by a device
            // reset meanwhile (which would never revoke this key).
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::lock_guard<std::mutex> plock(phys->mu);
            if (phys->handle_refs > 0 && rt.objects.count(phys->token)) {
                phys->shareable = name.value();
                phys->shared_key = key.value();
                kept = true;
            }
        }
        if (!kept) { // freed meanwhile
            ipc::unname(name.value());
            (void)ipc::revoke(key.value());
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the memory was freed while being exported");
        }
        *shareableHandle = name.value();
        return ACL_SUCCESS;
    });
}

aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum)
{
    return api("aclrtMemSetPidToShareableHandle", [&] {
        if (!pid)
            return fail(ACL_ERROR_INVALID_PARAM, "pid is NULL");
        if (pidNum == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "pidNum is 0");
        std::string key;
        {
            // A live physical allocation of this process with that handle.
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            for (auto &entry : rt.objects) {
                if (entry.second->kind != Kind::Physical)
                    continue;
                auto &phys = static_cast<Physical &>(*entry.second);
                std::lock_guard<std::mutex> plock(phys.mu);
                if (phys.shareable == shareableHandle)
                    key = phys.shared_key;
            }
            if (key.empty())
                return fail(ACL_ERROR_RT_NO_PERMISSION,
                            "only the process that exported a shareable handle may list importers");
        }
        Status st = ipc::allow(key, pid, pidNum);
        if (!st.ok())
            return st.error() == EINVAL ? fail(ACL_ERROR_RT_PARAM_INVALID, "a PID is not a process id")
                                        : fail_handle(st.error(), "listing importers");
        return ACL_SUCCESS;
    });
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle *handle)
{
    return api("aclrtMemImportFromShareableHandle", [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        if (deviceId < 0)
            return fail(ACL_ERROR_RT_INVALID_DEVICEID, "device id %d is negative", deviceId);
        if (shareableHandle == 0)
            return fail_handle(ESRCH, "reading the shareable handle");
        uint32_t index;
        std::shared_ptr<const Device> dev;
        if (aclError err = device_for(deviceId, index, dev))
            return err;
        DeviceUse use(index, dev);
        Result<ipc::Fetched> got = ipc::fetch_named(shareableHandle, ipc::Kind::Memory, 5000);
        if (!got.ok())
            return fail_handle(got.error(), "importing the shareable handle");
        uint32_t src = got.value().tag; // the npuipc index of the memory's device
        if (src != index && !Runtime::get().peer_enabled(index, src))
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "the memory lives on another device (npuipc index %u): enable peer "
                        "access from device %d first",
                        src, deviceId);
        // On a fabric server physical memory is the window's, which every
        // device reaches as a peer's.
        const bool peer = src != index || fabric_present();
        return add_imported_physical(index, dev, got.value().fd.get(), peer ? Peer::Allow : Peer::Refuse,
                                     deviceId, handle);
    });
}

// The V2 shareable handles: the DEFAULT type is V1's 64-bit handle, read
// and written through the pointer; FABRIC handles (aclrtMemFabricHandle)
// cross servers through the fabric daemons (api_fabric.cpp). A server
// without a fabric window is in no SuperPOD: FABRIC is not supported
// there, as CANN's runtime says of a server without a server id.
static aclError check_share_type(aclrtMemSharedHandleType shareType)
{
    if (shareType != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT && shareType != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown shareable handle type %d", static_cast<int>(shareType));
    return ACL_SUCCESS;
}

static aclError no_fabric()
{
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "fabric handles cross servers; this server has no fabric window (no SuperPOD)");
}

// Keeps `made` as `phys`'s export if `phys` is still the application's:
// not freed, nor dropped by a device reset (which takes it out of the
// runtime's objects); both release what they find, under these locks.
static bool keep_export(Physical &phys, const fabric::Handle &made, uint64_t session)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::lock_guard<std::mutex> plock(phys.mu);
    if (phys.handle_refs == 0 || !rt.objects.count(phys.token))
        return false;
    phys.fabric_export = Physical::FabricExport{made, session};
    return true;
}

static aclError export_fabric(aclrtDrvMemHandle handle, uint64_t flags, aclrtMemFabricHandle *out)
{
    // As CANN: a server outside a SuperPOD says so before anything else.
    if (!fabric_present())
        return no_fabric();
    std::shared_ptr<Physical> phys;
    if (aclError err = find_physical(handle, phys))
        return err;
    if (!phys->fabric_memory)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "the memory is another process's, not fabric memory of this one");
    // One handle per memory, as a V1 export: exported again, the same
    // (while the daemon session holding it lasts).
    std::lock_guard<std::mutex> exporting(phys->export_mu);
    std::optional<Physical::FabricExport> made_before;
    {
        std::lock_guard<std::mutex> lock(phys->mu);
        made_before = phys->fabric_export;
    }
    // (Checked without phys->mu: the fabric state's lock is never taken
    // under the runtime's.)
    if (made_before && fabric_session_lives(made_before->session)) {
        std::memcpy(out->data, made_before->handle.data.data(), sizeof(out->data));
        return ACL_SUCCESS;
    }
    fabric::Handle made;
    uint64_t session = 0;
    if (aclError err = fabric_export(phys->fabric_memory.get(),
                                     !(flags & ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION), made,
                                     session))
        return err;
    if (keep_export(*phys, made, session)) {
        std::memcpy(out->data, made.data.data(), sizeof(out->data));
        return ACL_SUCCESS;
    }
    fabric_release(made); // freed, or its device reset, meanwhile
    return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p was freed", handle);
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
                                           aclrtMemSharedHandleType shareType, void *shareableHandle)
{
    return api("aclrtMemExportToShareableHandleV2", [&] {
        if (!handle || !shareableHandle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle and shareableHandle must not be NULL");
        if (shareType != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT && shareType != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown shareable handle type %d", static_cast<int>(shareType));
        if (flags & ~ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown export flags 0x%llx",
                        static_cast<unsigned long long>(flags));
        if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC) {
            // As CANN: a fabric export asks the server id of the current device.
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::shared_ptr<Context> ctx;
            if (aclError err = rt.current_context(ctx))
                return err;
        }
        if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
            return export_fabric(handle, flags, static_cast<aclrtMemFabricHandle *>(shareableHandle));
        return aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, flags,
                                               static_cast<uint64_t *>(shareableHandle));
    });
}

aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType shareType,
                                             uint64_t flags, aclrtDrvMemHandle *handle)
{
    return api("aclrtMemImportFromShareableHandleV2", [&] {
        if (!shareableHandle || !handle)
            return fail(ACL_ERROR_INVALID_PARAM, "shareableHandle and handle must not be NULL");
        if (flags != 0)
            return fail(ACL_ERROR_INVALID_PARAM, "flags must be 0");
        // Onto the current device: V2 takes no device id.
        int32_t device = -1;
        if (aclError err = aclrtGetDevice(&device))
            return err;
        if (aclError err = check_share_type(shareType))
            return err;
        if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC) {
            UniqueFd memory;
            if (aclError err = fabric_import(*static_cast<const aclrtMemFabricHandle *>(shareableHandle), memory))
                return err;
            uint32_t index;
            std::shared_ptr<const Device> dev;
            if (aclError err = device_for(device, index, dev))
                return err;
            DeviceUse use(index, dev);
            // The window's memory: the device imports it as a peer's.
            return add_imported_physical(index, dev, memory.get(), Peer::Allow, device, handle);
        }
        return aclrtMemImportFromShareableHandle(*static_cast<const uint64_t *>(shareableHandle), device, handle);
    });
}

aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType shareType,
                                           int32_t *pid, size_t pidNum)
{
    return api("aclrtMemSetPidToShareableHandleV2", [&] {
        if (!shareableHandle || !pid || pidNum == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "shareableHandle and pid must be set, pidNum not 0");
        if (aclError err = check_share_type(shareType))
            return err;
        if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
            return fabric_allow(*static_cast<const aclrtMemFabricHandle *>(shareableHandle), pid, pidNum);
        return aclrtMemSetPidToShareableHandle(*static_cast<const uint64_t *>(shareableHandle), pid, pidNum);
    });
}

aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                          uint64_t flags)
{
    return api("aclrtReserveMemAddressNoUCMemory", [&] {
        if (!virPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        if (flags > 1)
            return fail(ACL_ERROR_INVALID_PARAM, "flags must be 0 or 1");
        // A mock NPU's jobs never bypass a cache (it has none): the range is
        // an ordinary reservation.
        return aclrtReserveMemAddress(virPtr, size, alignment, expectPtr, 0);
    });
}

aclError aclrtMemP2PMap(void *devPtr, size_t size, int32_t dstDevId, uint64_t flags)
{
    return api("aclrtMemP2PMap", [&] {
        if (!devPtr || size == 0 || flags != 0)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr must be set, size not 0, flags 0");
        Runtime &rt = Runtime::get();
        uint32_t index;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(dstDevId, index))
                return err;
        }
        std::shared_ptr<Allocation> alloc = rt.find_allocation(devPtr, size);
        if (!alloc)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%zu bytes at %p are not inside one device allocation", size,
                        devPtr);
        std::shared_ptr<const Device> dev;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            auto it = rt.devices.find(index);
            if (it == rt.devices.end() || it->second.refs == 0)
                return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %d is not set in this process", dstDevId);
            dev = it->second.dev;
        }
        // The peer's view made now (an import of the memory into the
        // peer's file), so that its first job on the memory needs none.
        uint32_t handle;
        return buffer_on_device(rt, *alloc, index, dev, handle);
    });
}

aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType adviceLink)
{
    return api("aclrtMemMapSetLink", [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        if (adviceLink > ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown link %d", static_cast<int>(adviceLink));
        std::shared_ptr<Physical> phys;
        if (aclError err = find_physical(handle, phys))
            return err;
        // Devices of a mock NPU reach each other one way, the default (SIO).
        if (adviceLink != ACL_RT_MEM_ACCESS_LINK_SIO)
            return fail(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, "a mock NPU's devices have no link %d",
                        static_cast<int>(adviceLink));
        return ACL_SUCCESS;
    });
}

} // extern "C"
