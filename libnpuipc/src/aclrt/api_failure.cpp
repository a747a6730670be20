// SPDX-License-Identifier: MIT
// What happens after a task fails: the failure mode of a context's streams
// (aclrtSetStreamFailureMode), aborting a stream's queued work
// (aclrtStreamAbort) and the device's error state (aclrtGetErrorVerbose).
// The driver runs each stream in the mode asked (STREAM_SET_PARAM) and
// aborts it (STREAM_ABORT); the context-wide part of STOP lives in
// synchronize_failed() (runtime.cpp).
#include <cstring>
#include <vector>

#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// Switches the context of `stream` to STOP: its streams, and the ones made
// in it from now on, halt at their first failure.
aclError stop_on_failure(const Stream &stream)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (stream.failure->stop.load(std::memory_order_acquire))
        return ACL_SUCCESS;
    // Runtime::mu keeps new streams out meanwhile; a failure switches back
    // the streams already switched, leaving the context as it was.
    std::vector<Stream *> switched;
    for (const auto &entry : rt.objects) {
        if (entry.second->kind != Kind::Stream)
            continue;
        auto &s = static_cast<Stream &>(*entry.second);
        if (s.failure != stream.failure)
            continue;
        Status st = s.dev->set_failure_mode(s.handle.get(), FailureMode::Stop);
        if (!st.ok()) {
            for (Stream *back : switched) {
                (void)back->dev->set_failure_mode(back->handle.get(), FailureMode::Continue);
                back->stops.store(false, std::memory_order_release);
            }
            return fail_errno(st.error(), Op::Generic, "switching a stream to ACL_STOP_ON_FAILURE");
        }
        s.stops.store(true, std::memory_order_release);
        switched.push_back(&s);
    }
    stream.failure->stop.store(true, std::memory_order_release);
    return ACL_SUCCESS;
}

} // namespace

namespace npuipc_rt {

aclError stream_or_default(aclrtStream handle, std::shared_ptr<Stream> &out)
{
    if (!handle) {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (rt.current_context(ctx) != ACL_SUCCESS)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "stream is NULL and the thread has no current context");
    }
    return find_stream(handle, out);
}

aclError set_failure_mode(const Stream &s, uint64_t mode)
{
    if (s.flags & ACL_STREAM_DEVICE_USE_ONLY)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "a DEVICE_USE_ONLY stream has no failure mode to set");
    // As CANN, only bit 0 counts: 2 is CONTINUE, 3 is STOP.
    if (mode & ACL_STOP_ON_FAILURE)
        return stop_on_failure(s);
    if (s.failure->stop.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "the stream's context is in ACL_STOP_ON_FAILURE, which cannot be undone");
    return ACL_SUCCESS;
}

} // namespace npuipc_rt

extern "C" {

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)
{
    return api("aclrtSetStreamFailureMode", [&] {
        std::shared_ptr<Stream> s;
        if (aclError err = stream_or_default(stream, s))
            return err;
        return set_failure_mode(*s, mode);
    });
}

aclError aclrtStreamAbort(aclrtStream stream)
{
    return api("aclrtStreamAbort", [&] {
        std::shared_ptr<Stream> s;
        if (aclError err = stream_or_default(stream, s))
            return err;
        Status st = abort_stream_work(Runtime::get(), *s);
        if (!st.ok())
            return fail_errno(st.error(), Op::Generic, "aborting the stream");
        return ACL_SUCCESS;
    });
}

aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)
{
    return api("aclrtGetErrorVerbose", [&] {
        if (!errorInfo)
            return fail(ACL_ERROR_INVALID_PARAM, "errorInfo is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (aclError err = rt.check_device_id(deviceId))
            return err;
        // A mock NPU has no memory ECC, links or cores to fault: a task's
        // failure is the stream's (synchronize, exception callbacks), never
        // the device's.
        std::memset(errorInfo, 0, sizeof(*errorInfo));
        errorInfo->errorType = ACL_RT_NO_ERROR;
        return ACL_SUCCESS;
    });
}

aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo)
{
    return api("aclrtRepairError", [&] {
        if (!errorInfo)
            return fail(ACL_ERROR_INVALID_PARAM, "errorInfo is NULL");
        if (!errorInfo->tryRepair)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the error says it cannot be repaired (tryRepair 0)");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (aclError err = rt.check_device_id(deviceId))
            return err;
        // aclrtGetErrorVerbose never reports another kind on a mock NPU.
        if (errorInfo->errorType != ACL_RT_NO_ERROR)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "device %d has no error of type %d to repair",
                        deviceId, static_cast<int>(errorInfo->errorType));
        return ACL_SUCCESS;
    });
}

} // extern "C"
