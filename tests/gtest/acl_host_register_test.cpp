// SPDX-License-Identifier: MIT
// Host memory registration (aclrt_host_register(3)): registered host memory
// has a device address at which copies, sets and value tasks reach the
// process's own pages, seen by the process at its own address. CANN's
// codes for every misuse.
#include "acl_test_util.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kSize = 64 * 1024;

class AclHostRegisterTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s_));
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev_, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtMallocHost(&host_, kSize));
    }
    void TearDown() override
    {
        if (host_) {
            (void)aclrtHostUnregister(host_); // a test that failed half-way
            EXPECT_EQ(ACL_SUCCESS, aclrtFreeHost(host_));
        }
        if (dev_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev_));
        }
        if (s_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s_));
        }
        AclTest::TearDown();
    }
    uint8_t *Host() { return static_cast<uint8_t *>(host_); }

    aclrtStream s_ = nullptr;
    void *dev_ = nullptr;
    void *host_ = nullptr;
};

TEST_F(AclHostRegisterTest, TheDeviceAddressReachesTheProcesssOwnPages)
{
    void *mapped = nullptr;
    std::memset(host_, 0x3C, kSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtHostRegisterV2(host_, kSize, ACL_HOST_REG_MAPPED));
    ASSERT_EQ(ACL_SUCCESS, aclrtHostGetDevicePointer(host_, &mapped, 0));
    ASSERT_NE(nullptr, mapped);
    EXPECT_NE(host_, mapped);
    // The device reads what the process wrote (a copy job) ...
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpyAsync(dev_, kSize, mapped, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));
    std::vector<uint8_t> back(kSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(back.data(), kSize, dev_, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(BytesAre(back.data(), kSize, 0x3C));
    // ... and the process reads what the device wrote, at its own address.
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(static_cast<uint8_t *>(mapped) + 4096, 8192, 0xA5, 8192, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(Host() + 4096, 8192, 0xA5));
    EXPECT_TRUE(BytesAre(Host(), 4096, 0x3C));
    EXPECT_TRUE(BytesAre(Host() + 12288, kSize - 12288, 0x3C));
    // An address inside the range maps into it.
    void *inner = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtHostGetDevicePointer(Host() + 100, &inner, 0));
    EXPECT_EQ(static_cast<uint8_t *>(mapped) + 100, inner);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(mapped));
    ASSERT_EQ(ACL_SUCCESS, aclrtHostUnregister(host_));
}

TEST_F(AclHostRegisterTest, AValueTaskWritesAWordTheProcessPolls)
{
    // Memory of the process's heap, not page-aligned: the pages around it
    // are registered, and the device address keeps its offset.
    std::vector<uint64_t> words(1000, 0);
    void *mapped = nullptr;
    ASSERT_EQ(ACL_SUCCESS,
              aclrtHostRegister(words.data(), words.size() * 8, ACL_HOST_REGISTER_MAPPED, &mapped));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(words.data()) % 4096, reinterpret_cast<uintptr_t>(mapped) % 4096);
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(static_cast<uint64_t *>(mapped) + 7, 0x1234567890ULL, 0, s_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s_, kSyncTimeoutMs));
    EXPECT_EQ(0x1234567890ULL, __atomic_load_n(&words[7], __ATOMIC_ACQUIRE));
    EXPECT_EQ(0u, words[6]);
    EXPECT_EQ(0u, words[8]);
    ASSERT_EQ(ACL_SUCCESS, aclrtHostUnregister(words.data()));
}

TEST_F(AclHostRegisterTest, ReadOnlyMemoryAndReadOnlyRegistrationsAreRefused)
{
    void *page = mmap(nullptr, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, page);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostRegisterV2(page, 8192, ACL_HOST_REG_MAPPED));
    // Reserved in CANN's documentation.
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtHostRegisterV2(host_, kSize, ACL_HOST_REG_MAPPED | ACL_HOST_REG_READONLY));
    void *mapped = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtHostRegister(host_, kSize, ACL_HOST_REGISTER_READONLY, &mapped));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, aclrtHostUnregister(host_));
    EXPECT_EQ(0, munmap(page, 8192));
}

TEST_F(AclHostRegisterTest, ADeviceResetEndsRegistrationsAndRegisteredMemoryIsNotSharedByKey)
{
    void *mapped = nullptr;
    char key[65] = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtHostRegister(host_, kSize, ACL_HOST_REGISTER_MAPPED, &mapped));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtIpcMemGetExportKey(mapped, kSize, key, sizeof(key), 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(mapped));
    ASSERT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s_));
    s_ = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(dev_));
    dev_ = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(0));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostGetDevicePointer(host_, &mapped, 0));
    // The range registers again, on the device as it is now.
    ASSERT_EQ(ACL_SUCCESS, aclrtHostRegister(host_, kSize, ACL_HOST_REGISTER_MAPPED, &mapped));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mapped, kSize, 0x42, kSize));
    EXPECT_TRUE(BytesAre(Host(), kSize, 0x42));
    ASSERT_EQ(ACL_SUCCESS, aclrtHostUnregister(host_));
}

TEST_F(AclHostRegisterTest, PinnedOnlyMemoryHasNoDeviceAddress)
{
    void *mapped = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtHostRegisterV2(host_, kSize, ACL_HOST_REG_PINNED));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostGetDevicePointer(host_, &mapped, 0));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, aclrtHostRegisterV2(host_, 4096, ACL_HOST_REG_MAPPED));
    ASSERT_EQ(ACL_SUCCESS, aclrtHostUnregister(host_));
}

TEST_F(AclHostRegisterTest, MisuseGetsCANNsCodes)
{
    void *mapped = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostRegister(nullptr, kSize, ACL_HOST_REGISTER_MAPPED, &mapped));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostRegister(host_, kSize, ACL_HOST_REGISTER_MAPPED, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostRegister(host_, 0, ACL_HOST_REGISTER_MAPPED, &mapped));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtHostRegister(host_, kSize, static_cast<aclrtHostRegisterType>(0x100), &mapped));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostRegisterV2(nullptr, kSize, ACL_HOST_REG_MAPPED));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostRegisterV2(host_, 0, ACL_HOST_REG_MAPPED));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostRegisterV2(host_, kSize, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostRegisterV2(host_, kSize, 0x1));
    // Device memory is no host memory to register.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostRegisterV2(dev_, kSize, ACL_HOST_REG_MAPPED));

    ASSERT_EQ(ACL_SUCCESS, aclrtHostRegisterV2(Host() + 8192, 8192, ACL_HOST_REG_MAPPED));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, aclrtHostRegisterV2(host_, kSize, ACL_HOST_REG_MAPPED));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
              aclrtHostRegisterV2(Host() + 12288, 4096, ACL_HOST_REG_MAPPED));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostGetDevicePointer(nullptr, &mapped, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostGetDevicePointer(Host() + 8192, nullptr, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostGetDevicePointer(Host() + 8192, &mapped, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtHostGetDevicePointer(host_, &mapped, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostUnregister(nullptr));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, aclrtHostUnregister(host_));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, aclrtHostUnregister(Host() + 8192 + 4096));
    ASSERT_EQ(ACL_SUCCESS, aclrtHostUnregister(Host() + 8192));
    EXPECT_EQ(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, aclrtHostUnregister(Host() + 8192));
}

TEST_F(AclHostRegisterTest, TheCopyEngineReachesRegisteredMemoryAndNoComputeCoreDoes)
{
    aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    ASSERT_EQ(ACL_SUCCESS, aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_SDMA, &cap));
    EXPECT_EQ(ACL_RT_HOST_MEM_MAP_SUPPORTED, cap);
    ASSERT_EQ(ACL_SUCCESS, aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, &cap));
    EXPECT_EQ(ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED, cap);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_SDMA, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtHostMemMapCapabilities(999, ACL_RT_HAC_TYPE_SDMA, &cap));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtHostMemMapCapabilities(0, static_cast<aclrtHacType>(10), &cap));
}

} // namespace
