// SPDX-License-Identifier: MIT
// npuipc-fabricd's log: one line on stderr per event.
#ifndef NPUIPC_FABRICD_LOG_H
#define NPUIPC_FABRICD_LOG_H

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace npuipc_fabricd {

inline void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void logf(const char *fmt, ...)
{
    // One write a line: threads log at once.
    char line[512];
    int n = std::snprintf(line, sizeof(line), "npuipc-fabricd: ");
    va_list ap;
    va_start(ap, fmt);
    n += std::vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
    va_end(ap);
    n = std::min<int>(n, sizeof(line) - 2);
    line[n++] = '\n';
    if (::write(STDERR_FILENO, line, n) < 0) {
        // Nowhere else to say it.
    }
}

} // namespace npuipc_fabricd

#endif // NPUIPC_FABRICD_LOG_H
