// SPDX-License-Identifier: MIT
// aclrt device and host memory: aclrtMalloc's policies and rounding (seen
// through aclrtMemGetAddressRange and the device budget of aclrtGetMemInfo),
// aclrtFree, aclrtMallocHost, and the synchronous and stream-ordered copies
// and fills, within a device and between the two devices. Runs in the VM
// against npuipc.ko with default parameters (two devices, 256 MiB each).
#include "acl_test_util.h"
#include "drm/npuipc_drm.h"
#include "npuipc/unique_fd.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/stat.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace acltest;

class AclMemoryTest : public AclTest {};

// Allocates `size` with `policy` and checks the rounded size twice: as the
// allocation's range and as what the device budget lost. Frees it again.
void ExpectAllocationSize(size_t size, aclrtMemMallocPolicy policy, size_t expected)
{
    SCOPED_TRACE("size " + std::to_string(size) + ", policy " + std::to_string(static_cast<int>(policy)));
    const size_t before = DeviceFreeMem();
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, size, policy));
    ASSERT_NE(nullptr, p);
    void *base = nullptr;
    size_t range = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(p, &base, &range));
    EXPECT_EQ(p, base);
    EXPECT_EQ(expected, range);
    EXPECT_EQ(before - expected, DeviceFreeMem());
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(before, DeviceFreeMem());
}

// ---- aclrtMalloc ----

TEST_F(AclMemoryTest, NormalOnlyRoundsUpTo4KiB)
{
    for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY_P2P}) {
        ExpectAllocationSize(1, policy, 4 * kKiB);
        ExpectAllocationSize(5000, policy, 8 * kKiB);
        ExpectAllocationSize(3 * kMiB, policy, 3 * kMiB); // never huge pages
    }
}

TEST_F(AclMemoryTest, HugeOnlyRoundsUpTo2MiB)
{
    for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_HUGE_ONLY_P2P}) {
        ExpectAllocationSize(5000, policy, 2 * kMiB);
        ExpectAllocationSize(2 * kMiB, policy, 2 * kMiB);
        ExpectAllocationSize(3 * kMiB, policy, 4 * kMiB);
    }
}

TEST_F(AclMemoryTest, HugeFirstUsesNormalPagesUpTo1MiB)
{
    for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_FIRST_P2P}) {
        ExpectAllocationSize(5000, policy, 8 * kKiB);
        ExpectAllocationSize(1 * kMiB, policy, 1 * kMiB);
    }
}

TEST_F(AclMemoryTest, HugeFirstUsesHugePagesAbove1MiB)
{
    for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_FIRST_P2P}) {
        ExpectAllocationSize(1 * kMiB + 1, policy, 2 * kMiB);
        ExpectAllocationSize(3 * kMiB, policy, 4 * kMiB);
    }
}

// Above 1 MiB, when no 2 MiB page fits the device's free memory, HUGE_FIRST
// takes normal pages; HUGE_ONLY fails there.
TEST_F(AclMemoryTest, HugeFirstFallsBackToNormalPagesWhenNoHugePageFits)
{
    void *filler = nullptr;
    const size_t free = DeviceFreeMem();
    ASSERT_GT(free, 2 * kMiB);
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&filler, free - 1536 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(1536 * kKiB, DeviceFreeMem());
    for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_FIRST_P2P})
        ExpectAllocationSize(1 * kMiB + 4 * kKiB, policy, 1 * kMiB + 4 * kKiB);
    void *p = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMalloc(&p, 1 * kMiB + 4 * kKiB, ACL_MEM_MALLOC_HUGE_ONLY));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(filler));
}

TEST_F(AclMemoryTest, Huge1GOnlyUses1GiBPages)
{
    const size_t total = DeviceTotalMem();
    for (aclrtMemMallocPolicy policy : {ACL_MEM_MALLOC_HUGE1G_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P}) {
        if (total >= 1024 * kMiB) {
            ExpectAllocationSize(4096, policy, 1024 * kMiB);
        } else {
            // The default 256 MiB budget cannot hold one 1 GiB page.
            void *p = nullptr;
            EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMalloc(&p, 4096, policy));
        }
    }
}

TEST_F(AclMemoryTest, UnknownPolicyValuesAllocateWithTheDefaultPolicy)
{
    // CANN compares the policy with the eight values; anything else,
    // including a policy OR-ed with type or access bits, is HUGE_FIRST.
    for (int value : {0x0100, 0x1000, 0x100000, 0x1000 | ACL_MEM_MALLOC_NORMAL_ONLY,
                      0x0100 | ACL_MEM_MALLOC_HUGE_ONLY, 99}) {
        const auto policy = RawEnum<aclrtMemMallocPolicy>(value);
        ExpectAllocationSize(5000, policy, 8 * kKiB);
        ExpectAllocationSize(3 * kMiB, policy, 4 * kMiB);
    }
}

TEST_F(AclMemoryTest, MallocZeroFills)
{
    constexpr size_t kSize = 1 * kMiB;
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_TRUE(BytesAre(p, kSize, 0));
    // Dirty it, give it back, and take memory again: still zeros.
    memset(p, 0xFF, kSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_TRUE(BytesAre(p, kSize, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));

    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kMiB, ACL_MEM_MALLOC_HUGE_ONLY));
    EXPECT_TRUE(BytesAre(p, 4 * kMiB, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclMemoryTest, HostReadsAndWritesDevicePointersDirectly)
{
    constexpr size_t kSize = 64 * kKiB;
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    // A host write is what the device sees...
    FillPattern(p, kSize, 7);
    std::vector<uint8_t> host(kSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(host.data(), kSize, p, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(HasPattern(host.data(), kSize, 7));
    // ...and what the device wrote is what the host reads.
    FillPattern(host.data(), kSize, 9);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(p, kSize, host.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_TRUE(HasPattern(p, kSize, 9));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclMemoryTest, MallocReturns64ByteAlignedPointers)
{
    std::vector<void *> ptrs;
    for (aclrtMemMallocPolicy policy :
         {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY}) {
        for (size_t size : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(4095), size_t(4097),
                            kMiB + 3}) {
            void *p = nullptr;
            ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, size, policy)) << size;
            EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % 64) << p << " for size " << size;
            ptrs.push_back(p);
        }
    }
    for (void *p : ptrs)
        EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclMemoryTest, MallocRejectsANullOutPointerAndSizeZero)
{
    void *p = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMalloc(nullptr, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMalloc(&p, 0, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST));
}

TEST_F(AclMemoryTest, MallocBeyondTheBudgetIsMemoryAllocation)
{
    const size_t total = DeviceTotalMem();
    const size_t before = DeviceFreeMem();
    void *p = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMalloc(&p, total + 2 * kMiB, ACL_MEM_MALLOC_HUGE_ONLY));
    EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMalloc(&p, total + 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    // HUGE_FIRST falls back to normal pages, which do not fit either.
    EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMalloc(&p, total + 2 * kMiB, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_EQ(before, DeviceFreeMem());
}

TEST_F(AclMemoryTest, MallocIsRefusedWhenEarlierAllocationsHoldTheBudget)
{
    void *held = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&held, 64 * kMiB, ACL_MEM_MALLOC_HUGE_ONLY));
    const size_t free = DeviceFreeMem();
    void *p = nullptr;
    // Would fit the whole budget, but not what is left of it.
    EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMalloc(&p, free + 2 * kMiB, ACL_MEM_MALLOC_HUGE_ONLY));
    EXPECT_EQ(free, DeviceFreeMem());
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(held));
}

// This process in a memory cgroup of its own (cgroup2, as root) while it
// lives; back in the cgroup it came from after. ok() is false where that
// cannot be. The test guest mounts no cgroup2: mounted here when missing.
class OwnMemoryCgroup {
public:
    OwnMemoryCgroup()
    {
        if (access((kRoot + "/cgroup.controllers").c_str(), R_OK) != 0 &&
            mount("cgroup2", kRoot.c_str(), "cgroup2", 0, nullptr) != 0)
            return;
        std::ifstream self("/proc/self/cgroup");
        std::string line;
        std::getline(self, line); // "0::/PATH" on cgroup2
        if (line.rfind("0::", 0) != 0)
            return;
        from_ = kRoot + line.substr(3);
        path_ = kRoot + "/npuipc-acl-" + std::to_string(getpid());
        std::string controllers = ReadText(kRoot + "/cgroup.controllers");
        if (controllers.find("memory") == std::string::npos ||
            !WriteText(kRoot + "/cgroup.subtree_control", "+memory") || mkdir(path_.c_str(), 0755) != 0)
            return;
        made_ = true;
        moved_ = WriteText(path_ + "/cgroup.procs", std::to_string(getpid()));
    }
    ~OwnMemoryCgroup()
    {
        if (moved_) {
            EXPECT_TRUE(WriteText(from_ + "/cgroup.procs", std::to_string(getpid())));
        }
        if (made_) {
            EXPECT_EQ(0, rmdir(path_.c_str())) << path_ << ": " << strerror(errno);
        }
    }
    bool ok() const { return moved_; }
    // memory.max at what the cgroup holds now and `headroom` bytes more.
    bool LimitTo(size_t headroom)
    {
        long long current = std::atoll(ReadText(path_ + "/memory.current").c_str());
        return WriteText(path_ + "/memory.max", std::to_string(current + static_cast<long long>(headroom)));
    }
    bool Unlimit() { return WriteText(path_ + "/memory.max", "max"); }

private:
    static std::string ReadText(const std::string &path)
    {
        std::ifstream in(path);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    static bool WriteText(const std::string &path, const std::string &text)
    {
        std::ofstream out(path);
        out << text;
        out.flush();
        return static_cast<bool>(out);
    }
    const std::string kRoot = "/sys/fs/cgroup";
    std::string from_, path_;
    bool made_ = false, moved_ = false;
};

// A virtual device's memory is RAM charged to the allocating process's
// memory cgroup: past the cgroup's memory.max, aclrtMalloc fails with
// MEMORY_ALLOCATION although the device's budget has room, and takes
// nothing of that budget. A mock PCI NPU's BAR is no process's memory: the
// cgroup does not limit it.
TEST_F(AclMemoryTest, MallocBeyondTheMemoryCgroupsLimitIsMemoryAllocation)
{
    auto devices = npuipc::list_devices();
    ASSERT_TRUE(devices.ok());
    const bool bar = devices.value()[0].caps & NPUIPC_CAP_PCI;
    const size_t before = DeviceFreeMem();
    ASSERT_LT(32 * kMiB, before);
    void *p = nullptr;
    {
        OwnMemoryCgroup cgroup;
        if (!cgroup.ok())
            GTEST_SKIP() << "no cgroup2 memory controller to move this process under";
        ASSERT_TRUE(cgroup.LimitTo(8 * kMiB));
        aclError rc = aclrtMalloc(&p, 32 * kMiB, ACL_MEM_MALLOC_NORMAL_ONLY);
        EXPECT_TRUE(cgroup.Unlimit());
        if (bar) {
            EXPECT_EQ(ACL_SUCCESS, rc);
        } else {
            EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, rc);
            if (rc == ACL_SUCCESS) {
                EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
            }
            EXPECT_EQ(before, DeviceFreeMem());
            EXPECT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 32 * kMiB, ACL_MEM_MALLOC_NORMAL_ONLY));
        }
        EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    }
}

// ---- aclrtFree ----

TEST_F(AclMemoryTest, FreeOfNullIsInvalidParam)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFree(nullptr));
}

TEST_F(AclMemoryTest, FreeOfAFreedPointerIsParamInvalid)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(p));
}

TEST_F(AclMemoryTest, FreeOfAnInteriorPointerIsParamInvalid)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 8192, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(static_cast<uint8_t *>(p) + 64));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(static_cast<uint8_t *>(p) + 4096));
    // The allocation is still whole.
    void *base = nullptr;
    size_t size = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(p, &base, &size));
    EXPECT_EQ(8192u, size);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclMemoryTest, FreeOfAHostPointerIsParamInvalid)
{
    int local = 0;
    std::vector<uint8_t> heap(4096);
    void *pinned = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&pinned, 4096));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(&local));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(heap.data()));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(pinned));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(pinned));
}

// ---- aclrtMemGetAddressRange ----

TEST_F(AclMemoryTest, AddressRangeOfAnyByteIsItsAllocation)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 10000, ACL_MEM_MALLOC_NORMAL_ONLY));
    uint8_t *b = static_cast<uint8_t *>(p);
    for (size_t offset : {size_t(0), size_t(1), size_t(4096), size_t(9999), size_t(12287)}) {
        void *base = nullptr;
        size_t size = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(b + offset, &base, &size)) << offset;
        EXPECT_EQ(p, base) << offset;
        EXPECT_EQ(12288u, size) << offset;
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

// As CANN: either output may be NULL (not both), and aclrtMallocHost
// memory has a range too; other host memory has none.
TEST_F(AclMemoryTest, AddressRangeTakesOneOutputAndHostMemoryButNotOtherPointers)
{
    int local = 0;
    void *base = nullptr;
    size_t size = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemGetAddressRange(&local, &base, &size));
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    char *mid = static_cast<char *>(p) + 100;
    EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(mid, nullptr, &size));
    EXPECT_EQ(4096u, size);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(mid, &base, nullptr));
    EXPECT_EQ(p, base);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemGetAddressRange(p, nullptr, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemGetAddressRange(nullptr, &base, &size));
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemGetAddressRange(p, &base, &size));
    void *host = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, 10000));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(static_cast<char *>(host) + 9999, &base, &size));
    EXPECT_EQ(host, base);
    EXPECT_EQ(10000u, size);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemGetAddressRange(static_cast<char *>(host) + 10000, &base, &size))
        << "one past the end";
    ASSERT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
}

// ---- with a configuration, and what a pointer is ----

TEST_F(AclMemoryTest, MallocWithCfgTakesCannsDeviceAttributesOnly)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocWithCfg(&p, 5000, ACL_MEM_MALLOC_NORMAL_ONLY, nullptr));
    std::memset(p, 0x5a, 5000);
    void *base = nullptr;
    size_t size = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(p, &base, &size));
    EXPECT_EQ(8192u, size);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));

    aclrtMallocAttribute attrs[3] = {};
    attrs[0].attr = ACL_RT_MEM_ATTR_MODULE_ID;
    attrs[0].value.moduleId = 7;
    attrs[1].attr = ACL_RT_MEM_ATTR_DEVICE_ID;
    attrs[1].value.deviceId = 0; // the current device
    attrs[2].attr = ACL_RT_MEM_ATTR_RSV;
    aclrtMallocConfig cfg = {attrs, 3};
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocWithCfg(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));

    p = nullptr;
    attrs[1].value.deviceId = 1;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMallocWithCfg(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY, &cfg))
        << "not the current device";
    attrs[1].attr = ACL_RT_MEM_ATTR_VA_FLAG;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMallocWithCfg(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY, &cfg));
    aclrtMallocConfig empty = {nullptr, 0};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMallocWithCfg(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY, &empty))
        << "CANN refuses a configuration without attrs, even an empty one";
    aclrtMallocConfig missing = {nullptr, 2};
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocWithCfg(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY, &missing));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocWithCfg(&p, 0, ACL_MEM_MALLOC_NORMAL_ONLY, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocWithCfg(nullptr, 4096, ACL_MEM_MALLOC_NORMAL_ONLY, nullptr));
    EXPECT_EQ(nullptr, p);

    ASSERT_EQ(ACL_SUCCESS, aclrtMallocAlign32(&p, 33, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % 64);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_NORMAL_ONLY));
}

TEST_F(AclMemoryTest, MallocHostWithCfgTakesCannsHostAttributesOnly)
{
    void *p = nullptr;
    aclrtMallocAttribute attrs[2] = {};
    attrs[0].attr = ACL_RT_MEM_ATTR_MODULE_ID;
    attrs[0].value.moduleId = 3;
    attrs[1].attr = ACL_RT_MEM_ATTR_VA_FLAG;
    attrs[1].value.vaFlag = 0;
    aclrtMallocConfig cfg = {attrs, 2};
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHostWithCfg(&p, 6000, &cfg));
    std::memset(p, 0x3c, 6000);
    aclrtPtrAttributes attr = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtPointerGetAttributes(p, &attr));
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_HOST, attr.location.type);
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(p));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHostWithCfg(&p, 100, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(p));
    p = nullptr;
    attrs[1].value.vaFlag = 1;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtMallocHostWithCfg(&p, 100, &cfg));
    attrs[1].attr = ACL_RT_MEM_ATTR_DEVICE_ID;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMallocHostWithCfg(&p, 100, &cfg));
    aclrtMallocConfig empty = {nullptr, 0};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMallocHostWithCfg(&p, 100, &empty));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocHostWithCfg(&p, 0, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocHostWithCfg(nullptr, 100, nullptr));
    EXPECT_EQ(nullptr, p);
}

TEST_F(AclMemoryTest, PointerAttributesTellDeviceHostAndUnregisteredMemory)
{
    void *normal = nullptr, *huge = nullptr, *host = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&normal, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&huge, 2 * kMiB, ACL_MEM_MALLOC_HUGE_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, 4096));
    aclrtPtrAttributes attr;
    std::memset(&attr, 0x77, sizeof(attr));
    ASSERT_EQ(ACL_SUCCESS, aclrtPointerGetAttributes(static_cast<char *>(normal) + 10, &attr));
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_DEVICE, attr.location.type);
    EXPECT_EQ(0u, attr.location.id);
    EXPECT_EQ(4096u, attr.pageSize);
    EXPECT_EQ(0x77777777u, attr.rsv[0]) << "rsv is not written, as CANN";
    ASSERT_EQ(ACL_SUCCESS, aclrtPointerGetAttributes(huge, &attr));
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_DEVICE, attr.location.type);
    EXPECT_EQ(2 * kMiB, attr.pageSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtPointerGetAttributes(host, &attr));
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_HOST, attr.location.type);
    EXPECT_EQ(0u, attr.location.id);
    int local = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtPointerGetAttributes(&local, &attr));
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_UNREGISTERED, attr.location.type);
    // Device 1's memory says so; no context is needed.
    if (device_count_ >= 2) {
        ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
        void *other = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&other, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
        aclError rc = -1;
        std::thread([&] { rc = aclrtPointerGetAttributes(other, &attr); }).join();
        EXPECT_EQ(ACL_SUCCESS, rc);
        EXPECT_EQ(ACL_MEM_LOCATION_TYPE_DEVICE, attr.location.type);
        EXPECT_EQ(1u, attr.location.id);
        EXPECT_EQ(ACL_SUCCESS, aclrtFree(other));
        ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
    }
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtPointerGetAttributes(nullptr, &attr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtPointerGetAttributes(normal, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(normal));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(huge));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
}

// ---- aclrtMallocHost / aclrtFreeHost ----

TEST_F(AclMemoryTest, MallocHostGivesPageAlignedUsableMemory)
{
    void *h = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&h, 10000));
    ASSERT_NE(nullptr, h);
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(h) % 4096);
    FillPattern(h, 10000, 3);
    EXPECT_TRUE(HasPattern(h, 10000, 3));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(h));
}

TEST_F(AclMemoryTest, MallocHostAndFreeHostRejectBadArguments)
{
    void *h = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocHost(nullptr, 4096));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocHost(&h, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFreeHost(nullptr));
    int local = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFreeHost(&local));
    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFreeHost(dev));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&h, 4096));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreeHost(h));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFreeHost(h));
}

// ---- aclrtMemcpy ----

TEST_F(AclMemoryTest, MemcpyOfEveryKindMovesTheBytes)
{
    constexpr size_t kSize = 12345;
    void *d1 = nullptr, *d2 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d1, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d2, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> h1(kSize), h2(kSize);

    FillPattern(h1.data(), kSize, 1);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(h2.data(), kSize, h1.data(), kSize, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_TRUE(HasPattern(h2.data(), kSize, 1));

    FillPattern(h1.data(), kSize, 2);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d1, kSize, h1.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_TRUE(HasPattern(d1, kSize, 2));

    FillPattern(h1.data(), kSize, 3);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d1, kSize, h1.data(), kSize, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE));
    EXPECT_TRUE(HasPattern(d1, kSize, 3));

    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(h2.data(), kSize, d1, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(HasPattern(h2.data(), kSize, 3));

    FillPattern(d1, kSize, 4);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d2, kSize, d1, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_TRUE(HasPattern(d2, kSize, 4));

    FillPattern(d1, kSize, 5);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d2, kSize, d1, kSize, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE));
    EXPECT_TRUE(HasPattern(d2, kSize, 5));

    FillPattern(d1, kSize, 6);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d2, kSize, d1, kSize, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE));
    EXPECT_TRUE(HasPattern(d2, kSize, 6));

    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d2));
}

TEST_F(AclMemoryTest, MemcpyDefaultInfersTheDirectionFromThePointers)
{
    constexpr size_t kSize = 8192;
    void *d1 = nullptr, *d2 = nullptr, *pinned = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d1, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d2, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&pinned, kSize));
    std::vector<uint8_t> h(kSize);

    FillPattern(h.data(), kSize, 11); // host -> device
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d1, kSize, h.data(), kSize, ACL_MEMCPY_DEFAULT));
    EXPECT_TRUE(HasPattern(d1, kSize, 11));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d2, kSize, d1, kSize, ACL_MEMCPY_DEFAULT)); // device -> device
    EXPECT_TRUE(HasPattern(d2, kSize, 11));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(pinned, kSize, d2, kSize, ACL_MEMCPY_DEFAULT)); // device -> host
    EXPECT_TRUE(HasPattern(pinned, kSize, 11));
    FillPattern(pinned, kSize, 12); // host -> host
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(h.data(), kSize, pinned, kSize, ACL_MEMCPY_DEFAULT));
    EXPECT_TRUE(HasPattern(h.data(), kSize, 12));

    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(pinned));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d2));
}

TEST_F(AclMemoryTest, MemcpyKindNotMatchingThePointersIsParamInvalid)
{
    constexpr size_t kSize = 4096;
    void *d1 = nullptr, *d2 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d1, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d2, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> h1(kSize, 0x77), h2(kSize, 0x77);
    // host -> device wants a device destination and a host source
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(d1, kSize, d2, kSize, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h1.data(), kSize, h2.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h1.data(), kSize, d1, kSize, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpy(h1.data(), kSize, d1, kSize, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE));
    // device -> host, the opposite
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(d1, kSize, h1.data(), kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(d1, kSize, d2, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h1.data(), kSize, h2.data(), kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    // device -> device kinds want two device pointers
    for (aclrtMemcpyKind kind : {ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                                 ACL_MEMCPY_INTER_DEVICE_TO_DEVICE}) {
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(d1, kSize, h1.data(), kSize, kind)) << kind;
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h1.data(), kSize, d1, kSize, kind)) << kind;
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h1.data(), kSize, h2.data(), kSize, kind)) << kind;
    }
    // host -> host wants two host pointers
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(d1, kSize, h1.data(), kSize, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h1.data(), kSize, d1, kSize, ACL_MEMCPY_HOST_TO_HOST));
    // Nothing moved.
    EXPECT_TRUE(BytesAre(d1, kSize, 0));
    EXPECT_TRUE(BytesAre(h1.data(), kSize, 0x77));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d2));
}

TEST_F(AclMemoryTest, MemcpyRejectsNullPointersAndUnknownKinds)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> h(4096);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(nullptr, 4096, h.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(d, 4096, nullptr, 4096, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(d, 4096, h.data(), 4096, RawEnum<aclrtMemcpyKind>(8)));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy(d, 4096, h.data(), 4096, RawEnum<aclrtMemcpyKind>(-1)));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, MemcpyCountAboveDestMaxIsParamInvalid)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 8192, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> h(8192, 0x42);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(d, 4096, h.data(), 4097, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_TRUE(BytesAre(d, 8192, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, MemcpyRangeOutsideOneAllocationIsParamInvalid)
{
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    uint8_t *ab = static_cast<uint8_t *>(a);
    std::vector<uint8_t> h(8192, 0x42);
    // Destination running past the end of its allocation.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(ab + 4000, 200, h.data(), 200, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(a, 8192, h.data(), 8192, ACL_MEMCPY_HOST_TO_DEVICE));
    // Source running past the end of its allocation.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(h.data(), 200, ab + 4000, 200, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(b, 4096, ab + 1, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE));
    // The last bytes inside are fine.
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(ab + 3896, 200, h.data(), 200, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_TRUE(BytesAre(ab, 3896, 0));
    EXPECT_TRUE(BytesAre(ab + 3896, 200, 0x42));
    EXPECT_TRUE(BytesAre(b, 4096, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b));
}

// ---- aclrtMemset / aclrtMemsetAsync ----

TEST_F(AclMemoryTest, MemsetWritesTheLowByteOfValueToCountBytes)
{
    constexpr size_t kSize = 16384;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    uint8_t *b = static_cast<uint8_t *>(d);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemset(b + 100, kSize - 100, 0x1AB, 5000));
    EXPECT_TRUE(BytesAre(b, 100, 0));
    EXPECT_TRUE(BytesAre(b + 100, 5000, 0xAB));
    EXPECT_TRUE(BytesAre(b + 5100, kSize - 5100, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, MemsetRejectsBadArguments)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    uint8_t *b = static_cast<uint8_t *>(d);
    std::vector<uint8_t> h(4096);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemset(d, 100, 1, 101));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemset(nullptr, 4096, 1, 4096));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemset(h.data(), 4096, 1, 4096));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemset(b + 4000, 200, 1, 200));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// As CANN: a count of 0 is a success at once, before any other check,
// NULL pointers and a NULL stream included, and changes nothing.
TEST_F(AclMemoryTest, CopiesAndFillsOfZeroBytesSucceedWhateverThePointers)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> h(4096, 0x42);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(d, 4096, h.data(), 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(nullptr, 0, nullptr, 0, RawEnum<aclrtMemcpyKind>(8)));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(d, 4096, h.data(), 0, ACL_MEMCPY_HOST_TO_DEVICE, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(nullptr, 0, nullptr, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemset(d, 4096, 1, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemset(nullptr, 0, 1, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 1, 0, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetAsync(nullptr, 0, 1, 0, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(nullptr, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// As CANN (whose own device_P2P sample zeroes a host buffer so): aclrtMemset
// sets aclrtMallocHost memory too, inside one such allocation only.
TEST_F(AclMemoryTest, MemsetSetsHostMemoryFromMallocHost)
{
    void *h = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&h, 8192));
    memset(h, 0x11, 8192);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemset(h, 8192, 0x5a, 4096));
    EXPECT_TRUE(BytesAre(h, 4096, 0x5a));
    EXPECT_TRUE(BytesAre(static_cast<uint8_t *>(h) + 4096, 4096, 0x11));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemset(static_cast<uint8_t *>(h) + 4096, 8192, 0, 8192));
    EXPECT_TRUE(BytesAre(static_cast<uint8_t *>(h) + 4096, 4096, 0x11));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(h));
}

TEST_F(AclMemoryTest, MemsetAsyncFillsInStreamOrder)
{
    constexpr size_t kSize = 4 * kMiB;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
    uint8_t *b = static_cast<uint8_t *>(d);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, kSize, 0x11, kSize, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(b + kMiB, kSize - kMiB, 0x322, kMiB, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(b, kMiB, 0x11));
    EXPECT_TRUE(BytesAre(b + kMiB, kMiB, 0x22));
    EXPECT_TRUE(BytesAre(b + 2 * kMiB, 2 * kMiB, 0x11));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, MemsetAsyncOnTheNullStreamUsesTheDefaultStream)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 8192, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 8192, 0x5A, 8192, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(nullptr, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 8192, 0x5A));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, MemsetAsyncRejectsBadArguments)
{
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    uint8_t *b = static_cast<uint8_t *>(d);
    std::vector<uint8_t> h(4096);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemsetAsync(d, 100, 1, 101, stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemsetAsync(nullptr, 4096, 1, 4096, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemsetAsync(h.data(), 4096, 1, 4096, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemsetAsync(b + 4000, 200, 1, 200, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// ---- aclrtMemcpyAsync ----

TEST_F(AclMemoryTest, MemcpyAsyncDeviceToHostSeesEarlierWorkOnTheStream)
{
    constexpr size_t kSize = 4 * kMiB;
    aclrtStream stream = nullptr;
    void *d = nullptr, *pinned = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&pinned, kSize));
    std::vector<uint8_t> ordinary(kSize, 0xEE);
    memset(pinned, 0xEE, kSize);

    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, kSize, 0x5C, kSize, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(ordinary.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, kSize, 0x5D, kSize, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(pinned, kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(ordinary.data(), kSize, 0x5C));
    EXPECT_TRUE(BytesAre(pinned, kSize, 0x5D));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(pinned));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// CANN queues a copy into host memory like any task: the call returns at
// once, the bytes move when the stream gets there, and what the stream
// does after the copy (later work, a recorded event) follows it.
TEST_F(AclMemoryTest, MemcpyAsyncDeviceToHostOnAHeldStreamReturnsAtOnceAndCopiesInStreamOrder)
{
    constexpr size_t kSize = 64 * kKiB;
    aclrtStream stream = nullptr;
    aclrtEvent after = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&after));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kSize, 0x11, kSize));
    std::vector<uint8_t> host(kSize, 0xEE);

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    // A blocking implementation would wait out the gate's 30 s and fail.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, kSize, 0x22, kSize, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(after, stream));
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0xEE)); // not reached yet
    EXPECT_TRUE(BytesAre(d, kSize, 0x11));

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(after, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0x11)); // copied before the fill after it
    EXPECT_TRUE(BytesAre(d, kSize, 0x22));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(after));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// Host to host, on a busy stream: queued like a copy into host memory
// from the device, and made when the stream gets there.
TEST_F(AclMemoryTest, MemcpyAsyncHostToHostOnABusyStreamRunsInStreamOrder)
{
    constexpr size_t kSize = 4096;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    std::vector<uint8_t> from(kSize, 0x5C), to(kSize, 0xEE);
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(to.data(), kSize, from.data(), kSize, ACL_MEMCPY_HOST_TO_HOST, stream));
    EXPECT_TRUE(BytesAre(to.data(), kSize, 0xEE));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(to.data(), kSize, 0x5C));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// The copy waits in the stream. In CANN's default failure mode a failed
// task before it does not stop it, and the failure is left for
// aclrtSynchronizeStream, which reports it once.
TEST_F(AclMemoryTest, MemcpyAsyncDeviceToHostBehindAFailedTaskRunsAndLeavesTheErrorToSynchronize)
{
    constexpr size_t kSize = 4096;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kSize, 0x31, kSize));
    std::vector<uint8_t> host(kSize, 0xEE);

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, 1)); // never released: fails after 1 s
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0x31));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// With ACL_STOP_ON_FAILURE the stream halts at the failure: the copy behind
// it is not run, and the context keeps the failure for later calls.
TEST_F(AclMemoryTest, MemcpyAsyncDeviceToHostBehindAFailedTaskOfAStoppingStreamIsNotRun)
{
    constexpr size_t kSize = 4096;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kSize, 0x31, kSize));
    std::vector<uint8_t> host(kSize, 0xEE);

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0xEE));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT,
              aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(stream)); // destroyed all the same
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// Host callbacks and copies are separate: unsubscribing the stream's
// callback thread drops its callbacks, never its copies.
TEST_F(AclMemoryTest, UnsubscribingTheStreamsCallbackThreadKeepsItsQueuedCopyIntoHostMemory)
{
    constexpr size_t kSize = 4096;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kSize, 0x51, kSize));
    std::vector<uint8_t> host(kSize, 0xEE);
    const uint64_t nobody = 0x5eed; // a subscriber that never processes
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(nobody, stream));

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(nobody, stream));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0x51));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, ForceDestroyOfAStreamDropsItsQueuedCopyIntoHostMemory)
{
    constexpr size_t kSize = 4096;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kSize, 0x41, kSize));
    std::vector<uint8_t> host(kSize, 0xEE);

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(stream));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0xEE));
    // The freed source is no longer the copy's to read.
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// How a stream's queued copies are dropped: aclrtDestroyStreamForce, or
// aclrtDestroyContext of the context the stream was made in.
enum class DropBy { ForceDestroy, DestroyContext };

class AclMemoryDropDuringCopyTest : public AclMemoryTest, public testing::WithParamInterface<DropBy> {
};

INSTANTIATE_TEST_SUITE_P(Each, AclMemoryDropDuringCopyTest,
                         testing::Values(DropBy::ForceDestroy, DropBy::DestroyContext),
                         [](const testing::TestParamInfo<DropBy> &info) {
                             return info.param == DropBy::ForceDestroy ? "StreamForce" : "Context";
                         });

// A destroy drops the copies not started; one the copier thread has started
// ends before it returns, so that the caller may then free the destination.
// The copy is held mid-way by a destination page that userfaultfd leaves
// missing until the test provides it.
TEST_P(AclMemoryDropDuringCopyTest, DestroyDuringACopyIntoHostMemoryReturnsOnceItsBytesAreMoved)
{
    constexpr size_t kPage = 4096, kSize = 3 * kPage;
    // Declared in this order so that, whatever fails, the userfaultfd is
    // closed first (the held copy then finishes on a zero page), the
    // destroying thread joined next, and the gate's stream destroyed last.
    Gate gate;
    struct JoinAtExit {
        std::thread thread;
        ~JoinAtExit()
        {
            if (thread.joinable())
                thread.join();
        }
    } destroyer;
    npuipc::UniqueFd uffd(static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK)));
    if (uffd.get() < 0 && errno == ENOSYS)
        GTEST_SKIP() << "no userfaultfd: a kernel without CONFIG_USERFAULTFD";
    ASSERT_TRUE(uffd.get() >= 0) << "userfaultfd: " << strerror(errno);
    uffdio_api api = {};
    api.api = UFFD_API;
    ASSERT_EQ(0, ioctl(uffd.get(), UFFDIO_API, &api)) << strerror(errno);
    auto *host = static_cast<uint8_t *>(
        mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, static_cast<void *>(host));
    std::memset(host, 0xEE, kPage);
    std::memset(host + 2 * kPage, 0xEE, kPage);
    uffdio_register reg = {};
    reg.range.start = reinterpret_cast<uintptr_t>(host + kPage);
    reg.range.len = kPage;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    ASSERT_EQ(0, ioctl(uffd.get(), UFFDIO_REGISTER, &reg)) << strerror(errno);

    aclrtStream stream = nullptr;
    aclrtContext current = nullptr, made = nullptr;
    void *d = nullptr;
    if (GetParam() == DropBy::DestroyContext) {
        ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&current));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&made, 0));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
        ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(current));
    } else {
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kSize, 0x61, kSize));
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host, kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    // The copier thread is stopped in the middle page's fault.
    pollfd p = {uffd.get(), POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, kSyncTimeoutMs));
    uffd_msg msg = {};
    ASSERT_EQ(static_cast<ssize_t>(sizeof(msg)), read(uffd.get(), &msg, sizeof(msg)));
    ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

    std::atomic<bool> returned{false};
    aclError destroyed = ACL_ERROR_INTERNAL_ERROR;
    destroyer.thread = std::thread([&] {
        destroyed = made ? aclrtDestroyContext(made) : aclrtDestroyStreamForce(stream);
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(returned) << "the destroy returned while the copy was under way";
    std::vector<uint8_t> page(kPage, 0xEE);
    uffdio_copy fill = {};
    fill.dst = reinterpret_cast<uintptr_t>(host + kPage);
    fill.src = reinterpret_cast<uintptr_t>(page.data());
    fill.len = kPage;
    EXPECT_EQ(0, ioctl(uffd.get(), UFFDIO_COPY, &fill)) << strerror(errno);
    uffd.reset(); // had the fill failed, this lets the fault finish
    destroyer.thread.join();
    EXPECT_EQ(ACL_SUCCESS, destroyed);
    EXPECT_TRUE(BytesAre(host, kSize, 0x61));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
    munmap(host, kSize);
}

// The runtime's copier thread takes none of the application's signals,
// except those its own faults raise.
TEST_F(AclMemoryTest, TheCopierThreadBlocksTheApplicationsSignals)
{
    constexpr size_t kSize = 4096;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> host(kSize);
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream)); // queued, so the copier runs it
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), kSize, d, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    std::vector<std::string> blocked; // SigBlk of each thread named npuipc-copier
    for (const auto &task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        std::getline(comm, name);
        if (name != "npuipc-copier")
            continue;
        std::ifstream status(task.path() / "status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("SigBlk:", 0) == 0)
                blocked.push_back(line.substr(7));
    }
    ASSERT_EQ(1u, blocked.size());
    uint64_t mask = std::stoull(blocked[0], nullptr, 16);
    for (int sig : {SIGINT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE, SIGHUP, SIGIO})
        EXPECT_TRUE(mask & (uint64_t(1) << (sig - 1))) << "signal " << sig << ", SigBlk " << blocked[0];
    // Its own faults still reach the application's crash handlers.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL})
        EXPECT_FALSE(mask & (uint64_t(1) << (sig - 1))) << "signal " << sig << ", SigBlk " << blocked[0];

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemoryTest, MemcpyAsyncHostToDeviceReadsTheHostBytesAtCallTime)
{
    constexpr size_t kSize = 64 * kKiB;
    aclrtStream stream = nullptr;
    void *d1 = nullptr, *d2 = nullptr, *pinned = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d1, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d2, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&pinned, kSize));
    std::vector<uint8_t> ordinary(kSize, 0x33);
    memset(pinned, 0x34, kSize);

    // Held behind a gate, the copies cannot run before the host buffers
    // are overwritten; they must still deliver the bytes of the call.
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(d1, kSize, ordinary.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(d2, kSize, pinned, kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    std::fill(ordinary.begin(), ordinary.end(), 0x44);
    memset(pinned, 0x45, kSize);
    EXPECT_TRUE(BytesAre(d1, kSize, 0)); // not run yet
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d1, kSize, 0x33));
    EXPECT_TRUE(BytesAre(d2, kSize, 0x34));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(pinned));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d2));
}

TEST_F(AclMemoryTest, MemcpyAsyncRoundTripThroughTheDeviceKeepsEveryByte)
{
    constexpr size_t kSize = 3 * kMiB + 77;
    aclrtStream stream = nullptr;
    void *a = nullptr, *b = nullptr, *pinned = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&pinned, kSize));
    std::vector<uint8_t> in(kSize), out(kSize, 0);
    FillPattern(in.data(), kSize, 21);

    // ordinary host -> a -> b -> pinned host -> a -> ordinary host
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(a, kSize, in.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b, kSize, a, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a, kSize, 0, kSize, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(pinned, kSize, b, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(HasPattern(pinned, kSize, 21));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(a, kSize, pinned, kSize, ACL_MEMCPY_DEFAULT, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(out.data(), kSize, a, kSize, ACL_MEMCPY_DEFAULT, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(HasPattern(out.data(), kSize, 21));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(pinned));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b));
}

TEST_F(AclMemoryTest, MemcpyAsyncRejectsBadArguments)
{
    aclrtStream stream = nullptr;
    void *d = nullptr, *d2 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d2, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    uint8_t *b = static_cast<uint8_t *>(d);
    std::vector<uint8_t> h(8192, 0x42);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyAsync(nullptr, 4096, h.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpyAsync(d, 4096, nullptr, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyAsync(d, 4096, h.data(), 4096, RawEnum<aclrtMemcpyKind>(8), stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsync(d, 4096, h.data(), 4097, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsync(d, 4096, h.data(), 4096, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpyAsync(d, 4096, d2, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsync(b + 4000, 200, h.data(), 200, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsync(h.data(), 200, b + 4000, 200, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d2));
}

// ---- between devices ----

TEST_F(AclMemoryTest, CopyBetweenDevicesWithoutPeerAccessIsNoPermission)
{
    ACL_NEED_DEVICES(2u);
    constexpr size_t kSize = 64 * kKiB;
    void *a0 = nullptr, *c1 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a0, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    FillPattern(a0, kSize, 31);
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&c1, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    aclrtStream s1 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s1));

    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemcpyAsync(c1, kSize, a0, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s1));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemcpyAsync(a0, kSize, c1, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s1));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemcpy(c1, kSize, a0, kSize, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0)); // and from the other side
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemcpy(c1, kSize, a0, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_TRUE(BytesAre(c1, kSize, 0));
    EXPECT_TRUE(HasPattern(a0, kSize, 31));

    // Each device's objects are released from that device.
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a0));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(c1));
}

TEST_F(AclMemoryTest, CopyBetweenDevicesWithPeerAccessMovesTheBytes)
{
    ACL_NEED_DEVICES(2u);
    constexpr size_t kSize = 2 * kMiB + 4096;
    void *a0 = nullptr, *b0 = nullptr, *c1 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a0, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b0, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    FillPattern(a0, kSize, 41); // the host writes device 0's buffer
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&c1, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtStream s1 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(0, 0)); // from device 1 to device 0

    // device 0 -> device 1 -> device 0, on device 1's stream
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(c1, kSize, a0, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b0, kSize, c1, kSize, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s1, kSyncTimeoutMs));
    EXPECT_TRUE(HasPattern(c1, kSize, 41));
    EXPECT_TRUE(HasPattern(b0, kSize, 41));

    // The synchronous copy, from the current device 1, too.
    FillPattern(a0, kSize, 42);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(c1, kSize, a0, kSize, ACL_MEMCPY_DEFAULT));
    EXPECT_TRUE(HasPattern(c1, kSize, 42));

    // Disabled again, the copies are refused again.
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceDisablePeerAccess(0));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemcpyAsync(c1, kSize, a0, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s1));

    // Each device's objects are released from that device.
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(c1));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b0));
}

// ---- leaks ----

TEST_F(AclMemoryTest, TenThousandMallocFreePairsLeaveNothingBehind)
{
    // One pair first, so lazily opened library state is not counted.
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
    const size_t free_before = DeviceFreeMem();
    const int fds_before = CountOpenFds();

    for (int i = 0; i < 10000; i++) {
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY)) << "iteration " << i;
        static_cast<uint8_t *>(p)[i % 4096] = 1; // touch it: mapped memory is really in use
        ASSERT_EQ(ACL_SUCCESS, aclrtFree(p)) << "iteration " << i;
    }

    EXPECT_EQ(free_before, DeviceFreeMem());
    EXPECT_EQ(fds_before, CountOpenFds());
}

} // namespace

TEST_F(AclMemoryTest, MemcpyAsyncOfOverlappingRangesOfOneAllocationIsRtParamInvalid)
{
    void *p = nullptr;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 8192, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    char *c = static_cast<char *>(p);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsync(c + 100, 4096, c, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    // Disjoint ranges of one allocation are fine.
    EXPECT_EQ(ACL_SUCCESS,
              aclrtMemcpyAsync(c + 4096, 4096, c, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}
