// SPDX-License-Identifier: MIT
// npuipc-fabricd's options (npuipc-fabricd(8)), on the host: a bad one
// ends the daemon with status 2 and its usage before it opens anything;
// good ones get past the options (here, with no fabric window, to status 1).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace {

// The daemon's exit status with @args, or -1 when it ran on (a fabric
// window here: it served, which only good options reach) and was killed.
int exit_status(const std::vector<std::string> &args)
{
    std::vector<char *> argv = {const_cast<char *>("npuipc-fabricd")};
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        // Never served: under /dev/null, no directory is made nor socket bound.
        ::setenv("NPUIPC_FABRIC_SOCKET", "/dev/null/npuipc-fabricd-options-test.sock", 1);
        ::execv(NPUIPC_FABRICD_PATH, argv.data());
        ::_exit(127);
    }
    if (pid < 0)
        return -2;
    int status = 0;
    for (int i = 0; i < 100; i++) {
        if (::waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
}

const std::vector<std::string> kListen = {"--listen", "127.0.0.1:0"};

std::vector<std::string> with(std::vector<std::string> more)
{
    std::vector<std::string> args = kListen;
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

TEST(FabricdOptions, ALeaseTermOutsideThreeTo300SecondsOrNotANumberIsRefused)
{
    for (const char *bad : {"0", "2", "301", "4294967299", "18446744073709551616", "-3", "+3", " 3",
                            "3s", "3.5", "", "x"})
        EXPECT_EQ(2, exit_status(with({"--lease-term", bad}))) << "--lease-term '" << bad << "'";
    EXPECT_EQ(2, exit_status(with({"--lease-term"}))) << "--lease-term without a value";
}

TEST(FabricdOptions, LeaseTermsFromThreeTo300SecondsAreTaken)
{
    for (const char *good : {"3", "30", "300"}) {
        const int status = exit_status(with({"--lease-term", good}));
        EXPECT_TRUE(status == 1 || status == -1) << "--lease-term " << good << ": status " << status;
    }
}

TEST(FabricdOptions, NoListenAddressAnUnknownOptionOrABadPeerIsRefused)
{
    EXPECT_EQ(2, exit_status({}));
    EXPECT_EQ(2, exit_status(with({"--lease", "3"})));
    EXPECT_EQ(2, exit_status(with({"--peer", "x=1.2.3.4:5"})));
}

} // namespace
