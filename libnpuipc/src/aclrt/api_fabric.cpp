// SPDX-License-Identifier: MIT
// This server's fabric (fabric_memory.h): physical memory from its part
// of the fabric window, and FABRIC shareable handles through its fabric
// daemon. One window and one daemon session per process, opened when
// first needed; a fork child starts without either (the session's
// exports are the parent's).
#include "aclrt/fabric_memory.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "aclrt/runtime.h"

using namespace npuipc;

namespace npuipc_rt {

namespace {

struct FabricState {
    // Protects what follows; held across a daemon call (a session serves
    // one request at a time), never with Runtime's locks.
    std::mutex mu;
    bool probed = false;
    std::shared_ptr<const Device> window; // null: no window on this server
    uint32_t sdid = 0;
    std::optional<fabric::Session> session;
};

void forget_after_fork();

FabricState &state()
{
    // Never destroyed, as the Runtime.
    static FabricState *s = [] {
        auto *p = new FabricState;
        pthread_atfork(nullptr, nullptr, forget_after_fork);
        return p;
    }();
    return *s;
}

// The child closes the parent's fds and forgets them without destroying
// anything (close() only, in an atfork handler); its first use opens its own.
void forget_after_fork()
{
    FabricState &s = state();
    if (s.window)
        ::close(s.window->fd());
    if (s.session)
        ::close(s.session->native_handle());
    new (&s.window) std::shared_ptr<const Device>();
    new (&s.session) std::optional<fabric::Session>();
    s.probed = false;
    s.sdid = 0;
    new (&s.mu) std::mutex();
}

std::shared_ptr<const Device> window_locked(FabricState &s)
{
    if (!s.probed) {
        Result<Device> w = Device::open_fabric_window();
        Result<FabricInfo> info = w.ok() ? w.value().fabric_info() : Result<FabricInfo>(w.status());
        if (info.ok()) {
            s.window = std::make_shared<const Device>(std::move(w.value()));
            s.sdid = info.value().sdid;
        }
        s.probed = true;
    }
    return s.window;
}

// After a call: a session that broke goes, so that the next call opens
// another (its exports went with it).
int check_session(FabricState &s, int err)
{
    if (err == ECONNRESET || err == ETIMEDOUT || err == EPROTO || err == EAGAIN)
        s.session.reset();
    return err;
}

// The session, opened now if need be: 0 or an errno.
int session_locked(FabricState &s)
{
    if (s.session)
        return 0;
    Result<fabric::Session> opened = fabric::Session::open();
    if (!opened.ok())
        return opened.error();
    s.session.emplace(std::move(opened.value()));
    return 0;
}

aclError fail_fabric(int err, const char *what)
{
    switch (err) {
    case ENODEV:
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: this server has no fabric window", what);
    case ECONNREFUSED:
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "%s: no fabric daemon serves this server (npuipc-fabricd, %s)", what,
                    fabric::daemon_socket_path().c_str());
    case EINVAL:
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s: not a fabric handle", what);
    case ESRCH:
        return fail(ACL_ERROR_RT_INVALID_HANDLE,
                    "%s: no such export (unknown, released, or its exporter gone)", what);
    case EACCES:
        return fail(ACL_ERROR_RT_NO_PERMISSION,
                    "%s: refused by the owner's fabric daemon (see its log)", what);
    case EHOSTUNREACH:
        return fail(ACL_ERROR_RT_IPC_ERROR,
                    "%s: the owner's server is unknown to this server's fabric daemon, or "
                    "its daemon does not answer", what);
    case ETIMEDOUT:
        return fail(ACL_ERROR_RT_TIMEOUT, "%s: a fabric daemon did not answer in time", what);
    case ENOSPC:
        return fail(ACL_ERROR_RT_OVER_LIMIT, "%s: the fabric daemon holds as many exports as it may",
                    what);
    case EAGAIN:
        return fail(ACL_ERROR_RT_IPC_ERROR, "%s: the fabric daemon is busy; try again", what);
    case ECONNRESET:
        return fail(ACL_ERROR_RT_IPC_ERROR,
                    "%s: the session with the fabric daemon broke (this process's exports "
                    "with it); the next call opens another", what);
    case EPROTO:
    case EIO:
        return fail(ACL_ERROR_RT_IPC_ERROR, "%s: the fabric daemons failed (errno %d)", what, err);
    default:
        return fail_errno(err, Op::Generic, what);
    }
}

} // namespace

bool fabric_present()
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return window_locked(s) != nullptr;
}

uint32_t fabric_sdid()
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return window_locked(s) ? s.sdid : 0;
}

Result<UniqueFd> fabric_allocate(uint64_t size, PageClass page_class)
{
    std::shared_ptr<const Device> window;
    {
        FabricState &s = state();
        std::lock_guard<std::mutex> lock(s.mu);
        window = window_locked(s);
    }
    if (!window)
        return Status::from_errno(ENODEV);
    Result<uint32_t> buffer = window->create_buffer(size, page_class);
    if (!buffer.ok())
        return Status::from_errno(buffer.error());
    // The dma-buf holds the memory; this process keeps no handle of it.
    Result<UniqueFd> memory = window->export_whole_buffer(buffer.value());
    window->close_buffer(buffer.value());
    return memory;
}

aclError fabric_export(int memory, bool validate_pid, fabric::Handle &out)
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (int err = session_locked(s))
        return fail_fabric(err, "exporting fabric memory");
    Result<fabric::Handle> handle = s.session->export_memory(memory, validate_pid);
    if (!handle.ok())
        return fail_fabric(check_session(s, handle.error()), "exporting fabric memory");
    out = handle.value();
    return ACL_SUCCESS;
}

aclError fabric_allow(const aclrtMemFabricHandle &handle, const int32_t *pids, size_t count)
{
    fabric::Handle h;
    static_assert(sizeof(handle.data) == fabric::kHandleBytes, "aclrtMemFabricHandle's size");
    std::memcpy(h.data.data(), handle.data, fabric::kHandleBytes);
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!window_locked(s))
        return fail_fabric(ENODEV, "allowing processes");
    if (!h.well_formed())
        return fail_fabric(EINVAL, "allowing processes");
    for (size_t i = 0; i < count; i++)
        if (pids[i] <= 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "pid[%zu] = %d is no process", i, pids[i]);
    if (int err = session_locked(s))
        return fail_fabric(err, "allowing processes");
    // A bare PID: that PID on every server of the fabric.
    for (size_t done = 0; done < count;) {
        std::vector<fabric::AllowedProcess> batch;
        for (; done < count && batch.size() < fabric::kMaxPidsPerCall; done++)
            batch.push_back({fabric::kAnyServer, pids[done]});
        Status st = s.session->allow(h, batch);
        check_session(s, st.error());
        if (st.error() == ESRCH)
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that exported a fabric handle may list importers");
        if (!st.ok())
            return fail_fabric(st.error(), "allowing processes");
    }
    return ACL_SUCCESS;
}

aclError fabric_import(const aclrtMemFabricHandle &handle, UniqueFd &memory)
{
    fabric::Handle h;
    std::memcpy(h.data.data(), handle.data, fabric::kHandleBytes);
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!window_locked(s))
        return fail_fabric(ENODEV, "importing fabric memory");
    if (!h.well_formed())
        return fail_fabric(EINVAL, "importing fabric memory");
    if (int err = session_locked(s))
        return fail_fabric(err, "importing fabric memory");
    Result<UniqueFd> got = s.session->import_memory(h);
    if (!got.ok())
        return fail_fabric(check_session(s, got.error()), "importing fabric memory");
    memory = std::move(got.value());
    return ACL_SUCCESS;
}

void fabric_release(const fabric::Handle &handle)
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.session)
        check_session(s, s.session->release(handle).error());
}

} // namespace npuipc_rt
