// SPDX-License-Identifier: MIT
// Counting notifies (aclrt_cnt_notify(3)): counters updated by records in
// stream order, waits holding a stream until the counter compares true
// (with clear and timeout), captured into models, and CANN's codes.
#include "acl_test_util.h"

#include <cstdint>
#include <thread>

using namespace acltest;

namespace {

constexpr int32_t kHeldMs = 100;

class AclCntNotifyTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCntNotifyCreate(&n_, 0));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a_));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b_));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&marker_, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(marker_, 4096, 0, 4096));
    }
    void TearDown() override
    {
        for (aclrtStream s : {a_, b_})
            if (s) {
                EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s));
            }
        if (n_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtCntNotifyDestroy(n_));
        }
        if (marker_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(marker_));
        }
        AclTest::TearDown();
    }
    aclError Record(aclrtCntNotifyRecordMode mode, uint32_t value, aclrtStream s)
    {
        aclrtCntNotifyRecordInfo info = {mode, value};
        return aclrtCntNotifyRecord(n_, s, &info);
    }
    aclError Wait(aclrtCntNotifyWaitMode mode, uint32_t value, aclrtStream s, uint32_t timeout = 0,
                  bool clear = false)
    {
        aclrtCntNotifyWaitInfo info = {};
        info.mode = mode;
        info.value = value;
        info.timeout = timeout;
        info.isClear = clear ? 1 : 0;
        return aclrtCntNotifyWaitWithTimeout(n_, s, &info);
    }
    // A wait on stream a with a set of the marker behind it, held a while.
    void QueueHeldWait(aclrtCntNotifyWaitMode mode, uint32_t value, bool clear = false)
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(marker_, 1, 0, 1));
        ASSERT_EQ(ACL_SUCCESS, Wait(mode, value, a_, 0, clear));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(marker_, 1, 0x5a, 1, a_));
        EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(a_, kHeldMs));
        EXPECT_EQ(0, Marker());
    }
    void ExpectReleased()
    {
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
        EXPECT_EQ(0x5a, Marker());
    }
    uint8_t Marker()
    {
        uint8_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 1, marker_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }

    aclrtCntNotify n_ = nullptr;
    aclrtStream a_ = nullptr, b_ = nullptr;
    void *marker_ = nullptr;
};

TEST_F(AclCntNotifyTest, RecordsSetAddOrAndAndInStreamOrder)
{
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 5, b_));
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 3, b_));
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0x10, b_));
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, 0x1c, b_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, ((5 + 3) | 0x10) & 0x1c, a_, 5));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
}

TEST_F(AclCntNotifyTest, AWaitHoldsItsStreamUntilAnotherStreamsRecordsCountUpToIt)
{
    QueueHeldWait(ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 3);
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1, b_));
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1, b_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(a_, kHeldMs));
    EXPECT_EQ(0, Marker());
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1, b_));
    ExpectReleased();
}

TEST_F(AclCntNotifyTest, LessBiggerAndBitmaskWaits)
{
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 9, b_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs));
    QueueHeldWait(ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 9);
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 8, b_));
    ExpectReleased();
    QueueHeldWait(ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 8);
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1, b_));
    ExpectReleased();
    QueueHeldWait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, 0x30); // 9 has neither bit
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0x10, b_));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(a_, kHeldMs));
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0x20, b_));
    ExpectReleased();
}

TEST_F(AclCntNotifyTest, AClearingWaitAndAResetSetTheCounterToZero)
{
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 2, b_));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 2, b_, 5, true));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, b_, 5));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs));
    // Without the clear the counter stays.
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 7, b_));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 7, b_, 5));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 7, b_, 5));
    ASSERT_EQ(ACL_SUCCESS, aclrtCntNotifyReset(n_, b_));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, b_, 5));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs));
}

TEST_F(AclCntNotifyTest, AWaitPastItsTimeoutFailsItsStream)
{
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 99, a_, 1));
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(a_, 5 * kSyncTimeoutMs));
    // The stream works on (CANN's default failure mode).
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 99, a_));
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 99, a_, 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
}

TEST_F(AclCntNotifyTest, RecordsAreCapturedAndEachRunCountsAgain)
{
    aclmdlRI model = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(b_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, Record(ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1, b_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(b_, &model));
    // Exactly 3: the capture itself counted nothing.
    QueueHeldWait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 3);
    for (int run = 0; run < 3; run++)
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model, b_));
    ExpectReleased();
    EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model));
}

TEST_F(AclCntNotifyTest, BadArgumentsHaveCannsCodes)
{
    aclrtCntNotify other = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyCreate(&other, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyCreate(nullptr, 0));
    aclError no_context = ACL_SUCCESS;
    std::thread t([&] { no_context = aclrtCntNotifyCreate(&other, 0); });
    t.join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, no_context);
    ASSERT_EQ(ACL_SUCCESS, aclrtCntNotifyCreate(&other, 0));
    uint32_t id1 = 0, id2 = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtCntNotifyGetId(n_, &id1));
    ASSERT_EQ(ACL_SUCCESS, aclrtCntNotifyGetId(other, &id2));
    EXPECT_NE(id1, id2);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyGetId(n_, nullptr));

    aclrtCntNotifyRecordInfo rec = {ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1};
    aclrtCntNotifyWaitInfo wait = {};
    int not_mine = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCntNotifyRecord(n_, a_, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCntNotifyWaitWithTimeout(n_, a_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyRecord(nullptr, a_, &rec));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtCntNotifyRecord(&not_mine, a_, &rec));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtCntNotifyRecord(n_, &not_mine, &rec));
    rec.mode = static_cast<aclrtCntNotifyRecordMode>(3);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyRecord(n_, a_, &rec));
    wait.mode = static_cast<aclrtCntNotifyWaitMode>(5);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyWaitWithTimeout(n_, a_, &wait));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyReset(nullptr, a_));
    // A stream of another context.
    aclrtContext mine = nullptr, theirs = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&theirs, 0));
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CONTEXT, aclrtCntNotifyReset(n_, s));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(theirs));
    // Nothing queued by any refusal: the counter is still 0.
    ASSERT_EQ(ACL_SUCCESS, Wait(ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, a_, 5));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));

    EXPECT_EQ(ACL_SUCCESS, aclrtCntNotifyDestroy(other));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtCntNotifyDestroy(other));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCntNotifyDestroy(nullptr));
}

} // namespace
