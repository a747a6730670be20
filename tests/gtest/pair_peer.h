// SPDX-License-Identifier: MIT
// For GoogleTests that run on both servers of a tools/vm-pair at once: the
// link of pair_link.h made before the first test, and its exchanges as
// checks.
#ifndef NPUIPC_TESTS_PAIR_PEER_H
#define NPUIPC_TESTS_PAIR_PEER_H

#include <sys/socket.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "pair_link.h"

namespace npuipc_pair {

inline int &peer_sock()
{
    static int fd = -1;
    return fd;
}

inline void connect_peer(int port)
{
    ASSERT_NE(nullptr, std::getenv("NPUIPC_PEER")) << "not in a tools/vm-pair guest";
    peer_sock() = link_to_peer(port);
    ASSERT_LE(0, peer_sock()) << "no connection to the other server";
}

// Sends what this server has and receives the other's, in lockstep.
template <typename T> T swap_with_peer(const T &mine)
{
    T theirs{};
    if (!exchange(peer_sock(), mine, theirs))
        ADD_FAILURE() << "the other server went away";
    return theirs;
}

// Both servers got here.
inline void meet()
{
    EXPECT_EQ('m', swap_with_peer('m'));
}

// In a fixture's TearDown: a test that failed may have left the other
// server waiting for a word, or a word unread; the connection goes, so
// that every later exchange fails at once on both sides instead of
// reading the wrong bytes or waiting out the timeout.
inline void leave_if_failed()
{
    if (::testing::Test::HasFailure() && peer_sock() >= 0)
        ::shutdown(peer_sock(), SHUT_RDWR);
}

class PeerEnvironment : public ::testing::Environment {
public:
    explicit PeerEnvironment(int port) : port_(port) {}
    void SetUp() override { connect_peer(port_); }

private:
    int port_;
};

} // namespace npuipc_pair

// main() of a pair test meeting its peer on `port`.
#define NPUIPC_PAIR_TEST_MAIN(port)                                                        \
    int main(int argc, char **argv)                                                        \
    {                                                                                      \
        ::testing::InitGoogleTest(&argc, argv);                                            \
        ::testing::AddGlobalTestEnvironment(new npuipc_pair::PeerEnvironment(port));       \
        return RUN_ALL_TESTS();                                                            \
    }

#endif // NPUIPC_TESTS_PAIR_PEER_H
