// SPDX-License-Identifier: MIT
// Host functions: functions of the application a stream runs in its order
// on a host thread, each holding the stream's later work until it returns
// (aclrtLaunchHostFunc). A stream no thread of the application subscribed
// (aclrtSubscribeHostFunc) runs them on the runtime's own thread, made at
// the first launch. The machinery is the callbacks' (api_stream.cpp): a
// record marks the point, a notify holds the stream until the function
// returned. Documentation/man/aclrt_stream.3.
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>

#include <thread>

#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

void host_func_thread_main()
{
    Runtime &rt = Runtime::get();
    const uint64_t self = kRuntimeHostFuncThread;
    for (;;) {
        // Returns after each function it ran. Without its entry (which
        // could not be made) it ends; a failed poll pauses, not spins.
        aclError err = process_host_tasks(rt, self, -1, true);
        if (err == ACL_ERROR_RT_THREAD_SUBSCRIBE)
            return;
        if (err != ACL_SUCCESS)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// A subscriber entry of host functions for thread `id`, with its wake-up
// eventfd. With Runtime::mu held.
aclError add_host_func_subscriber(Runtime &rt, uint64_t id, bool runtime_thread)
{
    UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake)
        return fail_errno(errno, Op::Generic, "creating the host functions' wake-up fd");
    Subscriber sub;
    sub.wake = std::move(wake);
    sub.host_funcs = true;
    sub.runtime_thread = runtime_thread;
    if (!rt.subscribers.emplace(id, std::move(sub)).second)
        return fail(ACL_ERROR_RT_INTERNAL_ERROR, "thread %lu is subscribed already",
                    static_cast<unsigned long>(id));
    return ACL_SUCCESS;
}

// The runtime's host-function thread, started on first use. With
// Runtime::mu held: the thread's first look at its entry waits for it.
aclError runtime_host_func_thread(Runtime &rt, uint64_t &out)
{
    // Its entry exists exactly while it runs (a fork child has neither).
    if (!rt.subscribers.count(kRuntimeHostFuncThread)) {
        // Its entry first, under a key no pthread_t is (a thread of the
        // application that exited may have left an entry under the id the
        // new thread would get).
        if (aclError err = add_host_func_subscriber(rt, kRuntimeHostFuncThread, true))
            return err;
        if (aclError err = start_runtime_thread("the host-function thread", host_func_thread_main)) {
            rt.subscribers.erase(kRuntimeHostFuncThread);
            return err;
        }
    }
    out = kRuntimeHostFuncThread;
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    return api("aclrtLaunchHostFunc", [&] {
        Runtime &rt = Runtime::get();
        std::shared_ptr<Stream> s;
        {
            // CANN's order: the stream, fn, a current context, and the
            // stream of that context.
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.resolve_stream(stream, s))
                return err;
            if (!fn)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "fn is NULL");
            std::shared_ptr<Context> ctx;
            if (aclError err = rt.current_context(ctx))
                return err;
            if (s->context != ctx->token)
                return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
            if (captured(*s, "aclrtLaunchHostFunc",
                         [=](aclrtStream to) { return aclrtLaunchHostFunc(to, fn, args); }))
                return ACL_SUCCESS;
            std::lock_guard<std::mutex> slock(s->mu);
            if (!s->subscriber) {
                // Nobody runs this stream's tasks: the runtime's thread.
                uint64_t id = 0;
                if (aclError err = runtime_host_func_thread(rt, id))
                    return err;
                rt.subscribers.at(id).streams.insert(s->token);
                s->subscriber = id;
            }
        }
        // Always blocking, as in CANN.
        return queue_host_task(rt, s, fn, args, true, true);
    });
}

aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    return api("aclrtSubscribeHostFunc", [&] {
        if (!exeStream)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "exeStream is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(exeStream, s))
            return err;
        std::lock_guard<std::mutex> slock(s->mu);
        if (s->subscriber && s->subscriber != hostFuncThreadId)
            return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        "the stream is already subscribed by another thread (or the runtime's)");
        auto sub = rt.subscribers.find(hostFuncThreadId);
        if (sub != rt.subscribers.end() && (!sub->second.host_funcs || sub->second.runtime_thread))
            return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        "the thread runs callbacks (aclrtSubscribeReport), not host functions");
        if (sub == rt.subscribers.end()) {
            if (aclError err = add_host_func_subscriber(rt, hostFuncThreadId, false))
                return err;
            sub = rt.subscribers.find(hostFuncThreadId);
        }
        sub->second.streams.insert(s->token);
        s->subscriber = hostFuncThreadId;
        return ACL_SUCCESS;
    });
}

aclError aclrtProcessHostFunc(int32_t timeout)
{
    return api("aclrtProcessHostFunc", [&] {
        if (timeout < -1 || timeout == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %d ms: -1 (forever) or > 0", timeout);
        return process_host_tasks(Runtime::get(), static_cast<uint64_t>(pthread_self()), timeout, true);
    });
}

aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    return api("aclrtUnSubscribeHostFunc", [&] {
        if (!exeStream)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "exeStream is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(exeStream, s))
            return err;
        {
            std::lock_guard<std::mutex> slock(s->mu);
            auto sub = rt.subscribers.find(hostFuncThreadId);
            if (s->subscriber != hostFuncThreadId || sub == rt.subscribers.end() ||
                !sub->second.host_funcs || sub->second.runtime_thread)
                return fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, "the stream is not subscribed by thread %lu",
                            static_cast<unsigned long>(hostFuncThreadId));
        }
        // Functions nobody will run any more must not hold the stream.
        drop_callbacks_locked(rt, *s);
        return ACL_SUCCESS;
    });
}

} // extern "C"
