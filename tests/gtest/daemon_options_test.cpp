// SPDX-License-Identifier: MIT
// The daemons' options (npuipc-fabricd(8), npuipc-broker(8)), on the host:
// a bad one ends the daemon with status 2 and its usage before it opens
// anything; good ones get past the options (here, to status 1: no fabric
// window, a socket that cannot be made).
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

// The exit status of the daemon at @path with @args, or -1 when it ran on
// (it served, which only good options reach) and was killed.
int exit_status(const char *path, const std::vector<std::string> &args)
{
    std::vector<char *> argv = {const_cast<char *>(path)};
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        // Never served: under /dev/null, no directory is made nor socket bound.
        ::setenv("NPUIPC_FABRIC_SOCKET", "/dev/null/npuipc-fabricd-options-test.sock", 1);
        ::execv(path, argv.data());
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

int fabricd_status(std::vector<std::string> more)
{
    std::vector<std::string> args = {"--listen", "127.0.0.1:0"};
    args.insert(args.end(), more.begin(), more.end());
    return exit_status(NPUIPC_FABRICD_PATH, args);
}

// The broker with a socket it cannot make.
int broker_status(std::vector<std::string> more)
{
    std::vector<std::string> args = {"--socket", "/dev/null/npuipc-broker-options-test.sock"};
    args.insert(args.end(), more.begin(), more.end());
    return exit_status(NPUIPC_BROKER_PATH, args);
}

TEST(FabricdOptions, ALeaseTermOutsideThreeTo300SecondsOrNotANumberIsRefused)
{
    for (const char *bad : {"0", "2", "301", "4294967299", "18446744073709551616", "-3", "+3", " 3",
                            "3s", "3.5", "", "x"})
        EXPECT_EQ(2, fabricd_status({"--lease-term", bad})) << "--lease-term '" << bad << "'";
    EXPECT_EQ(2, fabricd_status({"--lease-term"})) << "--lease-term without a value";
}

TEST(FabricdOptions, LeaseTermsFromThreeTo300SecondsAreTaken)
{
    for (const char *good : {"3", "30", "300"}) {
        const int status = fabricd_status({"--lease-term", good});
        EXPECT_TRUE(status == 1 || status == -1) << "--lease-term " << good << ": status " << status;
    }
}

TEST(FabricdOptions, NoListenAddressAnUnknownOptionOrABadPeerIsRefused)
{
    EXPECT_EQ(2, exit_status(NPUIPC_FABRICD_PATH, {}));
    EXPECT_EQ(2, fabricd_status({"--lease", "3"}));
    EXPECT_EQ(2, fabricd_status({"--peer", "x=1.2.3.4:5"}));
}

TEST(BrokerOptions, ARequestTimeoutOutside1To3600000MsOrNotANumberIsRefused)
{
    for (const char *bad : {"0", "3600001", "18446744073709551616", "-1", "1.5", "1s", "", "x"})
        EXPECT_EQ(2, broker_status({"--request-timeout-ms", bad})) << "--request-timeout-ms '" << bad << "'";
    EXPECT_EQ(2, broker_status({"--request-timeout-ms"})) << "--request-timeout-ms without a value";
}

TEST(BrokerOptions, RequestTimeoutsFrom1To3600000MsAreTaken)
{
    for (const char *good : {"1", "60000", "3600000"})
        EXPECT_EQ(1, broker_status({"--request-timeout-ms", good})) << "--request-timeout-ms " << good;
}

} // namespace
