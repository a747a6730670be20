// SPDX-License-Identifier: MIT
// aclInit/aclFinalize, devices, contexts, peer access and memory info.
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unistd.h>

#include "aclrt/config.h"
#include "aclrt/init_callbacks.h"
#include "clock.h"
#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

aclError release_all(Runtime &rt)
{
    while (!rt.devices.empty())
        rt.release_device(rt.devices.begin()->first);
    return ACL_SUCCESS;
}

// Serialises the changes of devices' state that callbacks hear of (set and
// reset), from the decision through the callbacks to the change, so that
// PRE and POST pair up; recursive, as a callback may set or reset a device
// itself. Never destroyed: a thread may reset while the process exits.
std::recursive_mutex &device_state_mu()
{
    static auto &mu = *new std::recursive_mutex;
    return mu;
}

// The streams `pred` picks, for their DESTROY_PRE; none when no stream
// state callback would hear of them. With Runtime::mu held.
template <typename Pred> std::vector<uint64_t> streams_to_report(Runtime &rt, Pred pred)
{
    std::vector<uint64_t> out;
    if (!stream_state_callbacks_registered())
        return out;
    for (const auto &entry : rt.objects)
        if (entry.second->kind == Kind::Stream && !static_cast<const Stream &>(*entry.second).internal &&
            pred(static_cast<const Stream &>(*entry.second)))
            out.push_back(entry.first);
    return out;
}

bool initialized()
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    return rt.init_references > 0;
}

// The last reference of aclInit goes: its components' finalize callbacks
// run (a failure leaves everything as it was, for another try), then every
// device this process used is released. With init_mu() held.
aclError finalize_now()
{
    if (aclError err = run_finalize_callbacks())
        return err;
    end_snapshot_lock(); // a lock left behind would hold the threads for ever
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    release_all(rt);
    rt.default_device = -1;
    rt.init_references = 0;
    return ACL_SUCCESS;
}

// Outside the API's scope: copies under way end and names the process
// published are withdrawn.
void settle_after_finalize()
{
    wait_for_running_copy(Runtime::get());
    Runtime::get().revoke_pending();
}

} // namespace

extern "C" {

aclError aclInit(const char *configPath)
{
    return api("aclInit", [&] {
        std::lock_guard<std::recursive_mutex> serial(init_mu());
        Runtime &rt = Runtime::get();
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (rt.forked)
                rt.discard_after_fork();
            if (rt.init_references > 0) {
                // CANN counts it: each needs its aclFinalizeReference.
                rt.init_references++;
                return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit was already called");
            }
        }
        const bool config_given = configPath && *configPath;
        std::string text;
        Config config;
        if (config_given) {
            std::ifstream in(configPath);
            if (!in)
                return fail(ACL_ERROR_INVALID_FILE, "cannot read the configuration file %s",
                            configPath);
            std::stringstream contents;
            contents << in.rdbuf();
            text = contents.str();
            switch (parse_config(text, config)) {
            case ConfigError::None:
                break;
            case ConfigError::Malformed:
                return fail(ACL_ERROR_PARSE_FILE, "%s is not valid JSON", configPath);
            case ConfigError::BadDefaultDevice:
                return fail(ACL_ERROR_RT_INVALID_DEVICEID,
                            "%s: defaultDevice.default_device is not a device id", configPath);
            }
        }
        int default_device = -1;
        if (config.default_device >= 0) {
            std::lock_guard<std::mutex> lock(rt.mu);
            uint32_t index;
            if (aclError err = rt.check_device_id(config.default_device, index))
                return err;
            default_device = static_cast<int>(index);
        }
        // The default device first, as CANN: callbacks may use it.
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            rt.default_device = default_device;
        }
        if (aclError err = run_init_callbacks(text, config_given)) {
            std::lock_guard<std::mutex> lock(rt.mu);
            rt.default_device = -1;
            return err;
        }
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            rt.init_references = 1;
        }
        set_init_config(text);
        return ACL_SUCCESS;
    },
               true);
}

aclError aclFinalize(void)
{
    aclError err = api("aclFinalize", [] {
        std::lock_guard<std::recursive_mutex> serial(init_mu());
        if (!initialized())
            return fail(ACL_ERROR_REPEAT_FINALIZE, "aclInit was not called, or aclFinalize was");
        return finalize_now();
    });
    settle_after_finalize();
    return err;
}

aclError aclFinalizeReference(uint64_t *refCount)
{
    bool finalized = false;
    aclError err = api("aclFinalizeReference", [&] {
        std::lock_guard<std::recursive_mutex> serial(init_mu());
        Runtime &rt = Runtime::get();
        uint64_t references;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            references = rt.init_references;
            if (references > 1)
                rt.init_references--;
        }
        if (references == 0) {
            if (refCount)
                *refCount = 0;
            return fail(ACL_ERROR_REPEAT_FINALIZE, "every aclInit was finalized already");
        }
        if (references > 1) {
            if (refCount)
                *refCount = references - 1;
            return ACL_SUCCESS;
        }
        aclError rc = finalize_now();
        finalized = rc == ACL_SUCCESS;
        if (refCount)
            *refCount = finalized ? 0 : 1;
        return rc;
    });
    if (finalized)
        settle_after_finalize();
    return err;
}

const char *aclGetRecentErrMsg(void)
{
    return recent_error_message();
}

// Neither records an error of its own: a bad level would otherwise replace
// the one asked for.
aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
    if (level != ACL_RT_THREAD_LEVEL)
        return ACL_ERROR_INVALID_PARAM;
    return last_error(false);
}

aclError aclrtGetLastError(aclrtLastErrLevel level)
{
    if (level != ACL_RT_THREAD_LEVEL)
        return ACL_ERROR_INVALID_PARAM;
    return last_error(true);
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    return api("aclrtGetRunMode", [&] {
        if (!runMode)
            return fail(ACL_ERROR_INVALID_PARAM, "runMode is NULL");
        *runMode = ACL_HOST; // the application runs on the host, as on every npuipc machine
        return ACL_SUCCESS;
    });
}

aclError aclrtSetDevice(int32_t deviceId)
{
    return api("aclrtSetDevice", [&] {
        std::lock_guard<std::recursive_mutex> state(device_state_mu());
        Runtime &rt = Runtime::get();
        uint32_t index;
        bool first;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(deviceId, index))
                return err;
            first = rt.devices.find(index) == rt.devices.end();
        }
        // Device state callbacks run with no lock held: they may call the API.
        if (first)
            notify_device_state(deviceId, ACL_RT_DEVICE_STATE_SET_PRE);
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.set_device(index))
                return err;
        }
        notify_device_state(deviceId, ACL_RT_DEVICE_STATE_SET_POST);
        return ACL_SUCCESS;
    });
}

static aclError reset_device(const char *name, int32_t deviceId, bool force)
{
    std::lock_guard<std::recursive_mutex> state(device_state_mu());
    bool released = false;
    aclError err = api(name, [&] {
        Runtime &rt = Runtime::get();
        uint32_t index;
        auto not_set = [&] {
            return fail(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                        "device %d is not set in this process (or was already released)", deviceId);
        };
        bool releases;
        std::vector<uint64_t> streams;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.check_device_id(deviceId, index))
                return err;
            auto it = rt.devices.find(index);
            // Opened only for VMM physical memory: not set, nothing to reset.
            if (it == rt.devices.end() || it->second.refs == 0)
                return not_set();
            releases = force || it->second.refs == 1;
            if (releases)
                streams = streams_to_report(rt, [&](const Stream &s) { return s.device == index; });
        }
        if (releases) {
            notify_device_state(deviceId, ACL_RT_DEVICE_STATE_RESET_PRE);
            notify_streams_destroyed(streams);
        }
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.devices.find(index);
        if (it == rt.devices.end() || it->second.refs == 0) // by another thread meanwhile
            return not_set();
        if (force || --it->second.refs == 0) {
            rt.release_device(index);
            released = true;
        }
        return ACL_SUCCESS;
    });
    wait_for_running_copy(Runtime::get()); // its stream's copies were dropped
    Runtime::get().revoke_pending();
    if (released)
        notify_device_state(deviceId, ACL_RT_DEVICE_STATE_RESET_POST);
    return err;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    return reset_device("aclrtResetDevice", deviceId, false);
}

aclError aclrtResetDeviceForce(int32_t deviceId)
{
    return reset_device("aclrtResetDeviceForce", deviceId, true);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    return api("aclrtGetDevice", [&] {
        if (!deviceId)
            return fail(ACL_ERROR_INVALID_PARAM, "deviceId is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        int32_t id = rt.logical_id(ctx->device);
        if (id < 0)
            return fail(ACL_ERROR_RT_INVALID_DEVICEID,
                        "the current device is no longer among the visible ones");
        *deviceId = id;
        return ACL_SUCCESS;
    });
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    return api("aclrtGetDeviceCount", [&] {
        if (!count)
            return fail(ACL_ERROR_INVALID_PARAM, "count is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (aclError err = rt.refresh_device_count())
            return err;
        *count = rt.device_count;
        return ACL_SUCCESS;
    });
}

// Waits for every stream of the current context's device, until
// `deadline_ms` (npuipc_clock::now_ms; -1: none): the first error found,
// or ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when the time ran out.
static aclError synchronize_device(int64_t deadline_ms)
{
    Runtime &rt = Runtime::get();
    std::vector<std::shared_ptr<Stream>> streams;
    std::shared_ptr<FailureState> ctx_failure;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        ctx_failure = ctx->failure;
        for (auto &entry : rt.objects)
            if (entry.second->kind == Kind::Stream && entry.second->device == ctx->device)
                streams.push_back(std::static_pointer_cast<Stream>(entry.second));
    }
    // As CANN: not while a stream of the context captures.
    for (const auto &s : streams)
        if (s->failure == ctx_failure)
            if (aclError err = refuse_if_capturing(*s))
                return err;
    aclError first = ACL_SUCCESS;
    for (auto &stream : streams) {
        int64_t left_ns = -1;
        if (deadline_ms >= 0)
            left_ns = std::max<int64_t>(0, deadline_ms - npuipc_clock::now_ms()) * 1000000;
        // Another context's streams are waited for, as the device's work;
        // their failures are that context's to report.
        if (stream->failure != ctx_failure) {
            Result<int> r = stream->dev->wait(stream->handle.get(), left_ns);
            if (!r.ok() && r.error() == ETIME)
                return fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "the device did not finish in time");
            // A halted stream's cancelled records will never open the
            // gates of the streams waiting for them, whose turn may come.
            if (r.ok() && r.value() != 0 && stream->stops.load(std::memory_order_acquire))
                open_recorded_gates(*stream);
            continue;
        }
        aclError err = synchronize(*stream, left_ns);
        if (err == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
            return err;
        if (err && !first)
            first = err;
    }
    return first;
}

aclError aclrtSynchronizeDevice(void)
{
    return api("aclrtSynchronizeDevice", [] { return synchronize_device(-1); });
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
    return api("aclrtSynchronizeDeviceWithTimeout", [&] {
        // As CANN: milliseconds, -1 forever, and 0 is no timeout at all.
        if (timeout < -1 || timeout == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %d ms: -1 (forever) or > 0", timeout);
        return synchronize_device(timeout < 0 ? -1 : npuipc_clock::now_ms() + timeout);
    });
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    return api("aclrtCreateContext", [&] {
        if (!context)
            return fail(ACL_ERROR_INVALID_PARAM, "context is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        uint32_t index;
        if (aclError err = rt.check_device_id(deviceId, index))
            return err;
        // A reference on its device, as aclrtSetDevice takes.
        if (aclError err = rt.set_device(index))
            return err;
        uint64_t token = rt.add_object(std::make_shared<Context>(index, false));
        thread_context() = token;
        *context = reinterpret_cast<aclrtContext>(token);
        return ACL_SUCCESS;
    });
}

aclError aclrtDestroyContext(aclrtContext context)
{
    aclError err = api("aclrtDestroyContext", [&] {
        if (!context)
            return fail(ACL_ERROR_INVALID_PARAM, "context is NULL");
        Runtime &rt = Runtime::get();
        const uint64_t token = reinterpret_cast<uintptr_t>(context);
        std::vector<uint64_t> going;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            auto ctx = rt.find<Context>(context, Kind::Context);
            if (!ctx || ctx->is_default)
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a context made by aclrtCreateContext",
                            context);
            going = streams_to_report(rt, [&](const Stream &s) { return s.context == token; });
        }
        notify_streams_destroyed(going);
        std::lock_guard<std::mutex> lock(rt.mu);
        auto ctx = rt.find<Context>(context, Kind::Context);
        if (!ctx || ctx->is_default)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a context made by aclrtCreateContext",
                        context);
        std::vector<uint64_t> streams;
        for (auto &entry : rt.objects)
            if (entry.second->kind == Kind::Stream &&
                static_cast<Stream &>(*entry.second).context == ctx->token)
                streams.push_back(entry.first);
        for (uint64_t token : streams)
            destroy_stream_locked(rt, token);
        rt.objects.erase(ctx->token);
        if (thread_context() == ctx->token)
            thread_context() = 0;
        // The device reference aclrtCreateContext took stays, as in CANN:
        // aclrtResetDevice releases it.
        return ACL_SUCCESS;
    });
    wait_for_running_copy(Runtime::get()); // its streams' copies were dropped
    return err;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    return api("aclrtSetCurrentContext", [&] {
        if (!context)
            return fail(ACL_ERROR_INVALID_PARAM, "context is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        auto ctx = rt.find<Context>(context, Kind::Context);
        if (!ctx)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a live context", context);
        thread_context() = ctx->token;
        return ACL_SUCCESS;
    });
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    return api("aclrtGetCurrentContext", [&] {
        if (!context)
            return fail(ACL_ERROR_INVALID_PARAM, "context is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        *context = reinterpret_cast<aclrtContext>(ctx->token);
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)
{
    return api("aclrtDeviceCanAccessPeer", [&] {
        if (!canAccessPeer)
            return fail(ACL_ERROR_INVALID_PARAM, "canAccessPeer is NULL");
        if (deviceId == peerDeviceId)
            return fail(ACL_ERROR_INVALID_PARAM, "a device and its peer must differ");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (aclError err = rt.check_device_id(deviceId))
            return err;
        if (aclError err = rt.check_device_id(peerDeviceId))
            return err;
        // Every npuipc device can import every other's memory.
        *canAccessPeer = 1;
        return ACL_SUCCESS;
    });
}

static aclError peer_access(const char *name, int32_t peerDeviceId, bool enable)
{
    return api(name, [&] {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        uint32_t peer;
        if (aclError err = rt.check_device_id(peerDeviceId, peer))
            return err;
        if (peer == ctx->device)
            return fail(ACL_ERROR_INVALID_PARAM, "device %d is the current device", peerDeviceId);
        auto &peers = rt.devices.at(ctx->device).peers;
        if (enable)
            peers.insert(peer);
        else
            peers.erase(peer);
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    if (flags != 0) {
        ApiScope scope("aclrtDeviceEnablePeerAccess");
        return fail(ACL_ERROR_FEATURE_UNSUPPORTED, "flags must be 0, not 0x%x", flags);
    }
    return peer_access("aclrtDeviceEnablePeerAccess", peerDeviceId, true);
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)
{
    return peer_access("aclrtDeviceDisablePeerAccess", peerDeviceId, false);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
    return api("aclrtGetMemInfo", [&] {
        if (!free || !total)
            return fail(ACL_ERROR_INVALID_PARAM, "free and total must not be NULL");
        if (static_cast<unsigned>(attr) > ACL_MEM_P2P_HUGE1G)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown memory attribute %d", attr);
        std::shared_ptr<const Device> dev;
        uint32_t device;
        if (aclError err = Runtime::get().current_device(device, dev))
            return err;
        Result<DeviceInfo> info = dev->info();
        if (!info.ok())
            return fail_errno(info.error(), Op::Generic, "querying the device");
        // One pool of device memory serves every attribute.
        *free = info.value().mem_free;
        *total = info.value().mem_total;
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
    return api("aclrtDeviceGetBareTgid", [&] {
        if (!pid)
            return fail(ACL_ERROR_INVALID_PARAM, "pid is NULL");
        // Asked of the driver: getpid() is the PID in the caller's own
        // namespace, not the one an exporter in another namespace sees.
        Runtime &rt = Runtime::get();
        std::shared_ptr<const Device> dev;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            if (!rt.devices.empty())
                dev = rt.devices.begin()->second.dev;
        }
        if (!dev) {
            Result<Device> opened = Device::open(0);
            if (!opened.ok())
                return fail(ACL_ERROR_RT_NO_DEVICE, "no npuipc device to ask");
            dev = std::make_shared<const Device>(std::move(opened.value()));
        }
        Result<DeviceInfo> info = dev->info();
        if (!info.ok())
            return fail_errno(info.error(), Op::Generic, "querying the device");
        if (!info.value().reports_caller_tgid())
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "npuipc.ko is older than uapi 4");
        *pid = static_cast<int32_t>(info.value().caller_tgid);
        return ACL_SUCCESS;
    });
}

} // extern "C"
