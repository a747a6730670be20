// SPDX-License-Identifier: MIT
// aclrtReduceAsync (aclrt_memory(3)): dst = dst op src for each type and
// reduction the mock NPU's copy engine has, in stream order; CANN's sample
// (a buffer reduced into itself); CANN's codes.
#include "acl_test_util.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kBytes = 4096;

class AclReduceTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream_));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dst_, kBytes, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&src_, kBytes, ACL_MEM_MALLOC_NORMAL_ONLY));
    }
    void TearDown() override
    {
        for (void *p : {dst_, src_})
            if (p) {
                EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
            }
        if (stream_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream_));
        }
        AclTest::TearDown();
    }
    // Reduces `b` into `a` on the device as `type`, returning dst's bytes.
    template <typename T>
    std::vector<T> Reduce(const std::vector<T> &a, const std::vector<T> &b, aclrtReduceKind kind, aclDataType type)
    {
        const size_t n = a.size() * sizeof(T);
        std::vector<T> out(a.size());
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(dst_, kBytes, a.data(), n, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(src_, kBytes, b.data(), n, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
        EXPECT_EQ(ACL_SUCCESS, aclrtReduceAsync(dst_, src_, n, kind, type, stream_, nullptr));
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(out.data(), n, dst_, n, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
        EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
        return out;
    }
    aclrtStream stream_ = nullptr;
    void *dst_ = nullptr;
    void *src_ = nullptr;
};

constexpr aclrtReduceKind kSum = ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM;
constexpr aclrtReduceKind kMax = ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX;
constexpr aclrtReduceKind kMin = ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN;

TEST_F(AclReduceTest, IntegersAreSummedWrappingAndComparedSigned)
{
    EXPECT_EQ((std::vector<int8_t>{-56, 0, -128, 5}),
              Reduce<int8_t>({100, -1, 127, 2}, {100, 1, 1, 3}, kSum, ACL_INT8));
    EXPECT_EQ((std::vector<int8_t>{100, 1, 127, 3}), Reduce<int8_t>({100, -1, 127, 2}, {-100, 1, 1, 3}, kMax, ACL_INT8));
    EXPECT_EQ((std::vector<int16_t>{-30000, -1, 7}),
              Reduce<int16_t>({-30000, 5, 7}, {30000, -1, 9}, kMin, ACL_INT16));
    EXPECT_EQ((std::vector<int32_t>{INT32_MIN, 3, -10}),
              Reduce<int32_t>({INT32_MAX, 1, -4}, {1, 2, -6}, kSum, ACL_INT32));
}

TEST_F(AclReduceTest, FloatsOfEachWidthAreCombinedAsFloats)
{
    EXPECT_EQ((std::vector<float>{3.5f, -1.0f, 1e30f}), Reduce<float>({1.25f, -3.0f, 1e30f}, {2.25f, 2.0f, 0.0f}, kSum, ACL_FLOAT));
    EXPECT_EQ((std::vector<float>{1.0f, -3.0f}), Reduce<float>({1.0f, -3.0f}, {2.0f, 5.0f}, kMin, ACL_FLOAT));
    // float16: 1.5 + 2.25 = 3.75 (0x4380), max(-2, 4) = 4 (0x4400).
    const uint16_t h15 = aclFloatToFloat16(1.5f), h225 = aclFloatToFloat16(2.25f);
    const uint16_t hm2 = aclFloatToFloat16(-2.0f), h4 = aclFloatToFloat16(4.0f);
    EXPECT_EQ((std::vector<uint16_t>{0x4380}), Reduce<uint16_t>({h15}, {h225}, kSum, ACL_FLOAT16));
    EXPECT_EQ((std::vector<uint16_t>{0x4400}), Reduce<uint16_t>({hm2}, {h4}, kMax, ACL_FLOAT16));
    // IEEE arithmetic: 60000 + 60000 overflows to infinity, a NaN stays.
    const uint16_t h60000 = 0x7B53, kInf = 0x7C00, kNaN = 0x7E00;
    EXPECT_EQ((std::vector<uint16_t>{kInf, kInf}), Reduce<uint16_t>({h60000, kInf}, {h60000, h4}, kSum, ACL_FLOAT16));
    EXPECT_EQ((std::vector<uint16_t>{kNaN, kNaN}), Reduce<uint16_t>({kNaN, h4}, {h4, kNaN}, kMax, ACL_FLOAT16));
    // bfloat16 is a float's upper half: 1.0 (0x3F80) + 2.0 (0x4000) = 3.0 (0x4040).
    EXPECT_EQ((std::vector<uint16_t>{0x4040, 0xBF80}),
              Reduce<uint16_t>({0x3F80, 0xC000}, {0x4000, 0x3F80}, kSum, ACL_BF16));
}

// CANN's reduce sample: one buffer reduced into itself doubles it.
TEST_F(AclReduceTest, ABufferReducedIntoItselfAsInCANNsSample)
{
    const float in[4] = {1, 2, 3, 4};
    float out[4] = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(dst_, kBytes, in, sizeof(in), ACL_MEMCPY_HOST_TO_DEVICE));
    {
        Gate gate; // queued behind other work: it runs when the stream gets there
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream_));
        ASSERT_EQ(ACL_SUCCESS, aclrtReduceAsync(dst_, dst_, sizeof(in), kSum, ACL_FLOAT, stream_, nullptr));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(out, sizeof(out), dst_, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT_EQ(1.0f, out[0]);
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(out, sizeof(out), dst_, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(2.0f, out[0]);
    EXPECT_EQ(4.0f, out[1]);
    EXPECT_EQ(6.0f, out[2]);
    EXPECT_EQ(8.0f, out[3]);
}

TEST_F(AclReduceTest, MisuseGetsCANNsCodes)
{
    int reserve = 0;
    std::vector<uint8_t> host(kBytes);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReduceAsync(nullptr, src_, 4, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReduceAsync(dst_, nullptr, 4, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReduceAsync(dst_, src_, 4, kSum, ACL_FLOAT, stream_, &reserve));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtReduceAsync(dst_, src_, 4, kSum, ACL_DOUBLE, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReduceAsync(dst_, src_, 0, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtReduceAsync(dst_, src_, 4, RawEnum<aclrtReduceKind>(9), ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtReduceAsync(dst_, src_, (4ULL << 30) + 4, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtReduceAsync(dst_, src_, 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtReduceAsync(dst_, src_, 4, kSum, ACL_UINT32, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReduceAsync(dst_, src_, 6, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_ADDR_UNALIGNED,
              aclrtReduceAsync(static_cast<char *>(dst_) + 2, src_, 4, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReduceAsync(host.data(), src_, 4, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReduceAsync(dst_, src_, kBytes + 4, kSum, ACL_FLOAT, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtReduceAsync(dst_, static_cast<char *>(dst_) + 4, 8, kSum, ACL_FLOAT,
                                                           stream_, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
}

} // namespace
