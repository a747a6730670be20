// SPDX-License-Identifier: MIT
// The aclrt error model: the one place where driver errno values become
// CANN error codes, the calling thread's last error message
// (aclGetRecentErrMsg), and its logging through the library's logger
// (src/log.h: CANN's log variables; timeouts the caller chose at INFO).
#ifndef NPUIPC_ACLRT_ERRORS_H
#define NPUIPC_ACLRT_ERRORS_H

#include "acl/acl.h"

namespace npuipc_rt {

// What an errno is about, where the same errno means different things.
enum class Op {
    Generic,
    AllocMemory,
    CreateStream,
    CreateEvent,
    CreateNotify,
    Submit,
};

// Names the API function for the messages of errors inside it.
// Whether the calling thread is inside an aclrt call (a nested one sees
// its caller's).
bool in_api_call();

// Runs application code called back from inside an aclrt call as if no
// call were under way: its own calls are outermost ones.
class OutsideApi {
public:
    OutsideApi();
    ~OutsideApi();
    OutsideApi(const OutsideApi &) = delete;
    OutsideApi &operator=(const OutsideApi &) = delete;

private:
    const char *saved_;
};

class ApiScope {
public:
    explicit ApiScope(const char *name);
    ~ApiScope();
    ApiScope(const ApiScope &) = delete;
    ApiScope &operator=(const ApiScope &) = delete;

private:
    const char *previous_;
};

// Records `code` with a printf-style message as the thread's last error,
// logs it, and returns it.
aclError fail(aclError code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// A driver errno as the CANN code for `op`, recorded like fail().
aclError fail_errno(int err, Op op, const char *what);
// An errno of the IPC transport (npuipc/ipc.h) as the CANN code of
// Documentation/ipc.md's table, recorded like fail().
aclError fail_ipc(int err, const char *what);
// The code of a failed task: the negative errno a stream job or record
// ended with.
aclError task_error(int status);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *recent_error_message();
// The code of the calling thread's last failure (ACL_SUCCESS if none since
// the last clear), cleared when `clear`.
aclError last_error(bool clear);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_ERRORS_H
