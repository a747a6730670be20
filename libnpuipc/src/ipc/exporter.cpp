// SPDX-License-Identifier: MIT
// The exporter of the IPC transport: one per process, made by the first
// publish(): a listening SOCK_SEQPACKET socket in the socket directory and a
// thread that serves it with an event loop on io_uring, or on epoll where the
// process may not have a ring (seccomp filters, io_uring_disabled). Both
// loops only wait: the request handling is the same code.
//
// Locking: g_mutex guards g_exporter and everything in it, including the
// server thread's connection table (so that the atfork child handler, which
// runs with g_mutex held by the forking thread, sees a consistent set of
// fds to close). The server thread takes g_mutex only for short table
// updates and lookups; it never holds it across make_fd, a /proc read, a
// log call or a send.
#include "ipc/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace npuipc::ipc {
namespace {

using detail::log;

struct Source {
    UniqueFd fd;                               // published fd, or
    std::function<Result<UniqueFd>()> make_fd; // made on each fetch
};

using detail::AllowedPid;
using detail::judge_peer;
using detail::read_start_time;

struct Entry {
    Kind kind = Kind::Memory;
    std::array<uint8_t, kSecretBytes> secret{};
    bool validate_pid = false;
    uint32_t tag = 0;
    std::shared_ptr<Source> source;
    std::vector<AllowedPid> allowed;
};

struct Conn {
    int fd = -1;
    uint64_t token = 0; // io_uring: its polls' user_data
    bool armed = false; // io_uring: a poll is pending
    int64_t deadline_ms = 0;
    struct ucred cred {};
};

struct Exporter {
    pid_t owner = 0;
    std::string endpoint;
    std::string path;
    int listen_fd = -1;
    // The event loop: a ring when uring, else epoll_fd.
    bool uring = false;
    struct io_uring ring {};
    int epoll_fd = -1;
    uint32_t next_generation = 1;
    uint64_t listen_token = 0;
    bool listen_armed = false;
    uint64_t next_object = 1;
    std::unordered_map<uint64_t, Entry> entries;
    // Server thread's; changed under g_mutex. In deadline order: accept
    // order, unless set_request_deadline_ms() shortened the deadline.
    std::list<Conn> conns;
    std::unordered_map<int, std::list<Conn>::iterator> conn_by_fd;
    bool listener_paused = false;
    int64_t listener_resume_ms = 0;
    int64_t last_busy_warning_ms = -1000000;
};

std::mutex g_mutex;
Exporter *g_exporter = nullptr; // never freed: the thread uses it until exit
std::atomic<bool> g_pid_ns_ok{true};
std::atomic<int> g_request_deadline_ms{detail::kRequestDeadlineMs};

// ---- the event loop: io_uring or epoll ----
//
// Only the waiting differs. epoll watches the fds level-triggered. io_uring
// arms one-shot polls (IORING_OP_POLL_ADD), re-armed after a readiness
// that leaves the fd watched; a poll armed on a ready fd completes at once,
// so this is level-triggered too. A poll's user_data is a token, the fd in
// the low 32 bits and a generation in the high ones (never 0: 0 marks the
// loop's own requests, whose completions are ignored), so that the
// completion of a poll on a closed fd whose number was reused is stale,
// not mistaken for the new connection's. Polls are submitted only by the
// server thread, which never exits (their completion work runs on the
// submitting task). A pending poll holds a reference to its file, so a
// connection's poll is cancelled before its fd is closed.

uint64_t new_token(Exporter *ex, int fd)
{
    uint32_t generation = ex->next_generation++;
    if (generation == 0)
        generation = ex->next_generation++;
    return (static_cast<uint64_t>(generation) << 32) | static_cast<uint32_t>(fd);
}

struct io_uring_sqe *get_sqe(Exporter *ex)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ex->ring);
    if (!sqe) { // the submission queue is full: flush it
        io_uring_submit(&ex->ring);
        sqe = io_uring_get_sqe(&ex->ring);
    }
    return sqe;
}

// Queues a poll for input on fd (submitted with the next wait).
bool uring_arm(Exporter *ex, int fd, uint64_t token)
{
    struct io_uring_sqe *sqe = get_sqe(ex);
    if (!sqe)
        return false;
    io_uring_prep_poll_add(sqe, fd, POLLIN);
    io_uring_sqe_set_data64(sqe, token);
    return true;
}

// Cancels a pending poll, at once: the poll holds a reference to the file,
// which must be released when the fd is closed (a peer waits for EOF).
void uring_disarm(Exporter *ex, uint64_t token)
{
    struct io_uring_sqe *sqe = get_sqe(ex);
    if (!sqe)
        return; // the poll ends when the peer closes; its completion is stale
    io_uring_prep_poll_remove(sqe, token);
    io_uring_sqe_set_data64(sqe, 0);
    io_uring_submit(&ex->ring);
}

// Starts watching a new connection; g_mutex held.
bool watch_conn(Exporter *ex, Conn *conn)
{
    if (ex->uring) {
        conn->token = new_token(ex, conn->fd);
        conn->armed = uring_arm(ex, conn->fd, conn->token);
        return conn->armed;
    }
    struct epoll_event ev {};
    ev.events = EPOLLIN;
    ev.data.fd = conn->fd;
    return ::epoll_ctl(ex->epoll_fd, EPOLL_CTL_ADD, conn->fd, &ev) == 0;
}

// Stops watching a connection, before its fd is closed.
void unwatch_conn(Exporter *ex, const Conn &conn)
{
    if (!ex->uring)
        ::epoll_ctl(ex->epoll_fd, EPOLL_CTL_DEL, conn.fd, nullptr);
    else if (conn.armed)
        uring_disarm(ex, conn.token);
}

void close_conn(Exporter *ex, int fd);
void pause_listener(Exporter *ex, int64_t now);

// Watches a connection again after a readiness that left it open.
void rewatch_conn(Exporter *ex, int fd)
{
    if (!ex->uring)
        return; // epoll: still registered
    auto it = ex->conn_by_fd.find(fd);
    if (it == ex->conn_by_fd.end() || it->second->armed)
        return;
    it->second->armed = uring_arm(ex, fd, it->second->token);
    if (!it->second->armed)
        close_conn(ex, fd);
}

// Whether the listener is watched: false pauses accepting.
bool watch_listener(Exporter *ex, bool on)
{
    if (!ex->uring) {
        struct epoll_event ev {};
        ev.events = on ? static_cast<uint32_t>(EPOLLIN) : 0u;
        ev.data.fd = ex->listen_fd;
        return ::epoll_ctl(ex->epoll_fd, EPOLL_CTL_MOD, ex->listen_fd, &ev) == 0;
    }
    if (on && !ex->listen_armed) {
        ex->listen_token = new_token(ex, ex->listen_fd);
        ex->listen_armed = uring_arm(ex, ex->listen_fd, ex->listen_token);
        return ex->listen_armed;
    }
    if (!on && ex->listen_armed) {
        uring_disarm(ex, ex->listen_token);
        ex->listen_armed = false;
    }
    return true;
}

// Waits at most timeout_ms (-1: no bound) for readiness: the connections
// that are ready go to ready, and listener_ready says whether accept may
// succeed. ready holds at most one entry per connection.
void wait_ready(Exporter *ex, int timeout_ms, std::vector<int> *ready, bool *listener_ready)
{
    if (!ex->uring) {
        struct epoll_event events[64];
        int n = ::epoll_wait(ex->epoll_fd, events, 64, timeout_ms);
        if (n < 0) {
            if (errno != EINTR) {
                log(LogLevel::Error, "exporter: epoll_wait: %s", std::strerror(errno));
                ::usleep(100000);
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            if (events[i].data.fd == ex->listen_fd)
                *listener_ready = true;
            else
                ready->push_back(events[i].data.fd);
        }
        return;
    }
    struct __kernel_timespec ts {};
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = static_cast<long long>(timeout_ms % 1000) * 1000000;
    struct io_uring_cqe *cqe = nullptr;
    int rc = io_uring_submit_and_wait_timeout(&ex->ring, &cqe, 1, timeout_ms < 0 ? nullptr : &ts,
                                              nullptr);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        log(LogLevel::Error, "exporter: io_uring_enter: %s", std::strerror(-rc));
        ::usleep(100000);
    }
    unsigned head;
    unsigned seen = 0;
    std::vector<int> broken;
    io_uring_for_each_cqe(&ex->ring, head, cqe)
    {
        seen++;
        const uint64_t token = io_uring_cqe_get_data64(cqe);
        if (token == 0)
            continue;
        if (token == ex->listen_token) {
            if (!ex->listen_armed)
                continue; // cancelled
            ex->listen_armed = false;
            if (cqe->res < 0) {
                log(LogLevel::Error, "exporter: poll of the listener: %s; pausing for 100 ms",
                    std::strerror(-cqe->res));
                pause_listener(ex, detail::now_ms());
            } else {
                *listener_ready = true;
            }
            continue;
        }
        const int fd = static_cast<int>(static_cast<uint32_t>(token));
        auto it = ex->conn_by_fd.find(fd); // this thread's own table: no lock to read
        if (it == ex->conn_by_fd.end() || it->second->token != token || !it->second->armed)
            continue; // stale: the connection is gone
        it->second->armed = false;
        if (cqe->res < 0)
            broken.push_back(fd);
        else
            ready->push_back(fd);
    }
    io_uring_cq_advance(&ex->ring, seen);
    for (int fd : broken)
        close_conn(ex, fd);
}

// A ring for the exporter, or false where io_uring is unavailable.
bool init_ring(struct io_uring *ring)
{
    struct io_uring_params params {};
    params.flags = IORING_SETUP_CQSIZE;
    // Pending polls: the listener and at most kMaxConnections + 1
    // connections; each cancelled one completes twice.
    params.cq_entries = 2048;
    int rc = io_uring_queue_init_params(256, ring, &params);
    if (rc < 0) {
        log(LogLevel::Debug, "exporter: io_uring unavailable (%s): event loop on epoll",
            std::strerror(-rc));
        return false;
    }
    // The loop waits with a timeout argument (5.11) and relies on no
    // completion being dropped.
    const char *why = nullptr;
    if (!(params.features & IORING_FEAT_EXT_ARG) || !(params.features & IORING_FEAT_NODROP))
        why = "kernel too old";
    // A filter may allow io_uring_setup and not io_uring_enter.
    struct io_uring_sqe *sqe = why ? nullptr : io_uring_get_sqe(ring);
    if (sqe) {
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, 0);
        rc = io_uring_submit_and_wait(ring, 1);
        struct io_uring_cqe *cqe = nullptr;
        if (rc < 0)
            why = std::strerror(-rc);
        else if (io_uring_peek_cqe(ring, &cqe) == 0)
            io_uring_cqe_seen(ring, cqe);
    }
    // The ring's mappings are not copied into children (see atfork_child).
    if (!why && io_uring_ring_dontfork(ring) != 0)
        why = "madvise";
    if (why) {
        log(LogLevel::Debug, "exporter: io_uring unusable (%s): event loop on epoll", why);
        io_uring_queue_exit(ring);
        return false;
    }
    return true;
}

// ---- the server thread ----

void send_reply(int fd, int status, uint16_t detail, int pass_fd, uint32_t tag = 0)
{
    detail::WireReply reply{};
    reply.magic = detail::kReplyMagic;
    reply.version = detail::kWireVersion;
    reply.detail = detail;
    reply.status = status;
    reply.tag = status == 0 ? tag : 0;
    ssize_t n = detail::send_with_fd(fd, &reply, sizeof(reply), pass_fd, MSG_DONTWAIT);
    if (n < 0)
        log(LogLevel::Debug, "exporter: reply not sent: %s", std::strerror(errno));
}

void close_conn(Exporter *ex, int fd)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = ex->conn_by_fd.find(fd);
    if (it == ex->conn_by_fd.end())
        return;
    unwatch_conn(ex, *it->second);
    ex->conns.erase(it->second);
    ex->conn_by_fd.erase(it);
    ::close(fd);
}

struct Answer {
    int status = 0;
    uint16_t detail = detail::kDetailNone;
    UniqueFd made;  // an fd made for this fetch
    int fd = -1;    // the fd to send (made's, or a published one)
    uint32_t tag = 0;
    std::shared_ptr<Source> hold; // keeps a published fd open while sent
};

void serve_request(Exporter *ex, const Conn &conn, const detail::WireRequest &req, Answer *ans)
{
    const Kind kind = static_cast<Kind>(req.kind);
    const std::string name = detail::redacted(ex->endpoint, req.object);
    const pid_t pid = conn.cred.pid;

    if (conn.cred.uid != geteuid()) {
        log(LogLevel::Error, "exporter: refused %s to pid %d: uid %u is not this process's uid %u",
            name.c_str(), pid, static_cast<unsigned>(conn.cred.uid),
            static_cast<unsigned>(geteuid()));
        ans->status = EACCES;
        ans->detail = detail::kDetailUid;
        return;
    }

    bool validate = false;
    bool found = false;
    Kind entry_kind = Kind::Memory;
    std::vector<AllowedPid> allowed;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = ex->entries.find(req.object);
        if (it != ex->entries.end() && detail::secrets_equal(it->second.secret.data(), req.secret)) {
            found = true;
            entry_kind = it->second.kind;
            validate = it->second.validate_pid;
            if (entry_kind == kind) {
                ans->hold = it->second.source;
                ans->tag = it->second.tag;
                if (validate)
                    allowed = it->second.allowed;
            }
        }
    }
    if (!found) {
        log(LogLevel::Warning,
            "exporter: refused %s to pid %d: no such object (never published, revoked, or wrong "
            "secret)",
            name.c_str(), pid);
        ans->status = ESRCH;
        ans->detail = detail::kDetailUnknown;
        return;
    }
    if (entry_kind != kind) {
        log(LogLevel::Warning, "exporter: refused %s to pid %d: it is %s, %s was asked for",
            name.c_str(), pid, detail::kind_name(entry_kind), detail::kind_name(kind));
        ans->status = EPROTOTYPE;
        ans->detail = detail::kDetailKind;
        return;
    }
    if (validate) {
        uint16_t why = g_pid_ns_ok.load() ? judge_peer(conn.fd, pid, allowed)
                                          : static_cast<uint16_t>(detail::kDetailPidNs);
        if (why != detail::kDetailNone) {
            log(LogLevel::Error, "exporter: refused %s to pid %d: %s", name.c_str(), pid,
                detail::detail_text(why));
            ans->status = EACCES;
            ans->detail = why;
            ans->hold.reset();
            return;
        }
    }
    if (ans->hold->fd) {
        ans->fd = ans->hold->fd.get();
    } else {
        Result<UniqueFd> made = Status::from_errno(EIO);
        try {
            made = ans->hold->make_fd();
        } catch (...) {
            made = Status::from_errno(ENOMEM);
        }
        if (!made.ok() || !made.value()) {
            int err = made.ok() ? EIO : made.error();
            log(LogLevel::Warning, "exporter: could not make the fd of %s for pid %d: %s",
                name.c_str(), pid, std::strerror(err));
            ans->status = (err == ENOMEM || err == EMFILE || err == ENFILE || err == ESRCH) ? err
                                                                                           : EIO;
            ans->detail = err == ESRCH ? detail::kDetailUnknown : detail::kDetailMakeFd;
            return;
        }
        ans->made = std::move(made).value();
        ans->fd = ans->made.get();
    }
    log(LogLevel::Debug, "exporter: sent %s to pid %d", name.c_str(), pid);
}

// Reads a connection's request if it has come and answers it. Returns false
// if there is nothing to read yet (the connection stays).
bool handle_conn(Exporter *ex, int fd)
{
    auto found = ex->conn_by_fd.find(fd); // this thread's own table: no lock to read
    if (found == ex->conn_by_fd.end())
        return true;
    const Conn conn = *found->second;

    union {
        detail::WireRequest req;
        char bytes[sizeof(detail::WireRequest) + 16];
    } buf;
    struct iovec iov = {&buf, sizeof(buf)};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    // No control buffer: fds a client attaches are discarded by the kernel
    // (and flagged MSG_CTRUNC).
    ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return false;
    if (n <= 0) {
        log(LogLevel::Debug, "exporter: pid %d closed its connection without a request",
            conn.cred.pid);
        close_conn(ex, fd);
        return true;
    }
    const detail::WireRequest &req = buf.req;
    if (static_cast<size_t>(n) != sizeof(req) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        req.magic != detail::kRequestMagic || req.version != detail::kWireVersion ||
        req.flags != 0 || !detail::valid_kind(static_cast<Kind>(req.kind)) || req.object == 0) {
        log(LogLevel::Warning,
            "exporter: refused a malformed request (%zd bytes%s) from pid %d uid %u", n,
            (msg.msg_flags & MSG_CTRUNC) ? ", with control data" : "", conn.cred.pid,
            static_cast<unsigned>(conn.cred.uid));
        send_reply(fd, EPROTO, detail::kDetailBadRequest, -1);
        close_conn(ex, fd);
        return true;
    }
    Answer ans;
    serve_request(ex, conn, req, &ans);
    send_reply(fd, ans.status, ans.detail, ans.status == 0 ? ans.fd : -1, ans.tag);
    close_conn(ex, fd);
    return true;
}

void drop_oldest(Exporter *ex)
{
    if (ex->conns.empty())
        return;
    int fd = ex->conns.front().fd;
    pid_t pid = ex->conns.front().cred.pid;
    // Serve it if its request has come; otherwise it must go.
    if (handle_conn(ex, fd))
        return;
    int64_t now = detail::now_ms();
    if (now - ex->last_busy_warning_ms >= 1000) {
        ex->last_busy_warning_ms = now;
        log(LogLevel::Warning,
            "exporter: %zu connections open: dropping the oldest ones that sent nothing (pid "
            "%d)",
            detail::kMaxConnections, pid);
    }
    send_reply(fd, EAGAIN, detail::kDetailBusy, -1);
    close_conn(ex, fd);
}

void pause_listener(Exporter *ex, int64_t now)
{
    watch_listener(ex, false);
    ex->listener_paused = true;
    ex->listener_resume_ms = now + 100;
}

// Accepts and registers one connection, with g_mutex held so that a fork
// never happens while the connection's fd is missing from the table.
// Returns 0 or accept4's errno.
int accept_one(Exporter *ex)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    int fd = ::accept4(ex->listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return errno;
    Conn conn;
    conn.fd = fd;
    conn.deadline_ms = detail::now_ms() + g_request_deadline_ms.load();
    socklen_t len = sizeof(conn.cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &conn.cred, &len) != 0 ||
        !watch_conn(ex, &conn)) {
        ::close(fd);
        return 0;
    }
    try {
        auto pos = ex->conns.end();
        while (pos != ex->conns.begin() && std::prev(pos)->deadline_ms > conn.deadline_ms)
            --pos;
        auto it = ex->conns.insert(pos, conn);
        try {
            ex->conn_by_fd[fd] = it;
        } catch (const std::bad_alloc &) {
            ex->conns.erase(it);
            throw;
        }
    } catch (const std::bad_alloc &) {
        unwatch_conn(ex, conn);
        ::close(fd);
    }
    return 0;
}

void accept_some(Exporter *ex)
{
    for (int i = 0; i < 64; i++) {
        int err = accept_one(ex);
        if (err == EAGAIN)
            return;
        if (err == 0 || err == EINTR || err == ECONNABORTED || err == EPROTO) {
            if (ex->conns.size() > detail::kMaxConnections)
                drop_oldest(ex);
            continue;
        }
        if ((err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) &&
            !ex->conns.empty()) {
            drop_oldest(ex);
            continue;
        }
        log(LogLevel::Error, "exporter: accept: %s; pausing for 100 ms", std::strerror(err));
        pause_listener(ex, detail::now_ms());
        return;
    }
}

void *serve(void *arg)
{
    auto *ex = static_cast<Exporter *>(arg);
    std::vector<int> ready;
    try {
        ready.reserve(detail::kMaxConnections + 2);
    } catch (const std::bad_alloc &) {
    }
    if (!watch_listener(ex, true))
        pause_listener(ex, detail::now_ms());
    for (;;) {
        int64_t now = detail::now_ms();
        int64_t wake = -1;
        if (!ex->conns.empty())
            wake = ex->conns.front().deadline_ms;
        if (ex->listener_paused && (wake < 0 || ex->listener_resume_ms < wake))
            wake = ex->listener_resume_ms;
        int timeout = wake < 0 ? -1 : static_cast<int>(std::max<int64_t>(0, wake - now));
        ready.clear();
        bool listener_ready = false;
        try {
            wait_ready(ex, timeout, &ready, &listener_ready);
        } catch (const std::bad_alloc &) {
            // ready has room for every connection, so this is not
            // expected; a connection left out is closed at its deadline.
        }
        for (int fd : ready) {
            try {
                if (!handle_conn(ex, fd))
                    rewatch_conn(ex, fd);
            } catch (...) {
                close_conn(ex, fd);
            }
        }
        // Accept after the connections of this batch are served, so that
        // a number reused by accept4 is not mistaken for an older event's.
        if (listener_ready) {
            try {
                accept_some(ex);
            } catch (...) {
            }
        }
        if (ex->uring && !ex->listener_paused && !ex->listen_armed && !watch_listener(ex, true))
            pause_listener(ex, detail::now_ms());
        now = detail::now_ms();
        while (!ex->conns.empty() && ex->conns.front().deadline_ms <= now) {
            log(LogLevel::Debug, "exporter: pid %d sent no request by its deadline: closed",
                ex->conns.front().cred.pid);
            close_conn(ex, ex->conns.front().fd);
        }
        if (ex->listener_paused && ex->listener_resume_ms <= now) {
            ex->listener_paused = false;
            if (!watch_listener(ex, true))
                pause_listener(ex, now);
        }
    }
    return nullptr;
}

// ---- starting, fork, exit ----

// The broker client's lock is taken here too, so that both follow the
// runtime's (registered after these, its prepare handler runs first).
void atfork_prepare()
{
    g_mutex.lock();
    detail::broker_atfork_prepare();
}

void atfork_parent()
{
    detail::broker_atfork_parent();
    g_mutex.unlock();
}

// The child has no server thread. It closes its copies of the exporter's
// fds (the socket path stays: it is the parent's) and forgets the state,
// leaking it: the destructors of make_fd functions must not run here.
void atfork_child()
{
    Exporter *ex = g_exporter;
    if (ex) {
        ::close(ex->listen_fd);
        // The ring's mappings were not copied (MADV_DONTFORK): only its
        // fd is here. Closing it does not touch the parent's ring.
        ::close(ex->uring ? ex->ring.ring_fd : ex->epoll_fd);
        for (const Conn &c : ex->conns)
            ::close(c.fd);
        for (auto &e : ex->entries)
            if (e.second.source && e.second.source->fd)
                ::close(e.second.source->fd.release());
        g_exporter = nullptr;
    }
    detail::broker_atfork_child();
    g_mutex.unlock();
}

void unlink_at_exit()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_exporter && g_exporter->owner == ::getpid())
        ::unlink(g_exporter->path.c_str());
}

// Removes the sockets of exporters that are gone: nobody listens on them.
void remove_stale_sockets(const std::string &dir)
{
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dfd)
        return;
    DIR *d = ::fdopendir(dfd.get());
    if (!d)
        return;
    dfd.release();
    const uid_t uid = geteuid();
    while (const struct dirent *e = ::readdir(d)) {
        const size_t len = std::strlen(e->d_name);
        if (len <= 5 || std::strcmp(e->d_name + len - 5, ".sock") != 0)
            continue;
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISSOCK(st.st_mode) || st.st_uid != uid)
            continue;
        auto path = detail::socket_path(dir, e->d_name);
        if (!path.ok())
            continue;
        UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (!s)
            break;
        struct sockaddr_un addr {};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path.value().c_str(), path.value().size() + 1);
        if (::connect(s.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0 &&
            errno == ECONNREFUSED) {
            if (::unlinkat(::dirfd(d), e->d_name, 0) == 0)
                log(LogLevel::Debug, "exporter: removed the stale socket %s",
                    path.value().c_str());
        }
    }
    ::closedir(d);
}

// Makes the exporter; called with g_mutex held.
Status start_exporter()
{
    static bool hooks_registered = false;
    if (!hooks_registered) {
        if (int err = detail::register_fork_handlers())
            return Status::from_errno(err);
        if (::atexit(unlink_at_exit) != 0)
            return Status::from_errno(ENOMEM);
        hooks_registered = true;
    }

    const std::string dir = detail::exporter_dir();
    Status st = detail::check_dir(dir, true);
    if (!st.ok())
        return st;
    auto endpoint = detail::new_endpoint();
    if (!endpoint.ok())
        return endpoint.status();
    auto path = detail::socket_path(dir, endpoint.value() + ".sock");
    if (!path.ok())
        return path.status();
    const std::string tmp = dir + "/" + endpoint.value() + ".tmp"; // shorter than path

    remove_stale_sockets(dir);

    UniqueFd listen_fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!listen_fd)
        return Status::from_errno(errno);
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, tmp.c_str(), tmp.size() + 1);
    // Bound under a name no cleaner looks at, and renamed once listening:
    // a *.sock always has a listener until its process ends, so a starting
    // exporter never takes a live socket for a stale one.
    ::unlink(tmp.c_str());
    if (::bind(listen_fd.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0) {
        int err = errno;
        log(LogLevel::Error, "exporter: bind %s: %s", tmp.c_str(), std::strerror(err));
        return Status::from_errno(err);
    }
    if (::listen(listen_fd.get(), SOMAXCONN) != 0 ||
        ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.value().c_str(), RENAME_NOREPLACE) != 0) {
        int err = errno;
        log(LogLevel::Error, "exporter: listen on %s: %s", path.value().c_str(),
            std::strerror(err));
        ::unlink(tmp.c_str());
        return Status::from_errno(err);
    }
    auto fail = [&](int err) {
        ::unlink(path.value().c_str());
        return Status::from_errno(err);
    };
    auto ex = std::make_unique<Exporter>();
    ex->owner = ::getpid();
    ex->endpoint = endpoint.value();
    ex->path = path.value();
    ex->listen_fd = listen_fd.get();
    // The thread arms the listener (its requests are its own).
    ex->uring = init_ring(&ex->ring);
    UniqueFd epoll_fd;
    if (!ex->uring) {
        epoll_fd = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
        if (!epoll_fd)
            return fail(errno);
        struct epoll_event ev {};
        ev.events = EPOLLIN;
        ev.data.fd = listen_fd.get();
        if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, listen_fd.get(), &ev) != 0)
            return fail(errno);
        ex->epoll_fd = epoll_fd.get();
    }

    // The thread takes no signal: they stay the application's.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int err = ::pthread_create(&thread, &attr, serve, ex.get());
    ::pthread_attr_destroy(&attr);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (err) {
        log(LogLevel::Error, "exporter: cannot start its thread: %s", std::strerror(err));
        if (ex->uring)
            io_uring_queue_exit(&ex->ring);
        return fail(err);
    }
    ::pthread_setname_np(thread, "npuipc-export");
    listen_fd.release();
    epoll_fd.release();
    g_exporter = ex.release();
    log(LogLevel::Debug, "exporter: serving %s (event loop: %s)", g_exporter->path.c_str(),
        g_exporter->uring ? "io_uring" : "epoll");
    return {};
}

Result<std::string> publish_source(Kind kind, std::shared_ptr<Source> source, bool validate_pid,
                                   uint32_t tag)
{
    if (!detail::valid_kind(kind))
        return Status::from_errno(EINVAL);
    std::array<uint8_t, kSecretBytes> secret{};
    Status st = detail::fill_random(secret.data(), secret.size());
    if (!st.ok())
        return st;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_exporter) {
        st = start_exporter();
        if (!st.ok())
            return st;
    }
    Exporter *ex = g_exporter;
    const uint64_t object = ex->next_object++;
    Entry entry;
    entry.kind = kind;
    entry.secret = secret;
    entry.validate_pid = validate_pid;
    entry.tag = tag;
    entry.source = std::move(source);
    std::string key = detail::format_key(ex->endpoint, object, secret);
    ex->entries.emplace(object, std::move(entry));
    return key;
}

// The entry of one of this process's keys; g_mutex held.
Result<std::unordered_map<uint64_t, Entry>::iterator> find_ours(const std::string &key_text)
{
    auto key = parse_key(key_text.c_str(), key_text.size() + 1);
    if (!key.ok())
        return key.status();
    Exporter *ex = g_exporter;
    if (!ex || key.value().endpoint != ex->endpoint)
        return Status::from_errno(ENOENT);
    auto it = ex->entries.find(key.value().object);
    if (it == ex->entries.end() ||
        !detail::secrets_equal(it->second.secret.data(), key.value().secret.data()))
        return Status::from_errno(ENOENT);
    return it;
}

} // namespace

Result<std::string> publish(Kind kind, UniqueFd fd, bool validate_pid, uint32_t tag)
{
    if (!fd)
        return Status::from_errno(EBADF);
    if (!detail::valid_kind(kind))
        return Status::from_errno(EINVAL);
    if (int err = detail::broker_connect()) {
        if (err != ENOENT)
            return Status::from_errno(err);
    } else {
        return detail::broker_publish(kind, fd.get(), validate_pid, tag);
    }
    try {
        auto source = std::make_shared<Source>();
        source->fd = std::move(fd);
        return publish_source(kind, std::move(source), validate_pid, tag);
    } catch (const std::bad_alloc &) {
        return Status::from_errno(ENOMEM);
    }
}

Result<std::string> publish(Kind kind, std::function<Result<UniqueFd>()> make_fd,
                            bool validate_pid, uint32_t tag)
{
    if (!make_fd || !detail::valid_kind(kind))
        return Status::from_errno(EINVAL);
    if (int err = detail::broker_connect()) {
        if (err != ENOENT)
            return Status::from_errno(err);
    } else {
        // The broker holds one fd for every fetch.
        Result<UniqueFd> fd = make_fd();
        if (!fd.ok())
            return fd.status();
        return detail::broker_publish(kind, fd.value().get(), validate_pid, tag);
    }
    std::shared_ptr<Source> source;
    try {
        source = std::make_shared<Source>();
        source->make_fd = std::move(make_fd);
        // On failure the function is destroyed here, with no lock held.
        return publish_source(kind, source, validate_pid, tag);
    } catch (const std::bad_alloc &) {
        return Status::from_errno(ENOMEM);
    }
}

Status allow(const std::string &key_text, const int32_t *pids, size_t count)
{
    if (!pids || count == 0)
        return Status::from_errno(EINVAL);
    for (size_t i = 0; i < count; i++)
        if (pids[i] <= 0)
            return Status::from_errno(EINVAL);
    auto key = parse_key(key_text.c_str(), key_text.size() + 1);
    if (!key.ok())
        return key.status();
    if (detail::is_broker_endpoint(key.value().endpoint))
        return detail::broker_allow(key.value(), pids, count);
    try {
        std::vector<AllowedPid> listed;
        listed.reserve(count);
        for (size_t i = 0; i < count; i++) {
            AllowedPid a;
            a.pid = pids[i];
            auto start = read_start_time(pids[i]);
            if (start.ok())
                a.start_time = start.value();
            else
                a.never = true;
            listed.push_back(a);
        }
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = find_ours(key_text);
        if (!it.ok())
            return it.status();
        std::vector<AllowedPid> &allowed = it.value()->second.allowed;
        for (const AllowedPid &a : listed) {
            auto same = std::find_if(allowed.begin(), allowed.end(),
                                     [&a](const AllowedPid &b) { return b.pid == a.pid; });
            if (same != allowed.end())
                *same = a;
            else
                allowed.push_back(a);
        }
        return {};
    } catch (const std::bad_alloc &) {
        return Status::from_errno(ENOMEM);
    }
}

Status revoke(const std::string &key_text)
{
    auto key = parse_key(key_text.c_str(), key_text.size() + 1);
    if (!key.ok())
        return key.status();
    if (detail::is_broker_endpoint(key.value().endpoint))
        return detail::broker_revoke(key.value());
    std::shared_ptr<Source> source; // released after the lock
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = find_ours(key_text);
    if (!it.ok())
        return it.status();
    source = std::move(it.value()->second.source);
    g_exporter->entries.erase(it.value());
    return {};
}

bool published_here(const std::string &key_text, std::optional<Kind> kind)
{
    auto key = parse_key(key_text.c_str(), key_text.size() + 1);
    if (key.ok() && detail::is_broker_endpoint(key.value().endpoint))
        return detail::broker_published(key.value(), kind);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = find_ours(key_text);
    return it.ok() && (!kind || it.value()->second.kind == *kind);
}

bool publishes_to_broker()
{
    return detail::broker_connect() == 0;
}

void set_pid_namespace_ok(bool ok)
{
    g_pid_ns_ok.store(ok);
}

Status set_request_deadline_ms(int ms)
{
    if (ms <= 0)
        return Status::from_errno(EINVAL);
    g_request_deadline_ms.store(ms);
    return {};
}

const char *exporter_loop_name()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_exporter)
        return nullptr;
    return g_exporter->uring ? "io_uring" : "epoll";
}

std::vector<int> exporter_fds()
{
    std::vector<int> fds = detail::broker_fds();
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_exporter) {
        fds.push_back(g_exporter->listen_fd);
        fds.push_back(g_exporter->uring ? g_exporter->ring.ring_fd : g_exporter->epoll_fd);
    }
    return fds;
}

} // namespace npuipc::ipc

int npuipc_ipc::register_fork_handlers()
{
    static std::once_flag once;
    static int err = 0;
    std::call_once(once, [] {
        using namespace npuipc::ipc;
        err = ::pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    });
    return err;
}
