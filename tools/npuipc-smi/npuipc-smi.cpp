// SPDX-License-Identifier: MIT
// npuipc-smi: lists npuipc devices and their memory, like nvidia-smi or
// npu-smi do for real hardware.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "drm/npuipc_drm.h"
#include "npuipc/device.h"

namespace {

const char *kind(uint64_t caps)
{
    return (caps & NPUIPC_CAP_VIRTUAL) ? "virtual" : "pci";
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1) {
        std::fprintf(stderr, "usage: %s\nLists npuipc devices.\n", argv[0]);
        return 2;
    }
    auto devices = npuipc::list_devices();
    if (!devices.ok()) {
        std::fprintf(stderr, "npuipc-smi: %s\n", std::strerror(devices.error()));
        return 1;
    }
    if (devices.value().empty()) {
        std::printf("no npuipc device found (is npuipc.ko loaded?)\n");
        return 1;
    }
    std::printf("%-5s %-20s %-8s %12s %12s %5s\n", "INDEX", "NODE", "KIND", "MEM TOTAL", "MEM FREE", "UAPI");
    for (const npuipc::DeviceInfo &d : devices.value())
        std::printf("%-5u %-20s %-8s %9" PRIu64 " MiB %9" PRIu64 " MiB %5u\n", d.index, d.node.c_str(),
                    kind(d.caps), d.mem_total >> 20, d.mem_free >> 20, d.uapi_version);
    return 0;
}
