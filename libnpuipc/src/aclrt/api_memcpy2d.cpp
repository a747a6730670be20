// SPDX-License-Identifier: MIT
// 2-D copies: `height` rows of `width` bytes, `spitch` bytes apart in the
// source and `dpitch` in the destination. Device memory is mapped into the
// process, so the CPU copies the rows: at once for aclrtMemcpy2d and for
// an idle stream, otherwise on the runtime's copier thread when the stream
// reaches the copy (one task, whatever the number of rows), with the host
// source read at the call, as CANN reads pageable memory.
#include <cstring>
#include <vector>

#include "aclrt/memory_place.h"
#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// CANN's limits on a 2-D copy.
constexpr size_t kMaxHeight = 5 * 1024 * 1024;
constexpr size_t kMaxWidth = 5000000;

struct Copy2d {
    void *dst;
    size_t dpitch;
    const void *src;
    size_t spitch;
    size_t width, height;
    Place d, s;
    aclrtMemcpyKind kind; // resolved: H2D, D2H or D2D
};

// The bytes a pitched range spans.
size_t span(size_t pitch, size_t width, size_t height)
{
    return pitch * (height - 1) + width;
}

// CANN's checks of the arguments, before it looks at the stream.
aclError check_2d_args(const Copy2d &c, aclrtMemcpyKind kind)
{
    if (!c.dst || !c.src)
        return fail(ACL_ERROR_INVALID_PARAM, "dst and src must not be NULL");
    if (c.width > c.spitch || c.width > c.dpitch)
        return fail(ACL_ERROR_INVALID_PARAM, "width %zu is larger than a pitch (dpitch %zu, spitch %zu)",
                    c.width, c.dpitch, c.spitch);
    if (kind != ACL_MEMCPY_HOST_TO_DEVICE && kind != ACL_MEMCPY_DEVICE_TO_HOST &&
        kind != ACL_MEMCPY_DEVICE_TO_DEVICE && kind != ACL_MEMCPY_DEFAULT)
        return fail(ACL_ERROR_INVALID_PARAM, "copy kind %d is not one of a 2-D copy", kind);
    return ACL_SUCCESS;
}

// Whether host memory at `p` is the application's own (malloc, the
// stack), not aclrtMallocHost's: CANN takes a kind for it only from those
// the pointers allow, where it corrects any kind for its own host memory.
bool pageable(Runtime &rt, const void *p)
{
    uintptr_t base;
    size_t size;
    return !host_allocation_of(rt, p, base, size);
}

// The runtime's checks, in CANN's order, then the kind from where the
// memory lies.
aclError check_2d_memory(Runtime &rt, Copy2d &c, aclrtMemcpyKind kind, bool async)
{
    if (c.height > kMaxHeight || c.width > kMaxWidth)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%zu rows of %zu bytes: at most %zu rows of %zu",
                    c.height, c.width, kMaxHeight, kMaxWidth);
    if (!async && kind == ACL_MEMCPY_DEVICE_TO_DEVICE)
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "aclrtMemcpy2d copies between host and device; use aclrtMemcpy2dAsync");
    // Overflow-safe: the limits above keep pitch * height within 64 bits
    // only for sane pitches.
    if (c.dpitch > SIZE_MAX / c.height || c.spitch > SIZE_MAX / c.height)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "the pitches span more than the address space");
    if (aclError err = locate(rt, c.dst, span(c.dpitch, c.width, c.height), c.d))
        return err;
    if (aclError err = locate(rt, c.src, span(c.spitch, c.width, c.height), c.s))
        return err;
    const bool dd = c.d.alloc != nullptr, sd = c.s.alloc != nullptr;
    if (!dd && !sd)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "both sides are host memory");
    c.kind = dd && sd ? ACL_MEMCPY_DEVICE_TO_DEVICE
             : dd     ? ACL_MEMCPY_HOST_TO_DEVICE
                      : ACL_MEMCPY_DEVICE_TO_HOST;
    if (!async && c.kind == ACL_MEMCPY_DEVICE_TO_DEVICE)
        return fail(ACL_ERROR_RT_PARAM_INVALID,
                    "both sides are device memory: aclrtMemcpy2d copies between host and device");
    // Pageable host memory and device memory: the kind given, or DEFAULT,
    // must be one the pointers allow (device to device names both).
    const void *host = c.kind == ACL_MEMCPY_HOST_TO_DEVICE ? c.src : c.dst;
    if (c.kind != ACL_MEMCPY_DEVICE_TO_DEVICE && kind != ACL_MEMCPY_DEFAULT &&
        kind != ACL_MEMCPY_DEVICE_TO_DEVICE && kind != c.kind && pageable(rt, host))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "copy kind %d does not match the memory: dst is %s, src is %s",
                    kind, c.kind == ACL_MEMCPY_HOST_TO_DEVICE ? "device" : "host",
                    c.kind == ACL_MEMCPY_HOST_TO_DEVICE ? "host" : "device");
    return ACL_SUCCESS;
}

void copy_rows(const Copy2d &c)
{
    for (size_t r = 0; r < c.height; r++)
        std::memmove(static_cast<char *>(c.dst) + r * c.dpitch,
                     static_cast<const char *>(c.src) + r * c.spitch, c.width);
}

} // namespace

extern "C" {

aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height, aclrtMemcpyKind kind)
{
    return api("aclrtMemcpy2d", [&] {
        if (width == 0 || height == 0)
            return ACL_SUCCESS; // as CANN: nothing to copy, nothing checked
        Runtime &rt = Runtime::get();
        Copy2d c{dst, dpitch, src, spitch, width, height, {}, {}, kind};
        if (aclError err = check_2d_args(c, kind))
            return err;
        if (aclError err = check_2d_memory(rt, c, kind, false))
            return err;
        if (aclError err = check_capture_mode())
            return err;
        uint32_t device;
        if (aclError err = working_device(rt, device))
            return err;
        if (aclError err = check_peer(rt, device, c.d))
            return err;
        if (aclError err = check_peer(rt, device, c.s))
            return err;
        copy_rows(c);
        return ACL_SUCCESS;
    });
}

aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t height, aclrtMemcpyKind kind, aclrtStream stream)
{
    return api("aclrtMemcpy2dAsync", [&] {
        if (width == 0 || height == 0)
            return ACL_SUCCESS;
        Runtime &rt = Runtime::get();
        Copy2d c{dst, dpitch, src, spitch, width, height, {}, {}, kind};
        if (aclError err = check_2d_args(c, kind))
            return err;
        std::shared_ptr<Stream> s;
        if (aclError err = find_stream(stream, s))
            return err;
        if (aclError err = check_2d_memory(rt, c, kind, true))
            return err;
        if (aclError err = stopped_context_error(*s))
            return err;
        if (aclError err = check_peer(rt, s->device, c.d))
            return err;
        if (aclError err = check_peer(rt, s->device, c.s))
            return err;
        if (captured(*s, "aclrtMemcpy2dAsync", [=](aclrtStream to) {
                return aclrtMemcpy2dAsync(dst, dpitch, src, spitch, width, height, kind, to);
            }))
            return ACL_SUCCESS;
        if (stream_idle(*s)) {
            copy_rows(c);
            return ACL_SUCCESS;
        }
        HostCopy copy;
        copy.stream = s;
        copy.dst = dst;
        copy.dpitch = dpitch;
        copy.count = width;
        copy.rows = height;
        copy.dest = std::move(c.d.alloc);
        copy.source = std::move(c.s.alloc);
        if (c.kind == ACL_MEMCPY_HOST_TO_DEVICE) {
            // Read now, packed: the caller may reuse its buffer at once.
            copy.staged.resize(width * height);
            for (size_t r = 0; r < height; r++)
                std::memcpy(copy.staged.data() + r * width, static_cast<const char *>(src) + r * spitch,
                            width);
            copy.src = copy.staged.data();
            copy.spitch = width;
        } else {
            copy.src = src;
            copy.spitch = spitch;
        }
        return queue_copy(rt, std::move(copy));
    });
}

} // extern "C"
