// SPDX-License-Identifier: MIT
// The tasks of a model, as CANN's queries give them (aclrt_model_build(3),
// aclrt_capture(3)): aclmdlRIGetStreams lists the streams bound to a built
// model, or the one handle of a captured model's tasks;
// aclmdlRIGetTasksByStream the tasks each recorded, and a task handle
// gives the task's type and parameters; a captured model's tasks are
// changed or taken out, for its runs after aclmdlRIUpdate. A handle is a number the
// runtime issues the first time a task is listed and looks up in its own
// table, so a handle it did not issue, or of a task that is gone, is an
// error and never a crash.
#include <algorithm>
#include <map>
#include <pthread.h>

#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

struct TaskHandles {
    // Protects owners and next; taken after Model::mu.
    std::mutex mu;
    std::map<uint64_t, std::weak_ptr<Model>> owners;
    uint64_t next = 1;
};

// Never destroyed: models may go while the process exits.
TaskHandles &task_handles()
{
    static auto &handles = *new TaskHandles;
    return handles;
}

// A fork child takes the table free. Registered when the library loads,
// before the runtime's own handlers, whose prepare (Runtime::mu, taken
// before Model::mu and this lock everywhere) therefore runs first.
__attribute__((constructor)) void register_task_handle_fork_handlers()
{
    pthread_atfork([] { task_handles().mu.lock(); }, [] { task_handles().mu.unlock(); },
                   [] { task_handles().mu.unlock(); });
}

// CANN's two-call lists: no array gives the count; an array too small for
// them all is ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY.
aclError too_small(uint32_t capacity, size_t total, const char *what)
{
    return fail(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, "%u %s asked for, the model has %zu", capacity, what, total);
}

// The task a handle names, in its model (locked by `lock`).
aclError find_task(aclmdlRITask task, std::shared_ptr<Model> &m, std::unique_lock<std::mutex> &lock,
                   CapturedCall *&call)
{
    if (!task)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "task is NULL");
    const uint64_t id = reinterpret_cast<uintptr_t>(task);
    {
        TaskHandles &h = task_handles();
        std::lock_guard<std::mutex> hl(h.mu);
        auto it = h.owners.find(id);
        if (it != h.owners.end()) {
            m = it->second.lock();
            if (!m)
                h.owners.erase(it);
        }
    }
    if (!m)
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a task of a live model", task);
    lock = std::unique_lock<std::mutex>(m->mu);
    for (BoundStream &b : m->bound)
        for (CapturedCall &c : b.tasks)
            if (c.id == id) {
                call = &c;
                return ACL_SUCCESS;
            }
    for (CapturedCall &c : m->calls)
        if (c.id == id) {
            call = &c;
            return ACL_SUCCESS;
        }
    return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a task of a live model", task);
}

// A task of a captured model whose tasks may change now (CANN's order:
// the model's kind, a failed change, a capture under way): the change
// makes the model UPDATING until aclmdlRIUpdate.
aclError changeable_task(aclmdlRITask task, std::shared_ptr<Model> &m, std::unique_lock<std::mutex> &lock,
                         CapturedCall *&call)
{
    if (aclError err = find_task(task, m, lock, call))
        return err;
    if (m->built)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "a built model's tasks do not change; a captured model's do");
    if (m->changes == Model::Changes::Fault)
        return fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "a change of the model's tasks failed: the model runs no more");
    if (m->capturing)
        return fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "the model is still being captured");
    m->changes = Model::Changes::Updating;
    return ACL_SUCCESS;
}

// A change CANN refuses once it began: the model runs no more.
aclError failed_change(Model &m, const char *why)
{
    m.changes = Model::Changes::Fault;
    return fail(ACL_ERROR_RT_PARAM_INVALID, "%s; the model runs no more", why);
}

// Lists `tasks` of `m` (Model::mu held), issuing their handles.
aclError list_tasks(const std::shared_ptr<Model> &m, std::vector<CapturedCall> &tasks, aclmdlRITask *out,
                    uint32_t *numTasks)
{
    const size_t total = tasks.size();
    if (!out) {
        *numTasks = static_cast<uint32_t>(total);
        return ACL_SUCCESS;
    }
    // Handles issued for the tasks listed.
    const size_t listed = std::min<size_t>(*numTasks, total);
    {
        TaskHandles &h = task_handles();
        std::lock_guard<std::mutex> hl(h.mu);
        for (size_t i = 0; i < listed; i++) {
            CapturedCall &c = tasks[i];
            if (!c.id) {
                c.id = h.next++;
                h.owners.emplace(c.id, m);
            }
        }
    }
    for (uint32_t i = 0; i < *numTasks; i++)
        out[i] = i < listed ? reinterpret_cast<aclmdlRITask>(tasks[i].id) : nullptr;
    if (listed < total)
        return too_small(*numTasks, total, "tasks"); // the first ones listed, as CANN
    *numTasks = static_cast<uint32_t>(total);
    return ACL_SUCCESS;
}

// The captured model whose tasks `handle` names (aclmdlRIGetStreams), or
// none.
std::shared_ptr<Model> model_of_task_stream(aclrtStream handle)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    auto s = rt.find<ModelStream>(handle, Kind::ModelStream);
    return s ? s->model.lock() : nullptr;
}

} // namespace

namespace npuipc_rt {

void forget_task_handles(const std::vector<CapturedCall> &tasks)
{
    TaskHandles &h = task_handles();
    std::lock_guard<std::mutex> hl(h.mu);
    for (const CapturedCall &c : tasks)
        if (c.id)
            h.owners.erase(c.id);
}

aclError check_changes_applied(const Model &m)
{
    if (m.changes == Model::Changes::Fault)
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "a change of the model's tasks failed: the model runs no more");
    if (m.changes == Model::Changes::Updating)
        return fail(ACL_ERROR_RT_MODEL_EXECUTE, "the model's tasks changed: aclmdlRIUpdate before it runs");
    return ACL_SUCCESS;
}

} // namespace npuipc_rt

extern "C" {

aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams, uint32_t *numStreams)
{
    return api("aclmdlRIGetStreams", [&] {
        if (!numStreams)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "numStreams is NULL");
        if (!modelRI)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "modelRI is NULL");
        std::shared_ptr<Model> m;
        if (aclError err = find_object(modelRI, Kind::Model, "model runtime instance", m))
            return err;
        if (aclError err = refuse_body(*m))
            return err;
        if (!m->built) {
            // One handle names its tasks, made once.
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::lock_guard<std::mutex> mlock(m->mu);
            if (!rt.objects.count(m->token))
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "the model was destroyed meanwhile");
            if (!m->task_stream)
                m->task_stream = rt.add_object(std::make_shared<ModelStream>(m->device, m));
            if (streams && *numStreams < 1)
                return too_small(*numStreams, 1, "streams");
            if (streams)
                for (uint32_t i = 0; i < *numStreams; i++)
                    streams[i] = i ? nullptr : reinterpret_cast<aclrtStream>(m->task_stream);
            *numStreams = 1;
            return ACL_SUCCESS;
        }
        std::lock_guard<std::mutex> mlock(m->mu);
        const size_t total = m->bound.size();
        if (!streams) {
            *numStreams = static_cast<uint32_t>(total);
            return ACL_SUCCESS;
        }
        if (*numStreams < total)
            return too_small(*numStreams, total, "streams"); // the array untouched, as CANN
        for (uint32_t i = 0; i < *numStreams; i++)
            streams[i] = i < total ? reinterpret_cast<aclrtStream>(m->bound[i].stream) : nullptr;
        *numStreams = static_cast<uint32_t>(total);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks, uint32_t *numTasks)
{
    return api("aclmdlRIGetTasksByStream", [&] {
        if (!stream)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "stream is NULL: name a stream of the model");
        if (std::shared_ptr<Model> captured_model = model_of_task_stream(stream)) {
            if (!numTasks)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "numTasks is NULL");
            std::lock_guard<std::mutex> mlock(captured_model->mu);
            return list_tasks(captured_model, captured_model->calls, tasks, numTasks);
        }
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (!numTasks)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "numTasks is NULL");
        std::shared_ptr<Model> m;
        {
            std::lock_guard<std::mutex> slock(s->mu);
            m = s->bound_model;
        }
        if (!m)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the stream is bound to no model (aclmdlRIBindStream)");
        std::lock_guard<std::mutex> mlock(m->mu);
        BoundStream *b = nullptr;
        for (BoundStream &candidate : m->bound)
            if (candidate.stream == s->token)
                b = &candidate;
        if (!b)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the stream was unbound meanwhile");
        return list_tasks(m, b->tasks, tasks, numTasks);
    });
}

aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    return api("aclmdlRITaskGetType", [&] {
        if (!type)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "type is NULL");
        std::shared_ptr<Model> m;
        std::unique_lock<std::mutex> lock;
        CapturedCall *call = nullptr;
        if (aclError err = find_task(task, m, lock, call))
            return err;
        *type = call->params.type;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    return api("aclmdlRITaskGetParams", [&] {
        if (!params)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "params is NULL");
        std::shared_ptr<Model> m;
        std::unique_lock<std::mutex> lock;
        CapturedCall *call = nullptr;
        if (aclError err = find_task(task, m, lock, call))
            return err;
        if (call->params.type == ACL_MODEL_RI_TASK_DEFAULT)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%s is a task CANN reports no parameters of", call->what);
        *params = call->params;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id)
{
    return api("aclmdlRITaskGetSeqId", [&] {
        if (!task)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "task is NULL");
        if (!id)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "id is NULL");
        std::shared_ptr<Model> m;
        std::unique_lock<std::mutex> lock;
        CapturedCall *call = nullptr;
        if (aclError err = find_task(task, m, lock, call))
            return err;
        if (m->built)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "sequence ids are a captured model's tasks'");
        *id = call->seq;
        return ACL_SUCCESS;
    });
}

aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    return api("aclmdlRITaskSetParams", [&] {
        if (!task)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "task is NULL");
        if (!params)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "params is NULL");
        std::shared_ptr<Model> m;
        std::unique_lock<std::mutex> lock;
        CapturedCall *call = nullptr;
        if (aclError err = changeable_task(task, m, lock, call))
            return err;
        switch (params->type) {
        case ACL_MODEL_RI_TASK_KERNEL:
            return failed_change(*m, "the task is no kernel launch (a mock NPU runs none)");
        case ACL_MODEL_RI_TASK_VALUE_WRITE:
        case ACL_MODEL_RI_TASK_VALUE_WAIT:
            break;
        default:
            return failed_change(*m, "only value writes and waits (and kernels) are set by CANN");
        }
        if (params->taskGrp || params->opInfoPtr || params->opInfoSize)
            return failed_change(*m, "a value task has no task group or operator information");
        const bool write = params->type == ACL_MODEL_RI_TASK_VALUE_WRITE;
        void *addr = write ? params->valueWriteTaskParams.devAddr : params->valueWaitTaskParams.devAddr;
        const uint64_t value = write ? params->valueWriteTaskParams.value : params->valueWaitTaskParams.value;
        const uint32_t flag = write ? 0 : params->valueWaitTaskParams.flag;
        if (!addr)
            return failed_change(*m, "devAddr is NULL");
        if (flag > ACL_STREAM_WAIT_VALUE_NOR)
            return failed_change(*m, "the wait's flag is no ACL_STREAM_WAIT_VALUE_*");
        // The task becomes the value task (its address checked at each run,
        // as a recorded one's).
        aclmdlRITaskParams kept;
        std::memset(&kept, 0, sizeof(kept));
        kept.type = params->type;
        if (write) {
            kept.valueWriteTaskParams = {addr, value};
            call->what = "aclrtValueWrite";
            call->make = [=](aclrtStream to) { return aclrtValueWrite(addr, value, 0, to); };
        } else {
            kept.valueWaitTaskParams = {addr, value, flag};
            call->what = "aclrtValueWait";
            call->make = [=](aclrtStream to) { return aclrtValueWait(addr, value, flag, to); };
        }
        call->params = kept;
        call->cond.reset();
        call->disabled = false;
        call->extend_info.clear();
        return ACL_SUCCESS;
    });
}

aclError aclmdlRITaskDisable(aclmdlRITask task)
{
    return api("aclmdlRITaskDisable", [&] {
        if (!task)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "task is NULL");
        std::shared_ptr<Model> m;
        std::unique_lock<std::mutex> lock;
        CapturedCall *call = nullptr;
        if (aclError err = changeable_task(task, m, lock, call))
            return err;
        call->disabled = true;
        call->extend_info.clear();
        return ACL_SUCCESS;
    });
}

} // extern "C"
