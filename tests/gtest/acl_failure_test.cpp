// SPDX-License-Identifier: MIT
// After a task fails (aclrt_failure(3)): CANN's two failure modes, stream
// abort, the device's error state and exception callbacks, with CANN's
// codes. A task fails here as on a mock NPU it can: a wait that times out.
#include "acl_test_util.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace acltest;

// aclrtSetExceptionInfoCallback is deprecated in CANN's header, and tested.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

class AclFailureTest : public AclTest {};

constexpr size_t kSize = 4096;

// Device memory of kSize bytes set to `byte`, freed at the end of the test.
class DeviceBuffer {
public:
    explicit DeviceBuffer(uint8_t byte)
    {
        EXPECT_EQ(ACL_SUCCESS, aclrtMalloc(&p_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        EXPECT_EQ(ACL_SUCCESS, aclrtMemset(p_, kSize, byte, kSize));
    }
    ~DeviceBuffer() { aclrtFree(p_); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    void *get() const { return p_; }

private:
    void *p_ = nullptr;
};

// A gate's wait that fails after 1 s, then a memset behind it.
void QueueFailureThenMemset(Gate &gate, aclrtStream stream, const DeviceBuffer &buf, uint8_t byte)
{
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(buf.get(), kSize, byte, kSize, stream));
}

// Exception callbacks counted, unregistered at the end of the scope.
std::atomic<int> exceptions{0};
void CountException(aclrtExceptionInfo *) { exceptions++; }
class CountedExceptions {
public:
    CountedExceptions()
    {
        exceptions = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtExceptionInfoCallbackRegister(CountException));
    }
    ~CountedExceptions() { aclrtExceptionInfoCallbackUnregister(CountException); }
    CountedExceptions(const CountedExceptions &) = delete;
    CountedExceptions &operator=(const CountedExceptions &) = delete;
};

// Whether thread `tid` of this process is blocked in ioctl(2), waiting
// for the driver, within 10 s.
bool BlocksInIoctl(pid_t tid)
{
    return WaitUntil([tid] {
        std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/syscall");
        long nr = -1;
        return (f >> nr) && nr == SYS_ioctl;
    });
}

// Work queued on `stream` runs: a memset of `buf` to `byte`.
void ExpectNewWorkRuns(aclrtStream stream, const DeviceBuffer &buf, uint8_t byte)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(buf.get(), kSize, byte, kSize, stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(buf.get(), kSize, byte));
}

// ---- failure modes ----

TEST_F(AclFailureTest, ByDefaultTheTasksBehindAFailureRunAndSynchronizeReportsItOnce)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    DeviceBuffer buf(0x11);
    Gate gate;
    QueueFailureThenMemset(gate, stream, buf, 0x22);
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
    EXPECT_TRUE(BytesAre(buf.get(), kSize, 0x22));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    ExpectNewWorkRuns(stream, buf, 0x33);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// STOP set on one stream stops its whole context at the first failure: the
// failed stream's later tasks and the other streams' queued ones never
// run, and every launch and synchronize keeps returning the failure.
TEST_F(AclFailureTest, StopOnFailureStopsTheWholeContextAndKeepsTheFailure)
{
    CountedExceptions counted;
    aclrtStream failing = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&failing));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(failing, ACL_STOP_ON_FAILURE));
    DeviceBuffer mine(0x11), theirs(0x11);
    Gate held;
    ASSERT_EQ(ACL_SUCCESS, held.Hold(other, kGateTimeoutS));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(theirs.get(), kSize, 0x44, kSize, other));
    Gate gate;
    QueueFailureThenMemset(gate, failing, mine, 0x22);

    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(failing, 20000));
    EXPECT_TRUE(BytesAre(mine.get(), kSize, 0x11));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(failing, kSyncTimeoutMs));
    // The other stream was aborted: its gate's wait and memset never run.
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(other, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(theirs.get(), kSize, 0x11));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeDevice());
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtMemsetAsync(mine.get(), kSize, 0x55, kSize, other));
    // A stream made afterwards belongs to the stopped context too.
    aclrtStream later = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&later));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtMemsetAsync(mine.get(), kSize, 0x55, kSize, later));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(later));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(other));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(failing));
    // One task failed; the aborts that stopped the context are no failures.
    EXPECT_EQ(1, exceptions.load());
}

// A stream made after STOP halts at its first failure too.
TEST_F(AclFailureTest, StreamsMadeAfterStopOnFailureStopAsWell)
{
    aclrtStream first = nullptr, later = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&first));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(first, ACL_STOP_ON_FAILURE));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&later));
    DeviceBuffer buf(0x11);
    Gate gate;
    QueueFailureThenMemset(gate, later, buf, 0x22);
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(later, 20000));
    EXPECT_TRUE(BytesAre(buf.get(), kSize, 0x11));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(later));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtDestroyStream(first));
}

TEST_F(AclFailureTest, SetStreamFailureModeHasCannsCodes)
{
    aclrtStream stream = nullptr, device_only = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&device_only, 0, ACL_STREAM_DEVICE_USE_ONLY));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSetStreamFailureMode(reinterpret_cast<aclrtStream>(0x1234), 1));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtSetStreamFailureMode(device_only, ACL_STOP_ON_FAILURE));
    // Only bit 0 counts: 2 is CONTINUE, already the mode.
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream, 2));
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(nullptr, ACL_CONTINUE_ON_FAILURE)); // default stream
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream, 3));
    EXPECT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
    // STOP is the context's now, and cannot be undone, from any of its streams.
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtSetStreamFailureMode(stream, ACL_CONTINUE_ON_FAILURE));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtSetStreamFailureMode(nullptr, ACL_CONTINUE_ON_FAILURE));
    // NULL is the current context's default stream: none in a bare thread.
    aclError no_context = ACL_SUCCESS;
    std::thread([&] { no_context = aclrtSetStreamFailureMode(nullptr, ACL_STOP_ON_FAILURE); }).join();
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, no_context);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(device_only));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// ---- abort ----

// Aborting `stream` while another thread synchronizes it: that
// synchronize returns ACL_ERROR_RT_STREAM_ABORT, and no task failed.
void AbortWhileSynchronizing(aclrtStream stream)
{
    std::atomic<aclError> synchronized{ACL_SUCCESS};
    std::atomic<pid_t> tid{0};
    std::thread waiter([&] {
        tid = gettid();
        synchronized = aclrtSynchronizeStreamWithTimeout(stream, 20000);
    });
    while (!tid)
        std::this_thread::yield();
    EXPECT_TRUE(BlocksInIoctl(tid));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamAbort(stream));
    waiter.join();
    EXPECT_EQ(ACL_ERROR_RT_STREAM_ABORT, synchronized.load());
}

TEST_F(AclFailureTest, StreamAbortDiscardsQueuedTasksAndTheStreamWorksAgain)
{
    CountedExceptions counted;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    DeviceBuffer buf(0x11);
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, kGateTimeoutS));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(buf.get(), kSize, 0x22, kSize, stream));
    AbortWhileSynchronizing(stream);
    EXPECT_EQ(0, exceptions.load());
    EXPECT_TRUE(BytesAre(buf.get(), kSize, 0x11));
    // Nothing left to report, and new work runs.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    ExpectNewWorkRuns(stream, buf, 0x33);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// An abort is no task failure: it does not stop a context in
// ACL_STOP_ON_FAILURE, whose other streams go on.
TEST_F(AclFailureTest, StreamAbortDoesNotStopAStoppingContext)
{
    CountedExceptions counted;
    aclrtStream stream = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
    DeviceBuffer buf(0x11);
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, kGateTimeoutS));
    // The other stream waits for a record the abort cancels: it fails as
    // aborted work, not as a failed task.
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(other, event));
    AbortWhileSynchronizing(stream);
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_ABORT, aclrtSynchronizeStreamWithTimeout(other, kSyncTimeoutMs));
    ExpectNewWorkRuns(other, buf, 0x44);
    EXPECT_EQ(0, exceptions.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(other));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclFailureTest, StreamAbortOfTheDefaultStreamAndOfAnIdleStreamSucceeds)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamAbort(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamAbort(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclFailureTest, StreamAbortHasCannsCodes)
{
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtStreamAbort(reinterpret_cast<aclrtStream>(0x1234)));
    aclError no_context = ACL_SUCCESS;
    std::thread([&] { no_context = aclrtStreamAbort(nullptr); }).join();
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, no_context);
}

// ---- device errors ----

TEST_F(AclFailureTest, GetErrorVerboseReportsNoDeviceErrorWithCannsCodes)
{
    aclrtErrorInfo info;
    std::memset(&info, 0xA5, sizeof(info));
    EXPECT_EQ(ACL_SUCCESS, aclrtGetErrorVerbose(0, &info));
    EXPECT_EQ(ACL_RT_NO_ERROR, info.errorType);
    EXPECT_EQ(0, info.tryRepair);
    EXPECT_EQ(0, info.hasDetail);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetErrorVerbose(0, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtGetErrorVerbose(-1, &info));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID,
              aclrtGetErrorVerbose(static_cast<int32_t>(device_count_), &info));
}

TEST_F(AclFailureTest, RepairErrorAcceptsOnlyTheNoErrorAMockNpuReportsWithCannsCodes)
{
    aclrtErrorInfo info;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetErrorVerbose(0, &info));
    info.tryRepair = 1;
    EXPECT_EQ(ACL_SUCCESS, aclrtRepairError(0, &info));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtRepairError(0, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtRepairError(-1, &info));
    info.errorType = ACL_RT_ERROR_MEMORY;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRepairError(0, &info));
    info.errorType = ACL_RT_NO_ERROR;
    info.tryRepair = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRepairError(0, &info));
}

// ---- exception callbacks ----

struct Seen {
    int calls = 0;
    uint32_t task = 0, stream = 0, thread = 0, device = 0, code = 0;
};
Seen first_seen, second_seen;

void RecordFirst(aclrtExceptionInfo *info)
{
    first_seen.calls++;
    first_seen.task = aclrtGetTaskIdFromExceptionInfo(info);
    first_seen.stream = aclrtGetStreamIdFromExceptionInfo(info);
    first_seen.thread = aclrtGetThreadIdFromExceptionInfo(info);
    first_seen.device = aclrtGetDeviceIdFromExceptionInfo(info);
    first_seen.code = aclrtGetErrorCodeFromExceptionInfo(info);
}

void RecordSecond(aclrtExceptionInfo *info)
{
    second_seen.calls++;
    second_seen.code = aclrtGetErrorCodeFromExceptionInfo(info);
}

// Queues a failing wait on `stream` and synchronizes it.
void FailOnce(aclrtStream stream)
{
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream, 1));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 20000));
}

TEST_F(AclFailureTest, ExceptionCallbacksSeeEachFailedTaskOnceWithItsStreamThreadDeviceAndCode)
{
    first_seen = Seen();
    second_seen = Seen();
    // Unregistered whatever fails below, so that no later test calls them.
    struct Unregister {
        ~Unregister()
        {
            aclrtExceptionInfoCallbackUnregister(RecordFirst);
            aclrtSetExceptionInfoCallback(nullptr);
        }
    } unregister;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtExceptionInfoCallbackRegister(RecordFirst));
    ASSERT_EQ(ACL_SUCCESS, aclrtExceptionInfoCallbackRegister(RecordFirst)); // one entry
    ASSERT_EQ(ACL_SUCCESS, aclrtSetExceptionInfoCallback(RecordSecond));
    // A task queued before the failing one: the failed job is not the first.
    DeviceBuffer buf(0x11);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(buf.get(), kSize, 0x22, kSize, stream));
    FailOnce(stream);
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs)); // reported once
    EXPECT_EQ(1, first_seen.calls);
    EXPECT_EQ(1, second_seen.calls);
    int32_t id = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamGetId(stream, &id));
    EXPECT_EQ(static_cast<uint32_t>(id), first_seen.stream);
    EXPECT_EQ(static_cast<uint32_t>(gettid()), first_seen.thread);
    EXPECT_EQ(0u, first_seen.device);
    EXPECT_EQ(static_cast<uint32_t>(ACL_ERROR_RT_TASK_TIMEOUT), first_seen.code);
    EXPECT_EQ(static_cast<uint32_t>(ACL_ERROR_RT_TASK_TIMEOUT), second_seen.code);
    EXPECT_LT(1u, first_seen.task);
    EXPECT_NE(0xFFFFFFFFu, first_seen.task);

    // Unregistered and cleared: nobody is called for the next failure.
    EXPECT_EQ(ACL_SUCCESS, aclrtExceptionInfoCallbackUnregister(RecordFirst));
    EXPECT_EQ(ACL_SUCCESS, aclrtSetExceptionInfoCallback(nullptr));
    FailOnce(stream);
    EXPECT_EQ(1, first_seen.calls);
    EXPECT_EQ(1, second_seen.calls);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclFailureTest, ExceptionCallbackFunctionsHaveCannsCodes)
{
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtExceptionInfoCallbackRegister(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtExceptionInfoCallbackUnregister(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtExceptionInfoCallbackUnregister(RecordSecond)); // never registered
    EXPECT_EQ(ACL_SUCCESS, aclrtSetExceptionInfoCallback(nullptr));
    EXPECT_EQ(0xFFFFFFFFu, aclrtGetTaskIdFromExceptionInfo(nullptr));
    EXPECT_EQ(0xFFFFFFFFu, aclrtGetStreamIdFromExceptionInfo(nullptr));
    EXPECT_EQ(0xFFFFFFFFu, aclrtGetThreadIdFromExceptionInfo(nullptr));
    EXPECT_EQ(0xFFFFFFFFu, aclrtGetDeviceIdFromExceptionInfo(nullptr));
    EXPECT_EQ(0xFFFFFFFFu, aclrtGetErrorCodeFromExceptionInfo(nullptr));
}

} // namespace
