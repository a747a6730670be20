// SPDX-License-Identifier: MIT
// Device and host memory allocated with a configuration, and what a
// pointer is. The codes are those CANN's runtime returns for the same
// arguments. Documentation/man/aclrt_memory.3.
#include <algorithm>
#include <cstring>
#include <vector>

#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// Checks a configuration of aclrtMallocWithCfg (`device`) or
// aclrtMallocHostWithCfg: CANN refuses one without attributes, even an
// empty one, and each call takes only its own attributes.
aclError check_malloc_cfg(const aclrtMallocConfig *cfg, bool device)
{
    if (!cfg)
        return ACL_SUCCESS;
    if (!cfg->attrs)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the configuration's attrs is NULL");
    for (size_t i = 0; i < cfg->numAttrs; i++) {
        const aclrtMallocAttribute &a = cfg->attrs[i];
        switch (a.attr) {
        case ACL_RT_MEM_ATTR_RSV:
            if (device)
                break;
            return fail(ACL_ERROR_RT_PARAM_INVALID, "host memory takes no reserved attribute");
        case ACL_RT_MEM_ATTR_MODULE_ID:
            break; // who allocates: for CANN's accounting, which npuipc does not keep
        case ACL_RT_MEM_ATTR_DEVICE_ID: {
            if (!device)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "host memory takes no device id");
            // The current context's device, as an application id.
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::shared_ptr<Context> ctx;
            if (aclError err = rt.current_context(ctx))
                return err;
            if (rt.logical_id(ctx->device) != static_cast<int32_t>(a.value.deviceId))
                return fail(ACL_ERROR_RT_PARAM_INVALID, "device id %u is not the current device",
                            a.value.deviceId);
            break;
        }
        case ACL_RT_MEM_ATTR_VA_FLAG:
            if (device)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "device memory takes no VA flag");
            // The same address on the device after aclrtHostRegister: a
            // feature of A2/A3 drivers that npuipc's does not have.
            if (a.value.vaFlag)
                return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                            "VA-consistent host memory (vaFlag 1) is not supported");
            break;
        default:
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown memory attribute %d", static_cast<int>(a.attr));
        }
    }
    return ACL_SUCCESS;
}

aclError malloc_with_cfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)
{
    if (!devPtr)
        return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    if (cfg && cfg->numAttrs && !cfg->attrs)
        return fail(ACL_ERROR_INVALID_PARAM, "the configuration has attributes but attrs is NULL");
    if (size == 0)
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    if (aclError err = check_malloc_cfg(cfg, true))
        return err;
    return malloc_device(devPtr, size, policy);
}

} // namespace

extern "C" {

aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)
{
    return api("aclrtMallocWithCfg", [&] { return malloc_with_cfg(devPtr, size, policy, cfg); });
}

// Memory CANN's on-chip task scheduler reaches (below 4 GiB on its chips):
// a mock NPU's jobs reach all of its memory, so it is aclrtMallocWithCfg's.
aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size, aclrtMemMallocPolicy policy,
                                     aclrtMallocConfig *cfg)
{
    return api("aclrtMallocForTaskScheduler", [&] { return malloc_with_cfg(devPtr, size, policy, cfg); });
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return api("aclrtMallocAlign32", [&] {
        if (!devPtr)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
        if (size == 0 || size > SIZE_MAX - 32)
            return fail(ACL_ERROR_INVALID_PARAM, "size %zu: 1 to SIZE_MAX - 32", size);
        // Device memory is page-aligned, beyond the 32 bytes asked.
        return malloc_device(devPtr, size, policy);
    });
}

aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg)
{
    return api("aclrtMallocHostWithCfg", [&] {
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        if (size == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        if (aclError err = check_malloc_cfg(cfg, false))
            return err;
        // As CANN's: host memory of a context.
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::shared_ptr<Context> ctx;
            if (aclError err = rt.current_context(ctx))
                return err;
        }
        if (size > SIZE_MAX)
            return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot allocate %llu bytes of host memory",
                        static_cast<unsigned long long>(size));
        return malloc_host(ptr, static_cast<size_t>(size));
    });
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
    return api("aclrtPointerGetAttributes", [&] {
        if (!ptr || !attributes)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr and attributes must not be NULL");
        Runtime &rt = Runtime::get();
        // As CANN, rsv is left as the caller had it.
        if (std::shared_ptr<Allocation> alloc = rt.find_allocation(ptr, 1)) {
            int32_t id = -1;
            {
                std::lock_guard<std::mutex> lock(rt.mu);
                id = rt.logical_id(alloc->device);
            }
            attributes->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
            // A device hidden by ASCEND_RT_VISIBLE_DEVICES (memory imported
            // from it) keeps its npuipc index.
            attributes->location.id = id >= 0 ? static_cast<uint32_t>(id) : alloc->device;
            attributes->pageSize = static_cast<uint32_t>(page_size(alloc->page_class));
            return ACL_SUCCESS;
        }
        uintptr_t base = 0;
        size_t size = 0;
        attributes->location.type = host_allocation_of(rt, ptr, base, size) ? ACL_MEM_LOCATION_TYPE_HOST
                                                                            : ACL_MEM_LOCATION_TYPE_UNREGISTERED;
        attributes->location.id = 0;
        attributes->pageSize = static_cast<uint32_t>(::sysconf(_SC_PAGESIZE));
        return ACL_SUCCESS;
    });
}

aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum,
                              size_t *outputNum)
{
    return api("aclrtGetMemUsageInfo", [&] {
        if (!memUsageInfo || !outputNum)
            return fail(ACL_ERROR_INVALID_PARAM, "memUsageInfo and outputNum must not be NULL");
        *outputNum = 0;
        if (inputNum == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "inputNum is 0: no room for any entry");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        uint32_t index;
        if (aclError err = rt.check_device_id(deviceId, index))
            return err;
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        // This process's device memory by the call that made it, the
        // largest use first, as CANN sorts its components.
        struct Entry {
            const char *name;
            uint64_t current, peak;
        };
        std::vector<Entry> entries;
        const char *const names[kUsageKinds] = {"aclrtMalloc", "aclrtMallocPhysical"};
        for (size_t k = 0; k < kUsageKinds; k++) {
            std::shared_ptr<MemUsage> u = rt.usage_of(index, static_cast<UsageKind>(k));
            entries.push_back({names[k], u->current.load(std::memory_order_relaxed),
                               u->peak.load(std::memory_order_relaxed)});
        }
        std::stable_sort(entries.begin(), entries.end(),
                         [](const Entry &a, const Entry &b) { return a.current > b.current; });
        const size_t n = std::min(inputNum, entries.size());
        for (size_t i = 0; i < n; i++) {
            // reserved[] is left as the caller gave it, as CANN.
            std::memset(memUsageInfo[i].name, 0, sizeof(memUsageInfo[i].name));
            std::strncpy(memUsageInfo[i].name, entries[i].name, sizeof(memUsageInfo[i].name) - 1);
            memUsageInfo[i].curMemSize = entries[i].current;
            memUsageInfo[i].memPeakSize = entries[i].peak;
        }
        *outputNum = n;
        return ACL_SUCCESS;
    });
}

} // extern "C"
