// SPDX-License-Identifier: MIT
// Counting notifies (aclrtCntNotify*): a counter that streams set, add to,
// OR or AND into, and wait on with a comparison. The counter is a 64-bit
// word of a small buffer of the device, and every operation a value job of
// the driver (WRITE_VALUE with its update, WAIT_VALUE with its comparison
// and clear), atomic with the others; like a notify wait, a counter wait
// depends on userspace, so no fence leaves the driver behind it.
#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

struct CntNotify : Object {
    CntNotify(uint32_t dev, std::shared_ptr<const Device> d, BufferHandle b, uint32_t notify_id)
        : Object(Kind::CntNotify, dev), dev(std::move(d)), buffer(std::move(b)), id(notify_id)
    {
    }
    const std::shared_ptr<const Device> dev;
    const BufferHandle buffer; // the counter is its first word
    const uint32_t id;
};

// As CANN's checks of a counting notify: NULL, then a live one.
aclError find_cnt_notify(aclrtCntNotify handle, std::shared_ptr<CntNotify> &out)
{
    if (!handle)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "cntNotify is NULL");
    return find_object(handle, Kind::CntNotify, "counting notify", out);
}

// The stream a counter operation goes on: of the current context (as CANN)
// and of the counter's device, whose buffer the job names.
aclError stream_for(aclrtStream stream, const CntNotify &n, std::shared_ptr<Stream> &s)
{
    if (aclError err = stream_of_current_context(stream, s))
        return err;
    if (s->dev != n.dev)
        return fail(ACL_ERROR_RT_STREAM_CONTEXT, "a counting notify of device %u takes its device's streams",
                    n.device);
    return ACL_SUCCESS;
}

aclError submit_counter_job(Stream &s, const Job &job)
{
    if (aclError err = require_uapi(s, 10, "value jobs"))
        return err;
    return submit(s, job);
}

} // namespace

extern "C" {

aclError aclrtCntNotifyCreate(aclrtCntNotify *cntNotify, uint64_t flag)
{
    return api("aclrtCntNotifyCreate", [&] {
        if (flag != 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag must be 0");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (!cntNotify)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "cntNotify is NULL");
        const std::shared_ptr<const Device> &dev = rt.devices.at(ctx->device).dev;
        Result<BufferHandle> b = create_buffer(dev, 4096, PageClass::Normal);
        if (!b.ok())
            return fail_errno(b.error(), Op::CreateNotify, "making the counter");
        uint64_t token = rt.add_object(
            std::make_shared<CntNotify>(ctx->device, dev, std::move(b.value()), rt.next_notify_id++));
        *cntNotify = reinterpret_cast<aclrtCntNotify>(token);
        return ACL_SUCCESS;
    });
}

aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify)
{
    return api("aclrtCntNotifyDestroy", [&] {
        std::shared_ptr<CntNotify> n;
        if (aclError err = find_cnt_notify(cntNotify, n))
            return err;
        // Jobs already queued hold the counter's buffer in the driver.
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (!rt.objects.erase(n->token))
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the counting notify was destroyed meanwhile");
        return ACL_SUCCESS;
    });
}

aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream, aclrtCntNotifyRecordInfo *info)
{
    return api("aclrtCntNotifyRecord", [&] {
        if (!info)
            return fail(ACL_ERROR_INVALID_PARAM, "info is NULL");
        std::shared_ptr<CntNotify> n;
        if (aclError err = find_cnt_notify(cntNotify, n))
            return err;
        Job::Update update;
        switch (info->mode) {
        case ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE:
            update = Job::Update::Set;
            break;
        case ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE:
            update = Job::Update::Add;
            break;
        case ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE:
            update = Job::Update::Or;
            break;
        case ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE:
            update = Job::Update::And;
            break;
        default:
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown record mode %d", static_cast<int>(info->mode));
        }
        std::shared_ptr<Stream> s;
        if (aclError err = stream_for(stream, *n, s))
            return err;
        aclrtCntNotifyRecordInfo copy = *info;
        if (captured(*s, "aclrtCntNotifyRecord", [=](aclrtStream to) mutable {
                return aclrtCntNotifyRecord(cntNotify, to, &copy);
            }))
            return ACL_SUCCESS;
        return submit_counter_job(*s, prep_write_value(n->buffer.get(), 0, info->value, update));
    });
}

aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify, aclrtStream stream, aclrtCntNotifyWaitInfo *info)
{
    return api("aclrtCntNotifyWaitWithTimeout", [&] {
        if (!info)
            return fail(ACL_ERROR_INVALID_PARAM, "info is NULL");
        std::shared_ptr<CntNotify> n;
        if (aclError err = find_cnt_notify(cntNotify, n))
            return err;
        Job::Compare compare;
        switch (info->mode) {
        case ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE:
            compare = Job::Compare::Below;
            break;
        case ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE:
            compare = Job::Compare::Equal;
            break;
        case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE:
            compare = Job::Compare::Above;
            break;
        case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE:
            compare = Job::Compare::NotBelow;
            break;
        case ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE:
            compare = Job::Compare::AllBits;
            break;
        default:
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown wait mode %d", static_cast<int>(info->mode));
        }
        std::shared_ptr<Stream> s;
        if (aclError err = stream_for(stream, *n, s))
            return err;
        aclrtCntNotifyWaitInfo copy = *info;
        if (captured(*s, "aclrtCntNotifyWaitWithTimeout", [=](aclrtStream to) mutable {
                return aclrtCntNotifyWaitWithTimeout(cntNotify, to, &copy);
            }))
            return ACL_SUCCESS;
        // Seconds, 0 waiting for ever (CANN's documentation).
        const uint64_t timeout_ns = static_cast<uint64_t>(info->timeout) * 1000000000ULL;
        return submit_counter_job(
            *s, prep_wait_value(n->buffer.get(), 0, compare, info->value, timeout_ns, info->isClear != 0));
    });
}

aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream)
{
    return api("aclrtCntNotifyReset", [&] {
        std::shared_ptr<CntNotify> n;
        if (aclError err = find_cnt_notify(cntNotify, n))
            return err;
        std::shared_ptr<Stream> s;
        if (aclError err = stream_for(stream, *n, s))
            return err;
        if (captured(*s, "aclrtCntNotifyReset", [=](aclrtStream to) { return aclrtCntNotifyReset(cntNotify, to); }))
            return ACL_SUCCESS;
        return submit_counter_job(*s, prep_write_value(n->buffer.get(), 0, 0));
    });
}

aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t *notifyId)
{
    return api("aclrtCntNotifyGetId", [&] {
        std::shared_ptr<CntNotify> n;
        if (aclError err = find_cnt_notify(cntNotify, n))
            return err;
        if (!notifyId)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "notifyId is NULL");
        *notifyId = n->id;
        return ACL_SUCCESS;
    });
}

} // extern "C"
