// SPDX-License-Identifier: MIT
// Slow tests whose subject is the library, the same on every kernel and
// device, that make check runs once: in step 3 on the first kernel. Its
// other passes set NPUIPC_TEST_SLOW_ONCE_ELSEWHERE (tools/check), and the
// tests skip there (tests/expected-skips names each).
#ifndef NPUIPC_RUN_ONCE_H
#define NPUIPC_RUN_ONCE_H

#include <gtest/gtest.h>

#include <cstdlib>

#define SKIP_WHERE_RUN_ONCE_ELSEWHERE()                                                    \
    do {                                                                                   \
        if (std::getenv("NPUIPC_TEST_SLOW_ONCE_ELSEWHERE"))                                \
            GTEST_SKIP() << "NPUIPC_TEST_SLOW_ONCE_ELSEWHERE is set: another step runs it"; \
    } while (0)

#endif
