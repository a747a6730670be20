// SPDX-License-Identifier: MIT
// The exporter's side of the broker (Documentation/ipc.md, The broker):
// where one serves, publish() deposits the fd with it over one connection
// this process keeps open, and allow() and revoke() go to it too. The
// broker drops the process's keys when that connection closes: when the
// process exits, or a fork child, which does not inherit it, never had it.
#include "ipc/internal.h"

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace npuipc_ipc {
namespace {

using npuipc::UniqueFd;
using npuipc::ipc::Key;

constexpr int kReplyTimeoutMs = 5000;

// Protects everything below.
std::mutex g_broker_mutex;
UniqueFd g_conn;
// This process's keys at the broker, by object id.
struct BrokerKey {
    std::array<uint8_t, kSecretBytes> secret;
    Kind kind;
};
std::map<uint64_t, BrokerKey> g_keys;
std::string g_endpoint; // the broker's, as its replies tell
bool g_warned_fallback = false;

void disconnect_locked()
{
    if (!g_keys.empty())
        log(LogLevel::Warning, "broker: the connection is gone, and with it %zu key(s) of this "
                               "process: export again for new keys",
            g_keys.size());
    g_conn.reset();
    g_keys.clear(); // the broker dropped them with the connection
    g_endpoint.clear();
}

// 0 when connected; ENOENT when no broker is set up here (publish
// peer-to-peer); another errno when the one asked for does not answer.
int connect_locked()
{
    if (g_conn)
        return 0;
    bool explicit_path = false;
    const std::string path = broker_socket_path(&explicit_path);
    if (path.empty())
        return ENOENT;
    struct stat st;
    if (!explicit_path && ::lstat(path.c_str(), &st) != 0)
        return ENOENT;
    if (path.size() >= sizeof(sockaddr_un::sun_path))
        return ENAMETOOLONG;
    if (int err = register_fork_handlers())
        return err;
    UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!s)
        return errno;
    struct timeval tv = {kReplyTimeoutMs / 1000, 0};
    ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(s.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0) {
        int err = errno;
        // Only a broker that is not there is fallen back from: a busy
        // one (EAGAIN: its backlog is full) is an error to retry.
        if (!explicit_path && (err == ECONNREFUSED || err == ENOENT)) {
            if (!g_warned_fallback)
                log(LogLevel::Warning,
                    "broker: %s does not answer (%s): keys are served by this process",
                    path.c_str(), std::strerror(err));
            g_warned_fallback = true;
            return ENOENT;
        }
        log(LogLevel::Error, "broker: %s: %s", path.c_str(), std::strerror(err));
        return err == ENOENT ? ECONNREFUSED : err;
    }
    struct ucred cred {};
    socklen_t len = sizeof(cred);
    if (::getsockopt(s.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return errno;
    if (!trusted_broker(cred.uid)) {
        log(LogLevel::Error, "broker: refusing %s: it is served by uid %u, not by root or uid %u",
            path.c_str(), static_cast<unsigned>(cred.uid), static_cast<unsigned>(::geteuid()));
        return EACCES;
    }
    g_conn = std::move(s);
    return 0;
}

// One request and its reply; the connection is dropped when it broke.
int exchange_locked(const BrokerRequest &req, int fd, BrokerReply &reply)
{
    ssize_t n = send_with_fd(g_conn.get(), &req, sizeof(req), fd, 0);
    if (n != static_cast<ssize_t>(sizeof(req))) {
        int err = n < 0 ? errno : EPROTO;
        log(LogLevel::Error, "broker: sending a request: %s", std::strerror(err));
        disconnect_locked();
        return err == EPIPE || err == ECONNRESET ? ECONNREFUSED : err;
    }
    do
        n = ::recv(g_conn.get(), &reply, sizeof(reply), 0);
    while (n < 0 && errno == EINTR);
    // A broker at its connection limit answers as it answers importers.
    if (n >= static_cast<ssize_t>(sizeof(WireReply)) && reply.magic == kReplyMagic) {
        WireReply busy;
        std::memcpy(&busy, &reply, sizeof(busy));
        log(LogLevel::Error, "broker: busy (%s)", detail_text(busy.detail));
        disconnect_locked();
        return busy.status == EAGAIN ? EAGAIN : EPROTO;
    }
    if (n != static_cast<ssize_t>(sizeof(reply)) || reply.magic != kBrokerReplyMagic ||
        reply.version != kWireVersion) {
        int err = n < 0 ? (errno == EAGAIN ? ETIMEDOUT : errno) : (n == 0 ? ECONNREFUSED : EPROTO);
        if (err == ETIMEDOUT)
            log(LogLevel::Error,
                "broker: no reply within %d ms (is it stopped?): the connection is dropped, "
                "and the keys it served with it",
                kReplyTimeoutMs);
        else
            log(LogLevel::Error, "broker: no valid reply: %s", std::strerror(err));
        disconnect_locked();
        return err;
    }
    return 0;
}

// exchange_locked, then the broker's answer: 0 or the errno it refused with.
int ask_locked(const BrokerRequest &req, int fd, BrokerReply &reply)
{
    int err = exchange_locked(req, fd, reply);
    return err ? err : static_cast<int>(reply.status);
}

BrokerRequest new_request(BrokerOp op)
{
    BrokerRequest req = {};
    req.magic = kBrokerMagic;
    req.version = kWireVersion;
    req.op = op;
    return req;
}

// Whether the broker closed the connection (it exited): the broker never
// writes unasked, so anything readable is the end.
bool broker_hung_up_locked()
{
    struct pollfd p = {g_conn.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) != 0;
}

// The request naming one of this process's keys; ENOENT if it is not.
int request_for_locked(const Key &key, BrokerOp op, BrokerRequest &req)
{
    if (g_conn && broker_hung_up_locked()) {
        log(LogLevel::Warning, "broker: it closed the connection: its keys are gone");
        disconnect_locked();
    }
    auto it = g_keys.find(key.object);
    if (!g_conn || key.endpoint != g_endpoint || it == g_keys.end() ||
        !secrets_equal(it->second.secret.data(), key.secret.data()))
        return ENOENT;
    req = new_request(op);
    req.object = key.object;
    std::memcpy(req.secret, key.secret.data(), kSecretBytes);
    return 0;
}

} // namespace

void broker_atfork_prepare()
{
    g_broker_mutex.lock();
}

void broker_atfork_parent()
{
    g_broker_mutex.unlock();
}

// The child's copy of the connection would keep the parent's keys alive
// after the parent exits; its keys are the parent's.
void broker_atfork_child()
{
    g_conn.reset();
    g_keys.clear();
    g_endpoint.clear();
    g_broker_mutex.unlock();
}

int broker_connect()
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    return connect_locked();
}

Result<std::string> broker_publish(Kind kind, int fd, bool validate_pid, uint32_t tag)
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    // Once more after a broken connection: the broker may have restarted.
    for (int attempt = 0;; attempt++) {
        if (int err = connect_locked())
            return Status::from_errno(err == ENOENT ? ECONNREFUSED : err);
        BrokerRequest req = new_request(kBrokerDeposit);
        req.kind = static_cast<uint8_t>(kind);
        req.flags = validate_pid ? kBrokerValidatePid : 0;
        req.tag = tag;
        BrokerReply reply = {};
        int err = ask_locked(req, fd, reply);
        if (err == ECONNREFUSED && attempt == 0 && !g_conn)
            continue;
        if (err) {
            log(LogLevel::Error, "broker: the deposit of a %s failed: %s", kind_name(kind),
                std::strerror(err));
            return Status::from_errno(err);
        }
        std::string endpoint(reply.endpoint, strnlen(reply.endpoint, sizeof(reply.endpoint)));
        if (!valid_endpoint(endpoint) || !is_broker_endpoint(endpoint) || reply.object == 0) {
            disconnect_locked();
            return Status::from_errno(EPROTO);
        }
        g_endpoint = endpoint;
        BrokerKey &kept = g_keys[reply.object];
        std::memcpy(kept.secret.data(), reply.secret, kSecretBytes);
        kept.kind = kind;
        return format_key(endpoint, reply.object, kept.secret);
    }
}

Status broker_allow(const Key &key, const int32_t *pids, size_t count)
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    for (size_t done = 0; done < count;) {
        BrokerRequest req;
        if (int err = request_for_locked(key, kBrokerAllow, req))
            return Status::from_errno(err);
        req.count = static_cast<uint32_t>(std::min(count - done, kBrokerPidsPerRequest));
        std::memcpy(req.pids, pids + done, req.count * sizeof(int32_t));
        BrokerReply reply = {};
        if (int err = ask_locked(req, -1, reply))
            return Status::from_errno(err == ECONNREFUSED ? ENOENT : err);
        done += req.count;
    }
    return {};
}

Status broker_revoke(const Key &key)
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    BrokerRequest req;
    if (int err = request_for_locked(key, kBrokerRevoke, req))
        return Status::from_errno(err);
    g_keys.erase(key.object);
    BrokerReply reply = {};
    int err = ask_locked(req, -1, reply);
    // Gone from the broker either way: a broken connection dropped it.
    return err && err != ECONNREFUSED ? Status::from_errno(err) : Status();
}

Result<uint64_t> broker_name(const Key &key)
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    BrokerRequest req;
    if (int err = request_for_locked(key, kBrokerName, req))
        return Status::from_errno(err);
    BrokerReply reply = {};
    if (int err = ask_locked(req, -1, reply))
        return Status::from_errno(err == ECONNREFUSED ? ENOENT : err);
    if (reply.object == 0)
        return Status::from_errno(EPROTO);
    return reply.object;
}

bool broker_published(const Key &key, std::optional<Kind> kind)
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    BrokerRequest req;
    return request_for_locked(key, kBrokerRevoke, req) == 0 &&
           (!kind || g_keys.at(key.object).kind == *kind);
}

std::vector<int> broker_fds()
{
    std::lock_guard<std::mutex> lock(g_broker_mutex);
    if (g_conn)
        return {g_conn.get()};
    return {};
}

} // namespace npuipc_ipc
