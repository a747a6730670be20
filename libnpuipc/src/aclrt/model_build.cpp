// SPDX-License-Identifier: MIT
// Built model runtime instances (aclmdlRIBuildBegin ... aclmdlRIBuildEnd)
// and the control flow of their streams: labels, stream activation and
// switches, the end task (aclrt_model_build(3)).
//
// The application binds persistent streams to a model; what it launches on
// them is recorded per stream, as a capture records (capture.cpp). A run
// (ModelRun) starts the head streams: it makes each stream's recorded
// launches on that stream, in order, up to its next steering task, and
// marks that point on the stream. The first stream to reach its point
// steers, reading the device memory its earlier work wrote: it jumps to a
// label, activates a stream, or ends. A stream that waits for another's
// record therefore never waits for a launch not yet made. The run ends
// when every stream it started has run out of tasks; a failure aborts
// what the run queued.
// aclmdlRIExecuteAsync runs it on a thread of its own once the execute
// stream reaches the call, and holds that stream until the run ended.
#include <poll.h>
#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <thread>

#include "aclrt/capture.h"
#include "clock.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace npuipc_rt {

struct Label : Object {
    Label(uint32_t dev, uint64_t ctx);
    ~Label() override;
    const uint64_t context;
    // Under label_mu: where aclrtSetLabel set it (a bound stream of the
    // model of id `model`, before task `position`; 0: nowhere), and
    // whether a list holds it.
    uint32_t model = 0;
    uint64_t stream = 0;
    size_t position = 0;
    bool listed = false;
};

struct LabelList : Object {
    LabelList(uint32_t dev, std::vector<std::shared_ptr<Label>> l) : Object(Kind::LabelList, dev), labels(std::move(l))
    {
    }
    const std::vector<std::shared_ptr<Label>> labels;
};

namespace {

// Protects the fields of every Label.
std::mutex label_mu;

constexpr uint32_t kMaxLabels = 65535; // per process and per list, as CANN
std::atomic<uint32_t> live_labels{0};

} // namespace

Label::Label(uint32_t dev, uint64_t ctx) : Object(Kind::Label, dev), context(ctx)
{
    live_labels.fetch_add(1, std::memory_order_relaxed);
}

Label::~Label()
{
    live_labels.fetch_sub(1, std::memory_order_relaxed);
}

// A fork child takes label_mu free. Registered when the library loads,
// before the runtime's own handlers, whose prepare (Runtime::mu, taken
// before label_mu everywhere) therefore runs first.
__attribute__((constructor)) void register_label_fork_handlers()
{
    pthread_atfork([] { label_mu.lock(); }, [] { label_mu.unlock(); }, [] { label_mu.unlock(); });
}

// One run of a built model: the streams it started, each at its next task.
class ModelRun {
public:
    ModelRun(const Model &m, std::vector<BoundStream> streams, int64_t deadline_ms, uint64_t number)
        : model_(m), streams_(std::move(streams)), deadline_ms_(deadline_ms), number_(number)
    {
    }
    aclError run();

    // For steering tasks. Reads `n` bytes of device memory at `ptr`.
    aclError read(const void *ptr, void *out, size_t n);
    // Starts bound stream `token` (again, from its first task, if it ran
    // out); a stream running already goes on as it is.
    aclError activate(uint64_t token);
    // Continues at `label`: on the current stream, or on the label's stream
    // instead of this one, which must be idle.
    aclError jump(const Label &label);
    // The current stream runs no further task.
    void end_here() { ended_ = true; }

private:
    struct Cursor {
        size_t stream; // index in streams_
        size_t pc;     // next task
        // The point marked on the stream at its steering task at `pc`.
        std::shared_ptr<HostTask> point;
    };
    const std::vector<CapturedCall> &tasks(const Cursor &c) const { return streams_[c.stream].tasks; }
    aclError make_launches(Cursor &c);
    aclError mark_point(Cursor &c);
    aclError first_at_point(size_t &index);
    aclError wait_for(size_t stream);
    int32_t slice_ms(int32_t most) const;
    void drop_point(Cursor &c);
    bool running(size_t stream) const;
    bool find(uint64_t token, size_t &index) const;

    const Model &model_;
    const std::vector<BoundStream> streams_;
    const int64_t deadline_ms_;
    const uint64_t number_; // Model::runs_started when it started
    std::deque<Cursor> active_;
    std::vector<bool> touched_ = std::vector<bool>(streams_.size());
    std::vector<std::shared_ptr<Stream>> objects_ = std::vector<std::shared_ptr<Stream>>(streams_.size());
    Cursor *current_ = nullptr;
    bool ended_ = false;
};

bool ModelRun::find(uint64_t token, size_t &index) const
{
    for (index = 0; index < streams_.size(); index++)
        if (streams_[index].stream == token)
            return true;
    return false;
}

bool ModelRun::running(size_t stream) const
{
    for (const Cursor &c : active_)
        if (c.stream == stream)
            return true;
    return current_ && current_->stream == stream;
}

aclError ModelRun::make_launches(Cursor &c)
{
    const std::vector<CapturedCall> &t = tasks(c);
    for (; c.pc < t.size() && !t[c.pc].steer; c.pc++) {
        touched_[c.stream] = true;
        if (aclError err = t[c.pc].make(reinterpret_cast<aclrtStream>(streams_[c.stream].stream)))
            return err;
    }
    return ACL_SUCCESS;
}

// Waits are made in slices of at most `most` ms, so that a destroy of the
// model or the run's deadline is seen; 0 when the deadline has passed.
int32_t ModelRun::slice_ms(int32_t most) const
{
    if (deadline_ms_ < 0)
        return most;
    return static_cast<int32_t>(std::clamp<int64_t>(deadline_ms_ - npuipc_clock::now_ms(), 0, most));
}

aclError ModelRun::wait_for(size_t stream)
{
    for (;;) {
        const int32_t slice = slice_ms(100);
        aclError err = aclrtSynchronizeStreamWithTimeout(reinterpret_cast<aclrtStream>(streams_[stream].stream),
                                                         slice);
        if (err != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
            return err;
        if (slice == 0)
            return fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "the model did not finish in time");
        if (aclError err = model_.run_ended(number_))
            return err;
    }
}

aclError ModelRun::mark_point(Cursor &c)
{
    if (c.point)
        return ACL_SUCCESS;
    std::shared_ptr<Stream> &s = objects_[c.stream];
    if (!s)
        if (aclError err = find_stream(reinterpret_cast<aclrtStream>(streams_[c.stream].stream), s))
            return err;
    Runtime &rt = Runtime::get();
    auto point = std::make_shared<HostTask>();
    if (aclError err = make_point(rt, *s, false, *point))
        return err;
    std::lock_guard<std::mutex> slock(s->mu);
    Job job[2];
    if (aclError err = submit(*s, job, point_jobs(*point, job))) {
        release_pooled_event(rt, s->device, std::move(point->reached));
        return err;
    }
    c.point = std::move(point);
    return ACL_SUCCESS;
}

void ModelRun::drop_point(Cursor &c)
{
    if (c.point)
        release_pooled_event(Runtime::get(), objects_[c.stream]->device, std::move(c.point->reached));
    c.point.reset();
}

// The index in active_ of a stream that reached its point: the first to.
aclError ModelRun::first_at_point(size_t &index)
{
    for (;;) {
        std::vector<pollfd> fds;
        for (Cursor &c : active_) {
            if (aclError err = mark_point(c))
                return err;
            fds.push_back({c.point->reached->fd.get(), POLLIN, 0});
        }
        const int32_t slice = slice_ms(100);
        int n = ::poll(fds.data(), fds.size(), slice);
        if (n < 0 && errno != EINTR)
            return fail_errno(errno, Op::Generic, "waiting for the model's streams");
        for (index = 0; n > 0 && index < fds.size(); index++)
            if (fds[index].revents)
                return ACL_SUCCESS;
        if (slice == 0)
            return fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "the model did not finish in time");
        if (aclError err = model_.run_ended(number_))
            return err;
    }
}

aclError ModelRun::read(const void *ptr, void *out, size_t n)
{
    // The memory stays while it is read; the application's own mapping of
    // device memory is the device memory.
    std::shared_ptr<Allocation> alloc = Runtime::get().find_allocation(ptr, n);
    if (!alloc || !alloc->accessible.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_MODEL_EXECUTE,
                    "a steering task reads %p, which is not %zu bytes of device memory with access", ptr, n);
    void *at = nullptr;
    if (aclError err = stable_address(*alloc, ptr, at))
        return err;
    std::memcpy(out, at, n);
    return ACL_SUCCESS;
}

aclError ModelRun::activate(uint64_t token)
{
    size_t index;
    if (!find(token, index))
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "a stream activated is not bound to the model (any more)");
    if (!running(index))
        active_.push_back({index, 0, nullptr});
    return ACL_SUCCESS;
}

aclError ModelRun::jump(const Label &label)
{
    size_t index = 0;
    size_t position = 0;
    {
        std::lock_guard<std::mutex> lock(label_mu);
        if (label.model != model_.id || !find(label.stream, index))
            return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the label switched to is not set on a stream of the model");
        position = label.position;
    }
    if (position > streams_[index].tasks.size())
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the label was set on a task list its stream no longer has");
    if (index != current_->stream && running(index))
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "a label switch continues on a stream that is running");
    *current_ = {index, position, nullptr};
    return ACL_SUCCESS;
}

aclError ModelRun::run()
{
    for (size_t i = 0; i < streams_.size(); i++)
        if (streams_[i].head)
            active_.push_back({i, 0, nullptr});
    aclError err = ACL_SUCCESS;
    while (!err && !active_.empty()) {
        if ((err = model_.run_ended(number_)))
            break;
        for (Cursor &c : active_)
            if ((err = make_launches(c)))
                break;
        if (err)
            break;
        active_.erase(std::remove_if(active_.begin(), active_.end(),
                                     [&](const Cursor &c) { return c.pc >= tasks(c).size(); }),
                      active_.end());
        if (active_.empty())
            break;
        size_t first = 0;
        if ((err = first_at_point(first)))
            break;
        Cursor c = active_[first];
        active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(first));
        // Reached, or cancelled by a failure of the stream: which, its
        // synchronize says (the error is the run's).
        drop_point(c);
        if ((err = wait_for(c.stream)))
            break;
        const CapturedCall &task = tasks(c)[c.pc++];
        current_ = &c;
        ended_ = false;
        err = task.steer(*this);
        current_ = nullptr;
        if (!err && !ended_)
            active_.push_back(c);
    }
    for (Cursor &c : active_)
        drop_point(c);
    // A failed run's queued work goes; what was made runs to its end
    // otherwise: the run is over when the streams are.
    for (size_t i = 0; i < streams_.size(); i++)
        if (touched_[i]) {
            if (err)
                (void)aclrtStreamAbort(reinterpret_cast<aclrtStream>(streams_[i].stream));
            aclError e = wait_for(i);
            if (e == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT || e == ACL_ERROR_RT_MODEL_EXECUTE ||
                e == ACL_ERROR_RT_MODEL_ABORT_NORMAL) {
                (void)aclrtStreamAbort(reinterpret_cast<aclrtStream>(streams_[i].stream));
                (void)aclrtSynchronizeStreamWithTimeout(reinterpret_cast<aclrtStream>(streams_[i].stream), 1000);
            }
            if (!err)
                err = e;
        }
    return err;
}

} // namespace npuipc_rt

namespace {

aclError find_model(aclmdlRI modelRI, std::shared_ptr<Model> &out)
{
    return find_object(modelRI, Kind::Model, "model runtime instance", out);
}

std::atomic<uint32_t> next_built_id{0x80000000u};
constexpr const char *kEndTask = "aclmdlRIEndTask";

// The model a stream is bound to; ACL_ERROR_RT_STREAM_MODEL if none.
aclError bound_model_of(Stream &s, std::shared_ptr<Model> &out)
{
    {
        std::lock_guard<std::mutex> slock(s.mu);
        out = s.bound_model;
    }
    if (!out)
        return fail(ACL_ERROR_RT_STREAM_MODEL, "the stream is not bound to a model (aclmdlRIBindStream)");
    return ACL_SUCCESS;
}


// The built model and the stream a building call names, checked in CANN's
// order: handles, a built model, a stream not capturing, the model's
// context current.
aclError built_model_and_stream(aclmdlRI modelRI, aclrtStream stream, std::shared_ptr<Model> &m,
                                std::shared_ptr<Stream> &s)
{
    if (!modelRI)
        return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
    if (aclError err = find_model(modelRI, m))
        return err;
    if (aclError err = find_stream(stream, s))
        return err;
    if (!m->built)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the model was captured, not built (aclmdlRIBuildBegin)");
    if (aclError err = refuse_if_capturing(*s))
        return err;
    return check_model_context(*m);
}

// The stream a control-flow call names: of the current context and bound
// to a model, whose recorded tasks of it `fn` then extends (Model::mu held).
// The task just added to `b` (of `m`, locked) is numbered in its stream
// and is the thread's last task (aclrtGetThreadLastTaskId,
// aclrtCacheLastTaskExtendInfo), steering and end tasks included.
void note_recorded(const std::shared_ptr<Model> &m, BoundStream &b)
{
    CapturedCall &task = b.tasks.back();
    task.task_id = ++b.last_task_id;
    thread_last_task_id() = task.task_id;
    last_recorded_task() = {m, b.stream, task.serial};
}

template <typename Fn> aclError extend_bound_stream(aclrtStream stream, Fn &&fn)
{
    Runtime &rt = Runtime::get();
    std::shared_ptr<Stream> s;
    std::shared_ptr<Context> ctx;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        if (aclError err = rt.current_context(ctx))
            return err;
    }
    if (s->context != ctx->token)
        return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
    std::shared_ptr<Model> m;
    if (aclError err = bound_model_of(*s, m))
        return err;
    std::lock_guard<std::mutex> mlock(m->mu);
    for (BoundStream &b : m->bound)
        if (b.stream == s->token) {
            const size_t before = b.tasks.size();
            aclError err = fn(*m, b);
            if (!err && b.tasks.size() > before)
                note_recorded(m, b);
            return err;
        }
    return fail(ACL_ERROR_RT_STREAM_MODEL, "the stream was unbound meanwhile");
}

// A bound stream named by a steering call as its target (activated, or
// switched to): bound to a model, or ACL_ERROR_RT_STREAM_MODEL.
aclError bound_target(aclrtStream stream, const char *what, uint64_t &token)
{
    if (!stream)
        return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", what);
    std::shared_ptr<Stream> s;
    if (aclError err = find_stream(stream, s))
        return err;
    if (!s->bound.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_STREAM_MODEL, "%s is not bound to a model (aclmdlRIBindStream)", what);
    token = s->token;
    return ACL_SUCCESS;
}

template <typename T> bool compare(T left, aclrtCondition cond, T right)
{
    switch (cond) {
    case ACL_RT_EQUAL:
        return left == right;
    case ACL_RT_NOT_EQUAL:
        return left != right;
    case ACL_RT_GREATER:
        return left > right;
    case ACL_RT_GREATER_OR_EQUAL:
        return left >= right;
    case ACL_RT_LESS:
        return left < right;
    case ACL_RT_LESS_OR_EQUAL:
        return left <= right;
    }
    return false;
}

// While it lives, the thread runs a model: its launches on bound streams
// are made, not recorded, and no capture holds back its waits.
class RunningModelHere {
public:
    RunningModelHere() : was_(running_model_here())
    {
        running_model_here() = true;
        (void)aclmdlRICaptureThreadExchangeMode(&mode_);
    }
    ~RunningModelHere()
    {
        (void)aclmdlRICaptureThreadExchangeMode(&mode_);
        running_model_here() = was_;
    }
    RunningModelHere(const RunningModelHere &) = delete;
    RunningModelHere &operator=(const RunningModelHere &) = delete;

private:
    const bool was_;
    aclmdlRICaptureMode mode_ = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
};

// Runs `m` on this thread (in its context). Model::run_mu held.
aclError run_model(Model &m, int64_t deadline_ms)
{
    std::vector<BoundStream> streams;
    {
        std::lock_guard<std::mutex> mlock(m.mu);
        streams = m.bound;
    }
    if (m.stopping.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model was destroyed before its run");
    RunningModelHere running;
    const uint64_t number = m.runs_started.fetch_add(1, std::memory_order_acq_rel) + 1;
    aclError err;
    try {
        err = ModelRun(m, std::move(streams), deadline_ms, number).run();
    } catch (const std::bad_alloc &) {
        err = fail(ACL_ERROR_BAD_ALLOC, "out of memory during the model's run");
    }
    m.runs_ended.store(number, std::memory_order_release);
    return err;
}

// The runner of one aclmdlRIExecuteAsync: once the execute stream reaches
// the gated point, runs `run` in the stream's context, keeps its failure
// for the stream's next synchronize and lets the stream go on.
void run_at_point(std::shared_ptr<Stream> s, std::shared_ptr<HostTask> point, const char *name,
                  const std::function<aclError()> &run)
{
    pthread_setname_np(pthread_self(), name);
    Runtime &rt = Runtime::get();
    // A point cancelled by an earlier failure of the stream: its gate's
    // wait was cancelled too, and nothing runs.
    Result<int> reached = s->dev->wait(point->reached->event.get(), -1);
    if (reached.ok() && reached.value() == 0) {
        aclError err = aclrtSetCurrentContext(reinterpret_cast<aclrtContext>(s->context));
        if (!err)
            err = run();
        if (err)
            s->run_error.store(err, std::memory_order_release);
        open_gate(*point);
    }
    release_pooled_event(rt, s->device, std::move(point->reached));
}

} // namespace

namespace npuipc_rt {

bool record_in_built_model(Stream &stream, const char *what, std::function<aclError(aclrtStream)> &make,
                           const aclmdlRITaskParams *params)
{
    std::shared_ptr<Model> m;
    {
        std::lock_guard<std::mutex> slock(stream.mu);
        m = stream.bound_model;
    }
    if (!m)
        return false;
    std::lock_guard<std::mutex> mlock(m->mu);
    for (BoundStream &b : m->bound)
        if (b.stream == stream.token) {
            b.tasks.push_back({what, std::move(make), nullptr, params});
            note_recorded(m, b);
            return true;
        }
    return false;
}

aclError with_bound_task(Stream &stream, uint32_t task_id, const std::function<aclError(CapturedCall &)> &fn)
{
    std::shared_ptr<Model> m;
    {
        std::lock_guard<std::mutex> slock(stream.mu);
        m = stream.bound_model;
    }
    if (!m)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the task's stream is bound to no model (aclmdlRIBindStream)");
    std::lock_guard<std::mutex> mlock(m->mu);
    for (BoundStream &b : m->bound)
        if (b.stream == stream.token)
            for (CapturedCall &c : b.tasks)
                if (c.task_id && c.task_id == task_id)
                    return fn(c);
    return fail(ACL_ERROR_RT_PARAM_INVALID, "the model's stream has no task %u", task_id);
}

// Whether a bound stream still has the end task. With Model::mu held.
void recount_end_task(Model &m)
{
    m.end_task = std::any_of(m.bound.begin(), m.bound.end(), [](const BoundStream &b) {
        return std::any_of(b.tasks.begin(), b.tasks.end(),
                           [](const CapturedCall &t) { return std::strcmp(t.what, kEndTask) == 0; });
    });
}

void unbind_stream(Stream &stream, const Model *expected)
{
    std::shared_ptr<Model> m;
    {
        std::lock_guard<std::mutex> slock(stream.mu);
        if (expected && stream.bound_model.get() != expected)
            return;
        m = std::move(stream.bound_model);
        stream.bound.store(false, std::memory_order_release);
    }
    if (!m)
        return;
    std::lock_guard<std::mutex> mlock(m->mu);
    for (const BoundStream &b : m->bound)
        if (b.stream == stream.token)
            forget_task_handles(b.tasks);
    m->bound.erase(std::remove_if(m->bound.begin(), m->bound.end(),
                                  [&](const BoundStream &b) { return b.stream == stream.token; }),
                   m->bound.end());
    // The end task may have gone with the stream.
    recount_end_task(*m);
}

aclError refuse_if_bound(const Stream &stream)
{
    if (stream.bound.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the stream is bound to a model: a model runs on another stream");
    return ACL_SUCCESS;
}

void unbind_all_streams(Model &m)
{
    std::vector<uint64_t> tokens;
    {
        std::lock_guard<std::mutex> mlock(m.mu);
        for (const BoundStream &b : m.bound)
            tokens.push_back(b.stream);
    }
    std::vector<std::shared_ptr<Stream>> streams;
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        for (uint64_t token : tokens)
            if (auto s = rt.find<Stream>(reinterpret_cast<void *>(token), Kind::Stream))
                streams.push_back(std::move(s));
    }
    for (const std::shared_ptr<Stream> &s : streams)
        unbind_stream(*s, &m);
    // Streams destroyed meanwhile left their entries to unbind_stream.
    std::lock_guard<std::mutex> mlock(m.mu);
    for (const BoundStream &b : m.bound)
        forget_task_handles(b.tasks);
    m.bound.clear();
    m.end_task = false;
}

aclError execute_built_async(const std::shared_ptr<Model> &m, const std::shared_ptr<Stream> &s)
{
    if (aclError err = check_model_context(*m))
        return err;
    if (s->context != m->context)
        return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
    {
        std::lock_guard<std::mutex> mlock(m->mu);
        if (!m->build_ended)
            return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model is being built: aclmdlRIBuildEnd first");
    }
    return run_behind_point(s, "npuipc-model", [m] {
        std::lock_guard<std::mutex> one_run(m->run_mu);
        return run_model(*m, -1);
    });
}

aclError run_behind_point(const std::shared_ptr<Stream> &s, const char *name, std::function<aclError()> run)
{
    Runtime &rt = Runtime::get();
    auto point = std::make_shared<HostTask>();
    if (aclError err = make_point(rt, *s, true, *point))
        return err;
    {
        std::lock_guard<std::mutex> slock(s->mu);
        if (!s->listed.load(std::memory_order_relaxed)) {
            release_pooled_event(rt, s->device, std::move(point->reached));
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the stream was destroyed meanwhile");
        }
        Job jobs[2];
        if (aclError err = submit(*s, jobs, point_jobs(*point, jobs))) {
            release_pooled_event(rt, s->device, std::move(point->reached));
            return err;
        }
    }
    if (aclError err = start_runtime_thread("a model's runner", [s, point, name, run = std::move(run)] {
            run_at_point(s, point, name, run);
        })) {
        // The stream must not wait for a run that never comes.
        open_gate(*point);
        release_pooled_event(rt, s->device, std::move(point->reached));
        return err;
    }
    return ACL_SUCCESS;
}

aclError check_model_context(const Model &m)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    if (aclError err = rt.current_context(ctx))
        return err;
    if (ctx->token != m.context)
        return fail(ACL_ERROR_RT_MODEL_CONTEXT, "the model is not of the current context");
    return ACL_SUCCESS;
}

aclError execute_built(const std::shared_ptr<Model> &m, int32_t timeout)
{
    if (aclError err = check_model_context(*m))
        return err;
    {
        std::lock_guard<std::mutex> mlock(m->mu);
        if (!m->build_ended)
            return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model is being built: aclmdlRIBuildEnd first");
    }
    std::lock_guard<std::mutex> one_run(m->run_mu);
    return run_model(*m, npuipc_clock::deadline_ms(timeout));
}

// aclmdlRIAbort of a built model: the run under way (if any) stops within
// a tenth of a second of its current wait and aborts what it queued; the
// call returns once it has, and the model may run again. CANN documents
// no abort of a captured model.
aclError abort_model(const std::shared_ptr<Model> &m)
{
    if (!m->built)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "a captured model is not aborted (CANN documents it so)");
    if (aclError err = check_model_context(*m))
        return err;
    // The run under way, if any: runs start one at a time (run_mu).
    const uint64_t run = m->runs_started.load(std::memory_order_acquire);
    uint64_t before = m->aborted_run.load(std::memory_order_acquire);
    while (before < run && !m->aborted_run.compare_exchange_weak(before, run, std::memory_order_acq_rel)) {
    }
    // It stops within a slice of its current wait, and aborts its work.
    while (m->runs_ended.load(std::memory_order_acquire) < run)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return ACL_SUCCESS;
}

aclError Model::run_ended(uint64_t run) const
{
    if (stopping.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model was destroyed during its run");
    if (aborted_run.load(std::memory_order_acquire) >= run)
        return fail(ACL_ERROR_RT_MODEL_ABORT_NORMAL, "the model's run was aborted (aclmdlRIAbort)");
    return ACL_SUCCESS;
}

} // namespace npuipc_rt

extern "C" {

aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)
{
    return api("aclmdlRIBuildBegin", [&] {
        if (!modelRI)
            return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
        if (flag != 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag 0x%x: must be 0", flag);
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        auto m = std::make_shared<Model>(ctx->device, next_built_id.fetch_add(1), false);
        m->context = ctx->token;
        *modelRI = reinterpret_cast<aclmdlRI>(rt.add_object(m));
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag)
{
    return api("aclmdlRIBindStream", [&] {
        if (!modelRI)
            return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
        if (flag != ACL_MODEL_STREAM_FLAG_HEAD && flag != ACL_MODEL_STREAM_FLAG_DEFAULT)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "flag 0x%x: ACL_MODEL_STREAM_FLAG_HEAD or ACL_MODEL_STREAM_FLAG_DEFAULT", flag);
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        if (!(s->flags & ACL_STREAM_PERSISTENT))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the stream is not persistent (ACL_STREAM_PERSISTENT)");
        if (s->bound.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_STREAM_MODEL, "the stream is bound to a model already");
        if (!m->built)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the model was captured, not built (aclmdlRIBuildBegin)");
        // Its destroy unbinds what it finds bound once the model left the table.
        if (!rt.objects.count(m->token))
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the model was destroyed meanwhile");
        if (aclError err = refuse_if_capturing(*s))
            return err;
        if (s->stops.load(std::memory_order_acquire) || (s->flags & ACL_STREAM_FAST_LAUNCH))
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "a stream that stops on failure, or launches fast, is bound to no model (as CANN)");
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (m->context != ctx->token)
            return fail(ACL_ERROR_RT_MODEL_CONTEXT, "the model is not of the current context");
        if (s->context != ctx->token)
            return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
        std::lock_guard<std::mutex> slock(s->mu);
        std::lock_guard<std::mutex> mlock(m->mu);
        m->bound.push_back({s->token, flag == ACL_MODEL_STREAM_FLAG_HEAD, {}});
        s->bound_model = m;
        s->bound.store(true, std::memory_order_release);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream)
{
    return api("aclmdlRIEndTask", [&] {
        std::shared_ptr<Model> m;
        std::shared_ptr<Stream> s;
        if (aclError err = built_model_and_stream(modelRI, stream, m, s))
            return err;
        if (s->context != m->context)
            return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
        std::lock_guard<std::mutex> slock(s->mu);
        std::lock_guard<std::mutex> mlock(m->mu);
        if (m->end_task)
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the model has its end task already: one per model");
        for (BoundStream &b : m->bound)
            if (b.stream == s->token) {
                b.tasks.push_back({kEndTask, nullptr, [](ModelRun &run) {
                                       run.end_here();
                                       return ACL_SUCCESS;
                                   }});
                m->end_task = true;
                note_recorded(m, b);
                return ACL_SUCCESS;
            }
        return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the stream is not bound to this model");
    });
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)
{
    return api("aclmdlRIBuildEnd", [&] {
        if (!modelRI)
            return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
        if (reserve)
            return fail(ACL_ERROR_INVALID_PARAM, "reserve must be NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (!m->built)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the model was captured, not built (aclmdlRIBuildBegin)");
        if (aclError err = check_model_context(*m))
            return err;
        std::lock_guard<std::mutex> mlock(m->mu);
        if (m->bound.empty())
            return fail(ACL_ERROR_RT_STREAM_MODEL, "no stream is bound to the model");
        if (!m->end_task)
            return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model has no end task (aclmdlRIEndTask)");
        m->build_ended = true;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream)
{
    return api("aclmdlRIUnbindStream", [&] {
        std::shared_ptr<Model> m;
        std::shared_ptr<Stream> s;
        if (aclError err = built_model_and_stream(modelRI, stream, m, s))
            return err;
        {
            std::lock_guard<std::mutex> slock(s->mu);
            if (s->bound_model != m)
                return fail(ACL_ERROR_RT_STREAM_MODEL, "the stream is not bound to this model");
        }
        unbind_stream(*s);
        return ACL_SUCCESS;
    });
}

// Forgets what a bound stream recorded, so that it records its tasks
// anew (CANN's "persistent tasks": its stream must be stopped first, which
// a mock NPU's runner, holding no queue of its own, needs not).
aclError aclrtPersistentTaskClean(aclrtStream stream)
{
    return api("aclrtPersistentTaskClean", [&] {
        if (!stream)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "stream is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (!(s->flags & ACL_STREAM_PERSISTENT))
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the stream is not persistent (ACL_STREAM_PERSISTENT)");
        if (!s->bound.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the stream is bound to no model");
        uint32_t model_id = 0;
        aclError err = extend_bound_stream(stream, [&](Model &m, BoundStream &b) {
            if (!m.build_ended)
                return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the model is not built yet (aclmdlRIBuildEnd)");
            std::unique_lock<std::mutex> running(m.run_mu, std::try_to_lock);
            if (!running.owns_lock())
                return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the model is running");
            forget_task_handles(b.tasks);
            b.tasks.clear();
            recount_end_task(m);
            model_id = m.id;
            return ACL_SUCCESS;
        });
        if (err)
            return err;
        // Labels set on the stream pointed into what it recorded: they may
        // be set again where it records anew.
        std::vector<std::shared_ptr<Label>> labels;
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            for (const auto &entry : rt.objects)
                if (entry.second->kind == Kind::Label)
                    labels.push_back(std::static_pointer_cast<Label>(entry.second));
        }
        std::lock_guard<std::mutex> llock(label_mu);
        for (const auto &l : labels)
            if (l->model == model_id && l->stream == s->token) {
                l->model = 0;
                l->stream = 0;
                l->position = 0;
            }
        return ACL_SUCCESS;
    });
}

aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream)
{
    return api("aclrtActiveStream", [&] {
        if (!activeStream || !stream)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", activeStream ? "stream" : "activeStream");
        uint64_t target = 0;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (!s->bound.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_STREAM_MODEL, "stream is not bound to a model (aclmdlRIBindStream)");
        if (aclError err = bound_target(activeStream, "activeStream", target))
            return err;
        return extend_bound_stream(stream, [&](Model &, BoundStream &b) {
            b.tasks.push_back({"aclrtActiveStream", nullptr,
                               [target](ModelRun &run) { return run.activate(target); }});
            return ACL_SUCCESS;
        });
    });
}

aclError aclrtSwitchStream(void *leftValue, aclrtCondition cond, void *rightValue, aclrtCompareDataType dataType,
                           aclrtStream trueStream, aclrtStream falseStream, aclrtStream stream)
{
    return api("aclrtSwitchStream", [&] {
        if (!leftValue || !rightValue || !trueStream || !stream)
            return fail(ACL_ERROR_INVALID_PARAM, "leftValue, rightValue, trueStream and stream may not be NULL");
        if (falseStream)
            return fail(ACL_ERROR_INVALID_PARAM, "falseStream is reserved: NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        std::shared_ptr<Stream> t;
        if (aclError err = find_stream(trueStream, t))
            return err;
        if (cond < ACL_RT_EQUAL || cond > ACL_RT_LESS_OR_EQUAL)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown condition %d", static_cast<int>(cond));
        if (dataType != ACL_RT_SWITCH_INT32 && dataType != ACL_RT_SWITCH_INT64)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown data type %d", static_cast<int>(dataType));
        uint64_t target = 0;
        if (aclError err = bound_target(trueStream, "trueStream", target))
            return err;
        return extend_bound_stream(stream, [&](Model &, BoundStream &b) {
            const bool wide = dataType == ACL_RT_SWITCH_INT64;
            b.tasks.push_back({"aclrtSwitchStream", nullptr, [=](ModelRun &run) {
                                   int64_t left = 0, right = 0;
                                   if (wide) {
                                       if (aclError err = run.read(leftValue, &left, sizeof(left)))
                                           return err;
                                       if (aclError err = run.read(rightValue, &right, sizeof(right)))
                                           return err;
                                   } else {
                                       int32_t l = 0, r = 0;
                                       if (aclError err = run.read(leftValue, &l, sizeof(l)))
                                           return err;
                                       if (aclError err = run.read(rightValue, &r, sizeof(r)))
                                           return err;
                                       left = l;
                                       right = r;
                                   }
                                   if (!compare(left, cond, right))
                                       return ACL_SUCCESS; // this stream goes on
                                   run.end_here();
                                   return run.activate(target);
                               }});
            return ACL_SUCCESS;
        });
    });
}

aclError aclrtCreateLabel(aclrtLabel *label)
{
    return api("aclrtCreateLabel", [&] {
        if (!label)
            return fail(ACL_ERROR_INVALID_PARAM, "label is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (live_labels.load(std::memory_order_relaxed) >= kMaxLabels)
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "%u labels exist: the most a process may have", kMaxLabels);
        *label = reinterpret_cast<aclrtLabel>(rt.add_object(std::make_shared<Label>(ctx->device, ctx->token)));
        return ACL_SUCCESS;
    });
}

aclError aclrtDestroyLabel(aclrtLabel label)
{
    return api("aclrtDestroyLabel", [&] {
        if (!label)
            return fail(ACL_ERROR_INVALID_PARAM, "label is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        auto l = rt.find<Label>(label, Kind::Label);
        if (!l)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a label", label);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (l->context != ctx->token)
            return fail(ACL_ERROR_RT_LABEL_CONTEXT, "the label is not of the current context");
        // A list holding it keeps it: what is set stays a jump target.
        rt.objects.erase(l->token);
        return ACL_SUCCESS;
    });
}

aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList)
{
    return api("aclrtCreateLabelList", [&] {
        if (!labels || !labelList)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", labels ? "labelList" : "labels");
        if (num == 0 || num > kMaxLabels)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "num %zu: 1 to %u", num, kMaxLabels);
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::vector<std::shared_ptr<Label>> list;
        for (size_t i = 0; i < num; i++) {
            auto l = rt.find<Label>(labels[i], Kind::Label);
            if (!l)
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "labels[%zu] (%p) is not a label", i, labels[i]);
            list.push_back(std::move(l));
        }
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        std::lock_guard<std::mutex> llock(label_mu);
        for (size_t i = 0; i < num; i++)
            for (size_t j = 0; j <= i; j++)
                if (list[j]->listed || (j < i && list[j] == list[i]))
                    return fail(ACL_ERROR_RT_INTERNAL_ERROR, "labels[%zu] is in a list already", j);
        for (const auto &l : list)
            l->listed = true;
        *labelList = reinterpret_cast<aclrtLabelList>(
            rt.add_object(std::make_shared<LabelList>(ctx->device, std::move(list))));
        return ACL_SUCCESS;
    });
}

aclError aclrtDestroyLabelList(aclrtLabelList labelList)
{
    return api("aclrtDestroyLabelList", [&] {
        if (!labelList)
            return fail(ACL_ERROR_INVALID_PARAM, "labelList is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.find<LabelList>(labelList, Kind::LabelList))
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a label list", labelList);
        // Switches recorded with it keep it; its labels join no other, as CANN's.
        rt.objects.erase(reinterpret_cast<uintptr_t>(labelList));
        return ACL_SUCCESS;
    });
}

aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream)
{
    return api("aclrtSetLabel", [&] {
        if (!label || !stream)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", label ? "stream" : "label");
        std::shared_ptr<Label> l;
        if (aclError err = find_object(label, Kind::Label, "label", l))
            return err;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (s->context != l->context)
            return fail(ACL_ERROR_RT_LABEL_CONTEXT, "the label is not of the stream's context");
        return extend_bound_stream(stream, [&](Model &m, BoundStream &b) {
            std::lock_guard<std::mutex> llock(label_mu);
            if (l->model)
                return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the label is set already: once per label");
            if (!l->listed)
                return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the label is in no list: aclrtCreateLabelList first");
            l->model = m.id;
            l->stream = b.stream;
            l->position = b.tasks.size();
            return ACL_SUCCESS;
        });
    });
}

aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList, aclrtStream stream)
{
    return api("aclrtSwitchLabelByIndex", [&] {
        if (!ptr || !labelList || !stream)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr, labelList and stream may not be NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        std::shared_ptr<LabelList> list;
        if (aclError err = find_object(labelList, Kind::LabelList, "label list", list))
            return err;
        return extend_bound_stream(stream, [&](Model &, BoundStream &b) {
            b.tasks.push_back({"aclrtSwitchLabelByIndex", nullptr, [=](ModelRun &run) {
                                   uint32_t index = 0;
                                   if (aclError err = run.read(ptr, &index, sizeof(index)))
                                       return err;
                                   // As CANN: past the last, the last.
                                   if (maxValue == 0)
                                       index = 0;
                                   else if (index >= maxValue)
                                       index = maxValue - 1;
                                   if (index >= list->labels.size())
                                       return fail(ACL_ERROR_RT_MODEL_EXECUTE,
                                                   "label index %u: the list has %zu labels", index,
                                                   list->labels.size());
                                   return run.jump(*list->labels[index]);
                               }});
            return ACL_SUCCESS;
        });
    });
}

} // extern "C"
