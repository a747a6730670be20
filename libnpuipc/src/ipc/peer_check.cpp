// SPDX-License-Identifier: MIT
// Who a connecting process is, and whether this one sees host PIDs:
// shared by the exporter of each process and the broker daemon.
#include "ipc/internal.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

namespace npuipc_ipc {

using npuipc::UniqueFd;

// Field 22 of /proc/<pid>/stat: the process's start time in clock ticks
// since boot. ESRCH if there is no such process.
Result<uint64_t> read_start_time(int32_t pid)
{
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
    if (!fd)
        return Status::from_errno(errno == ENOENT ? ESRCH : errno);
    char buf[1024];
    ssize_t n;
    do
        n = ::read(fd.get(), buf, sizeof(buf) - 1);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return Status::from_errno(n < 0 && errno != ESRCH ? errno : ESRCH);
    buf[n] = '\0';
    // comm (field 2) may hold anything, ')' included: the fields go on
    // after the last ')'.
    char *p = std::strrchr(buf, ')');
    if (!p)
        return Status::from_errno(EIO);
    p++;
    // p is at " <field 3> <field 4> ...": field 22 is the 20th.
    for (int field = 3; field < 22; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
        if (!*p)
            return Status::from_errno(EIO);
    }
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p || errno)
        return Status::from_errno(EIO);
    return static_cast<uint64_t>(v);
}

namespace {

int pidfd_open_(pid_t pid)
{
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

int pidfd_signal_(int pidfd, int sig)
{
    return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

} // namespace

// Judges the connecting process against an allowlist, by the PID the kernel
// attests (SO_PEERCRED at connect time), never by what the client says.
// The process must be alive, and be the very process that had the PID when
// allow() listed it: same start time, checked while a pidfd pins it.
uint16_t judge_peer(int conn_fd, int32_t pid, const std::vector<AllowedPid> &allowed)
{
    if (pid <= 0)
        return kDetailPeerNoPid;
    auto it = std::find_if(allowed.begin(), allowed.end(),
                           [pid](const AllowedPid &a) { return a.pid == pid; });
    if (it == allowed.end())
        return kDetailNotListed;
    if (it->never)
        return kDetailNotAlive;
    // A pidfd of the connecting process itself where the kernel offers one
    // (SO_PEERPIDFD, Linux 6.5); else of whoever has the PID now.
    int raw = -1;
    socklen_t len = sizeof(raw);
    if (::getsockopt(conn_fd, SOL_SOCKET, SO_PEERPIDFD, &raw, &len) != 0) {
        if (errno != ENOPROTOOPT)
            return kDetailPeerGone; // the connecting process has exited
        raw = pidfd_open_(pid);
    }
    UniqueFd pidfd(raw);
    if (!pidfd)
        return kDetailPeerGone;
    auto start = read_start_time(pid);
    if (!start.ok())
        return kDetailPeerGone;
    // Still alive after the read: the PID was not reused in between, so the
    // start time read is that of the pidfd's process. EPERM (a judge of
    // another uid, as the broker) says it is alive too.
    if (pidfd_signal_(pidfd.get(), 0) != 0 && errno != EPERM)
        return kDetailPeerGone;
    if (start.value() != it->start_time)
        return kDetailReused;
    return kDetailNone;
}

} // namespace npuipc_ipc

namespace npuipc::ipc {

bool in_initial_pid_namespace()
{
    // The kernel gives the initial PID namespace a fixed inode number
    // (PROC_PID_INIT_INO).
    constexpr ino_t kInitialPidNamespaceInode = 0xEFFFFFFCU;
    struct stat st;
    return ::stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == kInitialPidNamespaceInode;
}

} // namespace npuipc::ipc
