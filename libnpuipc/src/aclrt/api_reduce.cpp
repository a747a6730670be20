// SPDX-License-Identifier: MIT
// aclrtReduceAsync (aclrt_memory(3)): CANN's copy engine reduces a source
// into a destination in stream order, dst[i] = dst[i] op src[i]. A mock
// NPU's copy jobs only move bytes, so the reduction is a task of the
// runtime's copier thread: once the stream reaches it, the CPU combines the
// two ranges of device memory through their mappings, and the stream's
// later work follows it.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "aclrt/capture.h"
#include "aclrt/half_float.h"
#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

constexpr uint64_t kMaxCount = 4ULL << 30; // CANN's limit of one reduce

// Integers wrap, as the engine's adders do.
template <typename T> T add(T a, T b)
{
    if constexpr (std::is_integral<T>::value) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
        return a + b;
    }
}

template <typename T> T combine(T a, T b, aclrtReduceKind kind)
{
    if constexpr (std::is_floating_point<T>::value) {
        if (a != a) // a NaN stays, whichever side it is on
            return a;
        if (b != b)
            return b;
    }
    switch (kind) {
    case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX:
        return a < b ? b : a;
    case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN:
        return b < a ? b : a;
    default:
        return add(a, b);
    }
}

template <typename T> void reduce_as(void *dst, const void *src, uint64_t n, aclrtReduceKind kind)
{
    for (uint64_t i = 0; i < n; i++) {
        T a, b;
        std::memcpy(&a, static_cast<const char *>(dst) + i * sizeof(T), sizeof(T));
        std::memcpy(&b, static_cast<const char *>(src) + i * sizeof(T), sizeof(T));
        T r = combine(a, b, kind);
        std::memcpy(static_cast<char *>(dst) + i * sizeof(T), &r, sizeof(T));
    }
}

// Half-precision types, combined as floats.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void reduce_half(void *dst, const void *src, uint64_t n, aclrtReduceKind kind)
{
    for (uint64_t i = 0; i < n; i++) {
        uint16_t a, b;
        std::memcpy(&a, static_cast<const char *>(dst) + i * 2, 2);
        std::memcpy(&b, static_cast<const char *>(src) + i * 2, 2);
        uint16_t r = FromFloat(combine(ToFloat(a), ToFloat(b), kind));
        std::memcpy(static_cast<char *>(dst) + i * 2, &r, 2);
    }
}

// The element size of the types the mock NPU's copy engine reduces, as
// CANN's A2/A3 engines do; 0 for the others.
size_t element_size(aclDataType type)
{
    switch (type) {
    case ACL_INT8:
        return 1;
    case ACL_INT16:
    case ACL_FLOAT16:
    case ACL_BF16:
        return 2;
    case ACL_INT32:
    case ACL_FLOAT:
        return 4;
    default:
        return 0;
    }
}

void reduce(void *dst, const void *src, uint64_t bytes, aclrtReduceKind kind, aclDataType type)
{
    const uint64_t n = bytes / element_size(type);
    switch (type) {
    case ACL_INT8:
        return reduce_as<int8_t>(dst, src, n, kind);
    case ACL_INT16:
        return reduce_as<int16_t>(dst, src, n, kind);
    case ACL_INT32:
        return reduce_as<int32_t>(dst, src, n, kind);
    case ACL_FLOAT:
        return reduce_as<float>(dst, src, n, kind);
    case ACL_FLOAT16:
        return reduce_half<fp16_to_float, float_to_fp16>(dst, src, n, kind);
    case ACL_BF16:
        return reduce_half<bf16_to_float, float_to_bf16>(dst, src, n, kind);
    default:
        return;
    }
}

// The types CANN's first layer knows for a reduce.
bool known_type(aclDataType type)
{
    switch (type) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_INT8:
    case ACL_INT32:
    case ACL_UINT8:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_UINT32:
    case ACL_BF16:
    case ACL_INT4:
        return true;
    default:
        return false;
    }
}

aclError reduce_async(void *dst, const void *src, uint64_t count, aclrtReduceKind kind, aclDataType type,
                      aclrtStream stream)
{
    Runtime &rt = Runtime::get();
    std::shared_ptr<Stream> s;
    if (aclError err = find_stream(stream, s))
        return err;
    if (aclError err = stopped_context_error(*s))
        return err;
    Place d, from;
    if (aclError err = locate(rt, dst, count, d))
        return err;
    if (aclError err = locate(rt, src, count, from))
        return err;
    if (!d.alloc || !from.alloc)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s is not device memory", d.alloc ? "src" : "dst");
    if (d.alloc->device != s->device || from.alloc->device != s->device)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "dst and src must be memory of the stream's device");
    const bool same = d.alloc == from.alloc || (d.alloc->physical && d.alloc->physical == from.alloc->physical);
    if (same && d.offset != from.offset && d.offset < from.offset + count && from.offset < d.offset + count)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "dst and src overlap without being the same range");
    if (captured(*s, "aclrtReduceAsync",
                 [=](aclrtStream to) { return reduce_async(dst, src, count, kind, type, to); }))
        return ACL_SUCCESS;
    HostCopy task;
    task.stream = s;
    task.dst = dst;
    task.src = src;
    task.dest = std::move(d.alloc);
    task.source = std::move(from.alloc);
    task.resolve = [count, kind, type](HostCopy &t) {
        reduce(t.dst, t.src, count, kind, type);
        t.count = 0; // combined in place: nothing left to move
        return ACL_SUCCESS;
    };
    return queue_copy(rt, std::move(task));
}

} // namespace

extern "C" {

aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind, aclDataType type,
                          aclrtStream stream, void *reserve)
{
    return api("aclrtReduceAsync", [&] {
        if (!dst || !src)
            return fail(ACL_ERROR_INVALID_PARAM, "%s is NULL", dst ? "src" : "dst");
        if (reserve)
            return fail(ACL_ERROR_INVALID_PARAM, "reserve must be NULL");
        if (!known_type(type))
            return fail(ACL_ERROR_INVALID_PARAM, "data type %d cannot be reduced", static_cast<int>(type));
        if (count == 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "count is 0");
        if (kind < ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM || kind > ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "kind %d is not a reduction", static_cast<int>(kind));
        if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM && count > kMaxCount)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "count %lu is above 4 GiB", static_cast<unsigned long>(count));
        // What the copy engine can do, as CANN asks its driver.
        if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL: the mock NPU's copy engine does not compare");
        const size_t size = element_size(type);
        if (size == 0)
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "data type %d: the copy engine reduces int8, int16, int32, float16, bfloat16 and float",
                        static_cast<int>(type));
        if (reinterpret_cast<uintptr_t>(dst) % size || reinterpret_cast<uintptr_t>(src) % size)
            return fail(ACL_ERROR_RT_ADDR_UNALIGNED, "dst and src must be aligned to the %zu-byte elements", size);
        if (count % size)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "count %lu bytes is not a whole number of %zu-byte elements",
                        static_cast<unsigned long>(count), size);
        return reduce_async(dst, src, count, kind, type, stream);
    });
}

} // extern "C"
