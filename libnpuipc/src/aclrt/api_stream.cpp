// SPDX-License-Identifier: MIT
// Streams, and host callbacks on them.
//
// A callback is a point on its stream: the runtime records one of its own
// events there (PooledEvent), whose fd polls readable once the stream has
// got that far. The thread subscribed to the stream polls those fds in
// aclrtProcessReport and runs the callbacks that are due. For a BLOCK
// callback the stream then waits on its gate notify, which the runtime
// records (on its own stream) once the callback has returned.
#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "aclrt/capture.h"
#include "aclrt/runtime.h"
#include "clock.h"

using namespace npuipc;
using namespace npuipc_rt;
using namespace npuipc_clock;

namespace npuipc_rt {
using namespace npuipc;

void open_gate(const HostTask &task)
{
    if (!task.opener || submit(*task.opener, prep_record_notify(task.gate.get())))
        log_warning("a host task's gate could not be opened; its stream stays held");
}

void drop_callbacks_locked(Runtime &rt, Stream &stream)
{
    std::deque<HostTask> dropped;
    uint64_t subscriber;
    {
        std::lock_guard<std::mutex> lock(stream.mu);
        dropped.swap(stream.callbacks);
        subscriber = stream.subscriber;
        stream.subscriber = 0;
    }
    for (const HostTask &task : dropped)
        if (task.block)
            open_gate(task);
    auto sub = rt.subscribers.find(subscriber);
    if (subscriber && sub != rt.subscribers.end()) {
        uint64_t one = 1;
        (void)!::write(sub->second.wake.get(), &one, sizeof(one));
        sub->second.streams.erase(stream.token);
        if (sub->second.streams.empty() && !sub->second.runtime_thread)
            rt.subscribers.erase(sub);
    }
}

void drop_host_copies_locked(Runtime &rt, Stream &stream, uint64_t before)
{
    for (auto copy = rt.host_copies.begin(); copy != rt.host_copies.end();) {
        if (copy->second.stream.get() != &stream || copy->first >= before) {
            ++copy;
            continue;
        }
        open_gate(copy->second.point);
        copy = rt.host_copies.erase(copy);
        wake_copier_locked(rt); // it may be polling the point just closed
    }
}

aclError make_point(Runtime &rt, Stream &stream, bool gated, HostTask &task)
{
    task.reached = acquire_pooled_event(rt, stream.device);
    if (!task.reached)
        return fail(ACL_ERROR_RT_NO_EVENT_RESOURCE, "no event to mark the point on the stream");
    if (!gated)
        return ACL_SUCCESS;
    Result<ObjectHandle> h = create_object(stream.dev, ObjectType::Notify);
    if (!h.ok())
        return fail_errno(h.error(), Op::CreateNotify, "creating the gate of a host task");
    task.gate = std::move(h.value());
    std::lock_guard<std::mutex> lock(rt.mu);
    if (aclError err = rt.helper_stream(stream.device, task.opener))
        return err;
    // After a reset and a new aclrtSetDevice the index names another file,
    // where the gate's handle number would mean something else.
    if (task.opener->dev != stream.dev)
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "the stream's device was reset meanwhile");
    return ACL_SUCCESS;
}

uint32_t point_jobs(const HostTask &task, Job *jobs)
{
    jobs[0] = prep_record_event(task.reached->event.get());
    if (!task.gate)
        return 1;
    jobs[1] = prep_wait_notify(task.gate.get());
    return 2;
}

void destroy_stream_locked(Runtime &rt, uint64_t token)
{
    auto it = rt.objects.find(token);
    if (it == rt.objects.end())
        return;
    auto stream = std::static_pointer_cast<Stream>(it->second);
    stream->listed.store(false, std::memory_order_release);
    rt.objects.erase(it);
    abandon_capture_locked(rt, *stream);
    drop_callbacks_locked(rt, *stream);
    drop_host_copies_locked(rt, *stream);
    open_recorded_gates(*stream);
}

} // namespace npuipc_rt

namespace {

aclError destroy(const char *name, aclrtStream handle, bool wait)
{
    return api(name, [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        Runtime &rt = Runtime::get();
        std::shared_ptr<Stream> stream;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            stream = rt.find<Stream>(handle, Kind::Stream);
            if (!stream)
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a live stream", handle);
            // Its handle is known from aclrtCtxGetCurrentDefaultStream.
            if (stream->is_default)
                return fail(ACL_ERROR_RT_PARAM_INVALID,
                            "%p is a context's default stream, which goes with its context", handle);
            if (aclError err = refuse_if_capturing(*stream))
                return err;
        }
        if (!stream->internal)
            notify_stream_state(handle, ACL_RT_STREAM_STATE_DESTROY_PRE);
        aclError result = ACL_SUCCESS;
        if (wait)
            result = synchronize(*stream, -1);
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            destroy_stream_locked(rt, stream->token);
        }
        // The kernel stream goes with the last reference: queued jobs that
        // have not run are cancelled then. A copy into host memory already
        // under way ends before the caller may free its destination.
        wait_for_running_copy(rt);
        return result;
    });
}

// Runs the due callbacks among the heads of `streams`; returns how many ran.
int run_due(Runtime &rt, const std::vector<std::shared_ptr<Stream>> &streams,
            const std::vector<pollfd> &fds)
{
    int ran = 0;
    for (size_t i = 0; i < streams.size(); i++) {
        if (!(fds[i].revents & (POLLIN | POLLERR | POLLHUP)))
            continue;
        Stream &stream = *streams[i];
        HostTask task;
        {
            // Under Runtime::mu too: fork's handlers hold it, and the child
            // walks the queue (close_drm_fds_after_fork).
            std::lock_guard<std::mutex> lock(rt.mu);
            std::lock_guard<std::mutex> slock(stream.mu);
            if (stream.callbacks.empty() || stream.callbacks.front().reached->fd.get() != fds[i].fd)
                continue;
            task = std::move(stream.callbacks.front());
            stream.callbacks.pop_front();
        }
        // A record cancelled by an earlier failure on the stream: the
        // callback is not run, and its gate's wait was cancelled too.
        Result<int> reached = stream.dev->wait(task.reached->event.get(), 0);
        bool ok = reached.ok() && reached.value() == 0;
        if (ok) {
            OutsideApi application; // its calls meet a snapshot lock
            task.fn(task.user_data);
            ran++;
        }
        if (ok && task.block)
            open_gate(task);
        release_pooled_event(rt, stream.device, std::move(task.reached));
    }
    return ran;
}

} // namespace

namespace npuipc_rt {

aclError create_stream(aclrtStream *stream, uint32_t priority, uint32_t flags, bool internal)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    std::shared_ptr<const Device> dev;
    ObjectHandle h;
    if (aclError err = create_in_context(rt, ObjectType::Stream, Op::CreateStream, "creating a stream",
                                         ctx, dev, h))
        return err;
    auto s = std::make_shared<Stream>(ctx->device, dev, std::move(h), ctx->token);
    s->priority = priority;
    s->flags = flags;
    s->internal = internal;
    if (aclError err = apply_failure_mode(*ctx, *s))
        return err;
    *stream = reinterpret_cast<aclrtStream>(rt.add_object(std::move(s)));
    if (!internal)
        defer_stream_state(*stream, ACL_RT_STREAM_STATE_CREATE_POST);
    return ACL_SUCCESS;
}

aclError queue_host_task(Runtime &rt, const std::shared_ptr<Stream> &s, aclrtCallback fn, void *data,
                         bool block, bool host_funcs)
{
    // The kind of thread the stream's tasks go to: a callback needs a
    // thread of aclrtSubscribeReport, a host function one that runs them.
    auto check = [&]() -> aclError {
        if (!s->listed.load(std::memory_order_relaxed))
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the stream was destroyed meanwhile");
        if (aclError err = refuse_uncapturable(*s))
            return err;
        if (!s->subscriber)
            return fail(ACL_ERROR_RT_STREAM_NO_CB_REG,
                        "no thread subscribed to the stream (aclrtSubscribeReport)");
        if (rt.subscribers.at(s->subscriber).host_funcs != host_funcs)
            return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        host_funcs ? "the stream runs callbacks (aclrtSubscribeReport), not host functions"
                                   : "the stream runs host functions (aclrtLaunchHostFunc), not callbacks");
        return ACL_SUCCESS;
    };
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        std::lock_guard<std::mutex> slock(s->mu);
        if (aclError err = check())
            return err;
    }
    HostTask task;
    task.fn = fn;
    task.user_data = data;
    task.block = block;
    if (aclError err = make_point(rt, *s, task.block, task))
        return err;
    // An unsubscribe or destroy since the check above would leave the task
    // to nobody, and a blocking one holding the stream.
    std::lock_guard<std::mutex> lock(rt.mu);
    std::lock_guard<std::mutex> slock(s->mu);
    if (aclError err = check())
        return err;
    Job jobs[2];
    if (aclError err = submit(*s, jobs, point_jobs(task, jobs)))
        return err;
    s->callbacks.push_back(std::move(task));
    // The thread subscribed now, which may not be the one of the check
    // above; its eventfd is non-blocking.
    uint64_t one = 1;
    if (::write(rt.subscribers.at(s->subscriber).wake.get(), &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_warning("cannot wake the subscribed thread: errno %d", errno);
    return ACL_SUCCESS;
}

aclError process_host_tasks(Runtime &rt, uint64_t self, int32_t timeout, bool host_funcs)
{
    const int64_t deadline = npuipc_clock::deadline_ms(timeout);
    for (;;) {
        std::vector<std::shared_ptr<Stream>> streams;
        std::vector<pollfd> fds;
        UniqueFd dup_wake;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            auto sub = rt.subscribers.find(self);
            if (sub == rt.subscribers.end() || sub->second.host_funcs != host_funcs)
                return fail(ACL_ERROR_RT_THREAD_SUBSCRIBE,
                            host_funcs ? "this thread is subscribed to no stream (aclrtSubscribeHostFunc)"
                                       : "this thread is subscribed to no stream (aclrtSubscribeReport)");
            for (uint64_t token : sub->second.streams) {
                auto s = rt.find<Stream>(reinterpret_cast<void *>(token), Kind::Stream);
                if (!s)
                    continue;
                std::lock_guard<std::mutex> slock(s->mu);
                if (s->callbacks.empty())
                    continue;
                fds.push_back({s->callbacks.front().reached->fd.get(), POLLIN, 0});
                streams.push_back(std::move(s));
            }
            // dup: the subscriber entry may go while this thread polls,
            // but the runtime thread's, which stays (and polls for ever).
            int wake = sub->second.wake.get();
            if (!sub->second.runtime_thread)
                dup_wake.reset(wake = ::fcntl(wake, F_DUPFD_CLOEXEC, 0));
            fds.push_back({wake, POLLIN, 0});
        }
        int wait_ms = deadline < 0 ? -1 : static_cast<int>(std::max<int64_t>(deadline - now_ms(), 0));
        int n = ::poll(fds.data(), fds.size(), wait_ms);
        if (n < 0 && errno != EINTR)
            return fail_errno(errno, Op::Generic, "waiting for callbacks");
        if (n > 0) {
            if (fds.back().revents & POLLIN) {
                uint64_t count;
                (void)!::read(fds.back().fd, &count, sizeof(count));
            }
            fds.pop_back();
            if (run_due(rt, streams, fds) > 0)
                return ACL_SUCCESS;
        }
        if (deadline >= 0 && now_ms() >= deadline)
            return fail(ACL_ERROR_RT_REPORT_TIMEOUT, "no %s was due within %d ms",
                        host_funcs ? "host function" : "callback", timeout);
    }
}

} // namespace npuipc_rt

extern "C" {

aclError aclrtCreateStream(aclrtStream *stream)
{
    return api("aclrtCreateStream", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        return create_stream(stream, 0, 0);
    });
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    return destroy("aclrtDestroyStream", stream, true);
}

aclError aclrtDestroyStreamForce(aclrtStream stream)
{
    return destroy("aclrtDestroyStreamForce", stream, false);
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    return api("aclrtSynchronizeStream", [&] {
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (aclError err = refuse_if_capturing(*s))
            return err;
        return synchronize(*s, -1);
    });
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    return api("aclrtSynchronizeStreamWithTimeout", [&] {
        if (timeout < -1)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %d ms: -1 (forever) or >= 0", timeout);
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (aclError err = refuse_if_capturing(*s))
            return err;
        return synchronize(*s, ms_to_ns(timeout));
    });
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    return api("aclrtStreamQuery", [&] {
        if (!status)
            return fail(ACL_ERROR_INVALID_PARAM, "status is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (aclError err = refuse_if_capturing(*s))
            return err;
        if (aclError err = stopped_context_error(*s))
            return err;
        Result<int> r = s->dev->wait(s->handle.get(), 0);
        if (!r.ok() && r.error() != ETIME)
            return fail_errno(r.error(), Op::Generic, "querying the stream");
        *status = r.ok() ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
        return ACL_SUCCESS;
    });
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    return api("aclrtSubscribeReport", [&] {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        std::lock_guard<std::mutex> slock(s->mu);
        if (s->subscriber && s->subscriber != threadId)
            return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        "the stream is already subscribed by another thread, or runs host functions");
        auto sub = rt.subscribers.find(threadId);
        if (sub != rt.subscribers.end() && sub->second.host_funcs)
            return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        "the thread runs host functions (aclrtSubscribeHostFunc), not callbacks");
        if (sub == rt.subscribers.end()) {
            UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
            if (!wake)
                return fail_errno(errno, Op::Generic, "creating the callback wake-up fd");
            sub = rt.subscribers.emplace(threadId, Subscriber()).first;
            sub->second.wake = std::move(wake);
        }
        sub->second.streams.insert(s->token);
        s->subscriber = threadId;
        return ACL_SUCCESS;
    });
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    return api("aclrtUnSubscribeReport", [&] {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        {
            std::lock_guard<std::mutex> slock(s->mu);
            auto sub = rt.subscribers.find(threadId);
            if (s->subscriber != threadId || sub == rt.subscribers.end() || sub->second.host_funcs)
                return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                            "the stream is not subscribed by thread %lu for callbacks",
                            static_cast<unsigned long>(threadId));
        }
        // Callbacks nobody will run any more: BLOCK ones must not hold the
        // stream.
        drop_callbacks_locked(rt, *s);
        return ACL_SUCCESS;
    });
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream)
{
    return api("aclrtLaunchCallback", [&] {
        if (!fn)
            return fail(ACL_ERROR_INVALID_PARAM, "fn is NULL");
        if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown block type %d", blockType);
        Runtime &rt = Runtime::get();
        std::shared_ptr<Stream> s;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.resolve_stream(stream, s))
                return err;
        }
        return queue_host_task(rt, s, fn, userData, blockType == ACL_CALLBACK_BLOCK, false);
    });
}

aclError aclrtProcessReport(int32_t timeout)
{
    return api("aclrtProcessReport", [&] {
        // As CANN: -1 waits forever, any other timeout is > 0.
        if (timeout < -1 || timeout == 0)
            return fail(ACL_ERROR_INVALID_PARAM, "timeout %d ms: -1 (forever) or > 0", timeout);
        return process_host_tasks(Runtime::get(), static_cast<uint64_t>(pthread_self()), timeout, false);
    });
}

} // extern "C"
