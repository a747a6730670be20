// SPDX-License-Identifier: MIT
// Managed memory (aclrt_managed(3)): one pointer the host and the device's
// work both reach; advice and prefetches kept per 2 MiB chunk and reported
// by the attribute queries; CANN's codes. Also the smaller memory calls of
// aclrt_memory(3) a mock NPU answers plainly: no uncorrectable errors to
// report or repair, task-scheduler memory as any device memory.
#include "acl_test_util.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kChunk = 2 << 20;

class AclManagedTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream_));
        ASSERT_EQ(ACL_SUCCESS, aclrtMemAllocManaged(&managed_, 3 * kChunk - 100, ACL_RT_MEM_ATTACH_GLOBAL));
    }
    void TearDown() override
    {
        if (managed_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(managed_));
        }
        if (stream_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream_));
        }
        AclTest::TearDown();
    }
    char *Chunk(size_t i) { return static_cast<char *>(managed_) + i * kChunk; }
    int32_t IntAttr(aclrtMemManagedRangeAttribute a, const void *p, size_t size)
    {
        int32_t v = 12345;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemManagedGetAttr(a, p, size, &v, sizeof(v)));
        return v;
    }
    aclrtMemManagedLocationType TypeAttr(aclrtMemManagedRangeAttribute a, const void *p, size_t size)
    {
        aclrtMemManagedLocationType t = RawEnum<aclrtMemManagedLocationType>(99);
        EXPECT_EQ(ACL_SUCCESS, aclrtMemManagedGetAttr(a, p, size, &t, sizeof(t)));
        return t;
    }
    std::vector<int32_t> AccessedBy(const void *p, size_t size, size_t slots = 4)
    {
        std::vector<int32_t> v(slots, 12345);
        EXPECT_EQ(ACL_SUCCESS, aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, size, v.data(),
                                                      slots * sizeof(int32_t)));
        return v;
    }
    aclrtStream stream_ = nullptr;
    void *managed_ = nullptr; // three chunks
};

const aclrtMemManagedLocation kHost = {ACL_MEM_LOCATIONTYPE_HOST, 0};
const aclrtMemManagedLocation kDevice0 = {ACL_MEM_LOCATIONTYPE_DEVICE, 0};

TEST_F(AclManagedTest, OnePointerIsReachedByTheHostAndTheDevicesWork)
{
    const size_t n = 3 * kChunk - 100;
    FillPattern(managed_, n, 7); // the host writes through the pointer
    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, n, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(dev, n, managed_, n, ACL_MEMCPY_DEVICE_TO_DEVICE, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(managed_, n, 0x5A, kChunk, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(BytesAre(managed_, kChunk, 0x5A)); // the host reads what the device set
    std::vector<uint8_t> back(n);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(back.data(), n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(HasPattern(back.data(), n, 7));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

TEST_F(AclManagedTest, AdviceIsKeptPerChunkAndReportedForWholeRanges)
{
    const size_t all = 3 * kChunk;
    EXPECT_EQ(0, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed_, all));
    EXPECT_EQ(-2, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed_, all));
    EXPECT_EQ(ACL_MEM_LOCATIONTYPE_INVALID, TypeAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, managed_, all));
    EXPECT_EQ((std::vector<int32_t>{-2, -2, -2, -2}), AccessedBy(managed_, all));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(managed_, 2 * kChunk, ACL_MEM_ADVISE_SET_READ_MOSTLY, kHost));
    EXPECT_EQ(1, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, Chunk(1) + 5, 10));
    EXPECT_EQ(0, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed_, all));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(managed_, all, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, kDevice0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(Chunk(2), kChunk, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, kHost));
    EXPECT_EQ(0, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed_, 2 * kChunk));
    EXPECT_EQ(ACL_MEM_LOCATIONTYPE_DEVICE, TypeAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, managed_, kChunk));
    EXPECT_EQ(0, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, managed_, kChunk));
    EXPECT_EQ(-1, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, Chunk(2), kChunk));
    EXPECT_EQ(ACL_MEM_LOCATIONTYPE_HOST, TypeAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, Chunk(2), 1));
    EXPECT_EQ(-2, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed_, all)); // they differ
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(managed_, all, ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, kHost));
    EXPECT_EQ(-2, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, Chunk(2), 1));

    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(managed_, all, ACL_MEM_ADVISE_SET_ACCESSED_BY, kDevice0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(managed_, kChunk, ACL_MEM_ADVISE_SET_ACCESSED_BY, kHost));
    EXPECT_EQ((std::vector<int32_t>{0, -1, -2, -2}), AccessedBy(managed_, kChunk)); // devices first
    EXPECT_EQ((std::vector<int32_t>{0, -2, -2, -2}), AccessedBy(managed_, all)); // advised for all of it
    EXPECT_EQ((std::vector<int32_t>{0}), AccessedBy(managed_, kChunk, 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedAdvise(managed_, all, ACL_MEM_ADVISE_UNSET_ACCESSED_BY, kDevice0));
    EXPECT_EQ((std::vector<int32_t>{-1, -2}), AccessedBy(managed_, kChunk, 2));
}

TEST_F(AclManagedTest, PrefetchesRecordTheirLastLocation)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedPrefetchAsync(managed_, 3 * kChunk, kDevice0, 0, stream_));
    EXPECT_EQ(0, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, managed_, 3 * kChunk));
    const void *ptrs[3] = {Chunk(0), Chunk(1), Chunk(2)};
    size_t sizes[3] = {kChunk, kChunk, kChunk};
    aclrtMemManagedLocation locs[2] = {kHost, kDevice0};
    size_t idxs[2] = {0, 2};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 3, locs, idxs, 2, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_EQ(-1, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, managed_, 2 * kChunk));
    EXPECT_EQ(ACL_MEM_LOCATIONTYPE_DEVICE, TypeAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, Chunk(2), 1));

    // Several attributes at once.
    aclrtMemManagedRangeAttribute attrs[2] = {ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
                                              ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY};
    int32_t id = 99, mostly = 99;
    void *data[2] = {&id, &mostly};
    size_t data_sizes[2] = {4, 4};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemManagedGetAttrs(attrs, 2, Chunk(2), kChunk, data, data_sizes));
    EXPECT_EQ(0, id);
    EXPECT_EQ(0, mostly);
}

TEST_F(AclManagedTest, MisuseGetsCANNsCodesAndChangesNothing)
{
    void *p = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemAllocManaged(nullptr, kChunk, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemAllocManaged(&p, kChunk, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemAllocManaged(&p, 0, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, aclrtMemAllocManaged(&p, (3ULL << 40) + 1, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_EQ(nullptr, p);

    const aclrtMemManagedAdviseType kSet = ACL_MEM_ADVISE_SET_PREFERRED_LOCATION;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedAdvise(nullptr, kChunk, kSet, kHost));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedAdvise(managed_, 0, kSet, kHost));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedAdvise(managed_, kChunk, RawEnum<aclrtMemManagedAdviseType>(6), kHost));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedAdvise(managed_, kChunk - 4096, kSet, kHost));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedAdvise(Chunk(0) + 4096, kChunk, kSet, kHost));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedAdvise(managed_, 4 * kChunk, kSet, kHost));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedAdvise(managed_, kChunk, kSet, {ACL_MEM_LOCATIONTYPE_DEVICE, 99}));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedAdvise(managed_, kChunk, kSet, {ACL_MEM_LOCATIONTYPE_INVALID, 0}));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedAdvise(managed_, kChunk, kSet, {ACL_MEM_LOCATIONTYPE_HOST_NUMA, 4096}));
    void *plain = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&plain, kChunk, ACL_MEM_MALLOC_HUGE_ONLY));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedAdvise(plain, kChunk, kSet, kHost));
    EXPECT_EQ(-2, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, managed_, 3 * kChunk)); // nothing changed

    int32_t v = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed_, kChunk, nullptr, 4));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed_, 0, &v, 4));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedGetAttr(RawEnum<aclrtMemManagedRangeAttribute>(0), managed_, kChunk, &v, 4));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedGetAttr(RawEnum<aclrtMemManagedRangeAttribute>(9), managed_, kChunk, &v, 4));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed_, kChunk, &v, 8));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, managed_, kChunk, &v, 6));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, plain, kChunk, &v, 4));

    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedPrefetchAsync(managed_, kChunk, kHost, 1, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemManagedPrefetchAsync(managed_, kChunk, {ACL_MEM_LOCATIONTYPE_INVALID, 0}, 0, stream_));
    const void *ptrs[2] = {Chunk(0), Chunk(1)};
    size_t sizes[2] = {kChunk, kChunk};
    aclrtMemManagedLocation locs[2] = {kHost, kDevice0};
    size_t idxs[2] = {0, 1};
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 0, locs, idxs, 1, 0, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 1, locs, idxs, 2, 0, stream_));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 1, stream_));
    idxs[0] = 1;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, stream_));
    idxs[0] = 0;
    idxs[1] = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, stream_));
    idxs[1] = 1;
    sizes[1] = 4096;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, stream_));
    // All checked before any is recorded.
    EXPECT_EQ(-2, IntAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, managed_, kChunk));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(plain));
}

TEST_F(AclManagedTest, NoUncorrectableErrorsAndTaskSchedulerMemoryIsDeviceMemory)
{
    aclrtMemUceInfo info[ACL_RT_MEM_UCE_INFO_MAX_NUM + 1] = {};
    size_t count = 99;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetMemUceInfo(0, info, ACL_RT_MEM_UCE_INFO_MAX_NUM, &count));
    EXPECT_EQ(0u, count);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemUceInfo(0, nullptr, 1, &count));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetMemUceInfo(0, info, 1, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtGetMemUceInfo(99, info, 1, &count));
    info[0].addr = managed_;
    info[0].len = kChunk;
    EXPECT_EQ(ACL_SUCCESS, aclrtMemUceRepair(0, info, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemUceRepair(0, nullptr, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemUceRepair(0, info, ACL_RT_MEM_UCE_INFO_MAX_NUM + 1));
    info[0].reserved[13] = 1;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemUceRepair(0, info, 1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtMemUceRepair(99, info, 0));

    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocForTaskScheduler(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(p, 4096, 0x33, 4096));
    std::vector<uint8_t> back(4096);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(back.data(), 4096, p, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(BytesAre(back.data(), 4096, 0x33));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocForTaskScheduler(nullptr, 4096, ACL_MEM_MALLOC_HUGE_FIRST, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocForTaskScheduler(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST, nullptr));
    aclrtMallocConfig cfg = {nullptr, 0};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMallocForTaskScheduler(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
}

} // namespace
