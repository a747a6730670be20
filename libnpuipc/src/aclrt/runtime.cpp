// SPDX-License-Identifier: MIT
#include "aclrt/capture.h"
#include "aclrt/fabric_memory.h"
#include "aclrt/runtime.h"
#include "log.h"

#include <algorithm>
#include <cerrno>
#include <thread>
#include <signal.h>
#include <cstdlib>
#include <iterator>
#include <new>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc/internal.h"
#include "npuipc/ipc.h"
#include "npuipc/runtime_objects.h"

namespace npuipc_rt {
using namespace npuipc;
namespace {

// Every lock, in their order, so that the child's copies are consistent
// and free.
void atfork_prepare()
{
    Runtime &rt = Runtime::get();
    rt.copy_mu.lock();
    rt.mu.lock();
    rt.mem_mu.lock();
}

void atfork_parent()
{
    Runtime &rt = Runtime::get();
    rt.mem_mu.unlock();
    rt.mu.unlock();
    rt.copy_mu.unlock();
}

void atfork_child()
{
    Runtime &rt = Runtime::get();
    // The child shares the parent's DRM files: any ioctl on them would act
    // on the parent's objects. Until aclInit, it only gets errors.
    rt.forked = !rt.devices.empty() || !rt.objects.empty() || !rt.allocations.empty();
    // Nor may it keep them open: a parent's process-owned objects (and its
    // exit, which importers learn of) must not wait for its children.
    rt.close_drm_fds_after_fork();
    // The child may be given other devices (ASCEND_RT_VISIBLE_DEVICES set
    // before its aclInit or first device call); one that kept nothing of
    // the parent's starts uninitialized too, as a process of its own.
    rt.device_count_known = false;
    rt.visible_env_read = false;
    if (!rt.forked) {
        rt.init_references = 0;
        rt.default_device = -1;
    }
    // The parent's copier thread is not here: the child's first copy into
    // host memory starts its own (even when the parent kept no state).
    rt.copier_wake.reset();
    // A reader/writer lock cannot be unlocked by the child (glibc checks
    // the writer's thread id, which is new here): made anew, unlocked.
    new (&rt.mem_mu) std::shared_mutex();
    rt.mu.unlock();
    rt.copy_mu.unlock();
}

} // namespace

Runtime &Runtime::get()
{
    // Never destroyed: static destructors run while other threads (or
    // atexit handlers) may still call into the runtime.
    static Runtime *runtime = [] {
        auto *r = new Runtime;
        // fork() takes Runtime::mu before the transport's lock, the order
        // of every other thread: one holding an object's lock while it
        // publishes (transport lock) must not wait for a fork that holds
        // the transport's lock and waits for Runtime::mu, held by a thread
        // waiting for that object's lock.
        if (int err = npuipc_ipc::register_fork_handlers())
            log_warning("cannot register the IPC transport's fork handlers: errno %d", err);
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
        return r;
    }();
    return *runtime;
}

uint64_t &thread_context()
{
    __attribute__((tls_model("initial-exec"))) thread_local uint64_t context = 0;
    return context;
}

uint64_t Runtime::add_object(std::shared_ptr<Object> obj)
{
    uint64_t token = next_token;
    next_token += 0x10;
    obj->token = token;
    objects.emplace(token, std::move(obj));
    return token;
}

// The npuipc indices an application sees, in its order, from
// ASCEND_RT_VISIBLE_DEVICES (`list`) and the `present` devices.
static std::vector<uint32_t> visible_devices(const char *list, uint32_t present)
{
    std::vector<uint32_t> visible;
    if (!list || !*list) { // unset or empty: every device
        for (uint32_t i = 0; i < present; i++)
            visible.push_back(i);
        return visible;
    }
    // As CANN: ascending ids separated by commas; the first character or
    // id that does not fit ends the list ("1, 2,3" is 1; "1,3,8" of four
    // devices is 1,3).
    const char *p = list;
    while (*p >= '0' && *p <= '9') {
        char *end;
        unsigned long id = std::strtoul(p, &end, 10);
        if (id >= present || (!visible.empty() && id <= visible.back()))
            break;
        visible.push_back(static_cast<uint32_t>(id));
        if (*end != ',')
            break;
        p = end + 1;
    }
    return visible;
}

aclError Runtime::refresh_device_count()
{
    Result<std::vector<DeviceInfo>> list = list_devices();
    if (!list.ok())
        return fail_errno(list.error(), Op::Generic, "listing npuipc devices");
    // Indices are dense from 0 for virtual devices; count up to the first gap.
    uint32_t n = 0;
    for (const DeviceInfo &info : list.value()) {
        if (info.index != n)
            break;
        n++;
    }
    // Read once per process (again in a fork child): ids must not change
    // meaning under contexts made with them.
    if (!visible_env_read) {
        const char *env = ::getenv("ASCEND_RT_VISIBLE_DEVICES");
        visible_env_set = env != nullptr;
        visible_env = env ? env : "";
        visible_env_read = true;
    }
    visible = visible_devices(visible_env_set ? visible_env.c_str() : nullptr, n);
    device_count = static_cast<uint32_t>(visible.size());
    device_count_known = true;
    return ACL_SUCCESS;
}

int32_t Runtime::logical_id(uint32_t index) const
{
    for (size_t i = 0; i < visible.size(); i++)
        if (visible[i] == index)
            return static_cast<int32_t>(i);
    return -1;
}

aclError Runtime::check_device_id(int32_t id, uint32_t &index)
{
    if (aclError err = check_device_id(id))
        return err;
    index = visible[static_cast<uint32_t>(id)];
    return ACL_SUCCESS;
}

aclError Runtime::check_device_id(int32_t id)
{
    if (id < 0)
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, "device id %d is negative", id);
    if (!device_count_known || static_cast<uint32_t>(id) >= device_count)
        if (aclError err = refresh_device_count())
            return err;
    if (static_cast<uint32_t>(id) >= device_count) {
        std::vector<std::string> denied = inaccessible_nodes();
        if (!denied.empty())
            return fail(ACL_ERROR_RT_INVALID_DEVICEID,
                        "no device %d (there are %u): %zu npuipc device node(s) such as %s "
                        "are not accessible to this user (join the group owning them, usually "
                        "'render')",
                        id, device_count, denied.size(), denied.front().c_str());
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, "no device %d (there are %u)", id,
                    device_count);
    }
    return ACL_SUCCESS;
}

aclError Runtime::open_device(uint32_t index, DeviceState *&out)
{
    auto it = devices.find(index);
    if (it == devices.end()) {
        Result<Device> opened = Device::open(index);
        if (!opened.ok()) {
            if (opened.error() == ENODEV)
                return fail(ACL_ERROR_RT_INVALID_DEVICEID, "no npuipc device %u", index);
            return fail_errno(opened.error(), Op::Generic, "opening the device");
        }
        DeviceState state;
        state.dev = std::make_shared<const Device>(std::move(opened.value()));
        state.default_context = add_object(std::make_shared<Context>(index, true));
        it = devices.emplace(index, std::move(state)).first;
    }
    out = &it->second;
    return ACL_SUCCESS;
}

aclError Runtime::set_device(uint32_t index)
{
    DeviceState *state;
    if (aclError err = open_device(index, state))
        return err;
    state->refs++;
    thread_context() = state->default_context;
    return ACL_SUCCESS;
}

void Runtime::close_device_if_unused(uint32_t index)
{
    auto it = devices.find(index);
    if (it == devices.end() || it->second.refs > 0 || it->second.users > 0)
        return;
    for (const auto &entry : objects)
        if (entry.second->device == index && entry.first != it->second.default_context)
            return;
    {
        std::shared_lock<std::shared_mutex> lock(mem_mu);
        for (const auto &entry : allocations)
            if (entry.second->device == index)
                return;
    }
    // Peer access is the accessing device's setting, which an implicit
    // close must not undo.
    release_device(index, false);
}

void Runtime::release_device(uint32_t index, bool forget_peers)
{
    auto it = devices.find(index);
    if (it == devices.end())
        return;
    // Drop every object of the device from the tables; what another thread
    // still holds goes when it lets go.
    std::vector<std::shared_ptr<Object>> dropped;
    for (auto o = objects.begin(); o != objects.end();) {
        if (o->second->device == index) {
            if (o->second->kind == Kind::Stream)
                static_cast<Stream &>(*o->second).listed.store(false, std::memory_order_release);
            dropped.push_back(o->second);
            o = objects.erase(o);
        } else {
            ++o;
        }
    }
    std::vector<LatchGate> gates; // waits whose record can no longer come
    for (auto &obj : dropped)
        if (obj->kind == Kind::Stream) {
            abandon_capture_locked(*this, static_cast<Stream &>(*obj));
            drop_callbacks_locked(*this, static_cast<Stream &>(*obj));
            drop_host_copies_locked(*this, static_cast<Stream &>(*obj));
            open_recorded_gates(static_cast<Stream &>(*obj));
        }
    for (auto &obj : dropped)
        if (obj->kind == Kind::Event) {
            auto &ev = static_cast<Event &>(*obj);
            std::lock_guard<std::mutex> latch(ev.latch_mu);
            ev.destroyed = true;
            std::move(ev.gates.begin(), ev.gates.end(), std::back_inserter(gates));
            ev.gates.clear();
        }
    for (auto &obj : dropped) {
        if (obj->kind == Kind::Physical) {
            auto &phys = static_cast<Physical &>(*obj);
            std::lock_guard<std::mutex> lock(phys.mu);
            if (phys.shareable) {
                pending_unnames.push_back(phys.shareable);
                pending_revocations.push_back(phys.shared_key);
                phys.shareable = 0;
            }
            if (phys.fabric_export) {
                pending_fabric_releases.push_back(phys.fabric_export->handle);
                phys.fabric_export.reset();
            }
        }
        if (obj->kind == Kind::Event || obj->kind == Kind::Notify) {
            auto &shared = static_cast<SharedObject &>(*obj);
            std::lock_guard<std::mutex> lock(shared.mu);
            for (auto &key : take_keys_of_dead(shared.export_keys, shared.dead))
                pending_revocations.push_back(std::move(key));
        }
    }
    // Imports of other devices' objects into this device's file; the
    // waits of this device's streams on other devices' events.
    for (auto &entry : objects) {
        if (entry.second->kind == Kind::Event) {
            auto &ev = static_cast<Event &>(*entry.second);
            std::lock_guard<std::mutex> latch(ev.latch_mu);
            ev.gates.erase(std::remove_if(ev.gates.begin(), ev.gates.end(),
                                          [index](const LatchGate &g) {
                                              return g.notify->device == index;
                                          }),
                           ev.gates.end());
            // The device's streams are gone, and their waits with them.
            ev.wait_points.erase(std::remove_if(ev.wait_points.begin(), ev.wait_points.end(),
                                                [index](const WaitPoint &p) { return p.device == index; }),
                                 ev.wait_points.end());
            for (const LatchGate &g : ev.gates) {
                std::lock_guard<std::mutex> glock(g.notify->mu);
                g.notify->imports.erase(index);
            }
        }
        if (entry.second->kind == Kind::Event || entry.second->kind == Kind::Notify) {
            auto &shared = static_cast<SharedObject &>(*entry.second);
            std::lock_guard<std::mutex> lock(shared.mu);
            shared.imports.erase(index);
        }
    }
    gates.erase(std::remove_if(gates.begin(), gates.end(),
                               [index](const LatchGate &g) { return g.notify->device == index; }),
                gates.end());
    open_latch_gates(gates);
    for (auto m = memory_imports.begin(); m != memory_imports.end();) {
        if (m->second.alloc->device == index)
            m = memory_imports.erase(m);
        else
            ++m;
    }
    std::vector<std::shared_ptr<Allocation>> freed;
    {
        std::unique_lock<std::shared_mutex> lock(mem_mu);
        for (auto a = allocations.begin(); a != allocations.end();) {
            if (a->second->device == index) {
                {
                    std::lock_guard<std::mutex> alock(a->second->mu);
                    for (auto &key : take_keys_of_dead(a->second->export_keys, a->second->dead))
                        pending_revocations.push_back(std::move(key));
                }
                // A VMM mapping goes back to reserved, faulting address space.
                if (a->second->physical)
                    ::mmap(reinterpret_cast<void *>(a->second->base), a->second->size, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
                freed.push_back(a->second);
                a = allocations.erase(a);
                continue;
            }
            std::lock_guard<std::mutex> plock(a->second->mu);
            a->second->peer.erase(index);
            ++a;
        }
    }
    if (forget_peers)
        for (auto &entry : devices)
            entry.second.peers.erase(index);
    devices.erase(it);
    log_debug("device %u released (%zu objects, %zu allocations)", index, dropped.size(),
              freed.size());
}

aclError Runtime::current_context(std::shared_ptr<Context> &out)
{
    uint64_t &token = thread_context();
    auto it = objects.find(token);
    if (it == objects.end() || it->second->kind != Kind::Context) {
        token = 0;
        if (default_device >= 0) {
            if (aclError err = set_device(static_cast<uint32_t>(default_device)))
                return err;
            it = objects.find(thread_context());
        } else {
            return fail(ACL_ERROR_RT_CONTEXT_NULL,
                        "no current device or context on this thread: call aclrtSetDevice first");
        }
    }
    out = std::static_pointer_cast<Context>(it->second);
    return ACL_SUCCESS;
}

aclError Runtime::current_device(uint32_t &index, std::shared_ptr<const Device> &dev)
{
    std::lock_guard<std::mutex> lock(mu);
    std::shared_ptr<Context> ctx;
    if (aclError err = current_context(ctx))
        return err;
    index = ctx->device;
    dev = devices.at(index).dev;
    return ACL_SUCCESS;
}

aclError Runtime::resolve_stream(aclrtStream handle, std::shared_ptr<Stream> &out)
{
    if (handle) {
        out = find<Stream>(handle, Kind::Stream);
        if (!out)
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a live stream", handle);
        return ACL_SUCCESS;
    }
    std::shared_ptr<Context> ctx;
    if (aclError err = current_context(ctx))
        return err;
    if (ctx->default_stream) {
        out = find<Stream>(reinterpret_cast<void *>(ctx->default_stream), Kind::Stream);
        if (out)
            return ACL_SUCCESS;
    }
    const auto &dev = devices.at(ctx->device).dev;
    Result<ObjectHandle> h = create_object(dev, ObjectType::Stream);
    if (!h.ok())
        return fail_errno(h.error(), Op::CreateStream, "creating the default stream");
    auto s = std::make_shared<Stream>(ctx->device, dev, std::move(h.value()), ctx->token);
    s->is_default = true;
    if (aclError err = apply_failure_mode(*ctx, *s))
        return err;
    out = std::move(s);
    ctx->default_stream = add_object(out);
    defer_stream_state(reinterpret_cast<aclrtStream>(ctx->default_stream), ACL_RT_STREAM_STATE_CREATE_POST);
    return ACL_SUCCESS;
}

aclError Runtime::helper_stream(uint32_t device, std::shared_ptr<Stream> &out)
{
    auto it = devices.find(device);
    if (it == devices.end())
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "device %u was released", device);
    if (!it->second.helper) {
        const auto &dev = it->second.dev;
        Result<ObjectHandle> h = create_object(dev, ObjectType::Stream);
        if (!h.ok())
            return fail_errno(h.error(), Op::CreateStream, "creating the runtime's stream");
        it->second.helper = std::make_shared<Stream>(device, dev, std::move(h.value()), 0);
    }
    out = it->second.helper;
    return ACL_SUCCESS;
}

void Runtime::close_drm_fds_after_fork()
{
    // close() only: this runs in the fork child's atfork handler.
    for (auto &entry : devices) {
        for (auto &pooled : entry.second.event_pool)
            ::close(pooled->fd.release());
        ::close(entry.second.dev->fd());
    }
    for (auto &entry : objects) {
        if (entry.second->kind == Kind::Stream)
            for (auto &task : static_cast<Stream &>(*entry.second).callbacks)
                if (task.reached)
                    ::close(task.reached->fd.release());
        // Fabric memory: the parent's to keep, not the child's to pin.
        if (entry.second->kind == Kind::Physical)
            ::close(static_cast<Physical &>(*entry.second).fabric_memory.release());
    }
    // Freed physical memory a mapping still holds.
    for (auto &entry : allocations)
        if (entry.second->physical)
            ::close(entry.second->physical->fabric_memory.release());
    for (auto &entry : host_copies)
        ::close(entry.second.point.reached->fd.release());
}

void Runtime::discard_after_fork()
{
    // Everything here belongs to the parent's files, whose fds the child
    // closed at fork (close_drm_fds_after_fork) and whose mappings it never
    // had (MADV_DONTFORK). Leak the owners, whose destructors would issue
    // ioctls and unmap what may be the child's own memory by now.
    {
        std::unique_lock<std::shared_mutex> lock(mem_mu);
        // The holes VMM mappings left in the child's reservations are
        // reserved again, unless the child has mapped something there.
        for (auto &entry : allocations)
            if (entry.second->physical)
                ::mmap(reinterpret_cast<void *>(entry.second->base), entry.second->size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        auto *leak = new std::map<uintptr_t, std::shared_ptr<Allocation>>;
        leak->swap(allocations);
    }
    for (auto &entry : objects) {
        if (entry.second->kind != Kind::Stream)
            continue;
        // The parent's streams: no cached lookup may find them again.
        static_cast<Stream &>(*entry.second).listed.store(false, std::memory_order_relaxed);
    }
    forget_captures_after_fork();
    // The parent's settings are not the child's: it starts afresh.
    op_wait_timeout_s.store(0, std::memory_order_relaxed);
    reset_settings_after_fork();
    thread_last_task_id() = 0xFFFFFFFF;
    last_recorded_task() = {};
    auto *leak_copies = new std::map<uint64_t, HostCopy>;
    leak_copies->swap(host_copies);
    auto *leak_devices = new std::map<uint32_t, DeviceState>;
    leak_devices->swap(devices);
    auto *leak_objects = new std::unordered_map<uint64_t, std::shared_ptr<Object>>;
    leak_objects->swap(objects);
    auto *leak_imports = new std::map<std::string, MemoryImport>;
    leak_imports->swap(memory_imports);
    // The parent's keys are not the child's to revoke (the transport's own
    // fork handler has forgotten them).
    pending_revocations.clear();
    pending_unnames.clear();
    // The parent's memory is not the child's to report (the leaked charges
    // keep their own counters).
    mem_usage.clear();
    // Their eventfds are the child's own; the runtime's host-function
    // thread, whose entry goes too, stayed in the parent.
    subscribers.clear();
    thread_context() = 0;
    visible.clear();
    init_references = 0;
    default_device = -1;
    forked = false;
}

std::shared_ptr<Allocation> Runtime::find_allocation(const void *ptr, size_t len)
{
    uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::shared_lock<std::shared_mutex> lock(mem_mu);
    auto it = allocations.upper_bound(p);
    if (it == allocations.begin())
        return nullptr;
    --it;
    const Allocation &a = *it->second;
    if (p - a.base >= a.size || len > a.size - (p - a.base))
        return nullptr;
    return it->second;
}

void Runtime::revoke_pending()
{
    std::vector<std::string> keys;
    std::vector<uint64_t> names;
    std::vector<fabric::Handle> fabric_exports;
    {
        std::lock_guard<std::mutex> lock(mu);
        keys.swap(pending_revocations);
        names.swap(pending_unnames);
        fabric_exports.swap(pending_fabric_releases);
    }
    for (uint64_t name : names)
        ipc::unname(name);
    revoke_keys(keys);
    for (const fabric::Handle &h : fabric_exports)
        fabric_release(h);
}

bool Runtime::peer_enabled(uint32_t from, uint32_t to)
{
    if (from == to)
        return true;
    std::lock_guard<std::mutex> lock(mu);
    auto it = devices.find(from);
    return it != devices.end() && it->second.peers.count(to);
}

// Imports are cached per device index, and used only while they belong to
// the stream's own Device: after a reset and a new aclrtSetDevice, the
// index names a new file whose handle numbers mean other objects. No
// Runtime lock is taken under the object's lock (Runtime::mu comes first).
aclError handle_on(SharedObject &obj, const Stream &stream, uint32_t &out)
{
    if (stream.dev == obj.dev) {
        out = obj.home.get();
        return ACL_SUCCESS;
    }
    std::lock_guard<std::mutex> lock(obj.mu);
    auto it = obj.imports.find(stream.device);
    if (it == obj.imports.end() || it->second.device() != stream.dev.get()) {
        Result<UniqueFd> fd = obj.dev->export_object(obj.home.get());
        if (!fd.ok())
            return fail_errno(fd.error(), Op::Generic, "exporting to another device");
        Result<ObjectHandle> h = import_object(stream.dev, fd.value().get());
        if (!h.ok())
            return fail_errno(h.error(), Op::Generic, "importing into another device");
        it = obj.imports.insert_or_assign(stream.device, std::move(h.value())).first;
    }
    out = it->second.get();
    return ACL_SUCCESS;
}

aclError buffer_on_device(Runtime &rt, Allocation &alloc, uint32_t device,
                          const std::shared_ptr<const Device> &dev, uint32_t &out)
{
    // A VMM mapping's buffer handle is its physical memory's.
    const uint32_t own = alloc.physical ? alloc.physical->buffer.get() : alloc.buffer.get();
    if (dev == alloc.dev) {
        out = own;
        return ACL_SUCCESS;
    }
    if (!rt.peer_enabled(device, alloc.device))
        return fail(ACL_ERROR_RT_NO_PERMISSION,
                    "memory of device %u used from device %u without peer access "
                    "(aclrtDeviceEnablePeerAccess)",
                    alloc.device, device);
    std::lock_guard<std::mutex> lock(alloc.mu);
    auto it = alloc.peer.find(device);
    if (it == alloc.peer.end() || it->second.device() != dev.get()) {
        // Fabric memory is the device's import of the window's: the
        // window's dma-buf is what a peer imports too.
        const int fabric = alloc.physical ? alloc.physical->fabric_memory.get() : -1;
        Result<UniqueFd> fd = fabric >= 0 ? Result<UniqueFd>(UniqueFd())
                                          : alloc.dev->export_buffer(own, 0, alloc.size);
        if (!fd.ok())
            return fail_errno(fd.error(), Op::Generic, "exporting memory to a peer");
        Result<BufferHandle> h = import_buffer(dev, fabric >= 0 ? fabric : fd.value().get(), Peer::Allow);
        if (!h.ok())
            return fail_errno(h.error(), Op::Generic, "importing peer memory");
        it = alloc.peer.insert_or_assign(device, std::move(h.value())).first;
    }
    out = it->second.get();
    return ACL_SUCCESS;
}

aclError buffer_on(Runtime &rt, Allocation &alloc, const Stream &stream, uint32_t &out)
{
    return buffer_on_device(rt, alloc, stream.device, stream.dev, out);
}

aclError create_in_context(Runtime &rt, ObjectType type, Op op, const char *what,
                           std::shared_ptr<Context> &ctx, std::shared_ptr<const Device> &dev,
                           ObjectHandle &handle)
{
    if (aclError err = rt.current_context(ctx))
        return err;
    dev = rt.devices.at(ctx->device).dev;
    Result<ObjectHandle> h = create_object(dev, type);
    if (!h.ok())
        return fail_errno(h.error(), op, what);
    handle = std::move(h.value());
    return ACL_SUCCESS;
}

aclError find_stream_locked(aclrtStream handle, std::shared_ptr<Stream> &out)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    aclError err = rt.resolve_stream(handle, out);
    if (err == ACL_SUCCESS && handle) {
        StreamCache &cache = stream_cache();
        cache.token = reinterpret_cast<uintptr_t>(handle);
        cache.stream = out;
    }
    return err;
}

UsageCharge::UsageCharge(std::shared_ptr<MemUsage> usage, uint64_t bytes)
    : usage_(std::move(usage)), bytes_(bytes)
{
    const uint64_t now = usage_->current.fetch_add(bytes_, std::memory_order_relaxed) + bytes_;
    uint64_t peak = usage_->peak.load(std::memory_order_relaxed);
    while (now > peak && !usage_->peak.compare_exchange_weak(peak, now, std::memory_order_relaxed))
        ;
}

void UsageCharge::release() noexcept
{
    if (usage_)
        usage_->current.fetch_sub(bytes_, std::memory_order_relaxed);
    usage_.reset();
    bytes_ = 0;
}

std::shared_ptr<MemUsage> Runtime::usage_of(uint32_t device, UsageKind kind)
{
    std::shared_ptr<MemUsage> &u = mem_usage[device][static_cast<size_t>(kind)];
    if (!u)
        u = std::make_shared<MemUsage>();
    return u;
}

aclError submit(Stream &stream, const Job *jobs, uint32_t count)
{
    if (aclError err = stopped_context_error(stream))
        return err;
    // The launches a capture takes end before they get here.
    if (aclError err = refuse_uncapturable(stream))
        return err;
    stream.submitter_tid.store(static_cast<uint32_t>(::gettid()), std::memory_order_relaxed);
    Status st;
    {
        std::lock_guard<std::mutex> lock(stream.submit_mu);
        st = stream.dev->submit(stream.handle.get(), jobs, count);
        if (st.ok()) {
            stream.submitted += count;
            // The application's streams only: the runtime's own (context
            // 0) are no task of the caller's.
            if (stream.context) {
                thread_last_task_id() = static_cast<uint32_t>(stream.submitted);
                last_recorded_task().model.reset();
            }
        }
    }
    if (!st.ok()) {
        if (st.error() == EIO && stream.aborting.load(std::memory_order_acquire))
            return fail(ACL_ERROR_RT_STREAM_ABORT, "the stream is being aborted");
        if (st.error() == EIO)
            return fail(ACL_ERROR_RT_STREAM_ABORT,
                        "the stream stopped at a failed task; aclrtSynchronizeStream "
                        "reports the failure");
        return fail_errno(st.error(), Op::Submit, "queueing work on the stream");
    }
    return ACL_SUCCESS;
}

aclError start_runtime_thread(const char *what, std::function<void()> fn)
{
    sigset_t blocked, caller;
    sigfillset(&blocked);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGTRAP})
        sigdelset(&blocked, sig);
    pthread_sigmask(SIG_SETMASK, &blocked, &caller);
    std::string why;
    try {
        std::thread(std::move(fn)).detach();
    } catch (const std::exception &e) {
        why = e.what();
    }
    pthread_sigmask(SIG_SETMASK, &caller, nullptr);
    if (!why.empty())
        return fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "cannot start %s: %s", what, why.c_str());
    return ACL_SUCCESS;
}

aclError stream_of_current_context(aclrtStream handle, std::shared_ptr<Stream> &out)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (aclError err = rt.resolve_stream(handle, out))
        return err;
    std::shared_ptr<Context> ctx;
    if (aclError err = rt.current_context(ctx))
        return err;
    if (out->context != ctx->token)
        return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
    return ACL_SUCCESS;
}

aclError require_uapi(const Stream &stream, uint32_t version, const char *what)
{
    Result<DeviceInfo> info = stream.dev->info();
    if (!info.ok())
        return fail_errno(info.error(), Op::Generic, "querying the device");
    if (info.value().uapi_version < version)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "the loaded npuipc.ko (uapi %u) has no %s: uapi %u has",
                    info.value().uapi_version, what, version);
    return ACL_SUCCESS;
}

aclError stopped_context_error(const Stream &stream)
{
    if (!stream.failure)
        return ACL_SUCCESS;
    if (aclError err = stream.failure->error.load(std::memory_order_acquire))
        return fail(err, "the context stopped at a failed task (ACL_STOP_ON_FAILURE); reset "
                         "its device or destroy it");
    return ACL_SUCCESS;
}

aclError overlapping_abort(const Stream &stream, uint64_t aborts_before)
{
    if (!stream.aborting.load(std::memory_order_acquire) &&
        stream.aborts.load(std::memory_order_acquire) == aborts_before)
        return ACL_SUCCESS;
    // Its context stopping aborted it: the context's error, not the abort.
    if (aclError err = stopped_context_error(stream))
        return err;
    return fail(ACL_ERROR_RT_STREAM_ABORT, "the stream was aborted meanwhile");
}

Status abort_stream_work(Runtime &rt, Stream &stream)
{
    uint64_t queued_before;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        queued_before = rt.next_host_copy;
    }
    stream.aborting.fetch_add(1, std::memory_order_acq_rel);
    stream.aborts.fetch_add(1, std::memory_order_acq_rel);
    stream.run_error.store(ACL_SUCCESS, std::memory_order_release);
    Status st = stream.dev->abort_stream(stream.handle.get());
    stream.aborting.fetch_sub(1, std::memory_order_acq_rel);
    // Copies queued before the abort whose point the stream had reached
    // are dropped too (not those queued since, by other threads), and one
    // under way ends before we return: the caller may free their
    // destinations.
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        drop_host_copies_locked(rt, stream, queued_before);
    }
    wait_for_running_copy(rt);
    // Its event records were cancelled: the streams waiting for them
    // through latch gates go on.
    open_recorded_gates(stream);
    return st;
}

aclError apply_failure_mode(const Context &ctx, Stream &stream)
{
    stream.failure = ctx.failure;
    if (ctx.failure->stop.load(std::memory_order_acquire)) {
        stream.stops.store(true, std::memory_order_release);
        return ACL_SUCCESS; // the driver's default
    }
    Status st = stream.dev->set_failure_mode(stream.handle.get(), FailureMode::Continue);
    if (!st.ok())
        return fail_errno(st.error(), Op::CreateStream,
                          "setting the stream's failure mode (npuipc.ko of uapi 9 or later)");
    return ACL_SUCCESS;
}

namespace {

// STOP: the first failure found stops the context. Its other streams are
// aborted, so that none of their queued work runs, and the error stays.
void stop_context(const Stream &failed, aclError code)
{
    aclError none = ACL_SUCCESS;
    if (!failed.failure->error.compare_exchange_strong(none, code))
        return;
    std::vector<std::shared_ptr<Stream>> others;
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        for (const auto &entry : rt.objects) {
            if (entry.second->kind != Kind::Stream)
                continue;
            auto s = std::static_pointer_cast<Stream>(entry.second);
            if (s.get() != &failed && s->failure == failed.failure)
                others.push_back(std::move(s));
        }
    }
    for (const auto &s : others)
        if (!abort_stream_work(Runtime::get(), *s).ok())
            log_warning("a stream of the stopped context could not be aborted");
}

} // namespace

aclError runtime_work_failed(Stream &stream, aclError err)
{
    // An abort the application asked for is no failure of the context's.
    if (stream.failure && stream.failure->stop.load(std::memory_order_acquire) &&
        err != ACL_ERROR_RT_MODEL_ABORT_NORMAL)
        stop_context(stream, err);
    return fail(err, "work the runtime ran for the stream (a model run, an indirect copy, a reduce) failed; "
                     "its error was logged when it failed");
}

aclError synchronize_failed(Stream &stream, const Result<int> &r, size_t gates, uint32_t failed_job)
{
    // A job failed after work of the runtime's did: the job's error is the
    // one reported, the earlier one was logged.
    if (r.ok())
        stream.run_error.store(ACL_SUCCESS, std::memory_order_release);
    if (!r.ok()) {
        if (r.error() == ETIME)
            return fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "the stream did not finish in time");
        return fail_errno(r.error(), Op::Generic, "waiting for the stream");
    }
    if (aclError err = stopped_context_error(stream))
        return err;
    // A stream that stopped cancelled the records behind its failure; one
    // that continues ran them, and they opened their gates themselves.
    const bool stopped = !stream.failure || stream.stops.load(std::memory_order_acquire);
    if (stopped)
        open_recorded_gates(stream);
    else if (gates)
        forget_recorded_gates(stream, gates);
    // Reported once: the stream is recovered and takes work again (unless
    // work queued meanwhile keeps it busy: then the next synchronize
    // returns it again, without calling the callbacks again).
    Result<int> recovered = stream.dev->wait_and_recover(stream.handle.get(), 0);
    if (!recovered.ok() && recovered.error() != ETIME)
        log_warning("stream not recovered: errno %d", recovered.error());
    // No job failed: an abort or the stream's shutdown cancelled its jobs,
    // or a wait's record that an abort (or its process's end) cancelled.
    if (failed_job == 0 || r.value() == -ECANCELED)
        return fail(ACL_ERROR_RT_STREAM_ABORT, "the stream's work was aborted");
    const bool first_report = stream.reported_job.exchange(failed_job, std::memory_order_acq_rel) != failed_job;
    const aclError code = task_error(r.value());
    if (!stream.failure)
        return code;
    if (stopped)
        stop_context(stream, code); // once per context, whoever gets here first
    if (first_report)
        report_exception(stream, code, failed_job);
    if (stopped)
        return stopped_context_error(stream);
    return code;
}

void forget_recorded_gates(Stream &stream, size_t count)
{
    std::vector<LatchGate> done; // released after the lock
    std::lock_guard<std::mutex> lock(stream.mu);
    count = std::min(count, stream.recorded_gates.size());
    done.assign(std::make_move_iterator(stream.recorded_gates.begin()),
                std::make_move_iterator(stream.recorded_gates.begin() + count));
    stream.recorded_gates.erase(stream.recorded_gates.begin(),
                                stream.recorded_gates.begin() + count);
    stream.recorded_gate_count.store(stream.recorded_gates.size(), std::memory_order_release);
}

void open_latch_gates(const std::vector<LatchGate> &gates)
{
    // The core's submit, not submit(): this is cleanup, which must not set
    // the calling thread's last error.
    for (const LatchGate &gate : gates)
        if (!gate.opener->dev->submit(gate.opener->handle.get(),
                                      prep_record_notify(gate.notify->home.get()))
                 .ok())
            log_warning("a stream waiting for an event's record could not be released");
}

void open_recorded_gates(Stream &stream)
{
    std::vector<LatchGate> gates;
    {
        std::lock_guard<std::mutex> lock(stream.mu);
        gates.swap(stream.recorded_gates);
        stream.recorded_gate_count.store(0, std::memory_order_release);
    }
    open_latch_gates(gates);
}

std::unique_ptr<PooledEvent> acquire_pooled_event(Runtime &rt, uint32_t device)
{
    std::lock_guard<std::mutex> lock(rt.mu);
    auto it = rt.devices.find(device);
    if (it == rt.devices.end())
        return nullptr;
    auto &pool = it->second.event_pool;
    if (!pool.empty()) {
        std::unique_ptr<PooledEvent> ev = std::move(pool.back());
        pool.pop_back();
        return ev;
    }
    const auto &dev = it->second.dev;
    Result<ObjectHandle> h = create_object(dev, ObjectType::Event);
    if (!h.ok())
        return nullptr;
    auto ev = std::make_unique<PooledEvent>();
    ev->event = std::move(h.value());
    Result<UniqueFd> fd = dev->export_object(ev->event.get());
    if (!fd.ok())
        return nullptr;
    ev->fd = std::move(fd.value());
    return ev;
}

void release_pooled_event(Runtime &rt, uint32_t device, std::unique_ptr<PooledEvent> ev)
{
    std::lock_guard<std::mutex> lock(rt.mu);
    auto it = rt.devices.find(device);
    if (it != rt.devices.end() && ev && it->second.dev.get() == ev->event.device())
        it->second.event_pool.push_back(std::move(ev));
}

} // namespace npuipc_rt

namespace npuipc {
namespace {

// Calls fn for every host task pending on a stream of `device` (of every
// device when it is null), the helper streams' included; Runtime::mu held.
template <typename Fn>
void for_each_host_task(npuipc_rt::Runtime &rt, const uint32_t *device, Fn &&fn)
{
    using namespace npuipc_rt;
    auto tasks_of = [&fn](Stream &stream) {
        std::lock_guard<std::mutex> slock(stream.mu);
        for (const HostTask &task : stream.callbacks)
            fn(task);
    };
    for (const auto &entry : rt.devices)
        if ((!device || entry.first == *device) && entry.second.helper)
            tasks_of(*entry.second.helper);
    for (const auto &entry : rt.objects)
        if (entry.second->kind == Kind::Stream && (!device || entry.second->device == *device))
            tasks_of(static_cast<Stream &>(*entry.second));
    for (const auto &entry : rt.host_copies)
        if (!device || entry.second.stream->device == *device)
            fn(entry.second.point);
}

} // namespace

RuntimeObjects runtime_own_objects(uint32_t device)
{
    using namespace npuipc_rt;
    Runtime &rt = Runtime::get();
    RuntimeObjects own;
    std::lock_guard<std::mutex> lock(rt.mu);
    auto it = rt.devices.find(device);
    if (it == rt.devices.end())
        return own;
    own.events = static_cast<uint32_t>(it->second.event_pool.size());
    own.streams = it->second.helper ? 1 : 0;
    // The markers behind stream waits (aclrtQueryEventWaitStatus).
    for (const auto &entry : rt.objects) {
        if (entry.second->kind != Kind::Event)
            continue;
        auto &ev = static_cast<Event &>(*entry.second);
        std::lock_guard<std::mutex> latch(ev.latch_mu);
        for (const WaitPoint &p : ev.wait_points)
            own.events += p.device == device ? 1 : 0;
    }
    for (const auto &entry : rt.objects) {
        if (entry.second->kind != Kind::Context || entry.second->device != device)
            continue;
        const auto &ctx = static_cast<const Context &>(*entry.second);
        if (ctx.is_default && ctx.default_stream && rt.objects.count(ctx.default_stream))
            own.streams++;
    }
    for_each_host_task(rt, &device, [&own](const HostTask &task) {
        own.events += task.reached ? 1 : 0;
        own.notifies += task.gate ? 1 : 0;
    });
    auto count_gates = [&own, device](const std::vector<LatchGate> &gates) {
        for (const LatchGate &gate : gates) {
            std::lock_guard<std::mutex> glock(gate.notify->mu);
            own.notifies +=
                (gate.notify->device == device ? 1 : 0) + gate.notify->imports.count(device);
        }
    };
    for (const auto &entry : rt.objects) {
        if (entry.second->kind == Kind::Event) {
            auto &ev = static_cast<Event &>(*entry.second);
            std::lock_guard<std::mutex> latch(ev.latch_mu);
            count_gates(ev.gates);
        } else if (entry.second->kind == Kind::Stream) {
            auto &stream = static_cast<Stream &>(*entry.second);
            std::lock_guard<std::mutex> slock(stream.mu);
            count_gates(stream.recorded_gates);
        }
    }
    return own;
}

std::vector<int> runtime_own_fds()
{
    using namespace npuipc_rt;
    Runtime &rt = Runtime::get();
    std::vector<int> fds = ipc::exporter_fds();
    if (int log = npuipc_log::file_fd(); log >= 0)
        fds.push_back(log);
    std::lock_guard<std::mutex> lock(rt.mu);
    for (const auto &entry : rt.devices) {
        fds.push_back(entry.second.dev->fd());
        for (const auto &pooled : entry.second.event_pool)
            fds.push_back(pooled->fd.get());
    }
    for_each_host_task(rt, nullptr, [&fds](const HostTask &task) {
        if (task.reached)
            fds.push_back(task.reached->fd.get());
    });
    for (const auto &entry : rt.subscribers)
        fds.push_back(entry.second.wake.get());
    if (rt.copier_wake)
        fds.push_back(rt.copier_wake.get());
    return fds;
}

} // namespace npuipc
