// SPDX-License-Identifier: MIT
// VMM: physical memory, reservations, mapping and access, and shareable
// handles between processes (the seed's fourth scenario). Runs in the VM.
#include "acl_test_util.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace acltest;

namespace {

aclrtPhysicalMemProp Prop(aclrtMemAttr attr, uint32_t device = 0)
{
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = attr;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
}

class AclVmmTest : public AclTest {};

// The usage of `name` among aclrtGetMemUsageInfo's entries for device 0.
struct Usage {
    uint64_t current = 0, peak = 0;
    bool found = false;
};
Usage UsageOf(const char *name)
{
    aclrtMemUsageInfo info[8];
    size_t n = 0;
    Usage u;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetMemUsageInfo(0, info, 8, &n));
    for (size_t i = 0; i < n; i++)
        if (std::strcmp(info[i].name, name) == 0)
            u = Usage{info[i].curMemSize, info[i].memPeakSize, true};
    return u;
}

// What this process holds on the device, by the call that made it: the
// current size follows allocations and frees, the peak stays.
TEST_F(AclVmmTest, MemUsageInfoCountsMallocAndPhysicalMemoryNowAndAtMost)
{
    const Usage malloc_before = UsageOf("aclrtMalloc"), phys_before = UsageOf("aclrtMallocPhysical");
    ASSERT_TRUE(malloc_before.found);
    ASSERT_TRUE(phys_before.found);
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 3 * kMiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_HUGE);
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kMiB, &prop, 0));
    Usage m = UsageOf("aclrtMalloc"), ph = UsageOf("aclrtMallocPhysical");
    EXPECT_EQ(malloc_before.current + 3 * kMiB, m.current);
    EXPECT_LE(m.current, m.peak);
    EXPECT_EQ(phys_before.current + 4 * kMiB, ph.current);
    // The largest first; one entry if there is room for one.
    aclrtMemUsageInfo one[1];
    size_t n = 9;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetMemUsageInfo(0, one, 1, &n));
    EXPECT_EQ(1u, n);
    EXPECT_STREQ(ph.current > m.current ? "aclrtMallocPhysical" : "aclrtMalloc", one[0].name);
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    Usage m_after = UsageOf("aclrtMalloc"), ph_after = UsageOf("aclrtMallocPhysical");
    EXPECT_EQ(malloc_before.current, m_after.current);
    EXPECT_EQ(phys_before.current, ph_after.current);
    EXPECT_LE(malloc_before.current + 3 * kMiB, m_after.peak);
    EXPECT_LE(phys_before.current + 4 * kMiB, ph_after.peak);
}

TEST_F(AclVmmTest, MemUsageInfoHasCannsCodes)
{
    aclrtMemUsageInfo info[2];
    size_t n = 7;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemUsageInfo(0, nullptr, 2, &n));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemUsageInfo(0, info, 2, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtGetMemUsageInfo(0, info, 0, &n));
    EXPECT_EQ(0u, n);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtGetMemUsageInfo(-1, info, 2, &n));
    aclError no_context = ACL_SUCCESS;
    std::thread([&] { no_context = aclrtGetMemUsageInfo(0, info, 2, &n); }).join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, no_context);
}

TEST_F(AclVmmTest, GranularityFollowsThePageSizeOfTheAttribute)
{
    size_t g = 0;
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    EXPECT_EQ(4 * kKiB, g);
    prop = Prop(ACL_HBM_MEM_HUGE);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g));
    EXPECT_EQ(2 * kMiB, g);
    prop = Prop(ACL_MEM_HUGE1G);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    EXPECT_EQ(1024 * kMiB, g);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemGetAllocationGranularity(&prop, RawEnum<aclrtMemGranularityOptions>(2), &g));
    prop.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    prop = Prop(RawEnum<aclrtMemAttr>(18));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemGetAllocationGranularity(nullptr, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
}

// The seed's process A, in one process: physical memory appears at the
// reserved address, works in copies and fills, and disappears at unmap.
TEST_F(AclVmmTest, MappedPhysicalMemoryWorksLikeDeviceMemoryUntilUnmapped)
{
    size_t free0 = DeviceFreeMem();
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    const size_t size = 8 * kKiB;
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, size, &prop, 0));
    EXPECT_EQ(free0 - size, DeviceFreeMem());
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, size, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, size, 0, handle, 0));
    aclrtMemAccessDesc desc = {};
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemSetAccess(va, size, &desc, 1));
    aclrtMemLocation loc = {};
    uint64_t flag = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAccess(va, &loc, &flag));
    EXPECT_EQ(0u, loc.id);
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_DEVICE, loc.type);
    EXPECT_EQ(static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_READWRITE), flag);
    EXPECT_TRUE(BytesAre(va, size, 0));
    std::vector<uint8_t> host(size, 0x5A);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(va, size, host.data(), size, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_TRUE(BytesAre(va, size, 0x5A));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(va, size, 0x3C, 4096, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(va, 4096, 0x3C));
    aclrtDrvMemHandle retained = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemRetainAllocationHandle(static_cast<char *>(va) + 100, &retained));
    EXPECT_EQ(handle, retained);
    aclrtPhysicalMemProp got = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAllocationPropertiesFromHandle(handle, &got));
    EXPECT_EQ(ACL_HBM_MEM_NORMAL, got.memAttr);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(va)); // not aclrtMalloc memory
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    // An access after unmap faults (in a child, which dies of it).
    pid_t child = fork();
    if (child == 0) {
        volatile char c = *static_cast<volatile char *>(va);
        (void)c;
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(child, waitpid(child, &status, 0));
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) << status;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemsetAsync(va, size, 1, 1, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));   // the retained reference
    EXPECT_EQ(free0 - size, DeviceFreeMem());
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));   // the last
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtFreePhysical(handle));
    EXPECT_TRUE(WaitUntil([&] { return DeviceFreeMem() == free0; }));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// A copy into host memory queued from a mapping reads the physical memory,
// not the application's addresses: unmapping them (and freeing the handle)
// before the stream gets there neither faults the copier nor loses the bytes.
TEST_F(AclVmmTest, ACopyIntoHostMemoryQueuedFromAMappingSurvivesItsUnmap)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    const size_t size = 64 * kKiB;
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, size, &prop, 0));
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, size, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, size, 0, handle, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(va, size, 0x6B, size));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    std::vector<uint8_t> host(size, 0xEE);

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    const size_t offset = 8 * kKiB, count = 16 * kKiB;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), size, static_cast<char *>(va) + offset, count,
                                            ACL_MEMCPY_DEVICE_TO_HOST, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(host.data(), count, 0x6B));
    EXPECT_TRUE(BytesAre(host.data() + count, size - count, 0xEE));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
}

TEST_F(AclVmmTest, BadArgumentsAreRefusedAndChangeNothing)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_HUGE);
    aclrtDrvMemHandle handle = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocPhysical(&handle, 4096, &prop, 0)); // not 2 MiB
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocPhysical(&handle, 2 * kMiB, &prop, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocPhysical(nullptr, 2 * kMiB, &prop, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocPhysical(&handle, 0, &prop, 0));
    aclrtPhysicalMemProp bad = Prop(ACL_HBM_MEM_HUGE, 7);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtMallocPhysical(&handle, 2 * kMiB, &bad, 0));
    bad = prop;
    bad.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocPhysical(&handle, 2 * kMiB, &bad, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 2 * kMiB, &prop, 0));
    void *va = nullptr, *small = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddress(&va, 4 * kMiB, 0, nullptr, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddress(&va, 100, 0, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddress(&va, static_cast<size_t>(-4096), 0, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddress(&va, 4096, size_t(1) << 63, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddress(&va, 4096, 3 * 4096, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, 4 * kMiB, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&small, 4 * kKiB, 0, nullptr, 0));
    char *c = static_cast<char *>(va);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMapMem(va, 4 * kMiB, 0, handle, 0));      // not its size
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMapMem(va, 2 * kMiB, 4096, handle, 0));   // offset
    EXPECT_EQ(ACL_ERROR_RT_ADDR_UNALIGNED, aclrtMapMem(c + 4096, 2 * kMiB, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMapMem(small, 2 * kMiB, 0, handle, 0)); // outside
    int host = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMapMem(&host, 2 * kMiB, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtMapMem(va, 2 * kMiB, 0, reinterpret_cast<aclrtDrvMemHandle>(0x1234), 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(c + 2 * kMiB, 2 * kMiB, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMapMem(c + 2 * kMiB, 2 * kMiB, 0, handle, 0)); // mapped
    aclrtMemAccessDesc desc = {};
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtMemSetAccess(c + 2 * kMiB, 2 * kMiB, &desc, 1));
    char key[65];
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtIpcMemGetExportKey(c + 2 * kMiB, 2 * kMiB, key, sizeof(key), 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReleaseMemAddress(va));  // still mapped
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtUnmapMem(va));           // not mapped there
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReleaseMemAddress(c + 4096));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(c + 2 * kMiB));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(small));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtMapMem(va, 2 * kMiB, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFreePhysical(nullptr));
}

TEST_F(AclVmmTest, ChurnLeavesMemoryAndFdsAsTheyWere)
{
    size_t free0 = DeviceFreeMem();
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_HUGE);
    int fds = CountOpenFds();
    for (int i = 0; i < 50; i++) {
        aclrtDrvMemHandle handle = nullptr;
        void *va = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 2 * kMiB, &prop, 0));
        ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, 2 * kMiB, 0, nullptr, 0));
        ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, 2 * kMiB, 0, handle, 0));
        static_cast<char *>(va)[i] = 1;
        ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
        ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
        ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    }
    EXPECT_EQ(fds, CountOpenFds());
    EXPECT_TRUE(WaitUntil([&] { return DeviceFreeMem() == free0; }));
}

// Physical memory belongs to a device, not a context: on a device the
// process has not set, it opens the device without setting it, and the
// device closes again with its last physical memory and mapping.
TEST_F(AclVmmTest, PhysicalMemoryOnADeviceNotSetOpensItWithoutSettingIt)
{
    ACL_NEED_DEVICES(2);
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL, 1);
    const int fds = CountOpenFds();
    aclrtDrvMemHandle handle = nullptr;
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    EXPECT_EQ(fds + 1, CountOpenFds()); // the device's file
    int32_t current = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&current));
    EXPECT_EQ(0, current);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDevice(1)); // not set
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, 4 * kKiB, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, 4 * kKiB, 0, handle, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    static_cast<char *>(va)[0] = 1; // the mapping keeps the memory and the device
    EXPECT_EQ(fds + 1, CountOpenFds());
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    EXPECT_EQ(fds, CountOpenFds());
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));

    // Set afterwards, one reset releases the device, with its memory.
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDevice(1));
    MarkReset(1);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtFreePhysical(handle));
    EXPECT_EQ(fds, CountOpenFds());
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
}

class AclVmmShareTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        char tmpl[] = "/tmp/acl_vmm_test.XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir_ = tmpl;
    }
    void TearDown() override
    {
        std::string cmd = "rm -rf '" + dir_ + "'";
        (void)!system(cmd.c_str());
        AclTest::TearDown();
    }
    // Runs acl_ipc_peer vmm-import on `device` with `handle`; its aclError.
    int Import(uint64_t handle, int device, pid_t *started = nullptr,
               const std::function<void(pid_t)> &before_key = nullptr, const char *how = "vmm-import")
    {
        pid_t pid = fork();
        if (pid == 0) {
            std::string dev = std::to_string(device);
            execl(ACL_IPC_PEER_PATH, ACL_IPC_PEER_PATH, how, dir_.c_str(), dev.c_str(), "0",
                  static_cast<char *>(nullptr));
            _exit(127);
        }
        if (started)
            *started = pid;
        if (before_key)
            before_key(pid);
        std::string text = std::to_string(handle);
        text.resize(64, ' ');
        std::string tmp = dir_ + "/.key";
        FILE *f = fopen(tmp.c_str(), "wb");
        fwrite(text.data(), 1, text.size(), f);
        fclose(f);
        rename(tmp.c_str(), (dir_ + "/key").c_str());
        int status = 0;
        auto start = std::chrono::steady_clock::now();
        while (waitpid(pid, &status, WNOHANG) == 0) {
            if (MsSince(start) > 30000) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                ADD_FAILURE() << "the peer did not finish";
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
        // The importer ends with the fds it started with (acl_ipc_peer.cpp).
        std::ifstream fds(dir_ + "/fds");
        EXPECT_TRUE(fds.good()) << "the peer did not account for its fds";
        EXPECT_EQ("", std::string((std::istreambuf_iterator<char>(fds)), std::istreambuf_iterator<char>()))
            << "fds the peer leaked";
        unlink((dir_ + "/fds").c_str());
        std::ifstream in(dir_ + "/rc");
        int rc = -1;
        in >> rc;
        unlink((dir_ + "/rc").c_str());
        unlink((dir_ + "/key").c_str());
        return rc;
    }
    std::string Seen()
    {
        std::ifstream in(dir_ + "/seen");
        std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return s;
    }
    std::string dir_;
};

TEST_F(AclVmmShareTest, TheSeedScenarioBetweenTwoProcesses)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    size_t g = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    const size_t size = ((1024 * sizeof(float) + g - 1) / g) * g;
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, size, &prop, 0));
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, size, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, size, 0, handle, 0));
    memset(va, 'S', size);
    uint64_t shareable = 0, again = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                                           ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                           &shareable));
    EXPECT_NE(0u, shareable);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                                           ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, &again));
    EXPECT_EQ(shareable, again); // one shareable handle per allocation and process
    EXPECT_EQ(ACL_SUCCESS, Import(shareable, 0));
    EXPECT_EQ("S", Seen());
    EXPECT_EQ('B', static_cast<char *>(va)[1]);
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    // Freed by its only holder: the handle opens nothing any more.
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, Import(shareable, 0));
}

TEST_F(AclVmmShareTest, ImportOnAnotherDeviceNeedsPeerAccess)
{
    ACL_NEED_DEVICES(2);
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    uint64_t shareable = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 1, &shareable));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Import(shareable, 1));
    // In this process, with peer access from device 1 to device 0.
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(1));
    TrackDevice(1);
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(0, 0));
    aclrtDrvMemHandle imported = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemImportFromShareableHandle(shareable, 1, &imported));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(imported));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

TEST_F(AclVmmShareTest, WithPidValidationOnlyListedProcessesImport)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    uint64_t shareable = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                                           ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &shareable));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Import(shareable, 0));
    int32_t none = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemSetPidToShareableHandle(shareable, &none, 0));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemSetPidToShareableHandle(shareable + 1, &none, 1));
    EXPECT_EQ(ACL_SUCCESS, Import(shareable, 0, nullptr, [&](pid_t pid) {
        int32_t p = pid;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemSetPidToShareableHandle(shareable, &p, 1));
    }));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

TEST_F(AclVmmShareTest, V2HandlesOfTheDefaultTypeShareAsV1DoesAndFabricOnesAreNotSupported)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, 4 * kKiB, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, 4 * kKiB, 0, handle, 0));
    memset(va, 'V', 4 * kKiB);
    uint64_t shareable = 0, v1 = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandleV2(handle, ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
                                                             ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &shareable));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 0, &v1));
    EXPECT_EQ(v1, shareable); // one handle per allocation, whichever call made it
    // With PID validation: refused until the importer is listed (V2).
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Import(shareable, 0, nullptr, nullptr, "vmm-import-v2"));
    EXPECT_EQ(ACL_SUCCESS, Import(shareable, 0, nullptr, [&](pid_t pid) {
        int32_t p = pid;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemSetPidToShareableHandleV2(&shareable, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &p, 1));
    }, "vmm-import-v2"));
    EXPECT_EQ("V", Seen());
    EXPECT_EQ('B', static_cast<char *>(va)[1]);

    // FABRIC handles cross servers: not on one machine.
    aclrtMemFabricHandle fabric = {};
    int32_t me = getpid();
    aclrtDrvMemHandle imported = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtMemExportToShareableHandleV2(handle, 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &fabric));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtMemImportFromShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtMemSetPidToShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &me, 1));
    // CANN's checks.
    const auto bad_type = static_cast<aclrtMemSharedHandleType>(4);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemExportToShareableHandleV2(nullptr, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &v1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemExportToShareableHandleV2(handle, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemExportToShareableHandleV2(handle, 0, bad_type, &v1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemExportToShareableHandleV2(handle, 2, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &v1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemImportFromShareableHandleV2(nullptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &imported));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemImportFromShareableHandleV2(&v1, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 1, &imported));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemImportFromShareableHandleV2(&v1, bad_type, 0, &imported));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemSetPidToShareableHandleV2(&v1, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &me, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemSetPidToShareableHandleV2(&v1, bad_type, &me, 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

TEST_F(AclVmmShareTest, MemoryExtrasAMockNpuCanHonour)
{
    // A reservation without uncached memory is an ordinary one here.
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddressNoUCMemory(&va, 2 * 1024 * 1024, 0, nullptr, 1));
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, 4 * kKiB, 0, handle, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddressNoUCMemory(&va, 2 * 1024 * 1024, 0, nullptr, 2));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddressNoUCMemory(nullptr, 4096, 0, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReserveMemAddressNoUCMemory(&va, 0, 0, nullptr, 0));
    // One link: the default.
    EXPECT_EQ(ACL_SUCCESS, aclrtMemMapSetLink(handle, ACL_RT_MEM_ACCESS_LINK_SIO));
    EXPECT_EQ(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, aclrtMemMapSetLink(handle, ACL_RT_MEM_ACCESS_LINK_HCCS));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemMapSetLink(handle, static_cast<aclrtMemLinkType>(4)));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapSetLink(nullptr, ACL_RT_MEM_ACCESS_LINK_SIO));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtMemMapSetLink(handle, ACL_RT_MEM_ACCESS_LINK_SIO));
    // P2P maps: checks, and a peer's view made ahead of its jobs.
    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, 64 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemP2PMap(nullptr, 4096, 0, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemP2PMap(dev, 0, 0, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemP2PMap(dev, 4096, 0, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemP2PMap(dev, 128 * kKiB, 0, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtMemP2PMap(dev, 4096, -1, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemP2PMap(dev, 4096, 0, 0)); // its own device: nothing to make
    if (device_count_ >= 2) {
        aclrtContext ctx0 = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx0));
        ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(1));
        TrackDevice(1);
        EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtMemP2PMap(dev, 4096, 1, 0));
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(0, 0));
        EXPECT_EQ(ACL_SUCCESS, aclrtMemP2PMap(dev, 4096, 1, 0));
        // Device 1's stream sets device 0's memory through a peer view (one
        // its first job would make too: this checks the view works, not
        // when it was made).
        aclrtStream s1 = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s1));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(dev, 4096, 0x6b, 4096, s1));
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(s1));
        EXPECT_EQ(0x6b, static_cast<unsigned char *>(dev)[4095]);
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s1));
        ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx0));
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

TEST_F(AclVmmShareTest, UnknownHandlesAndBadExportArguments)
{
    aclrtDrvMemHandle imported = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtMemImportFromShareableHandle(0x1234567890abcdefULL, 0, &imported));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemImportFromShareableHandle(1, 0, nullptr));
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0));
    uint64_t shareable = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_POSIX, 0, &shareable));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 2, &shareable));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 0, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtMemExportToShareableHandle(reinterpret_cast<aclrtDrvMemHandle>(0x10), ACL_MEM_HANDLE_TYPE_NONE, 0, &shareable));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

} // namespace

namespace {

class AclVmmExporterDeathTest : public AclVmmShareTest {
protected:
    // Starts an exporter that holds its memory until killed; its handle.
    uint64_t StartExporter()
    {
        exporter_ = fork();
        if (exporter_ == 0) {
            execl(ACL_IPC_PEER_PATH, ACL_IPC_PEER_PATH, "vmm-export-hold", dir_.c_str(), "0", "0",
                  static_cast<char *>(nullptr));
            _exit(127);
        }
        std::string path = dir_ + "/key";
        EXPECT_TRUE(WaitUntil([&] { return access(path.c_str(), F_OK) == 0; }));
        std::ifstream in(path);
        uint64_t handle = 0;
        in >> handle;
        unlink(path.c_str());
        return handle;
    }
    void KillExporter()
    {
        kill(exporter_, SIGKILL);
        waitpid(exporter_, nullptr, 0);
        exporter_ = -1;
    }
    void TearDown() override
    {
        if (exporter_ > 0)
            KillExporter();
        AclVmmShareTest::TearDown();
    }
    pid_t exporter_ = -1;
};

TEST_F(AclVmmExporterDeathTest, AHandleOfAnExporterKilledAfterExportingIsIpcError)
{
    uint64_t shareable = StartExporter();
    ASSERT_NE(0u, shareable);
    KillExporter();
    aclrtDrvMemHandle handle = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, aclrtMemImportFromShareableHandle(shareable, 0, &handle));
}

TEST_F(AclVmmExporterDeathTest, AnImporterKeepsItsMappingWhenTheExporterIsKilled)
{
    uint64_t shareable = StartExporter();
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemImportFromShareableHandle(shareable, 0, &handle));
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, 4096, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, 4096, 0, handle, 0));
    KillExporter();
    EXPECT_TRUE(BytesAre(va, 4096, 'M'));
    memset(va, 'Z', 4096);
    EXPECT_TRUE(BytesAre(va, 4096, 'Z'));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

// The permissions of the process's mapping that starts at `p`.
std::string MapsPermissions(const void *p)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return "";
    char line[512];
    std::string perms;
    while (fgets(line, sizeof(line), maps)) {
        unsigned long start = 0, end = 0;
        char mode[8] = {};
        if (sscanf(line, "%lx-%lx %7s", &start, &end, mode) == 3 && start == reinterpret_cast<uintptr_t>(p))
            perms = mode;
    }
    fclose(maps);
    return perms;
}

TEST_F(AclVmmTest, AMappingWithoutAccessIsRefusedUntilSetAccessGivesIt)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    const size_t size = 8 * kKiB;
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, size, &prop, 0));
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, 2 * size, 0, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapNoAccess(nullptr, size, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapNoAccess(va, size, 0, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapNoAccess(va, 0, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapNoAccess(va, size, 0, handle, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapNoAccess(va, size, 4096, handle, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemMapNoAccess(va, size / 2, 0, handle, 0));
    std::vector<uint8_t> outside(size);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemMapNoAccess(outside.data(), size, 0, handle, 0));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemMapNoAccess(va, size, 0, handle, 0));
    EXPECT_EQ("---s", MapsPermissions(va));
    aclrtMemLocation loc = {};
    uint64_t flag = 99;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAccess(va, &loc, &flag));
    EXPECT_EQ(static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_NONE), flag);
    std::vector<uint8_t> host(size, 0x5A);
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy(va, size, host.data(), size, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemsetAsync(va, size, 1, size, stream));

    aclrtMemAccessDesc desc = {};
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemSetAccess(va, size, &desc, 1));
    EXPECT_EQ("rw-s", MapsPermissions(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAccess(va, &loc, &flag));
    EXPECT_EQ(static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_READWRITE), flag);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(va, size, host.data(), size, ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(va, size, 0x3C, 4096, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(va, 4096, 0x3C));
    EXPECT_TRUE(BytesAre(static_cast<char *>(va) + 4096, size - 4096, 0x5A));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    EXPECT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

TEST_F(AclVmmTest, ASelectedLinkMappingIsASecondViewOfTheSameMemory)
{
    aclrtPhysicalMemProp prop = Prop(ACL_HBM_MEM_NORMAL);
    const size_t size = 8 * kKiB;
    aclrtDrvMemHandle handle = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&handle, size, &prop, 0));
    void *src = nullptr, *dst = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&src, size, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&dst, size, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(src, size, 0, handle, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapSelectedLink(nullptr, size, src, ACL_RT_MEM_LINK_IDX_0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapSelectedLink(dst, size, nullptr, ACL_RT_MEM_LINK_IDX_0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapSelectedLink(dst, 0, src, ACL_RT_MEM_LINK_IDX_0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemMapSelectedLink(dst, size, src, 2));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemMapSelectedLink(dst, size, static_cast<char *>(src) + 4096, ACL_RT_MEM_LINK_IDX_0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemMapSelectedLink(dst, size / 2, src, ACL_RT_MEM_LINK_IDX_0));
    EXPECT_EQ(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, aclrtMemMapSelectedLink(dst, size, src, ACL_RT_MEM_LINK_IDX_1));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemMapSelectedLink(dst, size, src, ACL_RT_MEM_LINK_IDX_0));
    memset(src, 0x77, size);
    EXPECT_TRUE(BytesAre(dst, size, 0x77));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(dst, size, 0x11, 4096));
    EXPECT_TRUE(BytesAre(src, 4096, 0x11));
    aclrtDrvMemHandle retained = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemRetainAllocationHandle(dst, &retained));
    EXPECT_EQ(handle, retained);
    EXPECT_EQ(ACL_SUCCESS, aclrtUnmapMem(dst));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnmapMem(src));
    EXPECT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(dst));
    EXPECT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(src));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(retained)); // the retain's reference
    EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(handle));
}

} // namespace
