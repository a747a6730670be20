// SPDX-License-Identifier: MIT
// The IPC transport of libnpuipc: how a driver fd (a dma-buf, an event fd,
// a notify fd) leaves one process and arrives in another, named by a short
// printable key. The aclrt IPC functions (aclrtIpcMemGetExportKey, ...) are
// built on it; Documentation/ipc.md describes the key format, the socket
// directory, the wire protocol and the security model.
//
// Exporter: the first publish() of a process starts its exporter: a
// SOCK_SEQPACKET socket `<dir>/<endpoint>.sock` served by a thread of its
// own. A process that never publishes has none of it. Importer: fetch()
// connects to the key's endpoint, presents the key and receives the fd by
// SCM_RIGHTS.
//
// Every fallible call returns npuipc::Result / npuipc::Status holding a
// positive errno. The errno values, for the one place that maps them:
//
//   EINVAL       a malformed key text (parse_key, allow, revoke) or Key
//                (fetch), an unknown Kind, a bad argument
//   ENOENT       allow/revoke: a well-formed key this process did not
//                publish, or already revoked.
//                publish: the socket directory's parent does not exist
//   ECONNREFUSED fetch: the exporter is gone (no socket, or nobody listens
//                on it): the key's process exited
//   ESRCH        fetch: no such object in the exporter: never published,
//                revoked, or a wrong secret (one answer for all three, so a
//                guesser learns nothing); or a lazily exported object's
//                make_fd said ESRCH (its object is gone)
//   EACCES       fetch: refused: the caller is of another uid, or not on the
//                key's PID allowlist, or PID validation is impossible in the
//                exporter (see set_pid_namespace_ok); the socket directory
//                or socket is not the caller's own. Logged on both sides
//                with the reason.
//                publish: the socket directory is unsafe (another owner, a
//                mode looser than 0700)
//   ENOTDIR      publish: the socket directory path is not a directory (a
//                symlink counts as not a directory)
//   ENAMETOOLONG publish/fetch: dir + "/" + endpoint + ".sock" does not fit
//                in sun_path (108 bytes)
//   EPROTOTYPE   fetch: the object is of another Kind than asked
//   ETIMEDOUT    fetch: the exporter did not answer within timeout_ms
//   EPROTO       fetch: the peer broke the protocol: a reply of the wrong
//                size or magic, truncated control data (MSG_CTRUNC), not
//                exactly one fd with a success, an fd with a refusal, the
//                connection closed without a reply, an unknown status
//   EAGAIN       fetch: the exporter is overloaded (it dropped this
//                connection to stay within its connection cap); retry
//   ENOMEM, EMFILE, ENFILE
//                any side ran out of memory or descriptors (a fetch passes
//                these through from the exporter when it could not make the
//                fd of a lazily exported object)
//   EIO          fetch: the exporter could not make the fd of a lazily
//                exported object for another reason
//   EBADF        publish: the fd is not valid
#ifndef NPUIPC_IPC_H
#define NPUIPC_IPC_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "npuipc/result.h"
#include "npuipc/unique_fd.h"

namespace npuipc::ipc {

enum class Kind : uint8_t { Memory = 1, Event = 2, Notify = 3 };

// Longest key text, in characters, without the terminating NUL.
constexpr size_t kKeyMax = 64;
// Bytes of a key's secret (128 random bits from getrandom()).
constexpr size_t kSecretBytes = 16;

// A parsed key. Text: "npk1.<endpoint>.<object>.<secret>", for instance
//   npk1.1f3a-Qk7uT0x9bHc.2a.p3Lk0Qm_4Zt8R2vWcYh1sA
// where <endpoint> is "<exporter pid, lowercase hex>-<64 random bits,
// base64url, 11 characters>", <object> the object id in lowercase hex
// without leading zeros (never 0) and <secret> 128 random bits in
// base64url (22 characters). At most kKeyMax characters, all of
// [0-9A-Za-z._-].
struct Key {
    std::string text;
    std::string endpoint;
    uint64_t object = 0;
    std::array<uint8_t, kSecretBytes> secret{};
};

// Parses a key. EINVAL when malformed: NULL, no NUL within max_len bytes,
// longer than kKeyMax, another character set or format, a non-canonical
// encoding.
Result<Key> parse_key(const char *text, size_t max_len = kKeyMax + 1);

// ---- exporter side ----

// Stores `fd` under a new object id with a fresh secret and returns its key.
// validate_pid: only processes allowed with allow() may fetch it; false:
// any process of the same uid holding the key. `tag` is handed to every
// importer with the fd (the aclrt layer passes the exporter's device
// index). Starts the exporter on the first call (EACCES/ENOTDIR/
// ENAMETOOLONG/ENOENT from the socket directory, EMFILE, ENOMEM, EAGAIN
// when the thread cannot start).
Result<std::string> publish(Kind kind, UniqueFd fd, bool validate_pid, uint32_t tag = 0);

// The same for an object whose fd is made on each fetch, so that a live key
// holds no fd. make_fd runs on the exporter's thread, without any lock of
// the transport held; it must not block for long and must not call the
// exporter functions below (publish, allow, revoke). Its errno reaches the
// importer for ENOMEM, EMFILE, ENFILE and ESRCH, as EIO otherwise.
// The function (and what it holds) is destroyed by revoke(), or just after
// on the exporter's thread when a fetch was using it; never in a fork
// child (see below).
Result<std::string> publish(Kind kind, std::function<Result<UniqueFd>()> make_fd,
                            bool validate_pid, uint32_t tag = 0);

// Adds PIDs (of the exporter's PID namespace) to the allowlist of a key
// published with validate_pid. Each PID is recorded with the start time of
// the process that has it now; a PID not alive now never matches, and a PID
// matches only while that same process is alive (PID reuse is never
// accepted). Listing a PID again records its current process anew.
// EINVAL: pids NULL, count 0, a pid <= 0, malformed key text. ENOENT: not a
// key this process published, or revoked.
Status allow(const std::string &key_text, const int32_t *pids, size_t count);

// Stops new fetches of the key at once (fds already fetched stay valid) and
// releases the exporter's fd or function. EINVAL: malformed; ENOENT:
// unknown or already revoked.
Status revoke(const std::string &key_text);

// True if this process published the key (as `kind`, when given) and
// has not revoked it: the one record of which keys a process has open.
bool published_here(const std::string &key_text, std::optional<Kind> kind = std::nullopt);

// Whether PIDs of the allowlist can be judged. The aclrt layer lists
// PIDs of the initial PID namespace and so sets false in an exporter that
// is not in it; fetches of validate_pid keys are then refused with EACCES
// ("exporter is not in the initial PID namespace: use
// DISABLE_PID_VALIDATION"). Default true; may be called at any time.
void set_pid_namespace_ok(bool ok);

// Whether this process is in the initial PID namespace, whose PIDs
// aclrtDeviceGetBareTgid gives and allowlists name.
bool in_initial_pid_namespace();

// Whether keys published now go to the broker (Documentation/ipc.md, The
// broker): one listens on NPUIPC_BROKER_SOCKET, or on
// /run/npuipc/broker.sock when that variable is not set. The broker judges
// allowlists itself, by host PIDs, wherever the exporter runs.
bool publishes_to_broker();

// How long this process's exporter lets a connection take to send its
// request before closing it (default 2000 ms), for connections accepted
// after the call: longer where importers may be stopped in a debugger
// between connecting and asking, or machines are slow. EINVAL unless
// ms > 0.
Status set_request_deadline_ms(int ms);

// The event loop of this process's exporter: "io_uring", or "epoll" where
// the process may not have a ring (seccomp filters, io_uring_disabled);
// nullptr before the first publish().
const char *exporter_loop_name();

// The fds this process's exporter holds for itself, for as long as the
// process lives: its listening socket and its ring's (or epoll's) fd;
// none before the first publish(). Connections and published fds are not
// among them: they close when served or revoked.
std::vector<int> exporter_fds();

// After fork(), the child has no exporter thread: an atfork handler closes
// the child's copies of the listening socket, the ring or epoll fd, the
// connections and the published fds (without unlinking the socket, which
// is the parent's) and forgets the parent's keys, so published_here() is
// false for them and a child that publishes starts an exporter of its own.
// Functions given to publish() are deliberately leaked in the child, never
// run nor destroyed there (their destructors would act on the parent's
// objects). A fork while the exporter thread is between making (or
// taking) an fd and sending it leaves the child a copy of that one fd.

// ---- importer side ----

struct Fetched {
    UniqueFd fd;      // O_CLOEXEC
    uint32_t tag = 0; // publish()'s tag
};

// Connects to the key's endpoint, presents the key and returns the fd the
// exporter sends, with the object's tag. kind must be the object's kind.
// The whole exchange is bounded by timeout_ms (negative: no limit). The
// fd's type is not checked here (importing it into the driver does that).
// Errors: see the table above.
Result<Fetched> fetch(const Key &key, Kind kind, int timeout_ms = 5000);

// ---- 64-bit names of keys ----

// For APIs that pass a 64-bit number instead of a key (VMM shareable
// handles): name_key() gives a published key a random non-zero 64-bit
// name: the broker's, for a key it serves, else a file of the key in the
// user's private directory; resolve_name() reads such a file back in any
// process of the same user (ESRCH: no such name; EACCES: the file is not
// the user's own regular file; EPROTO: its content is not a key);
// unname() removes the file (in the process that made it; the key itself
// lives on until revoked). fetch_named() fetches a name's object: from the
// broker when one runs here, else through the file; fetch()'s errors.
Result<uint64_t> name_key(const std::string &key_text);
Result<std::string> resolve_name(uint64_t name);
Result<Fetched> fetch_named(uint64_t name, Kind kind, int timeout_ms = 5000);
void unname(uint64_t name);

// ---- logging ----

// Refusals, directory problems and protocol errors are logged with their
// reason, from both sides. By default on stderr as "[npuipc] LEVEL ipc:
// message", filtered by ASCEND_GLOBAL_LOG_LEVEL (0 debug ... 3 error, the
// default, 4 none). A hook replaces that and gets every message, whatever
// the level; it is called from any thread, including the exporter's,
// sometimes with the transport's lock held: it must be thread-safe and
// must not call the transport's functions nor fork. A lock it takes must be
// released in a forked child (pthread_atfork registered before the first
// export), or a child that logs can wait on it forever. Messages never contain
// a key's secret. nullptr restores the default.
enum class LogLevel { Debug = 0, Info = 1, Warning = 2, Error = 3 };
using LogHook = void (*)(LogLevel level, const char *message);
void set_log_hook(LogHook hook);

} // namespace npuipc::ipc

#endif // NPUIPC_IPC_H
