// SPDX-License-Identifier: MIT
// A child with a chosen PID, to test what happens when a PID is reused.
#ifndef NPUIPC_TESTS_FORK_AT_PID_H
#define NPUIPC_TESTS_FORK_AT_PID_H

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <fstream>
#include <functional>

// Makes a child whose PID is `pid` by setting ns_last_pid (needs
// CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN): fork_child forks one, which
// must wait to be told to go before it does anything; children that got
// another PID are killed and reaped. -1 if ns_last_pid cannot be written
// here (the caller skips), -2 and a test failure if other forks took the
// PID 20 times running (the test did not test).
inline pid_t ForkAtPid(pid_t pid, const std::function<pid_t()> &fork_child)
{
    for (int attempt = 0; attempt < 20; attempt++) {
        {
            std::ofstream last("/proc/sys/kernel/ns_last_pid");
            if (!last)
                return -1;
            last << (pid - 1) << std::flush;
            if (!last)
                return -1;
        }
        pid_t child = fork_child();
        if (child == pid)
            return child;
        if (child > 0) {
            ::kill(child, SIGKILL);
            (void)::waitpid(child, nullptr, 0);
        }
    }
    ADD_FAILURE() << "20 forks after setting ns_last_pid did not get PID " << pid;
    return -2;
}

#endif // NPUIPC_TESTS_FORK_AT_PID_H
