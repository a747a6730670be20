// SPDX-License-Identifier: MIT
// Stream capture into model runtime instances (aclmdlRI): between
// aclmdlRICaptureBegin and aclmdlRICaptureEnd a stream's launches are not
// run but recorded, each as the call that makes it again on another
// stream; aclmdlRIExecuteAsync makes them, in order, on the stream given.
#ifndef NPUIPC_ACLRT_CAPTURE_H
#define NPUIPC_ACLRT_CAPTURE_H

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aclrt/runtime.h"

namespace npuipc_rt {

// A launch as recorded: its name, and the call that makes it on a stream.
struct CapturedCall {
    const char *what;
    std::function<aclError(aclrtStream)> make;
};

struct Model : Object {
    Model(uint32_t dev, uint32_t model_id);
    // A capture its stream never ended (a reset took both) ends here.
    ~Model() override;
    const uint32_t id;
    // Protects what follows.
    std::mutex mu;
    std::vector<CapturedCall> calls;
    bool capturing = true;
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
    uint64_t context = 0;   // of the capturing stream
    pid_t thread = 0;       // that began the capture
    std::string name;
    std::vector<std::pair<aclrtCallback, void *>> destroy_callbacks;
};

// When `stream` captures: records `make` (the launch made again on the
// stream a run of the model gives) under the name `what`, and returns
// true: the launch ends there. Without Stream::mu held.
bool captured(Stream &stream, const char *what, std::function<aclError(aclrtStream)> make);
// ACL_ERROR_RT_STREAM_CAPTURED when `stream` captures: what may not be done
// to it then (synchronize, query, destroy, run a model on it).
aclError refuse_if_capturing(const Stream &stream);
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT when `stream` captures: for launches
// npuipc cannot capture.
aclError refuse_uncapturable(const Stream &stream);
// With Runtime::mu held: a stream leaving the table (destroyed, with its
// context or device) ends its capture; the model, never ended, goes too.
void abandon_capture_locked(Runtime &rt, Stream &stream);
// In a fork child: the parent's captures are not the child's.
void forget_captures_after_fork();
// ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT when a synchronous copy or set may
// not run now: a GLOBAL capture in the current context, or a THREAD_LOCAL
// one this thread began, unless this thread's mode is RELAXED
// (aclmdlRICaptureThreadExchangeMode). Without Runtime::mu held.
aclError check_capture_mode();

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_CAPTURE_H
