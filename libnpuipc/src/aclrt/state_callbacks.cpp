// SPDX-License-Identifier: MIT
// Registries of named state callbacks. As in CANN: a name is registered
// once (again is ACL_ERROR_RT_PARAM_INVALID), a NULL callback removes the
// name (one never registered is no error), and the callbacks are called
// in the order of their names, from a copy taken under the registry's
// lock, so that a callback may register or remove callbacks.
#include "aclrt/state_callbacks.h"

#include <map>
#include <mutex>
#include <string>

#include "aclrt/runtime.h"

using namespace npuipc_rt;

namespace {

template <typename Fn> class Registry {
public:
    struct Entry {
        Fn fn;
        void *args;
    };

    aclError set(const char *name, Fn fn, void *args)
    {
        if (!name)
            return fail(ACL_ERROR_INVALID_PARAM, "regName is NULL");
        std::lock_guard<std::mutex> lock(mu_);
        if (!fn) {
            entries_.erase(name);
            return ACL_SUCCESS;
        }
        if (!entries_.emplace(name, Entry{fn, args}).second)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "a callback is already registered as \"%s\"", name);
        return ACL_SUCCESS;
    }

    std::vector<Entry> snapshot()
    {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<Entry> out;
        out.reserve(entries_.size());
        for (const auto &e : entries_)
            out.push_back(e.second);
        return out;
    }

    bool empty()
    {
        std::lock_guard<std::mutex> lock(mu_);
        return entries_.empty();
    }

private:
    // Protects entries_.
    std::mutex mu_;
    std::map<std::string, Entry> entries_;
};

// Never destroyed: a thread may still create a stream while the process
// exits.
Registry<aclrtStreamStateCallback> &stream_callbacks()
{
    static auto &r = *new Registry<aclrtStreamStateCallback>;
    return r;
}

Registry<aclrtDeviceStateCallback> &device_callbacks()
{
    static auto &r = *new Registry<aclrtDeviceStateCallback>;
    return r;
}

Registry<aclrtDeviceTaskAbortCallback> &abort_callbacks()
{
    static auto &r = *new Registry<aclrtDeviceTaskAbortCallback>;
    return r;
}

struct Deferred {
    aclrtStream stream;
    aclrtStreamState state;
};

std::vector<Deferred> &deferred()
{
    static thread_local std::vector<Deferred> queue;
    return queue;
}

} // namespace

namespace npuipc_rt {

bool stream_state_callbacks_registered()
{
    return !stream_callbacks().empty();
}

void notify_stream_state(aclrtStream stream, aclrtStreamState state)
{
    for (const auto &e : stream_callbacks().snapshot())
        e.fn(stream, state, e.args);
}

void defer_stream_state(aclrtStream stream, aclrtStreamState state)
{
    if (stream_state_callbacks_registered())
        deferred().push_back({stream, state});
}

void run_deferred_state_callbacks()
{
    // A callback's own API calls may queue more.
    while (!deferred().empty()) {
        std::vector<Deferred> now;
        now.swap(deferred());
        for (const Deferred &d : now)
            notify_stream_state(d.stream, d.state);
    }
}

void notify_streams_destroyed(const std::vector<uint64_t> &streams)
{
    for (uint64_t token : streams)
        notify_stream_state(reinterpret_cast<aclrtStream>(token), ACL_RT_STREAM_STATE_DESTROY_PRE);
}

void notify_device_state(int32_t deviceId, aclrtDeviceState state)
{
    for (const auto &e : device_callbacks().snapshot())
        e.fn(deviceId, state, e.args);
}

int32_t notify_task_abort(int32_t deviceId, aclrtDeviceTaskAbortStage stage, uint32_t timeout)
{
    for (const auto &e : abort_callbacks().snapshot())
        if (int32_t rc = e.fn(deviceId, stage, timeout, e.args))
            return rc;
    return 0;
}

} // namespace npuipc_rt

extern "C" {

aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback, void *args)
{
    return api("aclrtRegStreamStateCallback",
               [&] { return stream_callbacks().set(regName, callback, args); });
}

aclError aclrtRegDeviceStateCallback(const char *regName, aclrtDeviceStateCallback callback, void *args)
{
    return api("aclrtRegDeviceStateCallback",
               [&] { return device_callbacks().set(regName, callback, args); });
}

aclError aclrtSetDeviceTaskAbortCallback(const char *regName, aclrtDeviceTaskAbortCallback callback,
                                         void *args)
{
    return api("aclrtSetDeviceTaskAbortCallback",
               [&] { return abort_callbacks().set(regName, callback, args); });
}

} // extern "C"
