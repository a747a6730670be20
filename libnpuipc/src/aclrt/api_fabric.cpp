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

// A session with the daemon, and the lock its calls take (a session serves
// one request at a time; a call may wait up to 20 s).
struct SessionBox {
    explicit SessionBox(fabric::Session s, uint64_t n) : session(std::move(s)), number(n) {}
    std::mutex call_mu;
    fabric::Session session;
    const uint64_t number; // sessions opened by this process, counted from 1
};

struct FabricState {
    // Protects what follows; held briefly (never across a daemon call),
    // and by fork (prepare to parent or child).
    std::mutex mu;
    bool probed = false;
    std::shared_ptr<const Device> window; // null: no window on this server
    uint32_t sdid = 0;
    std::shared_ptr<SessionBox> session;
    uint64_t sessions = 0;
};

FabricState &state();

void fork_prepare()
{
    state().mu.lock();
}

void fork_parent()
{
    state().mu.unlock();
}

// The child closes the parent's fds and forgets them without destroying
// anything (close() only, in an atfork handler); its first use opens its
// own. Its exports would be the parent's: a fresh session number makes
// physical memory export again.
void fork_child()
{
    FabricState &s = state();
    if (s.window)
        ::close(s.window->fd());
    if (s.session)
        ::close(s.session->session.native_handle());
    new (&s.window) std::shared_ptr<const Device>();
    new (&s.session) std::shared_ptr<SessionBox>();
    s.probed = false;
    s.sdid = 0;
    s.sessions++;
    s.mu.unlock();
}

FabricState &state()
{
    // Never destroyed, as the Runtime.
    static FabricState *s = [] {
        auto *p = new FabricState;
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        return p;
    }();
    return *s;
}

// The window, looked up at the first use; under s.mu.
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

std::shared_ptr<const Device> window()
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return window_locked(s);
}

// The session, opened now if need be, or an errno.
Result<std::shared_ptr<SessionBox>> session()
{
    FabricState &s = state();
    {
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.session)
            return s.session;
    }
    // Opened without the lock (a connect), kept unless another thread won.
    Result<fabric::Session> opened = fabric::Session::open();
    if (!opened.ok())
        return Status::from_errno(opened.error());
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.session)
        s.session = std::make_shared<SessionBox>(std::move(opened.value()), ++s.sessions);
    return s.session;
}

// After a call: a session that broke goes, so that the next call opens
// another (its exports went with it).
int after_call(const std::shared_ptr<SessionBox> &box, int err)
{
    if (box->session.broken()) {
        FabricState &s = state();
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.session == box)
            s.session.reset();
    }
    return err;
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
    case EBUSY:
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
    return window() != nullptr;
}

uint32_t fabric_sdid()
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return window_locked(s) ? s.sdid : 0;
}

bool fabric_session_lives(uint64_t number)
{
    FabricState &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return s.session && s.session->number == number;
}

Result<UniqueFd> fabric_allocate(uint64_t size, PageClass page_class)
{
    std::shared_ptr<const Device> w = window();
    if (!w)
        return Status::from_errno(ENODEV);
    Result<uint32_t> buffer = w->create_buffer(size, page_class);
    if (!buffer.ok())
        // A window that went (unplugged) is no reason for local memory.
        return Status::from_errno(buffer.error() == ENODEV ? EIO : buffer.error());
    // The dma-buf holds the memory; this process keeps no handle of it.
    Result<UniqueFd> memory = w->export_whole_buffer(buffer.value());
    w->close_buffer(buffer.value());
    return memory;
}

aclError fabric_export(int memory, bool validate_pid, fabric::Handle &out, uint64_t &session_number)
{
    Result<std::shared_ptr<SessionBox>> box = session();
    if (!box.ok())
        return fail_fabric(box.error(), "exporting fabric memory");
    std::lock_guard<std::mutex> call(box.value()->call_mu);
    Result<fabric::Handle> handle = box.value()->session.export_memory(memory, validate_pid);
    if (!handle.ok())
        return fail_fabric(after_call(box.value(), handle.error()), "exporting fabric memory");
    out = handle.value();
    session_number = box.value()->number;
    return ACL_SUCCESS;
}

aclError fabric_allow(const aclrtMemFabricHandle &handle, const int32_t *pids, size_t count)
{
    fabric::Handle h;
    static_assert(sizeof(handle.data) == fabric::kHandleBytes, "aclrtMemFabricHandle's size");
    std::memcpy(h.data.data(), handle.data, fabric::kHandleBytes);
    if (!window())
        return fail_fabric(ENODEV, "allowing processes");
    if (!h.well_formed())
        return fail_fabric(EINVAL, "allowing processes");
    for (size_t i = 0; i < count; i++)
        if (pids[i] <= 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "pid[%zu] = %d is no process", i, pids[i]);
    Result<std::shared_ptr<SessionBox>> box = session();
    if (!box.ok())
        return fail_fabric(box.error(), "allowing processes");
    std::lock_guard<std::mutex> call(box.value()->call_mu);
    // A bare PID: that PID on every server of the fabric.
    for (size_t done = 0; done < count;) {
        std::vector<fabric::AllowedProcess> batch;
        for (; done < count && batch.size() < fabric::kMaxPidsPerCall; done++)
            batch.push_back({fabric::kAnyServer, pids[done]});
        int err = after_call(box.value(), box.value()->session.allow(h, batch).error());
        if (err == ESRCH)
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that exported a fabric handle may list importers");
        if (err)
            return fail_fabric(err, "allowing processes");
    }
    return ACL_SUCCESS;
}

aclError fabric_import(const aclrtMemFabricHandle &handle, UniqueFd &memory)
{
    fabric::Handle h;
    std::memcpy(h.data.data(), handle.data, fabric::kHandleBytes);
    if (!window())
        return fail_fabric(ENODEV, "importing fabric memory");
    if (!h.well_formed())
        return fail_fabric(EINVAL, "importing fabric memory");
    Result<std::shared_ptr<SessionBox>> box = session();
    if (!box.ok())
        return fail_fabric(box.error(), "importing fabric memory");
    std::lock_guard<std::mutex> call(box.value()->call_mu);
    Result<UniqueFd> got = box.value()->session.import_memory(h);
    if (!got.ok())
        return fail_fabric(after_call(box.value(), got.error()), "importing fabric memory");
    memory = std::move(got.value());
    return ACL_SUCCESS;
}

void fabric_release(const fabric::Handle &handle)
{
    std::shared_ptr<SessionBox> box;
    {
        FabricState &s = state();
        std::lock_guard<std::mutex> lock(s.mu);
        box = s.session;
    }
    if (!box)
        return;
    std::lock_guard<std::mutex> call(box->call_mu);
    after_call(box, box->session.release(handle).error());
}

} // namespace npuipc_rt
