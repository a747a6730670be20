// SPDX-License-Identifier: MIT
// The importer of the IPC transport: fetch() connects to the key's
// endpoint, presents the key and receives the fd. Stateless; any thread.
#include "ipc/internal.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

namespace npuipc::ipc {
namespace {

using detail::log;

constexpr size_t kMaxFds = 4; // received at most; any surplus is a protocol error

// Milliseconds left before deadline_ms (-1: none), at least 0.
int remaining(int64_t deadline_ms)
{
    if (deadline_ms < 0)
        return -1;
    return static_cast<int>(std::max<int64_t>(0, deadline_ms - detail::now_ms()));
}

// How long a connection closed without a reply may wait to learn whether
// its exporter is dying (exporter_exited()): a short bound within the
// deadline. A dying process takes milliseconds; a live one that hung up
// costs its importer this much before EPROTO.
constexpr int kExitWaitMs = 250;

int exit_wait_ms(int64_t deadline_ms)
{
    int left = remaining(deadline_ms);
    return left < 0 ? kExitWaitMs : std::min(left, kExitWaitMs);
}

// Waits for `events` on fd until the deadline: 0, ETIMEDOUT or an errno.
int wait_for(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int n = ::poll(&p, 1, remaining(deadline_ms));
        if (n > 0)
            return 0;
        if (n == 0)
            return ETIMEDOUT;
        if (errno != EINTR)
            return errno;
    }
}

// The socket of the endpoint: the first directory (of importer_dirs())
// that is safe and has it. ECONNREFUSED when none has it, EACCES when the
// only candidates were unsafe.
Result<std::string> find_socket(const std::string &endpoint)
{
    int refused = 0;
    for (const std::string &dir : detail::importer_dirs()) {
        Status st = detail::check_dir(dir, false);
        if (!st.ok()) {
            if (st.error() != ENOENT)
                refused = EACCES;
            continue;
        }
        auto path = detail::socket_path(dir, endpoint + ".sock");
        if (!path.ok())
            continue; // too long here; the next directory may fit

        struct stat sb;
        if (::lstat(path.value().c_str(), &sb) != 0)
            continue;
        if (!S_ISSOCK(sb.st_mode))
            continue;
        if (sb.st_uid != geteuid()) {
            log(LogLevel::Error, "importer: refusing %s: owned by uid %u, not by uid %u",
                path.value().c_str(), static_cast<unsigned>(sb.st_uid),
                static_cast<unsigned>(geteuid()));
            refused = EACCES;
            continue;
        }
        return path;
    }
    return Status::from_errno(refused ? refused : ECONNREFUSED);
}

int connect_socket(int s, const std::string &path, int64_t deadline_ms)
{
    struct sockaddr_un addr {};
    if (path.size() >= sizeof(addr.sun_path))
        return ENAMETOOLONG; // NPUIPC_BROKER_SOCKET is the user's
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    for (;;) {
        if (::connect(s, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) == 0)
            return 0;
        int err = errno;
        if (err == EINTR)
            continue;
        if (err == EAGAIN) {
            // The listener's backlog is full: AF_UNIX gives no readiness
            // to wait for, so try again shortly.
            int left = remaining(deadline_ms);
            if (left == 0)
                return ETIMEDOUT;
            ::usleep(static_cast<useconds_t>(std::min(left < 0 ? 5 : left, 5)) * 1000);
            continue;
        }
        if (err == EINPROGRESS) {
            int w = wait_for(s, POLLOUT, deadline_ms);
            if (w)
                return w;
            int so_error = 0;
            socklen_t len = sizeof(so_error);
            if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0)
                return errno;
            err = so_error;
            if (err == 0)
                return 0;
        }
        return err == ENOENT ? ECONNREFUSED : err;
    }
}

// Sends the request. A connection the exporter closed first is not an error
// here: its reply (if any) is still to be read.
int send_request(int s, const detail::WireRequest &req, int64_t deadline_ms)
{
    for (;;) {
        ssize_t n = ::send(s, &req, sizeof(req), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == static_cast<ssize_t>(sizeof(req)))
            return 0;
        if (n >= 0)
            return EPROTO;
        if (errno == EINTR)
            continue;
        if (errno == EPIPE || errno == ECONNRESET)
            return 0;
        if (errno != EAGAIN)
            return errno;
        int w = wait_for(s, POLLOUT, deadline_ms);
        if (w)
            return w;
    }
}

struct Reply {
    detail::WireReply reply{};
    ssize_t size = 0;
    int flags = 0;
    std::vector<UniqueFd> fds;
};

int receive_reply(int s, int64_t deadline_ms, Reply *out)
{
    for (;;) {
        int w = wait_for(s, POLLIN, deadline_ms);
        if (w)
            return w;
        union {
            detail::WireReply reply;
            char bytes[sizeof(detail::WireReply) + 16];
        } buf;
        union {
            char buf[CMSG_SPACE(kMaxFds * sizeof(int))];
            struct cmsghdr align;
        } control;
        std::memset(&control, 0, sizeof(control));
        struct iovec iov = {&buf, sizeof(buf)};
        struct msghdr msg {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof(control.buf);
        out->fds.reserve(kMaxFds);
        ssize_t n = ::recvmsg(s, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            return errno;
        }
        // Own every fd that arrived before anything else can fail (the
        // room for them was reserved before recvmsg).
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; i++) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                out->fds.emplace_back(fd);
            }
        }
        out->size = n;
        out->flags = msg.msg_flags;
        std::memcpy(&out->reply, &buf, sizeof(out->reply));
        return 0;
    }
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

// Whether the process listening on the socket s is connected to (pid, by
// SO_PEERCRED) has exited, waiting up to wait_ms for it. A dead exporter's
// socket may accept connections for a few milliseconds after its process
// has gone (an io_uring loop's ring, which holds the listener, is torn down
// asynchronously), and then resets them. And a dying exporter closes its
// sockets (exit_files) before it counts as exited (exit_notify): an
// importer woken by that close must wait a moment to tell it from a live
// peer that hung up.
bool exporter_exited(int s, pid_t pid, int wait_ms)
{
    int raw = -1;
    socklen_t len = sizeof(raw);
    if (::getsockopt(s, SOL_SOCKET, SO_PEERPIDFD, &raw, &len) != 0) {
        if (errno != ENOPROTOOPT)
            return true; // no pidfd for a reaped process
        raw = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        if (raw < 0)
            return errno == ESRCH;
    }
    UniqueFd pidfd(raw);
    struct pollfd p = {pidfd.get(), POLLIN, 0};
    int n;
    do
        n = ::poll(&p, 1, wait_ms);
    while (n < 0 && errno == EINTR);
    return n == 1 && (p.revents & POLLIN);
}

bool known_refusal(int status, bool broker)
{
    switch (status) {
    case ECONNREFUSED: // the broker: the key's exporter is gone
        return broker;
    case ESRCH:
    case EACCES:
    case EPROTOTYPE:
    case EAGAIN:
    case EPROTO:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case EIO:
        return true;
    default:
        return false;
    }
}

// From the exporter's socket, or from the broker's (`broker`), which is
// another user's and outlives exporters.
// `refused`, when given, tells whether the server itself answered with a
// refusal (as opposed to not being reachable).
Result<Fetched> fetch_from(const std::string &path, const std::string &name,
                            const detail::WireRequest &req, int64_t deadline_ms, bool broker,
                            bool *refused = nullptr)
{
    const char *server = broker ? "the broker" : "the exporter";
    UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s)
        return Status::from_errno(errno);
    int err = connect_socket(s.get(), path, deadline_ms);
    if (err) {
        if (err == ECONNREFUSED)
            log(LogLevel::Warning, "importer: %s: %s is gone (nobody listens on %s)",
                name.c_str(), server, path.c_str());
        else
            log(LogLevel::Warning, "importer: %s: connect to %s: %s", name.c_str(), path.c_str(),
                std::strerror(err));
        return Status::from_errno(err);
    }
    struct ucred cred {};
    socklen_t len = sizeof(cred);
    if (::getsockopt(s.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return Status::from_errno(errno);
    if (broker && !detail::trusted_broker(cred.uid)) {
        log(LogLevel::Error, "importer: %s: refused: %s is served by uid %u, not by root or uid %u",
            name.c_str(), path.c_str(), static_cast<unsigned>(cred.uid),
            static_cast<unsigned>(geteuid()));
        return Status::from_errno(EACCES);
    }
    if (!broker && cred.uid != geteuid()) {
        log(LogLevel::Error, "importer: %s: refused: %s is served by uid %u, not by uid %u",
            name.c_str(), path.c_str(), static_cast<unsigned>(cred.uid),
            static_cast<unsigned>(geteuid()));
        return Status::from_errno(EACCES);
    }

    err = send_request(s.get(), req, deadline_ms);
    if (!err) {
        Reply reply;
        err = receive_reply(s.get(), deadline_ms, &reply);
        if (!broker && (err == ECONNRESET || (!err && reply.size == 0 && reply.fds.empty())) &&
            exporter_exited(s.get(), cred.pid, exit_wait_ms(deadline_ms))) {
            log(LogLevel::Warning,
                "importer: %s: the exporter is gone (it exited before answering on %s)",
                name.c_str(), path.c_str());
            return Status::from_errno(ECONNREFUSED);
        }
        if (err == ECONNRESET)
            err = EPROTO;
        if (!err) {
            const detail::WireReply &r = reply.reply;
            const char *bad = nullptr;
            if (reply.flags & MSG_CTRUNC)
                bad = "truncated control data (too many fds)";
            else if (reply.size == 0 && reply.fds.empty())
                bad = "the exporter closed the connection without a reply";
            else if ((reply.flags & MSG_TRUNC) ||
                     reply.size != static_cast<ssize_t>(sizeof(detail::WireReply)))
                bad = "a reply of the wrong size";
            else if (r.magic != detail::kReplyMagic || r.version != detail::kWireVersion)
                bad = "a reply with a wrong magic or version";
            else if (r.status == 0 && reply.fds.size() != 1)
                bad = "a success without exactly one fd";
            else if (r.status == 0 && !reply.fds[0])
                bad = "an invalid fd";
            else if (r.status != 0 && !reply.fds.empty())
                bad = "a refusal with an fd";
            else if (r.status != 0 && !known_refusal(r.status, broker))
                bad = "an unknown status";
            if (bad) {
                log(LogLevel::Error, "importer: %s: protocol error from %s: %s (%zu fds closed)",
                    name.c_str(), path.c_str(), bad, reply.fds.size());
                return Status::from_errno(EPROTO);
            }
            if (r.status == 0) {
                log(LogLevel::Debug, "importer: %s: received", name.c_str());
                Fetched got;
                got.fd = std::move(reply.fds[0]);
                got.tag = r.tag;
                return got;
            }
            log(r.status == EACCES || r.status == EPROTO ? LogLevel::Error : LogLevel::Warning,
                "importer: %s: refused by %s: %s (%s)", name.c_str(), server,
                detail::detail_text(r.detail), std::strerror(r.status));
            if (refused)
                *refused = true;
            return Status::from_errno(r.status);
        }
    }
    log(LogLevel::Warning, "importer: %s: %s", name.c_str(),
        err == ETIMEDOUT ? "the exporter did not answer in time" : std::strerror(err));
    return Status::from_errno(err);
}

detail::WireRequest request_for(Kind kind, uint64_t object)
{
    detail::WireRequest req{};
    req.magic = detail::kRequestMagic;
    req.version = detail::kWireVersion;
    req.kind = static_cast<uint8_t>(kind);
    req.object = object;
    return req;
}

bool broker_runs_here(std::string &path)
{
    path = detail::broker_socket_path();
    return !path.empty() && ::access(path.c_str(), F_OK) == 0;
}

} // namespace

Result<Fetched> fetch(const Key &key, Kind kind, int timeout_ms)
{
    if (!detail::valid_kind(kind) || key.object == 0 || !detail::valid_endpoint(key.endpoint))
        return Status::from_errno(EINVAL);
    const int64_t deadline_ms = npuipc_clock::deadline_ms(timeout_ms);
    try {
        const std::string name = detail::redacted(key.endpoint, key.object);
        detail::WireRequest req = request_for(kind, key.object);
        std::memcpy(req.secret, key.secret.data(), kSecretBytes);
        if (detail::is_broker_endpoint(key.endpoint)) {
            std::string broker = detail::broker_socket_path();
            if (broker.empty()) {
                log(LogLevel::Warning, "importer: %s: a broker's key, and no broker is set",
                    name.c_str());
                return Status::from_errno(ECONNREFUSED);
            }
            return fetch_from(broker, name, req, deadline_ms, true);
        }
        auto path = find_socket(key.endpoint);
        if (!path.ok()) {
            if (path.error() == ECONNREFUSED)
                log(LogLevel::Warning, "importer: %s: the exporter is gone (no socket)",
                    name.c_str());
            return path.status();
        }
        return fetch_from(path.value(), name, req, deadline_ms, false);
    } catch (const std::bad_alloc &) {
        return Status::from_errno(ENOMEM);
    }
}

Result<Fetched> fetch_named(uint64_t name, Kind kind, int timeout_ms)
{
    if (name == 0 || !detail::valid_kind(kind))
        return Status::from_errno(EINVAL);
    const int64_t deadline_ms = npuipc_clock::deadline_ms(timeout_ms);
    try {
        // A broker's name first. Unknown there, or no broker answering
        // (a stale socket): perhaps one of a process that published
        // without the broker.
        std::string broker;
        bool broker_said_gone = false;
        if (broker_runs_here(broker)) {
            detail::WireRequest req = request_for(kind, name);
            req.flags = detail::kFetchByName;
            bool refused = false;
            Result<Fetched> got =
                fetch_from(broker, "a named key", req, deadline_ms, true, &refused);
            if (got.ok() || (got.error() != ESRCH && got.error() != ECONNREFUSED))
                return got;
            broker_said_gone = refused && got.error() == ECONNREFUSED;
        }
        Result<std::string> text = resolve_name(name);
        // No file either: the broker's answer ("gone": its exporter died).
        if (!text.ok())
            return broker_said_gone && text.error() == ESRCH ? Status::from_errno(ECONNREFUSED)
                                                             : text.status();
        Result<Key> key = parse_key(text.value().c_str());
        if (!key.ok())
            return key.status();
        const int64_t left = deadline_ms - npuipc_clock::now_ms();
        if (timeout_ms >= 0 && left <= 0)
            return Status::from_errno(ETIMEDOUT);
        Result<Fetched> got =
            fetch(key.value(), kind, timeout_ms < 0 ? timeout_ms : static_cast<int>(left));
        if (got.error() == ECONNREFUSED)
            detail::forget_dead_name(name);
        return got;
    } catch (const std::bad_alloc &) {
        return Status::from_errno(ENOMEM);
    }
}

} // namespace npuipc::ipc
