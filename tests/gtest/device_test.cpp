// SPDX-License-Identifier: MIT
// libnpuipc against the real driver; runs in the VM (tools/vm-run).
#include "npuipc/device.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "drm/npuipc_drm.h"

namespace {

long module_param_num_devices()
{
    std::ifstream in("/sys/module/npuipc/parameters/num_devices");
    long n = -1;
    in >> n;
    return n;
}

class DeviceTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (module_param_num_devices() <= 0)
            GTEST_SKIP() << "npuipc.ko is not loaded or has no virtual device";
    }
};

TEST_F(DeviceTest, ListDevicesFindsEveryVirtualDeviceInIndexOrder)
{
    auto devices = npuipc::list_devices();
    ASSERT_TRUE(devices.ok()) << devices.error();
    ASSERT_EQ(static_cast<size_t>(module_param_num_devices()), devices.value().size());
    for (size_t i = 0; i < devices.value().size(); i++) {
        const npuipc::DeviceInfo &info = devices.value()[i];
        EXPECT_EQ(i, info.index);
        EXPECT_EQ(static_cast<uint32_t>(NPUIPC_UAPI_VERSION), info.uapi_version);
        EXPECT_GT(info.mem_total, 0u);
        EXPECT_TRUE(info.caps & NPUIPC_CAP_VIRTUAL);
    }
}

TEST_F(DeviceTest, OpenByIndexReachesThatDevice)
{
    auto dev = npuipc::Device::open(1);
    if (!dev.ok() && module_param_num_devices() < 2)
        GTEST_SKIP() << "needs two devices";
    ASSERT_TRUE(dev.ok()) << dev.error();
    auto info = dev.value().info();
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(1u, info.value().index);
}

TEST_F(DeviceTest, OpenOfAMissingIndexFailsWithEnodev)
{
    auto dev = npuipc::Device::open(1000);
    ASSERT_FALSE(dev.ok());
    EXPECT_EQ(ENODEV, dev.error());
}

TEST(DeviceWithoutDriver, ListDevicesIsEmptyNotAnErrorWhenTheModuleIsAbsent)
{
    if (module_param_num_devices() >= 0)
        GTEST_SKIP() << "npuipc.ko is loaded";
    auto devices = npuipc::list_devices();
    ASSERT_TRUE(devices.ok());
    EXPECT_TRUE(devices.value().empty());
}

} // namespace
