// SPDX-License-Identifier: MIT
// npuipc devices as libnpuipc sees them: render nodes of the npuipc driver,
// addressed by the driver's device index rather than by DRM minor.
#ifndef NPUIPC_DEVICE_H
#define NPUIPC_DEVICE_H

#include <cstdint>
#include <string>
#include <vector>

#include "npuipc/result.h"
#include "npuipc/unique_fd.h"

namespace npuipc {

struct DeviceInfo {
    std::string node; // e.g. /dev/dri/renderD128; set by list_devices()
    uint32_t uapi_version = 0;
    uint32_t index = 0;
    uint64_t mem_total = 0;
    uint64_t mem_free = 0;
    uint64_t caps = 0;
};

class Device {
public:
    // Opens the render node of npuipc device `index`; ENODEV if none.
    static Result<Device> open(uint32_t index);

    Result<DeviceInfo> info() const;
    uint32_t index() const noexcept { return index_; }
    int fd() const noexcept { return fd_.get(); }

private:
    Device(UniqueFd fd, uint32_t index) : fd_(std::move(fd)), index_(index) {}

    UniqueFd fd_;
    uint32_t index_ = 0;
};

// Every npuipc device present, in index order. Empty when the module is
// not loaded; an error only when /dev/dri cannot be read.
Result<std::vector<DeviceInfo>> list_devices();

} // namespace npuipc

#endif // NPUIPC_DEVICE_H
