// SPDX-License-Identifier: MIT
// Memory-value synchronisation (aclrt_value(3)): aclrtValueWait holds a
// stream until a word of device memory compares true, released by an
// aclrtValueWrite on another stream or by the host; CANN's codes for
// every refused argument, with nothing queued.
#include "acl_test_util.h"

#include <cstdint>
#include <cstdlib>
#include <thread>

using namespace acltest;

namespace {

constexpr size_t kSize = 4096;
constexpr int32_t kHeldMs = 100; // how long a held stream is watched

class AclValueTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&mem_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mem_, kSize, 0, kSize));
        word_ = static_cast<uint64_t *>(mem_);
        marker_ = static_cast<uint8_t *>(mem_) + kSize / 2;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a_));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b_));
    }
    void TearDown() override
    {
        if (a_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(a_));
        }
        if (b_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(b_));
        }
        if (mem_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(mem_));
        }
        AclTest::TearDown();
    }

    void SetWord(uint64_t v)
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(word_, sizeof(v), &v, sizeof(v), ACL_MEMCPY_HOST_TO_DEVICE));
    }
    uint64_t Word()
    {
        uint64_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, sizeof(v), word_, sizeof(v), ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }
    uint8_t Marker()
    {
        uint8_t v = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(&v, 1, marker_, 1, ACL_MEMCPY_DEVICE_TO_HOST));
        return v;
    }
    // A wait on stream a, a set of the marker behind it; the set must not
    // have run a while later.
    void QueueHeldWait(uint32_t flag, uint64_t value)
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(word_, value, flag, a_));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(marker_, 1, 0x5a, 1, a_));
        EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(a_, kHeldMs));
        EXPECT_EQ(0, Marker());
    }
    void ExpectReleased()
    {
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
        EXPECT_EQ(0x5a, Marker());
    }
    // Refused with `code`, nothing queued on stream a.
    void ExpectRefusedWithNothingQueued(aclError got, aclError code)
    {
        EXPECT_EQ(code, got);
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
        EXPECT_EQ(0u, Word());
    }

    void *mem_ = nullptr;
    uint64_t *word_ = nullptr;
    uint8_t *marker_ = nullptr;
    aclrtStream a_ = nullptr, b_ = nullptr;
};

TEST_F(AclValueTest, AWaitHoldsItsStreamUntilAWriteOnAnotherStreamReleasesIt)
{
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_EQ, 100);
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(word_, 100, 0, b_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs));
    ExpectReleased();
    EXPECT_EQ(100u, Word());
}

TEST_F(AclValueTest, TheHostWritingTheWordReleasesAWait)
{
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_EQ, 7);
    SetWord(7);
    ExpectReleased();
}

TEST_F(AclValueTest, GeqComparesAsCountersThatWrap)
{
    SetWord(4);
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_GEQ, 5);
    SetWord(5);
    ExpectReleased();

    // A word past the wrap is past a value just below it.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(marker_, 1, 0, 1));
    SetWord(0xfffffffffffffff0ULL);
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_GEQ, 0xfffffffffffffff8ULL);
    SetWord(0x10);
    ExpectReleased();
}

TEST_F(AclValueTest, AndWaitsForASharedBitAndNorForABitClearInBoth)
{
    SetWord(0xf0);
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_AND, 0x0f00);
    SetWord(0x0100);
    ExpectReleased();

    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(marker_, 1, 0, 1));
    SetWord(0xffffffff00000000ULL);
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_NOR, 0x00000000ffffffffULL);
    SetWord(0xfffffffe00000000ULL);
    ExpectReleased();
}

TEST_F(AclValueTest, AWriteLandsInItsStreamsOrder)
{
    // Behind a wait that nothing satisfies yet, the write has not happened.
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_EQ, 1);
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(word_ + 1, 0x1122334455667788ULL, 0, a_));
    uint64_t second = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(&second, 8, word_ + 1, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(0u, second);
    SetWord(1);
    ExpectReleased();
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(&second, 8, word_ + 1, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(0x1122334455667788ULL, second);
}

TEST_F(AclValueTest, TwoThreadsAsInCannsMultiStreamSample)
{
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    aclError waited = ACL_ERROR_INTERNAL_ERROR, wrote = ACL_ERROR_INTERNAL_ERROR;
    uint8_t marker_before_write = 0xff;
    std::thread waiter([&] {
        aclrtSetCurrentContext(ctx);
        waited = aclrtValueWait(word_, 100, ACL_STREAM_WAIT_VALUE_EQ, a_);
        if (waited == ACL_SUCCESS)
            waited = aclrtMemsetAsync(marker_, 1, 0x5a, 1, a_);
        if (waited == ACL_SUCCESS)
            waited = aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs);
    });
    std::thread writer([&] {
        aclrtSetCurrentContext(ctx);
        std::this_thread::sleep_for(std::chrono::milliseconds(kHeldMs));
        // The waiter's set is held until this write, wherever it got.
        aclrtMemcpy(&marker_before_write, 1, marker_, 1, ACL_MEMCPY_DEVICE_TO_HOST);
        wrote = aclrtValueWrite(word_, 100, 0, b_);
        if (wrote == ACL_SUCCESS)
            wrote = aclrtSynchronizeStreamWithTimeout(b_, kSyncTimeoutMs);
    });
    writer.join();
    waiter.join();
    EXPECT_EQ(ACL_SUCCESS, waited);
    EXPECT_EQ(ACL_SUCCESS, wrote);
    EXPECT_EQ(0, marker_before_write);
    EXPECT_EQ(0x5a, Marker());
}

TEST_F(AclValueTest, TheDefaultStreamTakesBoth)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(word_, 9, 0, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(word_, 9, ACL_STREAM_WAIT_VALUE_EQ, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(nullptr, kSyncTimeoutMs));
    EXPECT_EQ(9u, Word());
}

TEST_F(AclValueTest, AnAbortEndsAWaitAndTheTasksBehindItDoNotRun)
{
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_EQ, 1);
    EXPECT_EQ(ACL_SUCCESS, aclrtStreamAbort(a_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
    EXPECT_EQ(0, Marker());
    // The stream works again.
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(word_, 3, 0, a_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(a_, kSyncTimeoutMs));
    EXPECT_EQ(3u, Word());
}

TEST_F(AclValueTest, DestroyingAWaitingStreamEndsTheWait)
{
    QueueHeldWait(ACL_STREAM_WAIT_VALUE_EQ, 1);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(a_));
    a_ = nullptr;
    EXPECT_EQ(0, Marker());
}

TEST_F(AclValueTest, RefusedArgumentsHaveCannsCodesAndQueueNothing)
{
    ExpectRefusedWithNothingQueued(aclrtValueWrite(nullptr, 1, 0, a_), ACL_ERROR_INVALID_PARAM);
    ExpectRefusedWithNothingQueued(aclrtValueWait(nullptr, 1, 0, a_), ACL_ERROR_INVALID_PARAM);
    ExpectRefusedWithNothingQueued(aclrtValueWrite(word_, 1, 1, a_), ACL_ERROR_RT_PARAM_INVALID);
    ExpectRefusedWithNothingQueued(aclrtValueWait(word_, 1, ACL_STREAM_WAIT_VALUE_NOR + 1, a_),
                                   ACL_ERROR_RT_PARAM_INVALID);
    // Not 8-byte aligned; the last 4 bytes of an allocation.
    char *bytes = static_cast<char *>(mem_);
    ExpectRefusedWithNothingQueued(aclrtValueWrite(bytes + 4, 1, 0, a_), ACL_ERROR_RT_PARAM_INVALID);
    ExpectRefusedWithNothingQueued(aclrtValueWait(bytes + 1, 1, 0, a_), ACL_ERROR_RT_PARAM_INVALID);
    ExpectRefusedWithNothingQueued(aclrtValueWrite(bytes + kSize - 4, 1, 0, a_),
                                   ACL_ERROR_RT_PARAM_INVALID);
    // Host memory: the process's own, and aclrtMallocHost's.
    uint64_t on_stack = 0;
    ExpectRefusedWithNothingQueued(aclrtValueWrite(&on_stack, 1, 0, a_), ACL_ERROR_RT_PARAM_INVALID);
    void *host = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, kSize));
    ExpectRefusedWithNothingQueued(aclrtValueWait(host, 1, 0, a_), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
    EXPECT_EQ(0u, on_stack);
    // Handles it did not issue; as CANN, the stream is checked before the flag.
    int not_a_stream = 0;
    ExpectRefusedWithNothingQueued(aclrtValueWrite(word_, 1, 0, &not_a_stream), ACL_ERROR_RT_INVALID_HANDLE);
    ExpectRefusedWithNothingQueued(aclrtValueWait(word_, 1, 0, &not_a_stream), ACL_ERROR_RT_INVALID_HANDLE);
    ExpectRefusedWithNothingQueued(aclrtValueWrite(word_, 1, 1, &not_a_stream), ACL_ERROR_RT_INVALID_HANDLE);
    // A stream of another context.
    aclrtContext mine = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&other, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    aclrtStream theirs = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(other));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&theirs));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    ExpectRefusedWithNothingQueued(aclrtValueWrite(word_, 1, 0, theirs), ACL_ERROR_RT_STREAM_CONTEXT);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(other));
}

TEST_F(AclValueTest, TheDefaultStreamWithoutAContextIsContextNull)
{
    aclError write = ACL_SUCCESS, wait = ACL_SUCCESS;
    std::thread t([&] {
        write = aclrtValueWrite(word_, 1, 0, nullptr);
        wait = aclrtValueWait(word_, 1, 0, nullptr);
    });
    t.join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, write);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, wait);
    EXPECT_EQ(0u, Word());
}

} // namespace
