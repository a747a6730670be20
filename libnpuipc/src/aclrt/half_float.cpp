// SPDX-License-Identifier: MIT
// The NPU's 16-bit floating-point formats, converted as its engines do.
#include "aclrt/half_float.h"

#include <cmath>
#include <cstring>

namespace npuipc_rt {

// bfloat16 <-> float: the upper half of a float, rounded to nearest even.
float bf16_to_float(uint16_t v)
{
    uint32_t bits = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

uint16_t float_to_bf16(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    if (std::isnan(f))
        return static_cast<uint16_t>((bits >> 16) | 0x40); // stays a NaN
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<uint16_t>(bits >> 16);
}

// IEEE binary16 <-> float, infinities and NaNs kept (the engine's
// arithmetic; aclFloatToFloat16 saturates, as CANN's host helper does).
float fp16_to_float(uint16_t v)
{
    const uint32_t sign = static_cast<uint32_t>(v & 0x8000) << 16;
    const uint32_t exp = (v >> 10) & 0x1F;
    uint32_t mant = v & 0x3FF;
    uint32_t bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000 | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else { // subnormal: normalised as a float
        int shift = 0;
        while (!(mant & 0x400)) {
            mant <<= 1;
            shift++;
        }
        bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mant & 0x3FF) << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

uint16_t float_to_fp16(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
    const uint32_t abs = bits & 0x7FFFFFFF;
    if (abs > 0x7F800000)
        return static_cast<uint16_t>(sign | 0x7E00); // a quiet NaN
    if (abs >= 0x477FF000)                           // rounds to 65536 or more
        return static_cast<uint16_t>(sign | 0x7C00);
    if (abs <= 0x33000000) // half the smallest subnormal or less: to zero (even)
        return sign;
    const int exp = static_cast<int>(abs >> 23);
    const uint32_t significand = (abs & 0x7FFFFF) | 0x800000;
    // Normal results keep 11 bits of the 24; subnormal ones fewer.
    const int shift = exp < 113 ? 126 - exp : 13;
    uint32_t kept = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++; // nearest, ties to even; a carry moves up an exponent
    if (exp < 113)
        return static_cast<uint16_t>(sign | kept);
    return static_cast<uint16_t>(sign | ((static_cast<uint32_t>(exp - 112) << 10) + (kept - 0x400)));
}

} // namespace npuipc_rt
