// SPDX-License-Identifier: MIT
// What a stream or an event tells about itself (aclrt_stream(3),
// aclrt_event(3)): ids, priority and flags, the current context's default
// stream, and how many more streams and events the driver lets this
// process create, each with CANN's codes for bad arguments.
#include "acl_test_util.h"

#include <cstring>
#include <thread>

using namespace acltest;

namespace {

class AclStreamConfigTest : public AclTest {};

// fn's result on a new thread, which has no current context.
template <typename Fn> aclError OnThreadWithoutContext(Fn fn)
{
    aclError rc = -1;
    std::thread t([&] { rc = fn(); });
    t.join();
    return rc;
}

TEST_F(AclStreamConfigTest, StreamIdsAreDistinctAndTheDefaultStreamHasOne)
{
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    int32_t ida = -1, idb = -1, id_default = -1, id_null = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetId(a, &ida));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetId(b, &idb));
    EXPECT_GT(ida, 0);
    EXPECT_NE(ida, idb);
    aclrtStream dflt = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetCurrentDefaultStream(&dflt));
    ASSERT_NE(nullptr, dflt);
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetId(dflt, &id_default));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetId(nullptr, &id_null));
    EXPECT_EQ(id_default, id_null) << "NULL names the default stream";
    EXPECT_NE(ida, id_default);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamGetId(a, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    int32_t id = 42;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamGetId(a, &id));
    EXPECT_EQ(42, id);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, OnThreadWithoutContext([&] { return aclrtStreamGetId(nullptr, &id); }));
    // A named stream needs no context for its id.
    EXPECT_EQ(ACL_SUCCESS, OnThreadWithoutContext([&] { return aclrtStreamGetId(b, &id); }));
    EXPECT_EQ(idb, id);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
}

TEST_F(AclStreamConfigTest, APlainStreamHasPriorityZeroAndNoFlags)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    uint32_t priority = 42, flags = 42;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetPriority(s, &priority));
    EXPECT_EQ(0u, priority);
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetFlags(s, &flags));
    EXPECT_EQ(0u, flags);
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetFlags(nullptr, &flags));
    EXPECT_EQ(0u, flags);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamGetPriority(s, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamGetFlags(s, nullptr));
    // As CANN: these two need a current context, whatever the stream.
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
              OnThreadWithoutContext([&] { return aclrtStreamGetPriority(s, &priority); }));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, OnThreadWithoutContext([&] { return aclrtStreamGetFlags(s, &flags); }));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamGetPriority(s, &priority));
}

// Each attribute reads back as set; a fresh stream's are CANN's defaults.
TEST_F(AclStreamConfigTest, StreamAttributesReadBackAsSetFromCannsDefaults)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    aclrtStreamAttrValue v;
    auto get = [&](aclrtStreamAttr attr) {
        std::memset(&v, 0xA5, sizeof(v));
        return aclrtGetStreamAttribute(s, attr, &v);
    };
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_FAILURE_MODE));
    EXPECT_EQ(ACL_CONTINUE_ON_FAILURE, v.failureMode);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_USER_CUSTOM_TAG));
    EXPECT_EQ(0xFFFFFFFFu, v.userCustomTag);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK));
    EXPECT_EQ(0u, v.overflowSwitch);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_CACHE_OP_INFO));
    EXPECT_EQ(0u, v.cacheOpInfoSwitch);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_PRIORITY));
    EXPECT_EQ(0u, v.streamPriority);

    std::memset(&v, 0, sizeof(v));
    v.userCustomTag = 1234;
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    v.overflowSwitch = 1;
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
    v.cacheOpInfoSwitch = 1;
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
    v.streamPriority = 100; // clamped
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, &v));
    v.failureMode = ACL_STOP_ON_FAILURE;
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_USER_CUSTOM_TAG));
    EXPECT_EQ(1234u, v.userCustomTag);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK));
    EXPECT_EQ(1u, v.overflowSwitch);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_CACHE_OP_INFO));
    EXPECT_EQ(1u, v.cacheOpInfoSwitch);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_PRIORITY));
    EXPECT_EQ(7u, v.streamPriority);
    uint32_t priority = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetPriority(s, &priority));
    EXPECT_EQ(7u, priority);
    ASSERT_EQ(ACL_SUCCESS, get(ACL_STREAM_ATTR_FAILURE_MODE));
    EXPECT_EQ(ACL_STOP_ON_FAILURE, v.failureMode);
    // The whole context stops on failure: its default stream too.
    ASSERT_EQ(ACL_SUCCESS, aclrtGetStreamAttribute(nullptr, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    EXPECT_EQ(ACL_STOP_ON_FAILURE, v.failureMode);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

TEST_F(AclStreamConfigTest, StreamAttributeCallsHaveCannsCodes)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    aclrtStreamAttrValue v;
    std::memset(&v, 0, sizeof(v));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtGetStreamAttribute(reinterpret_cast<aclrtStream>(0x1234), ACL_STREAM_ATTR_PRIORITY, &v));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtGetStreamAttribute(s, static_cast<aclrtStreamAttr>(0), &v));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetStreamAttribute(s, static_cast<aclrtStreamAttr>(6), &v));
    v.overflowSwitch = 2;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
    v.cacheOpInfoSwitch = 2;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
    // Refused changes changed nothing.
    ASSERT_EQ(ACL_SUCCESS, aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
    EXPECT_EQ(0u, v.cacheOpInfoSwitch);
    // NULL: the default stream, but never for its priority.
    EXPECT_EQ(ACL_SUCCESS, aclrtGetStreamAttribute(nullptr, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtGetStreamAttribute(nullptr, ACL_STREAM_ATTR_PRIORITY, &v));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetStreamAttribute(nullptr, ACL_STREAM_ATTR_PRIORITY, &v));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, OnThreadWithoutContext([&] {
                  return aclrtGetStreamAttribute(nullptr, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v);
              }));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

TEST_F(AclStreamConfigTest, TheDefaultStreamsHandleRunsWorkAndCannotBeDestroyed)
{
    aclrtStream dflt = nullptr, again = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetCurrentDefaultStream(&dflt));
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetCurrentDefaultStream(&again));
    EXPECT_EQ(dflt, again);
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x3c, 4096, dflt));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr)) << "the same stream as NULL";
    std::vector<uint8_t> host(4096);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(host.data(), 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(BytesAre(host.data(), 4096, 0x3c));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDestroyStream(dflt));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDestroyStreamForce(dflt));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(dflt)) << "still there";
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCtxGetCurrentDefaultStream(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
              OnThreadWithoutContext([&] { return aclrtCtxGetCurrentDefaultStream(&again); }));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// Streams, events and notifies share the driver's handles of a device
// file: each one made takes one, each one destroyed gives it back.
TEST_F(AclStreamConfigTest, AvailableStreamsAndEventsAreTheDriversFreeHandles)
{
    uint32_t streams = 0, events = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetStreamAvailableNum(&streams));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetEventAvailNum(&events));
    EXPECT_EQ(streams, events);
    EXPECT_GT(streams, 8000u);
    EXPECT_LE(streams, 8192u);
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    uint32_t now = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetStreamAvailableNum(&now));
    EXPECT_EQ(streams - 1, now);
    aclrtEvent e = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&e));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetEventAvailNum(&now));
    EXPECT_EQ(streams - 2, now);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetStreamAvailableNum(&now));
    EXPECT_EQ(streams, now);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetStreamAvailableNum(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetEventAvailNum(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, OnThreadWithoutContext([&] { return aclrtGetStreamAvailableNum(&now); }));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, OnThreadWithoutContext([&] { return aclrtGetEventAvailNum(&now); }));
}

TEST_F(AclStreamConfigTest, EventIdsAreDistinctAndIpcEventsHaveNone)
{
    aclrtEvent a = nullptr, b = nullptr, ipc = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&b, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ipc, ACL_EVENT_IPC));
    uint32_t ida = 0, idb = 0, id = 42;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetEventId(a, &ida));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetEventId(b, &idb));
    EXPECT_GT(ida, 0u);
    EXPECT_NE(ida, idb);
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtGetEventId(ipc, &id));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetEventId(nullptr, &id));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetEventId(a, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(a));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtGetEventId(a, &id));
    EXPECT_EQ(42u, id);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ipc));
}

// The priority and flags of a stream made with them, as CANN keeps them:
// the priority clamped to 0..7, unknown flag bits dropped.
TEST_F(AclStreamConfigTest, AStreamWithConfigKeepsItsPriorityAndFlagsAndRunsWork)
{
    const struct {
        uint32_t priority, flag;
        uint32_t got_priority, got_flags;
    } cases[] = {
        {3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC, 3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC},
        {100, ACL_STREAM_HUGE | 0x100, 7, ACL_STREAM_HUGE},
        {0x80000000u, ACL_STREAM_DEVICE_USE_ONLY, 0, ACL_STREAM_DEVICE_USE_ONLY},
        {7, ACL_STREAM_CPU_SCHEDULE, 7, ACL_STREAM_CPU_SCHEDULE},
        // Bound to no model, a persistent stream runs its work at once.
        {1, ACL_STREAM_PERSISTENT, 1, ACL_STREAM_PERSISTENT},
        {0, 0, 0, 0},
    };
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> host(4096);
    for (const auto &c : cases) {
        SCOPED_TRACE("priority " + std::to_string(c.priority) + ", flag " + std::to_string(c.flag));
        aclrtStream s = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&s, c.priority, c.flag));
        uint32_t priority = 42, flags = 42;
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetPriority(s, &priority));
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetFlags(s, &flags));
        EXPECT_EQ(c.got_priority, priority);
        EXPECT_EQ(c.got_flags, flags);
        const uint8_t value = static_cast<uint8_t>(0x40 + c.got_priority);
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, value, 4096, s));
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(host.data(), 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT_TRUE(BytesAre(host.data(), 4096, value));
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    }
    aclrtStream s = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_FAST_LAUNCH));
    EXPECT_EQ(nullptr, s);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateStreamWithConfig(nullptr, 0, 0));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL,
              OnThreadWithoutContext([&] { return aclrtCreateStreamWithConfig(&s, 0, 0); }));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclStreamConfigTest, AConfigHandleTakesEachValueAtItsSizeAndMakesAStream)
{
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    ASSERT_NE(nullptr, h);
    EXPECT_EQ(0u, h->priority);
    EXPECT_EQ(0u, h->flag);
    uint32_t priority = 5;
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &priority, sizeof(priority)));
    EXPECT_EQ(5u, h->priority);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &priority, 8));
    uint32_t too_low = 8;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &too_low, 4));
    EXPECT_EQ(5u, h->priority) << "a refused value changes nothing";
    size_t flag = ACL_STREAM_FAST_LAUNCH, size = 4096;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flag, 4));
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flag, sizeof(flag)));
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_SIZE, &size, sizeof(size)));
    EXPECT_EQ(4096u, h->workSize);
    void *ptr = &size;
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &ptr, sizeof(ptr)));
    EXPECT_EQ(ptr, h->workptr);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtSetStreamConfigOpt(h, static_cast<aclrtStreamConfigAttr>(4), &size, sizeof(size)));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetStreamConfigOpt(nullptr, ACL_RT_STREAM_FLAG, &flag, 8));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, nullptr, 8));

    aclrtStream s = nullptr, plain = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamV2(&s, h));
    uint32_t got = 42, flags = 42;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetPriority(s, &got));
    EXPECT_EQ(5u, got);
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetFlags(s, &flags));
    EXPECT_EQ(0u, flags) << "as CANN, the handle's flag is kept but not used";
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamV2(&plain, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetPriority(plain, &got));
    EXPECT_EQ(0u, got);
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(s));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(plain));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateStreamV2(nullptr, h));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamConfigHandle(h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyStreamConfigHandle(nullptr));
}

// Every stream of the current context's device, waited for up to a time
// in milliseconds: the time runs out while one waits on a gate.
TEST_F(AclStreamConfigTest, SynchronizeDeviceWithTimeoutEndsInTimeAndWaitsForEveryStream)
{
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeDeviceWithTimeout(0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeDeviceWithTimeout(-2));
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, OnThreadWithoutContext([] { return aclrtSynchronizeDeviceWithTimeout(-1); }));
    aclrtStream idle = nullptr, held = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&idle));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&held));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(held));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeDeviceWithTimeout(200));
    auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, std::chrono::milliseconds(190));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeDeviceWithTimeout(kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeDeviceWithTimeout(-1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(idle));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(held));
}

} // namespace
