// SPDX-License-Identifier: MIT
// The smaller memory calls of aclrt_memory(3): 32-bit sets (the driver's
// word fill in stream order), cached memory, frees after a device
// synchronize, cache maintenance, memory types, and the primary context's
// state (aclrt_device(3)), each with CANN's codes.
#include "acl_test_util.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kSize = 64 * 1024;
constexpr int32_t kHeldMs = 100;

class AclMemoryMiscTest : public AclTest {
protected:
    std::vector<uint32_t> ReadWords(const void *src, size_t n)
    {
        std::vector<uint32_t> out(n);
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(out.data(), n * 4, src, n * 4, ACL_MEMCPY_DEVICE_TO_HOST));
        return out;
    }
};

TEST_F(AclMemoryMiscTest, MemsetD32SetsEachWordOfDeviceAndHostMemoryAndNothingBeside)
{
    void *dev = nullptr, *host = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, kSize));
    for (void *mem : {dev, host}) {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mem, kSize, 0xee, kSize));
        auto *words = static_cast<uint32_t *>(mem);
        ASSERT_EQ(ACL_SUCCESS, aclrtMemsetD32(words + 1, kSize - 4, 0xdeadbeef, 3000));
        std::vector<uint32_t> got(3002);
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(got.data(), got.size() * 4, mem, got.size() * 4,
                                           mem == dev ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_HOST_TO_HOST));
        EXPECT_EQ(0xeeeeeeeeu, got.front());
        EXPECT_EQ(0xeeeeeeeeu, got.back());
        for (size_t i = 1; i <= 3000; i++)
            ASSERT_EQ(0xdeadbeefu, got[i]) << "word " << i;
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

TEST_F(AclMemoryMiscTest, MemsetD32AsyncSetsDeviceWordsInStreamOrderAndHostWordsAtTheCall)
{
    void *dev = nullptr, *host = nullptr;
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, kSize));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(dev, kSize, 0, kSize));
    auto *gate = static_cast<uint64_t *>(dev);
    auto *words = static_cast<uint32_t *>(dev) + 1024;
    // Held behind a wait for the gate word: the words are not set yet.
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(gate, 1, ACL_STREAM_WAIT_VALUE_EQ, s));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetD32Async(words, kSize - 4096, 0x01020304, 4096, s));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetD32Async(host, kSize, 0x0a0b0c0d, 16, s));
    EXPECT_EQ(0x0a0b0c0du, static_cast<uint32_t *>(host)[15]);
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(s, kHeldMs));
    EXPECT_EQ(0u, ReadWords(words, 1)[0]);
    const uint64_t one = 1;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(gate, 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    std::vector<uint32_t> got = ReadWords(words, 4097);
    for (size_t i = 0; i < 4096; i++)
        ASSERT_EQ(0x01020304u, got[i]) << "word " << i;
    EXPECT_EQ(0u, got[4096]);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

TEST_F(AclMemoryMiscTest, MemsetD32RefusesWhatCannRefuses)
{
    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(dev, kSize, 0, kSize));
    char *bytes = static_cast<char *>(dev);
    uint32_t on_stack[4] = {};
    int not_a_stream = 0;
    // N of 0 succeeds before the pointer is looked at.
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetD32(nullptr, 0, 1, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemsetD32Async(nullptr, 0, 1, 0, nullptr));
    for (bool async : {false, true}) {
        SCOPED_TRACE(async);
        auto set = [&](void *p, size_t memSize, size_t n, aclrtStream st = nullptr) {
            return async ? aclrtMemsetD32Async(p, memSize, 7, n, st) : aclrtMemsetD32(p, memSize, 7, n);
        };
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, set(nullptr, 16, 4));
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, set(bytes + 2, 16, 4));
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, set(dev, 15, 4));
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, set(dev, SIZE_MAX, SIZE_MAX / 2));
        EXPECT_EQ(ACL_ERROR_INVALID_PARAM, set(on_stack, sizeof(on_stack), 4));
        // Past the end of its allocation.
        EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, set(bytes + kSize - 8, 16, 4));
        if (async) {
            EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, set(dev, 16, 4, &not_a_stream));
        }
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(nullptr));
    EXPECT_EQ(0u, ReadWords(dev, 1)[0]);
    EXPECT_EQ(0u, on_stack[0]);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

TEST_F(AclMemoryMiscTest, MallocCachedIsDeviceMemoryThatAclrtFreeFrees)
{
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocCached(&a, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocCached(&b, kSize, ACL_MEM_MALLOC_HUGE_FIRST_P2P));
    aclrtPtrAttributes attr = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtPointerGetAttributes(a, &attr));
    EXPECT_EQ(ACL_MEM_LOCATION_TYPE_DEVICE, attr.location.type);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(b, kSize, 0x33, kSize));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b));
    void *c = &c;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocCached(nullptr, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMallocCached(&c, 0, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(static_cast<void *>(&c), c);
}

TEST_F(AclMemoryMiscTest, FreesWithDevSyncWaitForTheDeviceFirst)
{
    void *gate_mem = nullptr, *dev = nullptr, *host = nullptr;
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&gate_mem, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    auto *gate = static_cast<uint64_t *>(gate_mem);
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    for (int round = 0; round < 2; round++) {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemset(gate_mem, kSize, 0, kSize));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, kSize));
        // The stream is held until another thread opens the gate: the
        // free must not return before that.
        ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(gate, 1, ACL_STREAM_WAIT_VALUE_EQ, s));
        std::atomic<bool> opened{false};
        std::thread opener([&] {
            aclrtSetCurrentContext(ctx);
            std::this_thread::sleep_for(std::chrono::milliseconds(kHeldMs));
            opened = true;
            const uint64_t one = 1;
            aclrtMemcpy(gate, 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE);
        });
        if (round == 0) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFreeWithDevSync(dev));
        } else {
            EXPECT_EQ(ACL_SUCCESS, aclrtFreeHostWithDevSync(host));
        }
        EXPECT_TRUE(opened.load());
        opener.join();
        if (round == 0) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
        } else {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
        }
    }
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFreeWithDevSync(nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtFreeHostWithDevSync(nullptr));
    int not_mine = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFreeWithDevSync(&not_mine));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFreeHostWithDevSync(&not_mine));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(gate_mem));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

TEST_F(AclMemoryMiscTest, CacheOperationsCheckTheirArgumentsAndAContext)
{
    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemFlush(dev, kSize));
    EXPECT_EQ(ACL_SUCCESS, aclrtMemInvalidate(dev, 4096));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemFlush(nullptr, kSize));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemInvalidate(nullptr, kSize));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemFlush(dev, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtMemInvalidate(dev, 0));
    aclError flush = ACL_SUCCESS, invalidate = ACL_SUCCESS;
    std::thread t([&] {
        flush = aclrtMemFlush(dev, kSize);
        invalidate = aclrtMemInvalidate(dev, kSize);
    });
    t.join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, flush);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, invalidate);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

TEST_F(AclMemoryMiscTest, CheckMemTypeSaysWhetherEveryAddressIsOfTheTypes)
{
    void *a = nullptr, *b = nullptr, *host = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&b, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host, kSize));
    void *devices[] = {a, static_cast<char *>(b) + 100};
    void *mixed[] = {a, host};
    uint32_t result = 7;
    EXPECT_EQ(ACL_SUCCESS, aclrtCheckMemType(devices, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    EXPECT_EQ(1u, result);
    EXPECT_EQ(ACL_SUCCESS, aclrtCheckMemType(devices, 2, ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP, &result, 0));
    EXPECT_EQ(1u, result);
    EXPECT_EQ(ACL_SUCCESS, aclrtCheckMemType(mixed, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    EXPECT_EQ(0u, result);
    EXPECT_EQ(ACL_SUCCESS, aclrtCheckMemType(devices, 2, ACL_RT_MEM_TYPE_DVPP, &result, 0));
    EXPECT_EQ(0u, result);
    EXPECT_EQ(ACL_SUCCESS, aclrtCheckMemType(devices, 2, 0x20, &result, 0)); // reserved addresses
    EXPECT_EQ(0u, result);
    // Refusals leave 0 once the result pointer is known.
    result = 7;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCheckMemType(devices, 2, ACL_RT_MEM_TYPE_RSVD, &result, 0));
    EXPECT_EQ(0u, result);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCheckMemType(devices, 2, ACL_RT_MEM_TYPE_DEV, &result, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCheckMemType(devices, 0, ACL_RT_MEM_TYPE_DEV, &result, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCheckMemType(nullptr, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCheckMemType(devices, 2, ACL_RT_MEM_TYPE_DEV, nullptr, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
}

TEST_F(AclMemoryMiscTest, PrimaryContextStateIsWhetherTheDeviceIsSet)
{
    int32_t active = -1;
    uint32_t flags = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetPrimaryCtxState(0, nullptr, &active));
    EXPECT_EQ(1, active);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetPrimaryCtxState(0, &flags, &active));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetPrimaryCtxState(0, nullptr, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtGetPrimaryCtxState(-1, nullptr, &active));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID,
              aclrtGetPrimaryCtxState(static_cast<int32_t>(device_count_), nullptr, &active));
    if (device_count_ < 2)
        return;
    // Device 1 is not set: asking does not set it.
    EXPECT_EQ(ACL_SUCCESS, aclrtGetPrimaryCtxState(1, nullptr, &active));
    EXPECT_EQ(0, active);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, aclrtResetDevice(1));
}

} // namespace
