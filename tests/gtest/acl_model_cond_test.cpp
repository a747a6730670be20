// SPDX-License-Identifier: MIT
// Conditional tasks of captured models (aclrt_capture(3)): IF, WHILE and
// SWITCH on a condition word read when a run reaches the task, bodies
// captured by aclmdlRICaptureToModelRIBegin, ASSIGN_DEFAULT at each run,
// and CANN's codes for every misuse.
#include "acl_test_util.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdint>
#include <cstring>

using namespace acltest;

namespace {

constexpr size_t kSize = 4096;

class AclModelCondTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        for (aclrtStream &s : streams_)
            ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
        for (void *&p : mem_) {
            ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
            ASSERT_EQ(ACL_SUCCESS, aclrtMemset(p, kSize, 0, kSize));
        }
    }
    void TearDown() override
    {
        if (model_) {
            EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
        }
        for (void *p : mem_)
            if (p) {
                EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
            }
        for (aclrtStream s : streams_)
            if (s) {
                EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s));
            }
        AclTest::TearDown();
    }
    // Begins the parent's capture on streams_[0] and makes a condition.
    void BeginWithCondition(uint32_t dflt = 0, aclmdlRICondHandleFlag flag = static_cast<aclmdlRICondHandleFlag>(0))
    {
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(main(), ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
        aclmdlRICaptureStatus status;
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(main(), &status, &model_));
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICondHandleCreate(model_, dflt, flag, &cond_));
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICondHandleGetCondPtr(cond_, &word_));
    }
    // Captures body `m` on streams_[1]: a fill of mem_[0]'s first byte.
    void CaptureFill(aclmdlRI m, uint8_t value)
    {
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), m, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[0], 1, value, 1, body()));
        aclmdlRI ended = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), &ended));
        EXPECT_EQ(m, ended);
    }
    void End()
    {
        aclmdlRI ended = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(main(), &ended));
        EXPECT_EQ(model_, ended);
    }
    void SetWord(uint64_t v)
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(word_, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    uint64_t Word()
    {
        uint64_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 8, word_, 8, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }
    uint8_t ByteOf(const void *dev)
    {
        uint8_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }
    // Runs the model on streams_[2]; mem_[0]'s first byte cleared first.
    uint8_t Run()
    {
        EXPECT_EQ(ACL_SUCCESS, aclrtMemset(mem_[0], 1, 0, 1));
        EXPECT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec()));
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec(), kSyncTimeoutMs));
        return ByteOf(mem_[0]);
    }
    aclmdlRICondTaskParams Params(aclmdlRICondTaskType type, uint32_t size)
    {
        aclmdlRICondTaskParams p;
        std::memset(&p, 0, sizeof(p));
        p.handle = cond_;
        p.type = type;
        p.size = size;
        p.modelRIArray = bodies_;
        return p;
    }
    aclrtStream main() const { return streams_[0]; }
    aclrtStream body() const { return streams_[1]; }
    aclrtStream exec() const { return streams_[2]; }

    aclrtStream streams_[3] = {};
    void *mem_[2] = {};
    aclmdlRI model_ = nullptr;
    aclmdlRICondHandle cond_ = nullptr;
    uint64_t *word_ = nullptr;
    aclmdlRI bodies_[4] = {};
};

std::atomic<int> passes{0};
void count_pass(void *)
{
    passes++;
}

// The parent writes the word itself before the task: the run reads what
// the stream wrote, not what the host set before the run.
TEST_F(AclModelCondTest, IfRunsTheThenOrElseBodyByTheWordWhenTheRunReachesIt)
{
    BeginWithCondition();
    EXPECT_EQ(0u, Word()); // zeroed when made
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(word_, 8, mem_[1], 8, ACL_MEMCPY_DEVICE_TO_DEVICE, main()));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 2), main(), 0));
    ASSERT_NE(nullptr, bodies_[0]);
    ASSERT_NE(nullptr, bodies_[1]);
    EXPECT_EQ(nullptr, bodies_[2]);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(static_cast<uint8_t *>(mem_[0]) + 1, 1, 0x33, 1, main()));
    CaptureFill(bodies_[0], 0x11);
    CaptureFill(bodies_[1], 0x22);
    End();

    uint64_t one = 1;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem_[1], 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    SetWord(0); // overwritten by the model's copy before the task
    EXPECT_EQ(0x11, Run());
    EXPECT_EQ(0x33, ByteOf(static_cast<uint8_t *>(mem_[0]) + 1)); // the task after it ran too
    uint64_t zero = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem_[1], 8, &zero, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(0x22, Run());
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem_[1], 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(0x11, Run());
}

TEST_F(AclModelCondTest, AnIfWithoutElseRunsNothingOnZero)
{
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 1), main(), 0));
    CaptureFill(bodies_[0], 0x44);
    End();
    SetWord(0);
    EXPECT_EQ(0, Run());
    SetWord(0x100000000ULL); // any bit of the 64
    EXPECT_EQ(0x44, Run());
}

// The body counts its passes and takes one from the word (a reduction by
// -1 of its low 32 bits).
TEST_F(AclModelCondTest, WhileRunsTheBodyAgainUntilTheWordIsZero)
{
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_WHILE, 1), main(), 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(body(), count_pass, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtReduceAsync(word_, mem_[1], 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32, body(),
                                            nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), nullptr)); // a body's End needs no output
    End();
    int32_t minus_one = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem_[1], 4, &minus_one, 4, ACL_MEMCPY_HOST_TO_DEVICE));

    passes = 0;
    SetWord(3);
    Run();
    EXPECT_EQ(3, passes.load());
    EXPECT_EQ(0u, Word());
    passes = 0;
    Run(); // zero at the start: no pass
    EXPECT_EQ(0, passes.load());
}

TEST_F(AclModelCondTest, SwitchRunsTheBodyTheWordIndexesAndNoneBeyondThem)
{
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_SWITCH, 3), main(), 0));
    for (uint8_t i = 0; i < 3; i++)
        CaptureFill(bodies_[i], static_cast<uint8_t>(0x10 + i));
    End();
    for (uint64_t v : {2, 0, 1}) {
        SetWord(v);
        EXPECT_EQ(0x10 + v, Run()) << v;
    }
    SetWord(3);
    EXPECT_EQ(0, Run());
    SetWord(~0ULL);
    EXPECT_EQ(0, Run());
}

// ASSIGN_DEFAULT: the word is set to the default when the run is called,
// whatever the host wrote before.
TEST_F(AclModelCondTest, AssignDefaultSetsTheWordAtEachRun)
{
    BeginWithCondition(1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
    EXPECT_EQ(0u, Word()); // not the default until a run
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 2), main(), 0));
    CaptureFill(bodies_[0], 0x55);
    CaptureFill(bodies_[1], 0x66);
    End();
    SetWord(0);
    EXPECT_EQ(0x55, Run());
    EXPECT_EQ(1u, Word());
}

// Bodies nest: a body captures a conditional task of its own.
TEST_F(AclModelCondTest, ABodyHoldsAConditionOfItsOwn)
{
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 1), main(), 0));
    aclmdlRI outer = bodies_[0];
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), outer, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    aclmdlRICondHandle inner = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICondHandleCreate(outer, 0, static_cast<aclmdlRICondHandleFlag>(0), &inner));
    uint64_t *inner_word = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICondHandleGetCondPtr(inner, &inner_word));
    aclmdlRICondTaskParams p = Params(ACL_MODEL_RI_COND_TYPE_IF, 1);
    aclmdlRI innermost[1] = {};
    p.handle = inner;
    p.modelRIArray = innermost;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(p, body(), 0));
    aclrtStream third = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&third));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(third, innermost[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[0], 1, 0x77, 1, third));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(third, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStream(third));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), nullptr));
    End();
    uint64_t one = 1;
    SetWord(1);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(inner_word, 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(0x77, Run());
    uint64_t zero = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(inner_word, 8, &zero, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(0, Run());
}

TEST_F(AclModelCondTest, TheCallsRefuseWhatCANNRefusesWithItsCodes)
{
    const auto no_flag = static_cast<aclmdlRICondHandleFlag>(0);
    aclmdlRICondHandle h = nullptr;
    uint64_t *ptr = nullptr;
    auto *stranger = reinterpret_cast<void *>(0x12345);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICondHandleCreate(nullptr, 0, no_flag, &h));
    BeginWithCondition();
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICondHandleCreate(model_, 0, no_flag, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRICondHandleCreate(static_cast<aclmdlRI>(stranger), 0, no_flag, &h));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclmdlRICondHandleCreate(model_, 0, static_cast<aclmdlRICondHandleFlag>(2), &h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICondHandleGetCondPtr(nullptr, &ptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICondHandleGetCondPtr(cond_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRICondHandleGetCondPtr(stranger, &ptr));

    aclmdlRICondTaskParams p = Params(ACL_MODEL_RI_COND_TYPE_IF, 1);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIAddCondTask(p, nullptr, 0));
    aclmdlRICondTaskParams bad = p;
    bad.handle = stranger;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIAddCondTask(bad, main(), 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIAddCondTask(p, static_cast<aclrtStream>(stranger), 0));
    bad = p;
    bad.type = static_cast<aclmdlRICondTaskType>(3);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(bad, main(), 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(p, main(), 1));
    bad = p;
    bad.handle = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(bad, main(), 0));
    bad = p;
    bad.modelRIArray = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(bad, main(), 0));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_NOT_CAPTURED, aclmdlRIAddCondTask(p, exec(), 0));
    for (auto [type, size] : {std::pair{ACL_MODEL_RI_COND_TYPE_IF, 3u}, std::pair{ACL_MODEL_RI_COND_TYPE_IF, 0u},
                              std::pair{ACL_MODEL_RI_COND_TYPE_WHILE, 2u}, std::pair{ACL_MODEL_RI_COND_TYPE_SWITCH, 0u}}) {
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(Params(type, size), main(), 0)) << type << size;
    }
    // Another model's condition.
    aclmdlRI other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(exec(), ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(p, exec(), 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(exec(), &other));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRICondHandleCreate(other, 0, no_flag, &h)); // not capturing
    // A condition takes one task; its bodies are captured once each.
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(p, main(), 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIAddCondTask(p, main(), 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICaptureToModelRIBegin(nullptr, bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRICaptureToModelRIBegin(body(), nullptr, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclmdlRICaptureToModelRIBegin(body(), static_cast<aclmdlRI>(stranger), ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclmdlRICaptureToModelRIBegin(body(), bodies_[0], static_cast<aclmdlRICaptureMode>(3)));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRICaptureToModelRIBegin(body(), other, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED,
              aclmdlRICaptureToModelRIBegin(main(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    // The parent cannot end before its bodies are captured: it is dropped.
    aclmdlRI ended = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING, aclmdlRICaptureEnd(main(), &ended));
    EXPECT_EQ(nullptr, ended);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIDestroy(model_));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRICondHandleGetCondPtr(cond_, &ptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    model_ = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(other));
}

TEST_F(AclModelCondTest, ABodyRunsAndGoesWithItsModelOnly)
{
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 1), main(), 0));
    CaptureFill(bodies_[0], 0x12);
    EXPECT_EQ(ACL_ERROR_RT_MODEL_CAPTURED,
              aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    End();
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRIExecuteAsync(bodies_[0], exec()));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRIDestroy(bodies_[0]));
    uint32_t n = 0;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRIGetStreams(bodies_[0], nullptr, &n));
    // The model's destroy takes its condition and bodies.
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
    model_ = nullptr;
    uint64_t *ptr = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRICondHandleGetCondPtr(cond_, &ptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIExecuteAsync(bodies_[0], exec()));
}

// Work queued on the executing stream after the call comes after the
// whole run; a run's failure goes to that stream's next synchronize.
TEST_F(AclModelCondTest, TheExecutingStreamWaitsForTheRunAndGetsItsFailure)
{
    void *doomed = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&doomed, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 2), main(), 0));
    CaptureFill(bodies_[0], 0x11);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), bodies_[1], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(doomed, kSize, 1, kSize, body()));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), nullptr));
    End();
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(doomed)); // the else branch's memory

    SetWord(1);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec()));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[0], 1, 0x99, 1, exec()));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec(), kSyncTimeoutMs));
    EXPECT_EQ(0x99, ByteOf(mem_[0])); // after the body's 0x11

    SetWord(0);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec()));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStreamWithTimeout(exec(), kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec(), kSyncTimeoutMs)); // reported once
}

// A WHILE whose body never clears its word runs until the model is
// destroyed; the destroy returns once the run stopped.
TEST_F(AclModelCondTest, DestroyingAModelStopsARunThatLoopsForever)
{
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_WHILE, 1), main(), 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(body(), count_pass, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), nullptr));
    End();
    SetWord(1);
    passes = 0;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec()));
    while (passes.load() < 3)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
    model_ = nullptr;
    const int after = passes.load();
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclrtSynchronizeStreamWithTimeout(exec(), kSyncTimeoutMs));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(after, passes.load()); // no pass once the destroy returned
}

// Two runs queued one after the other: each starts with its default.
TEST_F(AclModelCondTest, EachQueuedRunStartsWithTheDefault)
{
    BeginWithCondition(3, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_WHILE, 1), main(), 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(body(), count_pass, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtReduceAsync(word_, mem_[1], 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32, body(),
                                            nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), nullptr));
    End();
    int32_t minus_one = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem_[1], 4, &minus_one, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    passes = 0;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec()));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec()));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec(), kSyncTimeoutMs));
    EXPECT_EQ(6, passes.load());
}

// The codes of other contexts, built models and bound streams.
TEST_F(AclModelCondTest, OtherContextsBuiltModelsAndBoundStreamsHaveCANNsCodes)
{
    const auto no_flag = static_cast<aclmdlRICondHandleFlag>(0);
    aclmdlRICondHandle h = nullptr;
    aclmdlRI built = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildBegin(&built, 0));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRICondHandleCreate(built, 0, no_flag, &h));
    BeginWithCondition();
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(Params(ACL_MODEL_RI_COND_TYPE_IF, 1), main(), 0));

    aclrtContext mine = nullptr, theirs = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&theirs, 0));
    aclrtStream foreign = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&foreign));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_CONTEXT, aclmdlRICondHandleCreate(model_, 0, no_flag, &h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    aclmdlRICondHandle second = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICondHandleCreate(model_, 0, no_flag, &second));
    aclmdlRICondTaskParams p = Params(ACL_MODEL_RI_COND_TYPE_IF, 1);
    aclmdlRI more[1] = {};
    p.handle = second;
    p.modelRIArray = more;
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CONTEXT, aclmdlRIAddCondTask(p, foreign, 0));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CONTEXT,
              aclmdlRICaptureToModelRIBegin(foreign, bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(theirs));
    // A stream bound to a built model captures no body.
    aclrtStream persistent = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&persistent, 0, ACL_STREAM_PERSISTENT));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(built, persistent, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL,
              aclmdlRICaptureToModelRIBegin(persistent, bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(built));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(persistent));
    // A body whose capture another thread ends is not captured: the model
    // cannot end until it is captured again.
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[0], 1, 0x21, 1, body()));
    aclError wrong = ACL_SUCCESS;
    std::thread([&] {
        ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
        wrong = aclmdlRICaptureEnd(body(), nullptr);
    }).join();
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, wrong);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureToModelRIBegin(body(), bodies_[0], ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(body(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAddCondTask(p, main(), 0));
    CaptureFill(more[0], 0x31);
    End();
    SetWord(1);
    EXPECT_EQ(0, Run()); // the body captured again is empty
}

} // namespace
