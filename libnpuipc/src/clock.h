// SPDX-License-Identifier: MIT
// The monotonic clock every deadline of the library is measured on, and the
// one conversion of a CANN millisecond timeout (-1: forever) to the
// driver's nanoseconds.
#ifndef NPUIPC_SRC_CLOCK_H
#define NPUIPC_SRC_CLOCK_H

#include <cstdint>
#include <time.h>

namespace npuipc_clock {

inline int64_t now_ns()
{
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t now_ms()
{
    return now_ns() / 1000000;
}

// The now_ms() by which a wait of `timeout_ms` (negative: forever, -1) is
// over: one more than the sum, as now_ms() truncates, so that the wait
// never ends before timeout_ms have passed.
inline int64_t deadline_ms(int64_t timeout_ms)
{
    return timeout_ms < 0 ? -1 : now_ms() + timeout_ms + 1;
}

// A timeout in milliseconds, negative meaning forever, in nanoseconds (-1).
inline int64_t ms_to_ns(int32_t ms)
{
    return ms < 0 ? -1 : static_cast<int64_t>(ms) * 1000000;
}

} // namespace npuipc_clock

#endif // NPUIPC_SRC_CLOCK_H
