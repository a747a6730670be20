// SPDX-License-Identifier: MIT
// Batch copies (aclrt_memory(3)): many host-device copies in one call, at
// once or in a stream's order, each checked against where its attributes
// say its memory lies, with CANN's codes and failIndex.
#include "acl_test_util.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace acltest;

namespace {

class AclMemcpyBatchTest : public AclTest {};

constexpr size_t kSize = 4096;

aclrtMemLocation Host()
{
    aclrtMemLocation l = {};
    l.type = ACL_MEM_LOCATION_TYPE_HOST;
    return l;
}

aclrtMemLocation Device0()
{
    aclrtMemLocation l = {};
    l.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    l.id = 0;
    return l;
}

// Two copies to the device from two host buffers, then one back: attrs[0]
// covers copies 0 and 1, attrs[1] copy 2.
struct ThreeCopies {
    std::vector<uint8_t> a = std::vector<uint8_t>(kSize, 0xA1), b = std::vector<uint8_t>(kSize, 0xB2),
                         back = std::vector<uint8_t>(kSize, 0xEE);
    void *d1 = nullptr, *d2 = nullptr;
    void *dsts[3];
    void *srcs[3];
    size_t sizes[3] = {kSize, kSize, kSize};
    size_t destMaxs[3] = {kSize, kSize, kSize};
    aclrtMemcpyBatchAttr attrs[2];
    size_t indexes[2] = {0, 2};

    ThreeCopies()
    {
        EXPECT_EQ(ACL_SUCCESS, aclrtMalloc(&d1, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        EXPECT_EQ(ACL_SUCCESS, aclrtMalloc(&d2, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        dsts[0] = d1, srcs[0] = a.data();
        dsts[1] = d2, srcs[1] = b.data();
        // Copy 2 reads d1, which copy 0 wrote: the batch copies in order here.
        dsts[2] = back.data(), srcs[2] = d1;
        std::memset(attrs, 0, sizeof(attrs));
        attrs[0].dstLoc = Device0(), attrs[0].srcLoc = Host();
        attrs[1].dstLoc = Host(), attrs[1].srcLoc = Device0();
    }
    ~ThreeCopies()
    {
        aclrtFree(d1);
        aclrtFree(d2);
    }
};

TEST_F(AclMemcpyBatchTest, ASynchronousBatchMakesEveryCopyBeforeReturning)
{
    ThreeCopies c;
    size_t fail_index = 7;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2,
                                            &fail_index));
    EXPECT_EQ(SIZE_MAX, fail_index);
    EXPECT_TRUE(BytesAre(c.d1, kSize, 0xA1));
    EXPECT_TRUE(BytesAre(c.d2, kSize, 0xB2));
    EXPECT_TRUE(BytesAre(c.back.data(), kSize, 0xA1));
    std::fill(c.back.begin(), c.back.end(), 0xEE);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyBatchV2(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2));
    EXPECT_TRUE(BytesAre(c.back.data(), kSize, 0xA1));
}

TEST_F(AclMemcpyBatchTest, AnAsynchronousBatchRunsInTheStreamsOrder)
{
    ThreeCopies c;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    size_t fail_index = 7;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyBatchAsync(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2,
                                                 &fail_index, stream));
    EXPECT_EQ(SIZE_MAX, fail_index);
    EXPECT_TRUE(BytesAre(c.back.data(), kSize, 0xEE)); // queued, not made
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(c.d2, kSize, 0xB2));
    EXPECT_TRUE(BytesAre(c.back.data(), kSize, 0xA1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyBatchAsyncV2(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2,
                                                   stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclMemcpyBatchTest, BatchesRefuseWhatCannRefusesNamingTheCopy)
{
    ThreeCopies c;
    size_t fail_index = 7;
    auto run = [&]() {
        fail_index = 7;
        return aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2, &fail_index);
    };
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, nullptr, 3, c.attrs, c.indexes, 2, &fail_index));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, c.sizes, 0, c.attrs, c.indexes, 2, &fail_index));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, nullptr, c.indexes, 2, &fail_index));
    // Nothing to copy: nothing else checked.
    size_t zeros[3] = {0, 0, 0};
    EXPECT_EQ(ACL_SUCCESS, aclrtMemcpyBatch(nullptr, nullptr, nullptr, zeros, 3, nullptr, nullptr, 0, &fail_index));
    EXPECT_EQ(SIZE_MAX, fail_index);
    c.destMaxs[1] = kSize - 1;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, run());
    c.destMaxs[1] = kSize;
    c.attrs[1].rsv[3] = 1;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, run());
    c.attrs[1].rsv[3] = 0;
    fail_index = 7;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemcpyBatch(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 0, &fail_index));
    EXPECT_EQ(SIZE_MAX, fail_index);
    c.indexes[0] = 1;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, run());
    c.indexes[0] = 0;
    c.indexes[1] = 3; // past the last copy
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, run());
    c.indexes[1] = 2;
    // Copy 1's memory is not where attrs[0] says: refused, by index, before
    // any copy is made (copy 0 would have written d1).
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(c.d1, kSize, 0x3C, kSize));
    c.dsts[1] = c.b.data();
    c.srcs[1] = c.d2;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, run());
    EXPECT_EQ(1u, fail_index);
    EXPECT_TRUE(BytesAre(c.d1, kSize, 0x3C));
    // An attribute never says UNREGISTERED: the application's memory is host.
    c.dsts[1] = c.d2;
    c.srcs[1] = c.b.data();
    c.attrs[0].srcLoc.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, run());
    EXPECT_EQ(0u, fail_index);
    c.attrs[0].srcLoc = Host();
    // Host to host, where attrs say host on both sides: not a batch copy.
    c.attrs[1].srcLoc = Host();
    c.srcs[2] = c.a.data();
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, run());
    EXPECT_EQ(2u, fail_index);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtMemcpyBatchAsync(c.dsts, c.destMaxs, c.srcs, c.sizes, 3, c.attrs, c.indexes, 2, &fail_index,
                                    reinterpret_cast<aclrtStream>(0x1234)));
}

} // namespace
