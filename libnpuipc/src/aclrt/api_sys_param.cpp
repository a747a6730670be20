// SPDX-License-Identifier: MIT
// Settings of the runtime a mock NPU keeps as CANN's runtime does: system
// parameters (process-wide and per context), the limit on waits without a
// timeout of their own, device limits, and the number of the last task a
// thread queued. The parameters and limits are for kernels, which a mock
// NPU runs none of: they are kept, checked and reported, and change no
// task (aclrt_device(3)).
#include <atomic>

#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// CANN's options: the process takes the four, a context the first three.
constexpr int kProcessOpts = 4;
constexpr int kContextOpts = 3;

std::atomic<int64_t> process_params[kProcessOpts];

// ACL_OPT_DETERMINISTIC takes 0..3 (off, deterministic, strong, batch
// consistency), the others 0 or 1.
aclError check_param_value(aclSysParamOpt opt, int64_t value)
{
    const int64_t limit = opt == ACL_OPT_DETERMINISTIC ? 4 : 2;
    if (value < 0 || value >= limit)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "value %lld of option %d is not within 0..%lld",
                    static_cast<long long>(value), static_cast<int>(opt), static_cast<long long>(limit - 1));
    return ACL_SUCCESS;
}

aclError check_opt(aclSysParamOpt opt, int count)
{
    if (static_cast<int>(opt) < 0 || static_cast<int>(opt) >= count)
        return fail(ACL_ERROR_INVALID_PARAM, "unknown option %d", static_cast<int>(opt));
    return ACL_SUCCESS;
}

// The device limits CANN's A2/A3 runtime keeps: the SIMD stack size (32 KiB
// at least, in steps of 16 KiB) and the SIMD printf FIFO of each core
// (1 KiB to 64 MiB, in steps of 8 bytes). The SIMT limits are Ascend
// 950's.
constexpr size_t kStackStep = 16 * 1024;
constexpr size_t kMinStack = 32 * 1024;
constexpr size_t kMinFifo = 1024, kMaxFifo = 64 * 1024 * 1024;
std::atomic<size_t> simd_stack{kMinStack};
std::atomic<size_t> simd_fifo{32 * 1024};

aclError check_limit(aclrtDeviceLimit limit)
{
    if (static_cast<int>(limit) < ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE ||
        static_cast<int>(limit) > ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE)
        return fail(ACL_ERROR_INVALID_PARAM, "unknown device limit %d", static_cast<int>(limit));
    if (limit != ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE && limit != ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "limit %d is of SIMT cores, which Ascend 950 devices have",
                    static_cast<int>(limit));
    return ACL_SUCCESS;
}

} // namespace

void npuipc_rt::reset_settings_after_fork()
{
    for (auto &p : process_params)
        p.store(0, std::memory_order_relaxed);
    simd_stack.store(kMinStack, std::memory_order_relaxed);
    simd_fifo.store(32 * 1024, std::memory_order_relaxed);
}

extern "C" {

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    return api("aclrtSetSysParamOpt", [&] {
        if (aclError err = check_opt(opt, kProcessOpts))
            return err;
        if (aclError err = check_param_value(opt, value))
            return err;
        process_params[opt].store(value, std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    return api("aclrtGetSysParamOpt", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (aclError err = check_opt(opt, kProcessOpts))
            return err;
        // 0 until set, as CANN's.
        *value = process_params[opt].load(std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    return api("aclrtCtxSetSysParamOpt", [&] {
        if (aclError err = check_opt(opt, kContextOpts))
            return err;
        if (aclError err = check_param_value(opt, value))
            return err;
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        ctx->sys_params[opt] = value;
        // As CANN: the process's value follows.
        process_params[opt].store(value, std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    return api("aclrtCtxGetSysParamOpt", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (aclError err = check_opt(opt, kContextOpts))
            return err;
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (!ctx->sys_params[opt])
            return fail(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, "option %d was not set in this context",
                        static_cast<int>(opt));
        *value = *ctx->sys_params[opt];
        return ACL_SUCCESS;
    });
}

aclError aclrtSetOpWaitTimeout(uint32_t timeout)
{
    return api("aclrtSetOpWaitTimeout", [&] {
        // Seconds, 0 for none; the waits queued from now on take it.
        Runtime::get().op_wait_timeout_s.store(timeout, std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit, size_t value)
{
    return api("aclrtDeviceSetLimit", [&] {
        if (static_cast<int>(limit) < ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE ||
            static_cast<int>(limit) > ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown device limit %d", static_cast<int>(limit));
        if (value > UINT32_MAX)
            return fail(ACL_ERROR_INVALID_PARAM, "value %zu is above 4 GiB", value);
        if (aclError err = check_limit(limit))
            return err;
        if (limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE) {
            // At most the default is no change; above, whole steps.
            if (value > kMinStack)
                simd_stack.store((value + kStackStep - 1) / kStackStep * kStackStep, std::memory_order_relaxed);
            return ACL_SUCCESS;
        }
        if (value < kMinFifo || value > kMaxFifo)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "a printf FIFO of %zu bytes is not within %zu..%zu", value,
                        kMinFifo, kMaxFifo);
        simd_fifo.store((value + 7) / 8 * 8, std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit, size_t *value)
{
    return api("aclrtDeviceGetLimit", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (aclError err = check_limit(limit))
            return err;
        *value = (limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE ? simd_stack : simd_fifo).load(std::memory_order_relaxed);
        return ACL_SUCCESS;
    });
}

aclError aclrtGetThreadLastTaskId(uint32_t *taskId)
{
    return api("aclrtGetThreadLastTaskId", [&] {
        if (!taskId)
            return fail(ACL_ERROR_INVALID_PARAM, "taskId is NULL");
        *taskId = thread_last_task_id();
        return ACL_SUCCESS;
    });
}

} // extern "C"
