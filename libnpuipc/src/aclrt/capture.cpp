// SPDX-License-Identifier: MIT
// Capture and replay of a stream's launches (aclmdlRI*, aclrt_capture(3)).
// A capture records each launch as the call that makes it again; a run of
// the model makes those calls on the stream it is given, in order, each
// checked again then: memory freed since, or an event destroyed, makes the
// run fail with that call's code, as the call itself would.
#include "aclrt/capture.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// Captures under way in the process: what check_capture_mode() looks for
// only when there is one, as every synchronous copy asks.
std::atomic<uint32_t> active_captures{0};
std::atomic<uint32_t> next_model_id{1};

aclmdlRICaptureMode &thread_mode()
{
    static thread_local aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
    return mode;
}

bool known_mode(int mode)
{
    return mode >= ACL_MODEL_RI_CAPTURE_MODE_GLOBAL && mode <= ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
}

pid_t this_thread()
{
    return ::gettid();
}

aclError find_model(aclmdlRI modelRI, std::shared_ptr<Model> &out)
{
    return find_object(modelRI, Kind::Model, "model runtime instance", out);
}

// Marks the model's capture over (once). With its lock held.
void finish_capture_locked(Model &m)
{
    if (m.capturing)
        active_captures.fetch_sub(1, std::memory_order_acq_rel);
    m.capturing = false;
}

// Ends the stream's capture into `m`; the model stays (ready) unless
// `drop`. False if another End (or the stream's end) came first.
bool end_capture(Runtime &rt, Stream &s, Model &m, bool drop)
{
    {
        std::lock_guard<std::mutex> slock(s.mu);
        if (s.capture.get() != &m)
            return false;
        s.capture.reset();
        s.capturing.store(false, std::memory_order_release);
    }
    {
        std::lock_guard<std::mutex> mlock(m.mu);
        finish_capture_locked(m);
    }
    if (drop) {
        std::lock_guard<std::mutex> lock(rt.mu);
        rt.objects.erase(m.token);
        std::lock_guard<std::mutex> mlock(m.mu);
        if (m.task_stream)
            rt.objects.erase(m.task_stream);
    }
    return true;
}

// Whether `stream` names a stream capturing a conditional task's body.
bool captures_body(aclrtStream stream)
{
    if (!stream)
        return false;
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    auto s = rt.find<Stream>(stream, Kind::Stream);
    if (!s)
        return false;
    std::lock_guard<std::mutex> slock(s->mu);
    return s->capture && s->capture->body;
}

} // namespace

namespace npuipc_rt {

Model::Model(uint32_t dev, uint32_t model_id, bool capture, bool body_model)
    : Object(Kind::Model, dev), id(model_id), built(!capture), body(body_model), capturing(capture && !body_model)
{
    if (capturing)
        active_captures.fetch_add(1, std::memory_order_acq_rel);
}

void start_body_capture(Stream &s, const std::shared_ptr<Model> &m, aclmdlRICaptureMode mode)
{
    {
        std::lock_guard<std::mutex> mlock(m->mu);
        m->capturing = true;
        m->body_captured = true;
        m->mode = mode;
        m->context = s.context;
        m->thread = this_thread();
    }
    active_captures.fetch_add(1, std::memory_order_acq_rel);
    s.capture = m;
    s.capturing.store(true, std::memory_order_release);
}

aclError refuse_body(const Model &m)
{
    if (m.body)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "the model is a conditional task's body: it runs, and goes, with its model only");
    return ACL_SUCCESS;
}

Model::~Model()
{
    finish_capture_locked(*this); // the last owner: nobody else locks it
}

void abandon_capture_locked(Runtime &rt, Stream &stream)
{
    unbind_stream(stream);
    std::shared_ptr<Model> m;
    {
        std::lock_guard<std::mutex> slock(stream.mu);
        m = std::move(stream.capture);
        stream.capturing.store(false, std::memory_order_release);
    }
    if (!m)
        return;
    {
        std::lock_guard<std::mutex> mlock(m->mu);
        finish_capture_locked(*m);
        if (m->task_stream)
            rt.objects.erase(m->task_stream);
    }
    release_conditions_locked(rt, *m);
    rt.objects.erase(m->token);
}

void forget_captures_after_fork()
{
    active_captures.store(0, std::memory_order_relaxed);
}

uint64_t next_task_serial()
{
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

LastRecordedTask &last_recorded_task()
{
    static thread_local LastRecordedTask last;
    return last;
}

bool captured(Stream &stream, const char *what, std::function<aclError(aclrtStream)> make,
              const aclmdlRITaskParams *params)
{
    if (stream.bound.load(std::memory_order_acquire) && !running_model_here() &&
        record_in_built_model(stream, what, make, params))
        return true;
    if (!stream.capturing.load(std::memory_order_acquire))
        return false;
    std::shared_ptr<Model> m;
    {
        std::lock_guard<std::mutex> slock(stream.mu);
        m = stream.capture;
    }
    if (!m)
        return false; // ended meanwhile: the launch runs
    std::lock_guard<std::mutex> mlock(m->mu);
    if (!m->capturing)
        return false;
    m->calls.push_back({what, std::move(make), nullptr, params});
    m->calls.back().seq = m->next_seq++;
    last_recorded_task() = {m, 0, m->calls.back().serial};
    return true;
}

aclError refuse_if_capturing(const Stream &stream)
{
    if (stream.capturing.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_STREAM_CAPTURED,
                    "the stream is capturing a model (aclmdlRICaptureBegin): end the capture first");
    return ACL_SUCCESS;
}

aclError refuse_uncapturable(const Stream &stream)
{
    if (records(stream))
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "npuipc cannot capture this call into a model (aclrt_capture(3) lists those it can)");
    return ACL_SUCCESS;
}

aclError check_capture_mode()
{
    const aclmdlRICaptureMode mine = thread_mode();
    if (!active_captures.load(std::memory_order_acquire) || mine == ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return ACL_SUCCESS;
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    if (rt.current_context(ctx) != ACL_SUCCESS)
        return ACL_SUCCESS; // the call reports that itself
    const pid_t self = this_thread();
    for (const auto &entry : rt.objects) {
        if (entry.second->kind != Kind::Model)
            continue;
        auto &m = static_cast<Model &>(*entry.second);
        std::lock_guard<std::mutex> mlock(m.mu);
        if (!m.capturing || m.context != ctx->token || m.mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
            continue;
        // As CANN: a thread in THREAD_LOCAL minds only its own captures; one
        // in GLOBAL every GLOBAL capture too.
        if (m.thread == self || (mine == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL &&
                                 m.mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
            return fail(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                        "a model is being captured in this context (mode %d): synchronous copies and "
                        "sets wait until it ends, or use aclmdlRICaptureThreadExchangeMode",
                        static_cast<int>(m.mode));
    }
    return ACL_SUCCESS;
}

} // namespace npuipc_rt

extern "C" {

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    return api("aclmdlRICaptureBegin", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL: the default stream cannot capture");
        if (!known_mode(mode))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown capture mode %d", static_cast<int>(mode));
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        if (s->is_default)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is a default stream, which cannot capture", stream);
        if (s->bound.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_STREAM_MODEL, "the stream is bound to a built model");
        std::lock_guard<std::mutex> slock(s->mu);
        if (s->capture)
            return fail(ACL_ERROR_RT_STREAM_CAPTURED, "the stream is capturing already");
        auto m = std::make_shared<Model>(s->device, next_model_id.fetch_add(1));
        m->mode = mode;
        m->context = s->context;
        m->thread = this_thread();
        rt.add_object(m);
        s->capture = std::move(m);
        s->capturing.store(true, std::memory_order_release);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)
{
    return api("aclmdlRICaptureGetInfo", [&] {
        if (!status && !modelRI)
            return fail(ACL_ERROR_INVALID_PARAM, "status and modelRI are both NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        std::lock_guard<std::mutex> slock(s->mu);
        if (status)
            *status = s->capture ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
        if (modelRI)
            *modelRI = s->capture ? reinterpret_cast<aclmdlRI>(s->capture->token) : nullptr;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    return api("aclmdlRICaptureEnd", [&] {
        // A body's End may leave out where to put it: the caller has it.
        if (!modelRI && !captures_body(stream))
            return fail(ACL_ERROR_INVALID_PARAM, "modelRI is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        std::shared_ptr<Model> m;
        {
            std::lock_guard<std::mutex> slock(s->mu);
            m = s->capture;
        }
        if (!m)
            return fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "the stream is not capturing");
        Runtime &rt = Runtime::get();
        // As CANN: outside RELAXED, the thread that began it ends it; another
        // thread's End drops the capture (a body's stays its model's).
        const bool wrong_thread = m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED && m->thread != this_thread();
        // A model whose bodies are not all captured goes, as in CANN.
        aclError bodies;
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            bodies = check_bodies_captured(*m);
        }
        const bool drop = (wrong_thread || bodies) && !m->body;
        if (!end_capture(rt, *s, *m, drop))
            return fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "the capture was ended meanwhile");
        if (drop)
            release_conditions(*m);
        if (m->body && (wrong_thread || bodies)) {
            // A body whose capture failed is not captured: its model's End
            // refuses, and it may be captured again.
            release_conditions(*m);
            std::lock_guard<std::mutex> mlock(m->mu);
            m->body_captured = false;
            forget_task_handles(m->calls);
            m->calls.clear();
        }
        if (wrong_thread)
            return fail(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                        "another thread began the capture; it is dropped");
        if (bodies)
            return bodies;
        if (modelRI)
            *modelRI = reinterpret_cast<aclmdlRI>(m->token);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    return api("aclmdlRICaptureThreadExchangeMode", [&] {
        if (!mode)
            return fail(ACL_ERROR_INVALID_PARAM, "mode is NULL");
        if (!known_mode(*mode))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown capture mode %d", static_cast<int>(*mode));
        std::swap(*mode, thread_mode());
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    return api("aclmdlRIExecuteAsync", [&] {
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (aclError err = refuse_if_capturing(*s))
            return err;
        if (aclError err = refuse_if_bound(*s))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        if (m->built)
            return execute_built_async(m, s);
        std::vector<CapturedCall> calls;
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            if (m->capturing)
                return fail(ACL_ERROR_RT_MODEL_CAPTURED, "the model is still being captured");
            if (aclError err = check_changes_applied(*m))
                return err;
            calls = m->calls;
        }
        if (has_conditions(calls))
            return execute_with_conditions(m, s, std::move(calls));
        // Without any lock: each call is an API call of its own.
        for (const CapturedCall &call : calls)
            if (aclError err = call.make(stream))
                return err;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout)
{
    return api("aclmdlRIExecute", [&] {
        if (timeout == 0 || timeout < -1)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %d ms: -1 (forever) or > 0", timeout);
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        if (m->built)
            return execute_built(m, timeout);
        std::lock_guard<std::mutex> mlock(m->mu);
        if (m->capturing)
            return fail(ACL_ERROR_RT_MODEL_CAPTURED, "the model is still being captured");
        // As CANN: a captured model runs only with aclmdlRIExecuteAsync.
        return fail(ACL_ERROR_RT_PARAM_INVALID, "a captured model runs with aclmdlRIExecuteAsync");
    });
}

aclError aclmdlRIAbort(aclmdlRI modelRI)
{
    return api("aclmdlRIAbort", [&] {
        if (!modelRI)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "modelRI is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        return abort_model(m);
    });
}

// Applies a captured model's task changes (aclmdlRITaskSetParams,
// aclmdlRITaskDisable, model_tasks.cpp): the disabled tasks go, and the
// model runs again.
aclError aclmdlRIUpdate(aclmdlRI modelRI)
{
    return api("aclmdlRIUpdate", [&] {
        if (!modelRI)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "modelRI is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        if (m->built)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "a built model is not updated; a captured one is");
        std::vector<CapturedCall> dropped;
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            if (m->capturing)
                return fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "the model is still being captured");
            if (m->changes == Model::Changes::Fault)
                return fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "a change of the model's tasks failed: the model "
                                                              "runs no more");
            // The tasks aclmdlRITaskDisable took are gone, and their handles.
            auto kept = std::stable_partition(m->calls.begin(), m->calls.end(),
                                              [](const CapturedCall &c) { return !c.disabled; });
            dropped.assign(std::make_move_iterator(kept), std::make_move_iterator(m->calls.end()));
            m->calls.erase(kept, m->calls.end());
            m->changes = Model::Changes::Ready;
            forget_task_handles(dropped);
        }
        return ACL_SUCCESS;
    });
}

// The model's tasks, to the log at info level, as CANN's runtime logs them.
aclError aclmdlRIDebugPrint(aclmdlRI modelRI)
{
    return api("aclmdlRIDebugPrint", [&] {
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (aclError err = check_model_context(*m))
            return err;
        std::lock_guard<std::mutex> mlock(m->mu);
        if (!m->built) {
            log_info("model %u (captured%s): %zu tasks", m->id, m->capturing ? ", capturing" : "", m->calls.size());
            for (size_t i = 0; i < m->calls.size(); i++)
                log_info("  task %zu: %s", i, m->calls[i].what);
            return ACL_SUCCESS;
        }
        log_info("model %u (built%s): %zu streams", m->id, m->build_ended ? "" : ", building", m->bound.size());
        for (const BoundStream &b : m->bound) {
            log_info("  stream %#lx%s: %zu tasks", static_cast<unsigned long>(b.stream), b.head ? " (head)" : "",
                     b.tasks.size());
            for (size_t i = 0; i < b.tasks.size(); i++)
                log_info("    task %zu: %s", i, b.tasks[i].what);
        }
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    return api("aclmdlRIDestroy", [&] {
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        std::vector<std::pair<aclrtCallback, void *>> callbacks;
        {
            // Removed first: of two destroys, the one that removes it calls
            // the callbacks.
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::lock_guard<std::mutex> mlock(m->mu);
            if (m->capturing)
                return fail(ACL_ERROR_RT_MODEL_CAPTURED, "the model is still being captured");
            if (!rt.objects.erase(m->token))
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "the model was destroyed meanwhile");
            if (m->task_stream)
                rt.objects.erase(m->task_stream);
            callbacks.swap(m->destroy_callbacks);
        }
        if (m->built) {
            m->stopping.store(true, std::memory_order_release);
            unbind_all_streams(*m);
            // A run under way ends (its next step sees the destroy) before
            // the callbacks may free what it uses.
            std::lock_guard<std::mutex> ended(m->run_mu);
        } else {
            // A run of its conditions stops at its next step, and ends
            // before the callbacks may free what it uses.
            m->stopping.store(true, std::memory_order_release);
            {
                std::lock_guard<std::mutex> ended(m->run_mu);
            }
            std::lock_guard<std::mutex> mlock(m->mu);
            forget_task_handles(m->calls);
        }
        release_conditions(*m);
        for (const auto &cb : callbacks)
            cb.first(cb.second);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func, void *userData)
{
    return api("aclmdlRIDestroyRegisterCallback", [&] {
        if (!func)
            return fail(ACL_ERROR_INVALID_PARAM, "func is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        std::lock_guard<std::mutex> mlock(m->mu);
        for (auto &cb : m->destroy_callbacks)
            if (cb.first == func) {
                cb.second = userData; // registered once; the latest data
                return ACL_SUCCESS;
            }
        m->destroy_callbacks.emplace_back(func, userData);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func)
{
    return api("aclmdlRIDestroyUnregisterCallback", [&] {
        if (!func)
            return fail(ACL_ERROR_INVALID_PARAM, "func is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        std::lock_guard<std::mutex> mlock(m->mu);
        for (auto it = m->destroy_callbacks.begin(); it != m->destroy_callbacks.end(); ++it)
            if (it->first == func) {
                m->destroy_callbacks.erase(it);
                return ACL_SUCCESS;
            }
        return fail(ACL_ERROR_RT_PARAM_INVALID, "func is not registered for this model");
    });
}

aclError aclmdlRISetName(aclmdlRI modelRI, const char *name)
{
    return api("aclmdlRISetName", [&] {
        if (!name)
            return fail(ACL_ERROR_INVALID_PARAM, "name is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        std::lock_guard<std::mutex> mlock(m->mu);
        m->name = name;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name)
{
    return api("aclmdlRIGetName", [&] {
        if (!name)
            return fail(ACL_ERROR_INVALID_PARAM, "name is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        std::lock_guard<std::mutex> mlock(m->mu);
        if (m->name.size() >= maxLen)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the name needs %zu bytes, maxLen is %u",
                        m->name.size() + 1, maxLen);
        std::memcpy(name, m->name.c_str(), m->name.size() + 1);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
    return api("aclmdlRIGetId", [&] {
        if (!modelRIId)
            return fail(ACL_ERROR_INVALID_PARAM, "modelRIId is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        *modelRIId = m->id;
        return ACL_SUCCESS;
    });
}

// A string's text inside JSON quotes.
static std::string json_escaped(const std::string &text)
{
    std::string out;
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char hex[8];
            std::snprintf(hex, sizeof(hex), "\\u%04x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

// Attaches a JSON text to the thread's last task, when a capture or a
// model's build recorded it; aclmdlRIDebugJsonPrint gives it back.
aclError aclrtCacheLastTaskExtendInfo(const char *const extendInfoPtr, const size_t infoSize)
{
    return api("aclrtCacheLastTaskExtendInfo", [&] {
        constexpr size_t kMaxInfo = 4096; // CANN keeps this much
        if (!extendInfoPtr)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "extendInfoPtr is NULL");
        if (infoSize == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "infoSize is 0");
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::shared_ptr<Context> ctx;
            if (aclError err = rt.current_context(ctx))
                return err;
        }
        const LastRecordedTask last = last_recorded_task();
        std::shared_ptr<Model> m = last.model.lock();
        if (!m)
            return fail(ACL_ERROR_RT_INTERNAL_ERROR,
                        "the thread's last task is in no model being captured or built");
        // The text up to its NUL, cut (if need be) between UTF-8 characters.
        size_t n = strnlen(extendInfoPtr, std::min(infoSize, kMaxInfo));
        if (infoSize > kMaxInfo) {
            log_warning("aclrtCacheLastTaskExtendInfo: %zu bytes kept of %zu", kMaxInfo, infoSize);
            while (n && n < infoSize && (static_cast<uint8_t>(extendInfoPtr[n]) & 0xC0) == 0x80)
                n--;
        }
        std::string info(extendInfoPtr, n);
        std::lock_guard<std::mutex> mlock(m->mu);
        std::vector<CapturedCall> *tasks = last.stream ? nullptr : &m->calls;
        for (BoundStream &b : m->bound)
            if (last.stream && b.stream == last.stream)
                tasks = &b.tasks;
        if (tasks)
            for (CapturedCall &c : *tasks)
                if (c.serial == last.serial) {
                    c.extend_info = std::move(info);
                    return ACL_SUCCESS;
                }
        return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the thread's last task is gone from its model");
    });
}

aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)
{
    return api("aclmdlRIDebugJsonPrint", [&] {
        if (!path)
            return fail(ACL_ERROR_INVALID_PARAM, "path is NULL");
        (void)flags; // what CANN adds with it is about kernels, which a mock NPU has not
        std::shared_ptr<Model> m;
        if (aclError err = find_model(modelRI, m))
            return err;
        std::string json;
        {
            std::lock_guard<std::mutex> mlock(m->mu);
            json = "{\"modelRI\": {\"id\": " + std::to_string(m->id) + ", \"name\": \"" + json_escaped(m->name);
            json += "\", \"capturing\": " + std::string(m->capturing ? "true" : "false") + ", \"tasks\": [";
            size_t seq = 0;
            auto add = [&](const CapturedCall &c, const std::string &stream) {
                json += std::string(seq ? ", " : "") + "{\"seq\": " + std::to_string(seq) + stream +
                        ", \"call\": \"" + c.what + "\"";
                if (!c.extend_info.empty())
                    json += ", \"extendInfo\": \"" + json_escaped(c.extend_info) + "\"";
                json += "}";
                seq++;
            };
            for (const CapturedCall &c : m->calls)
                add(c, "");
            // A built model's tasks, stream by stream in the order bound.
            for (size_t i = 0; i < m->bound.size(); i++)
                for (const CapturedCall &c : m->bound[i].tasks)
                    add(c, ", \"stream\": " + std::to_string(i));
            json += "]}}\n";
        }
        FILE *f = std::fopen(path, "we");
        if (!f)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "cannot write %s: %s", path, std::strerror(errno));
        const bool written = std::fwrite(json.data(), 1, json.size(), f) == json.size();
        if (std::fclose(f) != 0 || !written)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "cannot write %s", path);
        return ACL_SUCCESS;
    });
}

} // extern "C"
