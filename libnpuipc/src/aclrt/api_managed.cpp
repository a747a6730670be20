// SPDX-License-Identifier: MIT
// Managed memory (aclrt_managed(3)): aclrtMemAllocManaged gives one pointer
// that the host and the device both use, and the advice and prefetch calls
// describe where its pages should live. A mock NPU's device memory is the
// host's RAM, mapped at the same address for the process and reached there
// by the device's jobs, so a managed allocation is device memory whose
// pages never need to move: advice and prefetches are kept per 2 MiB chunk
// and reported by the attribute queries, as CANN's driver reports them,
// with nothing to migrate.
#include <cstring>
#include <mutex>
#include <sched.h>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace npuipc_rt {

struct ManagedChunk {
    bool read_mostly = false;
    aclrtMemManagedLocation preferred{ACL_MEM_LOCATIONTYPE_INVALID, 0};
    aclrtMemManagedLocation last_prefetch{ACL_MEM_LOCATIONTYPE_INVALID, 0};
    // The locations advised as accessors, by type and id.
    std::set<std::pair<int, int32_t>> accessed_by;
};

struct ManagedState {
    // Protects chunks.
    std::mutex mu;
    std::vector<ManagedChunk> chunks;
};

} // namespace npuipc_rt

namespace {

constexpr uint64_t kChunk = 2ULL << 20; // CANN's granule of managed memory
constexpr uint64_t kMaxManaged = 3ULL << 40; // CANN's limit per process
constexpr int32_t kHostId = -1;    // a host location, in the int attributes
constexpr int32_t kNoLocation = -2; // none, or not the same over the range

// The managed allocation holding [ptr, ptr + size), and its chunks.
aclError managed_range(const void *ptr, uint64_t size, bool aligned, std::shared_ptr<Allocation> &alloc,
                       size_t &first, size_t &last)
{
    Place p;
    if (aclError err = locate(Runtime::get(), ptr, size, p))
        return err;
    std::shared_ptr<ManagedState> state = p.alloc ? p.alloc->managed : nullptr;
    if (!state)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not memory of aclrtMemAllocManaged", ptr);
    if (aligned && (p.offset % kChunk || size % kChunk))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%p and %lu bytes: advice and prefetches take 2 MiB chunks", ptr,
                    static_cast<unsigned long>(size));
    first = p.offset / kChunk;
    last = (p.offset + size - 1) / kChunk;
    alloc = std::move(p.alloc);
    return ACL_SUCCESS;
}

// The calling thread's NUMA node.
int32_t current_numa_node()
{
    unsigned cpu = 0, node = 0;
    if (getcpu(&cpu, &node) != 0)
        return 0;
    return static_cast<int32_t>(node);
}

// A location of an advice or prefetch: a device the process sees, the
// host, or one of its NUMA nodes (the current one resolved now).
aclError check_location(aclrtMemManagedLocation &loc)
{
    switch (loc.type) {
    case ACL_MEM_LOCATIONTYPE_DEVICE: {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        uint32_t index;
        if (rt.check_device_id(loc.id, index) != ACL_SUCCESS)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "location: no device %d", loc.id);
        return ACL_SUCCESS;
    }
    case ACL_MEM_LOCATIONTYPE_HOST:
        loc.id = kHostId;
        return ACL_SUCCESS;
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT:
        loc.type = ACL_MEM_LOCATIONTYPE_HOST_NUMA;
        loc.id = current_numa_node();
        return ACL_SUCCESS;
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA: {
        std::string node = "/sys/devices/system/node/node" + std::to_string(loc.id);
        if (loc.id < 0 || ::access(node.c_str(), F_OK) != 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "location: no NUMA node %d", loc.id);
        return ACL_SUCCESS;
    }
    default:
        return fail(ACL_ERROR_RT_PARAM_INVALID, "location type %d is no place for memory",
                    static_cast<int>(loc.type));
    }
}

// A location as the int attributes give it: a device id, -1 the host.
int32_t location_code(const aclrtMemManagedLocation &loc)
{
    switch (loc.type) {
    case ACL_MEM_LOCATIONTYPE_DEVICE:
        return loc.id;
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA:
        return loc.id; // the node, as CANN's documentation gives it
    case ACL_MEM_LOCATIONTYPE_HOST:
        return kHostId;
    default:
        return kNoLocation;
    }
}

bool same_location(const aclrtMemManagedLocation &a, const aclrtMemManagedLocation &b)
{
    return a.type == b.type && (a.type == ACL_MEM_LOCATIONTYPE_INVALID || a.id == b.id);
}

// The location a field of every chunk in [first, last] has; INVALID when
// they differ.
aclrtMemManagedLocation common_location(const ManagedState &st, size_t first, size_t last,
                                        aclrtMemManagedLocation ManagedChunk::*field)
{
    aclrtMemManagedLocation loc = st.chunks[first].*field;
    for (size_t i = first + 1; i <= last; i++)
        if (!same_location(loc, st.chunks[i].*field))
            return {ACL_MEM_LOCATIONTYPE_INVALID, 0};
    return loc;
}

template <typename T> aclError put(void *data, size_t dataSize, T value)
{
    if (dataSize != sizeof(T))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "dataSize %zu: this attribute is %zu bytes", dataSize, sizeof(T));
    std::memcpy(data, &value, sizeof(T));
    return ACL_SUCCESS;
}

// One attribute of the chunks [first, last], with ManagedState::mu held.
aclError get_attribute(const ManagedState &st, size_t first, size_t last, aclrtMemManagedRangeAttribute attribute,
                       void *data, size_t dataSize)
{
    switch (attribute) {
    case ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: {
        int32_t all = 1;
        for (size_t i = first; i <= last; i++)
            all &= st.chunks[i].read_mostly ? 1 : 0;
        return put<int32_t>(data, dataSize, all);
    }
    case ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
        if (dataSize == 0 || dataSize % sizeof(int32_t))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "dataSize %zu: a non-zero multiple of 4", dataSize);
        // The accessors advised for the whole range.
        std::set<std::pair<int, int32_t>> common = st.chunks[first].accessed_by;
        for (size_t i = first + 1; i <= last; i++)
            for (auto it = common.begin(); it != common.end();)
                it = st.chunks[i].accessed_by.count(*it) ? std::next(it) : common.erase(it);
        auto *out = static_cast<int32_t *>(data);
        const size_t slots = dataSize / sizeof(int32_t);
        auto it = common.begin();
        for (size_t i = 0; i < slots; i++) {
            if (it == common.end()) {
                out[i] = kNoLocation;
                continue;
            }
            out[i] = location_code({static_cast<aclrtMemManagedLocationType>(it->first), it->second});
            ++it;
        }
        return ACL_SUCCESS;
    }
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
        const bool preferred = attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION ||
                               attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
                               attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID;
        const aclrtMemManagedLocation loc = common_location(
            st, first, last, preferred ? &ManagedChunk::preferred : &ManagedChunk::last_prefetch);
        if (attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION ||
            attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION)
            return put<int32_t>(data, dataSize, location_code(loc));
        if (attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
            attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE)
            return put<aclrtMemManagedLocationType>(data, dataSize, loc.type);
        return put<int32_t>(data, dataSize, loc.type == ACL_MEM_LOCATIONTYPE_INVALID ? kNoLocation : loc.id);
    }
    default:
        return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown range attribute %d", static_cast<int>(attribute));
    }
}

bool known_attribute(aclrtMemManagedRangeAttribute a)
{
    return a >= ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY && a <= ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID;
}

aclError need_context()
{
    uint32_t device;
    std::shared_ptr<const Device> dev;
    return Runtime::get().current_device(device, dev);
}

// Records a prefetch of [ptr, ptr + size) to `loc` (checked).
aclError prefetch(const void *ptr, size_t size, aclrtMemManagedLocation loc)
{
    if (aclError err = check_location(loc))
        return err;
    std::shared_ptr<Allocation> alloc;
    size_t first, last;
    if (aclError err = managed_range(ptr, size, true, alloc, first, last))
        return err;
    ManagedState &st = *alloc->managed;
    std::lock_guard<std::mutex> lock(st.mu);
    for (size_t i = first; i <= last; i++)
        st.chunks[i].last_prefetch = loc;
    return ACL_SUCCESS;
}

// The stream of a prefetch: its work is ordered after what the stream has,
// which a mock NPU's memory does not need, but a stopped context refuses it.
aclError prefetch_stream(aclrtStream stream)
{
    std::shared_ptr<Stream> s;
    if (aclError err = find_stream(stream, s))
        return err;
    return stopped_context_error(*s);
}

} // namespace

extern "C" {

aclError aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag)
{
    return api("aclrtMemAllocManaged", [&] {
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (flag != ACL_RT_MEM_ATTACH_GLOBAL)
            return fail(ACL_ERROR_INVALID_PARAM, "flag 0x%x: ACL_RT_MEM_ATTACH_GLOBAL is the only one", flag);
        if (size == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
        if (size > kMaxManaged)
            return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%lu bytes: a process has 3 TiB of managed memory",
                        static_cast<unsigned long>(size));
        const uint64_t rounded = (size + kChunk - 1) / kChunk * kChunk;
        auto state = std::make_shared<ManagedState>();
        state->chunks.resize(rounded / kChunk);
        return malloc_device(ptr, rounded, ACL_MEM_MALLOC_HUGE_FIRST, std::move(state));
    });
}

aclError aclrtMemManagedAdvise(const void *const ptr, uint64_t size, aclrtMemManagedAdviseType advise,
                               aclrtMemManagedLocation location)
{
    return api("aclrtMemManagedAdvise", [&] {
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        if (static_cast<uint32_t>(advise) > ACL_MEM_ADVISE_UNSET_ACCESSED_BY)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown advice %d", static_cast<int>(advise));
        if (aclError err = need_context())
            return err;
        // The advice that names a place checks it; the others ignore it.
        const bool placed = advise == ACL_MEM_ADVISE_SET_PREFERRED_LOCATION ||
                            advise == ACL_MEM_ADVISE_SET_ACCESSED_BY || advise == ACL_MEM_ADVISE_UNSET_ACCESSED_BY;
        if (placed) {
            if (aclError err = check_location(location))
                return err;
        } else if (location.type == ACL_MEM_LOCATIONTYPE_DEVICE) {
            if (aclError err = check_location(location))
                return err;
        }
        std::shared_ptr<Allocation> alloc;
        size_t first, last;
        if (aclError err = managed_range(ptr, size, true, alloc, first, last))
            return err;
        ManagedState &st = *alloc->managed;
        std::lock_guard<std::mutex> lock(st.mu);
        for (size_t i = first; i <= last; i++) {
            ManagedChunk &c = st.chunks[i];
            switch (advise) {
            case ACL_MEM_ADVISE_SET_READ_MOSTLY:
                c.read_mostly = true;
                break;
            case ACL_MEM_ADVISE_UNSET_READ_MOSTLY:
                c.read_mostly = false;
                break;
            case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
                c.preferred = location;
                break;
            case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
                c.preferred = {ACL_MEM_LOCATIONTYPE_INVALID, 0};
                break;
            case ACL_MEM_ADVISE_SET_ACCESSED_BY:
                c.accessed_by.insert({static_cast<int>(location.type), location.id});
                break;
            case ACL_MEM_ADVISE_UNSET_ACCESSED_BY:
                c.accessed_by.erase({static_cast<int>(location.type), location.id});
                break;
            }
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void *ptr, size_t size, void *data,
                                size_t dataSize)
{
    return api("aclrtMemManagedGetAttr", [&] {
        if (!ptr || !data)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", ptr ? "data" : "ptr");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        if (!known_attribute(attribute))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown range attribute %d", static_cast<int>(attribute));
        std::shared_ptr<Allocation> alloc;
        size_t first, last;
        if (aclError err = managed_range(ptr, size, false, alloc, first, last))
            return err;
        std::lock_guard<std::mutex> lock(alloc->managed->mu);
        return get_attribute(*alloc->managed, first, last, attribute, data, dataSize);
    });
}

aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes, size_t numAttributes, const void *ptr,
                                 size_t size, void **data, size_t *dataSizes)
{
    return api("aclrtMemManagedGetAttrs", [&] {
        if (!ptr || !attributes || !data || !dataSizes)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr, attributes, data and dataSizes must not be NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        for (size_t i = 0; i < numAttributes; i++)
            if (!known_attribute(attributes[i]))
                return fail(ACL_ERROR_RT_PARAM_INVALID, "attributes[%zu] is %d, not a range attribute", i,
                            static_cast<int>(attributes[i]));
        std::shared_ptr<Allocation> alloc;
        size_t first, last;
        if (aclError err = managed_range(ptr, size, false, alloc, first, last))
            return err;
        for (size_t i = 0; i < numAttributes; i++)
            if (!data[i])
                return fail(ACL_ERROR_RT_PARAM_INVALID, "data[%zu] is NULL", i);
        std::lock_guard<std::mutex> lock(alloc->managed->mu);
        for (size_t i = 0; i < numAttributes; i++)
            if (aclError err = get_attribute(*alloc->managed, first, last, attributes[i], data[i], dataSizes[i]))
                return err;
        return ACL_SUCCESS;
    });
}

aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size, aclrtMemManagedLocation location, uint32_t flags,
                                      aclrtStream stream)
{
    return api("aclrtMemManagedPrefetchAsync", [&] {
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        if (flags)
            return fail(ACL_ERROR_INVALID_PARAM, "flags 0x%x: must be 0", flags);
        if (aclError err = prefetch_stream(stream))
            return err;
        return prefetch(ptr, size, location);
    });
}

aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs, size_t *sizes, size_t count,
                                           aclrtMemManagedLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                           size_t numPrefetchLocs, uint64_t flags, aclrtStream stream)
{
    return api("aclrtMemManagedPrefetchBatchAsync", [&] {
        if (!ptrs || !sizes || !prefetchLocs || !prefetchLocIdxs)
            return fail(ACL_ERROR_INVALID_PARAM, "ptrs, sizes, prefetchLocs and prefetchLocIdxs must not be NULL");
        if (count == 0 || numPrefetchLocs == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "count and numPrefetchLocs must not be 0");
        if (flags)
            return fail(ACL_ERROR_INVALID_PARAM, "flags 0x%lx: must be 0", static_cast<unsigned long>(flags));
        if (count < numPrefetchLocs)
            return fail(ACL_ERROR_INVALID_PARAM, "%zu locations for %zu prefetches", numPrefetchLocs, count);
        if (prefetchLocIdxs[0] != 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "prefetchLocIdxs[0] is %zu, not 0", prefetchLocIdxs[0]);
        for (size_t k = 1; k < numPrefetchLocs; k++)
            if (prefetchLocIdxs[k] <= prefetchLocIdxs[k - 1] || prefetchLocIdxs[k] >= count)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "prefetchLocIdxs[%zu] is %zu: increasing, below %zu", k,
                            prefetchLocIdxs[k], count);
        for (size_t i = 0; i < count; i++)
            if (!ptrs[i])
                return fail(ACL_ERROR_RT_PARAM_INVALID, "ptrs[%zu] is NULL", i);
        if (aclError err = prefetch_stream(stream))
            return err;
        // Every range and location checked before any is recorded.
        std::vector<aclrtMemManagedLocation> locs(prefetchLocs, prefetchLocs + numPrefetchLocs);
        for (aclrtMemManagedLocation &loc : locs)
            if (aclError err = check_location(loc))
                return err;
        for (size_t i = 0; i < count; i++) {
            std::shared_ptr<Allocation> alloc;
            size_t first, last;
            if (sizes[i] == 0)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "sizes[%zu] is 0", i);
            if (aclError err = managed_range(ptrs[i], sizes[i], true, alloc, first, last))
                return err;
        }
        size_t k = 0;
        for (size_t i = 0; i < count; i++) {
            while (k + 1 < numPrefetchLocs && prefetchLocIdxs[k + 1] <= i)
                k++;
            if (aclError err = prefetch(ptrs[i], sizes[i], locs[k]))
                return err;
        }
        return ACL_SUCCESS;
    });
}

// A mock NPU's memory has no ECC to report uncorrectable errors of: no
// range ever needs repair, and a repair of intact memory succeeds.
aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize, size_t *retSize)
{
    (void)arraySize;
    return api("aclrtGetMemUceInfo", [&] {
        if (!memUceInfoArray || !retSize)
            return fail(ACL_ERROR_INVALID_PARAM, "memUceInfoArray and retSize must not be NULL");
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(deviceId))
                return err;
        }
        *retSize = 0;
        return ACL_SUCCESS;
    });
}

aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize)
{
    return api("aclrtMemUceRepair", [&] {
        if (!memUceInfoArray)
            return fail(ACL_ERROR_INVALID_PARAM, "memUceInfoArray is NULL");
        if (arraySize > ACL_RT_MEM_UCE_INFO_MAX_NUM)
            return fail(ACL_ERROR_INVALID_PARAM, "arraySize %zu: at most %d ranges", arraySize,
                        ACL_RT_MEM_UCE_INFO_MAX_NUM);
        for (size_t i = 0; i < arraySize; i++)
            for (size_t r : memUceInfoArray[i].reserved)
                if (r)
                    return fail(ACL_ERROR_INVALID_PARAM, "memUceInfoArray[%zu].reserved is not 0", i);
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(deviceId))
                return err;
        }
        return ACL_SUCCESS;
    });
}

} // extern "C"
