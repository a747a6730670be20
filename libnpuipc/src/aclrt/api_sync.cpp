// SPDX-License-Identifier: MIT
// Events and notifies: the driver's EVENT and NOTIFY objects, recorded and
// waited on by stream jobs. An object used from a stream of another device
// is imported into that device's file once (handle_on).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "aclrt/capture.h"
#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"
#include "clock.h"

using namespace npuipc;
using namespace npuipc_rt;
using npuipc_clock::ms_to_ns;

namespace {

constexpr uint32_t kEventFlags = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS |
                                 ACL_EVENT_TIME_LINE | ACL_EVENT_DEVICE_USE_ONLY |
                                 ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

aclError create_event(aclrtEvent *event, uint32_t flags, bool timing, bool ex)
{
    if (!event)
        return fail(ACL_ERROR_INVALID_PARAM, "event is NULL");
    if (flags & ~kEventFlags)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown event flags 0x%x", flags & ~kEventFlags);
    if ((flags & ACL_EVENT_IPC) && flags != ACL_EVENT_IPC)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "ACL_EVENT_IPC cannot be combined with other flags");
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::shared_ptr<Context> ctx;
    std::shared_ptr<const Device> dev;
    ObjectHandle h;
    if (aclError err = create_in_context(rt, ObjectType::Event, Op::CreateEvent, "creating an event",
                                         ctx, dev, h))
        return err;
    bool times = !(flags & ACL_EVENT_IPC) && (timing || (flags & ACL_EVENT_TIME_LINE));
    auto ev = std::make_shared<Event>(ctx->device, dev, std::move(h), flags, times);
    ev->ex = ex;
    uint64_t token = rt.add_object(std::move(ev));
    *event = reinterpret_cast<aclrtEvent>(token);
    return ACL_SUCCESS;
}

// Forgets the event's wait points whose waits are over (passed, failed or
// cancelled); whether any is still to come. With latch_mu held.
bool forget_waits_over(Event &ev)
{
    bool pending = false;
    auto keep = ev.wait_points.begin();
    for (auto it = ev.wait_points.begin(); it != ev.wait_points.end(); ++it) {
        Result<int> r = it->dev->wait(it->marker.get(), 0);
        if (!r.ok() && r.error() == ETIME) {
            pending = true;
            if (keep != it)
                *keep = std::move(*it);
            ++keep;
        }
    }
    ev.wait_points.erase(keep, ev.wait_points.end());
    return pending;
}

aclError destroy(const void *handle, Kind kind, const char *what)
{
    if (!handle)
        return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", what);
    Runtime &rt = Runtime::get();
    std::vector<std::string> keys;
    std::vector<LatchGate> gates; // of an event: no record can come now
    std::vector<WaitPoint> points; // destroyed without Runtime::mu
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.objects.find(reinterpret_cast<uintptr_t>(handle));
        if (it == rt.objects.end() || it->second->kind != kind)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a live %s", handle, what);
        // Jobs already queued hold the kernel object until they are done;
        // its keys die now (processes that imported it keep theirs).
        auto &shared = static_cast<SharedObject &>(*it->second);
        {
            std::lock_guard<std::mutex> olock(shared.mu);
            keys = take_keys_of_dead(shared.export_keys, shared.dead);
        }
        if (kind == Kind::Event) {
            auto &ev = static_cast<Event &>(shared);
            std::lock_guard<std::mutex> llock(ev.latch_mu);
            ev.destroyed = true;
            gates.swap(ev.gates);
            points.swap(ev.wait_points);
        }
        rt.objects.erase(it);
    }
    revoke_keys(keys);
    open_latch_gates(gates);
    return ACL_SUCCESS;
}

// What CANN's runtime refuses an event by its flags, for the host calls
// that name it: DEVICE_USE_ONLY events are recorded, waited on and reset by
// the device alone (RT_PARAM_INVALID); marker events (TIME_LINE and/or
// CAPTURE_STREAM_PROGRESS only) have nothing to wait for or reset, and
// EXTERNAL events cannot be synchronized, queried or timed
// (FEATURE_NOT_SUPPORT).
enum class EventUse { Record, WaitOrReset, Observe };

aclError check_event_use(const Event &ev, EventUse use, const char *what)
{
    if (use != EventUse::Observe && (ev.flags & ACL_EVENT_DEVICE_USE_ONLY))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "a DEVICE_USE_ONLY event cannot be %s by the host", what);
    const uint32_t waitable = ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;
    if (use == EventUse::WaitOrReset && ev.flags && !(ev.flags & waitable))
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "an event made with only TIME_LINE or CAPTURE_STREAM_PROGRESS cannot be %s", what);
    if (use == EventUse::Observe && ev.flags == ACL_EVENT_EXTERNAL)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "an EXTERNAL event cannot be %s", what);
    return ACL_SUCCESS;
}

// Submits the job `prep` makes of the event's or notify's handle on the
// stream's device.
template <typename Prep> aclError submit_on(Stream &stream, SharedObject &obj, Prep prep)
{
    uint32_t handle;
    if (aclError err = handle_on(obj, stream, handle))
        return err;
    return submit(stream, prep(handle));
}

// The event and the stream of a record (`use` Record) or a wait
// (WaitOrReset), checked in CANN's order.
aclError event_on_stream(aclrtEvent event, aclrtStream stream, EventUse use, std::shared_ptr<Event> &ev,
                         std::shared_ptr<Stream> &s)
{
    if (aclError err = find_object(event, Kind::Event, "event", ev))
        return err;
    if (aclError err = find_stream(stream, s))
        return err;
    return check_event_use(*ev, use, use == EventUse::Record ? "recorded" : "waited on");
}

// Fixes the event's record or wait flag at the first call that asks, as
// CANN does (even when the call then fails); a call with the other one
// is ACL_ERROR_RT_PARAM_INVALID.
aclError latch_flag(std::atomic<int> &latch, int flag, const char *what)
{
    int first = -1;
    if (latch.compare_exchange_strong(first, flag) || first == flag)
        return ACL_SUCCESS;
    return fail(ACL_ERROR_RT_PARAM_INVALID, "the event was first %s with flag %d, not %d", what, first, flag);
}

// EXTERNAL records and waits make an event visible outside a captured
// model (aclmdlRICaptureBegin): CANN takes them only for events of
// aclrtCreateEventExWithFlag(ACL_EVENT_SYNC), on a capturing stream.
aclError external_event_use(Event &ev, const Stream &s, std::atomic<int> &latch, int flag, const char *what)
{
    if (!ev.ex || ev.flags != ACL_EVENT_SYNC)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "EXTERNAL takes events of aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) only");
    if (aclError err = latch_flag(latch, flag, what))
        return err;
    if (!s.capturing.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "EXTERNAL needs a stream capturing a model");
    return ACL_SUCCESS;
}

// A capture takes the events CANN's does: those of aclrtCreateEventExWithFlag.
aclError capturable_event(const Event &ev)
{
    if (!ev.ex)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "a capture takes events of aclrtCreateEventExWithFlag only, as CANN's");
    return ACL_SUCCESS;
}

// The events a stream that records into a model takes: a capture those
// of aclrtCreateEventExWithFlag, a built model's stream (as CANN) only
// those of aclrtCreateEventWithFlag with a flag.
static aclError recordable_event(const Stream &s, const Event &ev)
{
    if (s.capturing.load(std::memory_order_acquire))
        return capturable_event(ev);
    if (ev.ex || ev.flags == 0)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "a stream bound to a model takes events of aclrtCreateEventWithFlag with a flag only, "
                    "as CANN's");
    return ACL_SUCCESS;
}

// A reset reached by its stream (latch_mu held): the flag clears, unless
// the latest record is still to come, reached after the reset. (The
// driver knows the latest record only: an older record still to come
// behind a newer one complete reads as reached.)
void reach_reset(Event &ev)
{
    if (ev.dev->wait(ev.home.get(), 0).ok())
        ev.set = false;
}

void forget_reset(Event &ev, uint64_t id)
{
    ev.resets.erase(std::remove_if(ev.resets.begin(), ev.resets.end(),
                                   [id](const Event::PendingReset &r) { return r.id == id; }),
                    ev.resets.end());
}

// Whether a wait queued now on `s` comes behind a reset of the event on
// the same stream with no record asked for since: the flag will be clear
// when the wait is reached. With latch_mu held.
bool reset_ahead(const Event &ev, const Stream &s)
{
    return std::any_of(ev.resets.begin(), ev.resets.end(), [&](const Event::PendingReset &r) {
        return r.stream == s.token && r.records == ev.records;
    });
}

// When the event's latest record completed, on the driver's clock.
aclError record_time(Event &ev, uint64_t &ns)
{
    Result<uint64_t> t = ev.dev->record_time(ev.home.get());
    // EDEADLK: the record waits behind a wait without timeout, so it is
    // pending; the driver keeps such a fence from leaving as a sync_file.
    if (!t.ok() && (t.error() == EDEADLK || t.error() == EBUSY))
        return fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "the event's record has not completed");
    if (!t.ok())
        return fail_errno(t.error(), Op::Generic, "reading the event's record time");
    ns = t.value();
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtCreateEvent(aclrtEvent *event)
{
    return api("aclrtCreateEvent", [&] { return create_event(event, 0, true, false); });
}

// The rules of CANN's runtime for each create call (its ApiErrorDecorator):
// at least one flag; EXTERNAL and DEVICE_USE_ONLY alone; IPC, alone, only
// through aclrtCreateEventExWithFlag, which takes neither EXTERNAL nor
// DEVICE_USE_ONLY.
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    return api("aclrtCreateEventWithFlag", [&] {
        if (event && flag == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag 0: name at least one ACL_EVENT_* flag");
        if (event && (flag & ACL_EVENT_IPC))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "IPC events come from aclrtCreateEventExWithFlag");
        for (uint32_t alone : {ACL_EVENT_EXTERNAL, ACL_EVENT_DEVICE_USE_ONLY})
            if (event && (flag & alone) && flag != alone)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "flag 0x%x cannot be combined with others", alone);
        return create_event(event, flag, false, false);
    });
}

aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    return api("aclrtCreateEventExWithFlag", [&] {
        if (event && flag == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag 0: name at least one ACL_EVENT_* flag");
        if (event && (flag & (ACL_EVENT_EXTERNAL | ACL_EVENT_DEVICE_USE_ONLY)))
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "ACL_EVENT_EXTERNAL and ACL_EVENT_DEVICE_USE_ONLY events come from "
                        "aclrtCreateEventWithFlag");
        return create_event(event, flag, false, true);
    });
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    return api("aclrtDestroyEvent", [&] { return destroy(event, Kind::Event, "event"); });
}

// `flag`: what the event's record flag must be (EXTERNAL: a captured
// external record, made at a run of its model).
static aclError record_event(aclrtEvent event, aclrtStream stream, int flag = ACL_EVENT_RECORD_DEFAULT)
{
    std::shared_ptr<Event> ev;
    std::shared_ptr<Stream> s;
    if (aclError err = event_on_stream(event, stream, EventUse::Record, ev, s))
        return err;
    if (aclError err = latch_flag(ev->record_flag, flag, "recorded"))
        return err;
    if (records(*s)) {
        if (aclError err = recordable_event(*s, *ev))
            return err;
        aclmdlRITaskParams task;
        std::memset(&task, 0, sizeof(task));
        task.type = ACL_MODEL_RI_TASK_EVENT_RECORD;
        task.eventRecordTaskParams = {event, ev->flags, static_cast<uint32_t>(flag)};
        if (captured(*s, "aclrtRecordEvent", [=](aclrtStream to) { return record_event(event, to, flag); }, &task))
            return ACL_SUCCESS;
    }
    std::lock_guard<std::mutex> latch(ev->latch_mu);
    if (ev->destroyed)
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "the event was destroyed meanwhile");
    // Waits that are over let their markers go at the event's next use.
    forget_waits_over(*ev);
    uint32_t handle;
    if (aclError err = handle_on(*ev, *s, handle))
        return err;
    if (ev->gates.empty()) {
        if (aclError err = submit(*s, prep_record_event(handle)))
            return err;
        ev->recorded = true;
        ev->set = true;
        ev->records++;
        return ACL_SUCCESS;
    }
    // The record, then the gates of the waits made while the flag was
    // clear: they open when the stream gets past the record.
    std::vector<Job> jobs(1 + ev->gates.size());
    jobs[0] = prep_record_event(handle);
    for (size_t i = 0; i < ev->gates.size(); i++) {
        if (aclError err = handle_on(*ev->gates[i].notify, *s, handle))
            return err;
        jobs[i + 1] = prep_record_notify(handle);
    }
    size_t done = 0;
    aclError err = ACL_SUCCESS;
    while (done < jobs.size()) {
        uint32_t n = static_cast<uint32_t>(std::min<size_t>(jobs.size() - done, kMaxJobsPerSubmit));
        if ((err = submit(*s, &jobs[done], n)) != ACL_SUCCESS)
            break;
        done += n;
    }
    if (done == 0)
        return err;
    // The record is queued (and reported as failed if a later batch
    // of gates was not: those stay for the next record).
    const size_t gated = done - 1;
    {
        std::lock_guard<std::mutex> slock(s->mu);
        std::move(ev->gates.begin(), ev->gates.begin() + gated,
                  std::back_inserter(s->recorded_gates));
        s->recorded_gate_count.store(s->recorded_gates.size(), std::memory_order_release);
    }
    ev->gates.erase(ev->gates.begin(), ev->gates.begin() + gated);
    ev->recorded = true;
    ev->set = true;
    ev->records++;
    return err;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return api("aclrtRecordEvent", [&] { return record_event(event, stream); });
}

aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag)
{
    return api("aclrtRecordEventWithFlag", [&] {
        if (!event)
            return fail(ACL_ERROR_INVALID_PARAM, "event is NULL");
        if (flag != ACL_EVENT_RECORD_DEFAULT && flag != ACL_EVENT_RECORD_EXTERNAL)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown record flag 0x%x", flag);
        if (flag == ACL_EVENT_RECORD_DEFAULT)
            return record_event(event, stream);
        std::shared_ptr<Event> ev;
        std::shared_ptr<Stream> s;
        if (aclError err = event_on_stream(event, stream, EventUse::Record, ev, s))
            return err;
        if (aclError err = external_event_use(*ev, *s, ev->record_flag, ACL_EVENT_RECORD_EXTERNAL, "recorded"))
            return err;
        return record_event(event, stream, ACL_EVENT_RECORD_EXTERNAL);
    });
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
    return api("aclrtResetEvent", [&] {
        std::shared_ptr<Event> ev;
        std::shared_ptr<Stream> s;
        if (aclError err = find_object(event, Kind::Event, "event", ev))
            return err;
        if (aclError err = find_stream(stream, s))
            return err;
        if (aclError err = check_event_use(*ev, EventUse::WaitOrReset, "reset"))
            return err;
        if (aclError err = refuse_uncapturable(*s))
            return err;
        if (ev->flags & ACL_EVENT_IPC)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "an IPC event cannot be reset");
        if (ev->ex)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "an event of aclrtCreateEventExWithFlag cannot be reset");
        if (aclError err = stopped_context_error(*s))
            return err;
        std::unique_lock<std::mutex> latch(ev->latch_mu);
        // An idle stream reaches it now.
        if (stream_idle(*s)) {
            reach_reset(*ev);
            return ACL_SUCCESS;
        }
        // Otherwise a task of the stream, run by the copier thread when the
        // stream gets there: waits on other streams asked for before then
        // still see the flag set.
        const uint64_t id = ev->next_reset++;
        ev->resets.push_back({s->token, id, ev->records});
        latch.unlock();
        HostCopy task;
        task.stream = s;
        task.resolve = [weak = std::weak_ptr<Event>(ev), id](HostCopy &t) {
            t.count = 0;
            std::shared_ptr<Event> e = weak.lock();
            if (!e)
                return ACL_SUCCESS;
            std::lock_guard<std::mutex> l(e->latch_mu);
            forget_reset(*e, id);
            if (!e->destroyed)
                reach_reset(*e);
            return ACL_SUCCESS;
        };
        aclError err = queue_copy(Runtime::get(), std::move(task));
        if (err) {
            latch.lock();
            forget_reset(*ev, id);
        }
        return err;
    });
}

// `timeout_ns` 0: no timeout, as the driver's WAIT_EVENT job takes it.
// `flag`: what the event's wait flag must be (EXTERNAL: a captured external
// wait, made at a run of its model).
static aclError stream_wait_event(aclrtStream stream, aclrtEvent event, uint64_t timeout_ns,
                                  int flag = ACL_EVENT_WAIT_DEFAULT)
{
    std::shared_ptr<Event> ev;
    std::shared_ptr<Stream> s;
    if (aclError err = event_on_stream(event, stream, EventUse::WaitOrReset, ev, s))
        return err;
    if (aclError err = latch_flag(ev->wait_flag, flag, "waited on"))
        return err;
    if (records(*s)) {
        if (aclError err = recordable_event(*s, *ev))
            return err;
        aclmdlRITaskParams task;
        std::memset(&task, 0, sizeof(task));
        task.type = ACL_MODEL_RI_TASK_EVENT_WAIT;
        task.eventWaitTaskParams = {event, ev->flags, static_cast<uint32_t>(flag)};
        if (captured(*s, "aclrtStreamWaitEvent",
                     [=](aclrtStream to) { return stream_wait_event(to, event, timeout_ns, flag); }, &task))
            return ACL_SUCCESS;
    }
    // Recorded right behind the wait, for aclrtQueryEventWaitStatus.
    Result<ObjectHandle> marker = create_object(s->dev, ObjectType::Event);
    if (!marker.ok())
        return fail_errno(marker.error(), Op::CreateEvent, "making the marker of the wait");
    std::shared_ptr<Stream> opener; // taken, without the latch, when a gate is due
    for (;;) {
        std::unique_lock<std::mutex> latch(ev->latch_mu);
        forget_waits_over(*ev);
        if (ev->destroyed)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the event was destroyed meanwhile");
        // As CANN's runtime: an event of aclrtCreateEvent must have been
        // recorded; one of aclrtCreateEventExWithFlag, never recorded, is
        // waited for no time.
        if (!ev->recorded && ev->flags == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the event has never been recorded");
        if (!ev->recorded && ev->ex)
            return ACL_SUCCESS;
        if (ev->set && !reset_ahead(*ev, *s)) {
            uint32_t h;
            if (aclError err = handle_on(*ev, *s, h))
                return err;
            const Job jobs[2] = {prep_wait_event(h, timeout_ns), prep_record_event(marker.value().get())};
            if (aclError err = submit(*s, jobs, 2))
                return err;
            ev->wait_points.push_back({s->dev, s->device, std::move(marker.value())});
            return ACL_SUCCESS;
        }
        if (!opener) {
            latch.unlock();
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            if (aclError err = rt.helper_stream(s->device, opener))
                return err;
            // After a reset and a new aclrtSetDevice the index names another file.
            if (opener->dev != s->dev)
                return fail(ACL_ERROR_RT_INVALID_HANDLE, "the stream's device was reset meanwhile");
            continue;
        }
        // The flag is clear (never recorded, or reset): the stream waits
        // for the next record, behind a gate that record opens.
        Result<ObjectHandle> h = create_object(s->dev, ObjectType::Notify);
        if (!h.ok())
            return fail_errno(h.error(), Op::CreateNotify, "making the gate of the wait");
        LatchGate gate;
        gate.notify = std::make_shared<Notify>(s->device, s->dev, std::move(h.value()), 0);
        gate.opener = std::move(opener);
        const Job jobs[2] = {prep_wait_notify(gate.notify->home.get(), timeout_ns),
                             prep_record_event(marker.value().get())};
        if (aclError err = submit(*s, jobs, 2))
            return err;
        ev->gates.push_back(std::move(gate));
        ev->wait_points.push_back({s->dev, s->device, std::move(marker.value())});
        return ACL_SUCCESS;
    }
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return api("aclrtStreamWaitEvent", [&] {
        // aclrtSetOpWaitTimeout's limit, if any, on a wait without its own.
        const uint64_t s = Runtime::get().op_wait_timeout_s.load(std::memory_order_relaxed);
        return stream_wait_event(stream, event, s * 1000000000ULL);
    });
}

// The timeout is in seconds, 0 meaning none, as CANN's documentation and
// runtime have it (its header's comment says milliseconds).
aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout)
{
    return api("aclrtStreamWaitEventWithTimeout", [&] {
        if (timeout < 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %d s: 0 (none) or more seconds", timeout);
        return stream_wait_event(stream, event, static_cast<uint64_t>(timeout) * 1000000000ULL);
    });
}

aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t timeout, uint32_t flag)
{
    return api("aclrtStreamWaitEventWithFlag", [&] {
        if (!event)
            return fail(ACL_ERROR_INVALID_PARAM, "event is NULL");
        if (flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL)
            return fail(ACL_ERROR_INVALID_PARAM, "unknown wait flag 0x%x", flag);
        if (flag == ACL_EVENT_WAIT_EXTERNAL && timeout != 0)
            return fail(ACL_ERROR_INVALID_PARAM, "an EXTERNAL wait takes no timeout (%u s)", timeout);
        // DEFAULT: aclrtStreamWaitEventWithTimeout, the timeout in seconds.
        if (flag == ACL_EVENT_WAIT_DEFAULT)
            return stream_wait_event(stream, event, static_cast<uint64_t>(timeout) * 1000000000ULL);
        std::shared_ptr<Event> ev;
        std::shared_ptr<Stream> s;
        if (aclError err = event_on_stream(event, stream, EventUse::WaitOrReset, ev, s))
            return err;
        if (aclError err = external_event_use(*ev, *s, ev->wait_flag, ACL_EVENT_WAIT_EXTERNAL, "waited on"))
            return err;
        return stream_wait_event(stream, event, 0, ACL_EVENT_WAIT_EXTERNAL);
    });
}

static aclError synchronize_event(aclrtEvent event, int32_t timeout)
{
    // As CANN's runtime: 0 is refused too (its header's "check at once"
    // is not what it does).
    if (timeout < -1 || timeout == 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "timeout %d ms: -1 (forever) or > 0", timeout);
    std::shared_ptr<Event> ev;
    if (aclError err = find_object(event, Kind::Event, "event", ev))
        return err;
    if (aclError err = check_event_use(*ev, EventUse::Observe, "synchronized"))
        return err;
    if (!ev->recorded)
        return ACL_SUCCESS;
    Result<int> r = ev->dev->wait(ev->home.get(), ms_to_ns(timeout));
    if (!r.ok()) {
        if (r.error() == ETIME)
            return fail(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "the event did not complete in time");
        return fail_errno(r.error(), Op::Generic, "waiting for the event");
    }
    return r.value() ? task_error(r.value()) : ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    return api("aclrtSynchronizeEvent", [&] { return synchronize_event(event, -1); });
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
    return api("aclrtSynchronizeEventWithTimeout", [&] { return synchronize_event(event, timeout); });
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    return api("aclrtQueryEventStatus", [&] {
        if (!status)
            return fail(ACL_ERROR_INVALID_PARAM, "status is NULL");
        std::shared_ptr<Event> ev;
        if (aclError err = find_object(event, Kind::Event, "event", ev))
            return err;
        if (aclError err = check_event_use(*ev, EventUse::Observe, "queried"))
            return err;
        if (!ev->recorded) {
            // CANN's "new mode" events read as complete until recorded.
            *status = ev->ex ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
            return ACL_SUCCESS;
        }
        *status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
        Result<int> r = ev->dev->wait(ev->home.get(), 0);
        if (!r.ok() && r.error() != ETIME)
            return fail_errno(r.error(), Op::Generic, "querying the event");
        if (r.ok())
            *status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
        return ACL_SUCCESS;
    });
}

// What aclrtQueryEvent and aclrtQueryEventWaitStatus check, as CANN's
// runtime: both arguments, then the event, which is none of
// aclrtCreateEventExWithFlag and neither EXTERNAL nor IPC.
static aclError plain_event_queried(aclrtEvent event, const void *status, const char *call,
                                    std::shared_ptr<Event> &ev)
{
    if (!event || !status)
        return fail(ACL_ERROR_INVALID_PARAM, "event and status must not be NULL");
    if (aclError err = find_object(event, Kind::Event, "event", ev))
        return err;
    if (ev->ex)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "%s does not take events of aclrtCreateEventExWithFlag, as in CANN", call);
    if (ev->flags == ACL_EVENT_EXTERNAL || (ev->flags & ACL_EVENT_IPC))
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s does not take EXTERNAL or IPC events, as in CANN", call);
    return ACL_SUCCESS;
}

// Deprecated by aclrtQueryEventStatus, and not quite the same, as in CANN:
// an event never recorded reads as complete, and events of
// aclrtCreateEventExWithFlag, IPC events and EXTERNAL ones are refused.
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
    return api("aclrtQueryEvent", [&] {
        std::shared_ptr<Event> ev;
        if (aclError err = plain_event_queried(event, status, "aclrtQueryEvent", ev))
            return err;
        if (!ev->recorded) {
            *status = ACL_EVENT_STATUS_COMPLETE;
            return ACL_SUCCESS;
        }
        Result<int> r = ev->dev->wait(ev->home.get(), 0);
        if (!r.ok() && r.error() != ETIME)
            return fail_errno(r.error(), Op::Generic, "querying the event");
        *status = r.ok() ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
        return ACL_SUCCESS;
    });
}

// Whether every stream wait queued for the event is over, as CANN's
// runtime tells it; the events CANN refuses, refused.
aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status)
{
    return api("aclrtQueryEventWaitStatus", [&] {
        std::shared_ptr<Event> ev;
        if (aclError err = plain_event_queried(event, status, "aclrtQueryEventWaitStatus", ev))
            return err;
        bool pending;
        {
            std::lock_guard<std::mutex> latch(ev->latch_mu);
            pending = forget_waits_over(*ev);
        }
        *status = pending ? ACL_EVENT_WAIT_STATUS_NOT_READY : ACL_EVENT_WAIT_STATUS_COMPLETE;
        return ACL_SUCCESS;
    });
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    return api("aclrtEventElapsedTime", [&] {
        if (!ms)
            return fail(ACL_ERROR_INVALID_PARAM, "ms is NULL");
        std::shared_ptr<Event> start, end;
        if (aclError err = find_object(startEvent, Kind::Event, "event", start))
            return err;
        if (aclError err = find_object(endEvent, Kind::Event, "event", end))
            return err;
        if (aclError err = check_event_use(*start, EventUse::Observe, "timed"))
            return err;
        if (aclError err = check_event_use(*end, EventUse::Observe, "timed"))
            return err;
        if (!start->timing || !end->timing)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "timing needs events made by aclrtCreateEvent or with ACL_EVENT_TIME_LINE");
        if (!start->recorded || !end->recorded)
            return fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "both events must have been recorded");
        uint64_t t0, t1;
        if (aclError err = record_time(*start, t0))
            return err;
        if (aclError err = record_time(*end, t1))
            return err;
        *ms = static_cast<float>((static_cast<double>(t1) - static_cast<double>(t0)) / 1e6);
        return ACL_SUCCESS;
    });
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)
{
    return api("aclrtEventGetTimestamp", [&] {
        if (!timestamp)
            return fail(ACL_ERROR_INVALID_PARAM, "timestamp is NULL");
        std::shared_ptr<Event> ev;
        if (aclError err = find_object(event, Kind::Event, "event", ev))
            return err;
        if (ev->flags == ACL_EVENT_EXTERNAL || (ev->flags & ACL_EVENT_IPC))
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "EXTERNAL and IPC events have no timestamp");
        if (!ev->recorded)
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "the event has never been recorded");
        if (!ev->timing)
            return fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                        "timestamps need events made by aclrtCreateEvent or with ACL_EVENT_TIME_LINE");
        uint64_t ns = 0;
        if (aclError err = record_time(*ev, ns))
            return err == ACL_ERROR_RT_EVENT_NOT_COMPLETE
                       ? fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "the event's record has not completed")
                       : err;
        // Microseconds of the driver's clock (CLOCK_MONOTONIC: since boot),
        // as CANN's are of the device's since its boot.
        *timestamp = ns / 1000;
        return ACL_SUCCESS;
    });
}

aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)
{
    return api("aclrtCreateNotify", [&] {
        if (!notify)
            return fail(ACL_ERROR_INVALID_PARAM, "notify is NULL");
        if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown notify flag 0x%llx",
                        static_cast<unsigned long long>(flag));
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        std::shared_ptr<Context> ctx;
        std::shared_ptr<const Device> dev;
        ObjectHandle h;
        if (aclError err = create_in_context(rt, ObjectType::Notify, Op::CreateNotify,
                                             "creating a notify", ctx, dev, h))
            return err;
        uint64_t token = rt.add_object(
            std::make_shared<Notify>(ctx->device, dev, std::move(h), rt.next_notify_id++));
        *notify = reinterpret_cast<aclrtNotify>(token);
        return ACL_SUCCESS;
    });
}

aclError aclrtDestroyNotify(aclrtNotify notify)
{
    return api("aclrtDestroyNotify", [&] { return destroy(notify, Kind::Notify, "notify"); });
}

aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)
{
    return api("aclrtRecordNotify", [&] {
        std::shared_ptr<Notify> n;
        std::shared_ptr<Stream> s;
        if (aclError err = find_object(notify, Kind::Notify, "notify", n))
            return err;
        if (aclError err = find_stream(stream, s))
            return err;
        if (captured(*s, "aclrtRecordNotify", [=](aclrtStream to) { return aclrtRecordNotify(notify, to); }))
            return ACL_SUCCESS;
        return submit_on(*s, *n, prep_record_notify);
    });
}

aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout)
{
    return api("aclrtWaitAndResetNotify", [&] {
        std::shared_ptr<Notify> n;
        std::shared_ptr<Stream> s;
        if (aclError err = find_object(notify, Kind::Notify, "notify", n))
            return err;
        if (aclError err = find_stream(stream, s))
            return err;
        if (n->imported)
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that created a notify can wait on it; importers record");
        if (s->device != n->device)
            return fail(ACL_ERROR_RT_STREAM_CONTEXT,
                        "a notify of device %u can only be waited on by its device's streams",
                        n->device);
        // Seconds, 0 for ever (CANN's documentation and runtime); as CANN,
        // UINT32_MAX waits as long as aclrtSetOpWaitTimeout allows.
        const uint32_t seconds = timeout != UINT32_MAX
                                     ? timeout
                                     : Runtime::get().op_wait_timeout_s.load(std::memory_order_relaxed);
        const uint64_t timeout_ns = static_cast<uint64_t>(seconds) * 1000000000ULL;
        if (captured(*s, "aclrtWaitAndResetNotify",
                     [=](aclrtStream to) { return aclrtWaitAndResetNotify(notify, to, seconds); }))
            return ACL_SUCCESS;
        return submit_on(*s, *n, [&](uint32_t h) { return prep_wait_notify(h, timeout_ns); });
    });
}

aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId)
{
    return api("aclrtGetNotifyId", [&] {
        if (!notifyId)
            return fail(ACL_ERROR_INVALID_PARAM, "notifyId is NULL");
        std::shared_ptr<Notify> n;
        if (aclError err = find_object(notify, Kind::Notify, "notify", n))
            return err;
        *notifyId = n->id;
        return ACL_SUCCESS;
    });
}

aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num)
{
    return api("aclrtNotifyBatchReset", [&] {
        if (!notifies)
            return fail(ACL_ERROR_INVALID_PARAM, "notifies is NULL");
        if (num == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "num is 0");
        std::vector<std::shared_ptr<Notify>> list;
        for (size_t i = 0; i < num; i++) {
            std::shared_ptr<Notify> n;
            if (aclError err = find_object(notifies[i], Kind::Notify, "notify", n))
                return err;
            list.push_back(std::move(n));
        }
        Runtime &rt = Runtime::get();
        // Each on its device's runtime stream; then wait for those streams.
        std::map<uint32_t, std::shared_ptr<Stream>> used;
        for (auto &n : list) {
            std::shared_ptr<Stream> helper;
            {
                std::lock_guard<std::mutex> lock(rt.mu);
                if (aclError err = rt.helper_stream(n->device, helper))
                    return err;
            }
            if (aclError err = submit(*helper, prep_reset_notify(n->home.get())))
                return err;
            used[n->device] = helper;
        }
        for (auto &entry : used)
            if (aclError err = synchronize(*entry.second, -1))
                return err;
        return ACL_SUCCESS;
    });
}

} // extern "C"
