// SPDX-License-Identifier: MIT
#include "npuipc/device.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>

#include <algorithm>

#include "drm/npuipc_drm.h"

namespace npuipc {
namespace {

constexpr int kRenderMinorFirst = 128;
constexpr int kRenderMinorLast = 191;

int ioctl_retry(int fd, unsigned long request, void *arg)
{
    int ret;
    do {
        ret = ::ioctl(fd, request, arg);
    } while (ret == -1 && (errno == EINTR || errno == EAGAIN));
    return ret == -1 ? errno : 0;
}

bool is_npuipc(int fd)
{
    char name[32] = {};
    drm_version v = {};
    v.name = name;
    v.name_len = sizeof(name) - 1;
    return ioctl_retry(fd, DRM_IOCTL_VERSION, &v) == 0 &&
           std::strcmp(name, NPUIPC_DRIVER_NAME) == 0;
}

Result<DeviceInfo> query_info(int fd)
{
    drm_npuipc_get_info args = {};
    if (int err = ioctl_retry(fd, DRM_IOCTL_NPUIPC_GET_INFO, &args))
        return Status::from_errno(err);
    DeviceInfo info;
    info.uapi_version = args.uapi_version;
    info.index = args.device_index;
    info.mem_total = args.mem_total;
    info.mem_free = args.mem_free;
    info.caps = args.caps;
    return info;
}

// Calls fn(fd, info) for every npuipc render node until it returns true,
// which keeps the fd open for the caller; the others are closed.
template <typename Fn> void for_each_node(Fn fn)
{
    for (int minor = kRenderMinorFirst; minor <= kRenderMinorLast; minor++) {
        char path[64];
        std::snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
        UniqueFd fd(::open(path, O_RDWR | O_CLOEXEC));
        if (!fd || !is_npuipc(fd.get()))
            continue;
        Result<DeviceInfo> info = query_info(fd.get());
        if (!info.ok())
            continue;
        info.value().node = path;
        if (fn(fd, info.value()))
            return;
    }
}

} // namespace

Result<Device> Device::open(uint32_t index)
{
    UniqueFd found;
    for_each_node([&](UniqueFd &fd, const DeviceInfo &info) {
        if (info.index != index)
            return false;
        found = std::move(fd);
        return true;
    });
    if (!found)
        return Status::from_errno(ENODEV);
    return Device(std::move(found), index);
}

Result<DeviceInfo> Device::info() const
{
    return query_info(fd_.get());
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

} // namespace npuipc
