// SPDX-License-Identifier: MIT
// libnpuipc's side of the fabric daemon's socket (npuipc/fabric.h).
#include "npuipc/fabric.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "fabric/wire.h"
#include "ipc/internal.h"

namespace npuipc::fabric {

namespace {

// Seconds a daemon may take to answer: an import across servers waits for
// the owner's daemon, which the daemon bounds at 10 s.
constexpr int kReplyTimeoutS = 20;

// One request and its reply; the reply's fd (IMPORT) into *fd_out.
Result<wire::Reply> call(int sock, const wire::Request &req, int fd_in, UniqueFd *fd_out)
{
    if (npuipc_ipc::send_with_fd(sock, &req, sizeof(req), fd_in, 0) != sizeof(req))
        return Status::from_errno(errno == EPIPE || errno == ECONNRESET ? ECONNREFUSED : errno);
    wire::Reply reply{};
    struct iovec iov = {&reply, sizeof(reply)};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control{};
    struct msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    ssize_t n;
    do {
        n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return Status::from_errno(errno == EAGAIN ? ETIMEDOUT : errno);
    UniqueFd received;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int))) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c), sizeof(fd));
            received = UniqueFd(fd);
        }
    }
    // An fd comes with a successful IMPORT only.
    const bool want_fd = fd_out != nullptr && reply.error == 0;
    if (n != sizeof(reply) || reply.magic != wire::kReplyMagic || (msg.msg_flags & MSG_CTRUNC) ||
        reply.error < 0 || received.valid() != want_fd)
        return Status::from_errno(EPROTO);
    if (reply.error != 0)
        return Status::from_errno(reply.error);
    if (fd_out)
        *fd_out = std::move(received);
    return reply;
}

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
    Result<wire::Reply> reply = call(fd_.get(), req, dmabuf_fd, nullptr);
    if (!reply.ok())
        return Status::from_errno(reply.error());
    Handle handle;
    std::memcpy(handle.data.data(), reply.value().handle, kHandleBytes);
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
    Result<wire::Reply> reply = call(fd_.get(), req, -1, nullptr);
    return reply.ok() ? Status() : Status::from_errno(reply.error());
}

Status Session::release(const Handle &handle) const
{
    if (!handle.well_formed())
        return Status::from_errno(EINVAL);
    Result<wire::Reply> reply = call(fd_.get(), request(wire::Op::Release, &handle), -1, nullptr);
    return reply.ok() ? Status() : Status::from_errno(reply.error());
}

Result<UniqueFd> Session::import_memory(const Handle &handle) const
{
    if (!handle.well_formed())
        return Status::from_errno(EINVAL);
    UniqueFd fd;
    Result<wire::Reply> reply = call(fd_.get(), request(wire::Op::Import, &handle), -1, &fd);
    if (!reply.ok())
        return Status::from_errno(reply.error());
    return fd;
}

} // namespace npuipc::fabric
