// SPDX-License-Identifier: MIT
// libnpuipc against the real driver; runs in the VM (tools/vm-run).
#include "npuipc/device.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "drm/npuipc_drm.h"
#include "npuipc_state.h"

namespace {

long module_param_num_devices()
{
    std::ifstream in("/sys/module/npuipc/parameters/num_devices");
    long n = -1;
    in >> n;
    return n;
}

// The mock PCI NPUs the module binds (bind_ivshmem=1): QEMU's ivshmem
// devices, PCI 1af4:1110, in address order (the probe order), as
// domain << 16 | bus << 8 | devfn.
std::vector<uint32_t> bound_pci_npus()
{
    std::ifstream bind("/sys/module/npuipc/parameters/bind_ivshmem");
    std::string yes;
    bind >> yes;
    std::vector<uint32_t> addresses;
    if (yes != "Y")
        return addresses;
    DIR *dir = opendir("/sys/bus/pci/devices");
    if (!dir)
        return addresses;
    while (const dirent *e = readdir(dir)) {
        std::string base = std::string("/sys/bus/pci/devices/") + e->d_name;
        std::string vendor, device;
        std::ifstream(base + "/vendor") >> vendor;
        std::ifstream(base + "/device") >> device;
        unsigned domain, bus, slot, fn;
        if (vendor == "0x1af4" && device == "0x1110" &&
            std::sscanf(e->d_name, "%x:%x:%x.%x", &domain, &bus, &slot, &fn) == 4)
            addresses.push_back(domain << 16 | bus << 8 | slot << 3 | fn);
    }
    closedir(dir);
    std::sort(addresses.begin(), addresses.end());
    return addresses;
}

class DeviceTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (module_param_num_devices() < 0)
            GTEST_SKIP() << "npuipc.ko is not loaded";
        virtual_ = module_param_num_devices();
        pci_ = bound_pci_npus();
        at_start_ = acltest::TakeSettledNpuipcState(std::chrono::seconds(10));
        state_taken_ = true;
    }
    // Every device file, handle and dma-buf the test opened is closed again.
    void TearDown() override
    {
        acltest::NpuipcState now;
        if (!state_taken_)
            return;
        EXPECT_TRUE(acltest::NpuipcStateReturnsTo(at_start_, now, std::chrono::seconds(10)))
            << acltest::NpuipcLeftBehind(at_start_, now);
    }
    size_t virtual_ = 0;
    std::vector<uint32_t> pci_;
    acltest::NpuipcState at_start_;
    bool state_taken_ = false;
};

// The virtual devices first, then the PCI ones with their addresses.
TEST_F(DeviceTest, ListDevicesFindsEveryDeviceInIndexOrder)
{
    auto devices = npuipc::list_devices();
    ASSERT_TRUE(devices.ok()) << devices.error();
    ASSERT_EQ(virtual_ + pci_.size(), devices.value().size());
    for (size_t i = 0; i < devices.value().size(); i++) {
        const npuipc::DeviceInfo &info = devices.value()[i];
        EXPECT_EQ(i, info.index);
        EXPECT_EQ(static_cast<uint32_t>(NPUIPC_UAPI_VERSION), info.uapi_version);
        EXPECT_GT(info.mem_total, 0u);
        if (i < virtual_) {
            EXPECT_EQ(NPUIPC_CAP_VIRTUAL, info.caps & (NPUIPC_CAP_VIRTUAL | NPUIPC_CAP_PCI));
            EXPECT_EQ(0u, info.pci_address);
        } else {
            EXPECT_EQ(NPUIPC_CAP_PCI, info.caps & (NPUIPC_CAP_VIRTUAL | NPUIPC_CAP_PCI));
            EXPECT_EQ(pci_[i - virtual_], info.pci_address) << std::hex << info.pci_address;
        }
    }
}

TEST_F(DeviceTest, OpenByIndexReachesThatDevice)
{
    auto dev = npuipc::Device::open(1);
    if (!dev.ok() && virtual_ + pci_.size() < 2)
        GTEST_SKIP() << "needs two devices";
    ASSERT_TRUE(dev.ok()) << dev.error();
    auto info = dev.value().info();
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(1u, info.value().index);
}

// The device number of the first npuipc render node of /dev/dri; 0 if none.
dev_t FirstNpuipcRenderNode()
{
    dev_t found = 0;
    DIR *dir = opendir("/dev/dri");
    if (!dir)
        return 0;
    while (const dirent *e = readdir(dir)) {
        struct stat st;
        std::string node = std::string("/dev/dri/") + e->d_name;
        if (std::string(e->d_name).rfind("renderD", 0) != 0 || stat(node.c_str(), &st) != 0)
            continue;
        std::string index = "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" +
                            std::to_string(minor(st.st_rdev)) + "/device/npuipc_index";
        if (access(index.c_str(), F_OK) == 0 && !found)
            found = st.st_rdev;
    }
    closedir(dir);
    return found;
}

// A container may give a host's render node another name: devices are
// known by their device number, as sysfs has them, not by the name.
// In a child with a /dev/dri of its own: an npuipc device as renderD200
// and again as renderD201 (listed once), another device (/dev/null's
// number) as renderD128.
TEST_F(DeviceTest, ARenderNodeRenamedAsInAContainerIsFoundByItsDeviceNumber)
{
    const dev_t npuipc = FirstNpuipcRenderNode(), other = makedev(1, 3);
    ASSERT_NE(0u, npuipc) << "no npuipc render node in /dev/dri";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
            mount("tmpfs", "/dev/dri", "tmpfs", 0, "mode=0755") ||
            mknod("/dev/dri/renderD200", S_IFCHR | 0666, npuipc) ||
            mknod("/dev/dri/renderD201", S_IFCHR | 0666, npuipc) || // the same device twice
            mknod("/dev/dri/renderD128", S_IFCHR | 0666, other))
            _exit(10);
        auto devices = npuipc::list_devices();
        if (!devices.ok())
            _exit(11);
        if (devices.value().size() != 1)
            _exit(20 + static_cast<int>(std::min<size_t>(devices.value().size(), 9)));
        _exit(devices.value()[0].node == "/dev/dri/renderD200" ? 0 : 12);
    }
    // Bounded: a child stuck in the library is killed and reported.
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 3000 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++)
        usleep(10000);
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL() << "the child did not exit within 30 s";
    }
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status)) << "10: setup, 11: listing failed, 12: other node, 2N: N devices";
}

TEST_F(DeviceTest, OpenOfAMissingIndexFailsWithEnodev)
{
    auto dev = npuipc::Device::open(1000);
    ASSERT_FALSE(dev.ok());
    EXPECT_EQ(ENODEV, dev.error());
}

// A DRM file has one handle per dma-buf: a buffer's whole export imported
// into its own file is the buffer's handle, and a range imported twice is
// one handle. Each holder releases its own; the last one closes it.
TEST_F(DeviceTest, ImportsOfOneDmaBufShareAHandleThatTheLastReleaseCloses)
{
    auto dev = npuipc::Device::open(0);
    ASSERT_TRUE(dev.ok()) << dev.error();
    const npuipc::Device &d = dev.value();
    auto own = d.create_buffer(8192, npuipc::PageClass::Normal);
    ASSERT_TRUE(own.ok()) << own.error();

    auto whole = d.export_whole_buffer(own.value());
    ASSERT_TRUE(whole.ok()) << whole.error();
    auto self = d.import_buffer(whole.value().get());
    ASSERT_TRUE(self.ok()) << self.error();
    EXPECT_EQ(own.value(), self.value());
    auto range = d.export_buffer(own.value(), 4096, 4096);
    ASSERT_TRUE(range.ok()) << range.error();
    auto first = d.import_buffer(range.value().get());
    auto second = d.import_buffer(range.value().get());
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_NE(own.value(), first.value());
    EXPECT_EQ(first.value(), second.value());

    EXPECT_TRUE(d.close_buffer(first.value()).ok());
    auto info = d.buffer_info(second.value());
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(4096u, info.value().size);
    EXPECT_TRUE(d.close_buffer(second.value()).ok());
    EXPECT_EQ(ENOENT, d.buffer_info(second.value()).error());

    EXPECT_TRUE(d.close_buffer(self.value()).ok());
    ASSERT_TRUE(d.buffer_info(own.value()).ok());
    EXPECT_TRUE(d.close_buffer(own.value()).ok());
    EXPECT_EQ(ENOENT, d.buffer_info(own.value()).error());
    EXPECT_EQ(EINVAL, d.close_buffer(own.value()).error()); // GEM_CLOSE of no handle
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
