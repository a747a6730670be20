// SPDX-License-Identifier: MIT
// The host-only helpers of acl_base_rt.h: data buffers, data type sizes,
// float16 conversions, the application log and CANN's attributes. None
// needs aclInit or a device, so they work in a fork child too. Their results are CANN's,
// quirks included (Documentation/library.md, "Host helpers").
#include "aclrt/runtime.h"
#include "log.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <unordered_set>

using namespace npuipc_rt;

// Opaque in the headers: CANN's users see a pointer only.
struct aclDataBuffer {
    void *data;
    size_t size;
};

namespace {

// The buffers aclCreateDataBuffer made and that are not destroyed yet:
// anything else given to these functions is refused instead of being
// dereferenced or freed. Never destroyed, as a buffer may be used while
// the process exits.
struct DataBuffers {
    std::mutex mu; // protects live
    std::unordered_set<const aclDataBuffer *> live;
};

DataBuffers &data_buffers();

DataBuffers *make_data_buffers()
{
    auto *buffers = new DataBuffers;
    // A fork child gets the table consistent and its lock free.
    pthread_atfork([] { data_buffers().mu.lock(); }, [] { data_buffers().mu.unlock(); },
                   [] { data_buffers().mu.unlock(); });
    return buffers;
}

DataBuffers &data_buffers()
{
    static DataBuffers *buffers = make_data_buffers();
    return *buffers;
}

// The error of a buffer this library did not make, or already destroyed.
aclError not_live(const aclDataBuffer *buffer)
{
    return fail(ACL_ERROR_INVALID_PARAM, "dataBuffer %p is not a live buffer of aclCreateDataBuffer",
                static_cast<const void *>(buffer));
}

// A getter's buffer: NULL as CANN answers it (nothing recorded), one this
// library did not make or already destroyed with a recorded error.
const aclDataBuffer *readable(const char *name, const aclDataBuffer *buffer)
{
    if (!buffer)
        return nullptr;
    DataBuffers &all = data_buffers();
    {
        std::lock_guard<std::mutex> lock(all.mu);
        if (all.live.count(buffer))
            return buffer;
    }
    ApiScope scope(name);
    not_live(buffer);
    return nullptr;
}

// IEEE binary16 fields.
constexpr uint32_t kHalfSign = 0x8000;
constexpr uint32_t kHalfMantissaBits = 10;
constexpr uint32_t kHalfMax = 0x7BFF; // 65504, where CANN saturates

// Rounds `value >> shift` to nearest, ties to even.
uint32_t shift_right_rounded(uint32_t value, unsigned shift)
{
    uint32_t kept = value >> shift;
    uint32_t dropped = value & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (dropped > half || (dropped == half && (kept & 1)))
        kept++;
    return kept;
}

} // namespace

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    // CANN checks neither argument: NULL data and size 0 make a buffer too.
    aclDataBuffer *buffer = new (std::nothrow) aclDataBuffer{data, size};
    if (!buffer)
        return nullptr;
    DataBuffers &all = data_buffers();
    try {
        std::lock_guard<std::mutex> lock(all.mu);
        all.live.insert(buffer);
    } catch (const std::bad_alloc &) {
        delete buffer;
        return nullptr;
    }
    return buffer;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    return api("aclDestroyDataBuffer", [&] {
        if (!dataBuffer)
            return fail(ACL_ERROR_INVALID_PARAM, "dataBuffer is NULL");
        DataBuffers &all = data_buffers();
        {
            std::lock_guard<std::mutex> lock(all.mu);
            if (!all.live.erase(dataBuffer))
                return not_live(dataBuffer);
        }
        delete dataBuffer; // the memory it describes stays the caller's
        return ACL_SUCCESS;
    }, true);
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
    return api("aclUpdateDataBuffer", [&] {
        if (!dataBuffer)
            return fail(ACL_ERROR_INVALID_PARAM, "dataBuffer is NULL");
        DataBuffers &all = data_buffers();
        std::lock_guard<std::mutex> lock(all.mu);
        if (!all.live.count(dataBuffer))
            return not_live(dataBuffer);
        dataBuffer->data = data;
        dataBuffer->size = size;
        return ACL_SUCCESS;
    }, true);
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    const aclDataBuffer *buffer = readable("aclGetDataBufferAddr", dataBuffer);
    return buffer ? buffer->data : nullptr;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
    // Deprecated for this: the size's low 32 bits, as CANN returns it.
    const aclDataBuffer *buffer = readable("aclGetDataBufferSize", dataBuffer);
    return buffer ? static_cast<uint32_t>(buffer->size) : 0;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    const aclDataBuffer *buffer = readable("aclGetDataBufferSizeV2", dataBuffer);
    return buffer ? buffer->size : 0;
}

size_t aclDataTypeSize(aclDataType dataType)
{
    switch (dataType) {
    case ACL_DT_UNDEFINED:
    case ACL_STRING:
        return 0;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
    case ACL_INT4: // sub-byte types count as a byte, as in CANN
    case ACL_UINT1:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_FLOAT16:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_BF16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 4;
    case ACL_COMPLEX128:
        return 16;
    default:
        // ACL_INT64, ACL_UINT64, ACL_DOUBLE, ACL_COMPLEX64, and, as CANN
        // answers them, the float6/float4 types and unknown values.
        return 8;
    }
}

aclFloat16 aclFloatToFloat16(float value)
{
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    const uint32_t sign = (bits >> 16) & kHalfSign;
    const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127; // unbiased
    const uint32_t mantissa = bits & 0x7FFFFF;

    // CANN saturates: infinities, NaNs and magnitudes of 2^16 and above are
    // the largest finite half of their sign.
    if (exponent > 15)
        return static_cast<aclFloat16>(sign | kHalfMax);
    if (exponent < -25) // below half the smallest subnormal (float zeros and subnormals too)
        return static_cast<aclFloat16>(sign);
    const uint32_t significand = mantissa | 0x800000; // 24 bits, 1.xxx * 2^exponent
    uint32_t half;
    if (exponent < -14) {
        // A subnormal half counts units of 2^-24: significand * 2^(exponent - 23 + 24).
        half = shift_right_rounded(significand, static_cast<unsigned>(-exponent - 1));
        // Rounding up to 0x400 gives the smallest normal half, which is its encoding.
    } else {
        half = (static_cast<uint32_t>(exponent + 15) << kHalfMantissaBits) |
               ((mantissa >> 13) & 0x3FF);
        // The 13 dropped bits, ties to even; a carry moves into the exponent.
        uint32_t dropped = mantissa & 0x1FFF;
        if (dropped > 0x1000 || (dropped == 0x1000 && (half & 1)))
            half++;
        if (half > kHalfMax)
            half = kHalfMax;
    }
    return static_cast<aclFloat16>(sign | half);
}

float aclFloat16ToFloat(aclFloat16 value)
{
    const uint32_t sign = (static_cast<uint32_t>(value) & kHalfSign) << 16;
    int exponent = (value >> kHalfMantissaBits) & 0x1F;
    uint32_t mantissa = value & 0x3FF;
    uint32_t bits;
    if (exponent == 0 && mantissa == 0) {
        bits = sign;
    } else {
        if (exponent == 0) {
            // A subnormal: normalise it, one exponent step per shift.
            exponent = 1;
            while (!(mantissa & 0x400)) {
                mantissa <<= 1;
                exponent--;
            }
            mantissa &= 0x3FF;
        }
        // As CANN: exponent 31 (infinities and NaNs) decodes like any other,
        // to a magnitude of 2^16 and above.
        bits = sign | (static_cast<uint32_t>(exponent + 112) << 23) | (mantissa << 13);
    }
    float out;
    std::memcpy(&out, &bits, sizeof(out));
    return out;
}

void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
               const char *fmt, ...)
{
    if (!fmt || !func || !file)
        return;
    const int level = static_cast<int>(logLevel);
    if (level < ACL_DEBUG || level > ACL_ERROR || !npuipc_log::enabled(level))
        return;
    // CANN's line: thread id, where, and the message in quotes, 1024 bytes
    // at most with "...[truncated]" ending a longer one.
    constexpr size_t kMax = 1024;
    static const char kCut[] = "...[truncated]";
    char body[kMax];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    bool cut = static_cast<size_t>(n) >= sizeof(body);
    char text[kMax];
    int m = std::snprintf(text, sizeof(text), "%ld %s:%s:%u: \"%s\"", static_cast<long>(syscall(SYS_gettid)),
                          func, file, line, body);
    if (m < 0)
        return;
    if (cut || static_cast<size_t>(m) >= sizeof(text))
        std::memcpy(text + sizeof(text) - sizeof(kCut), kCut, sizeof(kCut));
    npuipc_log::write(level, "APP", text);
}

// CANN's optional features (INF/NaN mode, BF16, operator JIT compilation)
// need AI cores, which a mock NPU has not: none is available. The list is
// empty but not NULL, as CANN's is when it has nothing to list.
aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{
    return api("aclGetCannAttributeList", [&] {
        if (!cannAttrList)
            return fail(ACL_ERROR_INVALID_PARAM, "cannAttrList is NULL");
        if (!num)
            return fail(ACL_ERROR_INVALID_PARAM, "num is NULL");
        static const aclCannAttr none[] = {ACL_CANN_ATTR_UNDEFINED};
        *cannAttrList = none;
        *num = 0;
        return ACL_SUCCESS;
    }, true);
}

aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)
{
    return api("aclGetCannAttribute", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        switch (cannAttr) {
        case ACL_CANN_ATTR_INF_NAN:
        case ACL_CANN_ATTR_BF16:
        case ACL_CANN_ATTR_JIT_COMPILE:
            *value = 0;
            return ACL_SUCCESS;
        default:
            return fail(ACL_ERROR_INVALID_PARAM, "unknown attribute %d", static_cast<int>(cannAttr));
        }
    }, true);
}
