// SPDX-License-Identifier: MIT
// Conditional tasks of captured models (aclrt_capture(3)): a condition is
// a 64-bit word of device memory (aclmdlRICondHandleCreate); a capturing
// stream's aclmdlRIAddCondTask records an IF, WHILE or SWITCH on it and
// makes its bodies, empty models that aclmdlRICaptureToModelRIBegin
// captures. A run reads the word when it reaches the task, as CANN's
// device does: a model holding one runs on a runner thread, on a stream of
// its own, while the stream it was executed on waits at the call.
#include <cstring>
#include <shared_mutex>

#include "aclrt/capture.h"
#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

std::atomic<uint32_t> next_body_id{0x40000000}; // apart from captured and built models' ids

// How deep bodies may nest in one another: a bound on the runner's stack.
constexpr int kMaxDepth = 64;

aclError find_model(aclmdlRI modelRI, std::shared_ptr<Model> &out)
{
    return find_object(modelRI, Kind::Model, "model runtime instance", out);
}

// The word of a condition, as the device reads and writes it.
aclError condition_word(const CondHandle &h, uint64_t *&at)
{
    void *p = nullptr;
    if (aclError err = stable_address(*h.memory, h.word, p))
        return err;
    at = static_cast<uint64_t *>(p);
    return ACL_SUCCESS;
}

// How long a run's wait for its stream goes before it looks whether the
// model was destroyed.
constexpr int32_t kDrainSliceMs = 100;

// The most bodies one task makes (CANN sets none; a bound on what a call
// may allocate).
constexpr uint32_t kMaxBodies = 4096;

// Every condition a run of `calls` may read, bodies included.
void collect_conditions(const std::vector<CapturedCall> &calls, std::vector<std::shared_ptr<CondHandle>> &out,
                        int depth = 0)
{
    if (depth > kMaxDepth)
        return;
    for (const CapturedCall &c : calls) {
        if (!c.cond)
            continue;
        out.push_back(c.cond->handle);
        for (const std::shared_ptr<Model> &body : c.cond->bodies) {
            std::vector<CapturedCall> inner;
            {
                std::lock_guard<std::mutex> mlock(body->mu);
                inner = body->calls;
            }
            collect_conditions(inner, out, depth + 1);
        }
    }
}

// One run of a model with conditional tasks, on the runner's stream.
class CondRun {
public:
    CondRun(const Model &root, aclrtStream stream) : root_(root), stream_(stream) {}

    aclError run(const std::vector<CapturedCall> &calls, int depth = 0)
    {
        if (depth > kMaxDepth)
            return fail(ACL_ERROR_RT_MODEL_EXECUTE, "conditional bodies nest deeper than %d", kMaxDepth);
        for (const CapturedCall &c : calls) {
            if (root_.stopping.load(std::memory_order_acquire))
                return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model was destroyed during its run");
            aclError err = c.cond ? step(*c.cond, depth) : c.make(stream_);
            if (err)
                return err;
        }
        return ACL_SUCCESS;
    }

    // Everything queued has run; or the model was destroyed meanwhile, and
    // what is left of the run is aborted.
    aclError drain()
    {
        for (;;) {
            aclError err = aclrtSynchronizeStreamWithTimeout(stream_, kDrainSliceMs);
            if (err != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
                return err;
            if (root_.stopping.load(std::memory_order_acquire)) {
                aclrtStreamAbort(stream_);
                return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model was destroyed during its run");
            }
        }
    }

private:
    // The condition's value once the work before it has run.
    aclError value(const CondHandle &h, uint64_t &out)
    {
        if (aclError err = drain())
            return err;
        uint64_t *at = nullptr;
        if (aclError err = condition_word(h, at))
            return err;
        out = __atomic_load_n(at, __ATOMIC_ACQUIRE);
        return ACL_SUCCESS;
    }

    aclError body(const Model &m, int depth)
    {
        std::vector<CapturedCall> calls;
        {
            std::lock_guard<std::mutex> mlock(const_cast<Model &>(m).mu);
            calls = m.calls;
        }
        return run(calls, depth + 1);
    }

    aclError step(const CondTask &t, int depth)
    {
        uint64_t v = 0;
        if (aclError err = value(*t.handle, v))
            return err;
        switch (t.type) {
        case ACL_MODEL_RI_COND_TYPE_IF:
            if (v)
                return body(*t.bodies[0], depth);
            return t.bodies.size() > 1 ? body(*t.bodies[1], depth) : ACL_SUCCESS;
        case ACL_MODEL_RI_COND_TYPE_WHILE:
            // Read again after each pass, as the device's jump back does.
            while (v) {
                if (root_.stopping.load(std::memory_order_acquire))
                    return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model was destroyed during its run");
                if (aclError err = body(*t.bodies[0], depth))
                    return err;
                if (aclError err = value(*t.handle, v))
                    return err;
            }
            return ACL_SUCCESS;
        default: // SWITCH: a value past the bodies runs none
            return v < t.bodies.size() ? body(*t.bodies[v], depth) : ACL_SUCCESS;
        }
    }

    const Model &root_;
    const aclrtStream stream_;
};

// ASSIGN_DEFAULT: the conditions that ask for it start the run at their
// default (CANN: "at the start of each run"; the run starts when its
// stream gets there, so runs queued one after another each get theirs).
aclError assign_defaults(const std::vector<CapturedCall> &calls)
{
    std::vector<std::shared_ptr<CondHandle>> conditions;
    collect_conditions(calls, conditions);
    for (const std::shared_ptr<CondHandle> &h : conditions) {
        if (!h->assign_default)
            continue;
        uint64_t *at = nullptr;
        if (aclError err = condition_word(*h, at))
            return err;
        __atomic_store_n(at, h->default_value, __ATOMIC_RELEASE);
    }
    return ACL_SUCCESS;
}

aclError run_on_own_stream(const Model &m, const std::vector<CapturedCall> &calls)
{
    aclrtStream own = nullptr;
    if (aclError err = create_stream(&own, 0, 0, true))
        return err;
    CondRun run(m, own);
    aclError err = assign_defaults(calls);
    if (!err)
        err = run.run(calls);
    aclError drained = err ? ACL_SUCCESS : run.drain();
    if (err)
        aclrtStreamAbort(own); // what the failed run queued goes
    aclrtDestroyStreamForce(own);
    return err ? err : drained;
}

bool known_type(int type)
{
    return type >= ACL_MODEL_RI_COND_TYPE_IF && type <= ACL_MODEL_RI_COND_TYPE_SWITCH;
}

// CANN's bodies per type: IF one or two (then, else), WHILE one, SWITCH
// one or more.
bool body_count_fits(aclmdlRICondTaskType type, uint32_t size)
{
    switch (type) {
    case ACL_MODEL_RI_COND_TYPE_IF:
        return size == 1 || size == 2;
    case ACL_MODEL_RI_COND_TYPE_WHILE:
        return size == 1;
    default:
        return size > 0;
    }
}

} // namespace

namespace npuipc_rt {

bool has_conditions(const std::vector<CapturedCall> &calls)
{
    for (const CapturedCall &c : calls)
        if (c.cond)
            return true;
    return false;
}

aclError check_bodies_captured(const Model &m)
{
    for (const std::shared_ptr<CondHandle> &h : m.cond_handles)
        for (const std::shared_ptr<Model> &body : h->bodies) {
            std::lock_guard<std::mutex> block(body->mu);
            if (!body->body_captured || body->capturing)
                return fail(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
                            "a body of a conditional task is %s: its capture must end first; the model is dropped",
                            body->capturing ? "still being captured" : "not captured yet");
        }
    return ACL_SUCCESS;
}

// Takes the conditions of `m` and of its bodies, at every depth, out of
// the table (Runtime::mu held); their handles into `out`.
void unlist_conditions_locked(Runtime &rt, Model &m, std::vector<std::shared_ptr<CondHandle>> &out, int depth = 0)
{
    std::vector<std::shared_ptr<CondHandle>> handles;
    {
        std::lock_guard<std::mutex> mlock(m.mu);
        handles.swap(m.cond_handles);
    }
    for (const std::shared_ptr<CondHandle> &h : handles) {
        rt.objects.erase(h->token);
        for (const std::shared_ptr<Model> &body : h->bodies) {
            rt.objects.erase(body->token);
            body->stopping.store(true, std::memory_order_release);
            if (depth < kMaxDepth)
                unlist_conditions_locked(rt, *body, out, depth + 1);
        }
        out.push_back(h);
    }
}

void release_conditions_locked(Runtime &rt, Model &m)
{
    std::vector<std::shared_ptr<CondHandle>> handles;
    unlist_conditions_locked(rt, m, handles);
}

void release_conditions(Model &m)
{
    Runtime &rt = Runtime::get();
    std::vector<std::shared_ptr<CondHandle>> handles;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        unlist_conditions_locked(rt, m, handles);
    }
    // Each word, unless the application freed its address already (a run
    // still reading one reads the memory it holds).
    for (const std::shared_ptr<CondHandle> &h : handles) {
        bool ours;
        {
            std::shared_lock<std::shared_mutex> lock(rt.mem_mu);
            auto it = rt.allocations.find(reinterpret_cast<uintptr_t>(h->word));
            ours = it != rt.allocations.end() && it->second == h->memory;
        }
        if (ours)
            aclrtFree(h->word);
    }
}

} // namespace npuipc_rt

namespace npuipc_rt {

aclError execute_with_conditions(const std::shared_ptr<Model> &m, const std::shared_ptr<Stream> &s,
                                 std::vector<CapturedCall> calls)
{
    return run_behind_point(s, "npuipc-cond", [m, calls = std::move(calls)] {
        // One run at a time; a destroy waits for it.
        std::lock_guard<std::mutex> one_run(m->run_mu);
        if (m->stopping.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model was destroyed before its run");
        return run_on_own_stream(*m, calls);
    });
}

} // namespace npuipc_rt

extern "C" {

aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue, aclmdlRICondHandleFlag flag,
                                  aclmdlRICondHandle *handle)
{
    return api("aclmdlRICondHandleCreate", [&] {
        if (!modelRI)
            return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (static_cast<uint32_t>(flag) > ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag %d is neither 0 nor ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT",
                        static_cast<int>(flag));
        if (m->built)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "conditions are a captured model's, not a built one's");
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            if (!m->capturing)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "the model is not being captured: a condition is made "
                                                        "during its capture");
        }
        if (aclError err = check_model_context(*m))
            return err;
        auto h = std::make_shared<CondHandle>(m->device, defaultLaunchValue,
                                              flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
        h->owner = m;
        if (aclError err = malloc_device(&h->word, sizeof(uint64_t), ACL_MEM_MALLOC_HUGE_FIRST))
            return err;
        uint64_t *at = nullptr;
        void *p = nullptr;
        aclError err = device_range(h->word, sizeof(uint64_t), m->device, "the condition's word", h->memory, p);
        if (!err)
            err = condition_word(*h, at);
        if (err) {
            aclrtFree(h->word);
            return err;
        }
        __atomic_store_n(at, 0, __ATOMIC_RELEASE); // zero, as CANN's: the default comes at a run
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::lock_guard<std::mutex> mlock(m->mu);
            if (!m->capturing || !rt.objects.count(m->token)) {
                aclrtFree(h->word);
                return fail(ACL_ERROR_RT_PARAM_INVALID, "the model's capture ended meanwhile");
            }
            rt.add_object(h);
            m->cond_handles.push_back(h);
        }
        *handle = reinterpret_cast<aclmdlRICondHandle>(h->token);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr)
{
    return api("aclmdlRICondHandleGetCondPtr", [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        if (!ptr)
            return fail(ACL_ERROR_INVALID_PARAM, "ptr is NULL");
        std::shared_ptr<CondHandle> h;
        if (aclError err = find_object(handle, Kind::CondHandle, "condition handle", h))
            return err;
        *ptr = static_cast<uint64_t *>(h->word);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags)
{
    return api("aclmdlRIAddCondTask", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL: name the capturing stream");
        std::shared_ptr<CondHandle> h;
        if (params.handle)
            if (aclError err = find_object(params.handle, Kind::CondHandle, "condition handle", h))
                return err;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (!known_type(params.type))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "type %d is no ACL_MODEL_RI_COND_TYPE_*",
                        static_cast<int>(params.type));
        if (flags)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flags must be 0");
        if (!h)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "params.handle is NULL");
        if (!params.modelRIArray)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "params.modelRIArray is NULL: it receives the bodies");
        std::shared_ptr<Model> m = h->owner.lock();
        if (!m)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the condition's model is gone");
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            if (h->used)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "the condition has its task already");
        }
        if (aclError err = stream_of_current_context(stream, s))
            return err;
        std::shared_ptr<Model> capturing;
        {
            std::lock_guard<std::mutex> slock(s->mu);
            capturing = s->capture;
        }
        if (!capturing)
            return fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "the stream is not capturing");
        if (capturing != m)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the condition is another model's than the stream captures");
        if (!body_count_fits(params.type, params.size) || params.size > kMaxBodies)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%u bodies: IF takes 1 or 2, WHILE 1, SWITCH 1 to %u",
                        params.size, kMaxBodies);
        auto task = std::make_shared<CondTask>();
        task->type = params.type;
        task->handle = h;
        for (uint32_t i = 0; i < params.size; i++) {
            auto body = std::make_shared<Model>(m->device, next_body_id.fetch_add(1), true, true);
            body->context = m->context;
            task->bodies.push_back(std::move(body));
        }
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::lock_guard<std::mutex> mlock(m->mu);
        if (!m->capturing || h->used)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the capture ended, or the condition got its task, meanwhile");
        for (const std::shared_ptr<Model> &body : task->bodies)
            rt.add_object(body);
        h->used = true;
        h->bodies = task->bodies;
        CapturedCall call("aclmdlRIAddCondTask", nullptr, nullptr);
        call.cond = task;
        call.seq = m->next_seq++;
        m->calls.push_back(std::move(call));
        last_recorded_task() = {m, 0, m->calls.back().serial};
        for (uint32_t i = 0; i < params.size; i++)
            params.modelRIArray[i] = reinterpret_cast<aclmdlRI>(task->bodies[i]->token);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI, aclmdlRICaptureMode mode)
{
    return api("aclmdlRICaptureToModelRIBegin", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL: the default stream cannot capture");
        if (!modelRI)
            return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        if (mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown capture mode %d", static_cast<int>(mode));
        if (!m->body)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "the model is no conditional task's body (aclmdlRIAddCondTask makes those)");
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (s->context != ctx->token)
            return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
        if (s->bound.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_STREAM_MODEL, "the stream is bound to a built model");
        if (s->is_default)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "a default stream does not capture");
        if (!rt.objects.count(m->token))
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the body's model was destroyed meanwhile");
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            if (m->body_captured)
                return fail(ACL_ERROR_RT_MODEL_CAPTURED, "the body was captured already: a body is captured once");
        }
        std::lock_guard<std::mutex> slock(s->mu);
        if (s->capture)
            return fail(ACL_ERROR_RT_STREAM_CAPTURED, "the stream is capturing already");
        start_body_capture(*s, m, mode);
        return ACL_SUCCESS;
    });
}

} // extern "C"
