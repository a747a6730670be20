// SPDX-License-Identifier: MIT
// The protocol between libnpuipc's fabric client (npuipc/fabric.h) and
// npuipc-fabricd on its Unix socket: one SOCK_SEQPACKET message each way
// per request, the dma-buf in SCM_RIGHTS (EXPORT's request, IMPORT's
// reply). Both sides are built from this tree.
#ifndef NPUIPC_FABRIC_WIRE_H
#define NPUIPC_FABRIC_WIRE_H

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "npuipc/fabric.h"
#include "npuipc/unique_fd.h"

namespace npuipc::fabric::wire {

constexpr uint32_t kRequestMagic = 0x51464e4e; // "NNFQ"
constexpr uint32_t kReplyMagic = 0x52464e4e;   // "NNFR"
constexpr uint32_t kHandleVersion = 1;
constexpr char kHandleMagic[8] = {'N', 'P', 'U', 'F', 'H', '0', '0', '1'};
constexpr size_t kSecretBytes = 16;
// Where the fields of a handle lie.
constexpr size_t kVersionAt = 8, kSdidAt = 12, kIdAt = 16, kSizeAt = 24, kSecretAt = 32;
constexpr size_t kUsedBytes = kSecretAt + kSecretBytes;

enum class Op : uint32_t { Export = 1, Allow = 2, Release = 3, Import = 4 };

// Export's flags.
constexpr uint32_t kValidatePid = 1;

struct Request {
    uint32_t magic;
    uint32_t op;
    uint32_t flags;
    uint32_t npids;
    uint8_t handle[kHandleBytes];
    AllowedProcess pids[kMaxPidsPerCall];
};
static_assert(sizeof(AllowedProcess) == 8, "allowlist entry layout");
static_assert(sizeof(Request) == 16 + kHandleBytes + 8 * kMaxPidsPerCall, "request layout");

struct Reply {
    uint32_t magic;
    int32_t error; // 0, or a positive errno (npuipc/fabric.h)
    uint8_t handle[kHandleBytes];
};
static_assert(sizeof(Reply) == 8 + kHandleBytes, "reply layout");

// Receives one message of at most `len` bytes into `buf`, and every fd
// that came with it (room for two: a third is cut, MSG_CTRUNC), owned, in
// `fds`; retried on EINTR. The bytes, 0 at the peer's close, or -1 and
// errno; the message's flags (MSG_TRUNC, MSG_CTRUNC) in *flags.
// `recv_flags` are recvmsg's (MSG_DONTWAIT).
ssize_t receive(int sock, void *buf, size_t len, std::vector<UniqueFd> &fds, int *flags,
                int recv_flags = 0);

} // namespace npuipc::fabric::wire

#endif // NPUIPC_FABRIC_WIRE_H
