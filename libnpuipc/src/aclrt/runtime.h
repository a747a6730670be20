// SPDX-License-Identifier: MIT
// The aclrt runtime's state: the devices this process has set, its contexts,
// streams, events, notifies and device memory, and each thread's current
// context. The C API (api_*.cpp) is a thin layer over it.
//
// Handles given to applications (aclrtStream, aclrtEvent, ...) are opaque
// tokens, never pointers: every call looks its handle up in one table, so a
// stale, foreign or wrong-kind handle is an error, never a dereference.
//
// Locking: Runtime::mu protects the tables (devices, objects, subscribers);
// Runtime::mem_mu the address map. Neither is held across a blocking wait:
// callers take a shared_ptr to what they need and drop the lock. Object
// members that change after creation have their own mutex, always taken
// after (never while waiting for) Runtime::mu.
#ifndef NPUIPC_ACLRT_RUNTIME_H
#define NPUIPC_ACLRT_RUNTIME_H

#include <array>
#include <atomic>
#include <optional>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"
#include "npuipc/device.h"
#include "npuipc/fabric.h"
#include "aclrt/errors.h"

namespace npuipc_rt {
using namespace npuipc;

struct Allocation;
struct ManagedState;
struct Stream;

// Device memory of one kind this process holds on one device, now and at
// its most (aclrtGetMemUsageInfo).
struct MemUsage {
    std::atomic<uint64_t> current{0};
    std::atomic<uint64_t> peak{0};
};

// `bytes` counted in a MemUsage while the owner lives: every way memory
// goes (free, reset, the last reference of a queued copy) uncounts it.
class UsageCharge {
public:
    UsageCharge() = default;
    UsageCharge(std::shared_ptr<MemUsage> usage, uint64_t bytes);
    ~UsageCharge() { release(); }
    UsageCharge(UsageCharge &&other) noexcept
        : usage_(std::move(other.usage_)), bytes_(std::exchange(other.bytes_, 0))
    {
    }
    UsageCharge &operator=(UsageCharge &&other) noexcept
    {
        if (this != &other) {
            release();
            usage_ = std::move(other.usage_);
            bytes_ = std::exchange(other.bytes_, 0);
        }
        return *this;
    }
    UsageCharge(const UsageCharge &) = delete;
    UsageCharge &operator=(const UsageCharge &) = delete;

private:
    void release() noexcept;
    std::shared_ptr<MemUsage> usage_;
    uint64_t bytes_ = 0;
};

// The kinds aclrtGetMemUsageInfo reports, by name.
enum class UsageKind : uint8_t { Malloc, Physical };
constexpr size_t kUsageKinds = 2;

enum class Kind : uint8_t { Context = 1, Stream, Event, Notify, Physical, Model, CntNotify, Label, LabelList, ModelStream, CondHandle };

struct Model;

struct Object {
    Object(Kind k, uint32_t dev) : kind(k), device(dev) {}
    virtual ~Object() = default;
    const Kind kind;
    const uint32_t device; // npuipc index of the device it lives on
    uint64_t token = 0;    // the application's handle
};

// An event of the device's own, recorded by the runtime to learn when a
// stream reaches a point (host callbacks); its fd polls readable then.
struct PooledEvent {
    ObjectHandle event;
    UniqueFd fd;
};

struct HostTask {
    aclrtCallback fn = nullptr;
    void *user_data = nullptr;
    bool block = false;
    std::unique_ptr<PooledEvent> reached;
    // BLOCK: the notify the stream waits on after the point, one per task
    // so that a record can never reach another task's wait.
    ObjectHandle gate;
    // The runtime's stream of the gate's device file, which records the
    // gate: held here, so that the gate opens even after a device reset.
    std::shared_ptr<Stream> opener;
};

// A copy the CPU makes in a stream's order (aclrtMemcpyAsync into host
// memory, aclrtMemcpy2dAsync): the runtime's copier thread moves the bytes
// once the stream reaches `point`, then opens the point's gate so that the
// stream's later work follows. `rows` rows of `count` bytes, `dpitch` and
// `spitch` apart.
struct HostCopy {
    std::shared_ptr<Stream> stream;
    HostTask point;
    void *dst = nullptr;
    const void *src = nullptr;
    size_t count = 0;
    size_t rows = 1;
    size_t dpitch = 0, spitch = 0;
    std::shared_ptr<Allocation> source; // keeps `src` mapped meanwhile
    std::shared_ptr<Allocation> dest;   // and `dst`, when device memory
    std::vector<uint8_t> staged;        // host source read at the call
    // An indirect copy (aclrtMemcpyAsyncWithOffset, aclrtMemcpyAsyncWithDesc):
    // sets dst, src, count and the allocations from device memory when the
    // stream gets there, on the copier thread; its error fails the copy.
    std::function<aclError(HostCopy &)> resolve;
};

// A context's failure mode, shared with its streams. CONTINUE (CANN's
// default): a failed task's error goes to the next synchronize of its
// stream and the tasks behind it run. STOP (aclrtSetStreamFailureMode):
// the first failure a synchronize finds stops every stream of the context
// and stays its error, for every later launch and synchronize.
struct FailureState {
    std::atomic<bool> stop{false};
    std::atomic<aclError> error{ACL_SUCCESS}; // STOP's sticky error
};

struct Context : Object {
    explicit Context(uint32_t dev, bool dflt) : Object(Kind::Context, dev), is_default(dflt) {}
    const bool is_default;
    uint64_t default_stream = 0; // made on first use of a NULL stream
    const std::shared_ptr<FailureState> failure = std::make_shared<FailureState>();
    // aclrtCtxSetSysParamOpt's values, under Runtime::mu; unset until set.
    std::array<std::optional<int64_t>, 3> sys_params;
};

struct Notify;

// A driver event recorded on a stream right behind a wait for an
// application's event (aclrtQueryEventWaitStatus): the wait is over once
// it completes. Made on the waiting stream's file, never exported.
struct WaitPoint {
    std::shared_ptr<const Device> dev;
    uint32_t device = 0; // npuipc index of that file's device
    ObjectHandle marker;
};

// A stream wait made while an event's flag was clear (api_sync.cpp): the
// notify the stream waits on, recorded behind the event's next record,
// and the runtime's stream of the notify's device, taken with the wait,
// that opens it when that record cannot come (the event destroyed, or the
// record's stream failed or went away).
struct LatchGate {
    std::shared_ptr<Notify> notify;
    std::shared_ptr<Stream> opener;
};

struct Stream : Object {
    Stream(uint32_t dev, std::shared_ptr<const Device> d, ObjectHandle h, uint64_t ctx)
        : Object(Kind::Stream, dev), dev(std::move(d)), handle(std::move(h)), context(ctx)
    {
    }
    const std::shared_ptr<const Device> dev;
    const ObjectHandle handle;
    const uint64_t context;
    // As aclrtCreateStreamWithConfig gave them (ACL_STREAM_* bits; 0..7),
    // set before the stream enters the table.
    uint32_t flags = 0;
    bool internal = false; // create_stream's, set before the stream enters the table
    std::atomic<uint32_t> priority{0};
    // aclrtSetStreamAttribute's switches, kept for aclrtGetStreamAttribute:
    // a mock NPU has no floating-point overflow or cache operations to check.
    std::atomic<uint32_t> overflow_check{0};
    std::atomic<uint32_t> user_tag{0xFFFFFFFF};
    std::atomic<uint32_t> cache_op_info{0};
    bool is_default = false; // its context's, which outlives no context
    // Its context's (set before the stream enters the table); null for
    // the runtime's own streams, which stop at a failure.
    std::shared_ptr<FailureState> failure;
    // aclrtStreamAbort calls begun, and those under way: a synchronize
    // that overlaps one returns ACL_ERROR_RT_STREAM_ABORT.
    std::atomic<uint64_t> aborts{0};
    std::atomic<uint32_t> aborting{0};
    // Set to NPUIPC_FAILURE_STOP in the driver: it halts at a failure.
    // Null `failure` (the runtime's own streams) stops too.
    std::atomic<bool> stops{false};
    // The thread that last queued work on it (exception info's tid).
    std::atomic<uint32_t> submitter_tid{0};
    // Protects submitted: jobs queued so far, the driver's number of the
    // last one (aclrtGetThreadLastTaskId), in the driver's order.
    std::mutex submit_mu;
    uint64_t submitted = 0;
    // The driver's number of the failed job last reported: a failure a
    // synchronize could not clear (work queued meanwhile) is returned again
    // by the next one, without calling the exception callbacks again.
    std::atomic<uint32_t> reported_job{0};
    // Protects what follows, and keeps multi-job sequences (a callback's
    // record and its gate) in order with the queue of host tasks.
    std::mutex mu;
    std::deque<HostTask> callbacks;
    uint64_t subscriber = 0; // pthread_t of the thread running its callbacks
    // Latch gates recorded behind event records of this stream, oldest
    // first, until a synchronize sees the stream complete: opened if it
    // fails or goes away first.
    std::vector<LatchGate> recorded_gates;
    std::atomic<size_t> recorded_gate_count{0}; // recorded_gates.size(), read without mu
    // In Runtime::objects. Cleared with Runtime::mu held when it leaves the table,
    // read without mu by find_stream()'s per-thread cache.
    std::atomic<bool> listed{true};
    // The model its launches go into while it captures (aclmdlRICaptureBegin
    // to End), under `mu`; `capturing` says so without the lock.
    std::shared_ptr<Model> capture;
    std::atomic<bool> capturing{false};
    // The built model (aclmdlRIBindStream) its launches go into, under
    // `mu`, until aclmdlRIUnbindStream or the model's destroy; `bound`
    // says so without the lock.
    std::shared_ptr<Model> bound_model;
    std::atomic<bool> bound{false};
    // The failure of work the runtime ran for this stream on a thread of
    // its own (a built model's run of aclmdlRIExecuteAsync, an indirect
    // copy), for its next synchronize.
    std::atomic<aclError> run_error{ACL_SUCCESS};
};

// True on a thread running a built model: its launches on the model's
// streams are the model's work, run, not recorded.
inline bool &running_model_here()
{
    static thread_local bool running = false;
    return running;
}

// Whether the stream's launches are recorded into a model now, not run:
// it captures, or it is bound to a built model and this thread is not
// running that model.
inline bool records(const Stream &s)
{
    return s.capturing.load(std::memory_order_acquire) ||
           (s.bound.load(std::memory_order_acquire) && !running_model_here());
}

// The keys an object is exported under: one per export's parameters (a
// memory range and its flags, a notify's flags), so that exporting the
// same thing again gives the same key while it is open.
using ExportKeys = std::map<std::string, std::string>; // parameters -> key

// A stream, event or notify object reachable from several devices' files:
// the home handle, and imports into other devices' files made on demand.
struct SharedObject : Object {
    SharedObject(Kind k, uint32_t dev, std::shared_ptr<const Device> d, ObjectHandle h)
        : Object(k, dev), dev(std::move(d)), home(std::move(h))
    {
    }
    const std::shared_ptr<const Device> dev;
    const ObjectHandle home;
    std::mutex mu; // protects imports, export_keys and dead
    std::map<uint32_t, ObjectHandle> imports;
    // Held across an export, so that one export at a time decides whether
    // an open key can be given again; taken before every other lock.
    std::mutex export_mu;
    ExportKeys export_keys; // revoked when it is destroyed
    bool dead = false;      // destroyed: no new keys
    bool imported = false; // opened by key: only its exporter shares it
};

// An event: the driver's EVENT object, whose latest record the host calls
// observe, plus the flag of CANN's hardware events that stream waits obey
// (Documentation/library.md, Events).
struct Event : SharedObject {
    Event(uint32_t dev, std::shared_ptr<const Device> d, ObjectHandle h, uint32_t f, bool t)
        : SharedObject(Kind::Event, dev, std::move(d), std::move(h)), flags(f), timing(t)
    {
    }
    const uint32_t flags;
    const bool timing;
    // Made by aclrtCreateEventExWithFlag: CANN's "new mode" events, which
    // read as complete until recorded and cannot be reset.
    bool ex = false;
    std::atomic<bool> recorded{false}; // recorded once at least
    // The ACL_EVENT_RECORD_* and ACL_EVENT_WAIT_* flag of the first record
    // and wait asked of it (-1: none yet): as in CANN, the other flag is
    // refused afterwards.
    std::atomic<int> record_flag{-1};
    std::atomic<int> wait_flag{-1};
    // Protects set, records, resets, gates, wait_points and destroyed; held
    // across a record's or wait's submit, so that records and waits take
    // effect in the order of the calls. Taken after Runtime::mu (and
    // Runtime::copy_mu, by the copier's resets), before Stream::mu and
    // SharedObject::mu.
    std::mutex latch_mu;
    // The flag: set by a record, cleared by aclrtResetEvent when its stream
    // reaches it (CANN's reset is a task of its stream) unless the latest
    // record is still to come then.
    bool set = false;
    uint64_t records = 0; // records asked for so far
    // Resets queued and not reached yet: a wait queued behind one on the
    // same stream, with no record asked for since, finds the flag clear.
    struct PendingReset {
        uint64_t stream; // token
        uint64_t id;
        uint64_t records; // Event::records when it was asked for
    };
    std::vector<PendingReset> resets;
    uint64_t next_reset = 1;
    // The stream waits made while the flag was clear, for the next record.
    std::vector<LatchGate> gates;
    // The stream waits for it queued and not yet seen over.
    std::vector<WaitPoint> wait_points;
    bool destroyed = false; // left the table: no more records or waits
};

struct Notify : SharedObject {
    Notify(uint32_t dev, std::shared_ptr<const Device> d, ObjectHandle h, uint32_t notify_id)
        : SharedObject(Kind::Notify, dev, std::move(d), std::move(h)), id(notify_id)
    {
    }
    const uint32_t id;
};

// VMM physical memory (aclrtMallocPhysical, or imported from a shareable
// handle): a buffer of its device, not mapped until aclrtMapMem.
struct Physical : Object {
    Physical(uint32_t dev, std::shared_ptr<const Device> d, BufferHandle b, uint64_t s,
             PageClass pc, const aclrtPhysicalMemProp &p)
        : Object(Kind::Physical, dev), dev(std::move(d)), buffer(std::move(b)), size(s),
          page_class(pc), prop(p)
    {
    }
    const std::shared_ptr<const Device> dev;
    const BufferHandle buffer;
    const uint64_t size;
    const PageClass page_class;
    const aclrtPhysicalMemProp prop;
    // Held across an export (which may wait for the broker), before mu.
    std::mutex export_mu;
    std::mutex mu;           // protects what follows
    int handle_refs = 1;     // aclrtMallocPhysical/Import + Retain - Free
    // The runtime's own mapping of the memory, made by the first copy into
    // host memory queued from it: the copier thread reads through it, so
    // that aclrtUnmapMem of the application's mapping cannot fault it.
    Mapping copy_view;
    uint64_t shareable = 0;  // its one shareable handle in this process
    std::string shared_key;  // the key that handle names
    UsageCharge charge;      // allocated here (not imported)
    bool imported = false;   // another process's (set before it is shared)
    // Fabric memory (a server with a fabric window, api_fabric.cpp): the
    // window's dma-buf of it, set before the object is published; and its
    // FABRIC handle once exported (under export_mu and mu), with the daemon
    // session that holds it (a broken session's exports are gone).
    UniqueFd fabric_memory;
    struct FabricExport {
        npuipc::fabric::Handle handle;
        uint64_t session = 0;
    };
    std::optional<FabricExport> fabric_export;
};

// One aclrtMalloc allocation: a buffer of its device mapped into the
// process; its address is the application's device pointer.
struct Allocation {
    uintptr_t base = 0;
    uint64_t size = 0;
    PageClass page_class = PageClass::Normal;
    uint32_t device = 0;
    std::shared_ptr<const Device> dev;
    BufferHandle buffer;
    Mapping mapping;
    // Imported by aclrtIpcMemImportByKey under this key (aclrtIpcMemClose
    // frees it, aclrtFree refuses it); empty for aclrtMalloc memory.
    std::string import_key;
    // The device address of host memory registered at this host address
    // (aclrtHostRegister; aclrtHostUnregister releases it, aclrtFree
    // refuses it); 0 for device memory.
    uintptr_t registered_host = 0;
    std::mutex mu; // protects peer, export_keys and dead
    std::map<uint32_t, BufferHandle> peer; // imports into other devices' files
    std::mutex export_mu;                   // as SharedObject's
    ExportKeys export_keys;                 // revoked when it is freed
    bool dead = false;                      // freed: no new keys
    // VMM: mapped by aclrtMapMem into a reservation (aclrtUnmapMem undoes
    // it; aclrtFree refuses it), from this physical memory.
    std::shared_ptr<Physical> physical;
    // False while an aclrtMemMapNoAccess mapping waits for aclrtMemSetAccess:
    // PROT_NONE for the host, refused to the device's work.
    std::atomic<bool> accessible{true};
    UsageCharge charge; // aclrtMalloc's (not imports, not VMM mappings)
    // aclrtMemAllocManaged's: the advice and prefetches of its 2 MiB
    // chunks (api_managed.cpp); set before the pointer is returned.
    std::shared_ptr<ManagedState> managed;
};

// aclrtReserveMemAddress: address space of the process kept PROT_NONE.
struct Reservation {
    uintptr_t base = 0;
    size_t size = 0;
};

struct DeviceState {
    std::shared_ptr<const Device> dev;
    int refs = 0; // aclrtSetDevice calls not reset; 0: opened for VMM memory only
    int users = 0; // VMM calls under way that opened it (not to be closed meanwhile)
    // aclrtSetDeviceResLimit's cube and vector core limits: a mock NPU has
    // none of either, so 0 is the only limit there is.
    uint32_t res_limit[2] = {0, 0};
    uint64_t default_context = 0;
    std::set<uint32_t> peers; // devices this one may access
    // A stream of the runtime's own for host-side records and resets.
    std::shared_ptr<Stream> helper;
    std::vector<std::unique_ptr<PooledEvent>> event_pool;
};

// Memory this process imported by key, shared by repeated imports.
struct MemoryImport {
    std::shared_ptr<Allocation> alloc;
    int refs = 0;
};

// The key of the runtime's host-function thread among the subscribers: no
// pthread_t is all ones.
constexpr uint64_t kRuntimeHostFuncThread = UINT64_MAX;

struct Subscriber {
    UniqueFd wake; // eventfd: a callback was launched on one of its streams
    std::set<uint64_t> streams;
    // Runs host functions (aclrtLaunchHostFunc), not callbacks: the
    // runtime's own thread, or one of aclrtSubscribeHostFunc.
    bool host_funcs = false;
    // The runtime's own thread: its entry stays while it has no stream.
    bool runtime_thread = false;
};

class Runtime {
public:
    static Runtime &get();

    // Tables.
    std::mutex mu;
    // aclInit calls not yet matched by aclFinalizeReference; aclFinalize
    // ends them all. Written with init_mu() and mu held.
    uint64_t init_references = 0;
    // This process is a fork child; aclInit resets. Written with mu held,
    // read without it on every call.
    std::atomic<bool> forked{false};
    int default_device = -1; // aclInit's defaultDevice, as an npuipc index
    uint32_t device_count = 0; // visible ones
    bool device_count_known = false;
    std::vector<uint32_t> visible; // npuipc index of each application id
    bool visible_env_read = false;  // ASCEND_RT_VISIBLE_DEVICES, read once
    bool visible_env_set = false;
    std::string visible_env;
    std::map<uint32_t, DeviceState> devices;
    std::unordered_map<uint64_t, std::shared_ptr<Object>> objects;
    std::map<uint64_t, Subscriber> subscribers; // by pthread_t
    // Queued copies into host memory, by id, and the copier thread's
    // wake-up eventfd (invalid until the first such copy starts it).
    std::map<uint64_t, HostCopy> host_copies;
    uint64_t next_host_copy = 1;
    UniqueFd copier_wake;
    // Held by the copier thread from taking a copy out of host_copies until
    // its bytes are moved; taken before mu, never under it.
    std::mutex copy_mu;
    // By key and importing device ("key/device").
    std::map<std::string, MemoryImport> memory_imports;
    // Keys of objects released under mu, revoked by revoke_pending() once
    // mu is dropped: the transport's lock is never taken under mu, so that
    // a revocation never waits on the transport while holding the tables.
    std::vector<std::string> pending_revocations;
    std::vector<uint64_t> pending_unnames; // VMM shareable handles, likewise
    std::vector<npuipc::fabric::Handle> pending_fabric_releases; // FABRIC handles, likewise
    uint64_t next_token = 0x10000;
    uint32_t next_notify_id = 1;
    // aclrtSetOpWaitTimeout: seconds a wait without its own timeout may
    // last (0: for ever), for the waits queued after it.
    std::atomic<uint32_t> op_wait_timeout_s{0};

    // Device memory by address, and MallocHost memory.
    std::shared_mutex mem_mu;
    std::map<uintptr_t, std::shared_ptr<Allocation>> allocations;
    std::map<uintptr_t, size_t> host_allocations;
    std::map<uintptr_t, Reservation> reservations; // by base, under mem_mu
    // By npuipc device index and UsageKind; with mu held. Never dropped, so
    // that a peak outlives a reset of its device.
    std::map<uint32_t, std::array<std::shared_ptr<MemUsage>, kUsageKinds>> mem_usage;
    std::shared_ptr<MemUsage> usage_of(uint32_t device, UsageKind kind);

    // With mu held.
    uint64_t add_object(std::shared_ptr<Object> obj);
    template <typename T> std::shared_ptr<T> find(const void *handle, Kind kind)
    {
        auto it = objects.find(reinterpret_cast<uintptr_t>(handle));
        if (it == objects.end() || it->second->kind != kind)
            return nullptr;
        return std::static_pointer_cast<T>(it->second);
    }
    aclError refresh_device_count();
    // ACL_ERROR_RT_INVALID_DEVICEID, with the reason, unless `id` names a
    // device visible to this process; `index` is then its npuipc index.
    // Applications number devices logically, as ASCEND_RT_VISIBLE_DEVICES
    // lists them; the runtime keeps npuipc indices everywhere inside
    // (device states, memory, peers, the device tags of IPC keys).
    aclError check_device_id(int32_t id, uint32_t &index);
    aclError check_device_id(int32_t id);
    // The application's id of npuipc device `index`; -1 if not visible.
    int32_t logical_id(uint32_t index) const;
    aclError set_device(uint32_t index);
    // The device's state, opened without setting it (refs stays 0) for
    // what lives on a device rather than in a context: VMM physical memory.
    aclError open_device(uint32_t index, DeviceState *&out);
    // Releases a device this process opened without setting it, once
    // nothing of it is left.
    void close_device_if_unused(uint32_t index);
    // `forget_peers`: other devices lose their peer access to it.
    void release_device(uint32_t index, bool forget_peers = true);
    // The calling thread's current context (applying aclInit's default
    // device); ACL_ERROR_RT_CONTEXT_NULL if none.
    aclError current_context(std::shared_ptr<Context> &out);
    // The device of the calling thread's current context; takes mu.
    aclError current_device(uint32_t &index, std::shared_ptr<const Device> &dev);
    // The stream a handle names; NULL is the current context's default one.
    aclError resolve_stream(aclrtStream handle, std::shared_ptr<Stream> &out);
    aclError helper_stream(uint32_t device, std::shared_ptr<Stream> &out);
    // In a fork child: closes its copies of the parent's DRM fds at once
    // (the atfork handler); discard_after_fork() forgets the rest at aclInit.
    void close_drm_fds_after_fork();
    void discard_after_fork();

    // Without mu held: revokes the keys release_device() collected.
    void revoke_pending();

    // Without mu held.
    std::shared_ptr<Allocation> find_allocation(const void *ptr, size_t len);
    bool peer_enabled(uint32_t from, uint32_t to);
};

// The calling thread's current context token.
uint64_t &thread_context();

// The handle a shared object has in the file of `stream`'s device
// (imported on demand).
aclError handle_on(SharedObject &obj, const Stream &stream, uint32_t &out);
// The buffer handle an allocation has in the file of `stream`'s device;
// other devices' memory needs peer access (ACL_ERROR_RT_NO_PERMISSION
// otherwise).
aclError buffer_on(Runtime &rt, Allocation &alloc, const Stream &stream, uint32_t &out);
// The same for the file `dev` of device `device`.
aclError buffer_on_device(Runtime &rt, Allocation &alloc, uint32_t device,
                          const std::shared_ptr<const Device> &dev, uint32_t &out);

// Learns whether PID validation can work here (the initial PID namespace).
void note_pid_namespace();
// Ends sharing under keys of an allocation or object that is going away
// (aclrtFree, destroy, device release). Without Runtime::mu held.
void revoke_keys(const std::vector<std::string> &keys);
// With the object's own lock held: marks it dead and hands over its keys.
std::vector<std::string> take_keys_of_dead(ExportKeys &keys, bool &dead);

// Looks a handle up, taking Runtime::mu: NULL is ACL_ERROR_INVALID_PARAM,
// anything but a live object of `kind` ACL_ERROR_RT_INVALID_HANDLE.
template <typename T>
aclError find_object(const void *handle, Kind kind, const char *what, std::shared_ptr<T> &out);
// The stream a handle names (NULL: the current context's default stream),
// taking Runtime::mu.
aclError find_stream_locked(aclrtStream handle, std::shared_ptr<Stream> &out);

// The last stream the calling thread named by handle. A weak reference
// keeps no stream alive; Stream::listed says it is still the handle's.
struct StreamCache {
    uint64_t token = 0;
    std::weak_ptr<Stream> stream;
};
inline StreamCache &stream_cache()
{
    __attribute__((tls_model("initial-exec"))) static thread_local StreamCache cache;
    return cache;
}

// find_stream_locked() without the lock when the thread names the stream
// it named last: a stream's synchronize, copies and records come in runs,
// and a lookup under the runtime's lock would cost an empty
// aclrtSynchronizeStream about a tenth of its time.
inline aclError find_stream(aclrtStream handle, std::shared_ptr<Stream> &out)
{
    StreamCache &cache = stream_cache();
    if (handle && cache.token == reinterpret_cast<uintptr_t>(handle)) {
        out = cache.stream.lock();
        if (out && out->listed.load(std::memory_order_acquire))
            return ACL_SUCCESS;
    }
    return find_stream_locked(handle, out);
}

// Device memory of the current context's device, as aclrtMalloc makes it
// (arguments checked), and host memory as aclrtMallocHost makes it.
// `managed`: aclrtMemAllocManaged's state, set before the memory is
// published.
aclError malloc_device(void **devPtr, size_t size, aclrtMemMallocPolicy policy,
                       std::shared_ptr<ManagedState> managed = nullptr);
aclError malloc_host(void **hostPtr, size_t size);
// The aclrtMallocHost allocation `ptr` lies in: false if none.
bool host_allocation_of(Runtime &rt, const void *ptr, uintptr_t &base, size_t &size);

// A stream of the current context with these (checked) priority and
// ACL_STREAM_* flags, into *stream. With Runtime::mu not held. `internal`:
// the runtime's own (a conditional model's runner), of which the
// application's stream-state callbacks hear nothing.
aclError create_stream(aclrtStream *stream, uint32_t priority, uint32_t flags, bool internal = false);

// Runs the due callbacks or host functions of the streams thread `self`
// subscribed, waiting up to `timeout` ms (-1: forever) for one: what
// aclrtProcessReport and aclrtProcessHostFunc do. `host_funcs` is the
// kind of subscription the thread must have (ACL_ERROR_RT_THREAD_SUBSCRIBE
// otherwise).
aclError process_host_tasks(Runtime &rt, uint64_t self, int32_t timeout, bool host_funcs);
// Queues a callback or host function on a stream subscribed by a thread
// of the kind `host_funcs` (ACL_ERROR_RT_STREAM_NO_CB_REG if none by then,
// ACL_ERROR_RT_STREAM_SUBSCRIBE if another kind). Without Runtime::mu.
aclError queue_host_task(Runtime &rt, const std::shared_ptr<Stream> &s, aclrtCallback fn, void *data,
                         bool block, bool host_funcs);

// In a fork child: the settings of api_sys_param.cpp back to their defaults.
void reset_settings_after_fork();

// The number of the last task this thread queued, on any of the
// application's streams: the driver's number of the job (the stream's
// first job is 1), or a built model's number of the task it recorded on a
// bound stream (its first task is 1); 0xFFFFFFFF before any.
inline uint32_t &thread_last_task_id()
{
    static thread_local uint32_t id = 0xFFFFFFFF;
    return id;
}

// Stream operations shared by the API files.
aclError submit(Stream &stream, const Job *jobs, uint32_t count);
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT unless the stream's npuipc.ko has uapi
// `version` or later, which brought `what`.
aclError require_uapi(const Stream &stream, uint32_t version, const char *what);
// The stream a handle names (NULL: the default one), which must be of the
// calling thread's current context (ACL_ERROR_RT_STREAM_CONTEXT).
aclError stream_of_current_context(aclrtStream handle, std::shared_ptr<Stream> &out);
inline aclError submit(Stream &stream, const Job &job)
{
    return submit(stream, &job, 1);
}
// The failure (or the task error) of a WAIT that synchronize() made.
// The rest of synchronize() when the wait did not find the stream idle and
// healthy: `gates` latch gates were recorded before it, `failed_job` is
// what the wait reported.
aclError synchronize_failed(Stream &stream, const Result<int> &waited, size_t gates,
                            uint32_t failed_job);
// Forgets the oldest `count` latch gates recorded on the stream: their
// records are done.
void forget_recorded_gates(Stream &stream, size_t count);
// ACL_SUCCESS, or the sticky error of the stream's context (STOP).
aclError stopped_context_error(const Stream &stream);
// The failure `err` of work the runtime ran for the stream on a thread of
// its own (Stream::run_error), as a synchronize reports it: a context that
// stops on failure stops, as for a failed job.
aclError runtime_work_failed(Stream &stream, aclError err);
// ACL_ERROR_RT_STREAM_ABORT if an aclrtStreamAbort of the stream began
// after `aborts_before` was read or is under way.
aclError overlapping_abort(const Stream &stream, uint64_t aborts_before);
inline aclError synchronize(Stream &stream, int64_t timeout_ns)
{
    const size_t gates = stream.recorded_gate_count.load(std::memory_order_acquire);
    const uint64_t aborts = stream.aborts.load(std::memory_order_acquire);
    uint32_t failed_job = 0;
    Result<int> r = stream.dev->wait(stream.handle.get(), timeout_ns, &failed_job);
    if (aclError err = overlapping_abort(stream, aborts))
        return err;
    if (r.ok() && r.value() == 0) {
        if (gates)
            forget_recorded_gates(stream, gates);
        if (aclError err = stream.run_error.exchange(ACL_SUCCESS, std::memory_order_acq_rel))
            return runtime_work_failed(stream, err);
        return stopped_context_error(stream);
    }
    return synchronize_failed(stream, r, gates, failed_job);
}
// The stream a handle names; NULL is the current context's default stream,
// and without a current context CANN refuses it as a bad parameter
// (ACL_ERROR_RT_PARAM_INVALID), as its failure-mode and abort calls do.
aclError stream_or_default(aclrtStream handle, std::shared_ptr<Stream> &out);
// aclrtSetStreamFailureMode's work (api_failure.cpp).
aclError set_failure_mode(const Stream &stream, uint64_t mode);
// Aborts the stream's queued work in the driver (aclrtStreamAbort), drops
// its queued copies into host memory and releases the streams waiting for
// its records. Without Runtime::mu held.
Status abort_stream_work(Runtime &rt, Stream &stream);
// Gives a new stream of `ctx` the context's failure mode, in the driver too.
aclError apply_failure_mode(const Context &ctx, Stream &stream);
// Calls the registered exception callbacks (api_exception.cpp) for a
// failed task of `stream` that a synchronize found.
void report_exception(const Stream &stream, aclError code, uint32_t failed_job);
// Records each gate through its opener, letting its stream go on.
void open_latch_gates(const std::vector<LatchGate> &gates);
// Opens and forgets every latch gate recorded on the stream: it failed, or
// is going away, so that its records may never run.
void open_recorded_gates(Stream &stream);
// With Runtime::mu held: drops the stream's pending callbacks, opening the
// gates of BLOCK ones so that the stream never waits for them, and ends its
// subscription, waking the subscribed thread.
void drop_callbacks_locked(Runtime &rt, Stream &stream);
// With Runtime::mu held: drops the stream's queued copies into host memory
// (the stream is going away), opening their gates.
// Only those queued before copy id `before` (Runtime::next_host_copy).
void drop_host_copies_locked(Runtime &rt, Stream &stream, uint64_t before = UINT64_MAX);
// Records a gated host task's gate, letting its stream go on.
void open_gate(const HostTask &task);
// A point on `stream` for a host task: the pooled event recorded there
// and, when `gated`, the gate notify the stream waits on after it; the
// device's runtime stream is made now so that opening the gate cannot fail
// later. Without Runtime::mu held; the caller submits point_jobs().
aclError make_point(Runtime &rt, Stream &stream, bool gated, HostTask &task);
// Fills `jobs` (room for two) with the record and (gated) wait that place
// `task` on its stream; returns how many to submit.
uint32_t point_jobs(const HostTask &task, Job *jobs);
// Makes the copier thread look at Runtime::host_copies again.
void wake_copier_locked(Runtime &rt);
// Queues `copy` (its stream, bytes and memory set; `point` made here) in
// its stream's order, without waiting for the stream. Device memory is
// reached through mappings of the runtime's own where the application's
// may go first (VMM).
aclError queue_copy(Runtime &rt, HostCopy copy);
// `ptr` inside `alloc`, through a mapping that lives as long as `alloc`
// (for VMM memory the runtime's own view of its physical memory).
aclError stable_address(const Allocation &alloc, const void *ptr, void *&out);
void destroy_stream_locked(Runtime &rt, uint64_t token);
// Returns once a copy into host memory that the copier thread took before
// the caller dropped its stream's copies has moved its bytes, so that the
// caller may free the destination. Without Runtime::mu held.
void wait_for_running_copy(Runtime &rt);
std::unique_ptr<PooledEvent> acquire_pooled_event(Runtime &rt, uint32_t device);
void release_pooled_event(Runtime &rt, uint32_t device, std::unique_ptr<PooledEvent> ev);

// Starts `fn` on a detached thread of the runtime's own. The application's
// signals are for its own threads: it starts with them blocked, all but
// those its own faults raise (which the application's crash handlers must
// see). ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, naming `what`, if it cannot start.
aclError start_runtime_thread(const char *what, std::function<void()> fn);

// Runs an API entry: names the function in error messages, refuses calls
// in a fork child (unless `in_fork_child` is allowed, as for aclInit), and
// turns exceptions into error codes: none crosses the C API.
template <typename Fn> aclError api(const char *name, Fn &&fn, bool in_fork_child = false);
// The snapshot gate (api_snapshot.cpp): an outermost call that starts work
// passes it, counted while it runs, so that aclrtSnapShotProcessLock can wait
// for the calls under way; while the process is locked it waits there
// (unless its thread locked). Returns whether the call was counted.
bool enter_snapshot_gate(const char *name);
void leave_snapshot_gate();
// aclFinalize: a lock left behind ends.
void end_snapshot_lock();

// Counts an outermost call through the snapshot gate.
class SnapshotGate {
public:
    explicit SnapshotGate(const char *name) : counted_(!in_api_call() && enter_snapshot_gate(name)) {}
    ~SnapshotGate()
    {
        if (counted_)
            leave_snapshot_gate();
    }
    SnapshotGate(const SnapshotGate &) = delete;
    SnapshotGate &operator=(const SnapshotGate &) = delete;

private:
    const bool counted_;
};

} // namespace npuipc_rt

#include "aclrt/state_callbacks.h"

namespace npuipc_rt {
using namespace npuipc;

// With Runtime::mu held: a new driver object of `type` on
// the device of the calling thread's current context, as the create calls
// make them; `op` and `what` describe a failure.
aclError create_in_context(Runtime &rt, ObjectType type, Op op, const char *what,
                           std::shared_ptr<Context> &ctx, std::shared_ptr<const Device> &dev,
                           ObjectHandle &handle);

template <typename T>
aclError find_object(const void *handle, Kind kind, const char *what, std::shared_ptr<T> &out)
{
    if (!handle)
        return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", what);
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    out = rt.find<T>(handle, kind);
    if (!out)
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "%p is not a live %s", handle, what);
    return ACL_SUCCESS;
}

template <typename Fn> aclError api(const char *name, Fn &&fn, bool in_fork_child)
{
    // aclrtSnapShotProcessLock holds the other threads' calls until unlock.
    SnapshotGate gate(name);
    ApiScope scope(name);
    if (!in_fork_child && Runtime::get().forked.load(std::memory_order_relaxed))
        return fail(ACL_ERROR_UNINITIALIZE,
                    "this process is a fork child: the parent's runtime cannot be used; call aclInit first");
    aclError rc;
    try {
        rc = fn();
    } catch (const std::bad_alloc &) {
        rc = fail(ACL_ERROR_BAD_ALLOC, "out of host memory");
    } catch (...) {
        rc = fail(ACL_ERROR_INTERNAL_ERROR, "unexpected internal error");
    }
    // Whatever happened, with no lock held: an API call is never made under
    // one (it would deadlock on Runtime::mu), nested ones included.
    run_deferred_state_callbacks();
    return rc;
}

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_RUNTIME_H
