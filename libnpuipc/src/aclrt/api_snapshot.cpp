// SPDX-License-Identifier: MIT
// Process snapshots (aclrt_snapshot(3)): aclrtSnapShotProcessLock holds the
// process's other threads at their next aclrt call, Backup keeps the
// contents of its device memory in host memory once its devices are idle,
// Restore writes them back into the memory that is still there, Unlock lets
// the threads go on; callbacks registered per stage run for each device the
// process has set. CANN's states and codes: RUNNING, LOCKED, BACKED UP.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <new>
#include <thread>
#include <pthread.h>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

enum class SnapState { Running, Locked, BackedUp };

// Device memory as it was at the backup.
struct Saved {
    std::weak_ptr<Allocation> alloc;
    std::vector<uint8_t> bytes;
};

struct Snapshot {
    // Serialises the calls that change the state, for their whole length.
    std::mutex op_mu;
    // Protects state, epoch, callbacks and saved.
    std::mutex mu;
    std::condition_variable unlocked;
    SnapState state = SnapState::Running;
    uint64_t epoch = 0; // one per lock: the locking thread keeps its own
    std::vector<std::pair<aclrtSnapShotCallBack, void *>> callbacks[ACL_RT_SNAPSHOT_UNLOCK_POST + 1];
    std::vector<Saved> saved;
};

// The gate, read by every outermost call: closed while locked; the calls
// under way that it counted.
std::atomic<bool> gate_closed{false};
std::atomic<uint64_t> calls_under_way{0};

// The lock this thread took (Snapshot::epoch then), 0 if none.
uint64_t &my_lock()
{
    static thread_local uint64_t epoch = 0;
    return epoch;
}

// Never destroyed: a thread may wait in it while the process exits. A fork
// child runs on its own: the parent's lock and waiters are not its.
Snapshot &snapshot()
{
    static Snapshot *s = [] {
        auto *made = new Snapshot;
        pthread_atfork(
            [] {
                snapshot().op_mu.lock();
                snapshot().mu.lock();
            },
            [] {
                snapshot().mu.unlock();
                snapshot().op_mu.unlock();
            },
            [] {
                Snapshot &child = snapshot();
                child.state = SnapState::Running;
                child.saved.clear();
                gate_closed.store(false);
                calls_under_way.store(0);
                new (&child.unlocked) std::condition_variable();
                child.mu.unlock();
                child.op_mu.unlock();
            });
        return made;
    }();
    return *s;
}

constexpr auto kQuiet = std::chrono::seconds(60); // CANN's wait for a lock's threads

// The calls a lock does not hold, as CANN's: waiting and asking start no
// work (the callbacks a wait runs are held at their own calls).
bool passes_lock(const char *name)
{
    for (const char *prefix : {"aclrtSnapShot", "aclrtSynchronize", "aclrtQuery", "aclrtStreamQuery",
                               "aclrtGetLastError", "aclrtPeekAtLastError", "aclrtProcessReport",
                               "aclrtProcessHostFunc", "aclFinalize"})
        if (std::strncmp(name, prefix, std::strlen(prefix)) == 0)
            return true;
    return false;
}

bool holds_lock(const Snapshot &s)
{
    return my_lock() != 0 && my_lock() == s.epoch;
}

aclError check_pid(int pid)
{
    if (pid != ::getpid())
        return fail(ACL_ERROR_INVALID_PARAM, "pid %d: a process snapshots only itself (%d)", pid, ::getpid());
    return ACL_SUCCESS;
}

// A backup's or restore's checks: its pid and NULL args (before the step's
// lock), then the state it needs (`code` and `why` otherwise, with
// Snapshot::op_mu held).
aclError check_step_arguments(int pid, const void *args)
{
    if (aclError err = check_pid(pid))
        return err;
    if (args)
        return fail(ACL_ERROR_INVALID_PARAM, "args must be NULL (CANN takes none yet)");
    return ACL_SUCCESS;
}

aclError begin_step(SnapState need, aclError code, const char *why)
{
    Snapshot &s = snapshot();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.state != need)
        return fail(code, "%s", why);
    return ACL_SUCCESS;
}

// The application's ids of the devices the process has set.
std::vector<int32_t> set_devices()
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    std::vector<int32_t> ids;
    for (const auto &entry : rt.devices)
        if (entry.second.refs > 0) {
            int32_t id = rt.logical_id(entry.first);
            if (id >= 0)
                ids.push_back(id);
        }
    return ids;
}

// The stage's callbacks, once per device the process has set; the first
// that returns non-zero fails the step. Without Snapshot::mu held.
aclError run_callbacks(aclrtSnapShotStage stage)
{
    std::vector<std::pair<aclrtSnapShotCallBack, void *>> callbacks;
    {
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> lock(s.mu);
        callbacks = s.callbacks[stage];
    }
    for (int32_t device : set_devices())
        for (const auto &cb : callbacks)
            if (uint32_t rc = cb.first(device, cb.second))
                return fail(ACL_ERROR_SNAPSHOT_CALLBACK_FAILED, "a callback of stage %d returned %u for device %d",
                            static_cast<int>(stage), rc, device);
    return ACL_SUCCESS;
}

// The process's own device memory: allocations, managed memory and VMM
// mappings (each physical allocation once); not host registrations, other
// processes' memory or mappings without access.
std::vector<std::shared_ptr<Allocation>> own_device_memory()
{
    Runtime &rt = Runtime::get();
    std::vector<std::shared_ptr<Allocation>> out;
    std::vector<const Physical *> seen;
    std::shared_lock<std::shared_mutex> lock(rt.mem_mu);
    for (const auto &entry : rt.allocations) {
        const std::shared_ptr<Allocation> &a = entry.second;
        if (a->registered_host || !a->import_key.empty() || !a->accessible.load(std::memory_order_acquire))
            continue;
        if (a->physical) {
            if (a->physical->imported ||
                std::find(seen.begin(), seen.end(), a->physical.get()) != seen.end())
                continue;
            seen.push_back(a->physical.get());
        }
        out.push_back(a);
    }
    return out;
}

// Every stream of the process idle, within CANN's minute for them all.
aclError devices_idle(aclError code)
{
    std::vector<std::shared_ptr<Stream>> streams;
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        for (const auto &entry : rt.objects)
            if (entry.second->kind == Kind::Stream)
                streams.push_back(std::static_pointer_cast<Stream>(entry.second));
    }
    const auto deadline = std::chrono::steady_clock::now() + kQuiet;
    for (const auto &s : streams) {
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
        Result<int> r = s->dev->wait(s->handle.get(), std::max<int64_t>(left.count(), 1), nullptr);
        if (!r.ok())
            return fail(code, "the process's streams did not become idle within a minute (errno %d)", r.error());
    }
    return ACL_SUCCESS;
}

// Opens the gate and wakes the held threads. With Snapshot::mu held.
void unlock_locked(Snapshot &s)
{
    s.state = SnapState::Running;
    s.epoch++;
    s.saved.clear();
    gate_closed.store(false);
    s.unlocked.notify_all();
}

} // namespace

namespace npuipc_rt {

bool enter_snapshot_gate(const char *name)
{
    if (passes_lock(name))
        return false;
    for (;;) {
        calls_under_way.fetch_add(1);
        if (!gate_closed.load())
            return true;
        Snapshot &s = snapshot();
        std::unique_lock<std::mutex> lock(s.mu);
        if (holds_lock(s))
            return true;
        calls_under_way.fetch_sub(1);
        s.unlocked.wait(lock, [&] { return s.state == SnapState::Running; });
    }
}

void leave_snapshot_gate()
{
    calls_under_way.fetch_sub(1);
}

void end_snapshot_lock()
{
    Snapshot &s = snapshot();
    std::lock_guard<std::mutex> op(s.op_mu);
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.state != SnapState::Running)
        unlock_locked(s);
}

} // namespace npuipc_rt

extern "C" {

aclError aclrtSnapShotProcessLock(int pid, void *reserve)
{
    return api("aclrtSnapShotProcessLock", [&] {
        if (aclError err = check_pid(pid))
            return err;
        if (reserve)
            return fail(ACL_ERROR_INVALID_PARAM, "reserve must be NULL");
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> op(s.op_mu);
        {
            std::lock_guard<std::mutex> lock(s.mu);
            if (s.state != SnapState::Running)
                return fail(ACL_ERROR_SNAPSHOT_LOCK_FAILED, "the process is locked already");
        }
        if (aclError err = run_callbacks(ACL_RT_SNAPSHOT_LOCK_PRE))
            return err;
        {
            std::lock_guard<std::mutex> lock(s.mu);
            s.state = SnapState::Locked;
            my_lock() = ++s.epoch;
            gate_closed.store(true);
        }
        // The calls under way end; new ones wait at the gate.
        const auto deadline = std::chrono::steady_clock::now() + kQuiet;
        while (calls_under_way.load() != 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                std::lock_guard<std::mutex> lock(s.mu);
                unlock_locked(s);
                return fail(ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT, "calls of other threads did not end within a minute");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return ACL_SUCCESS;
    });
}

aclError aclrtSnapShotProcessUnlock(int pid, void *reserve)
{
    return api("aclrtSnapShotProcessUnlock", [&] {
        if (aclError err = check_pid(pid))
            return err;
        if (reserve)
            return fail(ACL_ERROR_INVALID_PARAM, "reserve must be NULL");
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> op(s.op_mu);
        {
            std::lock_guard<std::mutex> lock(s.mu);
            if (s.state == SnapState::Running)
                return fail(ACL_ERROR_SNAPSHOT_UNLOCK_FAILED, "the process is not locked");
            unlock_locked(s);
        }
        // As CANN: a failure here is reported once the process runs again.
        return run_callbacks(ACL_RT_SNAPSHOT_UNLOCK_POST);
    });
}

aclError aclrtSnapShotProcessBackup(int pid, aclrtSnapShotBackupArgs *args)
{
    return api("aclrtSnapShotProcessBackup", [&] {
        if (aclError err = check_step_arguments(pid, args))
            return err;
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> op(s.op_mu);
        if (aclError err = begin_step(SnapState::Locked, ACL_ERROR_SNAPSHOT_BACKUP_FAILED,
                                      "the process is not locked, or backed up already"))
            return err;
        if (aclError err = run_callbacks(ACL_RT_SNAPSHOT_BACKUP_PRE))
            return err;
        if (aclError err = devices_idle(ACL_ERROR_SNAPSHOT_BACKUP_FAILED))
            return err;
        std::vector<Saved> saved;
        for (const std::shared_ptr<Allocation> &a : own_device_memory()) {
            void *at = nullptr;
            if (stable_address(*a, reinterpret_cast<void *>(a->base), at) != ACL_SUCCESS)
                return fail(ACL_ERROR_SNAPSHOT_BACKUP_FAILED, "cannot read device memory at %p",
                            reinterpret_cast<void *>(a->base));
            Saved kept;
            kept.alloc = a;
            kept.bytes.assign(static_cast<const uint8_t *>(at), static_cast<const uint8_t *>(at) + a->size);
            saved.push_back(std::move(kept));
        }
        if (aclError err = run_callbacks(ACL_RT_SNAPSHOT_BACKUP_POST))
            return err;
        std::lock_guard<std::mutex> lock(s.mu);
        s.saved = std::move(saved);
        s.state = SnapState::BackedUp;
        return ACL_SUCCESS;
    });
}

aclError aclrtSnapShotProcessRestore(int pid, aclrtSnapShotRestoreArgs *args)
{
    return api("aclrtSnapShotProcessRestore", [&] {
        if (aclError err = check_step_arguments(pid, args))
            return err;
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> op(s.op_mu);
        if (aclError err = begin_step(SnapState::BackedUp, ACL_ERROR_SNAPSHOT_RESTORE_FAILED,
                                      "the process has no backup to restore"))
            return err;
        if (aclError err = run_callbacks(ACL_RT_SNAPSHOT_RESTORE_PRE))
            return err;
        if (aclError err = devices_idle(ACL_ERROR_SNAPSHOT_RESTORE_FAILED))
            return err;
        // Memory freed since the backup is gone, and what was allocated
        // since is left as it is. op_mu keeps the backup in place.
        for (const Saved &kept : s.saved) {
            std::shared_ptr<Allocation> a = kept.alloc.lock();
            if (!a)
                continue;
            void *at = nullptr;
            if (stable_address(*a, reinterpret_cast<void *>(a->base), at) != ACL_SUCCESS)
                return fail(ACL_ERROR_SNAPSHOT_RESTORE_FAILED, "cannot write device memory at %p",
                            reinterpret_cast<void *>(a->base));
            std::memcpy(at, kept.bytes.data(), kept.bytes.size());
        }
        if (aclError err = run_callbacks(ACL_RT_SNAPSHOT_RESTORE_POST))
            return err;
        std::lock_guard<std::mutex> lock(s.mu);
        s.state = SnapState::Locked;
        s.saved.clear();
        return ACL_SUCCESS;
    });
}

aclError aclrtSnapShotCallbackRegister(aclrtSnapShotStage stage, aclrtSnapShotCallBack callback, void *args)
{
    return api("aclrtSnapShotCallbackRegister", [&] {
        if (static_cast<uint32_t>(stage) > ACL_RT_SNAPSHOT_UNLOCK_POST || !callback)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "stage %d or a NULL callback", static_cast<int>(stage));
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> lock(s.mu);
        for (const auto &cb : s.callbacks[stage])
            if (cb.first == callback)
                return fail(ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED,
                            "the callback is registered for stage %d already", static_cast<int>(stage));
        s.callbacks[stage].emplace_back(callback, args);
        return ACL_SUCCESS;
    });
}

aclError aclrtSnapShotCallbackUnregister(aclrtSnapShotStage stage, aclrtSnapShotCallBack callback)
{
    return api("aclrtSnapShotCallbackUnregister", [&] {
        if (static_cast<uint32_t>(stage) > ACL_RT_SNAPSHOT_UNLOCK_POST || !callback)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "stage %d or a NULL callback", static_cast<int>(stage));
        Snapshot &s = snapshot();
        std::lock_guard<std::mutex> lock(s.mu);
        auto &list = s.callbacks[stage];
        for (auto it = list.begin(); it != list.end(); ++it)
            if (it->first == callback) {
                list.erase(it);
                return ACL_SUCCESS;
            }
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the callback is not registered for stage %d", static_cast<int>(stage));
    });
}

} // extern "C"
