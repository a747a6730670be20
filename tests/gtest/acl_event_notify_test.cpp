// SPDX-License-Identifier: MIT
// aclrt events and notifies: creation flags, record/query/synchronize,
// ordering between streams, timeouts and the recovery of a stream whose wait
// timed out, reset, elapsed time, IPC events' refusals, notify ids and batch
// reset, handle errors, and the seed document's spellings
// (acl/acl_seed_compat.h). Runs in the VM against npuipc.ko with default
// parameters.
//
// Streams are held at chosen points with a Gate (a notify wait the test
// releases), so "not yet" states are deterministic rather than timed.
#include "acl_test_util.h"

#include <acl/acl_seed_compat.h>

#include <set>
#include <vector>

namespace {

using namespace acltest;

class AclEventTest : public AclTest {};
class AclNotifyTest : public AclTest {};
class AclSeedCompatTest : public AclTest {};

aclrtEventRecordedStatus QueryEvent(aclrtEvent event)
{
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(event, &status));
    return status;
}

// CANN's header marks aclrtQueryEvent deprecated; its tests call it on purpose.
aclError DeprecatedQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return aclrtQueryEvent(event, status);
#pragma GCC diagnostic pop
}

// ---- event creation ----

TEST_F(AclEventTest, CreateEventGivesAHandle)
{
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    EXPECT_NE(nullptr, event);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

TEST_F(AclEventTest, CreateWithANullOutPointerIsInvalidParam)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateEvent(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateEventWithFlag(nullptr, ACL_EVENT_SYNC));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateEventExWithFlag(nullptr, ACL_EVENT_SYNC));
}

// Each create call takes the flags CANN's runtime takes there, and its
// events can be recorded on a stream (DEVICE_USE_ONLY ones by the device
// only).
TEST_F(AclEventTest, EachCreateCallTakesTheFlagsCannsRuntimeTakes)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    const struct {
        uint32_t flag;
        bool with_flag, ex;
    } cases[] = {
        {ACL_EVENT_SYNC, true, true},
        {ACL_EVENT_CAPTURE_STREAM_PROGRESS, true, true},
        {ACL_EVENT_TIME_LINE, true, true},
        {ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE, true, true},
        {ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE, true, true},
        {ACL_EVENT_DEVICE_USE_ONLY, true, false},
        {ACL_EVENT_EXTERNAL, true, false},
        {ACL_EVENT_IPC, false, true},
        {0, false, false},
        {ACL_EVENT_SYNC | ACL_EVENT_DEVICE_USE_ONLY, false, false},
        {ACL_EVENT_TIME_LINE | ACL_EVENT_EXTERNAL, false, false},
    };
    for (const auto &c : cases) {
        for (bool ex : {false, true}) {
            SCOPED_TRACE(std::string(ex ? "ExWithFlag " : "WithFlag ") + std::to_string(c.flag));
            aclrtEvent event = nullptr;
            aclError rc = ex ? aclrtCreateEventExWithFlag(&event, c.flag) : aclrtCreateEventWithFlag(&event, c.flag);
            if (!(ex ? c.ex : c.with_flag)) {
                EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, rc);
                continue;
            }
            ASSERT_EQ(ACL_SUCCESS, rc);
            EXPECT_EQ(c.flag == ACL_EVENT_DEVICE_USE_ONLY ? ACL_ERROR_RT_PARAM_INVALID : ACL_SUCCESS,
                      aclrtRecordEvent(event, stream));
            EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
        }
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// What the host may not do with an event, by its flags, as CANN's runtime.
TEST_F(AclEventTest, HostUsesAnEventsFlagsRuleOutHaveCannsCodes)
{
    aclrtStream stream = nullptr;
    aclrtEvent device_only = nullptr, marker = nullptr, external = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&device_only, ACL_EVENT_DEVICE_USE_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&marker, ACL_EVENT_TIME_LINE));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL));
    // DEVICE_USE_ONLY: recorded, waited on and reset by the device only.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRecordEvent(device_only, stream));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamWaitEvent(stream, device_only));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtResetEvent(device_only, stream));
    // A marker has no wait to reset or to queue; it is recorded and timed.
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtStreamWaitEvent(stream, marker));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtResetEvent(marker, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(marker, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(marker));
    // EXTERNAL: recorded and waited on, never synchronized, queried or timed.
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(external, stream));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtSynchronizeEvent(external));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtSynchronizeEventWithTimeout(external, 1000));
    aclrtEventRecordedStatus status;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtQueryEventStatus(external, &status));
    float ms = 0;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, marker, external));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(device_only));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(marker));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(external));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// CANN's runtime, not its API layer, judges event flags: RT_PARAM_INVALID.
TEST_F(AclEventTest, UnknownFlagBitsAreRtParamInvalid)
{
    for (uint32_t flag : {0x4u, 0x80u, 0x100u, 0x80000000u, ACL_EVENT_SYNC | 0x4u, ACL_EVENT_TIME_LINE | 0x200u}) {
        aclrtEvent event = nullptr;
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCreateEventWithFlag(&event, flag)) << flag;
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCreateEventExWithFlag(&event, flag)) << flag;
    }
}

TEST_F(AclEventTest, IpcFlagWithAnyOtherFlagIsRtParamInvalid)
{
    for (uint32_t other : {ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_TIME_LINE,
                           ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL}) {
        aclrtEvent event = nullptr;
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC | other)) << other;
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCreateEventWithFlag(&event, ACL_EVENT_IPC | other)) << other;
    }
}

// ---- record, query, synchronize ----

// As CANN's runtime: a never-recorded event of aclrtCreateEvent or
// aclrtCreateEventWithFlag is not ready, one of aclrtCreateEventExWithFlag
// ("new mode") complete; each synchronizes at once.
TEST_F(AclEventTest, NeverRecordedEventIsNotReadyOrForExEventsCompleteAndSynchronizesAtOnce)
{
    aclrtEvent plain = nullptr, with_flag = nullptr, ex = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&plain));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&with_flag, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_NOT_READY, QueryEvent(plain));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_NOT_READY, QueryEvent(with_flag));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(ex));
    for (aclrtEvent event : {plain, with_flag, ex})
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(event));
    // As CANN's runtime: a timeout of 0 is refused, not a poll.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeEventWithTimeout(plain, 0));
    for (aclrtEvent event : {plain, with_flag, ex})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

// "New mode" events cannot be reset (CANN's runtime: 207000), recorded or not.
TEST_F(AclEventTest, AnExEventCannotBeReset)
{
    aclrtStream stream = nullptr;
    aclrtEvent ex = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtResetEvent(ex, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(ex, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtResetEvent(ex, stream));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(ex));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ex));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, RecordCompletesWhenTheStreamReachesIt)
{
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_NOT_READY, QueryEvent(event));

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEvent(event));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, SynchronizeWithTimeoutExpiresWhileTheRecordIsHeld)
{
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));

    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, aclrtSynchronizeEventWithTimeout(event, 50));
    EXPECT_GE(MsSince(start), 45.0);

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(event, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, SynchronizeWithTimeoutAcceptsMinusOneAndRejectsBelow)
{
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(event, -1)); // complete: returns at once
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeEventWithTimeout(event, -2));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// ---- ordering between streams ----

TEST_F(AclEventTest, EventOrdersWorkOfTwoStreams)
{
    constexpr size_t kSize = 1 * kMiB;
    aclrtStream a = nullptr, b = nullptr;
    aclrtEvent event = nullptr;
    void *buf = nullptr, *buf2 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&buf, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&buf2, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));

    Gate gate;
    // Stream A: gate, fill, record.
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(a));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(buf, kSize, 0xAB, kSize, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, a));
    // Stream B: wait for A's record, then copy what A filled.
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(b, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(buf2, kSize, buf, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, b));

    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(b, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_NOT_READY, status); // B waits on A, which waits on the gate
    EXPECT_TRUE(BytesAre(buf2, kSize, 0));

    ASSERT_EQ(ACL_SUCCESS, gate.Release()); // a record from a third stream
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(buf2, kSize, 0xAB));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(buf));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(buf2));
}

TEST_F(AclEventTest, StreamWaitEventWaitsForTheRecordMadeBeforeTheCall)
{
    aclrtStream a = nullptr, b = nullptr, c = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&c));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(a));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, a)); // held
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(b, event));
    // A newer record that completes at once does not release B: B waits for
    // the record that was the latest when it was told to wait.
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, c));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(c, kSyncTimeoutMs));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(b, 100));

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(c));
}

// As CANN's runtime: waiting on a never-recorded event of aclrtCreateEvent
// is refused; on one of aclrtCreateEventExWithFlag it waits for nothing.
TEST_F(AclEventTest, StreamWaitOnANeverRecordedEventIsRefusedOrForExEventsDoesNotWait)
{
    aclrtStream stream = nullptr;
    aclrtEvent plain = nullptr, ex = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&plain));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamWaitEvent(stream, plain));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamWaitEventWithTimeout(stream, plain, 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(stream, ex));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x42, 4096, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x42));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(plain));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ex));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclEventTest, StreamWaitEventWithTimeoutExpiryFailsTheStreamWhichThenWorksAgain)
{
    aclrtStream a = nullptr, b = nullptr;
    aclrtEvent event = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(a));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, a)); // cannot complete while held

    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEventWithTimeout(b, event, 1)); // seconds, as CANN
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));

    // That synchronize recovered B: it takes and runs work again.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x77, 4096, b));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x77));

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclEventTest, DestroyedEventStillReleasesTheWorkWaitingForIt)
{
    aclrtStream a = nullptr, b = nullptr;
    aclrtEvent event = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(a));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(b, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x5E, 4096, b));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x5E));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// ---- wait status ----

aclrtEventWaitStatus WaitStatus(aclrtEvent event)
{
    aclrtEventWaitStatus status = ACL_EVENT_WAIT_STATUS_RESERVED;
    EXPECT_EQ(ACL_SUCCESS, aclrtQueryEventWaitStatus(event, &status));
    return status;
}

// The status is of the stream waits, not of the record: a wait queued
// behind other work is not over until its stream gets past it, even for an
// event complete long before.
TEST_F(AclEventTest, WaitStatusIsCompleteOnlyOnceEveryQueuedWaitIsOver)
{
    aclrtStream recorder = nullptr, waiter = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_COMPLETE, WaitStatus(event)); // no wait at all

    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(recorder));
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(waiter));
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
        EXPECT_EQ(ACL_EVENT_WAIT_STATUS_NOT_READY, WaitStatus(event));
        EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(event));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(waiter));
    }
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_COMPLETE, WaitStatus(event));

    // A wait for a record still to run: over once the record is.
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(recorder));
        ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
        EXPECT_EQ(ACL_EVENT_WAIT_STATUS_NOT_READY, WaitStatus(event));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(waiter));
    }
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_COMPLETE, WaitStatus(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
}

// A wait for the next record of an event whose flag is clear, and waits
// cancelled with their stream: over when the record comes, or at once.
TEST_F(AclEventTest, WaitStatusFollowsWaitsForTheNextRecordAndCancelledOnes)
{
    aclrtStream recorder = nullptr, waiter = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event)); // never recorded yet
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_NOT_READY, WaitStatus(event));
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_NOT_READY, WaitStatus(event));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(waiter));
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_COMPLETE, WaitStatus(event));

    ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_NOT_READY, WaitStatus(event));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(waiter));
    EXPECT_TRUE(WaitUntil([&] { return WaitStatus(event) == ACL_EVENT_WAIT_STATUS_COMPLETE; }));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
}

TEST_F(AclEventTest, WaitStatusRefusesWhatCANNRefusesWithItsCodes)
{
    aclrtEvent event = nullptr, ex = nullptr, external = nullptr, gone = nullptr;
    aclrtEventWaitStatus status = ACL_EVENT_WAIT_STATUS_RESERVED;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtQueryEventWaitStatus(nullptr, &status));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtQueryEventWaitStatus(event, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&gone));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyEvent(gone));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtQueryEventWaitStatus(gone, &status));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtQueryEventWaitStatus(ex, &status));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtQueryEventWaitStatus(external, &status));
    EXPECT_EQ(ACL_EVENT_WAIT_STATUS_RESERVED, status);
    for (aclrtEvent e : {event, ex, external})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e));
}

// ---- reset ----

// As CANN's hardware events: a reset clears the flag that stream waits
// obey, so a wait made after it holds its stream until the next record;
// the host's queries still see the latest record.
TEST_F(AclEventTest, AWaitAfterAResetHoldsItsStreamUntilTheNextRecord)
{
    aclrtStream stream = nullptr, other = nullptr;
    aclrtEvent event = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, 4096, 0, 4096));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(event));

    EXPECT_EQ(ACL_SUCCESS, aclrtResetEvent(event, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(event, kSyncTimeoutMs));

    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(other, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x3C, 4096, other));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(other, 200));
    EXPECT_TRUE(BytesAre(d, 4096, 0));

    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(other, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x3C));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(other));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// As CANN's, a reset is a task of its stream: a wait asked for before the
// stream gets to the reset still sees the flag set; one asked for after
// holds its stream until the next record. What the flag is after a reset
// and a record is what the later of the two to be reached made it.
TEST_F(AclEventTest, AResetTakesEffectWhenItsStreamGetsThere)
{
    aclrtStream recorder = nullptr, resetter = nullptr, waiter = nullptr;
    aclrtEvent event = nullptr;
    for (aclrtStream *s : {&recorder, &resetter, &waiter})
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(s));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs));
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, resetter)); // not reached yet
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(resetter, kSyncTimeoutMs));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event)); // after the reset: held
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 200));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));

    // A record asked for after the reset, on the same held stream: reached
    // after it, so the flag is set.
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, resetter));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(resetter, kSyncTimeoutMs));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));

    // A record asked for after the reset on another stream, complete before
    // the reset is reached: the reset comes last, the flag is clear.
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(resetter, kSyncTimeoutMs));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 200));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));

    // A wait asked for behind a reset on the same held stream finds the
    // flag clear there: it holds until the next record.
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, 4096, 0, 4096));
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(resetter, event));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x5A, 4096, resetter));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(resetter, 200));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(resetter, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x5A));

    // A record asked for before the reset and still to come when the reset
    // is reached (its stream held): it comes last, the flag is set.
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(recorder));
        ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
        ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, resetter)); // idle: reached at once
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));

    // An event destroyed before its reset is reached: the reset does nothing.
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(resetter));
        ASSERT_EQ(ACL_SUCCESS, aclrtResetEvent(event, resetter));
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(resetter, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
    for (aclrtStream s : {recorder, resetter, waiter})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

// As CANN's runtime, a SYNC event of aclrtCreateEventWithFlag can be
// waited on before its first record: the wait holds every stream that
// made it until a record is reached on its own stream.
TEST_F(AclEventTest, WaitsOnANeverRecordedSyncEventHoldTheirStreamsUntilARecordIsReached)
{
    aclrtStream recorder = nullptr, first = nullptr, second = nullptr;
    aclrtEvent event = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&first));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&second));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 8192, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, 8192, 0, 8192));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(first, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEventWithTimeout(second, event, 30)); // seconds
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x11, 4096, first));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(static_cast<char *>(d) + 4096, 4096, 0x22, 4096, second));

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder)); // queued behind the gate
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(first, 200));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(second, 50));
    EXPECT_TRUE(BytesAre(d, 8192, 0));

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(first, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(second, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x11));
    EXPECT_TRUE(BytesAre(static_cast<char *>(d) + 4096, 4096, 0x22));
    // The flag stays set: a later wait passes.
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(first, event));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(first, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    for (aclrtStream s : {recorder, first, second})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclEventTest, AWaitForARecordThatNeverComesTimesOutAndFailsItsStream)
{
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEventWithTimeout(stream, event, 1)); // seconds
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
    // Reported once; the stream works again.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// A failed task does not stop its stream (CANN's default failure mode):
// the record behind it runs and releases the streams waiting for it.
TEST_F(AclEventTest, ARecordBehindAFailedTaskReleasesTheStreamsWaitingForIt)
{
    aclrtStream recorder = nullptr, waiter = nullptr;
    aclrtEvent event = nullptr;
    aclrtNotify never = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&never, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, 4096, 0, 4096));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x5A, 4096, waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(never, recorder, 1)); // fails after 1 s
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(recorder, 20000));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x5A));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(never));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclEventTest, ForceDestroyingTheRecordingStreamReleasesTheStreamsWaitingForItsRecord)
{
    aclrtStream recorder = nullptr, waiter = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, event));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, recorder));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 100));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
}

// A destroyed event will never be recorded: its waiting streams go on.
TEST_F(AclEventTest, DestroyingAnEventReleasesTheStreamsWaitingForItsRecord)
{
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(stream, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x6B, 4096, stream));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 100));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x6B));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// The deprecated query, as CANN's runtime answers it: never recorded reads
// as complete; new-mode, IPC and EXTERNAL events are refused.
TEST_F(AclEventTest, DeprecatedQueryEventAnswersAsCannsRuntime)
{
    aclrtStream stream = nullptr;
    aclrtEvent plain = nullptr, sync = nullptr, ex = nullptr, ipc = nullptr, external = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&plain));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&sync, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ipc, ACL_EVENT_IPC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL));
    aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
    EXPECT_EQ(ACL_SUCCESS, DeprecatedQueryEvent(plain, &status));
    EXPECT_EQ(ACL_EVENT_STATUS_COMPLETE, status);
    status = ACL_EVENT_STATUS_RESERVED;
    EXPECT_EQ(ACL_SUCCESS, DeprecatedQueryEvent(sync, &status));
    EXPECT_EQ(ACL_EVENT_STATUS_COMPLETE, status);
    for (aclrtEvent refused : {ex, ipc, external}) {
        status = ACL_EVENT_STATUS_RESERVED;
        EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, DeprecatedQueryEvent(refused, &status));
        EXPECT_EQ(ACL_EVENT_STATUS_RESERVED, status);
    }
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, DeprecatedQueryEvent(plain, nullptr));

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(plain, stream));
    EXPECT_EQ(ACL_SUCCESS, DeprecatedQueryEvent(plain, &status));
    EXPECT_EQ(ACL_EVENT_STATUS_NOT_READY, status);
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, DeprecatedQueryEvent(plain, &status));
    EXPECT_EQ(ACL_EVENT_STATUS_COMPLETE, status);

    for (aclrtEvent event : {plain, sync, ex, ipc, external})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// ---- elapsed time ----

void Sleep50Ms(void *)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

TEST_F(AclEventTest, ElapsedTimeMeasuresTheTimeBetweenTwoRecords)
{
    aclrtStream stream = nullptr;
    aclrtEvent start = nullptr, end = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&start));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&end));
    ReportThread reporter(stream);
    ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());

    // A blocking callback of 50 ms between the records.
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(start, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(Sleep50Ms, nullptr, ACL_CALLBACK_BLOCK, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(end, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    float ms = -1.0f;
    EXPECT_EQ(ACL_SUCCESS, aclrtEventElapsedTime(&ms, start, end));
    EXPECT_GE(ms, 40.0f);
    EXPECT_LT(ms, 60000.0f);

    EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    EXPECT_EQ(0, reporter.unexpected()) << "last: " << reporter.last_unexpected();
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, TimeLineFlagEnablesTiming)
{
    aclrtStream stream = nullptr;
    aclrtEvent start = nullptr, end = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&start, ACL_EVENT_TIME_LINE));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&end, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(start, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(end, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    float ms = -1.0f;
    EXPECT_EQ(ACL_SUCCESS, aclrtEventElapsedTime(&ms, start, end));
    EXPECT_GE(ms, 0.0f);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, ElapsedTimeFromANeverRecordedStartIsEventNotComplete)
{
    aclrtStream stream = nullptr;
    aclrtEvent start = nullptr, end = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&start));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&end));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(end, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    float ms = -1.0f;
    EXPECT_EQ(ACL_ERROR_RT_EVENT_NOT_COMPLETE, aclrtEventElapsedTime(&ms, start, end));
    EXPECT_EQ(ACL_ERROR_RT_EVENT_NOT_COMPLETE, aclrtEventElapsedTime(&ms, end, start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, ElapsedTimeToARecordNotYetCompleteIsEventNotComplete)
{
    aclrtStream stream = nullptr;
    aclrtEvent start = nullptr, end = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&start));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&end));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(start, stream));
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(end, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(start, kSyncTimeoutMs));
    float ms = -1.0f;
    EXPECT_EQ(ACL_ERROR_RT_EVENT_NOT_COMPLETE, aclrtEventElapsedTime(&ms, start, end));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtEventElapsedTime(&ms, start, end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, ElapsedTimeOfEventsWithoutTimingIsFeatureNotSupport)
{
    aclrtStream stream = nullptr;
    aclrtEvent start = nullptr, end = nullptr, timed = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&start, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&end, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&timed));
    // Both recorded and complete: only the missing timing is wrong.
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(start, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(timed, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(end, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    float ms = -1.0f;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, start, end));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, timed, end));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, start, timed));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(timed));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, ElapsedTimeWithANullResultIsInvalidParam)
{
    aclrtEvent start = nullptr, end = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&start));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&end));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtEventElapsedTime(nullptr, start, end));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(start));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(end));
}

// ---- IPC events ----

TEST_F(AclEventTest, IpcEventRecordsButRefusesResetAndElapsedTime)
{
    aclrtStream stream = nullptr, other = nullptr;
    aclrtEvent ipc = nullptr, timed = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ipc, ACL_EVENT_IPC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&timed));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(timed, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(ipc, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(ipc, kSyncTimeoutMs));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(ipc));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(other, ipc));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(other, kSyncTimeoutMs));

    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtResetEvent(ipc, stream));
    float ms = -1.0f;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, ipc, ipc));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, timed, ipc));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, ipc, timed));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(ipc)); // the refused reset did nothing

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ipc));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(timed));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(other));
}

// ---- event handle errors ----

// Every call that takes an event, with `event`; each must give `expected`.
void ExpectEveryEventCallGives(aclError expected, aclrtEvent event)
{
    aclrtStream stream = nullptr;
    aclrtEvent good = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&good));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(good, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    aclrtEventRecordedStatus status;
    float ms;

    EXPECT_EQ(expected, aclrtRecordEvent(event, stream));
    EXPECT_EQ(expected, aclrtResetEvent(event, stream));
    EXPECT_EQ(expected, aclrtStreamWaitEvent(stream, event));
    EXPECT_EQ(expected, aclrtStreamWaitEventWithTimeout(stream, event, 1)); // seconds
    EXPECT_EQ(expected, aclrtSynchronizeEvent(event));
    EXPECT_EQ(expected, aclrtSynchronizeEventWithTimeout(event, kSyncTimeoutMs));
    EXPECT_EQ(expected, aclrtQueryEventStatus(event, &status));
    aclrtEventStatus old_status;
    EXPECT_EQ(expected, DeprecatedQueryEvent(event, &old_status));
    EXPECT_EQ(expected, aclrtEventElapsedTime(&ms, event, good));
    EXPECT_EQ(expected, aclrtEventElapsedTime(&ms, good, event));
    EXPECT_EQ(expected, aclrtDestroyEvent(event));
    // The stream was not harmed.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(good));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, NullEventIsInvalidParam)
{
    ExpectEveryEventCallGives(ACL_ERROR_INVALID_PARAM, nullptr);
}

TEST_F(AclEventTest, DestroyedEventIsInvalidHandle)
{
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    ExpectEveryEventCallGives(ACL_ERROR_RT_INVALID_HANDLE, event);
}

TEST_F(AclEventTest, GarbageEventIsInvalidHandle)
{
    int local = 0;
    ExpectEveryEventCallGives(ACL_ERROR_RT_INVALID_HANDLE, &local);
    ExpectEveryEventCallGives(ACL_ERROR_RT_INVALID_HANDLE, reinterpret_cast<aclrtEvent>(0x1234));
    EXPECT_EQ(0, local);
}

TEST_F(AclEventTest, StreamOrNotifyPassedAsEventIsInvalidHandle)
{
    aclrtStream stream = nullptr;
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ExpectEveryEventCallGives(ACL_ERROR_RT_INVALID_HANDLE, stream);
    ExpectEveryEventCallGives(ACL_ERROR_RT_INVALID_HANDLE, notify);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclEventTest, QueryWithANullStatusIsInvalidParam)
{
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtQueryEventStatus(event, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

// ---- notifies ----

TEST_F(AclNotifyTest, CreateAcceptsTheTwoFlags)
{
    for (uint64_t flag : {uint64_t(ACL_NOTIFY_DEFAULT), uint64_t(ACL_NOTIFY_DEVICE_USE_ONLY)}) {
        aclrtNotify notify = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, flag)) << flag;
        EXPECT_NE(nullptr, notify);
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    }
}

TEST_F(AclNotifyTest, CreateRejectsOtherFlagsAndANullOutPointer)
{
    aclrtNotify notify = nullptr;
    for (uint64_t flag : {uint64_t(0x2), uint64_t(0x3), uint64_t(0x100), uint64_t(1) << 63})
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCreateNotify(&notify, flag)) << flag;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateNotify(nullptr, ACL_NOTIFY_DEFAULT));
}

TEST_F(AclNotifyTest, RecordReleasesAWaitOnAnotherStream)
{
    aclrtStream waiter = nullptr, recorder = nullptr;
    aclrtNotify notify = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));

    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, waiter, kGateTimeoutS));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x3A, 4096, waiter));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 50));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordNotify(notify, recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x3A));

    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclNotifyTest, OneRecordSatisfiesOneWait)
{
    aclrtStream waiter = nullptr, recorder = nullptr;
    aclrtNotify notify = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));

    // Read before the second wait is queued, whose second starts after it.
    auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, waiter, kGateTimeoutS));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x11, 4096, waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, waiter, 1)); // 1 s, then the task fails
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordNotify(notify, recorder));        // one record only

    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 20000));
    EXPECT_GE(MsSince(start), 500.0); // the second wait ran out its second
    EXPECT_TRUE(BytesAre(d, 4096, 0x11)); // the first wait was satisfied

    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclNotifyTest, WaitTimeoutFailsTheStreamWhichThenWorksAgain)
{
    aclrtStream stream = nullptr;
    aclrtNotify notify = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));

    auto start = std::chrono::steady_clock::now(); // before the wait's second starts
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, stream, 1)); // never recorded
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
    EXPECT_GE(MsSince(start), 500.0);

    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x29, 4096, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x29));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// A notify is waited on by its own device's streams only.
TEST_F(AclNotifyTest, WaitOnAnotherDevicesStreamIsStreamContext)
{
    ACL_NEED_DEVICES(2);
    aclrtNotify notify = nullptr;
    aclrtStream other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(1));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CONTEXT, aclrtWaitAndResetNotify(notify, other, 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(other, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(other));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclNotifyTest, NotifyIdsAreDistinct)
{
    std::vector<aclrtNotify> notifies(8);
    std::set<uint32_t> ids;
    for (aclrtNotify &n : notifies) {
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT));
        uint32_t id = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtGetNotifyId(n, &id));
        ids.insert(id);
        uint32_t again = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtGetNotifyId(n, &again));
        EXPECT_EQ(id, again); // stable
    }
    EXPECT_EQ(notifies.size(), ids.size());
    for (aclrtNotify n : notifies)
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(n));
}

TEST_F(AclNotifyTest, GetNotifyIdWithANullResultIsInvalidParam)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetNotifyId(notify, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclNotifyTest, BatchResetDropsARecordMadeBeforeIt)
{
    aclrtStream waiter = nullptr, recorder = nullptr;
    aclrtNotify notify = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&other, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordNotify(notify, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs)); // it is set

    aclrtNotify batch[] = {notify, other};
    EXPECT_EQ(ACL_SUCCESS, aclrtNotifyBatchReset(batch, 2));
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, waiter, 1));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 20000));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(other));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
}

TEST_F(AclNotifyTest, BatchResetWithAnInvalidHandleIsInvalidHandleAndResetsNothing)
{
    aclrtStream waiter = nullptr, recorder = nullptr;
    aclrtNotify notify = nullptr, destroyed = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&destroyed, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyNotify(destroyed));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordNotify(notify, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs));

    aclrtNotify with_garbage[] = {notify, reinterpret_cast<aclrtNotify>(0x1234)};
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtNotifyBatchReset(with_garbage, 2));
    aclrtNotify with_destroyed[] = {notify, destroyed};
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtNotifyBatchReset(with_destroyed, 2));

    // The record still stands: a wait is satisfied by it.
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, waiter, kGateTimeoutS));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
}

TEST_F(AclNotifyTest, BatchResetRejectsANullArrayAndZeroCount)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtNotifyBatchReset(nullptr, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifyBatchReset(&notify, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

// Every call that takes a notify, with `notify`; each must give `expected`.
void ExpectEveryNotifyCallGives(aclError expected, aclrtNotify notify)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    uint32_t id = 0;
    EXPECT_EQ(expected, aclrtRecordNotify(notify, stream));
    EXPECT_EQ(expected, aclrtWaitAndResetNotify(notify, stream, 1));
    EXPECT_EQ(expected, aclrtGetNotifyId(notify, &id));
    EXPECT_EQ(expected, aclrtDestroyNotify(notify));
    // Nothing was queued: the stream is idle and fine.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclNotifyTest, NullNotifyIsInvalidParam)
{
    ExpectEveryNotifyCallGives(ACL_ERROR_INVALID_PARAM, nullptr);
}

TEST_F(AclNotifyTest, DestroyedNotifyIsInvalidHandle)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    ExpectEveryNotifyCallGives(ACL_ERROR_RT_INVALID_HANDLE, notify);
}

TEST_F(AclNotifyTest, GarbageOrWrongKindNotifyIsInvalidHandle)
{
    int local = 0;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ExpectEveryNotifyCallGives(ACL_ERROR_RT_INVALID_HANDLE, &local);
    ExpectEveryNotifyCallGives(ACL_ERROR_RT_INVALID_HANDLE, reinterpret_cast<aclrtNotify>(0x1234));
    ExpectEveryNotifyCallGives(ACL_ERROR_RT_INVALID_HANDLE, event);
    EXPECT_EQ(0, local);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

// ---- the seed document's spellings (acl/acl_seed_compat.h) ----

TEST_F(AclSeedCompatTest, NotifySpellingsCreateRecordWaitAndDestroy)
{
    aclrtStream waiter = nullptr, recorder = nullptr;
    aclrtNotify notify = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyCreate(&notify));
    // Record first and let it complete: aclrtNotifyWait waits without limit,
    // so it must find the record already there.
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyRecord(notify, recorder));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(recorder, kSyncTimeoutMs));
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyWait(notify, waiter));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x5D, 4096, waiter));
    // ASSERT: a stream left waiting forever must go to the fixture's force
    // reset, not to aclrtDestroyStream.
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(waiter, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x5D));
    EXPECT_EQ(ACL_SUCCESS, aclrtNotifyDestroy(notify));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtNotifyDestroy(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(waiter));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(recorder));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclSeedCompatTest, EventRecordAndSynchonizeStreamSpellings)
{
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x6E, 4096, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtEventRecord(event, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchonizeStream(stream)); // sic: the seed's typo
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, QueryEvent(event));
    EXPECT_TRUE(BytesAre(d, 4096, 0x6E));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclSeedCompatTest, TwoArgumentMallocUsesTheDefaultPolicy)
{
    const size_t before = DeviceFreeMem();
    void *small = nullptr, *big = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&small, 5000));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&big, 3 * kMiB));
    void *base = nullptr;
    size_t size = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(small, &base, &size));
    EXPECT_EQ(8 * kKiB, size); // HUGE_FIRST: normal pages up to 1 MiB
    EXPECT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(big, &base, &size));
    EXPECT_EQ(4 * kMiB, size); // and huge pages above
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(small));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(big));
    EXPECT_EQ(before, DeviceFreeMem());
}

} // namespace

// As CANN: a timeout of 0 is none (the wait lasts until the record
// completes), and a negative one is refused with RT_PARAM_INVALID.
TEST_F(AclEventTest, StreamWaitEventWithZeroTimeoutWaitsForTheRecordAndNegativeIsRefused)
{
    aclrtStream a = nullptr, b = nullptr;
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(a));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, a));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamWaitEventWithTimeout(b, event, -1));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEventWithTimeout(b, event, 0));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(b, 100)); // still waiting
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
}

// ---- events with flags, and timestamps ----

TEST_F(AclEventTest, RecordAndWaitWithTheDefaultFlagAreThePlainCalls)
{
    aclrtEvent ev = nullptr;
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&ev));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(a));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEventWithFlag(ev, a, ACL_EVENT_RECORD_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEventWithFlag(b, ev, 0, ACL_EVENT_WAIT_DEFAULT));
    // b waits for a's record, which waits for the gate.
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamQuery(b, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_NOT_READY, status);
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b, kSyncTimeoutMs));
    aclrtEventRecordedStatus recorded = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    ASSERT_EQ(ACL_SUCCESS, aclrtQueryEventStatus(ev, &recorded));
    EXPECT_EQ(ACL_EVENT_RECORDED_STATUS_COMPLETE, recorded);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtRecordEventWithFlag(ev, a, 2));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtRecordEventWithFlag(nullptr, a, ACL_EVENT_RECORD_DEFAULT));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamWaitEventWithFlag(b, ev, 0, 2));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamWaitEventWithFlag(b, nullptr, 0, ACL_EVENT_WAIT_DEFAULT));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ev));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
}

// EXTERNAL records and waits belong to model capture, which npuipc does
// not have: CANN's codes outside a capture, and the flag an event was
// first used with stays its flag.
TEST_F(AclEventTest, ExternalRecordsAndWaitsNeedAModelCaptureAndLatchTheEventsFlag)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    aclrtEvent plain = nullptr, sync = nullptr, waited = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&plain));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&sync, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&waited, ACL_EVENT_SYNC));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtRecordEventWithFlag(plain, s, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NOT_CAPTURED, aclrtRecordEventWithFlag(sync, s, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRecordEvent(sync, s)) << "first recorded EXTERNAL";
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamWaitEventWithFlag(s, waited, 1, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NOT_CAPTURED, aclrtStreamWaitEventWithFlag(s, waited, 0, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtStreamWaitEvent(s, waited)) << "first waited on EXTERNAL";
    // And the other way round: plain first, EXTERNAL refused for the flag.
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(plain, s));
    aclrtEvent later = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&later, ACL_EVENT_SYNC));
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(later, s));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRecordEventWithFlag(later, s, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    for (aclrtEvent e : {plain, sync, waited, later})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

// A timestamp is when the event's latest record completed, in
// microseconds of the driver's clock (CLOCK_MONOTONIC).
TEST_F(AclEventTest, TimestampsAreMicrosecondsOfTheDriversClockAtTheRecordsCompletion)
{
    aclrtEvent ev = nullptr, untimed = nullptr, ipc = nullptr;
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&ev));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&untimed, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ipc, ACL_EVENT_IPC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    uint64_t ts = 0;
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtEventGetTimestamp(ev, &ts)) << "never recorded";
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(s));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(ev, s));
    EXPECT_EQ(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, aclrtEventGetTimestamp(ev, &ts)) << "record pending";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ASSERT_EQ(ACL_SUCCESS, aclrtEventGetTimestamp(ev, &ts));
    const uint64_t before = uint64_t(t0.tv_sec) * 1000000 + uint64_t(t0.tv_nsec) / 1000;
    const uint64_t after = uint64_t(t1.tv_sec) * 1000000 + uint64_t(t1.tv_nsec) / 1000;
    EXPECT_LE(before, ts);
    EXPECT_GE(after, ts);
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(untimed, s));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    EXPECT_EQ(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, aclrtEventGetTimestamp(untimed, &ts)) << "no TIME_LINE";
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventGetTimestamp(ipc, &ts));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtEventGetTimestamp(ev, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtEventGetTimestamp(nullptr, &ts));
    for (aclrtEvent e : {ev, untimed, ipc})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}
