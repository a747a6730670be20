// SPDX-License-Identifier: MIT
// A device's health and engines (aclrt_device(3)): the status of a device
// the driver has, utilizations a mock NPU does not have (-1, as CANN's
// "not available"), no atomic capabilities, and CANN's codes for every
// misuse.
#include "acl_test_util.h"

#include <cstdint>

using namespace acltest;

namespace {

class AclDeviceStatusTest : public AclTest {};

TEST_F(AclDeviceStatusTest, ADeviceTheDriverHasIsNormal)
{
    aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_ABNORMAL;
    ASSERT_EQ(ACL_SUCCESS, aclrtQueryDeviceStatus(0, &status));
    EXPECT_EQ(ACL_RT_DEVICE_STATUS_NORMAL, status);
    // A device this process has not opened is looked at all the same.
    if (DriverDeviceCount() > 1) {
        status = ACL_RT_DEVICE_STATUS_ABNORMAL;
        ASSERT_EQ(ACL_SUCCESS, aclrtQueryDeviceStatus(1, &status));
        EXPECT_EQ(ACL_RT_DEVICE_STATUS_NORMAL, status);
    }
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtQueryDeviceStatus(0, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtQueryDeviceStatus(-1, &status));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtQueryDeviceStatus(999, &status));
}

TEST_F(AclDeviceStatusTest, UtilizationsAMockNpuHasNotReadAsNotAvailable)
{
    aclrtUtilizationInfo info = {7, 7, 7, 7, nullptr};
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceUtilizationRate(0, &info));
    EXPECT_EQ(-1, info.cubeUtilization);
    EXPECT_EQ(-1, info.vectorUtilization);
    EXPECT_EQ(-1, info.aicpuUtilization);
    EXPECT_EQ(-1, info.memoryUtilization);
    // As CANN: a bad device reads as nothing available, not as an error.
    info = {7, 7, 7, 7, nullptr};
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceUtilizationRate(999, &info));
    EXPECT_EQ(-1, info.cubeUtilization);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDeviceUtilizationRate(0, nullptr));
    info.utilizationExtend = reinterpret_cast<aclrtUtilizationExtendInfo *>(&info);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDeviceUtilizationRate(0, &info));
}

TEST_F(AclDeviceStatusTest, NoAtomicCapabilitiesAndCANNsCodes)
{
    const aclrtAtomicOperation ops[2] = {ACL_RT_ATOMIC_OPERATION_INTEGER_ADD, ACL_RT_ATOMIC_OPERATION_OR};
    uint32_t caps[2] = {0xFF, 0xFF};
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetHostAtomicCapabilities(caps, ops, 2, 0));
    EXPECT_EQ(0u, caps[0]);
    EXPECT_EQ(0u, caps[1]);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetHostAtomicCapabilities(nullptr, ops, 2, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetHostAtomicCapabilities(caps, nullptr, 2, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetHostAtomicCapabilities(caps, ops, 0, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceGetHostAtomicCapabilities(caps, ops, 2, 999));
    const aclrtAtomicOperation bad[1] = {static_cast<aclrtAtomicOperation>(45)};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetHostAtomicCapabilities(caps, bad, 1, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 999));
    if (DriverDeviceCount() > 1) {
        caps[0] = caps[1] = 0xFF;
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 1));
        EXPECT_EQ(0u, caps[0]);
        EXPECT_EQ(0u, caps[1]);
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetP2PAtomicCapabilities(caps, bad, 1, 0, 1));
    }
}

} // namespace
