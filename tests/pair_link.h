// SPDX-License-Identifier: MIT
// For programs that run on both servers of a tools/vm-pair at once (tests,
// benchmarks): which server this is, and one TCP connection to the other
// server's program over their link (server 0 listens, server 1 connects),
// over which the two exchange what each needs of the other. Every wait is
// bounded: kWaitS (vm-run may boot a guest a second time, after 120 s).
#ifndef NPUIPC_TESTS_PAIR_LINK_H
#define NPUIPC_TESTS_PAIR_LINK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>

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

// The connection to the other server's program on `port`, or -1.
inline int link_to_peer(int port)
{
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    const char *peer_ip = std::getenv("NPUIPC_PEER");
    timeval tv = {kWaitS, 0};
    int sock = -1;
    if (!peer_ip)
        return -1;
    if (me() == 0) {
        int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
        if (l < 0)
            return -1;
        ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        ::setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        if (::bind(l, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0 && ::listen(l, 1) == 0)
            sock = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
        ::close(l);
    } else {
        ::inet_pton(AF_INET, peer_ip, &addr.sin_addr);
        // Each connect bounded (1 s), and all of them by the deadline.
        timeval attempt = {1, 0};
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        const time_t deadline = now.tv_sec + kWaitS;
        while (sock < 0 && now.tv_sec < deadline) {
            sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (sock >= 0)
                ::setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &attempt, sizeof(attempt));
            if (sock >= 0 && ::connect(sock, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
                ::close(sock);
                sock = -1;
                ::usleep(100000);
            }
            ::clock_gettime(CLOCK_MONOTONIC, &now);
        }
    }
    if (sock >= 0)
        ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return sock;
}

// Sends `mine` and receives the other's `theirs`: false if the other went
// away or did not answer in time.
template <typename T> bool exchange(int sock, const T &mine, T &theirs)
{
    if (::send(sock, &mine, sizeof(T), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(T)))
        return false;
    size_t got = 0;
    while (got < sizeof(T)) {
        ssize_t n = ::recv(sock, reinterpret_cast<char *>(&theirs) + got, sizeof(T) - got, 0);
        if (n <= 0)
            return false;
        got += n;
    }
    return true;
}

} // namespace npuipc_pair

#endif // NPUIPC_TESTS_PAIR_LINK_H
