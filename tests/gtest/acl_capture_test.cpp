// SPDX-License-Identifier: MIT
// Capture and replay (aclrt_capture(3)): a capturing stream's launches are
// recorded, not run; each run of the model makes them again, in order, on
// the stream it is given. What CANN refuses on a capturing stream, in a
// capture's mode, and of a model, with CANN's codes.
#include "acl_test_util.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

using namespace acltest;

// aclmdlRIDebugPrint is deprecated in CANN, and tested here.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

constexpr size_t kSize = 4096;
constexpr int32_t kHeldMs = 100;

class AclCaptureTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s_));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&other_));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(a_, kSize, 0, kSize));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(b_, kSize, 0, kSize));
    }
    void TearDown() override
    {
        if (model_) {
            EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
        }
        if (a_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(a_));
        }
        if (b_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(b_));
        }
        for (aclrtStream s : {s_, other_})
            if (s) {
                EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s));
            }
        AclTest::TearDown();
    }
    uint8_t ByteOf(const void *dev)
    {
        uint8_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }
    void Run()
    {
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, s_));
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));
    }

    aclrtStream s_ = nullptr, other_ = nullptr;
    void *a_ = nullptr, *b_ = nullptr;
    aclmdlRI model_ = nullptr;
};

TEST_F(AclCaptureTest, ACaptureRecordsWithoutRunningAndEachRunMakesTheLaunchesAgain)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, kSize, 0x11, kSize, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b_, kSize, a_, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    aclmdlRI during = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(s_, &status, &during));
    EXPECT_EQ(ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, status);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    EXPECT_EQ(during, model_);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(s_, &status, &during));
    EXPECT_EQ(ACL_MODEL_RI_CAPTURE_STATUS_NONE, status);
    EXPECT_EQ(nullptr, during);
    // Nothing ran.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(s_));
    EXPECT_EQ(0, ByteOf(a_));
    EXPECT_EQ(0, ByteOf(b_));
    Run();
    EXPECT_EQ(0x11, ByteOf(a_));
    EXPECT_EQ(0x11, ByteOf(b_));
    // Again: the same launches, made again.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(a_, kSize, 0, kSize));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(b_, kSize, 0, kSize));
    Run();
    EXPECT_EQ(0x11, ByteOf(b_));
    // On another stream too, after the stream's own work.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(b_, kSize, 0, kSize));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, other_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(other_, kSyncTimeoutMs));
    EXPECT_EQ(0x11, ByteOf(b_));
}

TEST_F(AclCaptureTest, EachRunReadsTheHostMemoryOfACapturedCopyAnew)
{
    void *host = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, kSize));
    std::memset(host, 1, kSize);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(a_, kSize, host, kSize, ACL_MEMCPY_HOST_TO_DEVICE, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b_, kSize, a_, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    for (uint8_t input : {2, 3, 4}) {
        std::memset(host, input, kSize);
        Run();
        EXPECT_EQ(input, ByteOf(b_));
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
}

std::atomic<int> host_func_runs{0};
void CountRun(void *args)
{
    host_func_runs++;
    *static_cast<int *>(args) += 1;
}

TEST_F(AclCaptureTest, HostFunctionsValueWritesAndWaitsNotifiesAndWordSetsAreCapturedToo)
{
    int runs = 0;
    host_func_runs = 0;
    auto *word = static_cast<uint64_t *>(a_);
    aclrtNotify n = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordNotify(n, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(n, s_, 10));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(word, 5, 0, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(word, 5, ACL_STREAM_WAIT_VALUE_EQ, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(s_, CountRun, &runs));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetD32Async(b_, kSize, 0x01020304, 4, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    EXPECT_EQ(0, host_func_runs.load());
    Run();
    Run();
    EXPECT_EQ(2, runs);
    uint64_t w = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(&w, 8, word, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(5u, w);
    EXPECT_EQ(0x04, ByteOf(b_));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(n));
}

TEST_F(AclCaptureTest, ExternalEventsLinkAModelToStreamsOutsideIt)
{
    aclrtEvent ev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ev, ACL_EVENT_SYNC));
    // Outside the capture, EXTERNAL needs a capturing stream.
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NOT_CAPTURED, aclrtStreamWaitEventWithFlag(other_, ev, 0, ACL_EVENT_WAIT_EXTERNAL));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEventWithFlag(s_, ev, 0, ACL_EVENT_WAIT_EXTERNAL));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b_, kSize, a_, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    // The other stream, held on a word, sets the source and then records.
    auto *gate = static_cast<uint64_t *>(b_) + 64;
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(gate, 1, ACL_STREAM_WAIT_VALUE_EQ, other_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, 64, 0x77, 64, other_));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(ev, other_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, s_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(s_, kHeldMs));
    EXPECT_EQ(0, ByteOf(b_));
    const uint64_t one = 1;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(gate, 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));
    EXPECT_EQ(0x77, ByteOf(b_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(other_, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ev));
}

TEST_F(AclCaptureTest, ACapturingStreamRefusesWhatCannRefuses)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, kSize, 0x22, kSize, s_));
    aclmdlRI during = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(s_, nullptr, &during));
    aclrtStreamStatus st;
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtSynchronizeStream(s_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtSynchronizeStreamWithTimeout(s_, 10));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtStreamQuery(s_, &st));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtDestroyStream(s_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtDestroyStreamForce(s_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtSynchronizeDevice());
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclmdlRIExecuteAsync(during, s_));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_CAPTURED, aclmdlRIExecuteAsync(during, other_));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_CAPTURED, aclmdlRIDestroy(during));
    // GLOBAL: no synchronous copy or set in the context, unless this
    // thread switches to RELAXED.
    uint8_t byte = 0;
    EXPECT_EQ(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, aclrtMemset(b_, kSize, 1, kSize));
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureThreadExchangeMode(&mode));
    EXPECT_EQ(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, mode);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(0, byte); // the captured set has not run
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureThreadExchangeMode(&mode));
    EXPECT_EQ(ACL_MODEL_RI_CAPTURE_MODE_RELAXED, mode);
    // What npuipc cannot capture is refused, not run.
    aclrtEvent old_style = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&old_style));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtRecordEvent(old_style, s_));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(old_style));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    EXPECT_EQ(during, model_);
    // Ended: all of it works again, and the model runs.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeDevice());
    Run();
    EXPECT_EQ(0x22, ByteOf(a_));
}

TEST_F(AclCaptureTest, ThreadLocalCapturesHoldBackOnlyTheirOwnThread)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    uint8_t byte = 0;
    EXPECT_EQ(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    aclError theirs = ACL_ERROR_INTERNAL_ERROR, end = ACL_ERROR_INTERNAL_ERROR;
    aclmdlRI ended = &ended;
    std::thread t([&] {
        aclrtSetCurrentContext(ctx);
        theirs = aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST);
        // Only the thread that began it ends it; another's End drops it.
        end = aclmdlRICaptureEnd(s_, &ended);
    });
    t.join();
    EXPECT_EQ(ACL_SUCCESS, theirs);
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, end);
    EXPECT_EQ(static_cast<void *>(&ended), ended);
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(s_, &status, nullptr));
    EXPECT_EQ(ACL_MODEL_RI_CAPTURE_STATUS_NONE, status);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
}

TEST_F(AclCaptureTest, AThreadInThreadLocalModeMindsOnlyItsOwnCaptures)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    aclError in_global = ACL_SUCCESS, in_thread_local = ACL_ERROR_INTERNAL_ERROR;
    std::thread t([&] {
        aclrtSetCurrentContext(ctx);
        uint8_t byte = 0;
        in_global = aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST);
        aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
        aclmdlRICaptureThreadExchangeMode(&mode);
        in_thread_local = aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST);
        aclmdlRICaptureThreadExchangeMode(&mode);
    });
    t.join();
    EXPECT_EQ(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, in_global);
    EXPECT_EQ(ACL_SUCCESS, in_thread_local);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
}

TEST_F(AclCaptureTest, ACaptureEndsWithItsStreamsContextAndItsModelGoes)
{
    aclrtContext mine = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&other, 0));
    aclrtStream theirs = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&theirs));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(theirs, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    aclmdlRI during = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(theirs, nullptr, &during));
    uint8_t byte = 0;
    EXPECT_EQ(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(other));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&byte, 1, a_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIDestroy(during));
}

TEST_F(AclCaptureTest, ALaunchIsCheckedWhenCapturedAndWhatCannotBeCapturedIsRefused)
{
    aclrtEvent ev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ev, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    char *bytes = static_cast<char *>(a_);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsync(bytes + 64, 128, bytes, 128, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtResetEvent(ev, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    Run(); // nothing was captured
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ev));
}

TEST_F(AclCaptureTest, BadArgumentsHaveCannsCodes)
{
    aclmdlRI m = nullptr;
    aclrtStream dflt = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetCurrentDefaultStream(&dflt));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICaptureBegin(nullptr, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRICaptureBegin(s_, static_cast<aclmdlRICaptureMode>(3)));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRICaptureBegin(dflt, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    int not_a_stream = 0;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRICaptureBegin(&not_a_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NOT_CAPTURED, aclmdlRICaptureEnd(s_, &m));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICaptureEnd(s_, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICaptureGetInfo(s_, nullptr, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICaptureThreadExchangeMode(nullptr));
    aclmdlRICaptureMode bad = static_cast<aclmdlRICaptureMode>(7);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRICaptureThreadExchangeMode(&bad));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIExecuteAsync(nullptr, s_));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIExecuteAsync(&not_a_stream, s_));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIExecuteAsync(s_, s_)); // a stream is no model
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIDestroy(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIDestroy(&not_a_stream));
    // A captured model runs asynchronously only, as CANN's.
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecute(model_, -1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecute(model_, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecute(model_, -2));
    // An empty model runs.
    Run();
}

TEST_F(AclCaptureTest, ARunFailsWithTheCodeOfACallThatNoLongerHolds)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(b_, kSize, 0x33, kSize, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(b_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecuteAsync(model_, s_));
    b_ = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));
}

int destroyed_with = 0;
void OnDestroy(void *data)
{
    destroyed_with += *static_cast<int *>(data);
}

TEST_F(AclCaptureTest, NamesIdsDestroyCallbacksAndTheJsonDescription)
{
    aclmdlRI first = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, kSize, 1, kSize, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b_, kSize, a_, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &first));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    uint32_t id1 = 0, id2 = 0;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetId(first, &id1));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetId(model_, &id2));
    EXPECT_NE(id1, id2);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIGetId(first, nullptr));

    char name[16] = "x";
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetName(first, sizeof(name), name));
    EXPECT_STREQ("", name);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRISetName(first, "fill \"and\" copy"));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetName(first, 15, name));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetName(first, 16, name));
    EXPECT_STREQ("fill \"and\" copy", name);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRISetName(first, nullptr));

    char path[] = "/tmp/npuipc-model-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_LE(0, fd);
    close(fd);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDebugJsonPrint(first, path, 0));
    std::ifstream in(path);
    std::stringstream json;
    json << in.rdbuf();
    unlink(path);
    EXPECT_EQ("{\"modelRI\": {\"id\": " + std::to_string(id1) +
                  ", \"name\": \"fill \\\"and\\\" copy\", \"capturing\": false, \"tasks\": ["
                  "{\"seq\": 0, \"call\": \"aclrtMemsetAsync\"}, {\"seq\": 1, \"call\": \"aclrtMemcpyAsync\"}]}}\n",
              json.str());
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIDebugJsonPrint(first, nullptr, 0));

    int one = 1, ten = 10;
    destroyed_with = 0;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroyRegisterCallback(first, OnDestroy, &one));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroyRegisterCallback(first, OnDestroy, &ten)); // once, the latest data
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroyRegisterCallback(model_, OnDestroy, &one));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroyUnregisterCallback(model_, OnDestroy));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIDestroyUnregisterCallback(model_, OnDestroy));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIDestroyRegisterCallback(first, nullptr, &one));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(first));
    EXPECT_EQ(10, destroyed_with);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIDestroy(first));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIGetId(first, &id1));
}

// A captured model is always ready: an update has nothing to do, and
// CANN's codes for what is not one; the debug print of its tasks.
TEST_F(AclCaptureTest, ACapturedModelUpdatesAsReadyAndPrintsItsTasks)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, kSize, 0x42, kSize, s_));
    aclmdlRI capturing = nullptr;
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(s_, &status, &capturing));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_UPDATE_FAILED, aclmdlRIUpdate(capturing));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDebugPrint(capturing));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIUpdate(model_));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDebugPrint(model_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(s_));
    EXPECT_EQ(0x42, ByteOf(a_));

    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIUpdate(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIDebugPrint(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIUpdate(reinterpret_cast<aclmdlRI>(0x1234)));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIDebugPrint(reinterpret_cast<aclmdlRI>(0x1234)));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRIAbort(model_)); // not a built model
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAbort(nullptr));
}

// A captured model's tasks through the one handle aclmdlRIGetStreams gives
// for them: sequence ids, a task made a value write or wait, a task taken
// out; the changes count from aclmdlRIUpdate, the model runs only then,
// and a change CANN refuses once begun leaves a model that runs no more.
TEST_F(AclCaptureTest, ACapturedModelsTasksChangeAtTheNextUpdate)
{
    auto *words = static_cast<uint64_t *>(b_);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, 16, 0x11, 16, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words, 5, 0, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(static_cast<uint8_t *>(a_) + 16, 16, 0x22, 16, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));

    aclrtStream streams[2] = {s_, s_};
    uint32_t n = 2;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetStreams(model_, streams, &n));
    ASSERT_EQ(1u, n);
    EXPECT_EQ(nullptr, streams[1]);
    aclrtStream tasks_of = streams[0];
    EXPECT_NE(s_, tasks_of);
    // No stream to run work on.
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSynchronizeStream(tasks_of));
    aclmdlRITask tasks[3] = {};
    n = 3;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetTasksByStream(tasks_of, tasks, &n));
    ASSERT_EQ(3u, n);
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t seq = 99;
        ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetSeqId(tasks[i], &seq));
        EXPECT_EQ(i, seq);
    }
    aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetType(tasks[1], &type));
    EXPECT_EQ(ACL_MODEL_RI_TASK_VALUE_WRITE, type);

    // The first set becomes a write of 7 to word 1; the value write
    // writes 9; the last set is taken out.
    aclmdlRITaskParams p;
    std::memset(&p, 0, sizeof(p));
    p.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    p.valueWriteTaskParams = {words + 1, 7};
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskSetParams(tasks[0], &p));
    p.valueWriteTaskParams = {words, 9};
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskSetParams(tasks[1], &p));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskDisable(tasks[2]));
    aclmdlRITaskParams got;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetParams(tasks[0], &got));
    EXPECT_EQ(ACL_MODEL_RI_TASK_VALUE_WRITE, got.type);
    EXPECT_EQ(words + 1, got.valueWriteTaskParams.devAddr);
    EXPECT_EQ(7u, got.valueWriteTaskParams.value);
    // Not before the update.
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIExecuteAsync(model_, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIUpdate(model_));
    Run();
    uint64_t w[2] = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(w, sizeof(w), words, sizeof(w), ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(9u, w[0]);
    EXPECT_EQ(7u, w[1]);
    EXPECT_EQ(0, ByteOf(a_));
    EXPECT_EQ(0, ByteOf(static_cast<uint8_t *>(a_) + 16));
    // The task taken out is gone, and its handle; the ids stay.
    n = 3;
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIGetTasksByStream(tasks_of, nullptr, &n));
    EXPECT_EQ(2u, n);
    uint32_t seq = 0;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskGetSeqId(tasks[2], &seq));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetSeqId(tasks[1], &seq));
    EXPECT_EQ(1u, seq);

    // A wait: the run holds until the word is 3.
    p.type = ACL_MODEL_RI_TASK_VALUE_WAIT;
    p.valueWaitTaskParams = {words + 2, 3, ACL_STREAM_WAIT_VALUE_EQ};
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskSetParams(tasks[0], &p));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIUpdate(model_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, s_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(s_, kHeldMs));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words + 2, 3, 0, other_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));

    // What CANN refuses before a change begins: the model stays as it is.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskSetParams(nullptr, &p));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskSetParams(tasks[0], nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskDisable(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskGetSeqId(nullptr, &seq));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskGetSeqId(tasks[0], nullptr));
    auto *stranger = reinterpret_cast<aclmdlRITask>(0x12345);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskSetParams(stranger, &p));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskDisable(stranger));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetTasksByStream(tasks_of, tasks, nullptr));
    Run();

    // A change CANN refuses once begun (an event task's): the model runs
    // no more, and changes and updates fail.
    p.type = ACL_MODEL_RI_TASK_EVENT_RECORD;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskSetParams(tasks[0], &p));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIExecuteAsync(model_, s_));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_UPDATE_FAILED, aclmdlRIUpdate(model_));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_UPDATE_FAILED, aclmdlRITaskDisable(tasks[0]));
    // Destroyed all the same; its task handle then names nothing.
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
    model_ = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskGetSeqId(tasks[0], &seq));
    n = 0;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIGetTasksByStream(tasks_of, nullptr, &n));
}

// A task's extension info: attached to the thread's last task while a
// capture records it, given back by the JSON print; refused once a launch
// that runs came after it.
TEST_F(AclCaptureTest, ExtendInfoGoesWithTheThreadsLastRecordedTaskIntoTheJsonPrint)
{
    const char info[] = "{\"op\":\"fill\"}";
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtCacheLastTaskExtendInfo(info, sizeof(info) - 1)); // no model
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(s_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, kSize, 1, kSize, s_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCacheLastTaskExtendInfo(nullptr, 4));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCacheLastTaskExtendInfo(info, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtCacheLastTaskExtendInfo(info, sizeof(info))); // the text, not its NUL
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(b_, kSize, a_, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(s_, &model_));

    char path[] = "/tmp/npuipc-model-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_LE(0, fd);
    close(fd);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDebugJsonPrint(model_, path, 0));
    std::ifstream in(path);
    std::stringstream json;
    json << in.rdbuf();
    unlink(path);
    EXPECT_NE(std::string::npos,
              json.str().find("{\"seq\": 0, \"call\": \"aclrtMemsetAsync\", \"extendInfo\": \"{\\\"op\\\":\\\"fill\\\"}\"}, "
                              "{\"seq\": 1, \"call\": \"aclrtMemcpyAsync\"}"))
        << json.str();

    // A launch that runs is the thread's last task now.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(a_, kSize, 2, kSize, other_));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtCacheLastTaskExtendInfo(info, sizeof(info) - 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(other_));
}

} // namespace
