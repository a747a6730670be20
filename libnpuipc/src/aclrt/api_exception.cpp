// SPDX-License-Identifier: MIT
// Exception information: the application's callbacks for a failed task
// (a timed-out wait, a copy past the device's job timeout, a failed fence:
// the mock NPU's exceptions). CANN calls them from the runtime thread that
// receives the device's failure report; npuipc learns of a failure when a
// synchronize finds it, and calls them there, in the synchronizing thread,
// before that synchronize returns the failure (CANN does the same when its
// runtime runs without threads). Each failure is reported once.
#include <algorithm>
#include <mutex>
#include <vector>

#include "aclrt/runtime.h"

// CANN's acl_rt.h only declares it; its accessors are the interface.
struct rtExceptionInfo {
    uint32_t taskid;   // the driver's number of the failed job on its stream
    uint32_t streamid; // aclrtStreamGetId's
    uint32_t tid;      // the thread that last queued work on the stream
    uint32_t deviceid; // the application's device id
    uint32_t retcode;  // the ACL error the synchronize returns
};

using namespace npuipc_rt;

namespace {

struct ExceptionCallbacks {
    std::mutex mu; // protects what follows
    // aclrtSetExceptionInfoCallback's one callback (CANN's "ACL" entry),
    // and those of aclrtExceptionInfoCallbackRegister, in their order.
    aclrtExceptionInfoCallback set = nullptr;
    std::vector<aclrtExceptionInfoCallback> registered;
};

// Never destroyed: a failure may be reported while the process exits.
ExceptionCallbacks &callbacks()
{
    static ExceptionCallbacks *table = new ExceptionCallbacks;
    return *table;
}

uint32_t field_or_invalid(const aclrtExceptionInfo *info, uint32_t rtExceptionInfo::*field)
{
    return info ? info->*field : 0xFFFFFFFF;
}

} // namespace

namespace npuipc_rt {

void report_exception(const Stream &stream, aclError code, uint32_t failed_job)
{
    std::vector<aclrtExceptionInfoCallback> to_call;
    {
        ExceptionCallbacks &table = callbacks();
        std::lock_guard<std::mutex> lock(table.mu);
        if (table.set)
            to_call.push_back(table.set);
        to_call.insert(to_call.end(), table.registered.begin(), table.registered.end());
    }
    if (to_call.empty())
        return;
    rtExceptionInfo info = {};
    info.taskid = failed_job;
    info.streamid = stream.handle.get();
    info.tid = stream.submitter_tid.load(std::memory_order_relaxed);
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        info.deviceid = static_cast<uint32_t>(rt.logical_id(stream.device));
    }
    info.retcode = static_cast<uint32_t>(code);
    // Outside every lock: CANN's rule is that a callback neither launches
    // nor synchronizes, but one that does must not deadlock npuipc.
    for (aclrtExceptionInfoCallback cb : to_call)
        cb(&info);
}

} // namespace npuipc_rt

extern "C" {

aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)
{
    return api("aclrtSetExceptionInfoCallback", [&] {
        ExceptionCallbacks &table = callbacks();
        std::lock_guard<std::mutex> lock(table.mu);
        table.set = callback; // NULL clears it
        return ACL_SUCCESS;
    });
}

aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback)
{
    return api("aclrtExceptionInfoCallbackRegister", [&] {
        if (!callback)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "callback is NULL");
        ExceptionCallbacks &table = callbacks();
        std::lock_guard<std::mutex> lock(table.mu);
        if (std::find(table.registered.begin(), table.registered.end(), callback) ==
            table.registered.end())
            table.registered.push_back(callback);
        return ACL_SUCCESS;
    });
}

aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback)
{
    return api("aclrtExceptionInfoCallbackUnregister", [&] {
        if (!callback)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "callback is NULL");
        ExceptionCallbacks &table = callbacks();
        std::lock_guard<std::mutex> lock(table.mu);
        // As CANN: one never registered is no error.
        table.registered.erase(
            std::remove(table.registered.begin(), table.registered.end(), callback),
            table.registered.end());
        return ACL_SUCCESS;
    });
}

uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return field_or_invalid(info, &rtExceptionInfo::taskid);
}

uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return field_or_invalid(info, &rtExceptionInfo::streamid);
}

uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return field_or_invalid(info, &rtExceptionInfo::tid);
}

uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return field_or_invalid(info, &rtExceptionInfo::deviceid);
}

uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return field_or_invalid(info, &rtExceptionInfo::retcode);
}

} // extern "C"
