// SPDX-License-Identifier: MIT
// 2-D copies (aclrt_memory(3)): rows with pitches between host and device
// memory, at once and in a stream's order, with CANN's codes.
#include "acl_test_util.h"

#include <cstring>
#include <vector>

using namespace acltest;

namespace {

class AclMemcpy2dTest : public AclTest {};

constexpr size_t kWidth = 100, kHeight = 37, kHostPitch = 128, kDevPitch = 256;

// Host rows: row r holds bytes r*7+c; the padding after each row 0xEE.
std::vector<uint8_t> PatternRows(size_t pitch)
{
    std::vector<uint8_t> v(pitch * kHeight, 0xEE);
    for (size_t r = 0; r < kHeight; r++)
        for (size_t c = 0; c < kWidth; c++)
            v[r * pitch + c] = static_cast<uint8_t>(r * 7 + c);
    return v;
}

// Whether `p` holds the pattern's rows at `pitch`, with `pad` after each.
::testing::AssertionResult HoldsRows(const uint8_t *p, size_t pitch, uint8_t pad)
{
    for (size_t r = 0; r < kHeight; r++)
        for (size_t c = 0; c < pitch && r * pitch + c < pitch * (kHeight - 1) + kWidth; c++) {
            uint8_t want = c < kWidth ? static_cast<uint8_t>(r * 7 + c) : pad;
            if (p[r * pitch + c] != want)
                return ::testing::AssertionFailure()
                       << "row " << r << " byte " << c << " is " << int(p[r * pitch + c]) << ", not " << int(want);
        }
    return ::testing::AssertionSuccess();
}

TEST_F(AclMemcpy2dTest, RowsGoToTheDeviceAndBackWithTheirPitchesAndThePaddingUntouched)
{
    void *d = nullptr;
    const size_t dev_bytes = kDevPitch * kHeight;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, dev_bytes, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, dev_bytes, 0x55, dev_bytes));
    std::vector<uint8_t> host = PatternRows(kHostPitch);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2d(d, kDevPitch, host.data(), kHostPitch, kWidth, kHeight,
                                         ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_TRUE(HoldsRows(static_cast<uint8_t *>(d), kDevPitch, 0x55));
    std::vector<uint8_t> back(kHostPitch * kHeight, 0xEE);
    // DEFAULT: the kind from where the memory lies.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2d(back.data(), kHostPitch, d, kDevPitch, kWidth, kHeight,
                                         ACL_MEMCPY_DEFAULT));
    EXPECT_TRUE(HoldsRows(back.data(), kHostPitch, 0xEE));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemcpy2dTest, Memcpy2dRefusesWhatCannRefusesWithItsCodes)
{
    void *d = nullptr, *e = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kDevPitch * kHeight, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&e, kDevPitch * kHeight, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, kDevPitch * kHeight, 0, kDevPitch * kHeight));
    std::vector<uint8_t> host = PatternRows(kHostPitch);
    const auto h2d = ACL_MEMCPY_HOST_TO_DEVICE;
    // Nothing to copy: nothing checked.
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy2d(nullptr, 0, nullptr, 0, 0, kHeight, h2d));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy2d(nullptr, 0, nullptr, 0, kWidth, 0, h2d));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy2d(nullptr, kDevPitch, host.data(), kHostPitch, kWidth, kHeight, h2d));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy2d(d, kDevPitch, nullptr, kHostPitch, kWidth, kHeight, h2d));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy2d(d, kWidth - 1, host.data(), kHostPitch, kWidth, kHeight, h2d));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemcpy2d(d, kDevPitch, host.data(), kWidth - 1, kWidth, kHeight, h2d));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpy2d(d, kDevPitch, host.data(), kHostPitch, kWidth, kHeight, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpy2d(d, kDevPitch, host.data(), kHostPitch, kWidth, 5 * 1024 * 1024 + 1, h2d));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtMemcpy2d(e, kDevPitch, d, kDevPitch, kWidth, kHeight, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy2d(e, kDevPitch, d, kDevPitch, kWidth, kHeight, h2d));
    std::vector<uint8_t> other(kHostPitch * kHeight);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpy2d(other.data(), kHostPitch, host.data(), kHostPitch, kWidth, kHeight, ACL_MEMCPY_DEFAULT));
    // A kind the pointers contradict: refused for the application's own
    // host memory, corrected for aclrtMallocHost's, as CANN.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemcpy2d(d, kDevPitch, host.data(), kHostPitch, kWidth, kHeight,
                                                        ACL_MEMCPY_DEVICE_TO_HOST));
    void *pinned = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&pinned, kHostPitch * kHeight));
    std::memcpy(pinned, host.data(), kHostPitch * kHeight);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy2d(d, kDevPitch, pinned, kHostPitch, kWidth, kHeight, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(HoldsRows(static_cast<uint8_t *>(d), kDevPitch, 0x0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(pinned));
    // The rows run past the end of the allocation.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpy2d(d, kDevPitch * 2, host.data(), kHostPitch, kWidth, kHeight, h2d));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(e));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

// Queued behind a gate, each direction waits for the stream; the host
// source is read at the call, so the caller may reuse it at once.
TEST_F(AclMemcpy2dTest, AsyncCopiesRunInStreamOrderInEveryDirection)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    void *d = nullptr, *e = nullptr;
    const size_t dev_bytes = kDevPitch * kHeight;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, dev_bytes, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&e, dev_bytes, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(d, dev_bytes, 0x55, dev_bytes));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(e, dev_bytes, 0x66, dev_bytes));
    std::vector<uint8_t> host = PatternRows(kHostPitch);
    std::vector<uint8_t> back(kHostPitch * kHeight, 0xEE);

    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2dAsync(d, kDevPitch, host.data(), kHostPitch, kWidth, kHeight,
                                              ACL_MEMCPY_HOST_TO_DEVICE, stream));
    std::fill(host.begin(), host.end(), 0); // read at the call
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2dAsync(e, kDevPitch, d, kDevPitch, kWidth, kHeight,
                                              ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2dAsync(back.data(), kHostPitch, e, kDevPitch, kWidth, kHeight,
                                              ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_TRUE(BytesAre(d, dev_bytes, 0x55)); // nothing ran yet
    EXPECT_TRUE(BytesAre(back.data(), back.size(), 0xEE));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(HoldsRows(static_cast<uint8_t *>(d), kDevPitch, 0x55));
    EXPECT_TRUE(HoldsRows(static_cast<uint8_t *>(e), kDevPitch, 0x66));
    EXPECT_TRUE(HoldsRows(back.data(), kHostPitch, 0xEE));

    // On an idle stream, at once.
    std::fill(back.begin(), back.end(), 0xEE);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2dAsync(back.data(), kHostPitch, d, kDevPitch, kWidth, kHeight,
                                              ACL_MEMCPY_DEVICE_TO_HOST, stream));
    EXPECT_TRUE(HoldsRows(back.data(), kHostPitch, 0xEE));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(e));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

TEST_F(AclMemcpy2dTest, AsyncCopiesRefuseBadStreamsAndArgumentsWithCannsCodes)
{
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, kDevPitch * kHeight, ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<uint8_t> host = PatternRows(kHostPitch);
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy2dAsync(nullptr, 0, nullptr, 0, 0, 0, ACL_MEMCPY_HOST_TO_DEVICE, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtMemcpy2dAsync(d, kDevPitch, host.data(), kHostPitch, kWidth, kHeight, ACL_MEMCPY_HOST_TO_DEVICE,
                                 reinterpret_cast<aclrtStream>(0x1234)));
    // The stream is looked at before the limits, as CANN.
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtMemcpy2dAsync(d, 5000001, host.data(), 5000001, 5000001, 1, ACL_MEMCPY_HOST_TO_DEVICE,
                                 reinterpret_cast<aclrtStream>(0x1234)));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpy2dAsync(d, kWidth - 1, host.data(), kHostPitch, kWidth, kHeight, ACL_MEMCPY_HOST_TO_DEVICE,
                                 nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpy2dAsync(d, 5000001, host.data(), 5000001, 5000001, 1, ACL_MEMCPY_HOST_TO_DEVICE,
                                 nullptr));
    // The default stream takes it.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy2dAsync(d, kDevPitch, host.data(), kHostPitch, kWidth, kHeight,
                                              ACL_MEMCPY_HOST_TO_DEVICE, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr));
    EXPECT_EQ(static_cast<uint8_t *>(d)[kDevPitch + 1], static_cast<uint8_t>(7 + 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
}

} // namespace
