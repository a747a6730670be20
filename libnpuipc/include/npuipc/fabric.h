// SPDX-License-Identifier: MIT
// Fabric handles: memory of one server's part of a fabric window, named by
// a 128-byte handle that a process on another server imports. A process
// never touches another server itself: it asks its own server's fabric
// daemon (npuipc-fabricd(8), on a Unix socket), which keeps the exported
// memory, and, for an import, asks the owner's daemon over the fabric's
// management network (gRPC) whether this process may import it.
// Documentation/fabric.md describes the handle, the daemons and the trust
// model.
//
// Every fallible call returns npuipc::Result / npuipc::Status holding a
// positive errno:
//
//   EINVAL       a handle that is not one (magic, version, reserved bytes),
//                a bad argument; the memory is not fabric memory of this
//                server's part (export)
//   ECONNREFUSED no fabric daemon listens on the socket
//   ESRCH        no such export: never made, released, its exporter gone,
//                or a wrong secret (one answer for all)
//   EACCES       the export validates PIDs and this process is not listed
//   EHOSTUNREACH the handle's server is none the daemon knows
//   ETIMEDOUT    the owner's daemon did not answer in time (10 s), or this
//                daemon did not (20 s: that breaks the session)
//   EPROTO       a daemon broke the protocol
//   ENOSPC       the daemon holds as many exports as it may (for this user)
//   EAGAIN       the daemon is out of descriptors: try again
//   EBUSY        the daemon serves as many connections as it may (for this
//                user): it closed this one; open another later
//   ECONNRESET   the session broke (a timeout or a protocol error before,
//                or the daemon went away): open another; its exports are
//                gone
//   EBADF        export: the fd is not valid
//   EIO          the daemon could not make the import
#ifndef NPUIPC_FABRIC_H
#define NPUIPC_FABRIC_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npuipc/result.h"
#include "npuipc/unique_fd.h"

namespace npuipc::fabric {

// CANN's aclrtMemFabricHandle is 128 bytes; so is this.
constexpr size_t kHandleBytes = 128;
// An allowlist entry's sdid that matches every server (a bare PID).
constexpr uint32_t kAnyServer = 0xffffffffu;
// Entries one allow() call takes.
constexpr size_t kMaxPidsPerCall = 16;

// Layout (little-endian): magic "NPUFH001" (8 bytes), version (u32, 1),
// owner sdid (u32), export id (u64, never 0), size (u64), secret (16
// random bytes), zeros to the end.
struct Handle {
    std::array<uint8_t, kHandleBytes> data{};

    uint32_t owner_sdid() const noexcept;
    uint64_t export_id() const noexcept;
    uint64_t size() const noexcept;
    // Whether the bytes are a handle of this format (EINVAL otherwise).
    bool well_formed() const noexcept;
};

struct AllowedProcess {
    uint32_t sdid = kAnyServer;
    int32_t pid = 0;
};

// The daemon's socket: $NPUIPC_FABRIC_SOCKET, else /run/npuipc/fabric.sock.
std::string daemon_socket_path();

// A connection to this server's fabric daemon. What it exports lives as
// long as the session (or until release()): closing it, or the process
// ending, withdraws its exports. A reply that does not come in time, or
// breaks the protocol, breaks the session (its later calls: ECONNRESET),
// since a late reply would answer the next request. Move-only; one thread
// at a time.
class Session {
public:
    static Result<Session> open();

    // Exports the memory of a dma-buf of this server's fabric window (a
    // buffer of its part, or a range of one): the daemon keeps the dma-buf.
    // validate_pid: only processes allow() names may import it.
    Result<Handle> export_memory(int dmabuf_fd, bool validate_pid) const;
    // Adds processes to the allowlist of an export of this session.
    Status allow(const Handle &handle, const std::vector<AllowedProcess> &processes) const;
    // Withdraws an export of this session: imports made stay; new ones fail.
    Status release(const Handle &handle) const;
    // Imports the memory a handle names (of this server or another): a
    // dma-buf of this server's fabric window, which an NPU imports.
    Result<UniqueFd> import_memory(const Handle &handle) const;

    // The connection's fd (a fork child closes it without a word to the
    // daemon: the exports are the parent's).
    int native_handle() const noexcept { return fd_.get(); }
    // Whether the session broke (its calls now fail with ECONNRESET).
    bool broken() const noexcept { return broken_; }

private:
    explicit Session(UniqueFd fd) : fd_(std::move(fd)) {}
    // One request (wire.h's) and its reply, into `reply`.
    Status call(const void *req, size_t len, int fd_in, void *reply, UniqueFd *fd_out) const;
    UniqueFd fd_;
    mutable bool broken_ = false;
};

} // namespace npuipc::fabric

#endif // NPUIPC_FABRIC_H
