// SPDX-License-Identifier: MIT
// Built models and their control flow (aclrt_model_build(3)): launches on
// persistent streams bound to a model are recorded, not run; a run starts
// the head streams, and label switches, stream switches and activations
// choose by device memory what runs next. CANN's codes for every misuse.
#include "acl_test_util.h"

#include <cstring>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

using namespace acltest;

// aclmdlRIDebugPrint is deprecated in CANN, and tested here.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

constexpr size_t kSize = 4096;

class AclModelBuildTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&exec_));
        for (aclrtStream &s : bound_)
            ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT));
        for (void *&p : mem_) {
            ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
            ASSERT_EQ(ACL_SUCCESS, aclrtMemset(p, kSize, 0, kSize));
        }
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildBegin(&model_, 0));
    }
    void TearDown() override
    {
        if (model_) {
            EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
        }
        if (list_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyLabelList(list_));
        }
        for (aclrtLabel l : labels_)
            if (l) {
                EXPECT_EQ(ACL_SUCCESS, aclrtDestroyLabel(l));
            }
        for (void *p : mem_)
            if (p) {
                EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
            }
        for (aclrtStream s : bound_)
            if (s) {
                EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s));
            }
        if (exec_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(exec_));
        }
        AclTest::TearDown();
    }
    // Word `i` of mem_[0], the control words the tests steer by.
    void *Word(size_t i) { return static_cast<uint8_t *>(mem_[0]) + i * 8; }
    void SetWord(size_t i, int64_t v)
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(Word(i), 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    uint8_t ByteOf(const void *dev)
    {
        uint8_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }
    void ClearData()
    {
        for (size_t i = 1; i < 4; i++)
            ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mem_[i], kSize, 0, kSize));
    }
    void Run()
    {
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec_));
        ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec_, kSyncTimeoutMs));
    }
    // Labels 0..n-1 in one list.
    void MakeLabels(size_t n)
    {
        for (size_t i = 0; i < n; i++)
            ASSERT_EQ(ACL_SUCCESS, aclrtCreateLabel(&labels_[i]));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateLabelList(labels_, n, &list_));
    }

    aclrtStream exec_ = nullptr;
    aclrtStream bound_[5] = {};
    void *mem_[4] = {};
    aclmdlRI model_ = nullptr;
    aclrtLabel labels_[3] = {};
    aclrtLabelList list_ = nullptr;
};

// Head stream: switch by word 0 to label 0 or 1; label 0 sets data 1 and
// switches by word 1 (2) to label 2; label 1 sets data 2; label 2 ends.
TEST_F(AclModelBuildTest, ALabelSwitchRunsTheBranchTheDeviceIndexChoosesAtEachRun)
{
    aclrtStream h = bound_[0];
    MakeLabels(3);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchLabelByIndex(Word(0), 2, list_, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[0], h));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0xA0, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchLabelByIndex(Word(1), 3, list_, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[1], h));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], kSize, 0xB1, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[2], h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    // Recorded, not run.
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(h, kSyncTimeoutMs));
    EXPECT_EQ(0, ByteOf(mem_[1]));
    EXPECT_EQ(0, ByteOf(mem_[2]));

    SetWord(1, 2);
    SetWord(0, 0);
    Run();
    EXPECT_EQ(0xA0, ByteOf(mem_[1]));
    EXPECT_EQ(0, ByteOf(mem_[2]));

    ClearData();
    SetWord(0, 1);
    Run();
    EXPECT_EQ(0, ByteOf(mem_[1]));
    EXPECT_EQ(0xB1, ByteOf(mem_[2]));

    // Past maxValue: the last label of the range, as CANN.
    ClearData();
    SetWord(0, 7);
    Run();
    EXPECT_EQ(0, ByteOf(mem_[1]));
    EXPECT_EQ(0xB1, ByteOf(mem_[2]));
}

// CANN's model-switch shape: the head copies word 2 to word 0 and
// switches on it to stream 2 or 3; stream 2 sets data 1 and activates
// the end stream; stream 3 activates stream 1, which sets data 2 and
// activates the end stream.
TEST_F(AclModelBuildTest, StreamSwitchesAndActivationsRunTheStreamsTheValuesChoose)
{
    aclrtStream head = bound_[0], s1 = bound_[1], s2 = bound_[2], s3 = bound_[3], end = bound_[4];
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, head, ACL_MODEL_STREAM_FLAG_HEAD));
    for (aclrtStream s : {s1, s2, s3, end})
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, s, ACL_MODEL_STREAM_FLAG_DEFAULT));
    SetWord(3, 1);
    SetWord(4, 2);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(Word(0), 4, Word(2), 4, ACL_MEMCPY_DEVICE_TO_DEVICE, head));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchStream(Word(0), ACL_RT_EQUAL, Word(3), ACL_RT_SWITCH_INT32, s2, nullptr, head));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchStream(Word(0), ACL_RT_EQUAL, Word(4), ACL_RT_SWITCH_INT32, s3, nullptr, head));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0xA1, kSize, s2));
    ASSERT_EQ(ACL_SUCCESS, aclrtActiveStream(end, s2));
    ASSERT_EQ(ACL_SUCCESS, aclrtActiveStream(s1, s3));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], kSize, 0xB2, kSize, s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtActiveStream(end, s1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[3], kSize, 0xE0, kSize, end));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, end));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));

    SetWord(2, 1);
    Run();
    EXPECT_EQ(0xA1, ByteOf(mem_[1]));
    EXPECT_EQ(0, ByteOf(mem_[2]));
    EXPECT_EQ(0xE0, ByteOf(mem_[3]));

    ClearData();
    SetWord(2, 2);
    Run();
    EXPECT_EQ(0, ByteOf(mem_[1]));
    EXPECT_EQ(0xB2, ByteOf(mem_[2]));
    EXPECT_EQ(0xE0, ByteOf(mem_[3]));

    // Neither: the head runs out, and so does the run, the end task unmet.
    ClearData();
    SetWord(2, 5);
    Run();
    EXPECT_EQ(0, ByteOf(mem_[1]));
    EXPECT_EQ(0, ByteOf(mem_[2]));
    EXPECT_EQ(0, ByteOf(mem_[3]));
}

TEST_F(AclModelBuildTest, SixtyFourBitSwitchesCompareSignedWholeWords)
{
    aclrtStream head = bound_[0], s1 = bound_[1];
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, head, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, s1, ACL_MODEL_STREAM_FLAG_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS,
              aclrtSwitchStream(Word(0), ACL_RT_LESS, Word(1), ACL_RT_SWITCH_INT64, s1, nullptr, head));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0x11, kSize, head));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], kSize, 0x22, kSize, s1));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, s1));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));

    // -1 < 2^32: true only when all 64 bits are compared, signed.
    SetWord(0, -1);
    SetWord(1, int64_t{1} << 32);
    Run();
    EXPECT_EQ(0, ByteOf(mem_[1])); // the head stopped at the switch
    EXPECT_EQ(0x22, ByteOf(mem_[2]));

    ClearData();
    SetWord(0, int64_t{1} << 32);
    SetWord(1, 1);
    Run();
    EXPECT_EQ(0x11, ByteOf(mem_[1]));
    EXPECT_EQ(0, ByteOf(mem_[2]));
}

TEST_F(AclModelBuildTest, ARunFollowsTheExecuteStreamsEarlierWorkAndHoldsItsLaterWork)
{
    aclrtStream h = bound_[0];
    MakeLabels(2);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchLabelByIndex(Word(0), 2, list_, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[0], h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[1], h));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0x5A, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));

    SetWord(0, 0);
    SetWord(5, 1);
    SetWord(6, 0);
    // The execute stream is held until word 6 is 1; then it writes the
    // index the run reads (1, from word 5), and the copy after the run
    // sees what the run wrote.
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(Word(6), 1, ACL_STREAM_WAIT_VALUE_EQ, exec_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(Word(0), 4, Word(5), 4, ACL_MEMCPY_DEVICE_TO_DEVICE, exec_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(mem_[2], kSize, mem_[1], kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, exec_));
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    usleep(100 * 1000);
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamQuery(exec_, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_NOT_READY, status);
    EXPECT_EQ(0, ByteOf(mem_[1]));
    SetWord(6, 1);
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec_, kSyncTimeoutMs));
    EXPECT_EQ(0x5A, ByteOf(mem_[2]));
}

// Two head streams: A waits for a word B writes only after B's switch,
// then switches itself. The run lets whichever stream gets to its switch
// first steer: A's wait never holds B's switch back.
TEST_F(AclModelBuildTest, AStreamWaitingForAnotherNeverHoldsBackTheOthersSwitch)
{
    aclrtStream a = bound_[0], b = bound_[1];
    MakeLabels(2);
    SetWord(0, 1);
    SetWord(1, 0);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, a, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, b, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(Word(1), 7, ACL_STREAM_WAIT_VALUE_EQ, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchLabelByIndex(Word(0), 2, list_, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[0], a));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[1], a));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0xAA, kSize, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchStream(Word(0), ACL_RT_NOT_EQUAL, Word(0), ACL_RT_SWITCH_INT32, a, nullptr, b));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(1), 7, 0, b));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, a));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    Run();
    EXPECT_EQ(0xAA, ByteOf(mem_[1]));
}

TEST_F(AclModelBuildTest, BoundStreamsTakeOnlyTheEventsCANNsModelStreamsTake)
{
    aclrtStream h = bound_[0];
    aclrtEvent plain = nullptr, ex = nullptr, flagged = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&plain));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&flagged, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtRecordEvent(plain, h));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtRecordEvent(ex, h));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtStreamWaitEvent(h, ex));
    EXPECT_EQ(ACL_SUCCESS, aclrtRecordEvent(flagged, h));
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(h, flagged));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    Run();
    Run();
    for (aclrtEvent e : {plain, ex, flagged})
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(e));
}

TEST_F(AclModelBuildTest, UnbindingTheEndTasksStreamTakesTheEndTaskAlong)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_[0], ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_[1], ACL_MODEL_STREAM_FLAG_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, bound_[1]));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIUnbindStream(model_, bound_[1]));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIBuildEnd(model_, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, bound_[0]));
    // A destroyed bound stream leaves the model as an unbind does.
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_[1], ACL_MODEL_STREAM_FLAG_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStream(bound_[1]));
    bound_[1] = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    Run();
}

TEST_F(AclModelBuildTest, AFailedRunIsTheExecuteStreamsNextSynchronizeErrorOnce)
{
    aclrtStream h = bound_[0];
    MakeLabels(1);
    static uint32_t host_index = 0; // not device memory: the switch cannot read it
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtSwitchLabelByIndex(&host_index, 1, list_, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[0], h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec_));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclrtSynchronizeStreamWithTimeout(exec_, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(exec_, kSyncTimeoutMs));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIExecute(model_, kSyncTimeoutMs));
}

TEST_F(AclModelBuildTest, ExecuteRunsABuiltModelToItsEndAndRefusesACapturedOne)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_[0], ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0x3C, kSize, bound_[0]));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, bound_[0]));
    ASSERT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIExecute(model_, kSyncTimeoutMs));
    ASSERT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIExecuteAsync(model_, exec_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecute(model_, 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecute(model_, kSyncTimeoutMs));
    EXPECT_EQ(0x3C, ByteOf(mem_[1]));

    aclmdlRI captured = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(exec_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], kSize, 1, kSize, exec_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(exec_, &captured));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecute(captured, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(captured));
}

TEST_F(AclModelBuildTest, BuildingRefusesWhatCANNRefusesWithItsCodes)
{
    aclrtStream h = bound_[0], plain = exec_;
    aclmdlRI m = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIBuildBegin(nullptr, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIBuildBegin(&m, 1));
    EXPECT_EQ(nullptr, m);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIBindStream(nullptr, h, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIBindStream(model_, h, 5));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIBindStream(model_, plain, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRIBindStream(model_, &m, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclmdlRIBuildEnd(model_, nullptr)); // nothing bound
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildBegin(&m, 0));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclmdlRIBindStream(m, h, ACL_MODEL_STREAM_FLAG_DEFAULT));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclmdlRIUnbindStream(m, h));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclmdlRIEndTask(m, h)); // bound to another model
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(m));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclmdlRICaptureBegin(h, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_EXECUTE, aclmdlRIBuildEnd(model_, nullptr)); // no end task
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIBuildEnd(model_, &m));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclmdlRIEndTask(model_, h)); // one per model
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIExecuteAsync(model_, h)); // runs on a bound stream
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIUnbindStream(model_, h));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclmdlRIUnbindStream(model_, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclmdlRIUnbindStream(nullptr, h));

    // A captured model takes no building call.
    aclmdlRI captured = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(plain, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureGetInfo(plain, nullptr, &captured));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIBindStream(captured, bound_[1], ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIBuildEnd(captured, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(plain, &captured));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(captured));
}

TEST_F(AclModelBuildTest, ControlFlowCallsRefuseWhatCANNRefusesWithItsCodes)
{
    aclrtStream h = bound_[0], other = bound_[1], plain = exec_;
    MakeLabels(2);
    aclrtLabel spare = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateLabel(&spare));
    // Labels and lists.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateLabel(nullptr));
    aclrtLabelList list = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCreateLabelList(nullptr, 1, &list));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCreateLabelList(&spare, 0, &list));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtCreateLabelList(labels_, 1, &list)); // in a list already
    aclrtLabel twice[2] = {spare, spare};
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtCreateLabelList(twice, 2, &list));
    aclrtLabel bogus = &list;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtCreateLabelList(&bogus, 1, &list));
    EXPECT_EQ(nullptr, list);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyLabelList(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyLabelList(bogus));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDestroyLabel(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtDestroyLabel(bogus));

    // Steering calls want bound streams.
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclrtSetLabel(labels_[0], plain));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclrtSwitchLabelByIndex(Word(0), 2, list_, plain));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclrtActiveStream(h, plain));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL, aclrtActiveStream(other, h));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_MODEL,
              aclrtSwitchStream(Word(0), ACL_RT_EQUAL, Word(1), ACL_RT_SWITCH_INT32, other, nullptr, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetLabel(nullptr, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetLabel(labels_[0], nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtSetLabel(spare, h)); // in no list
    ASSERT_EQ(ACL_SUCCESS, aclrtSetLabel(labels_[0], h));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtSetLabel(labels_[0], h)); // once
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSwitchLabelByIndex(nullptr, 2, list_, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSwitchLabelByIndex(Word(0), 2, nullptr, h));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtSwitchLabelByIndex(Word(0), 2, bogus, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtActiveStream(nullptr, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtActiveStream(h, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, other, ACL_MODEL_STREAM_FLAG_DEFAULT));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtSwitchStream(Word(0), ACL_RT_EQUAL, Word(1), ACL_RT_SWITCH_INT32, other, plain, h));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtSwitchStream(nullptr, ACL_RT_EQUAL, Word(1), ACL_RT_SWITCH_INT32, other, nullptr, h));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSwitchStream(Word(0), static_cast<aclrtCondition>(6), Word(1),
                                                            ACL_RT_SWITCH_INT32, other, nullptr, h));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSwitchStream(Word(0), ACL_RT_EQUAL, Word(1),
                                                            static_cast<aclrtCompareDataType>(2), other, nullptr, h));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyLabel(spare));
}

TEST_F(AclModelBuildTest, UnboundPersistentStreamsRunTheirWorkAndDestroyUnbindsTheRest)
{
    aclrtStream h = bound_[0];
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0x21, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(h, kSyncTimeoutMs));
    EXPECT_EQ(0x21, ByteOf(mem_[1]));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], kSize, 0x22, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(h, kSyncTimeoutMs));
    EXPECT_EQ(0, ByteOf(mem_[2])); // recorded
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
    model_ = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[3], kSize, 0x23, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(h, kSyncTimeoutMs));
    EXPECT_EQ(0x23, ByteOf(mem_[3]));
    EXPECT_EQ(0, ByteOf(mem_[2]));
}

TEST_F(AclModelBuildTest, TheDebugPrintListsEachStreamsTasks)
{
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_[0], ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_[1], ACL_MODEL_STREAM_FLAG_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtActiveStream(bound_[1], bound_[0]));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 1, kSize, bound_[1]));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, bound_[1]));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    const std::string path = "/tmp/acl_model_build_test." + std::to_string(getpid()) + ".json";
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDebugJsonPrint(model_, path.c_str(), 0));
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path.c_str());
    EXPECT_NE(std::string::npos, text.str().find("{\"seq\": 0, \"stream\": 0, \"call\": \"aclrtActiveStream\"}"))
        << text.str();
    EXPECT_NE(std::string::npos, text.str().find("{\"seq\": 1, \"stream\": 1, \"call\": \"aclrtMemsetAsync\"}"))
        << text.str();
    EXPECT_NE(std::string::npos, text.str().find("{\"seq\": 2, \"stream\": 1, \"call\": \"aclmdlRIEndTask\"}"))
        << text.str();
}

// CANN's persistent tasks: a built model's stream forgets what it
// recorded, records anew, and the next run runs only that.
TEST_F(AclModelBuildTest, PersistentTaskCleanLetsABoundStreamRecordItsTasksAnew)
{
    aclrtStream h = bound_[0];
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtPersistentTaskClean(nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtPersistentTaskClean(exec_)); // not persistent
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtPersistentTaskClean(h));     // bound to no model
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0xA1, kSize, h));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtPersistentTaskClean(h)); // not built yet
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    Run();
    EXPECT_EQ(0xA1, ByteOf(mem_[1]));
    EXPECT_EQ(0x00, ByteOf(mem_[2]));

    ClearData();
    ASSERT_EQ(ACL_SUCCESS, aclrtPersistentTaskClean(h));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], kSize, 0xB2, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    Run();
    EXPECT_EQ(0x00, ByteOf(mem_[1])); // the first recording is gone
    EXPECT_EQ(0xB2, ByteOf(mem_[2]));
}

// aclmdlRIAbort stops the run under way (a stream waiting for a word
// that never comes), the execute stream reports it, and the model runs
// again; a built model is not updated.
TEST_F(AclModelBuildTest, AbortStopsTheRunUnderWayAndTheModelRunsAgain)
{
    aclrtStream h = bound_[0];
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(Word(0), 7, ACL_STREAM_WAIT_VALUE_EQ, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0xC3, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIAbort(model_)); // nothing running
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRIUpdate(model_));
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDebugPrint(model_));

    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, exec_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(exec_, 300)); // it waits
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIAbort(model_));
    EXPECT_EQ(ACL_ERROR_RT_MODEL_ABORT_NORMAL, aclrtSynchronizeStreamWithTimeout(exec_, kSyncTimeoutMs));
    EXPECT_EQ(0x00, ByteOf(mem_[1]));

    SetWord(0, 7);
    Run();
    EXPECT_EQ(0xC3, ByteOf(mem_[1]));
}

// CANN's queries of a built model: its streams, each one's tasks, and a
// task's type and parameters; CANN's two-call lists and codes.
TEST_F(AclModelBuildTest, TheStreamsAndTasksOfABuiltModelAreListedWithTheirParameters)
{
    aclrtStream h = bound_[0];
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, h, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(1), 77, 0, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(h, event));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(Word(1), 77, ACL_STREAM_WAIT_VALUE_EQ, h));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[1], kSize, 0x11, kSize, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, h));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));

    uint32_t n = 99;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetStreams(model_, nullptr, &n));
    EXPECT_EQ(1u, n);
    aclrtStream streams[2] = {reinterpret_cast<aclrtStream>(1), reinterpret_cast<aclrtStream>(1)};
    n = 0;
    EXPECT_EQ(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, aclmdlRIGetStreams(model_, streams, &n));
    EXPECT_EQ(reinterpret_cast<aclrtStream>(1), streams[0]); // untouched
    n = 2;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetStreams(model_, streams, &n));
    EXPECT_EQ(1u, n);
    EXPECT_EQ(h, streams[0]);
    EXPECT_EQ(nullptr, streams[1]);

    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetTasksByStream(h, nullptr, &n));
    ASSERT_EQ(6u, n);
    aclmdlRITask tasks[8] = {};
    n = 2;
    EXPECT_EQ(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, aclmdlRIGetTasksByStream(h, tasks, &n));
    EXPECT_EQ(2u, n);
    EXPECT_NE(nullptr, tasks[1]); // the first ones listed
    n = 8;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetTasksByStream(h, tasks, &n));
    ASSERT_EQ(6u, n);
    EXPECT_EQ(nullptr, tasks[6]);
    const aclmdlRITaskType expected[6] = {ACL_MODEL_RI_TASK_VALUE_WRITE, ACL_MODEL_RI_TASK_EVENT_RECORD,
                                          ACL_MODEL_RI_TASK_EVENT_WAIT,  ACL_MODEL_RI_TASK_VALUE_WAIT,
                                          ACL_MODEL_RI_TASK_DEFAULT,     ACL_MODEL_RI_TASK_DEFAULT};
    for (size_t i = 0; i < 6; i++) {
        aclmdlRITaskType type = RawEnum<aclmdlRITaskType>(99);
        ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetType(tasks[i], &type)) << i;
        EXPECT_EQ(expected[i], type) << i;
    }
    aclmdlRITaskParams p;
    memset(&p, 0xFF, sizeof(p));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetParams(tasks[0], &p));
    EXPECT_EQ(ACL_MODEL_RI_TASK_VALUE_WRITE, p.type);
    EXPECT_EQ(Word(1), p.valueWriteTaskParams.devAddr);
    EXPECT_EQ(77u, p.valueWriteTaskParams.value);
    EXPECT_EQ(nullptr, p.taskGrp);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetParams(tasks[1], &p));
    EXPECT_EQ(event, p.eventRecordTaskParams.event);
    EXPECT_EQ(static_cast<uint32_t>(ACL_EVENT_SYNC), p.eventRecordTaskParams.eventFlag);
    EXPECT_EQ(0u, p.eventRecordTaskParams.recordFlag);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRITaskGetParams(tasks[3], &p));
    EXPECT_EQ(static_cast<uint32_t>(ACL_STREAM_WAIT_VALUE_EQ), p.valueWaitTaskParams.flag);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskGetParams(tasks[4], &p)); // a copy engine fill

    // CANN's codes; handles of tasks that are gone name nothing.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetStreams(model_, streams, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetStreams(nullptr, streams, &n));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetTasksByStream(nullptr, tasks, &n));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetTasksByStream(h, tasks, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRIGetTasksByStream(exec_, tasks, &n)); // in no model
    aclmdlRITaskType type;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskGetType(nullptr, &type));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclmdlRITaskGetType(tasks[0], nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskGetType(reinterpret_cast<aclmdlRITask>(0x123456), &type));
    // Sequence ids and changes are a captured model's.
    uint32_t seq = 0;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRITaskGetSeqId(tasks[0], &seq));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRITaskSetParams(tasks[0], &p));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclmdlRITaskDisable(tasks[0]));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIGetTasksByStream(h, tasks, &n));
    ASSERT_EQ(6u, n);
    ASSERT_EQ(ACL_SUCCESS, aclrtPersistentTaskClean(h));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskGetType(tasks[0], &type));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclmdlRITaskGetParams(tasks[1], &p));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

} // namespace
