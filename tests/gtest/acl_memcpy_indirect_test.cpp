// SPDX-License-Identifier: MIT
// Copies whose addresses are read from device memory when the stream gets
// there (aclrt_memory(3)): aclrtMemcpyAsyncWithOffset's base-address words
// and aclrtMemcpyAsyncWithDesc's descriptor, written by earlier work on the
// stream or changed between a captured model's runs; a bad address read at
// run time failing the copy; CANN's codes.
#include "acl_test_util.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kSize = 1 << 16;

class AclMemcpyIndirectTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream_));
        for (void *&p : mem_) {
            ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
            ASSERT_EQ(ACL_SUCCESS, aclrtMemset(p, kSize, 0, kSize));
        }
        std::vector<uint8_t> pattern(kSize);
        FillPattern(pattern.data(), kSize, 5);
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem_[0], kSize, pattern.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));
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
        if (stream_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream_));
        }
        AclTest::TearDown();
    }
    // The bytes of device memory `p`.
    std::vector<uint8_t> Read(const void *p, size_t n = kSize)
    {
        std::vector<uint8_t> out(n);
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(out.data(), n, p, n, ACL_MEMCPY_DEVICE_TO_HOST));
        return out;
    }
    // mem_[1] holds `count` bytes of the source pattern from `src_at` at
    // `dst_at`, and zeros elsewhere.
    ::testing::AssertionResult CopiedInto(size_t dst_at, size_t src_at, size_t count)
    {
        std::vector<uint8_t> got = Read(mem_[1]);
        for (size_t i = 0; i < kSize; i++) {
            uint8_t expected = i >= dst_at && i < dst_at + count ? PatternByte(i - dst_at + src_at, 5) : 0;
            if (got[i] != expected)
                return WrongByte(i, kSize, got[i], expected);
        }
        return ::testing::AssertionSuccess();
    }
    uint64_t *Word(size_t i) { return static_cast<uint64_t *>(mem_[2]) + i; }
    void *Desc() { return mem_[3]; }
    aclrtStream stream_ = nullptr;
    void *mem_[4] = {}; // source, destination, address words, descriptor
    aclmdlRI model_ = nullptr;
};

TEST_F(AclMemcpyIndirectTest, AnOffsetCopyReadsItsBaseAddressesWhenTheStreamGetsThere)
{
    {
        // The words are written by work queued before the copy, which
        // runs only once the gate opens: the copy sees what it wrote.
        Gate gate;
        ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream_));
        ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(0), reinterpret_cast<uintptr_t>(mem_[1]), 0, stream_));
        ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(1), reinterpret_cast<uintptr_t>(mem_[0]), 0, stream_));
        ASSERT_EQ(ACL_SUCCESS,
                  aclrtMemcpyAsyncWithOffset(reinterpret_cast<void **>(Word(0)), kSize, 100,
                                             const_cast<const void **>(reinterpret_cast<void **>(Word(1))), 1000, 50,
                                             ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
        ASSERT_EQ(ACL_SUCCESS, gate.Release());
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(CopiedInto(100, 50, 1000));
}

TEST_F(AclMemcpyIndirectTest, ADescriptorCopyCopiesWhatTheDescriptorSaysWhenItRuns)
{
    size_t size = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &size));
    EXPECT_EQ(32u, size);
    char *src = static_cast<char *>(mem_[0]), *dst = static_cast<char *>(mem_[1]);
    ASSERT_EQ(ACL_SUCCESS, aclrtSetMemcpyDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src + 7, dst + 300, 4096,
                                              nullptr));
    // CANN's layout: the length at byte 12, the source at 16, the destination at 24.
    std::vector<uint8_t> raw = Read(Desc(), 32);
    uint32_t length;
    uint64_t from, to;
    memcpy(&length, raw.data() + 12, 4);
    memcpy(&from, raw.data() + 16, 8);
    memcpy(&to, raw.data() + 24, 8);
    EXPECT_EQ(4096u, length);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(src + 7), from);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dst + 300), to);

    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(CopiedInto(300, 7, 4096));
}

// CANN's reason for descriptors: a captured model copies what the
// descriptor says at each run.
TEST_F(AclMemcpyIndirectTest, ACapturedDescriptorCopyFollowsTheDescriptorAtEachRun)
{
    char *src = static_cast<char *>(mem_[0]), *dst = static_cast<char *>(mem_[1]);
    ASSERT_EQ(ACL_SUCCESS, aclrtSetMemcpyDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src, dst, 512, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(stream_, &model_));
    EXPECT_TRUE(CopiedInto(0, 0, 0)); // captured, not run

    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(CopiedInto(0, 0, 512));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(dst, kSize, 0, kSize));
    ASSERT_EQ(ACL_SUCCESS,
              aclrtSetMemcpyDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src + 64, dst + 1024, 2048, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(CopiedInto(1024, 64, 2048));
}

TEST_F(AclMemcpyIndirectTest, ABadAddressReadAtRunTimeFailsTheCopyForTheNextSynchronize)
{
    std::vector<uint8_t> host(kSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(0), reinterpret_cast<uintptr_t>(host.data()), 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(1), reinterpret_cast<uintptr_t>(mem_[0]), 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithOffset(reinterpret_cast<void **>(Word(0)), kSize, 0,
                                                      const_cast<const void **>(reinterpret_cast<void **>(Word(1))),
                                                      kSize, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStream(stream_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_)); // reported once
    EXPECT_TRUE(BytesAre(host.data(), kSize, 0));

    // A descriptor whose range runs past its allocation's end.
    ASSERT_EQ(ACL_SUCCESS, aclrtSetMemcpyDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, mem_[0], mem_[1], kSize,
                                              nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(static_cast<uint64_t *>(Desc()) + 3,
                                           reinterpret_cast<uintptr_t>(mem_[1]) + 8, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithDesc(Desc(), ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(CopiedInto(0, 0, 0));
}

// STOP (aclrtSetStreamFailureMode): the failed copy stops the context as a
// failed job does, and its error stays for every later launch.
TEST_F(AclMemcpyIndirectTest, ABadAddressReadAtRunTimeStopsAContextThatStopsOnFailure)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtSetStreamFailureMode(stream_, ACL_STOP_ON_FAILURE));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(0), 0x1000, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(Word(1), reinterpret_cast<uintptr_t>(mem_[0]), 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithOffset(reinterpret_cast<void **>(Word(0)), kSize, 0,
                                                      const_cast<const void **>(reinterpret_cast<void **>(Word(1))),
                                                      kSize, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStream(stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemsetAsync(mem_[1], kSize, 1, kSize, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStream(stream_));
    // Destroyed all the same, with the context's error.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDestroyStream(stream_));
    stream_ = nullptr;
}

TEST_F(AclMemcpyIndirectTest, TheOffsetFormRefusesWhatCANNRefusesWithItsCodes)
{
    void **dst = reinterpret_cast<void **>(Word(0));
    const void **src = const_cast<const void **>(reinterpret_cast<void **>(Word(1)));
    const aclrtMemcpyKind kInner = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyAsyncWithOffset(nullptr, 0, 0, nullptr, 0, 0, ACL_MEMCPY_HOST_TO_HOST, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsyncWithOffset(dst, kSize, 0, src, 8, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpyAsyncWithOffset(nullptr, kSize, 0, src, 8, 0, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpyAsyncWithOffset(dst, kSize, 0, nullptr, 8, 0, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpyAsyncWithOffset(dst, 8, 0, src, 9, 0, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsyncWithOffset(dst, SIZE_MAX, 0, src, (4ULL << 30) + 1, 0, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsyncWithOffset(dst, kSize, 0, src, 8, 1ULL << 48, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpyAsyncWithOffset(dst, kSize, kSize, src, 8, 0, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsyncWithOffset(dst, kSize, kSize - 4, src, 8, 0, kInner, stream_));
    // The words themselves must be device memory of the stream's device.
    uint64_t host_words[2] = {0, 0};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyAsyncWithOffset(reinterpret_cast<void **>(&host_words[0]), kSize, 0, src, 8, 0, kInner,
                                         stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_)); // nothing was queued
}

TEST_F(AclMemcpyIndirectTest, TheDescriptorCallsRefuseWhatCANNRefusesWithItsCodes)
{
    const aclrtMemcpyKind kInner = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
    size_t size = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemcpyDescSize(kInner, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemcpyDescSize(RawEnum<aclrtMemcpyKind>(8), &size));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtGetMemcpyDescSize(ACL_MEMCPY_DEVICE_TO_DEVICE, &size));

    void *src = mem_[0], *dst = mem_[1];
    int config = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetMemcpyDesc(nullptr, kInner, src, dst, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetMemcpyDesc(Desc(), RawEnum<aclrtMemcpyKind>(8), src, dst, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetMemcpyDesc(Desc(), kInner, nullptr, dst, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetMemcpyDesc(Desc(), kInner, src, nullptr, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetMemcpyDesc(Desc(), kInner, src, dst, 0, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetMemcpyDesc(Desc(), kInner, src, dst, 8, &config));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtSetMemcpyDesc(Desc(), ACL_MEMCPY_DEVICE_TO_DEVICE, src, dst, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtSetMemcpyDesc(static_cast<char *>(Desc()) + 8, kInner, src, dst, 8, nullptr));
    std::vector<uint8_t> host(kSize);
    alignas(64) uint8_t host_desc[64];
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetMemcpyDesc(host_desc, kInner, src, dst, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetMemcpyDesc(Desc(), kInner, host.data(), dst, 8, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetMemcpyDesc(Desc(), kInner, src, dst, kSize + 1, nullptr));

    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpyAsyncWithDesc(nullptr, kInner, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpyAsyncWithDesc(Desc(), RawEnum<aclrtMemcpyKind>(9), stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpyAsyncWithDesc(Desc(), kInner, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtMemcpyAsyncWithDesc(Desc(), ACL_MEMCPY_DEVICE_TO_DEVICE, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpyAsyncWithDesc(host_desc, kInner, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
}

} // namespace
