// SPDX-License-Identifier: MIT
// Streams made with a configuration (a priority, ACL_STREAM_* flags, or a
// configuration handle), and what a stream or an event tells about
// itself: its id, priority and flags, the current context's default
// stream, an event's id, how many more can be made. The codes are those
// CANN's runtime returns for the same arguments.
// Documentation/man/aclrt_stream.3.
#include <algorithm>
#include <cstdlib>
#include <cstring>

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
    uint32_t device;
    if (aclError err = Runtime::get().current_device(device, dev))
        return err;
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

constexpr uint32_t kLeastPriority = 7;
constexpr uint32_t kKnownStreamFlags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | ACL_STREAM_PERSISTENT |
                                       ACL_STREAM_HUGE | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;

// CANN's stream flags, checked as CANN checks them; the bits it does not
// know are dropped, as CANN drops them.
aclError stream_flags(uint64_t flag, uint32_t &out)
{
    out = static_cast<uint32_t>(flag) & kKnownStreamFlags;
    if ((out & ACL_STREAM_DEVICE_USE_ONLY) && out != ACL_STREAM_DEVICE_USE_ONLY)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "ACL_STREAM_DEVICE_USE_ONLY takes no other flag (flags 0x%x)",
                    out);
    return ACL_SUCCESS;
}


// CANN's attribute calls take NULL for the default stream, except for
// its priority, which is the device's.
aclError attribute_target(aclrtStream stream, aclrtStreamAttr attr, aclrtStreamAttrValue *value,
                          std::shared_ptr<Stream> &out)
{
    if (!value)
        return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
    if (!stream && attr == ACL_STREAM_ATTR_PRIORITY)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the default stream's priority cannot be asked or set");
    return stream_or_default(stream, out);
}

// A switch attribute: 0 or 1.
aclError set_switch(std::atomic<uint32_t> &to, uint32_t value, const char *what)
{
    if (value > 1)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s %u: 0 (off) or 1 (on)", what, value);
    to.store(value, std::memory_order_relaxed);
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
    return api("aclrtCreateStreamWithConfig", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        uint32_t flags = 0;
        if (aclError err = stream_flags(flag, flags))
            return err;
        // CANN stores the priority as an int32 and clamps it to 0..7.
        const int32_t p = static_cast<int32_t>(priority);
        return create_stream(stream, p < 0 ? 0 : std::min<uint32_t>(static_cast<uint32_t>(p), kLeastPriority),
                             flags);
    });
}

aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)
{
    aclrtStreamConfigHandle *handle = nullptr;
    (void)api("aclrtCreateStreamConfigHandle", [&] {
        // The application frees it with aclrtDestroyStreamConfigHandle.
        handle = static_cast<aclrtStreamConfigHandle *>(std::calloc(1, sizeof(*handle)));
        return handle ? ACL_SUCCESS : fail(ACL_ERROR_BAD_ALLOC, "out of memory");
    });
    return handle;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)
{
    return api("aclrtDestroyStreamConfigHandle", [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        std::free(handle);
        return ACL_SUCCESS;
    });
}

aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr,
                                 const void *attrValue, size_t valueSize)
{
    return api("aclrtSetStreamConfigOpt", [&] {
        if (!handle || !attrValue)
            return fail(ACL_ERROR_INVALID_PARAM, "handle and attrValue must not be NULL");
        // Each value is given by address, with its exact size.
        auto sized = [&](size_t size, const char *what) {
            return valueSize == size ? ACL_SUCCESS
                                     : fail(ACL_ERROR_INVALID_PARAM, "%s takes %zu bytes, not %zu", what,
                                            size, valueSize);
        };
        switch (attr) {
        case ACL_RT_STREAM_WORK_ADDR_PTR:
            if (aclError err = sized(sizeof(void *), "ACL_RT_STREAM_WORK_ADDR_PTR"))
                return err;
            std::memcpy(&handle->workptr, attrValue, sizeof(void *));
            return ACL_SUCCESS;
        case ACL_RT_STREAM_WORK_SIZE:
            if (aclError err = sized(sizeof(size_t), "ACL_RT_STREAM_WORK_SIZE"))
                return err;
            std::memcpy(&handle->workSize, attrValue, sizeof(size_t));
            return ACL_SUCCESS;
        case ACL_RT_STREAM_FLAG:
            if (aclError err = sized(sizeof(size_t), "ACL_RT_STREAM_FLAG"))
                return err;
            std::memcpy(&handle->flag, attrValue, sizeof(size_t));
            return ACL_SUCCESS;
        case ACL_RT_STREAM_PRIORITY: {
            if (aclError err = sized(sizeof(uint32_t), "ACL_RT_STREAM_PRIORITY"))
                return err;
            uint32_t priority = 0;
            std::memcpy(&priority, attrValue, sizeof(priority));
            if (priority > kLeastPriority)
                return fail(ACL_ERROR_INVALID_PARAM, "priority %u: 0 (greatest) to 7", priority);
            handle->priority = priority;
            return ACL_SUCCESS;
        }
        default:
            return fail(ACL_ERROR_INVALID_PARAM, "unknown stream attribute %d", static_cast<int>(attr));
        }
    });
}

aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle)
{
    return api("aclrtCreateStreamV2", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        // No handle: the defaults. As in CANN, the handle's flag is kept
        // but not used, and a work buffer is the device's business.
        uint32_t priority = handle ? handle->priority : 0;
        if (priority > kLeastPriority)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "priority %u: 0 (greatest) to 7", priority);
        return create_stream(stream, priority, 0);
    });
}

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
        *priority = s->priority.load(std::memory_order_relaxed);
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

aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue *value)
{
    return api("aclrtSetStreamAttribute", [&] {
        std::shared_ptr<Stream> s;
        if (aclError err = attribute_target(stream, stmAttrType, value, s))
            return err;
        switch (stmAttrType) {
        case ACL_STREAM_ATTR_FAILURE_MODE:
            return set_failure_mode(*s, value->failureMode);
        case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
            return set_switch(s->overflow_check, value->overflowSwitch, "overflow check");
        case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
            s->user_tag.store(value->userCustomTag, std::memory_order_relaxed);
            return ACL_SUCCESS;
        case ACL_STREAM_ATTR_CACHE_OP_INFO:
            return set_switch(s->cache_op_info, value->cacheOpInfoSwitch, "cache operation info");
        case ACL_STREAM_ATTR_PRIORITY: {
            // Clamped, as at creation.
            const int32_t p = static_cast<int32_t>(value->streamPriority);
            s->priority.store(p < 0 ? 0 : std::min<uint32_t>(static_cast<uint32_t>(p), kLeastPriority),
                              std::memory_order_relaxed);
            return ACL_SUCCESS;
        }
        }
        return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown stream attribute %d", static_cast<int>(stmAttrType));
    });
}

aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue *value)
{
    return api("aclrtGetStreamAttribute", [&] {
        std::shared_ptr<Stream> s;
        if (aclError err = attribute_target(stream, stmAttrType, value, s))
            return err;
        switch (stmAttrType) {
        case ACL_STREAM_ATTR_FAILURE_MODE:
            value->failureMode = s->failure->stop.load(std::memory_order_acquire)
                                     ? ACL_STOP_ON_FAILURE
                                     : ACL_CONTINUE_ON_FAILURE;
            return ACL_SUCCESS;
        case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
            value->overflowSwitch = s->overflow_check.load(std::memory_order_relaxed);
            return ACL_SUCCESS;
        case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
            value->userCustomTag = s->user_tag.load(std::memory_order_relaxed);
            return ACL_SUCCESS;
        case ACL_STREAM_ATTR_CACHE_OP_INFO:
            value->cacheOpInfoSwitch = s->cache_op_info.load(std::memory_order_relaxed);
            return ACL_SUCCESS;
        case ACL_STREAM_ATTR_PRIORITY:
            value->streamPriority = s->priority.load(std::memory_order_relaxed);
            return ACL_SUCCESS;
        }
        return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown stream attribute %d", static_cast<int>(stmAttrType));
    });
}

} // extern "C"
