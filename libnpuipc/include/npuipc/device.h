// SPDX-License-Identifier: MIT
// npuipc devices as libnpuipc sees them: render nodes of the npuipc driver,
// addressed by the driver's device index rather than by DRM minor, and the
// driver's objects on them, each owned by a move-only RAII type.
#ifndef NPUIPC_DEVICE_H
#define NPUIPC_DEVICE_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuipc/job.h"
#include "npuipc/result.h"
#include "npuipc/unique_fd.h"

namespace npuipc {

// The sizes of page a device's memory comes in.
enum class PageClass : uint32_t { Normal = 0, Huge = 1, Huge1G = 2 };

// Bytes in a page of `page_class`: 4 KiB, 2 MiB or 1 GiB.
uint64_t page_size(PageClass page_class) noexcept;

// The largest buffer a device allocates.
constexpr uint64_t kMaxBufferSize = 64ULL << 30;

// The driver's objects other than buffers.
enum class ObjectType : uint32_t { Stream = 1, Event = 2, Notify = 3 };

// What a stream does after a failed job: halt (cancel the jobs behind it
// and refuse new ones until recovered; a new stream's mode) or go on.
enum class FailureMode : uint32_t { Stop = 0, Continue = 1 };

// What an export of a buffer range lets its importers do.
enum class Access { ReadWrite, ReadOnly };

// Whether an import may take another npuipc device's memory.
enum class Peer { Refuse, Allow };

struct DeviceInfo {
    std::string node; // e.g. /dev/dri/renderD128; set by list_devices()
    uint32_t uapi_version = 0;
    uint32_t index = 0;
    uint64_t mem_total = 0;
    uint64_t mem_free = 0;
    uint64_t caps = 0;
    // The caller's PID in the initial PID namespace (0 before uapi 4).
    uint32_t caller_tgid = 0;
    // A PCI device's (NPUIPC_CAP_PCI) address, domain << 16 | bus << 8 |
    // devfn; 0 for a virtual device (and before uapi 6).
    uint32_t pci_address = 0;
    // How many more streams, events and notifies the calling process's
    // file of the device may hold now (0 before uapi 8).
    uint32_t objects_free = 0;

    // Whether caller_tgid is reported (uapi 4 on).
    bool reports_caller_tgid() const noexcept;
    // Whether it is a PCI device (its memory a BAR), not a virtual one.
    bool is_pci() const noexcept;
    // Whether objects_free is reported (uapi 8 on).
    bool reports_objects_free() const noexcept;
};

struct BufferInfo {
    uint64_t size = 0;
    uint64_t mmap_offset = 0;
    PageClass page_class = PageClass::Normal;
    bool imported = false;  // made by an import
    bool read_only = false; // no path may write it
    bool peer = false;      // memory of another npuipc device
    bool foreign = false;   // a dma-buf of another exporter
};

// A fabric window's view of the fabric (FABRIC_INFO, uapi 12).
struct FabricInfo {
    uint32_t sdid = 0; // this server's SuperPOD device id
    uint32_t nparts = 0;
    uint64_t window_size = 0;
    uint64_t part_offset = 0; // this server's part of the window
    uint64_t part_size = 0;
};

// One open npuipc render node. Every method is one ioctl of the uapi
// (uapi/drm/npuipc_drm.h, Documentation/uapi.md) and returns its errno.
class Device {
public:
    // Opens the render node of npuipc device `index`; ENODEV if none.
    static Result<Device> open(uint32_t index);
    // Opens this server's fabric window (NPUIPC_CAP_FABRIC), whose buffers
    // are fabric memory of the server's part; ENODEV if it has none.
    static Result<Device> open_fabric_window();

    Result<DeviceInfo> info() const;
    // A fabric window's (open_fabric_window()); EOPNOTSUPP for an NPU.
    Result<FabricInfo> fabric_info() const;
    uint32_t index() const noexcept { return index_; }
    int fd() const noexcept { return fd_.get(); }

    Result<uint32_t> create_buffer(uint64_t size, PageClass page_class) const;
    // `size` bytes of this process's memory at `addr` (page-aligned), pinned
    // as a buffer's pages (BO_USERPTR, uapi 11): jobs read them, and write
    // them unless `access` is ReadOnly.
    Result<uint32_t> register_user_memory(void *addr, uint64_t size, Access access) const;
    Result<BufferInfo> buffer_info(uint32_t handle) const;
    // A range of a buffer, or all of it read-only (BO_EXPORT).
    Result<UniqueFd> export_buffer(uint32_t handle, uint64_t offset, uint64_t size,
                                   Access access = Access::ReadWrite) const;
    // The buffer's one whole read-write dma-buf (PRIME_HANDLE_TO_FD; before
    // uapi 7, BO_EXPORT of the whole buffer).
    Result<UniqueFd> export_whole_buffer(uint32_t handle) const;
    // BO_IMPORT (PRIME_FD_TO_HANDLE, refusing another device's memory
    // unless `peer` allows it). From uapi 7 on a DRM file has
    // one handle per dma-buf, so the handle may be one this
    // Device handed out already (an earlier import, or the buffer that
    // made the dma-buf): every handle create_buffer and import_buffer
    // return is counted, and close_buffer closes it at its last release.
    Result<uint32_t> import_buffer(int dmabuf_fd, Peer peer = Peer::Refuse) const;
    Status close_buffer(uint32_t handle) const;

    Result<uint32_t> create_object(ObjectType type) const;
    Status destroy_object(uint32_t handle) const;
    // An event's or notify's fd, for another process to import.
    Result<UniqueFd> export_object(uint32_t handle) const;
    // A sync_file of an event's latest record; EDEADLK while that record
    // may never complete.
    Result<UniqueFd> export_sync_file(uint32_t event) const;
    // When an event's latest record completed, on the driver's clock
    // (CLOCK_MONOTONIC, ns), read from its sync_file: EDEADLK as
    // export_sync_file, EBUSY while the record has not completed.
    Result<uint64_t> record_time(uint32_t event) const;
    // `type`, if given, receives ObjectType::Event or ObjectType::Notify.
    Result<uint32_t> import_object(int fd, ObjectType *type = nullptr) const;

    // Queues `count` jobs (at most 256) on the stream, in order.
    Status submit(uint32_t stream, const Job *jobs, uint32_t count) const;
    Status submit(uint32_t stream, const Job &job) const { return submit(stream, &job, 1); }
    // Waits for a stream (all its jobs) or an event (its latest record).
    // timeout_ns < 0 waits without limit, 0 polls; a positive timeout is a
    // deadline kept across signal restarts. Returns the stream's or record's
    // status (0 or a negative errno); ETIME when not complete in time.
    // For a stream in error, `failed_job` (if given) receives the number
    // of its job that failed, 0 when an abort or shutdown cancelled its jobs.
    Result<int> wait(uint32_t handle, int64_t timeout_ns, uint32_t *failed_job = nullptr) const;
    // Waits for a stream like wait(), including the jobs being cancelled
    // after it failed, then clears its error; the status is the error, and
    // `failed_job` (if given) the stream's number of the job that failed.
    Result<int> wait_and_recover(uint32_t stream, int64_t timeout_ns,
                                 uint32_t *failed_job = nullptr) const;
    // STREAM_SET_PARAM (uapi 9): what the stream does after a failed job.
    Status set_failure_mode(uint32_t stream, FailureMode mode) const;
    // STREAM_ABORT (uapi 9): cancels every job of the stream not yet
    // complete and returns once they are; the stream then runs again.
    Status abort_stream(uint32_t stream) const;

private:
    Device(UniqueFd fd, uint32_t index, uint64_t caps)
        : fd_(std::move(fd)), index_(index), caps_(caps)
    {
    }

    // Holders of each buffer handle of this file.
    struct BufferRefs {
        // Protects count, and each handle from its GEM_CLOSE to its reuse
        std::mutex lock;
        std::unordered_map<uint32_t, unsigned> count;
    };

    UniqueFd fd_;
    uint32_t index_ = 0;
    Result<int> wait_flags(uint32_t handle, int64_t timeout_ns, uint32_t flags,
                           uint32_t *failed_job = nullptr) const;

    uint64_t caps_ = 0; // NPUIPC_CAP_*, as GET_INFO reported them at open
    std::unique_ptr<BufferRefs> buffer_refs_ = std::make_unique<BufferRefs>();
};

// Every npuipc device present, in index order. Empty when the module is
// not loaded.
Result<std::vector<DeviceInfo>> list_devices();

// npuipc render nodes (e.g. /dev/dri/renderD128) that this process may not
// open, which list_devices() therefore leaves out: a user outside the
// group owning them (usually "render").
std::vector<std::string> inaccessible_nodes();

// A handle in one device's file, released on destruction by `Release`:
// GEM_CLOSE for buffers, OBJ_DESTROY for streams, events and notifies.
// Move-only; it keeps its device open.
template <Status (Device::*Release)(uint32_t) const> class DeviceHandle {
public:
    DeviceHandle() noexcept = default;
    DeviceHandle(std::shared_ptr<const Device> device, uint32_t handle) noexcept
        : device_(std::move(device)), handle_(handle)
    {
    }
    ~DeviceHandle() { reset(); }
    DeviceHandle(DeviceHandle &&other) noexcept
        : device_(std::move(other.device_)), handle_(other.handle_)
    {
        other.handle_ = 0;
    }
    DeviceHandle &operator=(DeviceHandle &&other) noexcept
    {
        if (this != &other) {
            reset();
            device_ = std::move(other.device_);
            handle_ = other.handle_;
            other.handle_ = 0;
        }
        return *this;
    }
    DeviceHandle(const DeviceHandle &) = delete;
    DeviceHandle &operator=(const DeviceHandle &) = delete;

    uint32_t get() const noexcept { return handle_; }
    const Device *device() const noexcept { return device_.get(); }
    explicit operator bool() const noexcept { return handle_ != 0; }
    void reset() noexcept
    {
        if (handle_ && device_)
            (void)((*device_).*Release)(handle_);
        handle_ = 0;
        device_.reset();
    }

private:
    std::shared_ptr<const Device> device_;
    uint32_t handle_ = 0;
};

using BufferHandle = DeviceHandle<&Device::close_buffer>;
using ObjectHandle = DeviceHandle<&Device::destroy_object>;

// The Device calls that make a handle, giving it in its owner, which keeps
// `device` open.
Result<BufferHandle> create_buffer(const std::shared_ptr<const Device> &device, uint64_t size,
                                   PageClass page_class);
Result<BufferHandle> import_buffer(const std::shared_ptr<const Device> &device, int dmabuf_fd,
                                   Peer peer = Peer::Refuse);
Result<BufferHandle> register_user_memory(const std::shared_ptr<const Device> &device, void *addr,
                                          uint64_t size, Access access);
Result<ObjectHandle> create_object(const std::shared_ptr<const Device> &device, ObjectType type);
Result<ObjectHandle> import_object(const std::shared_ptr<const Device> &device, int fd,
                                   ObjectType *type = nullptr);

// A shared mapping of a buffer into this process, unmapped on destruction.
class Mapping {
public:
    Mapping() noexcept = default;
    // Maps `size` bytes of the buffer at `mmap_offset` of the device's fd,
    // at an address that is a multiple of `align` (a power of two; 0 or
    // the page size: anywhere), writable unless `access` is ReadOnly.
    static Result<Mapping> map(const Device &device, uint64_t mmap_offset, uint64_t size,
                               uint64_t align = 0, Access access = Access::ReadWrite);
    ~Mapping() { reset(); }
    Mapping(Mapping &&other) noexcept : addr_(other.addr_), size_(other.size_)
    {
        other.addr_ = nullptr;
        other.size_ = 0;
    }
    Mapping &operator=(Mapping &&other) noexcept;
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;

    void *addr() const noexcept { return addr_; }
    uint64_t size() const noexcept { return size_; }
    void reset() noexcept;

private:
    Mapping(void *addr, uint64_t size) noexcept : addr_(addr), size_(size) {}
    void *addr_ = nullptr;
    uint64_t size_ = 0;
};

} // namespace npuipc

#endif // NPUIPC_DEVICE_H
