// SPDX-License-Identifier: MIT
// The NPU's 16-bit floating-point formats (IEEE binary16 and bfloat16) as
// floats and back, rounded to nearest even, infinities and NaNs kept: the
// arithmetic of its engines (aclFloatToFloat16 saturates, as CANN's host
// helper does).
#ifndef NPUIPC_ACLRT_HALF_FLOAT_H
#define NPUIPC_ACLRT_HALF_FLOAT_H

#include <cstdint>

namespace npuipc_rt {

float fp16_to_float(uint16_t v);
uint16_t float_to_fp16(float f);
float bf16_to_float(uint16_t v);
uint16_t float_to_bf16(float f);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_HALF_FLOAT_H
