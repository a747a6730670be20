// SPDX-License-Identifier: MIT
// Sharing by key between processes: IPC memory, IPC events and notifies.
//
// The exporter publishes a way to make the driver's fd (a dma-buf of the
// exported range, an event fd, a notify fd) under a key; the importer's
// library fetches that fd over the exporter's Unix socket (npuipc/ipc.h)
// and imports it into its own device's file. Fds are made per fetch, so a
// live key costs no fd. Documentation/ipc.md has the whole model.
#include <cerrno>
#include <cstring>
#include <vector>
#include <unistd.h>

#include "aclrt/fabric_memory.h"
#include "aclrt/runtime.h"
#include "npuipc/ipc.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace npuipc_rt {

void revoke_keys(const std::vector<std::string> &keys)
{
    for (const std::string &key : keys)
        (void)ipc::revoke(key);
}

// Validation by PID needs the exporter, or the broker serving its keys, in
// the initial PID namespace: the PIDs importers list come from
// aclrtDeviceGetBareTgid.
void note_pid_namespace()
{
    bool initial = ipc::in_initial_pid_namespace();
    // A broker, in the initial namespace, checks the importers itself.
    if (!initial && !ipc::publishes_to_broker())
        log_warning("this process is not in the initial PID namespace: keys exported with PID "
                    "validation refuse every importer (use DISABLE_PID_VALIDATION)");
    ipc::set_pid_namespace_ok(initial);
}

std::vector<std::string> take_keys_of_dead(ExportKeys &keys, bool &dead)
{
    dead = true;
    std::vector<std::string> taken;
    for (auto &entry : keys)
        taken.push_back(std::move(entry.second));
    keys.clear();
    return taken;
}

} // namespace npuipc_rt

namespace {

constexpr int kFetchTimeoutMs = 5000;
constexpr size_t kKeyLen = 65; // 64 characters and the NUL

// Whether this process exported `key` as an object of `kind`, still open:
// the transport keeps the one record of the keys a process has open.
bool exported_as(const std::string &key, ipc::Kind kind)
{
    return ipc::published_here(key, kind);
}

// The open key the owner (an Allocation or SharedObject, whose mutex is
// `mu`) is already exported under with these parameters, or "".
std::string open_key(std::mutex &mu, const ExportKeys &keys, const std::string &params,
                     ipc::Kind kind)
{
    std::string key;
    {
        std::lock_guard<std::mutex> lock(mu);
        auto it = keys.find(params);
        if (it != keys.end())
            key = it->second;
    }
    // Closed by the exporter (aclrtIpcMemClose), or gone with the broker
    // that served it: a new key replaces it.
    return !key.empty() && exported_as(key, kind) ? key : std::string();
}

// Records a key published for `owner` with these parameters (replacing a
// closed one: the caller holds the owner's export_mu), unless the owner
// died meanwhile: then the key is revoked at once and the export fails as
// if it came after.
aclError keep_key(const std::string &key, std::mutex &mu, ExportKeys &keys,
                  const std::string &params, const bool &dead)
{
    bool died = false;
    std::string replaced;
    {
        std::lock_guard<std::mutex> lock(mu);
        died = dead;
        if (!died) {
            std::string &slot = keys[params];
            replaced.swap(slot);
            slot = key;
        }
    }
    // The transport after dropping the owner's lock (a revoke may wait for
    // the broker).
    if (died) {
        (void)ipc::revoke(key);
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "the object was released while being exported");
    }
    if (!replaced.empty())
        (void)ipc::revoke(replaced); // closed, or gone with its broker
    return ACL_SUCCESS;
}

aclError copy_key(const std::string &text, char *key, size_t len)
{
    if (text.size() + 1 > len)
        return fail(ACL_ERROR_INVALID_PARAM, "the key needs %zu bytes, len is %zu", text.size() + 1, len);
    std::memcpy(key, text.c_str(), text.size() + 1);
    return ACL_SUCCESS;
}

// memory_imports is keyed by key and device: an import onto another
// device is another mapping.
std::string import_slot(const std::string &key, uint32_t device)
{
    return key + "/" + std::to_string(device);
}

aclError current(std::shared_ptr<Context> &ctx, std::shared_ptr<const Device> &dev)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    if (aclError err = rt.current_context(ctx))
        return err;
    dev = rt.devices.at(ctx->device).dev;
    return ACL_SUCCESS;
}

// Peer access rule of an import from device `from` into device `to`.
aclError check_import_peer(uint32_t to, uint32_t from, bool enable)
{
    if (to == from)
        return ACL_SUCCESS;
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    auto it = rt.devices.find(to);
    if (it == rt.devices.end())
        return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %u was reset meanwhile", to);
    if (enable) {
        it->second.peers.insert(from);
        return ACL_SUCCESS;
    }
    if (!it->second.peers.count(from))
        return fail(ACL_ERROR_RT_NO_PERMISSION,
                    "the object lives on device %u: enable peer access from device %u first, "
                    "or import with the ENABLE_PEER_ACCESS flag",
                    from, to);
    return ACL_SUCCESS;
}

// Publishes an event or notify: its fd is made by each fetch, for as long
// as the object lives here. Once per object and flags: again, the same key.
aclError publish_object(SharedObject &obj, ipc::Kind kind, bool validate, std::string &text)
{
    const std::string params = validate ? "validated" : "any";
    std::lock_guard<std::mutex> export_lock(obj.export_mu);
    text = open_key(obj.mu, obj.export_keys, params, kind);
    if (!text.empty())
        return ACL_SUCCESS;
    std::weak_ptr<Object> weak;
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.objects.find(obj.token);
        if (it == rt.objects.end())
            return fail(ACL_ERROR_RT_INVALID_HANDLE, "the object was destroyed");
        weak = it->second;
    }
    if (validate)
        note_pid_namespace();
    // The object is held while its fd is made: a destroyed object's handle
    // number may name another object by then.
    auto make_fd = [weak]() -> Result<UniqueFd> {
        std::shared_ptr<Object> o = weak.lock();
        if (!o)
            return Status::from_errno(ESRCH);
        auto &shared = static_cast<SharedObject &>(*o);
        return shared.dev->export_object(shared.home.get());
    };
    Result<std::string> key = ipc::publish(kind, make_fd, validate, obj.device);
    if (!key.ok())
        return fail_ipc(key.error(), "publishing the key");
    if (aclError err = keep_key(key.value(), obj.mu, obj.export_keys, params, obj.dead))
        return err;
    text = key.value();
    return ACL_SUCCESS;
}

aclError allow_pids(const std::string &key, int32_t *pid, size_t num)
{
    if (!pid)
        return fail(ACL_ERROR_INVALID_PARAM, "pid is NULL");
    if (num == 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "num is 0");
    for (size_t i = 0; i < num; i++)
        if (pid[i] <= 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "pid[%zu] = %d is not a process id", i, pid[i]);
    Status st = ipc::allow(key, pid, num);
    if (!st.ok()) {
        if (st.error() == ENOENT)
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that exported a key may list importers, while it is open");
        return fail_ipc(st.error(), "listing importers");
    }
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags)
{
    return api("aclrtIpcMemGetExportKey", [&] {
        if (!devPtr || !key)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr and key must not be NULL");
        if (size == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
        if (len < kKeyLen)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "len %zu: a key needs 65 bytes", len);
        if (flags & ~ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown export flags 0x%llx",
                        static_cast<unsigned long long>(flags));
        // As CANN: a thread exports in a context, whichever device the memory is on.
        std::shared_ptr<Context> ctx;
        std::shared_ptr<const Device> dev;
        if (aclError err = current(ctx, dev))
            return err;
        Runtime &rt = Runtime::get();
        std::shared_ptr<Allocation> alloc = rt.find_allocation(devPtr, size);
        if (!alloc)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "%zu bytes at %p are not inside one device allocation", size, devPtr);
        if (!alloc->import_key.empty())
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "memory imported from another process cannot be exported again");
        if (alloc->physical)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "VMM memory is shared by aclrtMemExportToShareableHandle");
        if (alloc->registered_host)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "registered host memory is the process's own: it is not shared by key");
        uint64_t page = page_size(alloc->page_class);
        uint64_t offset = reinterpret_cast<uintptr_t>(devPtr) - alloc->base;
        // Allocations are mapped at addresses aligned to their page size:
        // the address and the offset agree.
        if (reinterpret_cast<uintptr_t>(devPtr) % page || offset % page || size % page)
            return fail(ACL_ERROR_RT_ADDR_UNALIGNED,
                        "devPtr and size must be multiples of the memory's page size (%llu bytes)",
                        static_cast<unsigned long long>(page));
        bool validate = !(flags & ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION);
        // Once per range and flags: again, the same key while it is open.
        const std::string params =
            std::to_string(offset) + "+" + std::to_string(size) + (validate ? "/validated" : "/any");
        std::lock_guard<std::mutex> export_lock(alloc->export_mu);
        std::string open = open_key(alloc->mu, alloc->export_keys, params, ipc::Kind::Memory);
        if (!open.empty())
            return copy_key(open, key, len);
        if (validate)
            note_pid_namespace();
        std::weak_ptr<Allocation> weak = alloc;
        auto make_fd = [weak, offset, size]() -> Result<UniqueFd> {
            std::shared_ptr<Allocation> a = weak.lock();
            if (!a)
                return Status::from_errno(ESRCH);
            return a->dev->export_buffer(a->buffer.get(), offset, size);
        };
        Result<std::string> text = ipc::publish(ipc::Kind::Memory, make_fd, validate, alloc->device);
        if (!text.ok())
            return fail_ipc(text.error(), "publishing the key");
        if (aclError err = keep_key(text.value(), alloc->mu, alloc->export_keys,
                                    params, alloc->dead))
            return err;
        return copy_key(text.value(), key, len);
    });
}

aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num)
{
    return api("aclrtIpcMemSetImportPid", [&] {
        if (!key)
            return fail(ACL_ERROR_INVALID_PARAM, "key is NULL");
        if (pid && num && !exported_as(key, ipc::Kind::Memory))
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that exported a memory key may list importers, while it is open");
        return allow_pids(key, pid, num);
    });
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags)
{
    return api("aclrtIpcMemImportByKey", [&] {
        if (!devPtr || !key)
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr and key must not be NULL");
        if (flags & ~ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown import flags 0x%llx",
                        static_cast<unsigned long long>(flags));
        Result<ipc::Key> parsed = ipc::parse_key(key);
        if (!parsed.ok())
            return fail_ipc(parsed.error(), "reading the key");
        Runtime &rt = Runtime::get();
        std::shared_ptr<Context> ctx;
        std::shared_ptr<const Device> dev;
        if (aclError err = current(ctx, dev))
            return err;
        const std::string slot = import_slot(parsed.value().text, ctx->device);
        {
            // Imported already onto this device: the same mapping, one more
            // reference.
            std::lock_guard<std::mutex> lock(rt.mu);
            auto it = rt.memory_imports.find(slot);
            if (it != rt.memory_imports.end()) {
                it->second.refs++;
                *devPtr = reinterpret_cast<void *>(it->second.alloc->base);
                return ACL_SUCCESS;
            }
        }
        Result<ipc::Fetched> got = ipc::fetch(parsed.value(), ipc::Kind::Memory, kFetchTimeoutMs);
        if (!got.ok())
            return fail_ipc(got.error(), "importing the key");
        bool enable = flags & ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS;
        if (aclError err = check_import_peer(ctx->device, got.value().tag, enable))
            return err;
        Peer peer = ctx->device != got.value().tag ? Peer::Allow : Peer::Refuse;
        Result<BufferHandle> h = import_buffer(dev, got.value().fd.get(), peer);
        if (!h.ok())
            return fail_errno(h.error(), Op::Generic, "importing the memory into the device");
        auto alloc = std::make_shared<Allocation>();
        alloc->buffer = std::move(h.value());
        Result<BufferInfo> info = dev->buffer_info(alloc->buffer.get());
        if (!info.ok())
            return fail_errno(info.error(), Op::Generic, "querying the imported memory");
        if (info.value().foreign)
            return fail(ACL_ERROR_RT_IPC_ERROR, "the exporter sent memory that is not npuipc's");
        uint64_t page = page_size(info.value().page_class);
        Result<Mapping> map = Mapping::map(*dev, info.value().mmap_offset, info.value().size, page);
        if (!map.ok())
            return fail_errno(map.error(), Op::AllocMemory, "mapping the imported memory");
        alloc->mapping = std::move(map.value());
        alloc->base = reinterpret_cast<uintptr_t>(alloc->mapping.addr());
        alloc->size = info.value().size;
        alloc->page_class = info.value().page_class;
        alloc->device = ctx->device;
        alloc->dev = dev;
        alloc->import_key = parsed.value().text;
        std::lock_guard<std::mutex> lock(rt.mu);
        auto state = rt.devices.find(ctx->device);
        if (state == rt.devices.end() || state->second.dev != dev)
            return fail(ACL_ERROR_RT_CONTEXT_NULL, "device %u was reset meanwhile", ctx->device);
        auto inserted = rt.memory_imports.emplace(slot, MemoryImport{alloc, 0});
        // Another thread imported the same key meanwhile: share its mapping.
        inserted.first->second.refs++;
        if (inserted.second) {
            std::unique_lock<std::shared_mutex> mlock(rt.mem_mu);
            rt.allocations.emplace(alloc->base, alloc);
        }
        *devPtr = reinterpret_cast<void *>(inserted.first->second.alloc->base);
        return ACL_SUCCESS;
    });
}

aclError aclrtIpcMemClose(const char *key)
{
    return api("aclrtIpcMemClose", [&] {
        if (!key)
            return fail(ACL_ERROR_INVALID_PARAM, "key is NULL");
        Result<ipc::Key> parsed = ipc::parse_key(key);
        if (!parsed.ok())
            return fail_ipc(parsed.error(), "reading the key");
        const std::string &text = parsed.value().text;
        Runtime &rt = Runtime::get();
        std::shared_ptr<Allocation> unmapped;
        {
            // An importer's close (in the exporting process too, which may
            // import its own key: importers close first).
            std::lock_guard<std::mutex> lock(rt.mu);
            auto it = rt.memory_imports.end();
            uint64_t &current_ctx = thread_context();
            auto ctx = rt.objects.find(current_ctx);
            if (ctx != rt.objects.end())
                it = rt.memory_imports.find(import_slot(text, ctx->second->device));
            if (it == rt.memory_imports.end()) {
                it = rt.memory_imports.lower_bound(text + "/");
                if (it != rt.memory_imports.end() && it->first.compare(0, text.size() + 1, text + "/") != 0)
                    it = rt.memory_imports.end();
            }
            if (it != rt.memory_imports.end()) {
                if (--it->second.refs == 0) {
                    unmapped = it->second.alloc;
                    rt.memory_imports.erase(it);
                    std::unique_lock<std::shared_mutex> mlock(rt.mem_mu);
                    rt.allocations.erase(unmapped->base);
                }
                return ACL_SUCCESS;
            }
        }
        // The exporter's close: no new imports; importers keep theirs.
        if (!exported_as(text, ipc::Kind::Memory))
            return fail(ACL_ERROR_RT_INVALID_HANDLE,
                        "the key is neither imported nor exported by this process as memory");
        revoke_keys({text});
        return ACL_SUCCESS;
    });
}

aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle)
{
    return api("aclrtIpcGetEventHandle", [&] {
        if (!handle)
            return fail(ACL_ERROR_INVALID_PARAM, "handle is NULL");
        std::shared_ptr<Event> ev;
        if (aclError err = find_object(event, Kind::Event, "event", ev))
            return err;
        if (!(ev->flags & ACL_EVENT_IPC))
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "only events made by aclrtCreateEventExWithFlag(ACL_EVENT_IPC) can be shared");
        if (ev->imported)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "an event opened from another process's handle cannot be shared again");
        // CANN's event handles carry no PID list: whoever holds the handle
        // (and runs as the same user) may open it.
        std::string text;
        if (aclError err = publish_object(*ev, ipc::Kind::Event, false, text))
            return err;
        std::memset(handle->reserved, 0, sizeof(handle->reserved));
        return copy_key(text, handle->reserved, sizeof(handle->reserved));
    });
}

aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event)
{
    return api("aclrtIpcOpenEventHandle", [&] {
        if (!event)
            return fail(ACL_ERROR_INVALID_PARAM, "event is NULL");
        Result<ipc::Key> parsed = ipc::parse_key(handle.reserved, sizeof(handle.reserved));
        if (!parsed.ok())
            return fail_ipc(parsed.error(), "reading the event handle");
        std::shared_ptr<Context> ctx;
        std::shared_ptr<const Device> dev;
        if (aclError err = current(ctx, dev))
            return err;
        Result<ipc::Fetched> got = ipc::fetch(parsed.value(), ipc::Kind::Event, kFetchTimeoutMs);
        if (!got.ok())
            return fail_ipc(got.error(), "opening the event handle");
        ObjectType type{};
        Result<ObjectHandle> h = import_object(dev, got.value().fd.get(), &type);
        if (!h.ok())
            return fail_errno(h.error(), Op::CreateEvent, "importing the event");
        ObjectHandle handle_owner = std::move(h.value());
        if (type != ObjectType::Event)
            return fail(ACL_ERROR_RT_IPC_ERROR, "the exporter sent something else than an event");
        auto ev = std::make_shared<Event>(ctx->device, dev, std::move(handle_owner), ACL_EVENT_IPC,
                                          false);
        ev->imported = true;
        // Its records are the exporter's: waits always ask the driver.
        ev->recorded = true;
        ev->set = true;
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        *event = reinterpret_cast<aclrtEvent>(rt.add_object(ev));
        return ACL_SUCCESS;
    });
}

aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t flags)
{
    return api("aclrtNotifyGetExportKey", [&] {
        if (!key)
            return fail(ACL_ERROR_INVALID_PARAM, "key is NULL");
        if (len < kKeyLen)
            return fail(ACL_ERROR_INVALID_PARAM, "len %zu: a key needs 65 bytes", len);
        if (flags & ~ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown export flags 0x%llx",
                        static_cast<unsigned long long>(flags));
        std::shared_ptr<Notify> n;
        if (aclError err = find_object(notify, Kind::Notify, "notify", n))
            return err;
        if (n->imported)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "a notify imported from another process cannot be exported again");
        std::string text;
        bool validate = !(flags & ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION);
        if (aclError err = publish_object(*n, ipc::Kind::Notify, validate, text))
            return err;
        return copy_key(text, key, len);
    });
}

aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num)
{
    return api("aclrtNotifySetImportPid", [&] {
        std::shared_ptr<Notify> n;
        if (aclError err = find_object(notify, Kind::Notify, "notify", n))
            return err;
        std::vector<std::string> keys;
        {
            std::lock_guard<std::mutex> lock(n->mu);
            for (const auto &entry : n->export_keys)
                keys.push_back(entry.second);
        }
        if (keys.empty())
            return fail(ACL_ERROR_RT_INVALID_HANDLE,
                        "the notify has no export key (aclrtNotifyGetExportKey)");
        // Every open key of the notify lists them (one gone with its
        // broker is replaced at the next export).
        std::vector<std::string> open;
        for (const std::string &key : keys)
            if (ipc::published_here(key))
                open.push_back(key);
        if (open.empty())
            return fail(ACL_ERROR_RT_INVALID_HANDLE,
                        "the notify's export keys are gone with the broker that served them: "
                        "export it again (aclrtNotifyGetExportKey)");
        for (const std::string &key : open)
            if (aclError err = allow_pids(key, pid, num))
                return err;
        return ACL_SUCCESS;
    });
}

aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags)
{
    return api("aclrtNotifyImportByKey", [&] {
        if (!notify || !key)
            return fail(ACL_ERROR_INVALID_PARAM, "notify and key must not be NULL");
        if (flags & ~ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown import flags 0x%llx",
                        static_cast<unsigned long long>(flags));
        Result<ipc::Key> parsed = ipc::parse_key(key);
        if (!parsed.ok())
            return fail_ipc(parsed.error(), "reading the key");
        std::shared_ptr<Context> ctx;
        std::shared_ptr<const Device> dev;
        if (aclError err = current(ctx, dev))
            return err;
        Result<ipc::Fetched> got = ipc::fetch(parsed.value(), ipc::Kind::Notify, kFetchTimeoutMs);
        if (!got.ok())
            return fail_ipc(got.error(), "importing the key");
        bool enable = flags & ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS;
        if (aclError err = check_import_peer(ctx->device, got.value().tag, enable))
            return err;
        ObjectType type{};
        Result<ObjectHandle> h = import_object(dev, got.value().fd.get(), &type);
        if (!h.ok())
            return fail_errno(h.error(), Op::CreateNotify, "importing the notify");
        ObjectHandle handle_owner = std::move(h.value());
        if (type != ObjectType::Notify)
            return fail(ACL_ERROR_RT_IPC_ERROR, "the exporter sent something else than a notify");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        auto n = std::make_shared<Notify>(ctx->device, dev, std::move(handle_owner),
                                          rt.next_notify_id++);
        n->imported = true;
        *notify = reinterpret_cast<aclrtNotify>(rt.add_object(n));
        return ACL_SUCCESS;
    });
}

// An allowlist entry for this server's sdid (aclrtGetDeviceInfo's
// ACL_DEV_ATTR_SUPER_POD_DEVICE_ID: its fabric window's, 0 in no SuperPOD)
// is this server's; an IPC key (an fd) never leaves its server, so any
// other server is beyond reach (fabric handles are what cross servers).

// Every entry checked, then every PID gathered into `pids`: the caller
// lists them in one step, all or nothing.
static aclError gather_server_pids(const aclrtServerPid *serverPids, size_t num, bool one_pid_each,
                                   std::vector<int32_t> &pids)
{
    for (size_t i = 0; i < num; i++) {
        if (!serverPids[i].pid || serverPids[i].num == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "serverPids[%zu] lists no PID", i);
        if (one_pid_each && serverPids[i].num != 1)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "serverPids[%zu].num is %zu: a notify takes one PID a server",
                        i, serverPids[i].num);
    }
    const uint32_t local = fabric_sdid();
    for (size_t i = 0; i < num; i++)
        if (serverPids[i].sdid != local)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "sdid %u is another server's: an IPC key stays on this server (sdid %u); "
                        "fabric handles cross servers",
                        serverPids[i].sdid, local);
    for (size_t i = 0; i < num; i++)
        pids.insert(pids.end(), serverPids[i].pid, serverPids[i].pid + serverPids[i].num);
    return ACL_SUCCESS;
}

aclError aclrtIpcMemImportPidInterServer(const char *key, aclrtServerPid *serverPids, size_t num)
{
    return api("aclrtIpcMemImportPidInterServer", [&] {
        if (!key || !serverPids || num == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "key and serverPids must be set, num not 0");
        std::vector<int32_t> pids;
        if (aclError err = gather_server_pids(serverPids, num, false, pids))
            return err;
        if (!exported_as(key, ipc::Kind::Memory))
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that exported a memory key may list importers, while it is open");
        return allow_pids(key, pids.data(), pids.size());
    });
}

aclError aclrtNotifySetImportPidInterServer(aclrtNotify notify, aclrtServerPid *serverPids, size_t num)
{
    return api("aclrtNotifySetImportPidInterServer", [&] {
        if (!notify || !serverPids || num == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "notify and serverPids must be set, num not 0");
        std::shared_ptr<Notify> n;
        if (aclError err = find_object(notify, Kind::Notify, "notify", n))
            return err;
        std::vector<int32_t> pids;
        if (aclError err = gather_server_pids(serverPids, num, true, pids))
            return err;
        return aclrtNotifySetImportPid(notify, pids.data(), pids.size());
    });
}

aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type, uint64_t attr)
{
    return api("aclrtIpcMemSetAttr", [&] {
        if (!key)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "key is NULL");
        if (type != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown attribute type %d", static_cast<int>(type));
        if (attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown access link %llu",
                        static_cast<unsigned long long>(attr));
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            std::shared_ptr<Context> ctx;
            if (aclError err = rt.current_context(ctx))
                return err;
        }
        if (!exported_as(key, ipc::Kind::Memory))
            return fail(ACL_ERROR_RT_NO_PERMISSION,
                        "only the process that exported a memory key sets its attributes, while it is open");
        // Devices of a mock NPU reach each other one way, the default (SIO).
        if (attr != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO)
            return fail(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, "a mock NPU's devices have no access link %llu",
                        static_cast<unsigned long long>(attr));
        return ACL_SUCCESS;
    });
}

} // extern "C"
