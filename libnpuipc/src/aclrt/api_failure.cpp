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
#include "clock.h"

using namespace npuipc;
using namespace npuipc_rt;
using namespace npuipc_clock;

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

aclError aclrtStreamStop(aclrtStream stream)
{
    return api("aclrtStreamStop", [&] {
        // As CANN: a stream named, never the default one.
        if (!stream)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "stream is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (s->is_default)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is a context's default stream", stream);
        if (s->aborting.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_STREAM_ABORT, "the stream is being aborted");
        Status st = abort_stream_work(Runtime::get(), *s);
        if (!st.ok())
            return fail_errno(st.error(), Op::Generic, "stopping the stream");
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)
{
    return api("aclrtDeviceTaskAbort", [&] {
        // CANN's longest timeout: 36 minutes, in ms; 0 waits for ever.
        constexpr uint32_t kMaxTimeoutMs = 36 * 60 * 1000;
        if (timeout > kMaxTimeoutMs)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %u ms is above %u", timeout, kMaxTimeoutMs);
        Runtime &rt = Runtime::get();
        const int64_t start = now_ms();
        auto left = [&]() -> uint32_t {
            if (!timeout)
                return 0;
            const int64_t spent = now_ms() - start;
            return spent >= timeout ? 1 : static_cast<uint32_t>(timeout - spent);
        };
        std::vector<std::shared_ptr<Stream>> streams;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            uint32_t index;
            if (aclError err = rt.check_device_id(deviceId, index))
                return err;
            auto it = rt.devices.find(index);
            if (it == rt.devices.end() || it->second.refs == 0)
                return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %d is not set in this process", deviceId);
            for (const auto &entry : rt.objects)
                if (entry.second->kind == Kind::Stream && entry.second->device == index)
                    streams.push_back(std::static_pointer_cast<Stream>(entry.second));
        }
        if (int32_t rc = notify_task_abort(deviceId, ACL_RT_DEVICE_TASK_ABORT_PRE, left()))
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "a task-abort callback refused the abort (%d)", rc);
        // Every stream, then POST whatever happened: what PRE paused resumes.
        int failed = 0;
        for (const auto &s : streams) {
            Status st = abort_stream_work(rt, *s);
            if (!st.ok() && !failed)
                failed = st.error();
        }
        const bool late = timeout && now_ms() - start > timeout;
        const int32_t post = notify_task_abort(deviceId, ACL_RT_DEVICE_TASK_ABORT_POST, left());
        if (failed)
            return fail_errno(failed, Op::Generic, "aborting a stream of the device");
        if (late)
            return fail(ACL_ERROR_RT_WAIT_TIMEOUT, "the abort took more than %u ms", timeout);
        if (post)
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "a task-abort callback failed after the abort (%d)",
                        post);
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
