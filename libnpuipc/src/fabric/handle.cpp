// SPDX-License-Identifier: MIT
// The fabric handle's layout (npuipc/fabric.h) and the receiving side of
// the daemon's socket protocol (fabric/wire.h), shared by libnpuipc and
// npuipc-fabricd.
#include "npuipc/fabric.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "fabric/wire.h"

namespace npuipc::fabric {

namespace {

template <typename T> T field(const Handle &h, size_t at)
{
    T v;
    std::memcpy(&v, h.data.data() + at, sizeof(v));
    return v;
}

} // namespace

uint32_t Handle::owner_sdid() const noexcept
{
    return field<uint32_t>(*this, wire::kSdidAt);
}

uint64_t Handle::export_id() const noexcept
{
    return field<uint64_t>(*this, wire::kIdAt);
}

uint64_t Handle::size() const noexcept
{
    return field<uint64_t>(*this, wire::kSizeAt);
}

bool Handle::well_formed() const noexcept
{
    for (size_t i = wire::kUsedBytes; i < kHandleBytes; i++)
        if (data[i])
            return false;
    return std::memcmp(data.data(), wire::kHandleMagic, sizeof(wire::kHandleMagic)) == 0 &&
           field<uint32_t>(*this, wire::kVersionAt) == wire::kHandleVersion && export_id() != 0 &&
           size() != 0;
}

std::string daemon_socket_path()
{
    const char *env = std::getenv("NPUIPC_FABRIC_SOCKET");
    return env && *env ? env : "/run/npuipc/fabric.sock";
}

namespace wire {

ssize_t receive(int sock, void *buf, size_t len, std::vector<UniqueFd> &fds, int *flags,
                int recv_flags)
{
    struct iovec iov = {buf, len};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } control{};
    struct msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    ssize_t n;
    do {
        n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | recv_flags);
    } while (n < 0 && errno == EINTR);
    // An empty message may carry fds too.
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
            fds.emplace_back(fd);
        }
    }
    *flags = msg.msg_flags;
    return n;
}

} // namespace wire

} // namespace npuipc::fabric
