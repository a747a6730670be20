// SPDX-License-Identifier: MIT
/*
 * IPC-by-key benchmark, run in the guest: tools/vm-run -- aclrt_ipc_bench
 *
 * A child process exports 4 KiB-page device memory (2 MiB) under one key,
 * and 10,000 more keys; the parent imports. Ratios against a floor measured
 * in the same run, medians of interleaved batches:
 *   floor: connect to another process's Unix socket, receive a 2 MiB memfd
 *          (4 KiB pages, like the NORMAL class) by SCM_RIGHTS, mmap it,
 *          munmap, close;
 *   first import: aclrtIpcMemImportByKey + aclrtIpcMemClose (goal <= 3x);
 *   repeated import of a key the process holds (goal <= 0.1x);
 *   first import with 10,000 live keys in the exporter, against the same
 *   with one (goal <= 1.2x);
 *   where a broker runs (/run/npuipc/broker.sock, which tools/vm-run's
 *   guest has): first import of a key the broker serves while its
 *   exporter is stopped (SIGSTOP), against the floor (goal <= 3x).
 * The other exporters publish peer to peer (NPUIPC_BROKER_SOCKET empty).
 * Each goal is judged by bench_goal: a miss is reported, not failed.
 * Notify and event hops between processes are aclrt_hop_bench's.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "bench_util.h"

namespace {

constexpr int kBatches = 7;
constexpr int kPerBatch = 40;
constexpr size_t kSize = 2u << 20;
constexpr int kManyKeys = 10000;

void die(const char *what)
{
    std::perror(what);
    std::exit(1);
}

void check(aclError err, const char *what)
{
    if (err != ACL_SUCCESS) {
        std::fprintf(stderr, "aclrt_ipc_bench: %s: %d\n", what, err);
        std::exit(1);
    }
}

// The floor's server: hands a fresh dup of one memfd to every connection.
void serve_memfd(const char *path, int ready_fd)
{
    int memfd = memfd_create("floor", MFD_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, kSize))
        die("memfd");
    int srv = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    if (bind(srv, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) || listen(srv, 64))
        die("floor listen");
    (void)!write(ready_fd, "r", 1);
    for (;;) {
        int c = accept4(srv, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        char req[64];
        if (recv(c, req, sizeof(req), 0) > 0) {
            char cbuf[CMSG_SPACE(sizeof(int))] = {};
            char one = 1;
            iovec iov = {&one, 1};
            msghdr msg = {};
            msg.msg_iov = &iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf;
            msg.msg_controllen = sizeof(cbuf);
            cmsghdr *cm = CMSG_FIRSTHDR(&msg);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            std::memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
            (void)sendmsg(c, &msg, MSG_NOSIGNAL);
        }
        close(c);
    }
}

double floor_us(const char *path)
{
    double t0 = bench_now_us();
    for (int i = 0; i < kPerBatch; i++) {
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        sockaddr_un addr = {};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
        if (connect(s, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)))
            die("floor connect");
        char req[40] = {1};
        (void)send(s, req, sizeof(req), MSG_NOSIGNAL);
        char byte;
        char cbuf[CMSG_SPACE(sizeof(int))];
        iovec iov = {&byte, 1};
        msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf;
        msg.msg_controllen = sizeof(cbuf);
        if (recvmsg(s, &msg, MSG_CMSG_CLOEXEC) <= 0)
            die("floor recvmsg");
        int fd;
        std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
        void *p = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            die("floor mmap");
        munmap(p, kSize);
        close(fd);
        close(s);
    }
    return (bench_now_us() - t0) / kPerBatch;
}

double first_import_us(const char *key)
{
    double t0 = bench_now_us();
    for (int i = 0; i < kPerBatch; i++) {
        void *p;
        check(aclrtIpcMemImportByKey(&p, key, 0), "import");
        check(aclrtIpcMemClose(key), "close");
    }
    return (bench_now_us() - t0) / kPerBatch;
}

double repeated_import_us(const char *key)
{
    double t0 = bench_now_us();
    for (int i = 0; i < kPerBatch; i++) {
        void *p;
        check(aclrtIpcMemImportByKey(&p, key, 0), "repeated import");
        check(aclrtIpcMemClose(key), "close");
    }
    return (bench_now_us() - t0) / kPerBatch;
}

// The exporter: one key, then 10,000 more in another process; writes both
// keys of interest to `out` and lives until its stdin closes.
void exporter(int out, int many)
{
    check(aclrtSetDevice(0), "exporter set device");
    std::vector<void *> mem(many ? 64 : 1);
    for (auto &p : mem)
        check(aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY), "exporter malloc");
    char key[65];
    // The extra keys are ranges of the 64 allocations, 4 KiB each.
    for (int i = 0; i < many; i++)
        check(aclrtIpcMemGetExportKey(static_cast<char *>(mem[i % 64]) + (i / 64) * 4096, 4096, key,
                                      sizeof(key), ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
              "export many");
    check(aclrtIpcMemGetExportKey(mem[0], kSize, key, sizeof(key),
                                  ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
          "export");
    (void)!write(out, key, sizeof(key));
    char c;
    while (read(0, &c, 1) > 0) {
    }
    _exit(0);
}

constexpr char kBrokerSocket[] = "/run/npuipc/broker.sock";

pid_t start_exporter(int many, std::string &key, int &stdin_fd, bool broker = false)
{
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child))
        die("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        setenv("NPUIPC_BROKER_SOCKET", broker ? kBrokerSocket : "", 1);
        dup2(to_child[0], 0);
        close(to_child[1]);
        close(from_child[0]);
        exporter(from_child[1], many);
    }
    close(to_child[0]);
    close(from_child[1]);
    char buf[65];
    if (read(from_child[0], buf, sizeof(buf)) != sizeof(buf))
        die("exporter key");
    close(from_child[0]);
    key = buf;
    stdin_fd = to_child[1];
    return pid;
}

struct Series {
    std::vector<double> v;
    double median() const
    {
        std::vector<double> c = v;
        return bench_median(c.data(), static_cast<int>(c.size()));
    }
};

void report(const char *what, const Series &subject, const Series &floor, double goal)
{
    std::vector<double> r;
    for (size_t i = 0; i < subject.v.size(); i++)
        r.push_back(subject.v[i] / floor.v[i]);
    double lo = *std::min_element(r.begin(), r.end()), hi = *std::max_element(r.begin(), r.end());
    double ratio = bench_median(r.data(), static_cast<int>(r.size()));
    std::printf("%-52s %9.1f us vs %9.1f us: %.2fx (spread %.2f-%.2f)\n", what, subject.median(),
                floor.median(), ratio, lo, hi);
    bench_goal(what, ratio, "<=", goal);
}

} // namespace

int main()
{
    // Every process that uses the runtime is forked before this one does.
    std::string key_one, key_many;
    int in_one, in_many;
    pid_t one = start_exporter(0, key_one, in_one);
    pid_t many = start_exporter(kManyKeys, key_many, in_many);
    std::string key_brokered;
    int in_brokered = -1;
    pid_t brokered = -1;
    if (access(kBrokerSocket, F_OK) == 0) {
        setenv("NPUIPC_BROKER_SOCKET", kBrokerSocket, 1); // for this importer
        brokered = start_exporter(0, key_brokered, in_brokered, true);
        kill(brokered, SIGSTOP); // the broker answers for it
    }
    char path[] = "/tmp/aclrt_ipc_bench.XXXXXX";
    if (!mkdtemp(path))
        die("mkdtemp");
    std::string sock = std::string(path) + "/floor.sock";
    int ready[2];
    if (pipe(ready))
        die("pipe");
    pid_t server = fork();
    if (server == 0)
        serve_memfd(sock.c_str(), ready[1]);
    char r;
    if (read(ready[0], &r, 1) != 1)
        die("floor server");

    check(aclrtSetDevice(0), "set device");
    void *held;
    check(aclrtIpcMemImportByKey(&held, key_one.c_str(), 0), "warm-up import");
    check(aclrtIpcMemClose(key_one.c_str()), "warm-up close");
    Series floor, first, repeated, first_many, first_stopped;
    for (int b = 0; b < kBatches; b++) {
        floor.v.push_back(floor_us(sock.c_str()));
        first.v.push_back(first_import_us(key_one.c_str()));
        first_many.v.push_back(first_import_us(key_many.c_str()));
        if (brokered > 0)
            first_stopped.v.push_back(first_import_us(key_brokered.c_str()));
        check(aclrtIpcMemImportByKey(&held, key_one.c_str(), 0), "hold");
        repeated.v.push_back(repeated_import_us(key_one.c_str()));
        check(aclrtIpcMemClose(key_one.c_str()), "release");
    }
    std::printf("aclrt_ipc_bench: 2 MiB of 4 KiB pages; medians of %d interleaved batches of %d\n",
                kBatches, kPerBatch);
    report("first ImportByKey+Close vs socket+SCM_RIGHTS+mmap memfd", first, floor, 3.0);
    report("repeated ImportByKey+Close vs the same floor", repeated, floor, 0.1);
    report("first import, 10,000 live keys vs 1 live key", first_many, first, 1.2);
    if (brokered > 0)
        report("first import via the broker, exporter stopped, vs floor", first_stopped, floor, 3.0);
    else
        std::printf("no broker at %s: the stopped-exporter import is not measured\n", kBrokerSocket);

    close(in_one);
    close(in_many);
    if (brokered > 0) {
        kill(brokered, SIGCONT);
        close(in_brokered);
    }
    kill(server, SIGKILL);
    waitpid(one, nullptr, 0);
    waitpid(many, nullptr, 0);
    waitpid(server, nullptr, 0);
    // After the floor server, which holds a copy of its stdin's pipe.
    if (brokered > 0)
        waitpid(brokered, nullptr, 0);
    unlink(sock.c_str());
    rmdir(path);
    check(aclrtResetDeviceForce(0), "reset");
    return 0;
}
