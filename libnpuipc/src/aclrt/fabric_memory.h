// SPDX-License-Identifier: MIT
// This server's fabric for the aclrt layer (api_fabric.cpp): its window,
// from which physical memory comes when the server has one, and the
// session with its fabric daemon that FABRIC shareable handles go through
// (npuipc/fabric.h, Documentation/fabric.md).
#ifndef NPUIPC_ACLRT_FABRIC_MEMORY_H
#define NPUIPC_ACLRT_FABRIC_MEMORY_H

#include <cstddef>
#include <cstdint>

#include "acl/acl_rt.h"
#include "npuipc/device.h"
#include "npuipc/fabric.h"
#include "npuipc/result.h"
#include "npuipc/unique_fd.h"

namespace npuipc_rt {

// Whether this server has a fabric window (looked up once per process).
bool fabric_present();
// This server's SuperPOD device id: its window's, 0 in no SuperPOD.
uint32_t fabric_sdid();

// `size` bytes of fabric memory of this server's part, as a dma-buf that
// a device imports with peer access; ENODEV without a window.
npuipc::Result<npuipc::UniqueFd> fabric_allocate(uint64_t size, npuipc::PageClass page_class);

// The FABRIC type of the V2 shareable-handle calls, with CANN's codes. An
// export lives as long as the daemon session that made it: its number in
// `session`, alive while fabric_session_lives() says so.
aclError fabric_export(int memory, bool validate_pid, npuipc::fabric::Handle &out, uint64_t &session);
bool fabric_session_lives(uint64_t session);
aclError fabric_allow(const aclrtMemFabricHandle &handle, const int32_t *pids, size_t count);
aclError fabric_import(const aclrtMemFabricHandle &handle, npuipc::UniqueFd &memory);
// Withdraws an export of this process (its physical memory's last handle
// went); errors are the daemon's to log.
void fabric_release(const npuipc::fabric::Handle &handle);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_FABRIC_MEMORY_H
