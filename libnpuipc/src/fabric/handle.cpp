// SPDX-License-Identifier: MIT
// The fabric handle's layout (npuipc/fabric.h), shared by libnpuipc and
// npuipc-fabricd.
#include "npuipc/fabric.h"

#include <cstdlib>
#include <cstring>

#include "fabric/wire.h"

namespace npuipc::fabric {

namespace {

template <typename T> T field(const Handle &h, size_t at)
{
    T v;
    std::memcpy(&v, h.data.data() + at, sizeof(v));
    return v;
}

} // namespace

uint32_t Handle::owner_sdid() const noexcept
{
    return field<uint32_t>(*this, wire::kSdidAt);
}

uint64_t Handle::export_id() const noexcept
{
    return field<uint64_t>(*this, wire::kIdAt);
}

uint64_t Handle::size() const noexcept
{
    return field<uint64_t>(*this, wire::kSizeAt);
}

bool Handle::well_formed() const noexcept
{
    for (size_t i = wire::kUsedBytes; i < kHandleBytes; i++)
        if (data[i])
            return false;
    return std::memcmp(data.data(), wire::kHandleMagic, sizeof(wire::kHandleMagic)) == 0 &&
           field<uint32_t>(*this, wire::kVersionAt) == wire::kHandleVersion && export_id() != 0 &&
           size() != 0;
}

std::string daemon_socket_path()
{
    const char *env = std::getenv("NPUIPC_FABRIC_SOCKET");
    return env && *env ? env : "/run/npuipc/fabric.sock";
}

} // namespace npuipc::fabric
