// SPDX-License-Identifier: MIT
// What a stream or an event tells about itself: its id, priority and
// flags, the current context's default stream, an event's id. The codes
// are those CANN's runtime returns for the same arguments.
// Documentation/man/aclrt_stream.3.
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// The stream a handle names, NULL being the current context's default
// stream. With `need_context`, as CANN's priority and flag queries, a
// thread without a current context is refused whatever the handle.
aclError stream_of(aclrtStream handle, bool need_context, std::shared_ptr<Stream> &out)
{
    if (need_context) {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
    }
    return find_stream(handle, out);
}

// How many more streams, events or notifies this process may create on
// the current context's device now: the driver's count of free handles in
// the device file they all share.
aclError objects_free(uint32_t *count)
{
    std::shared_ptr<const Device> dev;
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        dev = rt.devices.at(ctx->device).dev;
    }
    Result<DeviceInfo> info = dev->info();
    if (!info.ok())
        return fail_errno(info.error(), Op::Generic, "querying the device");
    if (!info.value().reports_objects_free())
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "the loaded npuipc.ko (uapi %u) does not count free handles: uapi 8 does",
                    info.value().uapi_version);
    *count = info.value().objects_free;
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtGetStreamAvailableNum(uint32_t *streamCount)
{
    return api("aclrtGetStreamAvailableNum", [&] {
        if (!streamCount)
            return fail(ACL_ERROR_INVALID_PARAM, "streamCount is NULL");
        return objects_free(streamCount);
    });
}

aclError aclrtGetEventAvailNum(uint32_t *eventCount)
{
    return api("aclrtGetEventAvailNum", [&] {
        if (!eventCount)
            return fail(ACL_ERROR_INVALID_PARAM, "eventCount is NULL");
        return objects_free(eventCount);
    });
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
    return api("aclrtStreamGetId", [&] {
        if (!streamId)
            return fail(ACL_ERROR_INVALID_PARAM, "streamId is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of(stream, false, s))
            return err;
        // The driver's handle of the stream in its device's file: unique
        // among the live streams, events and notifies of that device here.
        *streamId = static_cast<int32_t>(s->handle.get());
        return ACL_SUCCESS;
    });
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)
{
    return api("aclrtStreamGetPriority", [&] {
        if (!priority)
            return fail(ACL_ERROR_INVALID_PARAM, "priority is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of(stream, true, s))
            return err;
        *priority = s->priority;
        return ACL_SUCCESS;
    });
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)
{
    return api("aclrtStreamGetFlags", [&] {
        if (!flags)
            return fail(ACL_ERROR_INVALID_PARAM, "flags is NULL");
        std::shared_ptr<Stream> s;
        if (aclError err = stream_of(stream, true, s))
            return err;
        *flags = s->flags;
        return ACL_SUCCESS;
    });
}

aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)
{
    return api("aclrtCtxGetCurrentDefaultStream", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        // The handle of the stream NULL names: made on first use, as when
        // work is queued on it.
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Stream> s;
        if (aclError err = rt.resolve_stream(nullptr, s))
            return err;
        *stream = reinterpret_cast<aclrtStream>(s->token);
        return ACL_SUCCESS;
    });
}

aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId)
{
    return api("aclrtGetEventId", [&] {
        if (!eventId)
            return fail(ACL_ERROR_INVALID_PARAM, "eventId is NULL");
        std::shared_ptr<Event> ev;
        if (aclError err = find_object(event, Kind::Event, "event", ev))
            return err;
        if (ev->flags & ACL_EVENT_IPC)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "an IPC event has no event id");
        // The driver's handle of the event in its home device's file.
        *eventId = ev->home.get();
        return ACL_SUCCESS;
    });
}

} // extern "C"
