// SPDX-License-Identifier: MIT
// npuipc-broker: holds the fds that processes export under IPC keys and
// hands them to importers that the key's allowlist names, so that a key
// works between containers, between users and while its exporter is
// stopped. It runs in the host's namespaces, where SO_PEERCRED gives every
// peer's host PID; unprivileged; local only. Documentation/ipc.md, The
// broker, describes it; npuipc-broker(8) its options.
#include "ipc/internal.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using namespace npuipc_ipc;
using npuipc::UniqueFd;

struct Options {
    std::string socket = "/run/npuipc/broker.sock";
    std::string user;                    // drop to this user after binding
    uint64_t max_fds_per_uid = 4096;     // held for the processes of one uid
    uint64_t max_bytes_per_uid = 256ULL << 30;
    // How long a connection may take to send its request (an exporter's
    // stays once it deposited).
    uint64_t request_timeout_ms = 2000;
};

struct Object {
    Kind kind = Kind::Memory;
    std::array<uint8_t, kSecretBytes> secret{};
    bool validate_pid = false;
    uint32_t tag = 0;
    UniqueFd fd;
    uint64_t bytes = 0;
    uint64_t owner = 0; // the exporter's connection (Conn::id)
    uid_t uid = 0;      // the exporter's
    uint64_t name = 0;  // kBrokerName's, or 0
    std::vector<AllowedPid> allowed;
};

struct Conn {
    uint64_t id = 0;
    UniqueFd fd;
    struct ucred cred {};
    int64_t deadline_ms = 0; // until it deposits: an importer's one request
    bool exporter = false;   // deposited: kept open, its objects with it
    std::set<uint64_t> objects;
};

struct Usage {
    uint64_t fds = 0;   // objects held
    uint64_t bytes = 0;
    uint64_t conns = 0; // connections open
    uint64_t closing = 0; // refused fds the closer has not closed yet
};

constexpr size_t kMaxAllowedPerObject = 1024;
// Refused fds and closed connections are closed by at most this many
// threads; a uid with this many closes pending is not served until they
// are done.
constexpr int kMaxClosers = 64;
constexpr size_t kMaxClosingPerUid = 16;
constexpr size_t kMaxFdsPerMessage = 253; // SCM_MAX_FD
constexpr int kAcceptsPerRound = 64;
constexpr int kAcceptPauseMs = 100;
// Objects dropped with their exporter's connection, remembered (by id and
// secret) so that an importer learns that the exporter is gone, as it
// would from the exporter's own socket; the oldest are forgotten first.
constexpr size_t kMaxTombstones = 4096;

std::string g_endpoint;
std::map<uint64_t, Object> g_objects;
std::map<uint64_t, std::array<uint8_t, kSecretBytes>> g_tombstones;
std::unordered_map<uint64_t, uint64_t> g_names; // name -> object id
// The names of dropped objects, and their order to forget the oldest.
std::unordered_set<uint64_t> g_dead_names;
std::deque<uint64_t> g_dead_name_order;
std::unordered_map<uid_t, Usage> g_usage;
// Object ids carry this broker's random instance in their top 32 bits, so
// that a key of a broker that restarted is told from an unknown one.
uint64_t g_instance = 0;
uint64_t g_next_object = 0;
uint64_t g_next_conn = 1;
// Set from RLIMIT_NOFILE: connections at most, per uid, and objects held.
size_t g_max_conns = 0;
size_t g_max_conns_per_uid = 0;
size_t g_max_objects = 0;
Options g_options;
volatile sig_atomic_t g_stop = 0;

void log_stderr(LogLevel level, const char *message)
{
    static const char *const names[] = {"debug", "info", "warning", "error"};
    if (level == LogLevel::Debug)
        return;
    std::fprintf(stderr, "npuipc-broker: %s: %s\n", names[static_cast<int>(level)], message);
}

// ---- closing what clients sent ----
//
// close() of a file may wait for its file system (a FUSE server's flush
// never answered) or its protocol (a lingering TCP socket), and so may the
// close of a connection whose queue holds fds, so the loop closes nothing a
// client gave it: refused fds and connections go to closer threads. Each
// closes the fds of one uid at a time, and a thread is added (up to
// kMaxClosers) whenever work waits and no closer is idle: a uid whose fds
// never close wedges one thread, not the other uids' closes. A connection
// holds its uid's connection slot until it is closed.

struct Closing {
    int fd;
    uid_t uid; // whose it was
    bool conn; // a client connection, holding a slot of its uid
};

struct Closer {
    std::mutex mu; // Protects queue, busy, idle, threads and failed
    std::condition_variable cv;
    std::deque<Closing> queue;
    std::multiset<uid_t> busy; // uids whose fd a thread is closing
    int idle = 0;              // threads waiting for work, or starting to
    int threads = 0;
    bool failed = false; // the last thread could not be started
    std::mutex done_mu;  // Protects done
    std::vector<Closing> done;
};

// Never destroyed: the detached closers wait on it until the process ends
// (destroying a condition variable with a waiter blocks exit).
Closer &g_closer = *new Closer;
int g_closed_wake = -1; // an eventfd the closers signal, polled by the loop

// The first queued fd of a uid no thread is closing for.
std::deque<Closing>::iterator next_to_close()
{
    return std::find_if(g_closer.queue.begin(), g_closer.queue.end(),
                        [](const Closing &c) { return g_closer.busy.count(c.uid) == 0; });
}

void closer_loop();

// Starts a closer if work waits that no idle closer will take. Called with
// g_closer.mu held. The thread takes no signal: they are the loop's.
void add_closer_if_needed_locked()
{
    if (g_closer.idle > 0 || g_closer.threads >= kMaxClosers ||
        next_to_close() == g_closer.queue.end())
        return;
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    try {
        std::thread(closer_loop).detach();
        g_closer.threads++;
        g_closer.idle++; // until it takes its first fd
        g_closer.failed = false;
    } catch (const std::system_error &e) {
        if (!g_closer.failed) // the loop retries on each round
            log(LogLevel::Error, "cannot start a closer thread (%s): closes wait", e.what());
        g_closer.failed = true;
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void closer_loop()
{
    std::unique_lock<std::mutex> lock(g_closer.mu);
    for (;;) {
        g_closer.cv.wait(lock, [] { return next_to_close() != g_closer.queue.end(); });
        g_closer.idle--;
        auto it = next_to_close();
        Closing item = *it;
        g_closer.queue.erase(it);
        g_closer.busy.insert(item.uid);
        add_closer_if_needed_locked(); // another uid's fd may wait too
        lock.unlock();
        ::close(item.fd);
        {
            std::lock_guard<std::mutex> done_lock(g_closer.done_mu);
            g_closer.done.push_back(item);
        }
        const uint64_t one = 1;
        (void)!::write(g_closed_wake, &one, sizeof(one));
        lock.lock();
        g_closer.busy.erase(g_closer.busy.find(item.uid));
        g_closer.idle++;
        g_closer.cv.notify_all(); // that uid's next fd may wait
    }
}

void close_later(UniqueFd fd, uid_t uid, bool conn)
{
    if (!fd)
        return;
    g_usage[uid].closing++;
    std::lock_guard<std::mutex> lock(g_closer.mu);
    g_closer.queue.push_back({fd.release(), uid, conn});
    add_closer_if_needed_locked();
    g_closer.cv.notify_all();
}

// Accounts what the closers finished, and starts a closer the last
// attempt could not.
void collect_closed()
{
    uint64_t count;
    (void)!::read(g_closed_wake, &count, sizeof(count));
    std::vector<Closing> done;
    {
        std::lock_guard<std::mutex> lock(g_closer.done_mu);
        done.swap(g_closer.done);
    }
    for (const Closing &c : done) {
        Usage &u = g_usage[c.uid];
        u.closing--;
        if (c.conn)
            u.conns--;
    }
    std::lock_guard<std::mutex> lock(g_closer.mu);
    add_closer_if_needed_locked();
}

// ---- what an fd is ----

// The text of /proc/self/<dir>/<fd> (a link or a small file), or "".
std::string proc_fd(const char *dir, int fd, bool link)
{
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/self/%s/%d", dir, fd);
    char buf[1024];
    ssize_t n;
    if (link) {
        n = ::readlink(path, buf, sizeof(buf) - 1);
    } else {
        UniqueFd f(::open(path, O_RDONLY | O_CLOEXEC));
        if (!f)
            return "";
        n = ::read(f.get(), buf, sizeof(buf) - 1);
    }
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Whether `fd` is a `kind`: a dma-buf (its fdinfo has dma-buf's exp_name
// and size lines; `bytes` is its size), or an npuipc event or notify (the
// driver's anonymous inodes). procfs only: no file system is asked.
bool fd_is(int fd, Kind kind, uint64_t &bytes)
{
    const std::string link = proc_fd("fd", fd, true);
    switch (kind) {
    case Kind::Memory: {
        if (link.compare(0, 8, "/dmabuf:") != 0 && link != "anon_inode:dmabuf")
            return false;
        const std::string info = proc_fd("fdinfo", fd, false);
        const size_t size = info.find("\nsize:\t"), exp = info.find("\nexp_name:\t");
        if (size == std::string::npos || exp == std::string::npos)
            return false;
        bytes = std::strtoull(info.c_str() + size + 7, nullptr, 10);
        return true;
    }
    case Kind::Event:
        return link == "anon_inode:[npuipc_event]";
    case Kind::Notify:
        return link == "anon_inode:[npuipc_notify]";
    }
    return false;
}

// ---- objects ----

void drop_object(std::map<uint64_t, Object>::iterator it)
{
    if (it->second.name)
        g_names.erase(it->second.name);
    Usage &u = g_usage[it->second.uid];
    u.fds--;
    u.bytes -= it->second.bytes;
    g_objects.erase(it);
}

bool dead_name(uint64_t name)
{
    return g_dead_names.count(name) != 0;
}

// ---- replies ----

void send_broker_reply(int fd, const BrokerReply &reply)
{
    ssize_t n;
    do
        n = ::send(fd, &reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
}

void send_fetch_reply(int fd, int status, uint16_t detail, int pass_fd, uint32_t tag)
{
    WireReply reply = {};
    reply.magic = kReplyMagic;
    reply.version = kWireVersion;
    reply.detail = detail;
    reply.status = status;
    reply.tag = status == 0 ? tag : 0;
    ssize_t n = send_with_fd(fd, &reply, sizeof(reply), pass_fd, MSG_DONTWAIT);
    // ETOOMANYREFS: more of the broker's fds are in flight, unread by their
    // importers, than its fd limit. This importer hears "busy", not silence.
    if (n < 0 && pass_fd >= 0 && errno != EPIPE && errno != ECONNRESET)
        send_fetch_reply(fd, EAGAIN, kDetailBusy, -1, 0);
}

// ---- importers ----

// An importer's request: the fd, if its key is right and the allowlist
// (when the key has one) names the very process asking. A 64-bit name
// (kFetchByName) is no secret: it serves only keys with an allowlist, or
// the exporter's own uid.
// `sender`: the PID the kernel attached to the request (SCM_CREDENTIALS,
// SO_PASSCRED), 0 if none.
void serve_fetch(const Conn &conn, const WireRequest &req, pid_t sender)
{
    if (req.version != kWireVersion || (req.flags & ~kFetchByName))
        return send_fetch_reply(conn.fd.get(), EPROTO, kDetailBadRequest, -1, 0);
    const bool by_name = req.flags & kFetchByName;
    if (by_name && req.object != 0 && dead_name(req.object))
        return send_fetch_reply(conn.fd.get(), ECONNREFUSED, kDetailNone, -1, 0);
    if (!by_name && (req.object & ~0xffffffffULL) != g_instance)
        return send_fetch_reply(conn.fd.get(), ECONNREFUSED, kDetailNone, -1, 0);
    auto dead = g_tombstones.find(req.object);
    if (!by_name && dead != g_tombstones.end() && secrets_equal(dead->second.data(), req.secret))
        return send_fetch_reply(conn.fd.get(), ECONNREFUSED, kDetailNone, -1, 0);
    auto it = g_objects.end();
    if (by_name) {
        auto named = g_names.find(req.object);
        if (req.object != 0 && named != g_names.end())
            it = g_objects.find(named->second);
        if (it != g_objects.end() && !it->second.validate_pid && it->second.uid != conn.cred.uid)
            it = g_objects.end();
    } else {
        it = g_objects.find(req.object);
        if (it != g_objects.end() && !secrets_equal(it->second.secret.data(), req.secret))
            it = g_objects.end();
    }
    if (it == g_objects.end()) {
        log(LogLevel::Info, "refused pid %d uid %u: %s", conn.cred.pid, conn.cred.uid,
            detail_text(kDetailUnknown));
        return send_fetch_reply(conn.fd.get(), ESRCH, kDetailUnknown, -1, 0);
    }
    Object &obj = it->second;
    if (static_cast<Kind>(req.kind) != obj.kind)
        return send_fetch_reply(conn.fd.get(), EPROTOTYPE, kDetailKind, -1, 0);
    if (obj.validate_pid) {
        // The request must come from the process that connected: a socket
        // passed on to another process (which could then wait for the
        // connector's PID to go to a listed process, where the kernel has
        // no SO_PEERPIDFD to pin it) is refused.
        uint16_t why = sender != conn.cred.pid
                           ? static_cast<uint16_t>(kDetailPeerGone)
                           : judge_peer(conn.fd.get(), conn.cred.pid, obj.allowed);
        if (why != kDetailNone) {
            log(LogLevel::Info, "refused pid %d uid %u: %s", conn.cred.pid, conn.cred.uid,
                detail_text(why));
            return send_fetch_reply(conn.fd.get(), EACCES, why, -1, 0);
        }
    }
    send_fetch_reply(conn.fd.get(), 0, kDetailNone, obj.fd.get(), obj.tag);
}

// ---- exporters ----

// Takes `fd` only when it succeeds; the caller closes what is left.
int deposit(Conn &conn, const BrokerRequest &req, UniqueFd &fd, BrokerReply &reply)
{
    const uid_t uid = conn.cred.uid;
    Kind kind = static_cast<Kind>(req.kind);
    if (!valid_kind(kind) || (req.flags & ~kBrokerValidatePid) || !fd)
        return EINVAL;
    uint64_t bytes = 0;
    if (!fd_is(fd.get(), kind, bytes)) {
        log(LogLevel::Warning, "pid %d deposited an fd that is not a %s", conn.cred.pid,
            kind_name(kind));
        return EBADF;
    }
    Usage &u = g_usage[uid];
    if (u.fds >= g_options.max_fds_per_uid || bytes > g_options.max_bytes_per_uid - u.bytes) {
        log(LogLevel::Warning, "uid %u is at its quota (%llu fds, %llu bytes)", uid,
            static_cast<unsigned long long>(u.fds), static_cast<unsigned long long>(u.bytes));
        return EDQUOT;
    }
    if (g_objects.size() >= g_max_objects) {
        log(LogLevel::Warning, "holding %zu objects, as many as its fd limit allows",
            g_objects.size());
        return EMFILE;
    }
    if ((g_next_object & 0xffffffffULL) == 0)
        return ENOSPC; // 2^32 deposits: ids are not reused
    Object obj;
    obj.kind = kind;
    obj.validate_pid = req.flags & kBrokerValidatePid;
    obj.tag = req.tag;
    obj.bytes = bytes;
    obj.owner = conn.id;
    obj.uid = uid;
    Status st = fill_random(obj.secret.data(), obj.secret.size());
    if (!st.ok())
        return st.error();
    obj.fd = std::move(fd);
    const uint64_t object = g_next_object++;
    std::memcpy(reply.secret, obj.secret.data(), kSecretBytes);
    reply.object = object;
    std::snprintf(reply.endpoint, sizeof(reply.endpoint), "%s", g_endpoint.c_str());
    g_objects.emplace(object, std::move(obj));
    conn.objects.insert(object);
    conn.exporter = true;
    u.fds++;
    u.bytes += bytes;
    return 0;
}

// An exporter's own object, named by id and secret.
std::map<uint64_t, Object>::iterator owned(const Conn &conn, const BrokerRequest &req)
{
    auto it = g_objects.find(req.object);
    if (it == g_objects.end() || it->second.owner != conn.id ||
        !secrets_equal(it->second.secret.data(), req.secret))
        return g_objects.end();
    return it;
}

// A random non-zero name, the same for every NAME of the object.
int name(const Conn &conn, const BrokerRequest &req, BrokerReply &reply)
{
    auto it = owned(conn, req);
    if (it == g_objects.end())
        return ENOENT;
    Object &obj = it->second;
    while (obj.name == 0) {
        uint64_t n = 0;
        Status st = fill_random(&n, sizeof(n));
        if (!st.ok())
            return st.error();
        if (n != 0 && g_names.emplace(n, it->first).second)
            obj.name = n;
    }
    reply.object = obj.name;
    return 0;
}

int allow(const Conn &conn, const BrokerRequest &req)
{
    if (req.count == 0 || req.count > kBrokerPidsPerRequest)
        return EINVAL;
    for (uint32_t i = 0; i < req.count; i++)
        if (req.pids[i] <= 0)
            return EINVAL;
    auto it = owned(conn, req);
    if (it == g_objects.end())
        return ENOENT;
    std::vector<AllowedPid> &allowed = it->second.allowed;
    for (uint32_t i = 0; i < req.count; i++) {
        AllowedPid a;
        a.pid = req.pids[i];
        auto start = read_start_time(a.pid);
        if (start.ok())
            a.start_time = start.value();
        else
            a.never = true;
        auto same = std::find_if(allowed.begin(), allowed.end(),
                                 [&a](const AllowedPid &b) { return b.pid == a.pid; });
        if (same != allowed.end())
            *same = a;
        else if (allowed.size() >= kMaxAllowedPerObject)
            return ENOSPC;
        else
            allowed.push_back(a);
    }
    return 0;
}

void serve_broker(Conn &conn, const BrokerRequest &req, UniqueFd &fd)
{
    BrokerReply reply = {};
    reply.magic = kBrokerReplyMagic;
    reply.version = kWireVersion;
    if (req.version != kWireVersion || req.pad != 0) {
        reply.status = EPROTO;
    } else if (req.op == kBrokerDeposit) {
        reply.status = deposit(conn, req, fd, reply);
    } else if (req.op == kBrokerAllow) {
        reply.status = allow(conn, req);
    } else if (req.op == kBrokerName) {
        reply.status = name(conn, req, reply);
    } else if (req.op == kBrokerRevoke) {
        auto it = owned(conn, req);
        reply.status = it == g_objects.end() ? ENOENT : 0;
        if (it != g_objects.end()) {
            conn.objects.erase(it->first);
            drop_object(it);
        }
    } else {
        reply.status = EPROTO;
    }
    send_broker_reply(conn.fd.get(), reply);
}

// ---- connections ----

// Reads one message; false when the connection is to be closed. Every fd
// a message carries is received (at most the kernel's 253 per message), so
// that none is released on this thread: a deposit's one fd is kept if it
// passes, and every other goes to the closers.
bool handle(Conn &conn)
{
    union {
        BrokerRequest broker;
        WireRequest fetch;
        char bytes[sizeof(BrokerRequest) + 1]; // one more: an oversized message shows
    } req;
    struct iovec iov = {&req, sizeof(req)};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage) +
                                         CMSG_SPACE(sizeof(struct ucred))];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n;
    do
        n = ::recvmsg(conn.fd.get(), &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EAGAIN;
    std::vector<UniqueFd> fds; // an empty message may carry fds too
    pid_t sender = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred cred;
            std::memcpy(&cred, CMSG_DATA(c), sizeof(cred));
            sender = cred.pid;
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
                int raw;
                std::memcpy(&raw, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
                fds.emplace_back(raw);
            }
    bool keep = false;
    const bool whole = n > 0 && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
    if (whole && static_cast<size_t>(n) == sizeof(WireRequest) &&
        req.fetch.magic == kRequestMagic && !conn.exporter) {
        serve_fetch(conn, req.fetch, sender);
        keep = false; // one request per importer connection
    } else if (whole && static_cast<size_t>(n) == sizeof(BrokerRequest) &&
               req.broker.magic == kBrokerMagic && fds.size() <= 1) {
        UniqueFd fd = fds.empty() ? UniqueFd() : std::move(fds[0]);
        if (fd && req.broker.op != kBrokerDeposit) {
            log(LogLevel::Warning, "pid %d attached an fd to a request that takes none",
                conn.cred.pid);
        } else {
            serve_broker(conn, req.broker, fd); // takes the fd of a deposit it accepts
            keep = true;
        }
        close_later(std::move(fd), conn.cred.uid, false);
    } else if (n > 0) {
        log(LogLevel::Warning, "pid %d sent a malformed request", conn.cred.pid);
    }
    for (UniqueFd &fd : fds)
        close_later(std::move(fd), conn.cred.uid, false);
    return keep;
}

void close_conn(std::vector<Conn> &conns, size_t i)
{
    Conn &conn = conns[i];
    for (uint64_t object : conn.objects) {
        auto it = g_objects.find(object);
        if (it == g_objects.end())
            continue;
        g_tombstones[it->first] = it->second.secret;
        if (g_tombstones.size() > kMaxTombstones)
            g_tombstones.erase(g_tombstones.begin()); // ids grow: the oldest
        if (it->second.name && g_dead_names.insert(it->second.name).second) {
            g_dead_name_order.push_back(it->second.name);
            if (g_dead_name_order.size() > kMaxTombstones) {
                g_dead_names.erase(g_dead_name_order.front());
                g_dead_name_order.pop_front();
            }
        }
        drop_object(it);
    }
    // Its queue may hold messages with fds, released when it closes; its
    // slot is free once it is.
    close_later(std::move(conn.fd), conn.cred.uid, true);
    conns.erase(conns.begin() + static_cast<std::ptrdiff_t>(i));
}

// False when accepting failed for want of fds: pause, as the listener
// stays readable.
bool accept_conns(int listen_fd, std::vector<Conn> &conns)
{
    for (int round = 0; round < kAcceptsPerRound; round++) {
        UniqueFd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd)
            return !(errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM);
        Conn conn;
        socklen_t len = sizeof(conn.cred);
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &conn.cred, &len) != 0)
            continue;
        Usage &u = g_usage[conn.cred.uid];
        if (conns.size() >= g_max_conns || u.conns >= g_max_conns_per_uid) {
            log(LogLevel::Warning, "%zu connections open, %llu of uid %u: refusing pid %d",
                conns.size(), static_cast<unsigned long long>(u.conns), conn.cred.uid,
                conn.cred.pid);
            send_fetch_reply(fd.get(), EAGAIN, kDetailBusy, -1, 0);
            close_later(std::move(fd), conn.cred.uid, false);
            continue;
        }
        u.conns++;
        conn.id = g_next_conn++;
        conn.fd = std::move(fd);
        conn.deadline_ms = now_ms() + static_cast<int64_t>(g_options.request_timeout_ms);
        conns.push_back(std::move(conn));
    }
    return true;
}

int serve(int listen_fd)
{
    std::vector<Conn> conns;
    int64_t accept_paused_until = 0;
    while (!g_stop) {
        collect_closed();
        std::vector<struct pollfd> polls;
        const bool accepting = now_ms() >= accept_paused_until;
        polls.push_back({accepting ? listen_fd : -1, POLLIN, 0});
        // A uid whose closes are backed up waits (its fd -1: not polled).
        for (const Conn &c : conns)
            polls.push_back({g_usage[c.cred.uid].closing < kMaxClosingPerUid ? c.fd.get() : -1,
                             POLLIN, 0});
        polls.push_back({g_closed_wake, POLLIN, 0}); // last: the others keep their indices
        int n = ::poll(polls.data(), polls.size(), accepting ? 500 : kAcceptPauseMs);
        if (n < 0 && errno != EINTR) {
            log(LogLevel::Error, "poll: %s", std::strerror(errno));
            return 1;
        }
        const int64_t now = now_ms();
        // From the back, so that closing one keeps the others' indices.
        for (size_t i = conns.size(); i-- > 0;) {
            short ev = polls[i + 1].revents;
            bool keep = true;
            if (!conns[i].exporter && now > conns[i].deadline_ms)
                keep = false; // first: a client that keeps talking has no more time
            else if ((ev & POLLIN) && g_usage[conns[i].cred.uid].closing < kMaxClosingPerUid)
                keep = handle(conns[i]); // re-checked: this round may have reached the cap
            else if (ev & (POLLHUP | POLLERR))
                keep = false;
            if (!keep)
                close_conn(conns, i);
        }
        if ((polls[0].revents & POLLIN) && !accept_conns(listen_fd, conns)) {
            log(LogLevel::Warning, "out of fds: not accepting for %d ms", kAcceptPauseMs);
            accept_paused_until = now_ms() + kAcceptPauseMs;
        }
    }
    return 0;
}

// ---- starting ----

// The listening socket systemd passes (LISTEN_FDS, sd_listen_fds(3)), or -1.
int socket_from_systemd()
{
    const char *pid = std::getenv("LISTEN_PID"), *fds = std::getenv("LISTEN_FDS");
    if (!pid || !fds || std::atoi(pid) != getpid() || std::atoi(fds) != 1)
        return -1;
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
    ::fcntl(3, F_SETFL, ::fcntl(3, F_GETFL) | O_NONBLOCK);
    return 3;
}

bool fill_sockaddr(const std::string &path, struct sockaddr_un &addr)
{
    if (path.size() >= sizeof(addr.sun_path))
        return false;
    addr = {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return true;
}

// Listens on `path`: bound under a temporary name and renamed once it
// listens, so that the socket never exists without a listener; refused
// while another broker answers there.
int listen_on(const std::string &path)
{
    const std::string tmp = path + "." + std::to_string(::getpid()) + ".tmp";
    struct sockaddr_un addr, tmp_addr;
    if (!fill_sockaddr(path, addr) || !fill_sockaddr(tmp, tmp_addr)) {
        std::fprintf(stderr, "npuipc-broker: %s: path too long\n", path.c_str());
        return -1;
    }
    UniqueFd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (probe && ::connect(probe.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) == 0) {
        std::fprintf(stderr, "npuipc-broker: %s: another broker serves there\n", path.c_str());
        return -1;
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd)
        return -1;
    ::unlink(tmp.c_str());
    // Any local process may connect; each request is checked.
    mode_t old = ::umask(0);
    int rc = ::bind(fd.get(), reinterpret_cast<struct sockaddr *>(&tmp_addr), sizeof(tmp_addr));
    ::umask(old);
    if (rc != 0 || ::listen(fd.get(), 128) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "npuipc-broker: %s: %s\n", path.c_str(), std::strerror(errno));
        ::unlink(tmp.c_str());
        return -1;
    }
    return fd.release();
}

bool drop_privileges(const std::string &user)
{
    struct passwd *pw = ::getpwnam(user.c_str());
    if (!pw) {
        std::fprintf(stderr, "npuipc-broker: no user %s\n", user.c_str());
        return false;
    }
    if (::setgroups(0, nullptr) != 0 || ::setgid(pw->pw_gid) != 0 || ::setuid(pw->pw_uid) != 0) {
        std::fprintf(stderr, "npuipc-broker: becoming %s: %s\n", user.c_str(),
                     std::strerror(errno));
        return false;
    }
    return true;
}

// The limits that follow from the fd limit, raised to its hard value:
// connections take at most half, one uid a quarter of those, and objects
// what is left but a margin.
bool set_limits()
{
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return false;
    rl.rlim_cur = rl.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &rl);
    (void)::getrlimit(RLIMIT_NOFILE, &rl);
    const uint64_t nofile = std::min<uint64_t>(rl.rlim_cur, 1u << 20);
    if (nofile < 256) {
        std::fprintf(stderr, "npuipc-broker: RLIMIT_NOFILE %llu is too small\n",
                     static_cast<unsigned long long>(nofile));
        return false;
    }
    g_max_conns = std::min<uint64_t>(nofile / 2, 8192);
    g_max_conns_per_uid = std::max<size_t>(g_max_conns / 4, 16);
    g_max_objects = nofile - g_max_conns - 64;
    return true;
}

bool parse_count(const char *text, uint64_t &value)
{
    char *end = nullptr;
    errno = 0;
    if (!*text || *text == '-')
        return false;
    unsigned long long v = std::strtoull(text, &end, 0);
    if (errno || *end || v == 0)
        return false;
    value = v;
    return true;
}

void usage()
{
    std::fprintf(stderr, "usage: npuipc-broker [--socket PATH] [--user NAME] "
                         "[--max-fds-per-uid N] [--max-bytes-per-uid N] [--request-timeout-ms N]\n");
}

void on_signal(int)
{
    g_stop = 1;
}

} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        std::string value = argv[++i];
        if (arg == "--socket")
            g_options.socket = value;
        else if (arg == "--user")
            g_options.user = value;
        else if (arg == "--max-fds-per-uid" &&
                 parse_count(value.c_str(), g_options.max_fds_per_uid))
            continue;
        else if (arg == "--max-bytes-per-uid" &&
                 parse_count(value.c_str(), g_options.max_bytes_per_uid))
            continue;
        else if (arg == "--request-timeout-ms" &&
                 parse_count(value.c_str(), g_options.request_timeout_ms) &&
                 g_options.request_timeout_ms <= 3600000)
            continue;
        else {
            usage();
            return 2;
        }
    }
    // Before the socket exists: whoever sees it may stop the broker.
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    npuipc::ipc::set_log_hook(log_stderr);
    // Allowlists name host PIDs: SO_PEERCRED and /proc must give them.
    if (!npuipc::ipc::in_initial_pid_namespace()) {
        std::fprintf(stderr, "npuipc-broker: not in the host's PID namespace: it could not "
                             "check allowlists of host PIDs\n");
        return 1;
    }
    if (!set_limits())
        return 1;
    auto endpoint = new_broker_endpoint();
    if (!endpoint.ok())
        return 1;
    g_endpoint = endpoint.value();
    uint32_t instance = 0;
    while (instance == 0)
        if (!fill_random(&instance, sizeof(instance)).ok())
            return 1;
    g_instance = static_cast<uint64_t>(instance) << 32;
    g_next_object = g_instance | 1;
    int listen_fd = socket_from_systemd();
    const bool bound_here = listen_fd < 0;
    if (bound_here)
        listen_fd = listen_on(g_options.socket);
    if (listen_fd < 0)
        return 1;
    // Connections inherit it from the listener (before they are accepted,
    // too): every request carries the PID of the process that sent it.
    int on = 1;
    if (::setsockopt(listen_fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0) {
        std::fprintf(stderr, "npuipc-broker: SO_PASSCRED: %s\n", std::strerror(errno));
        return 1;
    }
    if (!g_options.user.empty() && !drop_privileges(g_options.user))
        return 1;
    g_closed_wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (g_closed_wake < 0)
        return 1;
    log(LogLevel::Info, "serving as %s", g_endpoint.c_str());
    int rc = serve(listen_fd);
    if (bound_here)
        ::unlink(g_options.socket.c_str()); // systemd's socket is systemd's
    return rc;
}
