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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using namespace npuipc_ipc;
using npuipc::UniqueFd;

struct Options {
    std::string socket = "/run/npuipc/broker.sock";
    std::string user;                    // drop to this user after binding
    uint64_t max_fds_per_uid = 4096;     // held for the processes of one uid
    uint64_t max_bytes_per_uid = 256ULL << 30;
};

struct Object {
    Kind kind = Kind::Memory;
    std::array<uint8_t, kSecretBytes> secret{};
    bool validate_pid = false;
    uint32_t tag = 0;
    UniqueFd fd;
    uint64_t bytes = 0;
    int owner = -1; // the exporter's connection
    uid_t uid = 0;  // the exporter's
    uint64_t name = 0; // kBrokerName's, or 0
    std::vector<AllowedPid> allowed;
};

struct Conn {
    UniqueFd fd;
    struct ucred cred {};
    int64_t deadline_ms = 0; // for an importer's one request
    bool exporter = false;   // sent a broker request: kept open
};

struct Usage {
    uint64_t fds = 0;
    uint64_t bytes = 0;
};

constexpr int kRequestDeadlineMs = 2000;
constexpr size_t kMaxConns = 1024;
// Objects dropped with their exporter's connection, remembered (by id and
// secret) so that an importer learns that the exporter is gone, as it
// would from the exporter's own socket; the oldest are forgotten first.
constexpr size_t kMaxTombstones = 4096;

std::string g_endpoint;
std::map<uint64_t, Object> g_objects;
std::map<uint64_t, std::array<uint8_t, kSecretBytes>> g_tombstones;
std::unordered_map<uint64_t, uint64_t> g_names; // name -> object id
std::map<uint64_t, uint64_t> g_dead_names;      // object id -> name, as g_tombstones
std::unordered_map<uid_t, Usage> g_usage;
// Object ids carry this broker's random instance in their top 32 bits, so
// that a key of a broker that restarted is told from an unknown one.
uint64_t g_instance = 0;
uint64_t g_next_object = 0;
Options g_options;
volatile sig_atomic_t g_stop = 0;

void log_stderr(LogLevel level, const char *message)
{
    static const char *const names[] = {"debug", "info", "warning", "error"};
    const char *env = std::getenv("NPUIPC_BROKER_DEBUG");
    if (level == LogLevel::Debug && !(env && *env))
        return;
    std::fprintf(stderr, "npuipc-broker: %s: %s\n", names[static_cast<int>(level)], message);
}

// What an fd is, as /proc tells: a dma-buf, an npuipc event or notify.
bool fd_is(int fd, Kind kind)
{
    char path[64], link[128];
    std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(path, link, sizeof(link) - 1);
    if (n <= 0)
        return false;
    link[n] = '\0';
    switch (kind) {
    case Kind::Memory:
        return std::strncmp(link, "/dmabuf:", 8) == 0 || std::strcmp(link, "anon_inode:dmabuf") == 0;
    case Kind::Event:
        return std::strcmp(link, "anon_inode:[npuipc_event]") == 0;
    case Kind::Notify:
        return std::strcmp(link, "anon_inode:[npuipc_notify]") == 0;
    }
    return false;
}

void drop_object(std::map<uint64_t, Object>::iterator it)
{
    if (it->second.name)
        g_names.erase(it->second.name);
    Usage &u = g_usage[it->second.uid];
    u.fds--;
    u.bytes -= it->second.bytes;
    g_objects.erase(it);
}

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
    struct iovec iov = {&reply, sizeof(reply)};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (pass_fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    ssize_t n;
    do
        n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
}

// An importer's request: the fd, if its key is right and the allowlist
// (when the key has one) names the very process asking.
bool dead_name(uint64_t name)
{
    for (const auto &entry : g_dead_names)
        if (entry.second == name)
            return true;
    return false;
}

void serve_fetch(const Conn &conn, const WireRequest &req)
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
        uint16_t why = judge_peer(conn.fd.get(), conn.cred.pid, obj.allowed);
        if (why != kDetailNone) {
            log(LogLevel::Info, "refused pid %d uid %u: %s", conn.cred.pid, conn.cred.uid,
                detail_text(why));
            return send_fetch_reply(conn.fd.get(), EACCES, why, -1, 0);
        }
    }
    send_fetch_reply(conn.fd.get(), 0, kDetailNone, obj.fd.get(), obj.tag);
}

int deposit(const Conn &conn, const BrokerRequest &req, UniqueFd fd, BrokerReply &reply)
{
    Kind kind = static_cast<Kind>(req.kind);
    if (!valid_kind(kind) || (req.flags & ~kBrokerValidatePid) || !fd)
        return EINVAL;
    if (!fd_is(fd.get(), kind)) {
        log(LogLevel::Warning, "pid %d deposited an fd that is not a %s", conn.cred.pid,
            kind_name(kind));
        return EBADF;
    }
    uint64_t bytes = 0;
    if (kind == Kind::Memory) {
        off_t end = ::lseek(fd.get(), 0, SEEK_END);
        bytes = end > 0 ? static_cast<uint64_t>(end) : 0;
    }
    Usage &u = g_usage[conn.cred.uid];
    if (u.fds + 1 > g_options.max_fds_per_uid || u.bytes + bytes > g_options.max_bytes_per_uid) {
        log(LogLevel::Warning, "uid %u is at its quota (%llu fds, %llu bytes)", conn.cred.uid,
            static_cast<unsigned long long>(u.fds), static_cast<unsigned long long>(u.bytes));
        return EDQUOT;
    }
    Object obj;
    obj.kind = kind;
    obj.validate_pid = req.flags & kBrokerValidatePid;
    obj.tag = req.tag;
    obj.fd = std::move(fd);
    obj.bytes = bytes;
    obj.owner = conn.fd.get();
    obj.uid = conn.cred.uid;
    Status st = fill_random(obj.secret.data(), obj.secret.size());
    if (!st.ok())
        return st.error();
    if ((g_next_object & 0xffffffffULL) == 0)
        return ENOSPC; // 2^32 deposits: ids are not reused
    const uint64_t object = g_next_object++;
    std::memcpy(reply.secret, obj.secret.data(), kSecretBytes);
    reply.object = object;
    std::snprintf(reply.endpoint, sizeof(reply.endpoint), "%s", g_endpoint.c_str());
    g_objects.emplace(object, std::move(obj));
    u.fds++;
    u.bytes += bytes;
    return 0;
}

// An exporter's own object, named by id and secret.
std::map<uint64_t, Object>::iterator owned(const Conn &conn, const BrokerRequest &req)
{
    auto it = g_objects.find(req.object);
    if (it == g_objects.end() || it->second.owner != conn.fd.get() ||
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
    auto it = owned(conn, req);
    if (it == g_objects.end())
        return ENOENT;
    std::vector<AllowedPid> &allowed = it->second.allowed;
    for (uint32_t i = 0; i < req.count; i++) {
        if (req.pids[i] <= 0)
            return EINVAL;
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
        else
            allowed.push_back(a);
    }
    return 0;
}

void serve_broker(Conn &conn, const BrokerRequest &req, UniqueFd fd)
{
    BrokerReply reply = {};
    reply.magic = kBrokerReplyMagic;
    reply.version = kWireVersion;
    conn.exporter = true;
    if (req.version != kWireVersion || req.pad != 0) {
        reply.status = EPROTO;
    } else if (req.op == kBrokerDeposit) {
        reply.status = deposit(conn, req, std::move(fd), reply);
    } else if (fd) {
        reply.status = EPROTO;
    } else if (req.op == kBrokerAllow) {
        reply.status = allow(conn, req);
    } else if (req.op == kBrokerName) {
        reply.status = name(conn, req, reply);
    } else if (req.op == kBrokerRevoke) {
        auto it = owned(conn, req);
        reply.status = it == g_objects.end() ? ENOENT : 0;
        if (it != g_objects.end())
            drop_object(it);
    } else {
        reply.status = EPROTO;
    }
    send_broker_reply(conn.fd.get(), reply);
}

// Reads one message; false when the connection is to be closed.
bool handle(Conn &conn)
{
    union {
        BrokerRequest broker;
        WireRequest fetch;
    } req;
    struct iovec iov = {&req, sizeof(req)};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = ::recvmsg(conn.fd.get(), &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    // Every fd received is owned here, whatever the message.
    std::vector<UniqueFd> fds;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                fds.emplace_back(fd);
            }
    if (n == 0)
        return false;
    if (static_cast<size_t>(n) == sizeof(WireRequest) && req.fetch.magic == kRequestMagic &&
        !conn.exporter && fds.empty() && !(msg.msg_flags & MSG_CTRUNC)) {
        serve_fetch(conn, req.fetch);
        return false; // one request per importer connection
    }
    if (static_cast<size_t>(n) == sizeof(BrokerRequest) && req.broker.magic == kBrokerMagic &&
        fds.size() <= 1 && !(msg.msg_flags & MSG_CTRUNC)) {
        serve_broker(conn, req.broker, fds.empty() ? UniqueFd() : std::move(fds[0]));
        return true;
    }
    log(LogLevel::Warning, "pid %d sent a malformed request", conn.cred.pid);
    return false;
}

void close_conn(std::vector<Conn> &conns, size_t i)
{
    const int fd = conns[i].fd.get();
    if (conns[i].exporter) {
        for (auto it = g_objects.begin(); it != g_objects.end();) {
            if (it->second.owner != fd) {
                ++it;
                continue;
            }
            g_tombstones[it->first] = it->second.secret;
            if (g_tombstones.size() > kMaxTombstones)
                g_tombstones.erase(g_tombstones.begin()); // ids grow: the oldest
            if (it->second.name) {
                g_dead_names[it->first] = it->second.name;
                if (g_dead_names.size() > kMaxTombstones)
                    g_dead_names.erase(g_dead_names.begin());
            }
            drop_object(it++);
        }
    }
    conns.erase(conns.begin() + static_cast<std::ptrdiff_t>(i));
}

void accept_conns(int listen_fd, std::vector<Conn> &conns)
{
    for (;;) {
        UniqueFd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd)
            return;
        Conn conn;
        socklen_t len = sizeof(conn.cred);
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &conn.cred, &len) != 0)
            continue;
        if (conns.size() >= kMaxConns) {
            log(LogLevel::Warning, "%zu connections open: refusing pid %d", conns.size(),
                conn.cred.pid);
            continue;
        }
        conn.fd = std::move(fd);
        conn.deadline_ms = now_ms() + kRequestDeadlineMs;
        conns.push_back(std::move(conn));
    }
}

int serve(int listen_fd)
{
    std::vector<Conn> conns;
    while (!g_stop) {
        std::vector<struct pollfd> polls;
        polls.push_back({listen_fd, POLLIN, 0});
        for (const Conn &c : conns)
            polls.push_back({c.fd.get(), POLLIN, 0});
        int n = ::poll(polls.data(), polls.size(), 500);
        if (n < 0 && errno != EINTR) {
            log(LogLevel::Error, "poll: %s", std::strerror(errno));
            return 1;
        }
        const int64_t now = now_ms();
        // From the back, so that closing one keeps the others' indices.
        for (size_t i = conns.size(); i-- > 0;) {
            short ev = polls[i + 1].revents;
            bool keep = true;
            if (ev & POLLIN)
                keep = handle(conns[i]);
            else if (ev & (POLLHUP | POLLERR))
                keep = false;
            else if (!conns[i].exporter && now > conns[i].deadline_ms)
                keep = false;
            if (!keep)
                close_conn(conns, i);
        }
        if (polls[0].revents & POLLIN)
            accept_conns(listen_fd, conns);
    }
    return 0;
}

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

int listen_on(const std::string &path)
{
    if (path.size() >= sizeof(sockaddr_un::sun_path)) {
        std::fprintf(stderr, "npuipc-broker: %s: path too long\n", path.c_str());
        return -1;
    }
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    ::unlink(path.c_str());
    if (::bind(fd, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0 ||
        ::chmod(path.c_str(), 0666) != 0 || ::listen(fd, 128) != 0) {
        std::fprintf(stderr, "npuipc-broker: %s: %s\n", path.c_str(), std::strerror(errno));
        ::close(fd);
        return -1;
    }
    return fd;
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

void usage()
{
    std::fprintf(stderr, "usage: npuipc-broker [--socket PATH] [--user NAME] "
                         "[--max-fds-per-uid N] [--max-bytes-per-uid N]\n");
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
        else if (arg == "--max-fds-per-uid")
            g_options.max_fds_per_uid = std::strtoull(value.c_str(), nullptr, 0);
        else if (arg == "--max-bytes-per-uid")
            g_options.max_bytes_per_uid = std::strtoull(value.c_str(), nullptr, 0);
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
    if (listen_fd < 0)
        listen_fd = listen_on(g_options.socket);
    if (listen_fd < 0)
        return 1;
    if (!g_options.user.empty() && !drop_privileges(g_options.user))
        return 1;
    log(LogLevel::Info, "serving as %s", g_endpoint.c_str());
    return serve(listen_fd);
}
