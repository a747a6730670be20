// SPDX-License-Identifier: MIT
// The state callbacks an application registers by name
// (aclrtRegStreamStateCallback, aclrtRegDeviceStateCallback,
// aclrtSetDeviceTaskAbortCallback), called in the thread whose call
// changes the state, as CANN calls them, never with Runtime::mu held, from
// a copy of the registry taken then: one another thread removes meanwhile
// may still be called once.
#ifndef NPUIPC_ACLRT_STATE_CALLBACKS_H
#define NPUIPC_ACLRT_STATE_CALLBACKS_H

#include <cstdint>
#include <vector>

#include "acl/acl.h"

namespace npuipc_rt {

// Whether any stream state callback is registered: callers skip
// collecting what they would report otherwise.
bool stream_state_callbacks_registered();
// Calls the stream state callbacks now. Without Runtime::mu held.
void notify_stream_state(aclrtStream stream, aclrtStreamState state);
// The same, from under Runtime::mu: queued, and called when the API call
// of this thread that queued it returns (api()).
void defer_stream_state(aclrtStream stream, aclrtStreamState state);
// Calls what defer_stream_state() queued in this thread.
void run_deferred_state_callbacks();
// DESTROY_PRE of `streams`, handles still valid. Without Runtime::mu held.
void notify_streams_destroyed(const std::vector<uint64_t> &streams);

// Calls the device state callbacks with the device id the application
// uses. Without Runtime::mu held.
void notify_device_state(int32_t deviceId, aclrtDeviceState state);

// Calls the task-abort callbacks; the first non-zero return, or 0.
int32_t notify_task_abort(int32_t deviceId, aclrtDeviceTaskAbortStage stage, uint32_t timeout);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_STATE_CALLBACKS_H
