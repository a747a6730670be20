// SPDX-License-Identifier: MIT
// The protocol between libnpuipc's fabric client (npuipc/fabric.h) and
// npuipc-fabricd on its Unix socket: one SOCK_SEQPACKET message each way
// per request, the dma-buf in SCM_RIGHTS (EXPORT's request, IMPORT's
// reply). Both sides are built from this tree.
#ifndef NPUIPC_FABRIC_WIRE_H
#define NPUIPC_FABRIC_WIRE_H

#include <cstdint>

#include "npuipc/fabric.h"

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

} // namespace npuipc::fabric::wire

#endif // NPUIPC_FABRIC_WIRE_H
