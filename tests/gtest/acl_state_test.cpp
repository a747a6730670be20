// SPDX-License-Identifier: MIT
// State callbacks (aclrt_state(3)): streams created and about to be
// destroyed, devices set and reset, and a device's task abort
// (aclrtDeviceTaskAbort) with its callbacks; aclrtStreamStop
// (aclrt_failure(3)). Streams are held by an aclrtValueWait that only the
// test releases.
#include "acl_test_util.h"

#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

using namespace acltest;

namespace {

// What the callbacks saw, in order.
struct Seen {
    std::vector<std::pair<aclrtStream, aclrtStreamState>> streams;
    std::vector<std::pair<int32_t, aclrtDeviceState>> devices;
    std::vector<std::pair<int32_t, aclrtDeviceTaskAbortStage>> aborts;
    std::vector<uint32_t> abort_timeouts;
    // A stream destroyed is still one when DESTROY_PRE comes.
    std::vector<aclError> ids_at_destroy;
    int32_t abort_result = 0;
};

void OnStream(aclrtStream stm, aclrtStreamState state, void *args)
{
    auto *seen = static_cast<Seen *>(args);
    seen->streams.emplace_back(stm, state);
    if (state == ACL_RT_STREAM_STATE_DESTROY_PRE) {
        int32_t id = -1;
        seen->ids_at_destroy.push_back(aclrtStreamGetId(stm, &id));
    }
}

void OnDevice(int32_t deviceId, aclrtDeviceState state, void *args)
{
    static_cast<Seen *>(args)->devices.emplace_back(deviceId, state);
}

int32_t OnAbort(int32_t deviceId, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void *args)
{
    auto *seen = static_cast<Seen *>(args);
    seen->aborts.emplace_back(deviceId, stage);
    seen->abort_timeouts.push_back(timeout);
    return seen->abort_result;
}

constexpr size_t kSize = 4096;
constexpr int32_t kHeldMs = 100;

class AclStateTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&mem_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mem_, kSize, 0, kSize));
    }
    void TearDown() override
    {
        // NULL callbacks remove the names, registered or not.
        EXPECT_EQ(ACL_SUCCESS, aclrtRegStreamStateCallback("test", nullptr, nullptr));
        EXPECT_EQ(ACL_SUCCESS, aclrtRegDeviceStateCallback("test", nullptr, nullptr));
        EXPECT_EQ(ACL_SUCCESS, aclrtSetDeviceTaskAbortCallback("test", nullptr, nullptr));
        if (mem_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(mem_));
        }
        AclTest::TearDown();
    }

    // Holds `stream` on the word at `slot` (0 until the test writes it),
    // with a set of marker byte `slot` behind the wait.
    void Hold(aclrtStream stream, size_t slot)
    {
        auto *word = static_cast<uint64_t *>(mem_) + slot;
        ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(Marker(slot), 1, 0x5a, 1, stream));
        EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, kHeldMs));
    }
    void Release(size_t slot)
    {
        const uint64_t one = 1;
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(static_cast<uint64_t *>(mem_) + slot, 8, &one, 8,
                                           ACL_MEMCPY_HOST_TO_DEVICE));
    }
    uint8_t *Marker(size_t slot) { return static_cast<uint8_t *>(mem_) + kSize / 2 + slot; }
    uint8_t MarkerValue(size_t slot)
    {
        uint8_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 1, Marker(slot), 1, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }

    void *mem_ = nullptr;
    Seen seen_;
};

TEST_F(AclStateTest, StreamCallbacksSeeEveryStreamCreatedAndEachDestroyBeforeItHappens)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtRegStreamStateCallback("test", OnStream, &seen_));
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&b, 0, 0));
    ASSERT_EQ(2u, seen_.streams.size());
    EXPECT_EQ(std::make_pair(a, ACL_RT_STREAM_STATE_CREATE_POST), seen_.streams[0]);
    EXPECT_EQ(std::make_pair(b, ACL_RT_STREAM_STATE_CREATE_POST), seen_.streams[1]);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(b));
    ASSERT_EQ(4u, seen_.streams.size());
    EXPECT_EQ(std::make_pair(a, ACL_RT_STREAM_STATE_DESTROY_PRE), seen_.streams[2]);
    EXPECT_EQ(std::make_pair(b, ACL_RT_STREAM_STATE_DESTROY_PRE), seen_.streams[3]);
    EXPECT_EQ((std::vector<aclError>{ACL_SUCCESS, ACL_SUCCESS}), seen_.ids_at_destroy);

    // Removed: no more calls; a refused destroy calls none either.
    ASSERT_EQ(ACL_SUCCESS, aclrtRegStreamStateCallback("test", nullptr, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(4u, seen_.streams.size());
    ASSERT_EQ(ACL_SUCCESS, aclrtRegStreamStateCallback("test", OnStream, &seen_));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyStream(a));
    EXPECT_EQ(4u, seen_.streams.size());
}

TEST_F(AclStateTest, AContextsDefaultStreamIsReportedAtItsFirstUseAndWithItsContext)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtRegStreamStateCallback("test", OnStream, &seen_));
    aclrtContext ctx0 = nullptr, ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx0));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&ctx, 0));
    aclrtStream mine = nullptr, dflt = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&mine));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr)); // makes the default stream
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetCurrentDefaultStream(&dflt));
    ASSERT_EQ(2u, seen_.streams.size());
    EXPECT_EQ(std::make_pair(mine, ACL_RT_STREAM_STATE_CREATE_POST), seen_.streams[0]);
    EXPECT_EQ(std::make_pair(dflt, ACL_RT_STREAM_STATE_CREATE_POST), seen_.streams[1]);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(ctx));
    ASSERT_EQ(4u, seen_.streams.size());
    EXPECT_EQ(ACL_RT_STREAM_STATE_DESTROY_PRE, seen_.streams[2].second);
    EXPECT_EQ(ACL_RT_STREAM_STATE_DESTROY_PRE, seen_.streams[3].second);
    EXPECT_TRUE((seen_.streams[2].first == mine && seen_.streams[3].first == dflt) ||
                (seen_.streams[2].first == dflt && seen_.streams[3].first == mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx0));
}

TEST_F(AclStateTest, ANameIsRegisteredOnceAndANullNameIsInvalid)
{
    for (int kind = 0; kind < 3; kind++) {
        auto reg = [&](const char *name, bool with_fn) {
            switch (kind) {
            case 0:
                return aclrtRegStreamStateCallback(name, with_fn ? OnStream : nullptr, &seen_);
            case 1:
                return aclrtRegDeviceStateCallback(name, with_fn ? OnDevice : nullptr, &seen_);
            default:
                return aclrtSetDeviceTaskAbortCallback(name, with_fn ? OnAbort : nullptr, &seen_);
            }
        };
        SCOPED_TRACE(kind);
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, reg(nullptr, true));
        EXPECT_EQ(ACL_SUCCESS, reg("never registered", false));
        EXPECT_EQ(ACL_SUCCESS, reg("test", true));
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, reg("test", true));
        EXPECT_EQ(ACL_SUCCESS, reg("test", false));
        EXPECT_EQ(ACL_SUCCESS, reg("test", true)); // free again
    }
}

TEST_F(AclStateTest, StreamStopDropsTheQueuedWorkAndTheStreamRunsAgain)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    Hold(s, 0);
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamStop(s));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    EXPECT_EQ(0, MarkerValue(0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(Marker(0), 1, 0x77, 1, s));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    EXPECT_EQ(0x77, MarkerValue(0));

    aclrtStream dflt = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetCurrentDefaultStream(&dflt));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamStop(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamStop(dflt));
    int not_a_stream = 0;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamStop(&not_a_stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

TEST_F(AclStateTest, DeviceTaskAbortEndsTheWorkOfEveryStreamOfTheDeviceBetweenItsCallbacks)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDeviceTaskAbortCallback("test", OnAbort, &seen_));
    aclrtContext ctx = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    Hold(a, 0);
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&other, 0)); // a stream of another context too
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    Hold(b, 1);
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceTaskAbort(0, 0));
    ASSERT_EQ(2u, seen_.aborts.size());
    EXPECT_EQ(std::make_pair(0, ACL_RT_DEVICE_TASK_ABORT_PRE), seen_.aborts[0]);
    EXPECT_EQ(std::make_pair(0, ACL_RT_DEVICE_TASK_ABORT_POST), seen_.aborts[1]);
    EXPECT_EQ((std::vector<uint32_t>{0, 0}), seen_.abort_timeouts); // 0: no limit
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_EQ(0, MarkerValue(0));
    EXPECT_EQ(0, MarkerValue(1));

    // With a timeout, the callbacks get what is left of it.
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceTaskAbort(0, 60000));
    ASSERT_EQ(4u, seen_.aborts.size());
    EXPECT_GE(60000u, seen_.abort_timeouts[2]);
    EXPECT_LT(0u, seen_.abort_timeouts[3]);
    EXPECT_GE(seen_.abort_timeouts[2], seen_.abort_timeouts[3]);

    // The device works again.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(Marker(1), 1, 0x77, 1, b));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_EQ(0x77, MarkerValue(1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(other));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
}

TEST_F(AclStateTest, ACallbackRefusingBeforeTheAbortLeavesTheWorkQueued)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDeviceTaskAbortCallback("test", OnAbort, &seen_));
    seen_.abort_result = 1;
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    Hold(s, 0);
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtDeviceTaskAbort(0, 0));
    EXPECT_EQ(1u, seen_.aborts.size()); // PRE only
    Release(0);
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    EXPECT_EQ(0x5a, MarkerValue(0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

TEST_F(AclStateTest, DeviceTaskAbortRefusesBadArgumentsWithCannsCodes)
{
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceTaskAbort(0, 36 * 60 * 1000 + 1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceTaskAbort(-1, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceTaskAbort(static_cast<int32_t>(device_count_), 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceTaskAbort(0, 36 * 60 * 1000)); // the longest is fine
}

class AclDeviceStateTest : public AclStateTest {
protected:
    AclDeviceStateTest() { set_device_in_setup_ = false; }
    void SetUp() override
    {
        AclTest::SetUp(); // no memory: no device is set
    }
};

TEST_F(AclDeviceStateTest, DeviceCallbacksSeeTheFirstSetEachSetAndTheLastReset)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtRegDeviceStateCallback("test", OnDevice, &seen_));
    ASSERT_EQ(ACL_SUCCESS, aclrtRegStreamStateCallback("test", OnStream, &seen_));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, aclrtDeviceTaskAbort(0, 0)); // not set yet
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
    using D = std::pair<int32_t, aclrtDeviceState>;
    EXPECT_EQ((std::vector<D>{{0, ACL_RT_DEVICE_STATE_SET_PRE}, {0, ACL_RT_DEVICE_STATE_SET_POST},
                              {0, ACL_RT_DEVICE_STATE_SET_POST}}),
              seen_.devices);
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDevice(0)); // one set left: nothing yet
    EXPECT_EQ(3u, seen_.devices.size());
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDevice(0));
    EXPECT_EQ((std::vector<D>{{0, ACL_RT_DEVICE_STATE_SET_PRE}, {0, ACL_RT_DEVICE_STATE_SET_POST},
                              {0, ACL_RT_DEVICE_STATE_SET_POST}, {0, ACL_RT_DEVICE_STATE_RESET_PRE},
                              {0, ACL_RT_DEVICE_STATE_RESET_POST}}),
              seen_.devices);
    // The stream went with the device, reported before it did.
    ASSERT_EQ(2u, seen_.streams.size());
    EXPECT_EQ(std::make_pair(s, ACL_RT_STREAM_STATE_DESTROY_PRE), seen_.streams[1]);
    EXPECT_EQ(ACL_SUCCESS, seen_.ids_at_destroy.at(0));
    // A refused reset calls nothing.
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDevice(0));
    EXPECT_EQ(5u, seen_.devices.size());
}

} // namespace
