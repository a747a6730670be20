// SPDX-License-Identifier: MIT
// For GoogleTests that run on both servers of a tools/vm-pair at once:
// which server this is, and one connection to the other server's test
// (server 0 listens, server 1 connects, on `port`), made before the first
// test, over which the two exchange what each needs of the other and wait
// for each other. Every wait is bounded (240 s: vm-run may boot a guest a
// second time, after 120 s).
#ifndef NPUIPC_TESTS_PAIR_PEER_H
#define NPUIPC_TESTS_PAIR_PEER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include <gtest/gtest.h>

#include "npuipc/unique_fd.h"

namespace npuipc_pair {

constexpr int kWaitS = 240;

inline uint32_t me()
{
    const char *s = std::getenv("NPUIPC_SERVER");
    return s ? static_cast<uint32_t>(std::atoi(s)) : 0;
}

inline uint32_t peer()
{
    return 1 - me();
}

inline int &peer_sock()
{
    static int fd = -1;
    return fd;
}

inline void connect_peer(int port)
{
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    const char *peer_ip = std::getenv("NPUIPC_PEER");
    ASSERT_NE(nullptr, peer_ip) << "not in a tools/vm-pair guest";
    int &sock = peer_sock();
    timeval tv = {kWaitS, 0};
    if (me() == 0) {
        npuipc::UniqueFd l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        int one = 1;
        ::setsockopt(l.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        ASSERT_EQ(0, ::bind(l.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)));
        ASSERT_EQ(0, ::listen(l.get(), 1));
        ::setsockopt(l.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        sock = ::accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC);
    } else {
        ::inet_pton(AF_INET, peer_ip, &addr.sin_addr);
        for (int i = 0; i < kWaitS * 10 && sock < 0; i++) {
            sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (::connect(sock, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
                ::close(sock);
                sock = -1;
                ::usleep(100000);
            }
        }
    }
    ASSERT_LE(0, sock) << "no connection to the other server";
    ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

// Sends what this server has and receives the other's, in lockstep.
template <typename T> T swap_with_peer(const T &mine)
{
    T theirs{};
    EXPECT_EQ(static_cast<ssize_t>(sizeof(T)),
              ::send(peer_sock(), &mine, sizeof(T), MSG_NOSIGNAL));
    size_t got = 0;
    while (got < sizeof(T)) {
        ssize_t n = ::recv(peer_sock(), reinterpret_cast<char *>(&theirs) + got, sizeof(T) - got, 0);
        if (n <= 0) {
            ADD_FAILURE() << "the other server went away";
            break;
        }
        got += n;
    }
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
