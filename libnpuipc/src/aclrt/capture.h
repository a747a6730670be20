// SPDX-License-Identifier: MIT
// Stream capture into model runtime instances (aclmdlRI): between
// aclmdlRICaptureBegin and aclmdlRICaptureEnd a stream's launches are not
// run but recorded, each as the call that makes it again on another
// stream; aclmdlRIExecuteAsync makes them, in order, on the stream given.
#ifndef NPUIPC_ACLRT_CAPTURE_H
#define NPUIPC_ACLRT_CAPTURE_H

#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aclrt/runtime.h"

namespace npuipc_rt {

class ModelRun;
struct CondTask;

// A launch as recorded: its name, and the call that makes it on a stream;
// or, in a built model, a task that steers the run (a label switch, a
// stream switch or activation, the end task), run by the model's runner.
// A number no other recorded task has.
uint64_t next_task_serial();

// `params`: what aclmdlRITaskGetParams reports (its type DEFAULT for the
// tasks CANN reports none of); `id`: its aclmdlRITask handle once one was
// asked for (model_tasks.cpp), 0 before.
struct CapturedCall {
    CapturedCall(const char *name, std::function<aclError(aclrtStream)> launch,
                 std::function<aclError(ModelRun &)> steering, const aclmdlRITaskParams *task = nullptr)
        : what(name), make(std::move(launch)), steer(std::move(steering)), serial(next_task_serial())
    {
        std::memset(&params, 0, sizeof(params));
        if (task)
            params = *task;
    }
    const char *what;
    std::function<aclError(aclrtStream)> make;
    std::function<aclError(ModelRun &)> steer;
    aclmdlRITaskParams params;
    uint64_t id = 0;
    uint64_t serial; // unique to the task recorded (its copies keep it)
    // In a built model: the task's number in its stream, which
    // aclrtGetThreadLastTaskId gives and aclrtTaskUpdateAsync takes.
    uint32_t task_id = 0;
    // In a captured model: its aclmdlRITaskGetSeqId, the model's count of
    // tasks recorded before it; and whether aclmdlRITaskDisable took it
    // out at the next aclmdlRIUpdate.
    uint32_t seq = 0;
    bool disabled = false;
    // A conditional task (aclmdlRIAddCondTask, model_cond.cpp), which a
    // run steps through instead of `make`.
    std::shared_ptr<const CondTask> cond;
    std::string extend_info; // aclrtCacheLastTaskExtendInfo's, for aclmdlRIDebugJsonPrint
};

// The last task the calling thread recorded into a model (a capture: stream
// 0; a built model: the bound stream's token), while it is the thread's last
// task: a launch that runs makes it none.
struct LastRecordedTask {
    std::weak_ptr<Model> model;
    uint64_t stream = 0;
    uint64_t serial = 0; // CapturedCall::serial
};
LastRecordedTask &last_recorded_task();

// A stream bound to a built model (aclmdlRIBindStream) and its tasks.
struct BoundStream {
    uint64_t stream; // token
    bool head;       // runs when the model starts; the others when activated
    std::vector<CapturedCall> tasks;
    uint32_t last_task_id = 0; // CapturedCall::task_id
};

struct CondHandle;

struct Model : Object {
    // `capture`: made by aclmdlRICaptureBegin; otherwise by
    // aclmdlRIBuildBegin (model_build.cpp). `body`: made by
    // aclmdlRIAddCondTask, captured by aclmdlRICaptureToModelRIBegin.
    Model(uint32_t dev, uint32_t model_id, bool capture = true, bool body = false);
    // A capture its stream never ended (a reset took both) ends here.
    ~Model() override;
    // Why a built model's run under way must stop now (destroyed, aborted),
    // or ACL_SUCCESS.
    aclError run_ended(uint64_t run) const;
    const uint32_t id;
    const bool built;
    const bool body; // runs only as a conditional task's body, in its model
    // One run of a built model at a time.
    std::mutex run_mu;
    // Destroyed: a run under way stops at its next step.
    std::atomic<bool> stopping{false};
    // Runs of a built model by number: the last started, the last ended,
    // and the last that aclmdlRIAbort stops (at its next step; the model
    // may run again).
    std::atomic<uint64_t> runs_started{0};
    std::atomic<uint64_t> runs_ended{0};
    std::atomic<uint64_t> aborted_run{0};
    // Protects what follows.
    std::mutex mu;
    std::vector<CapturedCall> calls;
    bool capturing = true;
    std::vector<BoundStream> bound; // built models
    bool end_task = false;          // aclmdlRIEndTask was called
    bool build_ended = false;       // aclmdlRIBuildEnd
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
    uint64_t context = 0;   // of the capturing stream
    pid_t thread = 0;       // that began the capture
    std::string name;
    std::vector<std::pair<aclrtCallback, void *>> destroy_callbacks;
    uint32_t next_seq = 0; // CapturedCall::seq
    // A captured model's task changes (aclmdlRITaskSetParams, Disable):
    // UPDATING until aclmdlRIUpdate, FAULT for good after a change failed;
    // it runs only when READY.
    enum class Changes { Ready, Updating, Fault } changes = Changes::Ready;
    // The handle aclmdlRIGetStreams gives for a captured model's tasks (0
    // before it is asked for): a ModelStream.
    uint64_t task_stream = 0;
    bool body_captured = false; // a body's capture began (there is one)
    // aclmdlRICondHandleCreate's, for this model's conditional tasks.
    std::vector<std::shared_ptr<CondHandle>> cond_handles;
};

// What aclmdlRIGetStreams names a captured model's tasks by, as CANN names
// them by its internal capture stream: no stream the application may use,
// only list the tasks of (aclmdlRIGetTasksByStream).
struct ModelStream : Object {
    ModelStream(uint32_t dev, std::weak_ptr<Model> m) : Object(Kind::ModelStream, dev), model(std::move(m)) {}
    const std::weak_ptr<Model> model;
};

// ACL_ERROR_RT_MODEL_EXECUTE unless a captured model's task changes are
// applied (aclmdlRIUpdate). With Model::mu held.
aclError check_changes_applied(const Model &m);

// When `stream` captures, or is bound to a built model: records `make`
// (the launch made again on the stream a run of the model gives) under the
// name `what`, and returns true: the launch ends there. Without Stream::mu
// held.
// `params`: the task's type and parameters, for aclmdlRITaskGetParams.
bool captured(Stream &stream, const char *what, std::function<aclError(aclrtStream)> make,
              const aclmdlRITaskParams *params = nullptr);
// ACL_ERROR_RT_STREAM_CAPTURED when `stream` captures: what may not be done
// to it then (synchronize, query, destroy, run a model on it).
aclError refuse_if_capturing(const Stream &stream);
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT when `stream` captures or is bound to a
// built model: for launches npuipc cannot record.
aclError refuse_uncapturable(const Stream &stream);
// With Runtime::mu held: a stream leaving the table (destroyed, with its
// context or device) ends its capture (the model, never ended, goes too)
// and leaves the built model it was bound to.
void abandon_capture_locked(Runtime &rt, Stream &stream);
// Built models (model_build.cpp): records a launch on a bound stream;
// false if the stream is bound no more.
bool record_in_built_model(Stream &stream, const char *what, std::function<aclError(aclrtStream)> &make,
                           const aclmdlRITaskParams *params);
// The task handles of `tasks` stop naming anything (model_tasks.cpp).
void forget_task_handles(const std::vector<CapturedCall> &tasks);
// Holds `s` at a gated point and, on a runtime thread named `name`, runs
// `run` in the stream's context once the stream gets there: its failure
// goes to the stream's next synchronize, and the stream goes on after it.
aclError run_behind_point(const std::shared_ptr<Stream> &s, const char *name, std::function<aclError()> run);
// aclmdlRIExecuteAsync and aclmdlRIExecute of a built model, and what its
// destroy adds: its streams unbound. With Model::mu not held.
aclError execute_built_async(const std::shared_ptr<Model> &m, const std::shared_ptr<Stream> &s);
aclError execute_built(const std::shared_ptr<Model> &m, int32_t timeout);
aclError abort_model(const std::shared_ptr<Model> &m);
// ACL_ERROR_RT_MODEL_CONTEXT unless the model is of the current context.
aclError check_model_context(const Model &m);
void unbind_all_streams(Model &m);
// Takes the stream out of the model it is bound to, if any (unbind, or
// the stream leaving the table). Without Stream::mu and Model::mu held.
// With `expected`, only from that model.
void unbind_stream(Stream &stream, const Model *expected = nullptr);
// Calls `fn` with Model::mu held on the task numbered `task_id` of the
// built model `stream` is bound to; ACL_ERROR_RT_PARAM_INVALID if the
// stream is bound to none or has no such task.
aclError with_bound_task(Stream &stream, uint32_t task_id, const std::function<aclError(CapturedCall &)> &fn);
// ACL_ERROR_RT_PARAM_INVALID when `stream` is bound to a built model: it
// runs no model itself.
aclError refuse_if_bound(const Stream &stream);
// A conditional task's condition (aclmdlRICondHandleCreate): a 64-bit word
// of device memory the application's work writes, read when a run reaches
// the task; owned by the model it was made for, and freed with it.
struct CondHandle : Object {
    CondHandle(uint32_t dev, uint64_t dflt, bool assign)
        : Object(Kind::CondHandle, dev), default_value(dflt), assign_default(assign)
    {
    }
    const uint64_t default_value;
    const bool assign_default; // the word is set to default_value at each run
    void *word = nullptr;      // set before the handle is published
    // The word's memory, read through this (an application that frees the
    // address, against CANN's rule, cannot make a run read another
    // allocation's bytes).
    std::shared_ptr<Allocation> memory;
    std::weak_ptr<Model> owner; // likewise
    // Under the owning Model::mu: the task using it, and its bodies.
    bool used = false;
    std::vector<std::shared_ptr<Model>> bodies;
};

// A conditional task as recorded: what it is, its condition, its bodies.
struct CondTask {
    aclmdlRICondTaskType type;
    std::shared_ptr<CondHandle> handle;
    std::vector<std::shared_ptr<Model>> bodies;
};

// Whether a run of `calls` steps through a conditional task.
bool has_conditions(const std::vector<CapturedCall> &calls);
// aclmdlRIExecuteAsync of a captured model with conditional tasks
// (`calls`, checked ready): once `s` reaches the call, a runner thread
// runs them on a stream of its own, choosing each body by its condition,
// and lets `s` go on. The runner holds Model::run_mu meanwhile.
aclError execute_with_conditions(const std::shared_ptr<Model> &m, const std::shared_ptr<Stream> &s,
                                 std::vector<CapturedCall> calls);
// ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING unless every body of the model's
// conditional tasks was captured and its capture ended. With Model::mu held.
aclError check_bodies_captured(const Model &m);
// A model leaving the table (destroyed, or its capture dropped): its
// conditions' handles and bodies leave it too, and the words are freed.
// Without Runtime::mu and Model::mu held.
void release_conditions(Model &m);
// The same with Runtime::mu held (a capture its stream's end dropped): the
// words stay allocated until their device is reset.
void release_conditions_locked(Runtime &rt, Model &m);
// aclmdlRICaptureToModelRIBegin's start (capture.cpp): `s` captures into
// the body `m`. With Runtime::mu and Stream::mu held.
void start_body_capture(Stream &s, const std::shared_ptr<Model> &m, aclmdlRICaptureMode mode);
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT for a body: it runs, and goes, with
// its model only.
aclError refuse_body(const Model &m);

// In a fork child: the parent's captures are not the child's.
void forget_captures_after_fork();
// ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT when a synchronous copy or set may
// not run now: a GLOBAL capture in the current context, or a THREAD_LOCAL
// one this thread began, unless this thread's mode is RELAXED
// (aclmdlRICaptureThreadExchangeMode). Without Runtime::mu held.
aclError check_capture_mode();

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_CAPTURE_H
