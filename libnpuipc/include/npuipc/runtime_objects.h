// SPDX-License-Identifier: MIT
// What the aclrt runtime of this process holds for its own use, apart from
// the objects behind the application's handles: a default context's
// default stream, the stream it records and resets on for the host, the
// events that mark host callbacks' points, a callback thread's eventfd,
// the IPC exporter's socket. A DRM file's fdinfo (npuipc(4)) counts both;
// a leak check, or a user reading npuipc-smi, subtracts these.
#ifndef NPUIPC_RUNTIME_OBJECTS_H
#define NPUIPC_RUNTIME_OBJECTS_H

#include <cstdint>
#include <vector>

namespace npuipc {

// Handles of the runtime's own in its DRM file of one device.
struct RuntimeObjects {
    uint32_t streams = 0;  // default context's default stream, the host's stream
    uint32_t events = 0;   // callbacks' points, idle in the pool or pending
    uint32_t notifies = 0; // gates of blocking callbacks and of stream waits for a record
};

// The runtime's own objects on the device of npuipc index `device`; all
// zero when the runtime does not hold that device.
RuntimeObjects runtime_own_objects(uint32_t device);

// The fds the runtime holds for its own use: its devices' DRM fds, its
// events' fds, callback threads' eventfds, the IPC exporter's fds and its
// log file.
std::vector<int> runtime_own_fds();

} // namespace npuipc

#endif
