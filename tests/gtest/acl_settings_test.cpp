// SPDX-License-Identifier: MIT
// Settings the runtime keeps as CANN's does (aclrt_device(3)): system
// parameters of the process and of contexts, the limit on waits without
// their own timeout, device limits, and the number of a thread's last task.
#include "acl_test_util.h"

#include <chrono>
#include <cstdint>
#include <thread>

using namespace acltest;

namespace {

class AclSettingsTest : public AclTest {};

TEST_F(AclSettingsTest, ProcessParametersAreZeroUntilSetAndTakeTheirOwnRanges)
{
    int64_t v = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, &v));
    EXPECT_EQ(0, v);
    EXPECT_EQ(ACL_SUCCESS, aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 3));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
    EXPECT_EQ(3, v);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 4));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 2));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, -1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSetSysParamOpt(static_cast<aclSysParamOpt>(4), 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
    EXPECT_EQ(3, v); // refusals changed nothing
    EXPECT_EQ(ACL_SUCCESS, aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0));
}

TEST_F(AclSettingsTest, AContextsParametersAreUnsetUntilSetInItAndSetTheProcessOnes)
{
    int64_t v = -1;
    EXPECT_EQ(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    EXPECT_EQ(1, v);
    ASSERT_EQ(ACL_SUCCESS, aclrtGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    EXPECT_EQ(1, v);
    // Another context has its own.
    aclrtContext mine = nullptr, other = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&other, 0));
    EXPECT_EQ(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(other));
    // Three options a context takes; CANN's checks.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, &v));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 7));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, nullptr));
    aclError set = ACL_SUCCESS, get = ACL_SUCCESS;
    std::thread t([&] {
        int64_t x = 0;
        set = aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1);
        get = aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &x);
    });
    t.join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, set);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, get);
    EXPECT_EQ(ACL_SUCCESS, aclrtSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 0));
}

// Sets the op wait timeout for a test, and 0 again however it ends.
struct OpWaitTimeout {
    explicit OpWaitTimeout(uint32_t s) { EXPECT_EQ(ACL_SUCCESS, aclrtSetOpWaitTimeout(s)); }
    ~OpWaitTimeout() { EXPECT_EQ(ACL_SUCCESS, aclrtSetOpWaitTimeout(0)); }
};

TEST_F(AclSettingsTest, TheOpWaitTimeoutEndsTheWaitsWithoutATimeoutOfTheirOwn)
{
    void *mem = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&mem, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mem, 4096, 0, 4096));
    aclrtStream held = nullptr, waiter = nullptr, forever = nullptr, notified = nullptr;
    for (aclrtStream *s : {&held, &waiter, &forever, &notified}) {
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(s));
    }
    aclrtEvent ev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&ev));
    aclrtNotify n = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT));
    // The record comes only once the word is 1, which the test writes late.
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWait(mem, 1, ACL_STREAM_WAIT_VALUE_EQ, held));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(ev, held));
    {
        OpWaitTimeout limit(1);
        ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(waiter, ev));
        // A notify wait: UINT32_MAX takes the limit, 0 is for ever.
        ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(n, waiter, UINT32_MAX));
        ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(n, notified, 0));
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(forever, ev)); // queued with no limit
    EXPECT_EQ(ACL_ERROR_RT_TASK_TIMEOUT, aclrtSynchronizeStreamWithTimeout(waiter, 5 * kSyncTimeoutMs));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(forever, 10));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(notified, 10));
    const uint64_t one = 1;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(mem, 8, &one, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordNotify(n, held));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(held, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(forever, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(notified, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(n));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(ev));
    for (aclrtStream s : {held, waiter, forever, notified}) {
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
    }
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(mem));
}

TEST_F(AclSettingsTest, DeviceLimitsAreKeptRoundedAndCheckedAsOnCannsA2)
{
    size_t v = 0, stack = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &stack));
    EXPECT_LE(32768u, stack);
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 1000)); // at most 32 KiB: no change
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &v));
    EXPECT_EQ(stack, v);
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 40000));
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &v));
    EXPECT_EQ(49152u, v); // whole 16 KiB steps
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 2001));
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, &v));
    EXPECT_EQ(2008u, v);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1000));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 64 * 1024 * 1024 + 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, &v));
    EXPECT_EQ(2008u, v);
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 4096));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE, &v));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceSetLimit(static_cast<aclrtDeviceLimit>(5), 4096));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, static_cast<size_t>(UINT32_MAX) + 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, nullptr));
}

TEST_F(AclSettingsTest, AThreadsLastTaskIdIsTheDriversNumberOfItsLastJob)
{
    uint32_t id = 0, other_thread = 0;
    void *mem = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&mem, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&a));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&b));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem, 4096, 1, 4096, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&id));
    EXPECT_EQ(1u, id); // a stream's first job is 1
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem, 4096, 2, 4096, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem, 4096, 3, 4096, a));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&id));
    EXPECT_EQ(3u, id);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem, 4096, 4, 4096, b));
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&id));
    EXPECT_EQ(1u, id); // the last, whatever its stream
    std::thread t([&] { aclrtGetThreadLastTaskId(&other_thread); });
    t.join();
    EXPECT_EQ(0xFFFFFFFFu, other_thread); // per thread: none there
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetThreadLastTaskId(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(a));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(b));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(mem));
}

} // namespace
