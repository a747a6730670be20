// SPDX-License-Identifier: MIT
#include "aclrt/errors.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "log.h"

namespace npuipc_rt {
namespace {

// Read on every call: the initial-exec model makes the access one load
// instead of a __tls_get_addr call (the library is not dlopen'ed lazily
// into a process whose static TLS is already full).
__attribute__((tls_model("initial-exec"))) thread_local const char *current_api = nullptr;
thread_local std::string last_message;
thread_local bool has_message = false;
thread_local aclError last_code = ACL_SUCCESS; // until aclrtGetLastError

void vlog(int level, const char *fmt, va_list ap)
{
    if (!npuipc_log::enabled(level))
        return;
    char text[512];
    std::vsnprintf(text, sizeof(text), fmt, ap);
    npuipc_log::write(level, current_api ? current_api : "libnpuipc", text);
}

// A wait the caller bounded that ran out is an outcome, not a fault: as
// CANN, logged at INFO (a report loop polling every 100 ms stays quiet).
bool is_caller_timeout(aclError code)
{
    return code == ACL_ERROR_RT_REPORT_TIMEOUT || code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT ||
           code == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
}

} // namespace

bool in_api_call()
{
    return current_api != nullptr;
}

OutsideApi::OutsideApi() : saved_(current_api)
{
    current_api = nullptr;
}

OutsideApi::~OutsideApi()
{
    current_api = saved_;
}

ApiScope::ApiScope(const char *name) : previous_(current_api)
{
    current_api = name;
}

ApiScope::~ApiScope()
{
    current_api = previous_;
}

aclError fail(aclError code, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    const char *where = current_api ? current_api : "libnpuipc";
    const std::string detail = std::string(text) + " (error " + std::to_string(code) + ")";
    last_message = std::string(where) + ": " + detail;
    has_message = true;
    last_code = code;
    const int level = is_caller_timeout(code) ? npuipc_log::kInfo : npuipc_log::kError;
    if (npuipc_log::enabled(level))
        npuipc_log::write(level, where, detail.c_str());
    return code;
}

aclError fail_errno(int err, Op op, const char *what)
{
    aclError code = ACL_ERROR_RT_DRV_INTERNAL_ERROR;
    switch (err) {
    case ENOMEM:
        code = op == Op::AllocMemory    ? ACL_ERROR_RT_MEMORY_ALLOCATION
               : op == Op::CreateStream ? ACL_ERROR_RT_NO_STREAM_RESOURCE
               : op == Op::CreateEvent  ? ACL_ERROR_RT_NO_EVENT_RESOURCE
               : op == Op::CreateNotify ? ACL_ERROR_RT_NO_NOTIFY_RESOURCE
                                        : ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
        break;
    case ENOSPC: // a driver limit; on submit, the most tasks a stream may have queued
        code = op == Op::Submit         ? ACL_ERROR_RT_STREAM_TASK_FULL
               : op == Op::CreateStream ? ACL_ERROR_RT_NO_STREAM_RESOURCE
               : op == Op::CreateEvent  ? ACL_ERROR_RT_NO_EVENT_RESOURCE
               : op == Op::CreateNotify ? ACL_ERROR_RT_NO_NOTIFY_RESOURCE
                                        : ACL_ERROR_RT_OVER_LIMIT;
        break;
    case EMFILE:
    case ENFILE:
        code = ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
        break;
    case EIO: // the stream is in error after a failed task
        code = op == Op::Submit ? ACL_ERROR_RT_STREAM_ABORT : ACL_ERROR_RT_DRV_INTERNAL_ERROR;
        break;
    case EPERM:
    case EACCES:
    case EXDEV:
        code = ACL_ERROR_RT_NO_PERMISSION;
        break;
    case ENODEV:
        code = ACL_ERROR_RT_NO_DEVICE;
        break;
    case ETIME:
    case ETIMEDOUT:
        code = ACL_ERROR_RT_TIMEOUT;
        break;
    default:
        break;
    }
    return fail(code, "%s: %s", what, std::strerror(err));
}

aclError fail_ipc(int err, const char *what)
{
    switch (err) {
    case EINVAL:
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s: malformed key", what);
    case ESRCH:
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "%s: no such key (unknown, or closed by its exporter)", what);
    case EPROTOTYPE:
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "%s: the key names another kind of object", what);
    case EACCES:
    case EPERM:
        return fail(ACL_ERROR_RT_NO_PERMISSION, "%s: refused by the exporter (see its log)", what);
    case ECONNREFUSED:
    case ENOENT:
        return fail(ACL_ERROR_RT_IPC_ERROR, "%s: the exporting process is gone", what);
    case ETIMEDOUT:
        return fail(ACL_ERROR_RT_TIMEOUT, "%s: the exporter, or the broker serving its keys, did not answer in time",
                    what);
    case EPROTO:
        return fail(ACL_ERROR_RT_IPC_ERROR, "%s: the exporter's answer broke the protocol", what);
    case EAGAIN:
        return fail(ACL_ERROR_RT_IPC_ERROR, "%s: the exporter is overloaded; try again", what);
    case EDQUOT:
        return fail(ACL_ERROR_RT_OVER_LIMIT,
                    "%s: the broker holds as many objects or bytes for this user as it allows "
                    "(npuipc-broker --max-fds-per-uid, --max-bytes-per-uid)",
                    what);
    default:
        return fail_errno(err, Op::Generic, what);
    }
}

aclError task_error(int status)
{
    if (status == -ETIMEDOUT || status == -ETIME)
        return fail(ACL_ERROR_RT_TASK_TIMEOUT, "a task on the stream timed out");
    return fail(ACL_ERROR_RT_STREAM_ABORT, "a task on the stream failed: %s",
                std::strerror(-status));
}

void log_debug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(npuipc_log::kDebug, fmt, ap);
    va_end(ap);
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(npuipc_log::kInfo, fmt, ap);
    va_end(ap);
}

void log_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(npuipc_log::kWarning, fmt, ap);
    va_end(ap);
}

aclError last_error(bool clear)
{
    aclError code = last_code;
    if (clear)
        last_code = ACL_SUCCESS;
    return code;
}

const char *recent_error_message()
{
    return has_message ? last_message.c_str() : nullptr;
}

} // namespace npuipc_rt
