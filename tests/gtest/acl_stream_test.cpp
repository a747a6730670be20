// SPDX-License-Identifier: MIT
// aclrt streams: lifetime, handle checks, synchronize (with and without a
// timeout), query, destroy versus force destroy, and host callbacks run by a
// subscribed thread through aclrtProcessReport. Runs in the VM against
// npuipc.ko with default parameters.
//
// A stream is held at a chosen point with a Gate (a notify wait the test
// releases), which makes "not done yet" states deterministic. Callback tests
// ASSERT their synchronizes: after a failed one, a later aclrtDestroyStream
// could wait for a callback nobody runs, so they bail out and leave the
// stream to the fixture's force reset, which never waits.
#include "acl_test_util.h"

#include <glob.h>

#include "drm/npuipc_drm.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace {

using namespace acltest;

class AclStreamTest : public AclTest {};

// Every call that takes a stream, with `stream`; each must give `expected`.
void ExpectEveryStreamCallGives(aclError expected, aclrtStream stream)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> h(4096);
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    aclrtStreamStatus status;

    EXPECT_EQ(expected, aclrtSynchronizeStream(stream));
    EXPECT_EQ(expected, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(expected, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(expected, aclrtMemsetAsync(d, 4096, 1, 4096, stream));
    EXPECT_EQ(expected, aclrtMemcpyAsync(d, 4096, h.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_EQ(expected, aclrtRecordEvent(event, stream));
    EXPECT_EQ(expected, aclrtStreamWaitEvent(stream, event));
    EXPECT_EQ(expected, aclrtStreamWaitEventWithTimeout(stream, event, 1)); // seconds
    EXPECT_EQ(expected, aclrtRecordNotify(notify, stream));
    EXPECT_EQ(expected, aclrtWaitAndResetNotify(notify, stream, kGateTimeoutS));
    EXPECT_EQ(expected, aclrtSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(expected, aclrtLaunchCallback([](void *) {}, nullptr, ACL_CALLBACK_NO_BLOCK, stream));
    EXPECT_EQ(expected, aclrtDestroyStream(stream));
    EXPECT_EQ(expected, aclrtDestroyStreamForce(stream));
    EXPECT_TRUE(BytesAre(d, 4096, 0));

    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// ---- lifetime and handles ----

TEST_F(AclStreamTest, CreateAndDestroy)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_NE(nullptr, stream);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, ForceDestroyOfAnIdleStream)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(stream));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyStreamForce(stream));
}

TEST_F(AclStreamTest, CreateWithNullIsInvalidParam)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateStream(nullptr));
}

TEST_F(AclStreamTest, DestroyOfTheNullStreamIsInvalidParam)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyStream(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyStreamForce(nullptr));
}

TEST_F(AclStreamTest, DestroyedStreamIsInvalidHandle)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    ExpectEveryStreamCallGives(ACL_ERROR_RT_INVALID_HANDLE, stream);
}

// The thread looked this stream up last (a per-thread cache in the library).
TEST_F(AclStreamTest, AStreamThisThreadJustUsedIsInvalidHandleOnceDestroyed)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    ExpectEveryStreamCallGives(ACL_ERROR_RT_INVALID_HANDLE, stream);
}

TEST_F(AclStreamTest, AStreamThisThreadUsedIsInvalidHandleOnceAnotherThreadDestroysIt)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream));
    aclError destroyed = ACL_ERROR_INTERNAL_ERROR;
    std::thread([&] { destroyed = aclrtDestroyStream(stream); }).join();
    ASSERT_EQ(ACL_SUCCESS, destroyed);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSynchronizeStream(stream));
    aclrtStreamStatus status;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));
}

TEST_F(AclStreamTest, PointerToALocalAsStreamIsInvalidHandle)
{
    int local = 0;
    ExpectEveryStreamCallGives(ACL_ERROR_RT_INVALID_HANDLE, &local);
    EXPECT_EQ(0, local); // never written through
}

TEST_F(AclStreamTest, MadeUpStreamValueIsInvalidHandle)
{
    ExpectEveryStreamCallGives(ACL_ERROR_RT_INVALID_HANDLE, reinterpret_cast<aclrtStream>(0x1234));
}

TEST_F(AclStreamTest, EventPassedAsStreamIsInvalidHandle)
{
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    ExpectEveryStreamCallGives(ACL_ERROR_RT_INVALID_HANDLE, event);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event)); // the event itself is untouched
}

TEST_F(AclStreamTest, NotifyPassedAsStreamIsInvalidHandle)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ExpectEveryStreamCallGives(ACL_ERROR_RT_INVALID_HANDLE, notify);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclStreamTest, NullStreamIsTheDefaultStream)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 8192, ACL_MEM_MALLOC_NORMAL_ONLY));
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 8192, 0x61, 8192, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(nullptr, event));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(nullptr, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr));
    aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(nullptr, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_COMPLETE, status);
    EXPECT_TRUE(BytesAre(d, 8192, 0x61));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// ---- synchronize and query ----

TEST_F(AclStreamTest, SynchronizeWaitsForAllQueuedWork)
{
    constexpr size_t kSize = 8 * kMiB;
    aclrtStream stream = nullptr;
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a, kSize, 0x12, kSize, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b, kSize, a, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a, kSize, 0x34, kSize, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream));
    EXPECT_TRUE(BytesAre(a, kSize, 0x34));
    EXPECT_TRUE(BytesAre(b, kSize, 0x12));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b));
}

TEST_F(AclStreamTest, SynchronizeWithTimeoutExpiresOnAHeldStreamAndSucceedsOnceReleased)
{
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream)); // no record yet
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x71, 4096, stream));

    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 50));
    EXPECT_GE(MsSince(start), 45.0);
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 0)); // a poll
    EXPECT_TRUE(BytesAre(d, 4096, 0));

    // The record comes from another stream; the held work then runs.
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x71));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclStreamTest, SynchronizeWithTimeoutAcceptsMinusOneAndRejectsBelow)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, -1)); // idle: returns at once
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStreamWithTimeout(stream, -2));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, QueryIsNotReadyWhileWorkIsQueued)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_COMPLETE, status); // new and empty

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_NOT_READY, status);

    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_COMPLETE, status);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, QueryWithNullStatusIsInvalidParam)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtStreamQuery(stream, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// ---- destroy with queued work ----

TEST_F(AclStreamTest, DestroyWaitsForQueuedWork)
{
    aclrtStream stream = nullptr;
    void *d = nullptr;
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0xCD, 4096, stream));

    // Another thread opens the gate 100 ms after this one is about to call
    // aclrtDestroyStream: destroy returns only after that.
    std::atomic<bool> destroying{false}, released{false};
    std::thread releaser([&gate, &destroying, &released, ctx] {
        EXPECT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx));
        while (!destroying.load())
            std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        released.store(true);
        EXPECT_EQ(ACL_SUCCESS, gate.Release());
    });
    destroying.store(true);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    const bool returned_after_release = released.load();
    EXPECT_TRUE(BytesAre(d, 4096, 0xCD)); // the queued work ran before destroy returned
    releaser.join();
    EXPECT_TRUE(returned_after_release) << "aclrtDestroyStream returned before its queued work could run";
    aclrtStreamStatus status;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclStreamTest, DestroyReturnsTheErrorOfAFailedTaskAndDestroysAnyway)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, 1)); // never released: times out after 1 s
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(stream));
    aclrtStreamStatus status;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));
}

// Jobs alive in the driver, module-wide (debugfs, root's); -1 if unknown.
long LiveJobs()
{
    glob_t states;
    long jobs = -1;
    if (glob("/sys/kernel/debug/dri/*/npuipc_state", 0, nullptr, &states) != 0)
        return -1;
    std::ifstream in(states.gl_pathv[0]);
    globfree(&states);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("jobs: ", 0) == 0)
            jobs = std::stol(line.substr(6));
    return jobs;
}

TEST_F(AclStreamTest, ForceDestroyDiscardsQueuedWorkWithoutWaiting)
{
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream)); // held for up to 30 s
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0xCD, 4096, stream));

    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(stream));
    EXPECT_LT(MsSince(start), 3000.0); // did not wait for the gate
    aclrtStreamStatus status;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamQuery(stream, &status));

    // The kernel cancelled the gate's wait and the memset behind it: both
    // jobs are freed while the gate is still closed (a job queued behind
    // it would live until it ran), so opening the gate now runs nothing.
    EXPECT_TRUE(WaitUntil([] { return LiveJobs() == 0; }))
        << LiveJobs() << " jobs alive after the force destroy";
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(BytesAre(d, 4096, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// ---- callbacks ----

struct Flag {
    std::atomic<bool> done{false};
    std::atomic<uint64_t> thread{0};
};

void SetFlag(void *data)
{
    Flag *flag = static_cast<Flag *>(data);
    flag->thread.store(ThisThreadId());
    flag->done.store(true);
}

TEST_F(AclStreamTest, CallbackRunsInsideProcessReportOnTheSubscribedThread)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), stream));
    Flag flag;
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(SetFlag, &flag, ACL_CALLBACK_NO_BLOCK, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtProcessReport(kSyncTimeoutMs));
    EXPECT_TRUE(flag.done.load());
    EXPECT_EQ(ThisThreadId(), flag.thread.load());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, CallbacksWorkOnTheDefaultStream)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), nullptr));
    Flag flag;
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(SetFlag, &flag, ACL_CALLBACK_BLOCK, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtProcessReport(kSyncTimeoutMs));
    EXPECT_TRUE(flag.done.load());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(nullptr, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), nullptr));
}

struct Buffer {
    void *p = nullptr;
    size_t size = 0;
    std::atomic<bool> saw_earlier_work{false};
    std::atomic<bool> done{false};
};

TEST_F(AclStreamTest, CallbackRunsAfterTheWorkQueuedBeforeIt)
{
    aclrtStream stream = nullptr;
    Buffer buf;
    buf.size = 4 * kMiB;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&buf.p, buf.size, ACL_MEM_MALLOC_HUGE_ONLY));
    ReportThread reporter(stream);
    ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(buf.p, buf.size, 0x99, buf.size, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(
                               [](void *data) {
                                   Buffer *b = static_cast<Buffer *>(data);
                                   b->saw_earlier_work.store(BytesAre(b->p, b->size, 0x99));
                                   b->done.store(true);
                               },
                               &buf, ACL_CALLBACK_NO_BLOCK, stream));
    // Held: the callback must not run yet.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(buf.done.load());
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_TRUE(WaitUntil([&] { return buf.done.load(); }));
    EXPECT_TRUE(buf.saw_earlier_work.load());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    EXPECT_EQ(0, reporter.unexpected()) << "last: " << reporter.last_unexpected();
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(buf.p));
}

struct Order {
    std::mutex mutex;
    std::vector<int> seen;
};

struct OrderedCallback {
    Order *order;
    int index;
};

TEST_F(AclStreamTest, CallbacksRunInLaunchOrder)
{
    constexpr int kCount = 20;
    aclrtStream stream = nullptr;
    void *d = nullptr;
    Order order;
    std::vector<OrderedCallback> calls(kCount);
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 64 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    ReportThread reporter(stream);
    ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());

    for (int i = 0; i < kCount; i++) {
        calls[i] = {&order, i};
        // Mixed kinds with device work between them.
        const aclrtCallbackBlockType kind = (i % 3 == 0) ? ACL_CALLBACK_BLOCK : ACL_CALLBACK_NO_BLOCK;
        ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(
                                   [](void *data) {
                                       OrderedCallback *c = static_cast<OrderedCallback *>(data);
                                       std::lock_guard<std::mutex> lock(c->order->mutex);
                                       c->order->seen.push_back(c->index);
                                   },
                                   &calls[i], kind, stream));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 64 * kKiB, i, 64 * kKiB, stream));
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    ASSERT_TRUE(WaitUntil([&] {
        std::lock_guard<std::mutex> lock(order.mutex);
        return order.seen.size() == kCount;
    }));
    std::vector<int> expected;
    for (int i = 0; i < kCount; i++)
        expected.push_back(i);
    {
        std::lock_guard<std::mutex> lock(order.mutex);
        EXPECT_EQ(expected, order.seen);
    }

    EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    EXPECT_EQ(0, reporter.unexpected()) << "last: " << reporter.last_unexpected();
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

struct SlowWriter {
    void *p = nullptr;
    size_t size = 0;
    std::atomic<bool> release{false}; // for the NO_BLOCK test
    std::atomic<bool> done{false};
};

TEST_F(AclStreamTest, BlockCallbackHoldsLaterWorkUntilItReturns)
{
    constexpr size_t kSize = 64 * kKiB;
    aclrtStream stream = nullptr;
    void *copy = nullptr;
    SlowWriter writer;
    writer.size = kSize;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&writer.p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&copy, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ReportThread reporter(stream);
    ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());

    // The callback writes the device buffer from the host after 100 ms; the
    // copy and the memset queued after it must see that write happen first.
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(
                               [](void *data) {
                                   SlowWriter *w = static_cast<SlowWriter *>(data);
                                   std::this_thread::sleep_for(std::chrono::milliseconds(100));
                                   memset(w->p, 0x11, w->size);
                                   w->done.store(true);
                               },
                               &writer, ACL_CALLBACK_BLOCK, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(copy, kSize, writer.p, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(writer.p, kSize, 0x22, kSize, stream));
    // Synchronize waits for the callback too.
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(writer.done.load());
    EXPECT_TRUE(BytesAre(copy, kSize, 0x11));
    EXPECT_TRUE(BytesAre(writer.p, kSize, 0x22));

    EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    EXPECT_EQ(0, reporter.unexpected()) << "last: " << reporter.last_unexpected();
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(writer.p));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(copy));
}

TEST_F(AclStreamTest, NoBlockCallbackDoesNotHoldLaterWork)
{
    constexpr size_t kSize = 64 * kKiB;
    aclrtStream stream = nullptr;
    aclrtEvent after = nullptr;
    void *copy = nullptr;
    SlowWriter writer;
    writer.size = kSize;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&after));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&writer.p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&copy, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ReportThread reporter(stream);
    ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());

    // The callback does not return until the test lets it (bounded, so a
    // failing test ends); the work queued after it must complete meanwhile.
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(
                               [](void *data) {
                                   SlowWriter *w = static_cast<SlowWriter *>(data);
                                   WaitUntil([w] { return w->release.load(); });
                                   memset(w->p, 0x22, w->size);
                                   w->done.store(true);
                               },
                               &writer, ACL_CALLBACK_NO_BLOCK, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(copy, kSize, writer.p, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(after, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeEventWithTimeout(after, kSyncTimeoutMs / 2));
    EXPECT_FALSE(writer.done.load());
    EXPECT_TRUE(BytesAre(copy, kSize, 0)); // copied before the callback wrote

    writer.release.store(true);
    ASSERT_TRUE(WaitUntil([&] { return writer.done.load(); }));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    EXPECT_EQ(0, reporter.unexpected()) << "last: " << reporter.last_unexpected();
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(after));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(writer.p));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(copy));
}

TEST_F(AclStreamTest, LaunchOnAStreamNobodySubscribedIsStreamNoCbReg)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    Flag flag;
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NO_CB_REG, aclrtLaunchCallback(SetFlag, &flag, ACL_CALLBACK_NO_BLOCK, stream));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NO_CB_REG, aclrtLaunchCallback(SetFlag, &flag, ACL_CALLBACK_BLOCK, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_FALSE(flag.done.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, LaunchRejectsANullFunctionAndUnknownBlockTypes)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), stream));
    Flag flag;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtLaunchCallback(nullptr, &flag, ACL_CALLBACK_NO_BLOCK, stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtLaunchCallback(SetFlag, &flag, RawEnum<aclrtCallbackBlockType>(2), stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtLaunchCallback(SetFlag, &flag, RawEnum<aclrtCallbackBlockType>(-1), stream));
    // Nothing was queued.
    EXPECT_EQ(ACL_ERROR_RT_REPORT_TIMEOUT, aclrtProcessReport(10));
    EXPECT_FALSE(flag.done.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, ProcessReportOfAThreadSubscribedToNothingIsThreadSubscribe)
{
    EXPECT_EQ(ACL_ERROR_RT_THREAD_SUBSCRIBE, aclrtProcessReport(10));
    EXPECT_EQ(ACL_ERROR_RT_THREAD_SUBSCRIBE, aclrtProcessReport(-1));
}

TEST_F(AclStreamTest, ProcessReportWithNothingDueTimesOut)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), stream));
    auto start = std::chrono::steady_clock::now();
    // CANN's code (WAIT_CALLBACK_TIMEOUT, 100036, is deprecated there).
    EXPECT_EQ(ACL_ERROR_RT_REPORT_TIMEOUT, aclrtProcessReport(50));
    EXPECT_GE(MsSince(start), 45.0);
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// The timeout is checked first, as CANN does: whether the thread is
// subscribed does not matter.
TEST_F(AclStreamTest, ProcessReportRejectsTimeoutsOfZeroAndBelowMinusOne)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtProcessReport(0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtProcessReport(-2));
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtProcessReport(0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtProcessReport(INT32_MIN));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtProcessReport(-2));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, SubscribeIsOneThreadPerStream)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ReportThread reporter(stream);
    ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());
    // Another thread cannot take the stream...
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtSubscribeReport(ThisThreadId(), stream));
    // ...while the same pair again is fine.
    EXPECT_EQ(ACL_SUCCESS, aclrtSubscribeReport(reporter.id(), stream));
    EXPECT_EQ(ACL_SUCCESS, reporter.Stop()); // one unsubscribe ends it
    EXPECT_EQ(0, reporter.unexpected()) << "last: " << reporter.last_unexpected();
    // Free again: this thread may take it now.
    EXPECT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, UnsubscribeOfAPairNotSubscribedIsStreamSubscribe)
{
    aclrtStream stream = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtUnSubscribeReport(ThisThreadId(), stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtUnSubscribeReport(ThisThreadId(), other));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtUnSubscribeReport(ThisThreadId() + 1, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtUnSubscribeReport(ThisThreadId(), stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(other));
}

} // namespace

// Unsubscribing drops the stream's pending callbacks without running them;
// a BLOCK one must not hold the stream for ever.
TEST_F(AclStreamTest, UnsubscribeWithAPendingBlockCallbackLetsTheStreamFinish)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    Gate gate;
    std::atomic<int> runs{0};
    {
        ReportThread reporter(stream);
        ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
        ASSERT_EQ(ACL_SUCCESS,
                  aclrtLaunchCallback([](void *p) { static_cast<std::atomic<int> *>(p)->fetch_add(1); },
                                      &runs, ACL_CALLBACK_BLOCK, stream));
        EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    }
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(0, runs.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// A launch racing an unsubscribe either lands before it (and is dropped
// with the others) or is refused: never a BLOCK callback left to nobody,
// holding the stream for ever.
TEST_F(AclStreamTest, BlockCallbackLaunchedWhileTheThreadUnsubscribesNeverHoldsTheStream)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    const uint64_t nobody = ThisThreadId(); // subscribed, never processes
    int launched = 0, refused = 0;
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(nobody, stream));
        std::atomic<bool> go{false};
        aclError launch = ACL_SUCCESS;
        std::thread launcher([&] {
            while (!go.load())
                ;
            launch = aclrtLaunchCallback([](void *) {}, nullptr, ACL_CALLBACK_BLOCK, stream);
        });
        go = true;
        EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(nobody, stream));
        launcher.join();
        if (launch == ACL_SUCCESS)
            launched++;
        else if (launch == ACL_ERROR_RT_STREAM_NO_CB_REG)
            refused++;
        else
            ADD_FAILURE() << "launch " << i << " returned " << launch;
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, 5000)) << "iteration " << i;
    }
    EXPECT_EQ(100, launched + refused);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// A thread blocked in aclrtProcessReport(-1) wakes when its last stream goes.
TEST_F(AclStreamTest, ProcessReportForeverReturnsWhenItsStreamIsDestroyed)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    std::promise<uint64_t> id;
    std::promise<void> subscribed;
    std::atomic<aclError> result{ACL_SUCCESS};
    std::thread waiter([&] {
        id.set_value(ThisThreadId());
        subscribed.get_future().wait();
        result = aclrtProcessReport(-1);
    });
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(id.get_future().get(), stream));
    subscribed.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    waiter.join();
    EXPECT_EQ(ACL_ERROR_RT_THREAD_SUBSCRIBE, result.load());
}

// In CANN's default failure mode a callback behind a failed task (a notify
// wait that timed out) runs, as every task behind it does.
TEST_F(AclStreamTest, CallbackBehindAFailedTaskRunsByDefault)
{
    aclrtStream stream = nullptr;
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    {
        ReportThread reporter(stream);
        ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());
        std::atomic<int> ran{0};
        auto count = [](void *data) { static_cast<std::atomic<int> *>(data)->fetch_add(1); };
        ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, stream, 1)); // never recorded
        ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(count, &ran, ACL_CALLBACK_BLOCK, stream));
        EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
        EXPECT_EQ(1, ran.load()); // BLOCK: the stream waited for it
        EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// With ACL_STOP_ON_FAILURE the failure cancels the callback's point: it is
// never run, and its BLOCK gate does not hold the stream.
TEST_F(AclStreamTest, CallbackBehindAFailedTaskOfAStoppingStreamIsNotRun)
{
    aclrtStream stream = nullptr;
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    {
        ReportThread reporter(stream);
        ASSERT_EQ(ACL_SUCCESS, reporter.subscribe_result());
        std::atomic<int> ran{0};
        auto count = [](void *data) { static_cast<std::atomic<int> *>(data)->fetch_add(1); };
        ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, stream, 1));
        ASSERT_EQ(ACL_SUCCESS, aclrtLaunchCallback(count, &ran, ACL_CALLBACK_BLOCK, stream));
        EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
        // The reporter wakes at once for the cancelled point; a callback
        // run by mistake would have run by now.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        EXPECT_EQ(0, ran.load());
        EXPECT_EQ(ACL_SUCCESS, reporter.Stop());
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(stream)); // the context keeps it
}

// ---- driver limits, with CANN's codes ----

namespace {

// Creates objects with `create` until it fails; returns how many it made
// and the failing call's code in `rc`; `destroy` undoes them.
template <typename H>
size_t FillUntilRefused(const std::function<aclError(H *)> &create,
                        const std::function<aclError(H)> &destroy, aclError &rc)
{
    std::vector<H> made;
    for (;;) {
        H h{};
        rc = create(&h);
        if (rc != ACL_SUCCESS)
            break;
        made.push_back(h);
        if (made.size() > NPUIPC_MAX_OBJECTS)
            break; // no limit: the caller's count says so
    }
    for (H h : made)
        EXPECT_EQ(ACL_SUCCESS, destroy(h));
    return made.size();
}

} // namespace

// A DRM file holds NPUIPC_MAX_OBJECTS streams, events and notifies at
// most: beyond, each create returns CANN's resource code of its kind.
TEST_F(AclStreamTest, DriverObjectLimitGivesEachKindsNoResourceCode)
{
    aclError rc = ACL_SUCCESS;
    size_t n = FillUntilRefused<aclrtStream>(aclrtCreateStream, aclrtDestroyStream, rc);
    EXPECT_EQ(ACL_ERROR_RT_NO_STREAM_RESOURCE, rc);
    EXPECT_EQ(size_t(NPUIPC_MAX_OBJECTS), n);
    n = FillUntilRefused<aclrtEvent>(aclrtCreateEvent, aclrtDestroyEvent, rc);
    EXPECT_EQ(ACL_ERROR_RT_NO_EVENT_RESOURCE, rc);
    EXPECT_EQ(size_t(NPUIPC_MAX_OBJECTS), n);
    n = FillUntilRefused<aclrtNotify>([](aclrtNotify *h) { return aclrtCreateNotify(h, ACL_NOTIFY_DEFAULT); },
                                      aclrtDestroyNotify, rc);
    EXPECT_EQ(ACL_ERROR_RT_NO_NOTIFY_RESOURCE, rc);
    EXPECT_EQ(size_t(NPUIPC_MAX_OBJECTS), n);
}

// A stream holds NPUIPC_MAX_QUEUED_JOBS tasks not yet done: one more is
// ACL_ERROR_RT_STREAM_TASK_FULL, and once they run it takes tasks again.
TEST_F(AclStreamTest, QueueBeyondTheDriverLimitIsStreamTaskFull)
{
    aclrtStream stream = nullptr;
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    {
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream)); // one task
        size_t queued = 0;
        aclError rc = ACL_SUCCESS;
        while (queued < NPUIPC_MAX_QUEUED_JOBS &&
               (rc = aclrtMemsetAsync(d, 4096, 0x3c, 4096, stream)) == ACL_SUCCESS)
            queued++;
        EXPECT_EQ(ACL_ERROR_RT_STREAM_TASK_FULL, rc);
        EXPECT_EQ(size_t(NPUIPC_MAX_QUEUED_JOBS - 1), queued);
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, 60000));
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x5d, 4096, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(d, 4096, 0x5d));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}
