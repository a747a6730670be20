// SPDX-License-Identifier: MIT
// Cache maintenance on a mock NPU (aclrt_cmo(3)): device memory the host's
// coherent caches serve has nothing to prefetch, write back, invalidate or
// flush, so the operations leave the bytes as they are; CANN's checks and
// codes for each form, the descriptor as CANN lays it out, the forms that
// need a model stream, aclrtDeviceL2CacheFlush, and
// aclrtMemcpyAsyncWithCondition (aclrtMemcpyAsync by another name).
#include "acl_test_util.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

using namespace acltest;

// aclrtMemcpyAsyncWithCondition is deprecated in CANN, and tested here.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

constexpr size_t kSize = 1 << 16;

class AclCmoTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream_));
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&model_stream_, 0, ACL_STREAM_PERSISTENT));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&desc_, 64, ACL_MEM_MALLOC_NORMAL_ONLY));
    }
    void TearDown() override
    {
        if (model_) {
            EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
        }
        for (void *p : {dev_, desc_})
            if (p) {
                EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
            }
        for (aclrtStream s : {stream_, model_stream_})
            if (s) {
                EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
            }
        AclTest::TearDown();
    }
    // model_stream_ bound to a model being built.
    void BindModelStream()
    {
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildBegin(&model_, 0));
        ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, model_stream_, ACL_MODEL_STREAM_FLAG_HEAD));
    }
    aclrtStream stream_ = nullptr;
    aclrtStream model_stream_ = nullptr;
    void *dev_ = nullptr;
    void *desc_ = nullptr;
    aclmdlRI model_ = nullptr;
};

TEST_F(AclCmoTest, EveryCacheOperationOnDeviceMemoryLeavesItsBytesInStreamOrder)
{
    std::vector<uint8_t> in(kSize), out(kSize);
    FillPattern(in.data(), kSize, 3);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(dev_, kSize, in.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
    for (aclrtCmoType type : {ACL_RT_CMO_TYPE_PREFETCH, ACL_RT_CMO_TYPE_WRITEBACK, ACL_RT_CMO_TYPE_INVALID,
                              ACL_RT_CMO_TYPE_FLUSH})
        EXPECT_EQ(ACL_SUCCESS, aclrtCmoAsync(dev_, kSize, type, stream_)) << type;
    // Part of an allocation, and the default stream.
    EXPECT_EQ(ACL_SUCCESS, aclrtCmoAsync(static_cast<char *>(dev_) + 100, 1, ACL_RT_CMO_TYPE_PREFETCH, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(out.data(), kSize, dev_, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(HasPattern(out.data(), kSize, 3));
}

TEST_F(AclCmoTest, CmoAsyncRefusesWhatCANNRefusesWithItsCodes)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCmoAsync(nullptr, kSize, ACL_RT_CMO_TYPE_PREFETCH, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCmoAsync(dev_, 0, ACL_RT_CMO_TYPE_PREFETCH, stream_));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtCmoAsync(dev_, kSize, RawEnum<aclrtCmoType>(4), stream_));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtCmoAsync(dev_, kSize, RawEnum<aclrtCmoType>(-1), stream_));
    // Not device memory, or past the allocation's end.
    std::vector<uint8_t> host(kSize);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsync(host.data(), kSize, ACL_RT_CMO_TYPE_PREFETCH, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsync(dev_, kSize + 1, ACL_RT_CMO_TYPE_PREFETCH, stream_));
    // A destroyed stream, and a stream in a model (CANN's model streams
    // take the descriptor form).
    aclrtStream gone = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&gone));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStream(gone));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtCmoAsync(dev_, kSize, ACL_RT_CMO_TYPE_PREFETCH, gone));
    BindModelStream();
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtCmoAsync(dev_, kSize, ACL_RT_CMO_TYPE_PREFETCH, model_stream_));
}

TEST_F(AclCmoTest, SetDescWritesCANNsDescriptorIntoDeviceMemory)
{
    size_t size = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtCmoGetDescSize(&size));
    EXPECT_EQ(32u, size);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoGetDescSize(nullptr));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(desc_, 64, 0xEE, 64));
    ASSERT_EQ(ACL_SUCCESS, aclrtCmoSetDesc(desc_, dev_, 4096));
    uint8_t raw[64];
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(raw, sizeof(raw), desc_, sizeof(raw), ACL_MEMCPY_DEVICE_TO_HOST));
    uint32_t words[2];
    uint16_t counts[2];
    uint32_t length;
    uint64_t src;
    memcpy(words, raw, 8);
    memcpy(counts, raw + 8, 4);
    memcpy(&length, raw + 12, 4);
    memcpy(&src, raw + 16, 8);
    EXPECT_EQ(0u, words[0]);
    EXPECT_EQ(0u, words[1]);
    EXPECT_EQ(0u, counts[0]); // as CANN fills it: the source and length only
    EXPECT_EQ(0u, counts[1]);
    EXPECT_EQ(4096u, length);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dev_), src);
    EXPECT_TRUE(BytesAre(raw + 32, 32, 0xEE)); // nothing past the descriptor

    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoSetDesc(nullptr, dev_, 4096));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoSetDesc(desc_, nullptr, 4096));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoSetDesc(desc_, dev_, 0));
    std::vector<uint8_t> host(64);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoSetDesc(host.data(), dev_, 4096));
}

TEST_F(AclCmoTest, DescriptorAndBarrierFormsAreTasksOfModelStreams)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtCmoSetDesc(desc_, dev_, kSize));
    aclrtBarrierTaskInfo wait = {};
    wait.barrierNum = 1;
    wait.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_INVALID;
    wait.cmoInfo[0].barrierId = 1;
    // Outside a model: CANN's internal error for a missing model.
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtCmoAsyncWithDesc(desc_, ACL_RT_CMO_TYPE_PREFETCH, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR,
              aclrtCmoAsyncWithBarrier(dev_, kSize, ACL_RT_CMO_TYPE_INVALID, 1, stream_));
    EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, aclrtCmoWaitBarrier(&wait, stream_, 0));

    BindModelStream();
    EXPECT_EQ(ACL_SUCCESS, aclrtCmoAsyncWithDesc(desc_, ACL_RT_CMO_TYPE_PREFETCH, model_stream_, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtCmoAsyncWithBarrier(dev_, kSize, ACL_RT_CMO_TYPE_INVALID, 1, model_stream_));
    EXPECT_EQ(ACL_SUCCESS, aclrtCmoAsyncWithBarrier(dev_, kSize, ACL_RT_CMO_TYPE_FLUSH, 0, model_stream_));
    EXPECT_EQ(ACL_SUCCESS, aclrtCmoWaitBarrier(&wait, model_stream_, 0));

    // The descriptor form's codes.
    int reserve = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsyncWithDesc(desc_, ACL_RT_CMO_TYPE_PREFETCH, model_stream_, &reserve));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsyncWithDesc(nullptr, ACL_RT_CMO_TYPE_PREFETCH, model_stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtCmoAsyncWithDesc(desc_, RawEnum<aclrtCmoType>(4), model_stream_, nullptr));
    std::vector<uint8_t> host(64);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtCmoAsyncWithDesc(host.data(), ACL_RT_CMO_TYPE_PREFETCH, model_stream_, nullptr));

    // The barrier form's: only an invalidation carries a barrier.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCmoAsyncWithBarrier(nullptr, kSize, ACL_RT_CMO_TYPE_INVALID, 1, model_stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsyncWithBarrier(dev_, 0, ACL_RT_CMO_TYPE_INVALID, 1, model_stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsyncWithBarrier(dev_, kSize, ACL_RT_CMO_TYPE_INVALID, 0, model_stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoAsyncWithBarrier(dev_, kSize, ACL_RT_CMO_TYPE_PREFETCH, 2, model_stream_));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtCmoAsyncWithBarrier(dev_, kSize, RawEnum<aclrtCmoType>(9), 0, model_stream_));

    // And the wait's.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCmoWaitBarrier(nullptr, model_stream_, 0));
    wait.barrierNum = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCmoWaitBarrier(&wait, model_stream_, 0));
    wait.barrierNum = ACL_RT_CMO_MAX_BARRIER_NUM + 1;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCmoWaitBarrier(&wait, model_stream_, 0));
    wait.barrierNum = 2;
    wait.cmoInfo[1].cmoType = ACL_RT_CMO_TYPE_FLUSH;
    wait.cmoInfo[1].barrierId = 2;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoWaitBarrier(&wait, model_stream_, 0));
    wait.cmoInfo[1].cmoType = ACL_RT_CMO_TYPE_INVALID;
    wait.cmoInfo[1].barrierId = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCmoWaitBarrier(&wait, model_stream_, 0));
}

TEST_F(AclCmoTest, L2CacheFlushNeedsAContextAndNoArgument)
{
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceL2CacheFlush(nullptr));
    int rsv = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceL2CacheFlush(&rsv));
    aclError without_context = ACL_SUCCESS;
    std::thread([&] { without_context = aclrtDeviceL2CacheFlush(nullptr); }).join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, without_context);
}

TEST_F(AclCmoTest, MemcpyAsyncWithConditionIsMemcpyAsyncForTheKindsItTakes)
{
    std::vector<uint8_t> in(kSize), out(kSize);
    FillPattern(in.data(), kSize, 9);
    ASSERT_EQ(ACL_SUCCESS,
              aclrtMemcpyAsyncWithCondition(dev_, kSize, in.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
    ASSERT_EQ(ACL_SUCCESS,
              aclrtMemcpyAsyncWithCondition(out.data(), kSize, dev_, kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(HasPattern(out.data(), kSize, 9));

    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithCondition(nullptr, 0, nullptr, 0, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyAsyncWithCondition(nullptr, kSize, in.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyAsyncWithCondition(dev_, kSize, nullptr, kSize, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyAsyncWithCondition(dev_, kSize, dev_, kSize, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
    // What aclrtMemcpyAsync refuses, it refuses too.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsyncWithCondition(dev_, kSize, in.data(), kSize, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
}

} // namespace
