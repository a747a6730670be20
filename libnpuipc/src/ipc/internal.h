// SPDX-License-Identifier: MIT
// What the exporter and the importer of the IPC transport share: the wire
// format, key encoding, the socket directory rules, randomness, time and
// logging. Documentation/ipc.md describes all of it.
#ifndef NPUIPC_IPC_INTERNAL_H
#define NPUIPC_IPC_INTERNAL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "clock.h"
#include "npuipc/ipc.h"

// Not npuipc::: only the documented API is exported (libnpuipc.map).
namespace npuipc_ipc {

using npuipc::Result;
using npuipc::Status;
using npuipc::ipc::Kind;
using npuipc::ipc::kSecretBytes;
using npuipc::ipc::LogHook;
using npuipc::ipc::LogLevel;

// ---- wire protocol (AF_UNIX SOCK_SEQPACKET, one request and one reply per
// connection, native byte order: both ends are on one machine) ----

constexpr uint32_t kRequestMagic = 0x7170706eu; // "nppq" in memory on little endian
constexpr uint32_t kReplyMagic = 0x7270706eu;   // "nppr"
constexpr uint16_t kWireVersion = 1;

struct WireRequest {
    uint32_t magic;   // kRequestMagic
    uint16_t version; // kWireVersion
    uint8_t kind;     // Kind
    uint8_t flags;    // 0, or kFetchByName (to a broker only)
    uint64_t object;  // the object's id; with kFetchByName, its 64-bit name
    uint8_t secret[kSecretBytes];
};
static_assert(sizeof(WireRequest) == 32, "request layout");
// The request names the object by the 64-bit name a broker gave it
// (kBrokerName); the secret is all zero.
constexpr uint8_t kFetchByName = 1u << 0;

struct WireReply {
    uint32_t magic;   // kReplyMagic
    uint16_t version; // kWireVersion
    uint16_t detail;  // Detail: why a request was refused
    int32_t status;   // 0, or a positive errno
    uint32_t tag;     // publish()'s tag, with a success; else 0
};
static_assert(sizeof(WireReply) == 16, "reply layout");

// Why the exporter refused, carried in the reply so that the importer can
// log the same reason as the exporter.
enum Detail : uint16_t {
    kDetailNone = 0,
    kDetailUid = 1,          // another uid
    kDetailNotListed = 2,    // PID not on the allowlist
    kDetailNotAlive = 3,     // the PID was not alive when allowed
    kDetailReused = 4,       // the PID now belongs to another process
    kDetailPeerGone = 5,     // the caller's process cannot be verified (exited)
    kDetailPidNs = 6,        // the exporter is not in the initial PID namespace
    kDetailUnknown = 7,      // unknown object, revoked, or wrong secret
    kDetailKind = 8,         // the object is of another kind
    kDetailBadRequest = 9,   // malformed request
    kDetailBusy = 10,        // connection cap reached
    kDetailMakeFd = 11,      // the fd of a lazily exported object could not be made
    kDetailPeerNoPid = 12,   // the caller has no PID in the exporter's namespace
};
const char *detail_text(uint16_t detail);

// How long a connection may take to send its request by default (see
// set_request_deadline_ms), and how many the exporter keeps open at once
// (beyond it, the oldest is dropped).
constexpr int kRequestDeadlineMs = 2000;
constexpr size_t kMaxConnections = 256;

// ---- the broker's protocol (Documentation/ipc.md, The broker) ----
//
// An importer asks the broker as it asks an exporter (WireRequest, one per
// connection). An exporter keeps one connection open and sends
// BrokerRequests on it, each answered by a BrokerReply; a DEPOSIT carries
// the object's fd. The broker drops the objects of a connection when it
// closes.

constexpr uint32_t kBrokerMagic = 0x6270706eu;      // "nppb"
constexpr uint32_t kBrokerReplyMagic = 0x6370706eu; // "nppc"
// NAME gives an object a 64-bit name (BrokerReply::object) for the APIs that
// pass a number (VMM shareable handles); importers fetch by it.
enum BrokerOp : uint8_t { kBrokerDeposit = 1, kBrokerAllow = 2, kBrokerRevoke = 3, kBrokerName = 4 };
constexpr uint32_t kBrokerValidatePid = 1u << 0; // DEPOSIT flags
constexpr size_t kBrokerPidsPerRequest = 64;

struct BrokerRequest {
    uint32_t magic;   // kBrokerMagic
    uint16_t version; // kWireVersion
    uint8_t op;       // BrokerOp
    uint8_t kind;     // DEPOSIT: Kind
    uint32_t flags;   // DEPOSIT: kBrokerValidatePid
    uint32_t tag;     // DEPOSIT: handed to importers
    uint64_t object;  // ALLOW, REVOKE, NAME
    uint8_t secret[kSecretBytes]; // ALLOW, REVOKE, NAME
    uint32_t count;   // ALLOW: pids used
    uint32_t pad;
    int32_t pids[kBrokerPidsPerRequest]; // ALLOW: PIDs of the broker's (initial) namespace
};
static_assert(sizeof(BrokerRequest) == 48 + 4 * kBrokerPidsPerRequest, "broker request layout");

struct BrokerReply {
    uint32_t magic;   // kBrokerReplyMagic
    uint16_t version; // kWireVersion
    uint16_t pad;
    int32_t status;   // 0, or a positive errno
    uint32_t pad2;
    uint64_t object;  // DEPOSIT: the object's id; NAME: its name
    uint8_t secret[kSecretBytes]; // DEPOSIT: its secret
    char endpoint[32];            // DEPOSIT: the broker's endpoint, NUL-terminated
};
static_assert(sizeof(BrokerReply) == 72, "broker reply layout");

// The broker's socket: NPUIPC_BROKER_SOCKET when set (empty: no broker),
// else /run/npuipc/broker.sock. `explicit_path` tells which.
std::string broker_socket_path(bool *explicit_path = nullptr);
// A broker's endpoint: "0-<8 random bytes, base64url>" (PID 0 is no
// exporter's), new each time a broker starts.
Result<std::string> new_broker_endpoint();
bool is_broker_endpoint(const std::string &endpoint);
// Whether a broker's listener (SO_PEERCRED: who created the socket) may
// be trusted with this process's fds: root's (systemd's, or a broker
// started as root that dropped privileges after listening), or the user's
// own.
bool trusted_broker(uid_t listener_uid);

// The exporter's side of the broker (broker_client.cpp). broker_connect:
// 0 when a broker serves this process's keys; ENOENT when none is set up
// (keys are served peer-to-peer); another errno when the broker that
// NPUIPC_BROKER_SOCKET names does not answer.
int broker_connect();
Result<std::string> broker_publish(Kind kind, int fd, bool validate_pid, uint32_t tag);
Status broker_allow(const npuipc::ipc::Key &key, const int32_t *pids, size_t count);
Status broker_revoke(const npuipc::ipc::Key &key);
Result<uint64_t> broker_name(const npuipc::ipc::Key &key);
// Removes the name file of a key whose exporter is gone (a killed
// exporter never removed it), in the importer's directories.
void forget_dead_name(uint64_t name);
bool broker_published(const npuipc::ipc::Key &key, std::optional<Kind> kind);
std::vector<int> broker_fds();
// Run by the transport's fork handlers (register_fork_handlers): the
// child drops the connection, and with it nothing of the parent's keys.
void broker_atfork_prepare();
void broker_atfork_parent();
void broker_atfork_child();

// ---- keys ----

constexpr char kKeyPrefix[] = "npk1.";
constexpr size_t kEndpointRandomBytes = 8;

bool valid_kind(Kind kind);
const char *kind_name(Kind kind);
// "<pid hex>-<8 random bytes, base64url>".
Result<std::string> new_endpoint();
bool valid_endpoint(const std::string &endpoint);
std::string format_key(const std::string &endpoint, uint64_t object,
                       const std::array<uint8_t, kSecretBytes> &secret);
// The key without its secret, for logs.
std::string redacted(const std::string &endpoint, uint64_t object);
bool secrets_equal(const uint8_t *a, const uint8_t *b);

// ---- socket directory ----

// Where the exporter puts its socket: NPUIPC_IPC_DIR, else
// $XDG_RUNTIME_DIR/npuipc (when XDG_RUNTIME_DIR is an existing absolute
// directory), else /tmp/npuipc-<euid>.
std::string exporter_dir();
// Where an importer looks, in order: NPUIPC_IPC_DIR alone when set, else
// both defaults (the exporter may have run with another XDG_RUNTIME_DIR).
std::vector<std::string> importer_dirs();
// Checks (creating it first with 0700 when create) that dir is a directory
// (lstat: a symlink is not), owned by the effective uid, mode 0700 or
// stricter. ENOENT, ENOTDIR, EACCES; logged (but ENOENT only when create).
Status check_dir(const std::string &dir, bool create);
// dir + "/" + name; ENAMETOOLONG when it does not fit in sun_path.
Result<std::string> socket_path(const std::string &dir, const std::string &name);

// ---- who a peer is ----

// A PID of an allowlist, with the start time of the process that had it
// when it was listed.
struct AllowedPid {
    int32_t pid = 0;
    uint64_t start_time = 0;
    bool never = false; // not alive when allowed
};
// Field 22 of /proc/<pid>/stat: the process's start time in clock ticks
// since boot. ESRCH if there is no such process.
Result<uint64_t> read_start_time(int32_t pid);
// Judges the process connected on conn_fd, whose PID the kernel attests
// as `pid` (SO_PEERCRED), against `allowed`: kDetailNone when it is the
// very process listed, else why not.
uint16_t judge_peer(int conn_fd, int32_t pid, const std::vector<AllowedPid> &allowed);

// ---- misc ----

// sendmsg of `len` bytes with `fd` attached in SCM_RIGHTS (none when -1),
// retried on EINTR, MSG_NOSIGNAL added to `flags`: bytes sent, or -1 and
// errno.
ssize_t send_with_fd(int sock, const void *buf, size_t len, int fd, int flags);

Status fill_random(void *buf, size_t len);
using npuipc_clock::now_ms;
// Registers the transport's fork handlers (once), which take its lock
// around fork(). Whoever takes its own locks around fork() and calls into
// the transport under them registers after this, so that its handlers take
// those locks before the transport's: pthread_atfork runs the prepare
// handlers last-registered first.
int register_fork_handlers();
void log(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

} // namespace npuipc_ipc

namespace npuipc::ipc {
namespace detail = ::npuipc_ipc;
}

#endif // NPUIPC_IPC_INTERNAL_H
