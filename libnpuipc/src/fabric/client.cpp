// SPDX-License-Identifier: MIT
// libnpuipc's side of the fabric daemon's socket (npuipc/fabric.h).
#include "npuipc/fabric.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "fabric/wire.h"
#include "ipc/internal.h"

namespace npuipc::fabric {

namespace {

// Seconds a daemon may take to answer: an import across servers waits for
// the owner's daemon, which the daemon bounds at 10 s.
constexpr int kReplyTimeoutS = 20;
constexpr int kSendTimeoutS = 5;

wire::Request request(wire::Op op, const Handle *handle)
{
    wire::Request req{};
    req.magic = wire::kRequestMagic;
    req.op = static_cast<uint32_t>(op);
    if (handle)
        std::memcpy(req.handle, handle->data.data(), kHandleBytes);
    return req;
}

} // namespace

// One request and its reply; the reply's fd (IMPORT) into *fd_out.
Status Session::call(const void *req, size_t len, int fd_in, void *reply_out, UniqueFd *fd_out) const
{
    if (broken_)
        return Status::from_errno(ECONNRESET);
    wire::Reply reply{};
    std::vector<UniqueFd> fds;
    int flags = 0;
    ssize_t n;
    if (npuipc_ipc::send_with_fd(fd_.get(), req, len, fd_in, 0) != static_cast<ssize_t>(len))
        n = -1;
    else
        n = wire::receive(fd_.get(), &reply, sizeof(reply), fds, &flags);
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
        // A daemon too busy for this connection answered EBUSY and closed
        // it: its answer may wait behind the reset.
        broken_ = true;
        fds.clear();
        n = wire::receive(fd_.get(), &reply, sizeof(reply), fds, &flags, MSG_DONTWAIT);
        if (n == sizeof(reply) && reply.magic == wire::kReplyMagic && reply.error == EBUSY)
            return Status::from_errno(EBUSY);
        return Status::from_errno(ECONNRESET);
    }
    if (n < 0) {
        broken_ = true;
        return Status::from_errno(errno == EAGAIN ? ETIMEDOUT : errno);
    }
    if (n == 0) {
        broken_ = true;
        return Status::from_errno(ECONNRESET);
    }
    // An fd comes with a successful IMPORT only.
    const bool want_fd = fd_out != nullptr && reply.error == 0;
    if (n != sizeof(reply) || reply.magic != wire::kReplyMagic ||
        (flags & (MSG_CTRUNC | MSG_TRUNC)) || reply.error < 0 ||
        fds.size() != (want_fd ? 1u : 0u)) {
        broken_ = true;
        return Status::from_errno(EPROTO);
    }
    if (reply.error == EBUSY) // the daemon closes a connection it is too busy for
        broken_ = true;
    if (reply.error != 0)
        return Status::from_errno(reply.error);
    if (fd_out)
        *fd_out = std::move(fds.front());
    std::memcpy(reply_out, &reply, sizeof(reply));
    return Status();
}

Result<Session> Session::open()
{
    std::string path = daemon_socket_path();
    struct sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        return Status::from_errno(ENAMETOOLONG);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd)
        return Status::from_errno(errno);
    // A daemon whose backlog is full (stuck) makes connect and sends wait:
    // not for long.
    struct timeval send_tv = {kSendTimeoutS, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &send_tv, sizeof(send_tv));
    if (::connect(fd.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0)
        return Status::from_errno(errno == ENOENT ? ECONNREFUSED : errno);
    struct timeval tv = {kReplyTimeoutS, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return Session(std::move(fd));
}

Result<Handle> Session::export_memory(int dmabuf_fd, bool validate_pid) const
{
    if (dmabuf_fd < 0)
        return Status::from_errno(EBADF);
    wire::Request req = request(wire::Op::Export, nullptr);
    req.flags = validate_pid ? wire::kValidatePid : 0;
    wire::Reply reply;
    Status st = call(&req, sizeof(req), dmabuf_fd, &reply, nullptr);
    if (!st.ok())
        return st;
    Handle handle;
    std::memcpy(handle.data.data(), reply.handle, kHandleBytes);
    if (!handle.well_formed())
        return Status::from_errno(EPROTO);
    return handle;
}

Status Session::allow(const Handle &handle, const std::vector<AllowedProcess> &processes) const
{
    if (!handle.well_formed() || processes.empty() || processes.size() > kMaxPidsPerCall)
        return Status::from_errno(EINVAL);
    wire::Request req = request(wire::Op::Allow, &handle);
    req.npids = static_cast<uint32_t>(processes.size());
    std::memcpy(req.pids, processes.data(), processes.size() * sizeof(AllowedProcess));
    wire::Reply reply;
    return call(&req, sizeof(req), -1, &reply, nullptr);
}

Status Session::release(const Handle &handle) const
{
    if (!handle.well_formed())
        return Status::from_errno(EINVAL);
    const wire::Request rel = request(wire::Op::Release, &handle);
    wire::Reply reply;
    return call(&rel, sizeof(rel), -1, &reply, nullptr);
}

Result<UniqueFd> Session::import_memory(const Handle &handle) const
{
    if (!handle.well_formed())
        return Status::from_errno(EINVAL);
    UniqueFd fd;
    const wire::Request imp = request(wire::Op::Import, &handle);
    wire::Reply reply;
    Status st = call(&imp, sizeof(imp), -1, &reply, &fd);
    if (!st.ok())
        return st;
    return fd;
}

} // namespace npuipc::fabric
