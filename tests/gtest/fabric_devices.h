// SPDX-License-Identifier: MIT
// For the GoogleTests of fabric memory on a tools/vm-pair --bind-window
// server: its fabric window and NPU 0, and what the tests do with them
// (fabric memory of this server's part, an NPU's view of a dma-buf, fills
// and copies through a stream).
#ifndef NPUIPC_TESTS_FABRIC_DEVICES_H
#define NPUIPC_TESTS_FABRIC_DEVICES_H

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "drm/npuipc_drm.h"
#include "npuipc/unique_fd.h"

namespace npuipc_fabric_test {

constexpr uint64_t kSize = 2ULL << 20;

inline int ioctl_errno(int fd, unsigned long request, void *arg)
{
    return drmIoctl(fd, request, arg) == 0 ? 0 : errno;
}

// A render node of npuipc: the fabric window, or NPU 0.
inline npuipc::UniqueFd open_node(bool window)
{
    for (int minor = 128; minor < 192; minor++) {
        std::string path = "/dev/dri/renderD" + std::to_string(minor);
        npuipc::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
        drm_npuipc_get_info info{};
        if (!fd || ioctl_errno(fd.get(), DRM_IOCTL_NPUIPC_GET_INFO, &info) != 0)
            continue;
        if (window ? (info.caps & NPUIPC_CAP_FABRIC) != 0 : info.device_index == 0)
            return fd;
    }
    return npuipc::UniqueFd();
}

// The window and NPU 0, opened by open_devices().
class FabricDevices {
protected:
    void open_devices()
    {
        window = open_node(true);
        npu = open_node(false);
        ASSERT_TRUE(window.valid());
        ASSERT_TRUE(npu.valid());
    }

    // Fabric memory of this server's part, as a dma-buf.
    npuipc::UniqueFd fabric_memory()
    {
        drm_npuipc_bo_create create{};
        create.size = kSize;
        create.page_class = NPUIPC_PAGE_CLASS_HUGE;
        EXPECT_EQ(0, ioctl_errno(window.get(), DRM_IOCTL_NPUIPC_BO_CREATE, &create));
        int fd = -1;
        EXPECT_EQ(0, drmPrimeHandleToFD(window.get(), create.handle, DRM_CLOEXEC | DRM_RDWR, &fd));
        drmCloseBufferHandle(window.get(), create.handle);
        return npuipc::UniqueFd(fd);
    }

    // Where a dma-buf of the window lies in it.
    uint64_t fabric_offset(int dmabuf)
    {
        uint32_t handle = 0;
        EXPECT_EQ(0, drmPrimeFDToHandle(window.get(), dmabuf, &handle));
        drm_npuipc_bo_info info{};
        info.handle = handle;
        EXPECT_EQ(0, ioctl_errno(window.get(), DRM_IOCTL_NPUIPC_BO_INFO, &info));
        drmCloseBufferHandle(window.get(), handle);
        return info.fabric_offset;
    }

    // The NPU's handle for a dma-buf.
    uint32_t on_npu(int dmabuf)
    {
        drm_npuipc_bo_import import{};
        import.fd = dmabuf;
        import.flags = NPUIPC_BO_IMPORT_PEER_ACCESS;
        EXPECT_EQ(0, ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_BO_IMPORT, &import));
        return import.handle;
    }

    // The job's status, or the negative errno of submitting or waiting. A
    // stream of its own: a job that failed leaves its stream failed.
    int run(drm_npuipc_job job)
    {
        drm_npuipc_obj_create create{};
        create.type = NPUIPC_OBJ_STREAM;
        int err = ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_OBJ_CREATE, &create);
        if (err)
            return -err;
        const uint32_t stream = create.handle;
        drm_npuipc_submit submit{};
        submit.stream = stream;
        submit.jobs = reinterpret_cast<uintptr_t>(&job);
        submit.job_count = 1;
        submit.job_size = sizeof(job);
        err = ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_SUBMIT, &submit);
        drm_npuipc_wait wait{};
        wait.handle = stream;
        wait.timeout_ns = 30LL * 1000000000;
        if (!err)
            err = ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_WAIT, &wait);
        drm_npuipc_obj_destroy destroy{};
        destroy.handle = stream;
        ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_OBJ_DESTROY, &destroy);
        return err ? -err : wait.status;
    }

    int fill(uint32_t bo, uint8_t value)
    {
        drm_npuipc_job job{};
        job.kind = NPUIPC_JOB_FILL;
        job.dst = bo;
        job.size = kSize;
        job.value = value;
        return run(job);
    }

    // Copies NPU buffer @bo into a new buffer: the copy's status, and the
    // new buffer's handle in *copy.
    int copy_out(uint32_t bo, uint32_t *copy)
    {
        drm_npuipc_bo_create create{};
        create.size = kSize;
        int err = ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_BO_CREATE, &create);
        if (err)
            return -err;
        *copy = create.handle;
        drm_npuipc_job job{};
        job.kind = NPUIPC_JOB_COPY;
        job.dst = create.handle;
        job.src = bo;
        job.size = kSize;
        return run(job);
    }

    // Whether every byte of NPU buffer @bo is @value, read through a copy.
    bool holds(uint32_t bo, uint8_t value)
    {
        uint32_t copy = 0;
        if (copy_out(bo, &copy) != 0)
            return false;
        drm_npuipc_bo_info info{};
        info.handle = copy;
        bool all = ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_BO_INFO, &info) == 0;
        void *p = all ? ::mmap(nullptr, kSize, PROT_READ, MAP_SHARED, npu.get(), info.mmap_offset)
                      : MAP_FAILED;
        all = p != MAP_FAILED;
        for (uint64_t i = 0; i < kSize && all; i++)
            all = static_cast<const uint8_t *>(p)[i] == value;
        if (p != MAP_FAILED)
            ::munmap(p, kSize);
        drmCloseBufferHandle(npu.get(), copy);
        return all;
    }

    npuipc::UniqueFd window, npu;
};

} // namespace npuipc_fabric_test

#endif // NPUIPC_TESTS_FABRIC_DEVICES_H
