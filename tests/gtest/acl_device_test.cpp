// SPDX-License-Identifier: MIT
// aclrt devices, contexts, init/finalize, error messages and fork. Runs in
// the VM against npuipc.ko with default parameters (tools/vm-run). Every code asserted here
// is pinned by the library's decided semantics.
#include "acl_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace acltest;

class AclDeviceTest : public AclTest {};

// aclInit tests start like a CANN program: no device set before aclInit.
// TearDown also finalizes, ignoring the result, so a failed test never
// leaves the runtime initialized for the next one.
class AclInitTest : public AclTest {
protected:
    AclInitTest() { set_device_in_setup_ = false; }

    void TearDown() override
    {
        (void)aclFinalize();
        AclTest::TearDown();
    }
};

std::string DefaultDeviceConfig(int device)
{
    return "{\"defaultDevice\":{\"default_device\":\"" + std::to_string(device) + "\"}}";
}

// ---- aclInit / aclFinalize ----

TEST_F(AclInitTest, InitWithNullOrEmptyPathSucceeds)
{
    EXPECT_EQ(ACL_SUCCESS, aclInit(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
    EXPECT_EQ(ACL_SUCCESS, aclInit(""));
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
}

TEST_F(AclInitTest, ConfigDefaultDeviceIsTheCurrentDeviceOfANewThread)
{
    // Other keys of the config are ignored.
    std::string path = WriteTempFile("{\"dump\":{\"dump_list\":[]},\"defaultDevice\":"
                                     "{\"default_device\":\"0\"}}");
    ASSERT_FALSE(path.empty());
    ASSERT_EQ(ACL_SUCCESS, aclInit(path.c_str()));
    TrackDevice(0);
    std::thread([] {
        int32_t device = -1;
        EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
        EXPECT_EQ(0, device);
        // It acts as a set device: device work is possible at once.
        aclrtStream stream = nullptr;
        EXPECT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    }).join();
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
    MarkReset(0); // aclFinalize released it
    unlink(path.c_str());
}

TEST_F(AclInitTest, ConfigDefaultDeviceNamesWhichDevice)
{
    ACL_NEED_DEVICES(2u);
    std::string path = WriteTempFile(DefaultDeviceConfig(1));
    ASSERT_FALSE(path.empty());
    ASSERT_EQ(ACL_SUCCESS, aclInit(path.c_str()));
    TrackDevice(1);
    std::thread([] {
        int32_t device = -1;
        EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
        EXPECT_EQ(1, device);
    }).join();
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
    MarkReset(1);
    unlink(path.c_str());
}

TEST_F(AclInitTest, ConfigWithoutDefaultDeviceLeavesNewThreadsWithoutContext)
{
    std::string path = WriteTempFile("{}");
    ASSERT_FALSE(path.empty());
    ASSERT_EQ(ACL_SUCCESS, aclInit(path.c_str()));
    std::thread([] {
        int32_t device = -1;
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&device));
    }).join();
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
    unlink(path.c_str());
}

TEST_F(AclInitTest, FinalizeForgetsTheDefaultDevice)
{
    std::string path = WriteTempFile(DefaultDeviceConfig(0));
    ASSERT_FALSE(path.empty());
    ASSERT_EQ(ACL_SUCCESS, aclInit(path.c_str()));
    TrackDevice(0);
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    MarkReset(0);
    std::thread([] {
        int32_t device = -1;
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&device));
    }).join();
    unlink(path.c_str());
}

TEST_F(AclInitTest, InitWithAMissingFileIsInvalidFile)
{
    EXPECT_EQ(ACL_ERROR_INVALID_FILE, aclInit("/tmp/acl_test_no_such_config_file.json"));
}

TEST_F(AclInitTest, InitWithMalformedJsonIsParseFile)
{
    std::string path = WriteTempFile("{\"defaultDevice\":{\"default_device\":\"0\"");
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(ACL_ERROR_PARSE_FILE, aclInit(path.c_str()));
    unlink(path.c_str());
}

TEST_F(AclInitTest, InitWithADefaultDeviceThatDoesNotExistIsInvalidDeviceId)
{
    std::string path = WriteTempFile(DefaultDeviceConfig(static_cast<int>(device_count_) + 5));
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclInit(path.c_str()));
    unlink(path.c_str());
}

TEST_F(AclInitTest, SecondInitIsRepeatInitializeAndHarmless)
{
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit(nullptr));
    // Harmless: the runtime still works and one finalize ends it.
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    void *p = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
    MarkReset(0);
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize());
}

TEST_F(AclInitTest, FinalizeWithoutInitIsRepeatFinalize)
{
    // Whatever earlier tests did, each of them finalized what it initialized.
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize());
}

TEST_F(AclInitTest, FinalizeReleasesEveryDevice)
{
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    MarkReset(0);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDeviceForce(0));
    int32_t device = -1;
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&device));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSynchronizeStream(stream));
}

TEST_F(AclInitTest, FinalizeSucceedsAfterDevicesWereForceReset)
{
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(0));
    MarkReset(0);
    EXPECT_EQ(ACL_SUCCESS, aclFinalize());
}

// ---- devices ----

TEST_F(AclDeviceTest, DeviceCountIsTheNumberOfNpuipcDevices)
{
    uint32_t count = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDeviceCount(&count));
    EXPECT_EQ(device_count_, count);
}

TEST_F(AclDeviceTest, DeviceCountWithNullIsInvalidParam)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDeviceCount(nullptr));
}

TEST_F(AclDeviceTest, GetDeviceReturnsTheDeviceSetLast)
{
    int32_t device = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(0, device);
    if (device_count_ < 2)
        return;
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(1, device);
}

TEST_F(AclDeviceTest, GetDeviceWithNullIsInvalidParam)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDevice(nullptr));
}

TEST_F(AclDeviceTest, SetDeviceOfAnInvalidIdIsInvalidDeviceId)
{
    const int32_t count = static_cast<int32_t>(device_count_);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtSetDevice(-1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtSetDevice(count));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtSetDevice(1000));
    // The failed calls did not change the current device.
    int32_t device = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(0, device);
}

TEST_F(AclDeviceTest, ResetOfAnInvalidIdIsInvalidDeviceId)
{
    const int32_t count = static_cast<int32_t>(device_count_);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDevice(-1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDevice(count));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDeviceForce(-1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDeviceForce(count));
}

TEST_F(AclDeviceTest, ResetDeviceDropsOneReferenceAndReleasesAtZero)
{
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0)); // second reference
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));

    EXPECT_EQ(ACL_SUCCESS, aclrtResetDevice(0));
    // One reference left: the device and its stream live on.
    aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(stream, &status));
    int32_t device = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));

    EXPECT_EQ(ACL_SUCCESS, aclrtResetDevice(0));
    MarkReset(0);
    // Released: its stream is gone and this thread has no current context.
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&device));
}

TEST_F(AclDeviceTest, ResetOfAReleasedDeviceIsContextReleaseError)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDevice(0));
    MarkReset(0);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDevice(0));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDeviceForce(0));
}

TEST_F(AclDeviceTest, ResetOfADeviceNeverSetIsContextReleaseError)
{
    ACL_NEED_DEVICES(2u);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDevice(1));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDeviceForce(1));
}

TEST_F(AclDeviceTest, ForceResetReleasesEverythingAtOnce)
{
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0)); // three references
    const size_t free_before = DeviceFreeMem();
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    aclrtNotify notify = nullptr;
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 2 * kMiB, ACL_MEM_MALLOC_NORMAL_ONLY));

    ASSERT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(0));
    MarkReset(0);
    aclrtStreamStatus status;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(p)); // unknown to the library now
    int32_t device = -1;
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&device));

    // The memory went back to the device.
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    EXPECT_EQ(free_before, DeviceFreeMem());
}

TEST_F(AclDeviceTest, NewThreadHasNoCurrentContext)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    const bool two_devices = device_count_ >= 2;
    std::thread([p, two_devices] {
        int32_t device = -1;
        aclrtContext ctx = nullptr;
        aclrtStream stream = nullptr;
        aclrtEvent event = nullptr;
        aclrtNotify notify = nullptr;
        void *q = nullptr;
        size_t free = 0, total = 0;
        std::vector<uint8_t> host(64);
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetDevice(&device));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetCurrentContext(&ctx));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtCreateStream(&stream));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtMalloc(&q, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtCreateEvent(&event));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtMemset(p, 4096, 1, 64));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
                  aclrtMemcpy(p, 4096, host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE));
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtSynchronizeDevice());
        EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
        if (two_devices) {
            EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtDeviceEnablePeerAccess(1, 0));
        }
    }).join();
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclDeviceTest, CurrentDeviceIsPerThread)
{
    ACL_NEED_DEVICES(2u);
    TrackDevice(1);
    std::thread([] {
        int32_t device = -1;
        EXPECT_EQ(ACL_SUCCESS, aclrtSetDevice(1));
        EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
        EXPECT_EQ(1, device);
        EXPECT_EQ(ACL_SUCCESS, aclrtResetDevice(1));
    }).join();
    MarkReset(1);
    int32_t device = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(0, device);
}

// ---- contexts ----

TEST_F(AclDeviceTest, SetDeviceMakesTheDefaultContextCurrent)
{
    aclrtContext def = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&def));
    EXPECT_NE(nullptr, def);
    aclrtContext created = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&created, 0));
    aclrtContext now = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&now));
    EXPECT_EQ(created, now);
    EXPECT_NE(def, created);
    // Setting the device again makes its default context current again.
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    EXPECT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&now));
    EXPECT_EQ(def, now);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(created));
}

TEST_F(AclDeviceTest, CreateContextMakesItCurrentOnItsDevice)
{
    const int32_t dev = device_count_ >= 2 ? 1 : 0;
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&ctx, dev));
    TrackDevice(dev);
    EXPECT_NE(nullptr, ctx);
    aclrtContext now = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&now));
    EXPECT_EQ(ctx, now);
    int32_t device = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(dev, device);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(ctx));
}

TEST_F(AclDeviceTest, SetCurrentContextSwitchesTheCurrentDevice)
{
    ACL_NEED_DEVICES(2u);
    aclrtContext ctx0 = nullptr, ctx1 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx0));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&ctx1, 1));
    TrackDevice(1);
    int32_t device = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx0));
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(0, device);
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx1));
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(1, device);
    aclrtContext now = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&now));
    EXPECT_EQ(ctx1, now);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(ctx1));
}

TEST_F(AclDeviceTest, DestroyContextDestroysItsStreamsAndClearsTheCurrentContext)
{
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&ctx, 0));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(ctx));
    aclrtStreamStatus status;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));
    aclrtContext now = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtGetCurrentContext(&now));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyContext(ctx));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSetCurrentContext(ctx));
}

TEST_F(AclDeviceTest, DestroyOfADefaultContextIsInvalidHandle)
{
    aclrtContext def = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&def));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyContext(def));
    // Still usable.
    aclrtContext now = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&now));
    EXPECT_EQ(def, now);
}

TEST_F(AclDeviceTest, ContextCallsRejectBadArguments)
{
    aclrtContext ctx = nullptr;
    int local = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateContext(nullptr, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtCreateContext(&ctx, -1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID,
              aclrtCreateContext(&ctx, static_cast<int32_t>(device_count_)));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyContext(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetCurrentContext(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetCurrentContext(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSetCurrentContext(&local));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyContext(reinterpret_cast<aclrtContext>(0x1234)));
    // A stream is not a context.
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSetCurrentContext(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// ---- peer access ----

TEST_F(AclDeviceTest, DistinctDevicesCanAccessEachOther)
{
    ACL_NEED_DEVICES(2u);
    int32_t can = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceCanAccessPeer(&can, 0, 1));
    EXPECT_EQ(1, can);
    can = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceCanAccessPeer(&can, 1, 0));
    EXPECT_EQ(1, can);
}

TEST_F(AclDeviceTest, CanAccessPeerRejectsBadArguments)
{
    int32_t can = -1;
    const int32_t bad = static_cast<int32_t>(device_count_);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceCanAccessPeer(&can, 0, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceCanAccessPeer(&can, 0, bad));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceCanAccessPeer(&can, bad, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceCanAccessPeer(&can, -1, 0));
    if (device_count_ >= 2) {
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceCanAccessPeer(nullptr, 0, 1));
    }
}

TEST_F(AclDeviceTest, EnableAndDisablePeerAccessAreIdempotent)
{
    ACL_NEED_DEVICES(2u);
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(1, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(1, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceDisablePeerAccess(1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceDisablePeerAccess(1));
}

TEST_F(AclDeviceTest, EnablePeerAccessRejectsBadArguments)
{
    const int32_t bad = static_cast<int32_t>(device_count_);
    if (device_count_ >= 2) {
        EXPECT_EQ(ACL_ERROR_FEATURE_UNSUPPORTED, aclrtDeviceEnablePeerAccess(1, 1));
    }
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceEnablePeerAccess(0, 0)); // the current device
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceEnablePeerAccess(bad, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceEnablePeerAccess(-1, 0));
}

TEST_F(AclDeviceTest, DisablePeerAccessRejectsBadArguments)
{
    const int32_t bad = static_cast<int32_t>(device_count_);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceDisablePeerAccess(0)); // the current device
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceDisablePeerAccess(bad));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceDisablePeerAccess(-1));
}

// ---- memory information ----

TEST_F(AclDeviceTest, GetMemInfoReportsTheDeviceBudgetForEveryAttribute)
{
    const uint64_t budget = DriverMemTotal(0);
    ASSERT_GT(budget, 0u);
    for (int attr = ACL_DDR_MEM; attr <= ACL_MEM_P2P_HUGE1G; attr++) {
        size_t free = 0, total = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtGetMemInfo(static_cast<aclrtMemAttr>(attr), &free, &total))
            << "attr " << attr;
        EXPECT_EQ(budget, total) << "attr " << attr;
        EXPECT_LE(free, total) << "attr " << attr;
    }
}

TEST_F(AclDeviceTest, GetMemInfoRejectsBadArguments)
{
    size_t free = 0, total = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemInfo(RawEnum<aclrtMemAttr>(18), &free, &total));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemInfo(RawEnum<aclrtMemAttr>(-1), &free, &total));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &total));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemInfo(ACL_HBM_MEM, &free, nullptr));
}

TEST_F(AclDeviceTest, GetMemInfoFollowsMallocAndFree)
{
    const size_t before = DeviceFreeMem();
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 2 * kMiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(before - 2 * kMiB, DeviceFreeMem());
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(before, DeviceFreeMem());
}

TEST_F(AclDeviceTest, GetMemInfoIsThatOfTheCurrentDevice)
{
    ACL_NEED_DEVICES(2u);
    const size_t free0 = DeviceFreeMem();
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    const size_t free1 = DeviceFreeMem();
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 2 * kMiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(free1 - 2 * kMiB, DeviceFreeMem());
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
    EXPECT_EQ(free0, DeviceFreeMem()); // device 0 untouched
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(free1, DeviceFreeMem());
}

// ---- synchronize ----

TEST_F(AclDeviceTest, SynchronizeDeviceWaitsForEveryStream)
{
    constexpr size_t kSize = 8 * kMiB;
    aclrtStream s1 = nullptr, s2 = nullptr;
    void *a = nullptr, *b = nullptr, *c = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s2));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&c, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    // Three streams, three buffers: streams are not ordered among
    // themselves (the default stream included), only by events.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a, kSize, 0x3C, kSize, s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(b, kSize, 0xC3, kSize, s2));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(c, kSize, 0x3D, kSize, nullptr)); // default stream
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeDevice());
    EXPECT_TRUE(BytesAre(a, kSize, 0x3C));
    EXPECT_TRUE(BytesAre(b, kSize, 0xC3));
    EXPECT_TRUE(BytesAre(c, kSize, 0x3D));
    aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(s2, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_COMPLETE, status);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s2));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(c));
}

// ---- error messages and pids ----

TEST_F(AclDeviceTest, RecentErrMsgIsNullBeforeAnyFailureAndSetAfterOne)
{
    std::thread([] {
        EXPECT_EQ(nullptr, aclGetRecentErrMsg());
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDeviceCount(nullptr));
        const char *msg = aclGetRecentErrMsg();
        ASSERT_NE(nullptr, msg);
        EXPECT_GT(strlen(msg), 0u);
        // A successful call does not clear it.
        uint32_t count = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtGetDeviceCount(&count));
        msg = aclGetRecentErrMsg();
        ASSERT_NE(nullptr, msg);
        EXPECT_GT(strlen(msg), 0u);
    }).join();
    // Per thread: another fresh thread has none.
    std::thread([] { EXPECT_EQ(nullptr, aclGetRecentErrMsg()); }).join();
}

TEST_F(AclDeviceTest, BareTgidIsTheCallersPid)
{
    int32_t pid = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceGetBareTgid(&pid));
    EXPECT_EQ(static_cast<int32_t>(getpid()), pid);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceGetBareTgid(nullptr));
}

// ---- fork ----

// Exit codes of the child, so the parent can say which step failed.
enum ForkStep {
    kForkOk = 0,
    kForkSetDeviceNotUninit = 10,
    kForkGetDeviceCountNotUninit,
    kForkGetDeviceNotUninit,
    kForkMallocNotUninit,
    kForkInitFailed,
    kForkParentStreamNotInvalid,
    kForkSetDeviceFailed,
    kForkMallocFailed,
    kForkStreamFailed,
    kForkMemsetFailed,
    kForkDataWrong,
    kForkCleanupFailed,
    kForkDrmFdInherited,
    kForkDeviceMemoryInherited,
};

// Whether this process holds a file of a DRM render node.
bool HoldsRenderNode()
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return true;
    bool found = false;
    while (const dirent *e = readdir(dir)) {
        char link[256] = {};
        std::string path = std::string("/proc/self/fd/") + e->d_name;
        if (readlink(path.c_str(), link, sizeof(link) - 1) > 0 &&
            strncmp(link, "/dev/dri/renderD", 16) == 0)
            found = true;
    }
    closedir(dir);
    return found;
}

// Waits at most 30 s for fork child `pid`; a hung child is killed and
// reported as a failure. True when it exited, with its `status`.
bool ChildExited(pid_t pid, int &status)
{
    pid_t done = 0;
    auto start = std::chrono::steady_clock::now();
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && MsSince(start) < 30000)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "the fork child did not exit within 30 s";
        return false;
    }
    EXPECT_EQ(pid, done);
    EXPECT_TRUE(WIFEXITED(status)) << "child died by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return done == pid && WIFEXITED(status);
}

// `parent_stream` and `parent_memory` (a page of device memory) are the
// parent's, used by the forking thread just before.
int ForkChild(aclrtStream parent_stream, void *parent_memory)
{
    int32_t device = -1;
    uint32_t count = 0;
    void *p = nullptr;
    // Nothing of the parent's devices came along: no DRM file (which would
    // keep the parent's objects, and its exit, from ending), no mapping.
    if (HoldsRenderNode())
        return kForkDrmFdInherited;
    if (msync(parent_memory, 4096, MS_ASYNC) != -1 || errno != ENOMEM)
        return kForkDeviceMemoryInherited;
    if (aclrtSetDevice(0) != ACL_ERROR_UNINITIALIZE)
        return kForkSetDeviceNotUninit;
    if (aclrtGetDeviceCount(&count) != ACL_ERROR_UNINITIALIZE)
        return kForkGetDeviceCountNotUninit;
    if (aclrtGetDevice(&device) != ACL_ERROR_UNINITIALIZE)
        return kForkGetDeviceNotUninit;
    if (aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_ERROR_UNINITIALIZE)
        return kForkMallocNotUninit;
    if (aclInit(nullptr) != ACL_SUCCESS)
        return kForkInitFailed;
    if (aclrtSetDevice(0) != ACL_SUCCESS)
        return kForkSetDeviceFailed;
    if (aclrtSynchronizeStream(parent_stream) != ACL_ERROR_RT_INVALID_HANDLE)
        return kForkParentStreamNotInvalid;
    if (aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS)
        return kForkMallocFailed;
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS)
        return kForkStreamFailed;
    if (aclrtMemsetAsync(p, 4096, 0x6B, 4096, stream) != ACL_SUCCESS ||
        aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs) != ACL_SUCCESS)
        return kForkMemsetFailed;
    const uint8_t *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < 4096; i++)
        if (b[i] != 0x6B)
            return kForkDataWrong;
    if (aclrtDestroyStream(stream) != ACL_SUCCESS || aclrtFree(p) != ACL_SUCCESS ||
        aclrtResetDevice(0) != ACL_SUCCESS || aclFinalize() != ACL_SUCCESS)
        return kForkCleanupFailed;
    return kForkOk;
}

TEST_F(AclDeviceTest, ForkChildIsUninitializedUntilAclInit)
{
    // The parent has used the runtime: a device, a stream, memory.
    void *p = nullptr;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));

    // As every CANN program does: the child's aclInit must still succeed.
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream));
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << strerror(errno);
    if (pid == 0)
        _exit(ForkChild(stream, p));

    int status = 0;
    ASSERT_TRUE(ChildExited(pid, status));
    EXPECT_EQ(kForkOk, WEXITSTATUS(status)) << "see enum ForkStep for the step that failed";

    // The parent's runtime is untouched.
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetAsync(p, 4096, 0x11, 4096, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(p, 4096, 0x11));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(ACL_SUCCESS, aclFinalize()); // releases device 0 too
    MarkReset(0);
}

// In a fork child: a copy into host memory queued behind a notify wait
// runs once the wait is released. Exit code 0, or the failed step.
int QueuedHostCopyChild()
{
    void *d = nullptr;
    aclrtStream stream = nullptr, releaser = nullptr;
    aclrtNotify notify = nullptr;
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS ||
        aclrtMemset(d, 4096, 0x77, 4096) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS ||
        aclrtCreateStream(&releaser) != ACL_SUCCESS ||
        aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT) != ACL_SUCCESS)
        return 1;
    std::vector<uint8_t> host(4096, 0);
    if (aclrtWaitAndResetNotify(notify, stream, 30) != ACL_SUCCESS ||
        aclrtMemcpyAsync(host.data(), 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, stream) != ACL_SUCCESS)
        return 2;
    if (aclrtRecordNotify(notify, releaser) != ACL_SUCCESS ||
        aclrtSynchronizeStreamWithTimeout(stream, 10000) != ACL_SUCCESS)
        return 3;
    return BytesAre(host.data(), 4096, 0x77) ? 0 : 4;
}

// The child of a parent whose copier thread ran, and which kept no runtime
// state (aclFinalize) when it forked, starts a copier of its own.
TEST_F(AclDeviceTest, AForkChildRunsItsQueuedCopiesIntoHostMemoryAfterTheParentsFinalize)
{
    void *d = nullptr;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    std::vector<uint8_t> host(4096, 0);
    {
        Gate gate; // a queued copy starts the parent's copier
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(host.data(), 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, stream));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(d));
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    MarkReset(0);

    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(QueuedHostCopyChild());
    int status = 0;
    ASSERT_TRUE(ChildExited(pid, status)) << "the fork child's queued copy never ran";
    EXPECT_EQ(0, WEXITSTATUS(status)) << "the step of QueuedHostCopyChild that failed";
}

// ---- last errors, run mode ----

TEST_F(AclDeviceTest, PeekAtLastErrorKeepsTheThreadsLastFailureAndGetLastErrorClearsIt)
{
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL); // clears whatever an earlier test left
    EXPECT_EQ(ACL_SUCCESS, aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFree(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
    // A bad level is refused and leaves the error in place.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetLastError(static_cast<aclrtLastErrLevel>(1)));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream)); // a success keeps it too
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyStream(reinterpret_cast<aclrtStream>(0x1234)));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtGetLastError(ACL_RT_THREAD_LEVEL));
    EXPECT_EQ(ACL_SUCCESS, aclrtGetLastError(ACL_RT_THREAD_LEVEL));
    // Per thread: another thread's failure is not this one's.
    std::thread other([] {
        (void)aclrtFree(nullptr);
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
    });
    other.join();
    EXPECT_EQ(ACL_SUCCESS, aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclDeviceTest, RunModeIsHost)
{
    aclrtRunMode mode = ACL_DEVICE;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetRunMode(&mode));
    EXPECT_EQ(ACL_HOST, mode);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetRunMode(nullptr));
}

// ---- ASCEND_RT_VISIBLE_DEVICES ----

// In a fork child: sets ASCEND_RT_VISIBLE_DEVICES to `value` (unsets it for
// NULL), starts afresh with aclInit and exits with 16 * the device count
// plus the npuipc index behind device 0 (whose budget an allocation on it
// takes), or with a code from 240 up naming the step that failed.
int VisibleDevicesChild(const char *value)
{
    if (value)
        setenv("ASCEND_RT_VISIBLE_DEVICES", value, 1);
    else
        unsetenv("ASCEND_RT_VISIBLE_DEVICES");
    uint32_t count = 0;
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtGetDeviceCount(&count) != ACL_SUCCESS)
        return 255;
    if (count == 0)
        return aclrtSetDevice(0) == ACL_ERROR_RT_INVALID_DEVICEID ? 0 : 254;
    if (aclrtSetDevice(static_cast<int32_t>(count)) != ACL_ERROR_RT_INVALID_DEVICEID)
        return 253;
    if (aclrtSetDevice(0) != ACL_SUCCESS)
        return 252;
    int32_t current = -1;
    if (aclrtGetDevice(&current) != ACL_SUCCESS || current != 0)
        return 251;
    auto before = npuipc::list_devices();
    void *p = nullptr;
    if (!before.ok() || aclrtMalloc(&p, 1 << 20, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS)
        return 250;
    auto after = npuipc::list_devices();
    if (!after.ok() || after.value().size() != before.value().size())
        return 249;
    int index = -1;
    for (size_t i = 0; i < after.value().size(); i++)
        if (after.value()[i].mem_free < before.value()[i].mem_free)
            index = static_cast<int>(after.value()[i].index);
    if (index < 0 || index > 15)
        return 248;
    return static_cast<int>(count) * 16 + index;
}

TEST_F(AclDeviceTest, VisibleDevicesNumberTheListedDevicesFromZeroAndStopAtTheFirstBadEntry)
{
    ACL_NEED_DEVICES(2);
    const struct {
        const char *value;
        int expected; // 16 * count + npuipc index of device 0
    } cases[] = {
        {nullptr, 2 * 16 + 0},
        {"", 2 * 16 + 0},   // empty: as unset
        {"1", 1 * 16 + 1},
        {"1,0", 1 * 16 + 1}, // not ascending: stops at 0
        {"0, 1", 1 * 16 + 0}, // the space ends the list
        {"1,7", 1 * 16 + 1},  // no device 7: stops there
        {"0,1", 2 * 16 + 0},
        {"x", 0},             // nothing valid: no device
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.value ? std::string("ASCEND_RT_VISIBLE_DEVICES=\"") + c.value + "\"" : "unset");
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0)
            _exit(VisibleDevicesChild(c.value));
        int status = 0;
        ASSERT_TRUE(ChildExited(pid, status));
        EXPECT_EQ(c.expected, WEXITSTATUS(status));
    }
}

// A launcher that counted the devices and forked its workers before
// setting any: each worker's ASCEND_RT_VISIBLE_DEVICES and aclInit count,
// although the launcher's runtime had read the devices and was initialized.
TEST_F(AclDeviceTest, VisibleDevicesApplyInAWorkerForkedByALauncherThatOnlyCountedDevices)
{
    ACL_NEED_DEVICES(2);
    pid_t launcher = fork();
    ASSERT_GE(launcher, 0);
    if (launcher == 0) {
        uint32_t count = 0;
        if (aclInit(nullptr) != ACL_SUCCESS || aclrtGetDeviceCount(&count) != ACL_SUCCESS || count < 2)
            _exit(201);
        unsetenv("ASCEND_RT_VISIBLE_DEVICES");
        pid_t worker = fork();
        if (worker < 0)
            _exit(202);
        if (worker == 0)
            _exit(VisibleDevicesChild("1"));
        int status = 0;
        if (waitpid(worker, &status, 0) != worker || !WIFEXITED(status))
            _exit(203);
        _exit(WEXITSTATUS(status));
    }
    int status = 0;
    ASSERT_TRUE(ChildExited(launcher, status));
    EXPECT_EQ(1 * 16 + 1, WEXITSTATUS(status)) << "201-203: the launcher failed; 248-255: a worker step";
}

// ---- not supported yet ----


} // namespace

namespace {

// What acl_ipc_peer COMMAND wrote on standard output, on standard error
// and into its log files, run with `env` ("NAME=value"; the log variables
// not named are unset, and ASCEND_PROCESS_LOG_PATH is a fresh directory).
struct LogOutput {
    std::string out, err, files;
    std::string rc; // what the peer's call returned ("" if it never said)
};

std::string ReadAll(int fd)
{
    std::string text;
    char buf[512];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        text.append(buf, static_cast<size_t>(n));
    return text;
}

LogOutput RunPeerLogging(const char *command, const std::vector<std::string> &env)
{
    LogOutput got;
    char dir[] = "/tmp/acl_log_test.XXXXXX";
    if (!mkdtemp(dir)) {
        got.err = "mkdtemp failed";
        return got;
    }
    const std::string logs = std::string(dir) + "/logs";
    const std::string err_path = std::string(dir) + "/stderr";
    int out[2];
    if (pipe(out)) {
        got.err = "pipe failed";
        return got;
    }
    pid_t pid = fork();
    if (pid == 0) {
        // Standard error into a file: two pipes read one after the other
        // could fill and stall the peer.
        int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(out[1], 1);
        dup2(err, 2);
        for (const char *name : {"ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_MODULE_LOG_LEVEL",
                                 "ASCEND_LOG_PRINT_TO_STDOUT", "ASCEND_SLOG_PRINT_TO_STDOUT"})
            unsetenv(name);
        setenv("ASCEND_PROCESS_LOG_PATH", logs.c_str(), 1);
        for (const std::string &e : env)
            putenv(const_cast<char *>(e.c_str()));
        execl(ACL_IPC_PEER_PATH, ACL_IPC_PEER_PATH, command, dir, "0", "0", static_cast<char *>(nullptr));
        _exit(127);
    }
    close(out[1]);
    got.out = ReadAll(out[0]); // until the peer exits
    close(out[0]);
    waitpid(pid, nullptr, 0);
    std::ifstream err_file(err_path);
    got.err = std::string(std::istreambuf_iterator<char>(err_file), {});
    std::ifstream rc_file(std::string(dir) + "/rc");
    std::getline(rc_file, got.rc);
    std::string plog = logs + "/debug/plog";
    if (DIR *d = opendir(plog.c_str())) {
        while (const dirent *e = readdir(d)) {
            if (e->d_name[0] == '.')
                continue;
            std::ifstream f(plog + "/" + e->d_name);
            got.files += std::string(std::istreambuf_iterator<char>(f), {});
        }
        closedir(d);
    }
    std::string cmd = std::string("rm -rf ") + dir;
    (void)!system(cmd.c_str());
    return got;
}

constexpr char kFreeError[] = "[npuipc] ERROR aclrtFree: devPtr is NULL (error 100000)\n";

// As CANN: into the process's log file under ASCEND_PROCESS_LOG_PATH
// unless printing is asked for; nothing on the terminal by default.
TEST(AclLogTest, AFailureIsLoggedToTheProcessLogFileByDefault)
{
    LogOutput got = RunPeerLogging("fail-once", {});
    EXPECT_EQ("100000", got.rc); // the call failed as it should
    EXPECT_EQ("", got.out);
    EXPECT_EQ("", got.err);
    EXPECT_EQ(kFreeError, got.files);
}

TEST(AclLogTest, PrintToStdoutSendsTheLogToStandardOutputAndTheOlderVariableIsItsFallback)
{
    LogOutput got = RunPeerLogging("fail-once", {"ASCEND_LOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ(kFreeError, got.out);
    EXPECT_EQ("", got.err);
    EXPECT_EQ("", got.files);
    got = RunPeerLogging("fail-once", {"ASCEND_SLOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ(kFreeError, got.out);
    EXPECT_EQ("", got.files);
    // The newer variable wins when both are set.
    got = RunPeerLogging("fail-once", {"ASCEND_LOG_PRINT_TO_STDOUT=0", "ASCEND_SLOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ("", got.out);
    EXPECT_EQ(kFreeError, got.files);
}

TEST(AclLogTest, TheGlobalLevelAndTheRuntimeModulesLevelSilenceErrors)
{
    LogOutput got = RunPeerLogging("fail-once", {"ASCEND_GLOBAL_LOG_LEVEL=4", "ASCEND_LOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ("", got.out + got.err + got.files);
    got = RunPeerLogging("fail-once", {"ASCEND_GLOBAL_LOG_LEVEL=3", "ASCEND_MODULE_LOG_LEVEL=GE=0:RUNTIME=4",
                                       "ASCEND_LOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ("", got.out + got.err + got.files);
    got = RunPeerLogging("fail-once", {"ASCEND_GLOBAL_LOG_LEVEL=4", "ASCEND_MODULE_LOG_LEVEL=RUNTIME=3",
                                       "ASCEND_LOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ(kFreeError, got.out);
}

// A synchronize that runs out of the time it was given is logged at INFO,
// as CANN does: a loop polling with short timeouts writes nothing at the
// default level.
TEST(AclLogTest, ATimeoutTheCallerChoseIsLoggedAtInfo)
{
    LogOutput got = RunPeerLogging("sync-timeout", {"ASCEND_LOG_PRINT_TO_STDOUT=1"});
    EXPECT_EQ("0", got.rc); // the synchronize ran out, as it should
    EXPECT_EQ("", got.out);
    got = RunPeerLogging("sync-timeout", {"ASCEND_LOG_PRINT_TO_STDOUT=1", "ASCEND_GLOBAL_LOG_LEVEL=1"});
    EXPECT_NE(std::string::npos, got.out.find("[npuipc] INFO aclrtSynchronizeStreamWithTimeout: "))
        << got.out;
    EXPECT_EQ(std::string::npos, got.out.find("ERROR")) << got.out;
}

} // namespace

// ---- the leak check every test ends with (AclTest::TearDown) ----

// It counts what the application holds through the library, and not what
// the runtime holds for itself: a default stream made on first use and the
// DRM fd of a device are the runtime's; a stream made by aclrtCreateStream
// and a render node the process opened itself are the application's.
TEST_F(AclDeviceTest, LeakCheckCountsTheApplicationsObjectsNotTheRuntimesOwn)
{
    NpuipcState start = TakeNpuipcState();
    EXPECT_EQ(0u, start.devices.count(0)) << start.DiffTo(NpuipcState{});

    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    NpuipcState with_stream = TakeNpuipcState();
    EXPECT_EQ(1, with_stream.devices[0]["npuipc-streams"]);
    EXPECT_EQ(start.fds, with_stream.fds);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));

    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(4, TakeNpuipcState().devices[0]["drm-memory-device"]);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetAsync(dev, 4 * kKiB, 0x5a, 4 * kKiB, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr));
    EXPECT_EQ(1u, npuipc::runtime_own_objects(0).streams);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
    NpuipcState after = TakeNpuipcState();
    EXPECT_TRUE(after == start) << "the default stream counted:" << start.DiffTo(after);

    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    ASSERT_LE(0, fd);
    NpuipcState with_fd = TakeNpuipcState();
    EXPECT_EQ(1u, with_fd.fds.size() - start.fds.size());
    EXPECT_EQ(1u, with_fd.fds.count(fd));
    close(fd);
}
