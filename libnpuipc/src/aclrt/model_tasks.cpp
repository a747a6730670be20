// SPDX-License-Identifier: MIT
// The tasks of a built model, as CANN's queries give them
// (aclrt_model_build(3)): aclmdlRIGetStreams lists the streams bound to the
// model, aclmdlRIGetTasksByStream the tasks each recorded, and a task
// handle gives the task's type and parameters. A handle is a number the
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

// The task a handle names, in its model (locked by `lock`).
aclError find_task(aclmdlRITask task, std::shared_ptr<Model> &m, std::unique_lock<std::mutex> &lock,
                   const CapturedCall *&call)
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
    for (const BoundStream &b : m->bound)
        for (const CapturedCall &c : b.tasks)
            if (c.id == id) {
                call = &c;
                return ACL_SUCCESS;
            }
    return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a task of a live model", task);
}

// CANN's two-call lists: no array gives the count; an array too small for
// them all is ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY.
aclError too_small(uint32_t capacity, size_t total, const char *what)
{
    return fail(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, "%u %s asked for, the model has %zu", capacity, what, total);
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
        if (!m->built)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "a captured model runs on the stream it is executed on and has no streams of its own");
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
        const size_t total = b->tasks.size();
        if (!tasks) {
            *numTasks = static_cast<uint32_t>(total);
            return ACL_SUCCESS;
        }
        // Handles issued for the tasks listed.
        const size_t listed = std::min<size_t>(*numTasks, total);
        {
            TaskHandles &h = task_handles();
            std::lock_guard<std::mutex> hl(h.mu);
            for (size_t i = 0; i < listed; i++) {
                CapturedCall &c = b->tasks[i];
                if (!c.id) {
                    c.id = h.next++;
                    h.owners.emplace(c.id, m);
                }
            }
        }
        for (uint32_t i = 0; i < *numTasks; i++)
            tasks[i] = i < listed ? reinterpret_cast<aclmdlRITask>(b->tasks[i].id) : nullptr;
        if (listed < total)
            return too_small(*numTasks, total, "tasks"); // the first ones listed, as CANN
        *numTasks = static_cast<uint32_t>(total);
        return ACL_SUCCESS;
    });
}

aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    return api("aclmdlRITaskGetType", [&] {
        if (!type)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "type is NULL");
        std::shared_ptr<Model> m;
        std::unique_lock<std::mutex> lock;
        const CapturedCall *call = nullptr;
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
        const CapturedCall *call = nullptr;
        if (aclError err = find_task(task, m, lock, call))
            return err;
        if (call->params.type == ACL_MODEL_RI_TASK_DEFAULT)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%s is a task CANN reports no parameters of", call->what);
        *params = call->params;
        return ACL_SUCCESS;
    });
}

} // extern "C"
