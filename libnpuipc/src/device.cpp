// SPDX-License-Identifier: MIT
#include "npuipc/device.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include <xf86drm.h>

#include "clock.h"

#include "drm/npuipc_drm.h"

namespace npuipc {
namespace {

// drmIoctl restarts on EINTR and EAGAIN; this returns the errno.
int ioctl_errno(int fd, unsigned long request, void *arg)
{
    return drmIoctl(fd, request, arg) == 0 ? 0 : errno;
}

bool is_npuipc(int fd)
{
    drmVersionPtr version = drmGetVersion(fd);
    if (!version)
        return false;
    bool ours = version->name && std::strcmp(version->name, NPUIPC_DRIVER_NAME) == 0;
    drmFreeVersion(version);
    return ours;
}

Result<DeviceInfo> query_info(int fd)
{
    drm_npuipc_get_info args = {};
    if (int err = ioctl_errno(fd, DRM_IOCTL_NPUIPC_GET_INFO, &args))
        return Status::from_errno(err);
    DeviceInfo info;
    info.uapi_version = args.uapi_version;
    info.index = args.device_index;
    info.mem_total = args.mem_total;
    info.mem_free = args.mem_free;
    info.caps = args.caps;
    info.caller_tgid = args.caller_tgid;
    info.pci_address = args.pci_address;
    info.objects_free = args.objects_free;
    return info;
}

// The names (renderD<minor>) of the render nodes of /dev/dri, in minor
// order; any minor, as 6.12 gives minors above 191.
std::vector<std::string> render_nodes()
{
    std::vector<std::string> names;
    DIR *d = ::opendir("/dev/dri");
    if (!d)
        return names;
    while (const dirent *e = ::readdir(d))
        if (std::strncmp(e->d_name, "renderD", 7) == 0)
            names.push_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end(), [](const std::string &a, const std::string &b) {
        return std::atoi(a.c_str() + 7) < std::atoi(b.c_str() + 7);
    });
    return names;
}

// Whether the render node /dev/dri/`name` is an npuipc device's, as sysfs
// tells by its device number (the driver puts npuipc_index on every device
// it binds, whatever the bus): by number, not name, because a container
// may give the host's renderD129 to its processes as renderD128.
// `sysfs`: whether /sys/dev/char exists; without it every character device
// is a candidate, which opening it will tell. `rdev` is its device number.
bool is_npuipc_node(const std::string &name, bool sysfs, dev_t &rdev)
{
    struct stat st;
    std::string node = "/dev/dri/" + name;
    if (::stat(node.c_str(), &st) != 0 || !S_ISCHR(st.st_mode))
        return false;
    rdev = st.st_rdev;
    if (!sysfs)
        return true;
    std::string index = "/sys/dev/char/" + std::to_string(major(rdev)) + ":" +
                        std::to_string(minor(rdev)) + "/device/npuipc_index";
    return ::access(index.c_str(), F_OK) == 0;
}

// The render nodes of npuipc devices, found without opening, and so
// waking, any other driver's node. libdrm's drmGetDevices2 reads the same
// sysfs, but skips platform devices that have no device-tree node, as
// npuipc's virtual devices on x86. Without sysfs, every render node is a
// candidate, opened and asked its driver's name.
std::vector<std::string> npuipc_render_nodes()
{
    const bool sysfs = ::access("/sys/dev/char", F_OK) == 0;
    std::vector<std::string> nodes;
    std::vector<dev_t> seen; // a device given two names is listed once
    for (const std::string &name : render_nodes()) {
        dev_t rdev = 0;
        if (!is_npuipc_node(name, sysfs, rdev) ||
            std::find(seen.begin(), seen.end(), rdev) != seen.end())
            continue;
        seen.push_back(rdev);
        nodes.push_back(name);
    }
    return nodes;
}

// Calls fn(fd, info) for every npuipc NPU (or, with `windows`, every
// fabric window) until it returns true, which keeps the fd open for the
// caller; the others are closed. A fabric window is memory that NPUs
// reach, not an NPU.
template <typename Fn> void for_each_node(Fn fn, bool windows = false)
{
    for (const std::string &name : npuipc_render_nodes()) {
        std::string node = "/dev/dri/" + name;
        UniqueFd fd(::open(node.c_str(), O_RDWR | O_CLOEXEC));
        if (!fd || !is_npuipc(fd.get()))
            continue;
        Result<DeviceInfo> info = query_info(fd.get());
        if (!info.ok() || ((info.value().caps & NPUIPC_CAP_FABRIC) != 0) != windows)
            continue;
        info.value().node = node;
        if (fn(fd, info.value()))
            return;
    }
}

} // namespace

static_assert(static_cast<uint32_t>(PageClass::Normal) == NPUIPC_PAGE_CLASS_NORMAL);
static_assert(static_cast<uint32_t>(PageClass::Huge) == NPUIPC_PAGE_CLASS_HUGE);
static_assert(static_cast<uint32_t>(PageClass::Huge1G) == NPUIPC_PAGE_CLASS_HUGE1G);
static_assert(static_cast<uint32_t>(ObjectType::Stream) == NPUIPC_OBJ_STREAM);
static_assert(static_cast<uint32_t>(ObjectType::Event) == NPUIPC_OBJ_EVENT);
static_assert(static_cast<uint32_t>(ObjectType::Notify) == NPUIPC_OBJ_NOTIFY);
static_assert(kMaxBufferSize == NPUIPC_BO_MAX_SIZE);

uint64_t page_size(PageClass page_class) noexcept
{
    switch (page_class) {
    case PageClass::Normal:
        return 4096;
    case PageClass::Huge:
        return 2ULL << 20;
    case PageClass::Huge1G:
        return 1ULL << 30;
    }
    return 0;
}

bool DeviceInfo::reports_caller_tgid() const noexcept
{
    return caps & NPUIPC_CAP_CALLER_TGID;
}

bool DeviceInfo::is_pci() const noexcept
{
    return caps & NPUIPC_CAP_PCI;
}

bool DeviceInfo::reports_objects_free() const noexcept
{
    return uapi_version >= 8;
}

Result<Device> Device::open(uint32_t index)
{
    UniqueFd found;
    uint64_t caps = 0;
    for_each_node([&](UniqueFd &fd, const DeviceInfo &info) {
        if (info.index != index)
            return false;
        found = std::move(fd);
        caps = info.caps;
        return true;
    });
    if (!found)
        return Status::from_errno(ENODEV);
    return Device(std::move(found), index, caps);
}

Result<Device> Device::open_fabric_window()
{
    UniqueFd found;
    uint32_t index = 0;
    uint64_t caps = 0;
    for_each_node(
        [&](UniqueFd &fd, const DeviceInfo &info) {
            found = std::move(fd);
            index = info.index;
            caps = info.caps;
            return true;
        },
        true);
    if (!found)
        return Status::from_errno(ENODEV);
    return Device(std::move(found), index, caps);
}

Result<FabricInfo> Device::fabric_info() const
{
    drm_npuipc_fabric_info args = {};
    if (drmIoctl(fd_.get(), DRM_IOCTL_NPUIPC_FABRIC_INFO, &args) != 0)
        return Status::from_errno(errno);
    FabricInfo info;
    info.sdid = args.sdid;
    info.nparts = args.nparts;
    info.window_size = args.window_size;
    info.part_offset = args.part_offset;
    info.part_size = args.part_size;
    return info;
}

Result<DeviceInfo> Device::info() const
{
    return query_info(fd_.get());
}

Result<uint32_t> Device::create_buffer(uint64_t size, PageClass page_class) const
{
    drm_npuipc_bo_create args = {};
    args.size = size;
    args.page_class = static_cast<uint32_t>(page_class);
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_BO_CREATE, &args))
        return Status::from_errno(err);
    // A new handle: no import can return it before it is exported.
    std::lock_guard<std::mutex> hold(buffer_refs_->lock);
    buffer_refs_->count[args.handle] = 1;
    return args.handle;
}

Result<uint32_t> Device::register_user_memory(void *addr, uint64_t size, Access access) const
{
    drm_npuipc_bo_userptr args = {};
    args.addr = reinterpret_cast<uintptr_t>(addr);
    args.size = size;
    args.flags = access == Access::ReadOnly ? NPUIPC_BO_USERPTR_READ_ONLY : 0;
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_BO_USERPTR, &args))
        return Status::from_errno(err);
    // A new handle, which no import can return: the buffer is never exported.
    std::lock_guard<std::mutex> hold(buffer_refs_->lock);
    buffer_refs_->count[args.handle] = 1;
    return args.handle;
}

Result<BufferInfo> Device::buffer_info(uint32_t handle) const
{
    drm_npuipc_bo_info args = {};
    args.handle = handle;
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_BO_INFO, &args))
        return Status::from_errno(err);
    BufferInfo info;
    info.size = args.size;
    info.mmap_offset = args.mmap_offset;
    info.page_class = static_cast<PageClass>(args.page_class);
    info.imported = args.bo_flags & NPUIPC_BO_IMPORTED;
    info.read_only = args.bo_flags & NPUIPC_BO_READ_ONLY;
    info.peer = args.bo_flags & NPUIPC_BO_PEER;
    info.foreign = args.bo_flags & NPUIPC_BO_FOREIGN;
    return info;
}

Result<UniqueFd> Device::export_buffer(uint32_t handle, uint64_t offset, uint64_t size,
                                       Access access) const
{
    drm_npuipc_bo_export args = {};
    args.handle = handle;
    args.flags = access == Access::ReadOnly ? NPUIPC_BO_EXPORT_READ_ONLY : 0;
    args.offset = offset;
    args.size = size;
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_BO_EXPORT, &args))
        return Status::from_errno(err);
    return UniqueFd(args.fd);
}

Result<UniqueFd> Device::export_whole_buffer(uint32_t handle) const
{
    if (!(caps_ & NPUIPC_CAP_PRIME)) {
        // A module before uapi 7: BO_EXPORT of the whole buffer.
        Result<BufferInfo> info = buffer_info(handle);
        if (!info.ok())
            return info.status();
        return export_buffer(handle, 0, info.value().size);
    }
    int out = -1;
    if (drmPrimeHandleToFD(fd(), handle, DRM_CLOEXEC | DRM_RDWR, &out))
        return Status::from_errno(errno);
    return UniqueFd(out);
}

Result<uint32_t> Device::import_buffer(int dmabuf_fd, Peer peer) const
{
    drm_npuipc_bo_import args = {};
    args.fd = dmabuf_fd;
    args.flags = peer == Peer::Allow ? NPUIPC_BO_IMPORT_PEER_ACCESS : 0;
    // Held across the ioctl: a close_buffer() of the same handle between
    // the kernel's answer and the count would close this import too. Not
    // drmPrimeFDToHandle(): BO_IMPORT is the same import, and refuses
    // another device's memory unless peer access was asked for.
    std::lock_guard<std::mutex> hold(buffer_refs_->lock);
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_BO_IMPORT, &args))
        return Status::from_errno(err);
    buffer_refs_->count[args.handle]++;
    return args.handle;
}

Status Device::close_buffer(uint32_t handle) const
{
    std::lock_guard<std::mutex> hold(buffer_refs_->lock);
    auto it = buffer_refs_->count.find(handle);
    if (it != buffer_refs_->count.end()) {
        if (--it->second > 0)
            return Status();
        buffer_refs_->count.erase(it);
    }
    if (drmCloseBufferHandle(fd(), handle) != 0)
        return Status::from_errno(errno);
    return Status();
}

Result<uint32_t> Device::create_object(ObjectType type) const
{
    drm_npuipc_obj_create args = {};
    args.type = static_cast<uint32_t>(type);
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_OBJ_CREATE, &args))
        return Status::from_errno(err);
    return args.handle;
}

Status Device::destroy_object(uint32_t handle) const
{
    drm_npuipc_obj_destroy args = {};
    args.handle = handle;
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_OBJ_DESTROY, &args))
        return Status::from_errno(err);
    return Status();
}

namespace {

Result<UniqueFd> export_object_flags(int fd, uint32_t handle, uint32_t flags)
{
    drm_npuipc_obj_export args = {};
    args.handle = handle;
    args.flags = flags;
    if (int err = ioctl_errno(fd, DRM_IOCTL_NPUIPC_OBJ_EXPORT, &args))
        return Status::from_errno(err);
    return UniqueFd(args.fd);
}

} // namespace

Result<UniqueFd> Device::export_object(uint32_t handle) const
{
    return export_object_flags(fd(), handle, 0);
}

Result<UniqueFd> Device::export_sync_file(uint32_t event) const
{
    return export_object_flags(fd(), event, NPUIPC_OBJ_EXPORT_SYNC_FILE);
}

Result<uint64_t> Device::record_time(uint32_t event) const
{
    Result<UniqueFd> file = export_sync_file(event);
    if (!file.ok())
        return Status::from_errno(file.error());
    sync_fence_info fences[4] = {};
    sync_file_info info = {};
    info.num_fences = 4;
    info.sync_fence_info = reinterpret_cast<uintptr_t>(fences);
    if (int err = ioctl_errno(file.value().get(), SYNC_IOC_FILE_INFO, &info))
        return Status::from_errno(err);
    if (info.status != 1 || info.num_fences < 1)
        return Status::from_errno(EBUSY);
    return static_cast<uint64_t>(fences[0].timestamp_ns);
}

Result<uint32_t> Device::import_object(int object_fd, ObjectType *type) const
{
    drm_npuipc_obj_import args = {};
    args.fd = object_fd;
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_OBJ_IMPORT, &args))
        return Status::from_errno(err);
    if (type)
        *type = static_cast<ObjectType>(args.type);
    return args.handle;
}

Status Device::submit(uint32_t stream, const Job *jobs, uint32_t count) const
{
    if (count > kMaxJobsPerSubmit)
        return Status::from_errno(EINVAL);
    drm_npuipc_job raw[kMaxJobsPerSubmit];
    for (uint32_t i = 0; i < count; i++) {
        raw[i] = {};
        raw[i].kind = static_cast<uint32_t>(jobs[i].kind);
        if (jobs[i].kind == Job::Kind::WaitValue)
            raw[i].flags = static_cast<uint32_t>(jobs[i].compare) | (jobs[i].clear ? NPUIPC_WAIT_VALUE_CLEAR : 0);
        if (jobs[i].kind == Job::Kind::WriteValue)
            raw[i].flags = static_cast<uint32_t>(jobs[i].update);
        if (jobs[i].fill_words)
            raw[i].flags = NPUIPC_FILL_U32;
        raw[i].dst = jobs[i].dst;
        raw[i].src = jobs[i].src;
        raw[i].dst_offset = jobs[i].dst_offset;
        raw[i].src_offset = jobs[i].src_offset;
        raw[i].size = jobs[i].size;
        raw[i].value = jobs[i].value;
        raw[i].object = jobs[i].object;
        raw[i].timeout_ns = jobs[i].timeout_ns;
    }
    drm_npuipc_submit args = {};
    args.stream = stream;
    args.jobs = reinterpret_cast<uintptr_t>(raw);
    args.job_count = count;
    args.job_size = sizeof(drm_npuipc_job);
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_SUBMIT, &args))
        return Status::from_errno(err);
    return Status();
}

Result<int> Device::wait(uint32_t handle, int64_t timeout_ns, uint32_t *failed_job) const
{
    return wait_flags(handle, timeout_ns, 0, failed_job);
}

Result<int> Device::wait_and_recover(uint32_t stream, int64_t timeout_ns,
                                     uint32_t *failed_job) const
{
    return wait_flags(stream, timeout_ns, NPUIPC_WAIT_RECOVER, failed_job);
}

static_assert(static_cast<uint32_t>(FailureMode::Stop) == NPUIPC_FAILURE_STOP);
static_assert(static_cast<uint32_t>(FailureMode::Continue) == NPUIPC_FAILURE_CONTINUE);

Status Device::set_failure_mode(uint32_t stream, FailureMode mode) const
{
    drm_npuipc_stream_set_param args = {};
    args.stream = stream;
    args.param = NPUIPC_STREAM_PARAM_FAILURE_MODE;
    args.value = static_cast<uint32_t>(mode);
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_STREAM_SET_PARAM, &args))
        return Status::from_errno(err);
    return Status();
}

Status Device::abort_stream(uint32_t stream) const
{
    drm_npuipc_stream_abort args = {};
    args.stream = stream;
    if (int err = ioctl_errno(fd(), DRM_IOCTL_NPUIPC_STREAM_ABORT, &args))
        return Status::from_errno(err);
    return Status();
}

Result<int> Device::wait_flags(uint32_t handle, int64_t timeout_ns, uint32_t flags,
                               uint32_t *failed_job) const
{
    // drmIoctl restarts an interrupted wait with the same argument: a
    // relative timeout would start again from the full length, so each try
    // is given what is left of the deadline.
    const int64_t deadline = timeout_ns > 0 ? npuipc_clock::now_ns() + timeout_ns : 0;
    for (;;) {
        drm_npuipc_wait args = {};
        args.handle = handle;
        args.flags = flags;
        args.timeout_ns = timeout_ns;
        if (timeout_ns > 0)
            args.timeout_ns = std::max<int64_t>(deadline - npuipc_clock::now_ns(), 1);
        if (::ioctl(fd(), DRM_IOCTL_NPUIPC_WAIT, &args) == 0) {
            if (failed_job)
                *failed_job = args.failed_job;
            return static_cast<int>(args.status);
        }
        if (errno == EINTR || errno == EAGAIN)
            continue;
        return Status::from_errno(errno);
    }
}

namespace {

template <typename Owner>
Result<Owner> owned(const std::shared_ptr<const Device> &device, const Result<uint32_t> &h)
{
    if (!h.ok())
        return h.status();
    return Owner(device, h.value());
}

} // namespace

Result<BufferHandle> create_buffer(const std::shared_ptr<const Device> &device, uint64_t size,
                                   PageClass page_class)
{
    return owned<BufferHandle>(device, device->create_buffer(size, page_class));
}

Result<BufferHandle> register_user_memory(const std::shared_ptr<const Device> &device, void *addr,
                                          uint64_t size, Access access)
{
    return owned<BufferHandle>(device, device->register_user_memory(addr, size, access));
}

Result<BufferHandle> import_buffer(const std::shared_ptr<const Device> &device, int dmabuf_fd,
                                   Peer peer)
{
    return owned<BufferHandle>(device, device->import_buffer(dmabuf_fd, peer));
}

Result<ObjectHandle> create_object(const std::shared_ptr<const Device> &device, ObjectType type)
{
    return owned<ObjectHandle>(device, device->create_object(type));
}

Result<ObjectHandle> import_object(const std::shared_ptr<const Device> &device, int fd,
                                   ObjectType *type)
{
    return owned<ObjectHandle>(device, device->import_object(fd, type));
}

std::vector<std::string> inaccessible_nodes()
{
    std::vector<std::string> nodes;
    for (const std::string &name : npuipc_render_nodes()) {
        std::string node = "/dev/dri/" + name;
        if (::access(node.c_str(), R_OK | W_OK) != 0 && (errno == EACCES || errno == EPERM))
            nodes.push_back(node);
    }
    return nodes;
}

Result<std::vector<DeviceInfo>> list_devices()
{
    std::vector<DeviceInfo> devices;
    for_each_node([&](UniqueFd &, const DeviceInfo &info) {
        devices.push_back(info);
        return false;
    });
    std::sort(devices.begin(), devices.end(),
              [](const DeviceInfo &a, const DeviceInfo &b) { return a.index < b.index; });
    return devices;
}

Result<Mapping> Mapping::map(const Device &device, uint64_t mmap_offset, uint64_t size,
                             uint64_t align, Access access)
{
    void *want = nullptr;
    int flags = MAP_SHARED;
    if (align > 4096) {
        // Reserve room for an aligned start, map there, give back the rest.
        void *room = ::mmap(nullptr, size + align, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (room == MAP_FAILED)
            return Status::from_errno(errno);
        uintptr_t start = reinterpret_cast<uintptr_t>(room);
        uintptr_t aligned = (start + align - 1) & ~(align - 1);
        if (aligned > start)
            ::munmap(room, aligned - start);
        uintptr_t end = aligned + size, room_end = start + size + align;
        if (room_end > end)
            ::munmap(reinterpret_cast<void *>(end), room_end - end);
        want = reinterpret_cast<void *>(aligned);
        flags |= MAP_FIXED;
    }
    void *addr = ::mmap(want, size, access == Access::ReadOnly ? PROT_READ : PROT_READ | PROT_WRITE, flags, device.fd(),
                        static_cast<off_t>(mmap_offset));
    if (addr == MAP_FAILED) {
        int err = errno;
        if (want)
            ::munmap(want, size);
        return Status::from_errno(err);
    }
    // Device memory is the process's own: a fork child must not keep the
    // parent's buffers alive (or reach them) through inherited mappings.
    if (::madvise(addr, size, MADV_DONTFORK) != 0) {
        int err = errno;
        ::munmap(addr, size);
        return Status::from_errno(err);
    }
    return Mapping(addr, size);
}

Mapping &Mapping::operator=(Mapping &&other) noexcept
{
    if (this != &other) {
        reset();
        addr_ = other.addr_;
        size_ = other.size_;
        other.addr_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

void Mapping::reset() noexcept
{
    if (addr_)
        ::munmap(addr_, size_);
    addr_ = nullptr;
    size_ = 0;
}

} // namespace npuipc
