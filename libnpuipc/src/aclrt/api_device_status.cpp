// SPDX-License-Identifier: MIT
// A device's health and what its engines have: aclrtQueryDeviceStatus,
// aclrtGetDeviceUtilizationRate and the atomic capabilities
// (aclrt_device(3)). A mock NPU has a copy engine and no compute cores,
// AI CPUs or interconnect atomics; its status is whether the driver still
// has the device (a PCI NPU can be unplugged).
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// CANN's "not available" for a utilization.
constexpr int32_t kNoUtilization = -1;

// The highest aclrtAtomicOperation CANN takes.
constexpr uint32_t kLastAtomicOperation = 44;

// The arguments both atomic-capability queries check, in CANN's order:
// outputs, a count, each operation (after the device ids).
aclError check_atomic_arguments(uint32_t *capabilities, const aclrtAtomicOperation *operations, uint32_t count)
{
    if (!capabilities || !operations)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s is NULL", capabilities ? "operations" : "capabilities");
    if (count == 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "count is 0");
    return ACL_SUCCESS;
}

aclError check_operations(const aclrtAtomicOperation *operations, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (static_cast<uint32_t>(operations[i]) > kLastAtomicOperation)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "operations[%u] is %d, not an atomic operation", i,
                        static_cast<int>(operations[i]));
    return ACL_SUCCESS;
}

// No atomics of a device's kernels reach the host or a peer: a mock NPU has
// no kernels, and its devices share no coherent interconnect.
aclError no_atomic_capabilities(uint32_t *capabilities, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        capabilities[i] = 0;
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)
{
    return api("aclrtQueryDeviceStatus", [&] {
        if (!deviceStatus)
            return fail(ACL_ERROR_INVALID_PARAM, "deviceStatus is NULL");
        Runtime &rt = Runtime::get();
        uint32_t index = 0;
        std::shared_ptr<const Device> dev;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(deviceId, index))
                return err;
            auto state = rt.devices.find(index);
            if (state != rt.devices.end())
                dev = state->second.dev;
        }
        // The device this process opened, or a look at the node as it is.
        Result<DeviceInfo> info = Status::from_errno(ENODEV);
        if (dev) {
            info = dev->info();
        } else {
            Result<Device> opened = Device::open(index);
            if (opened.ok())
                info = opened.value().info();
        }
        if (!info.ok() && info.error() != ENODEV)
            return fail_errno(info.error(), Op::Generic, "querying the device");
        *deviceStatus = info.ok() ? ACL_RT_DEVICE_STATUS_NORMAL : ACL_RT_DEVICE_STATUS_ABNORMAL;
        return ACL_SUCCESS;
    });
}

aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo)
{
    return api("aclrtGetDeviceUtilizationRate", [&] {
        if (!utilizationInfo)
            return fail(ACL_ERROR_INVALID_PARAM, "utilizationInfo is NULL");
        if (utilizationInfo->utilizationExtend)
            return fail(ACL_ERROR_INVALID_PARAM, "utilizationExtend is reserved: NULL");
        (void)deviceId; // as CANN: a bad id reads as no utilization, not as an error
        // No cube or vector cores, no AI CPU; and CANN reports no memory
        // utilization on any device.
        utilizationInfo->cubeUtilization = kNoUtilization;
        utilizationInfo->vectorUtilization = kNoUtilization;
        utilizationInfo->aicpuUtilization = kNoUtilization;
        utilizationInfo->memoryUtilization = kNoUtilization;
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceGetHostAtomicCapabilities(uint32_t *capabilities, const aclrtAtomicOperation *operations,
                                              const uint32_t count, int32_t deviceId)
{
    return api("aclrtDeviceGetHostAtomicCapabilities", [&] {
        if (aclError err = check_atomic_arguments(capabilities, operations, count))
            return err;
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(deviceId))
                return err;
        }
        if (aclError err = check_operations(operations, count))
            return err;
        return no_atomic_capabilities(capabilities, count);
    });
}

aclError aclrtDeviceGetP2PAtomicCapabilities(uint32_t *capabilities, const aclrtAtomicOperation *operations,
                                             const uint32_t count, int32_t srcDeviceId, int32_t dstDeviceId)
{
    return api("aclrtDeviceGetP2PAtomicCapabilities", [&] {
        if (aclError err = check_atomic_arguments(capabilities, operations, count))
            return err;
        if (srcDeviceId == dstDeviceId)
            return fail(ACL_ERROR_RT_INVALID_DEVICEID, "source and destination are both device %d", srcDeviceId);
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(srcDeviceId))
                return err;
            if (aclError err = rt.check_device_id(dstDeviceId))
                return err;
        }
        if (aclError err = check_operations(operations, count))
            return err;
        return no_atomic_capabilities(capabilities, count);
    });
}

} // extern "C"
