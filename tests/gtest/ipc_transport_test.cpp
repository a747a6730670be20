// SPDX-License-Identifier: MIT
// The IPC transport (npuipc/ipc.h) on the host, without the driver: the
// objects are memfds and eventfds, the other processes fork()ed children.
//
// The test process is an exporter for its whole life (ipc.h: one per
// process, started by the first publish, never stopped): the environment
// below starts it in a directory of its own, and the tests that use it keep
// NPUIPC_IPC_DIR there. Every test also gets a fresh directory (made by
// mkdtemp, 0700) for the exporters it starts in children (a child forgets
// its parent's exporter and starts its own in whatever NPUIPC_IPC_DIR it
// sees) and for sockets it plants.
//
// Children report by exit status (0: all their checks held; they print why
// not) and are waited for with a bound. Each test must leave the process
// with the open fds it started with (the exporter's listening socket and
// io_uring or epoll fd exist before the first test).
//
// The exporter's event loop is io_uring where the kernel allows it (set
// NPUIPC_TEST_EXPECT_EPOLL=1 where it does not, e.g. in a container whose
// seccomp profile blocks io_uring); a child under a seccomp filter that
// refuses io_uring_setup checks the epoll fallback.
#include "fork_at_pid.h"
#include "npuipc/ipc.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ipc/internal.h" // the wire format, to speak it by hand

namespace {

namespace ipc = npuipc::ipc;
using npuipc::Result;
using npuipc::Status;
using npuipc::UniqueFd;
using Clock = std::chrono::steady_clock;

// ---- logs: captured, printed only with NPUIPC_TEST_VERBOSE ----

std::mutex g_log_mu;
std::vector<std::string> g_log;

void capture_log(ipc::LogLevel level, const char *message)
{
    if (std::getenv("NPUIPC_TEST_VERBOSE"))
        std::fprintf(stderr, "[%d] ipc %d: %s\n", getpid(), static_cast<int>(level), message);
    std::lock_guard<std::mutex> lock(g_log_mu);
    g_log.emplace_back(message);
}

// The exporter's thread may hold g_log_mu when a test forks; a child that
// then logged would wait on it forever. Registered before the exporter's own
// handlers, so prepare takes the transport's lock first, then this one (the
// order in which the exporter's thread takes them).
void hold_log_across_fork()
{
    pthread_atfork([] { g_log_mu.lock(); }, [] { g_log_mu.unlock(); },
                   [] { g_log_mu.unlock(); });
}

void clear_log()
{
    std::lock_guard<std::mutex> lock(g_log_mu);
    g_log.clear();
}

// Whether a logged line contains every one of `parts`; waits a little, as the
// exporter logs from its own thread.
bool logged(std::initializer_list<const char *> parts)
{
    auto until = Clock::now() + std::chrono::seconds(2);
    do {
        {
            std::lock_guard<std::mutex> lock(g_log_mu);
            for (const std::string &line : g_log) {
                bool all = true;
                for (const char *p : parts)
                    all = all && line.find(p) != std::string::npos;
                if (all)
                    return true;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (Clock::now() < until);
    return false;
}

// ---- files and processes ----

int CountFds()
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    int n = 0;
    while (const struct dirent *e = readdir(dir))
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n - 1;
}

// The targets of this process's open fds.
std::vector<std::string> FdTargets()
{
    std::vector<std::string> out;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return out;
    while (const struct dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        char link[PATH_MAX];
        std::string path = std::string("/proc/self/fd/") + e->d_name;
        ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
        if (n > 0)
            out.emplace_back(link, static_cast<size_t>(n));
    }
    closedir(dir);
    return out;
}

// Waits until the process has `expected` fds (the exporter closes its side
// of a connection just after the reply), at most 3 s; returns the count.
int WaitForFdCount(int expected)
{
    auto until = Clock::now() + std::chrono::seconds(3);
    int n = CountFds();
    while (n != expected && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        n = CountFds();
    }
    return n;
}

std::string MakeTempDir()
{
    char tmpl[] = "/tmp/npuipc-ipc-test-XXXXXX";
    const char *dir = mkdtemp(tmpl);
    EXPECT_NE(nullptr, dir) << strerror(errno);
    return dir ? dir : "/nonexistent";
}

void RemoveTree(const std::string &path)
{
    nftw(
        path.c_str(),
        [](const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }, 16,
        FTW_DEPTH | FTW_PHYS);
}

// Runs body in a child that exits with its result.
pid_t ForkChild(const std::function<int()> &body)
{
    std::fflush(nullptr); // nothing buffered is written twice
    pid_t pid = fork();
    if (pid == 0) {
        int rc = 1;
        rc = body();
        _exit(rc);
    }
    EXPECT_GT(pid, 0) << strerror(errno);
    return pid;
}

// The child's exit status (128 + signal if killed); -1 if it did not end
// within timeout_ms (then it is killed and reaped).
int WaitChild(pid_t pid, int timeout_ms = 20000)
{
    auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0)
            return -2;
        if (Clock::now() >= until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

// A one-way channel between parent and child.
struct Pipe {
    int r = -1, w = -1;
    Pipe()
    {
        int fds[2];
        EXPECT_EQ(0, pipe2(fds, O_CLOEXEC));
        r = fds[0];
        w = fds[1];
    }
    ~Pipe()
    {
        close_read();
        close_write();
    }
    void close_read()
    {
        if (r >= 0)
            close(r);
        r = -1;
    }
    void close_write()
    {
        if (w >= 0)
            close(w);
        w = -1;
    }
    void send(const std::string &s)
    {
        std::string line = s + "\n";
        EXPECT_EQ(static_cast<ssize_t>(line.size()), write(w, line.data(), line.size()));
    }
    // One line, waiting at most timeout_ms; "" on EOF or timeout.
    std::string receive(int timeout_ms = 10000)
    {
        std::string out;
        char c;
        auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            int left = static_cast<int>(
                std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now())
                    .count());
            struct pollfd p = {r, POLLIN, 0};
            if (left <= 0 || poll(&p, 1, left) <= 0)
                return "";
            if (read(r, &c, 1) != 1)
                return "";
            if (c == '\n')
                return out;
            out += c;
        }
    }
};

#define CHILD_CHECK(cond)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            std::fprintf(stderr, "child %d: %s:%d: check failed: %s\n", getpid(), __FILE__,    \
                         __LINE__, #cond);                                                       \
            return 1;                                                                            \
        }                                                                                        \
    } while (0)

UniqueFd Memfd(const char *name, const std::string &content = "")
{
    UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
    EXPECT_TRUE(fd.valid()) << strerror(errno);
    EXPECT_EQ(0, ftruncate(fd.get(), 4096));
    if (!content.empty()) {
        EXPECT_EQ(static_cast<ssize_t>(content.size()),
                  pwrite(fd.get(), content.data(), content.size(), 0));
    }
    return fd;
}

UniqueFd Dup(const UniqueFd &fd)
{
    return UniqueFd(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
}

std::string ReadAt(int fd, size_t len, off_t offset = 0)
{
    std::string s(len, '\0');
    ssize_t n = pread(fd, &s[0], len, offset);
    s.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return s;
}

ipc::Key Parse(const std::string &text)
{
    auto key = ipc::parse_key(text.c_str());
    EXPECT_TRUE(key.ok()) << text;
    return key.ok() ? key.value() : ipc::Key{};
}

// fetch()'s errno, 0 on success.
int FetchError(const std::string &text, ipc::Kind kind, int timeout_ms = 5000)
{
    auto key = ipc::parse_key(text.c_str());
    if (!key.ok())
        return key.error();
    auto got = ipc::fetch(key.value(), kind, timeout_ms);
    return got.ok() ? 0 : got.error();
}

std::string SocketPath(const std::string &dir, const std::string &endpoint)
{
    return dir + "/" + endpoint + ".sock";
}

UniqueFd ConnectRaw(const std::string &path, bool nonblock = false)
{
    UniqueFd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    if (connect(s.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0) {
        ADD_FAILURE() << "connect " << path << ": " << strerror(errno);
        return UniqueFd();
    }
    return s;
}

npuipc_ipc::WireRequest RequestFor(const ipc::Key &key, ipc::Kind kind)
{
    npuipc_ipc::WireRequest req{};
    req.magic = npuipc_ipc::kRequestMagic;
    req.version = npuipc_ipc::kWireVersion;
    req.kind = static_cast<uint8_t>(kind);
    req.object = key.object;
    std::memcpy(req.secret, key.secret.data(), sizeof(req.secret));
    return req;
}

// Reads one reply from a raw connection (closing any fd it carries).
// Returns its status, or -1 if there is none within 3 s, -2 on EOF.
int RawReplyStatus(int s)
{
    struct pollfd p = {s, POLLIN, 0};
    if (poll(&p, 1, 3000) != 1)
        return -1;
    npuipc_ipc::WireReply reply{};
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {&reply, sizeof(reply)};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    ssize_t n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                close(fd);
            }
    if (n == 0)
        return -2;
    if (n != static_cast<ssize_t>(sizeof(reply)) || reply.magic != npuipc_ipc::kReplyMagic)
        return -3;
    return reply.status;
}

// The event loop the exporter should pick on this host.
std::string ExpectedLoop()
{
    const char *e = std::getenv("NPUIPC_TEST_EXPECT_EPOLL");
    return e && *e && std::strcmp(e, "0") != 0 ? "epoll" : "io_uring";
}

// Makes io_uring_setup fail with EPERM in this thread and the processes it
// forks, as a container's seccomp profile does. Returns 0 or an errno.
int BlockIoUringSetup()
{
#if defined(__x86_64__)
    constexpr uint32_t arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr uint32_t arch = AUDIT_ARCH_AARCH64;
#else
    return ENOSYS;
#endif
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])),
                              filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return errno;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
        return errno;
    return 0;
}

// ---- the process's own exporter ----

std::string g_process_dir;

class IpcEnvironment : public ::testing::Environment {
public:
    void SetUp() override
    {
        hold_log_across_fork();
        ipc::set_log_hook(capture_log);
        g_process_dir = MakeTempDir();
        setenv("NPUIPC_IPC_DIR", g_process_dir.c_str(), 1);
        // The exporter's own socket: this suite is that path's (a broker's
        // is acl_broker_gtest's).
        setenv("NPUIPC_BROKER_SOCKET", "", 1);
        // Start the exporter: its socket, epoll fd and thread live until exit.
        auto key = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-start"), false);
        ASSERT_TRUE(key.ok()) << strerror(key.error());
        ASSERT_TRUE(ipc::revoke(key.value()).ok());
    }
    void TearDown() override { RemoveTree(g_process_dir); }
};

::testing::Environment *const g_env = ::testing::AddGlobalTestEnvironment(new IpcEnvironment);

class IpcTransport : public ::testing::Test {
protected:
    void SetUp() override
    {
        fresh_dir_ = MakeTempDir();
        UseProcessDir();
        clear_log();
        fds_at_start_ = CountFds();
    }

    void TearDown() override
    {
        UseProcessDir();
        ipc::set_pid_namespace_ok(true);
        EXPECT_EQ(fds_at_start_, WaitForFdCount(fds_at_start_)) << "fds leaked by the test";
        RemoveTree(fresh_dir_);
    }

    void UseProcessDir() { setenv("NPUIPC_IPC_DIR", g_process_dir.c_str(), 1); }
    void UseFreshDir() { setenv("NPUIPC_IPC_DIR", fresh_dir_.c_str(), 1); }

    std::string fresh_dir_;
    int fds_at_start_ = 0;
};

// ---- keys ----

TEST_F(IpcTransport, KeyFormat)
{
    UniqueFd file = Memfd("npuipc-keys");
    std::set<std::string> texts;
    std::set<uint64_t> objects;
    std::set<std::string> secrets;
    std::string endpoint;
    char pid_hex[16];
    std::snprintf(pid_hex, sizeof(pid_hex), "%x-", static_cast<unsigned>(getpid()));
    for (int i = 0; i < 200; i++) {
        auto text = ipc::publish(ipc::Kind::Memory, Dup(file), i % 2);
        ASSERT_TRUE(text.ok());
        const std::string &t = text.value();
        EXPECT_LE(t.size(), ipc::kKeyMax);
        for (char c : t)
            EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')
                << t;
        EXPECT_EQ(0u, t.find("npk1.")) << t;
        ipc::Key key = Parse(t);
        EXPECT_EQ(t, key.text);
        EXPECT_EQ(0u, key.endpoint.find(pid_hex)) << key.endpoint;
        if (endpoint.empty())
            endpoint = key.endpoint;
        EXPECT_EQ(endpoint, key.endpoint) << "one endpoint per exporter";
        // 128-bit secret: 22 base64url characters after the last dot.
        EXPECT_EQ(22u, t.size() - t.rfind('.') - 1);
        EXPECT_EQ(16u, key.secret.size());
        EXPECT_TRUE(texts.insert(t).second);
        EXPECT_TRUE(objects.insert(key.object).second);
        EXPECT_TRUE(secrets.insert(std::string(key.secret.begin(), key.secret.end())).second);
        EXPECT_TRUE(ipc::published_here(t));
        EXPECT_TRUE(ipc::published_here(t, ipc::Kind::Memory));
        EXPECT_FALSE(ipc::published_here(t, ipc::Kind::Notify)) << "published as memory";
    }
    // The secrets look random: every bit position takes both values.
    std::vector<int> ones(128);
    for (const std::string &s : secrets)
        for (int b = 0; b < 128; b++)
            ones[b] += (static_cast<uint8_t>(s[b / 8]) >> (b % 8)) & 1;
    for (int b = 0; b < 128; b++) {
        EXPECT_GT(ones[b], 40) << "bit " << b;
        EXPECT_LT(ones[b], 160) << "bit " << b;
    }
    for (const std::string &t : texts) {
        ASSERT_TRUE(ipc::revoke(t).ok());
        EXPECT_FALSE(ipc::published_here(t));
        EXPECT_EQ(ENOENT, ipc::revoke(t).error());
    }
}

TEST_F(IpcTransport, MalformedKeysAreEinval)
{
    const std::string good = "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA";
    ASSERT_TRUE(ipc::parse_key(good.c_str()).ok());
    EXPECT_EQ(42u, Parse(good).object);
    EXPECT_EQ("1f3a-AAAAAAAAAAA", Parse(good).endpoint);
    // ipc.h's example.
    EXPECT_TRUE(ipc::parse_key("npk1.1f3a-Qk7uT0x9bHc.2a.p3Lk0Qm_4Zt8R2vWcYh1sA").ok());

    EXPECT_EQ(EINVAL, ipc::parse_key(nullptr).error());
    // Not NUL-terminated within max_len.
    char unterminated[ipc::kKeyMax + 1];
    std::memset(unterminated, 'a', sizeof(unterminated));
    EXPECT_EQ(EINVAL, ipc::parse_key(unterminated, sizeof(unterminated)).error());
    EXPECT_EQ(EINVAL, ipc::parse_key(good.c_str(), good.size()).error());
    EXPECT_TRUE(ipc::parse_key(good.c_str(), good.size() + 1).ok());
    EXPECT_EQ(EINVAL, ipc::parse_key(good.c_str(), 0).error());
    // 65 characters of a well-formed shape.
    const std::string longest = "npk1.12345678-AAAAAAAAAAA.1234567812345678.AAAAAAAAAAAAAAAAAAAAAA";
    ASSERT_EQ(65u, longest.size());
    EXPECT_EQ(EINVAL, ipc::parse_key(longest.c_str(), 100).error());
    EXPECT_TRUE(ipc::parse_key(longest.substr(0, 12).append(longest.substr(13)).c_str()).ok());

    const char *bad[] = {
        "",
        "npk1.",
        "npk2.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",
        "NPK1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA.x",
        "npk1.1f3a-AAAAAAAAAAA..AAAAAAAAAAAAAAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA ",
        " npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAA/AAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAA+AAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAA=",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAA\nAAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAA\x80" "AAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.0.AAAAAAAAAAAAAAAAAAAAAA",       // object 0
        "npk1.1f3a-AAAAAAAAAAA.02a.AAAAAAAAAAAAAAAAAAAAAA",     // leading zero
        "npk1.1f3a-AAAAAAAAAAA.2A.AAAAAAAAAAAAAAAAAAAAAA",      // uppercase hex
        "npk1.1f3a-AAAAAAAAAAA.12345678123456789.AAAAAAAAAAAAAAAAAAAAAA",
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAA",       // 21 characters
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAAA",     // 23 characters
        "npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAB",      // padding bits set
        "npk1.1f3aAAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",       // no dash
        "npk1.00-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",        // pid 0 spelt twice
        "npk1.01f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",     // leading zero
        "npk1.1F3A-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",      // uppercase pid
        "npk1.123456789-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA", // 9 digits
        "npk1.1f3a-AAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",       // 10 characters
        "npk1.1f3a-AAAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",     // 12 characters
        "npk1.1f3a-AAAAAAAAAAB.2a.AAAAAAAAAAAAAAAAAAAAAA",      // padding bits set
        "npk1.-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",
        "npk1.1f3a-..AAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",
    };
    for (const char *text : bad)
        EXPECT_EQ(EINVAL, ipc::parse_key(text).error()) << text;

    // fetch checks what it is given too.
    EXPECT_EQ(EINVAL, ipc::fetch(ipc::Key{}, ipc::Kind::Memory).error());
    EXPECT_EQ(EINVAL, ipc::fetch(Parse(good), static_cast<ipc::Kind>(0)).error());
    EXPECT_EQ(EINVAL, ipc::fetch(Parse(good), static_cast<ipc::Kind>(4)).error());
    ipc::Key evil = Parse(good);
    evil.endpoint = "../../etc/x";
    EXPECT_EQ(EINVAL, ipc::fetch(evil, ipc::Kind::Memory).error());
    // PID 0 names a broker; with none here (this suite sets
    // NPUIPC_BROKER_SOCKET empty) its key is that of a gone exporter.
    const char *broker_key = "npk1.0-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA";
    ASSERT_TRUE(ipc::parse_key(broker_key).ok());
    EXPECT_EQ(ECONNREFUSED, ipc::fetch(Parse(broker_key), ipc::Kind::Memory).error());
}

TEST_F(IpcTransport, EventLoopIsIoUringWhereAllowed)
{
    ASSERT_NE(nullptr, ipc::exporter_loop_name());
    EXPECT_EQ(ExpectedLoop(), ipc::exporter_loop_name());
}

TEST_F(IpcTransport, EpollFallbackWhereSeccompBlocksIoUring)
{
    Pipe key_pipe, done;
    pid_t child = ForkChild([&] {
        CHILD_CHECK(ipc::exporter_loop_name() == nullptr); // the parent's is forgotten
        CHILD_CHECK(BlockIoUringSetup() == 0);
        CHILD_CHECK(syscall(__NR_io_uring_setup, 4, nullptr) == -1 && errno == EPERM);
        setenv("NPUIPC_IPC_DIR", fresh_dir_.c_str(), 1);
        auto own = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-seccomp", "epoll"), false, 9);
        CHILD_CHECK(own.ok());
        CHILD_CHECK(ipc::exporter_loop_name() != nullptr);
        CHILD_CHECK(std::string(ipc::exporter_loop_name()) == "epoll");
        key_pipe.send(own.value());
        CHILD_CHECK(done.receive() == "done");
        return 0;
    });
    std::string child_key = key_pipe.receive();
    ASSERT_FALSE(child_key.empty());
    UseFreshDir();
    {
        auto got = ipc::fetch(Parse(child_key), ipc::Kind::Memory);
        ASSERT_TRUE(got.ok()) << strerror(got.error());
        EXPECT_EQ(9u, got.value().tag);
        EXPECT_EQ("epoll", ReadAt(got.value().fd.get(), 5));
        // Several fetches, a silent connection and garbage: served alike.
        UniqueFd silent = ConnectRaw(SocketPath(fresh_dir_, Parse(child_key).endpoint));
        for (int i = 0; i < 8; i++)
            EXPECT_EQ(0, FetchError(child_key, ipc::Kind::Memory));
        EXPECT_EQ(EPROTOTYPE, FetchError(child_key, ipc::Kind::Event));
    }
    UseProcessDir();
    done.send("done");
    EXPECT_EQ(0, WaitChild(child));
    // This process's own loop is unchanged.
    EXPECT_EQ(ExpectedLoop(), ipc::exporter_loop_name());
}

TEST_F(IpcTransport, PublishArgumentErrors)
{
    EXPECT_EQ(EBADF, ipc::publish(ipc::Kind::Memory, UniqueFd(), false).error());
    EXPECT_EQ(EINVAL, ipc::publish(static_cast<ipc::Kind>(0), Memfd("npuipc-bad"), false).error());
    EXPECT_EQ(EINVAL,
              ipc::publish(ipc::Kind::Event, std::function<Result<UniqueFd>()>(), false).error());
}

// ---- fetching ----

TEST_F(IpcTransport, ChildFetchesTheSameFile)
{
    UniqueFd file = Memfd("npuipc-share", "ping");
    auto text = ipc::publish(ipc::Kind::Memory, Dup(file), false, 7);
    ASSERT_TRUE(text.ok());
    UniqueFd event(eventfd(0, EFD_CLOEXEC));
    auto event_text = ipc::publish(ipc::Kind::Event, Dup(event), false, 3);
    ASSERT_TRUE(event_text.ok());

    pid_t child = ForkChild([&] {
        auto got = ipc::fetch(Parse(text.value()), ipc::Kind::Memory);
        CHILD_CHECK(got.ok());
        CHILD_CHECK(got.value().tag == 7);
        CHILD_CHECK(fcntl(got.value().fd.get(), F_GETFD) == FD_CLOEXEC);
        CHILD_CHECK(ReadAt(got.value().fd.get(), 4) == "ping");
        CHILD_CHECK(pwrite(got.value().fd.get(), "pong", 4, 100) == 4);
        auto ev = ipc::fetch(Parse(event_text.value()), ipc::Kind::Event);
        CHILD_CHECK(ev.ok() && ev.value().tag == 3);
        uint64_t one = 5;
        CHILD_CHECK(write(ev.value().fd.get(), &one, sizeof(one)) == sizeof(one));
        return 0;
    });
    ASSERT_EQ(0, WaitChild(child));
    EXPECT_EQ("pong", ReadAt(file.get(), 4, 100));
    uint64_t value = 0;
    EXPECT_EQ(static_cast<ssize_t>(sizeof(value)), read(event.get(), &value, sizeof(value)));
    EXPECT_EQ(5u, value);

    // The exporter's own process may fetch too.
    auto own = ipc::fetch(Parse(text.value()), ipc::Kind::Memory);
    ASSERT_TRUE(own.ok());
    EXPECT_EQ("ping", ReadAt(own.value().fd.get(), 4));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
    EXPECT_TRUE(ipc::revoke(event_text.value()).ok());
}

TEST_F(IpcTransport, WrongSecretOrUnknownObjectIsEsrch)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-secret"), false);
    ASSERT_TRUE(text.ok());
    ipc::Key key = Parse(text.value());

    ipc::Key wrong = key;
    wrong.secret[0] ^= 1;
    auto got = ipc::fetch(wrong, ipc::Kind::Memory);
    EXPECT_EQ(ESRCH, got.error());
    ipc::Key unknown = key;
    unknown.object += 1000;
    EXPECT_EQ(ESRCH, ipc::fetch(unknown, ipc::Kind::Memory).error());
    EXPECT_TRUE(logged({"exporter: refused", "no such object"}));
    EXPECT_TRUE(logged({"importer:", "refused by the exporter", "no such object"}));
    // The secret never reaches a log.
    {
        std::string secret = text.value().substr(text.value().rfind('.') + 1);
        std::lock_guard<std::mutex> lock(g_log_mu);
        for (const std::string &line : g_log)
            EXPECT_EQ(std::string::npos, line.find(secret)) << line;
    }
    // Another kind than published: EPROTOTYPE (only with the right secret).
    EXPECT_EQ(EPROTOTYPE, ipc::fetch(key, ipc::Kind::Event).error());
    EXPECT_EQ(ESRCH, ipc::fetch(wrong, ipc::Kind::Event).error());
    // The right one still works.
    EXPECT_TRUE(ipc::fetch(key, ipc::Kind::Memory).ok());
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, RevokedKeyIsEsrchWhileFetchedFdsKeepWorking)
{
    UniqueFd file = Memfd("npuipc-revoke");
    auto text = ipc::publish(ipc::Kind::Memory, Dup(file), false);
    ASSERT_TRUE(text.ok());
    Pipe ready, go;
    pid_t holder = ForkChild([&] {
        auto got = ipc::fetch(Parse(text.value()), ipc::Kind::Memory);
        CHILD_CHECK(got.ok());
        ready.send("fetched");
        CHILD_CHECK(go.receive() == "go");
        CHILD_CHECK(pwrite(got.value().fd.get(), "after", 5, 0) == 5);
        return 0;
    });
    ASSERT_EQ("fetched", ready.receive());
    ASSERT_TRUE(ipc::revoke(text.value()).ok());
    EXPECT_FALSE(ipc::published_here(text.value()));
    pid_t late = ForkChild([&] {
        CHILD_CHECK(FetchError(text.value(), ipc::Kind::Memory) == ESRCH);
        return 0;
    });
    EXPECT_EQ(0, WaitChild(late));
    EXPECT_EQ(ESRCH, FetchError(text.value(), ipc::Kind::Memory));
    go.send("go");
    ASSERT_EQ(0, WaitChild(holder));
    EXPECT_EQ("after", ReadAt(file.get(), 5));
}

TEST_F(IpcTransport, ExporterGoneIsEconnrefused)
{
    UseFreshDir();
    // Ends with _exit: its socket stays behind, with nobody listening;
    // then with exit(): its socket is removed.
    for (bool clean_exit : {false, true}) {
        Pipe key_pipe, go;
        pid_t exporter = ForkChild([&] {
            auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-gone"), false);
            CHILD_CHECK(text.ok());
            key_pipe.send(text.value());
            CHILD_CHECK(go.receive() == "exit");
            if (clean_exit)
                exit(0);
            return 0;
        });
        std::string text = key_pipe.receive();
        ASSERT_FALSE(text.empty());
        const std::string path = SocketPath(fresh_dir_, Parse(text).endpoint);
        EXPECT_EQ(0, FetchError(text, ipc::Kind::Memory));
        go.send("exit");
        ASSERT_EQ(0, WaitChild(exporter));
        struct stat st;
        EXPECT_EQ(clean_exit ? -1 : 0, lstat(path.c_str(), &st)) << path;
        EXPECT_EQ(ECONNREFUSED, FetchError(text, ipc::Kind::Memory));
        EXPECT_TRUE(logged({"importer:", "the exporter is gone"}));
    }
}

TEST_F(IpcTransport, StartingExporterRemovesStaleSocketsOnly)
{
    UseFreshDir();
    // A stale socket: bound, never listening (as one left by a killed exporter).
    const std::string stale = fresh_dir_ + "/1-AAAAAAAAAAA.sock";
    const std::string live = fresh_dir_ + "/2-AAAAAAAAAAA.sock";
    const std::string plain = fresh_dir_ + "/3-AAAAAAAAAAA.sock";
    {
        UniqueFd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        struct sockaddr_un addr {};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", stale.c_str());
        ASSERT_EQ(0, bind(s.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)));
    }
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", live.c_str());
    ASSERT_EQ(0, bind(listener.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)));
    ASSERT_EQ(0, listen(listener.get(), 8));
    UniqueFd(open(plain.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));

    pid_t exporter = ForkChild([&] {
        auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-stale"), false);
        CHILD_CHECK(text.ok());
        struct stat st;
        CHILD_CHECK(lstat(SocketPath(fresh_dir_, Parse(text.value()).endpoint).c_str(), &st) == 0);
        CHILD_CHECK(S_ISSOCK(st.st_mode));
        return 0;
    });
    ASSERT_EQ(0, WaitChild(exporter));
    struct stat st;
    EXPECT_NE(0, lstat(stale.c_str(), &st)) << "the stale socket was not removed";
    EXPECT_EQ(0, lstat(live.c_str(), &st)) << "a live socket was removed";
    EXPECT_EQ(0, lstat(plain.c_str(), &st)) << "a file that is no socket was removed";
    // The listener got a connection from the cleaner; drain it.
    UniqueFd probe(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
}

// ---- access control ----

TEST_F(IpcTransport, AllowlistAdmitsListedChildrenOnly)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-allow", "allowed"), true);
    ASSERT_TRUE(text.ok());
    Pipe go_listed, go_other;
    pid_t listed = ForkChild([&] {
        CHILD_CHECK(go_listed.receive() == "go");
        auto got = ipc::fetch(Parse(text.value()), ipc::Kind::Memory);
        CHILD_CHECK(got.ok());
        CHILD_CHECK(ReadAt(got.value().fd.get(), 7) == "allowed");
        return 0;
    });
    pid_t other = ForkChild([&] {
        CHILD_CHECK(go_other.receive() == "go");
        CHILD_CHECK(FetchError(text.value(), ipc::Kind::Memory) == EACCES);
        return 0;
    });
    // Nobody is listed yet: not even this process.
    EXPECT_EQ(EACCES, FetchError(text.value(), ipc::Kind::Memory));
    int32_t pid = listed;
    ASSERT_TRUE(ipc::allow(text.value(), &pid, 1).ok());
    go_listed.send("go");
    go_other.send("go");
    EXPECT_EQ(0, WaitChild(listed));
    EXPECT_EQ(0, WaitChild(other));
    // Refusals are logged with the reason on both sides (here both are
    // this process).
    clear_log();
    EXPECT_EQ(EACCES, FetchError(text.value(), ipc::Kind::Memory));
    EXPECT_TRUE(logged({"exporter: refused", "not on the key's allowlist"}));
    EXPECT_TRUE(logged({"importer:", "refused by the exporter", "not on the key's allowlist"}));
    // Listing this process admits it.
    int32_t self = getpid();
    ASSERT_TRUE(ipc::allow(text.value(), &self, 1).ok());
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Memory));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

// A key's 64-bit name is a file its user's processes open by name but
// cannot list (mode 0300: no secret is readable by listing); the name of
// an exporter that died without removing it goes at its first import.
// Run as another user, for whom the mode is not overridden.
TEST_F(IpcTransport, NamesCannotBeListedAndADeadExportersNameGoesAtItsImport)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root, to run children as another user";
    char tmpl[] = "/tmp/npuipc-names.XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    const std::string dir = tmpl;
    ASSERT_EQ(0, chown(dir.c_str(), 65534, 65534));
    Pipe names;
    auto as_nobody = [&dir] {
        return setgroups(0, nullptr) == 0 && setresgid(65534, 65534, 65534) == 0 &&
               setresuid(65534, 65534, 65534) == 0 && setenv("NPUIPC_IPC_DIR", dir.c_str(), 1) == 0;
    };
    pid_t exporter = ForkChild([&] {
        CHILD_CHECK(as_nobody());
        auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-named"), false);
        CHILD_CHECK(text.ok());
        auto name = ipc::name_key(text.value());
        CHILD_CHECK(name.ok());
        struct stat st;
        CHILD_CHECK(lstat((dir + "/names").c_str(), &st) == 0 && (st.st_mode & 0777) == 0300);
        CHILD_CHECK(opendir((dir + "/names").c_str()) == nullptr && errno == EACCES);
        auto resolved = ipc::resolve_name(name.value());
        CHILD_CHECK(resolved.ok() && resolved.value() == text.value());
        auto got = ipc::fetch_named(name.value(), ipc::Kind::Memory);
        CHILD_CHECK(got.ok());
        uint64_t n = name.value();
        CHILD_CHECK(write(names.w, &n, sizeof(n)) == sizeof(n));
        _exit(0); // as if killed: the name file stays
    });
    EXPECT_EQ(0, WaitChild(exporter));
    uint64_t name = 0;
    ASSERT_EQ(static_cast<ssize_t>(sizeof(name)), read(names.r, &name, sizeof(name)));
    pid_t importer = ForkChild([&] {
        CHILD_CHECK(as_nobody());
        CHILD_CHECK(ipc::resolve_name(name).ok());
        CHILD_CHECK(ipc::fetch_named(name, ipc::Kind::Memory, 2000).error() == ECONNREFUSED);
        CHILD_CHECK(ipc::resolve_name(name).error() == ESRCH);
        return 0;
    });
    EXPECT_EQ(0, WaitChild(importer));
    RemoveTree(dir);
}

TEST_F(IpcTransport, AnotherUserIsRefused)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root, to run a child as another user";
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-uid"), false);
    ASSERT_TRUE(text.ok());
    const ipc::Key key = Parse(text.value());
    const std::string path = SocketPath(g_process_dir, key.endpoint);
    // Let the other user reach the socket at all (the exporter checked its
    // directory when it started).
    ASSERT_EQ(0, chmod(g_process_dir.c_str(), 0711));
    ASSERT_EQ(0, chmod(path.c_str(), 0777));
    pid_t child = ForkChild([&] {
        CHILD_CHECK(setgroups(0, nullptr) == 0);
        CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
        CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
        // The importer does not trust a directory of another user...
        CHILD_CHECK(FetchError(text.value(), ipc::Kind::Memory, 1000) == EACCES);
        // ... and the exporter refuses a caller the kernel says is another user.
        UniqueFd s = ConnectRaw(path);
        CHILD_CHECK(s.valid());
        npuipc_ipc::WireRequest req = RequestFor(key, ipc::Kind::Memory);
        CHILD_CHECK(send(s.get(), &req, sizeof(req), MSG_NOSIGNAL) == sizeof(req));
        CHILD_CHECK(RawReplyStatus(s.get()) == EACCES);
        return 0;
    });
    EXPECT_EQ(0, WaitChild(child));
    EXPECT_EQ(0, chmod(g_process_dir.c_str(), 0700));
    EXPECT_TRUE(logged({"exporter: refused", "uid 65534 is not this process's uid 0"}));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, AllowArgumentErrors)
{
    auto text = ipc::publish(ipc::Kind::Notify, Memfd("npuipc-allow-args"), true);
    ASSERT_TRUE(text.ok());
    int32_t good[] = {getpid()};
    int32_t zero[] = {getpid(), 0};
    int32_t negative[] = {-5};
    EXPECT_EQ(EINVAL, ipc::allow(text.value(), nullptr, 1).error());
    EXPECT_EQ(EINVAL, ipc::allow(text.value(), good, 0).error());
    EXPECT_EQ(EINVAL, ipc::allow(text.value(), zero, 2).error());
    EXPECT_EQ(EINVAL, ipc::allow(text.value(), negative, 1).error());
    EXPECT_EQ(EINVAL, ipc::allow("not a key", good, 1).error());
    // Well-formed but not ours: another endpoint, another object, another secret.
    EXPECT_EQ(ENOENT, ipc::allow("npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA", good, 1).error());
    std::string other_secret = text.value();
    other_secret[other_secret.rfind('.') + 1] = other_secret[other_secret.rfind('.') + 1] == 'A' ? 'B' : 'A';
    EXPECT_EQ(ENOENT, ipc::allow(other_secret, good, 1).error());
    EXPECT_FALSE(ipc::published_here(other_secret));
    EXPECT_EQ(ENOENT, ipc::revoke(other_secret).error());
    EXPECT_TRUE(ipc::allow(text.value(), good, 1).ok());
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
    EXPECT_EQ(ENOENT, ipc::allow(text.value(), good, 1).error());
}

// ForkAtPid's child: runs body after the parent's "go".
pid_t ForkAtPid(pid_t pid, Pipe &go, const std::function<int()> &body)
{
    return ::ForkAtPid(pid, [&] {
        return ForkChild([&] {
            if (go.receive() != "go")
                return 99;
            return body();
        });
    });
}

TEST_F(IpcTransport, PidNotAliveWhenAllowedNeverMatches)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-dead-pid"), true);
    ASSERT_TRUE(text.ok());
    pid_t gone = ForkChild([] { return 0; });
    ASSERT_EQ(0, WaitChild(gone));
    int32_t pid = gone;
    ASSERT_TRUE(ipc::allow(text.value(), &pid, 1).ok()) << "a dead PID may be listed";

    // A new process with that PID must not be taken for the listed one.
    Pipe go;
    pid_t reborn = ForkAtPid(gone, go, [&] {
        return FetchError(text.value(), ipc::Kind::Memory) == EACCES ? 0 : 1;
    });
    if (reborn < 0) {
        EXPECT_TRUE(ipc::revoke(text.value()).ok());
        if (reborn == -1)
            GTEST_SKIP() << "cannot choose PIDs (ns_last_pid) here";
        return;
    }
    go.send("go");
    EXPECT_EQ(0, WaitChild(reborn));
    EXPECT_TRUE(logged({"exporter: refused", "was not alive when it was allowed"}));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, ReusedPidIsRefused)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-reused-pid"), true);
    ASSERT_TRUE(text.ok());
    Pipe go_first;
    pid_t first = ForkChild([&] {
        CHILD_CHECK(go_first.receive() == "go");
        return FetchError(text.value(), ipc::Kind::Memory);
    });
    int32_t pid = first;
    ASSERT_TRUE(ipc::allow(text.value(), &pid, 1).ok());
    go_first.send("go");
    ASSERT_EQ(0, WaitChild(first)) << "the listed process itself is admitted";
    // Start times count clock ticks (10 ms): let a few pass.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Pipe go;
    pid_t reborn = ForkAtPid(first, go, [&] {
        return FetchError(text.value(), ipc::Kind::Memory) == EACCES ? 0 : 1;
    });
    if (reborn < 0) {
        EXPECT_TRUE(ipc::revoke(text.value()).ok());
        if (reborn == -1)
            GTEST_SKIP() << "cannot choose PIDs (ns_last_pid) here";
        return;
    }
    go.send("go");
    EXPECT_EQ(0, WaitChild(reborn));
    EXPECT_TRUE(logged({"exporter: refused", "PID reused"}));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, WithoutValidationAnySameUidProcessFetches)
{
    auto text = ipc::publish(ipc::Kind::Notify, Memfd("npuipc-open"), false);
    ASSERT_TRUE(text.ok());
    std::vector<pid_t> children;
    for (int i = 0; i < 3; i++)
        children.push_back(ForkChild([&] { return FetchError(text.value(), ipc::Kind::Notify); }));
    for (pid_t c : children)
        EXPECT_EQ(0, WaitChild(c));
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Notify));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, OutsideTheInitialPidNamespaceValidatedKeysAreRefused)
{
    auto validated = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-ns-v"), true);
    auto open = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-ns-o"), false);
    ASSERT_TRUE(validated.ok() && open.ok());
    int32_t self = getpid();
    ASSERT_TRUE(ipc::allow(validated.value(), &self, 1).ok());
    ipc::set_pid_namespace_ok(false);
    EXPECT_EQ(EACCES, FetchError(validated.value(), ipc::Kind::Memory));
    EXPECT_TRUE(logged({"exporter: refused", "not in the initial PID namespace",
                        "DISABLE_PID_VALIDATION"}));
    EXPECT_EQ(0, FetchError(open.value(), ipc::Kind::Memory));
    ipc::set_pid_namespace_ok(true);
    EXPECT_EQ(0, FetchError(validated.value(), ipc::Kind::Memory));
    EXPECT_TRUE(ipc::revoke(validated.value()).ok());
    EXPECT_TRUE(ipc::revoke(open.value()).ok());
}

// ---- a robust server ----

// Sets this process's exporter's request deadline for one test.
class RequestDeadline {
public:
    explicit RequestDeadline(int ms) { EXPECT_TRUE(ipc::set_request_deadline_ms(ms).ok()); }
    ~RequestDeadline() { EXPECT_TRUE(ipc::set_request_deadline_ms(npuipc_ipc::kRequestDeadlineMs).ok()); }
    RequestDeadline(const RequestDeadline &) = delete;
    RequestDeadline &operator=(const RequestDeadline &) = delete;
};

// Fetches are served while a connection that sent nothing is still open.
// Its deadline is set far past any machine's fetches, so that only an
// exporter that waits on it, not a slow machine, closes it first.
TEST_F(IpcTransport, SilentClientDoesNotBlockOthers)
{
    RequestDeadline far(120000);
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-silent"), false);
    ASSERT_TRUE(text.ok());
    const std::string path = SocketPath(g_process_dir, Parse(text.value()).endpoint);
    UniqueFd silent = ConnectRaw(path);
    ASSERT_TRUE(silent.valid());
    pid_t child = ForkChild([&] { return FetchError(text.value(), ipc::Kind::Memory, 30000); });
    EXPECT_EQ(0, WaitChild(child, 60000));
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Memory, 30000));
    struct pollfd still = {silent.get(), POLLIN, 0};
    EXPECT_EQ(0, poll(&still, 1, 0)) << "the silent connection was closed before the fetches were served";
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

// The exporter closes a connection that sends no request within its
// deadline (2 s), without a reply: not before it, and it does close it.
TEST_F(IpcTransport, SilentClientIsClosedAtTheRequestDeadline)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-silent-closed"), false);
    ASSERT_TRUE(text.ok());
    const std::string path = SocketPath(g_process_dir, Parse(text.value()).endpoint);
    auto start = Clock::now();
    UniqueFd silent = ConnectRaw(path);
    ASSERT_TRUE(silent.valid());
    struct pollfd p = {silent.get(), POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, 60000));
    EXPECT_EQ(-2, RawReplyStatus(silent.get())) << "closed without a reply";
    EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(npuipc_ipc::kRequestDeadlineMs));
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Memory, 30000));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, GarbageRequestsAreRefusedAndServingGoesOn)
{
    UniqueFd file = Memfd("npuipc-garbage");
    auto text = ipc::publish(ipc::Kind::Memory, Dup(file), false);
    ASSERT_TRUE(text.ok());
    ipc::Key key = Parse(text.value());
    const std::string path = SocketPath(g_process_dir, key.endpoint);

    auto send_and_status = [&](const void *data, size_t len, int pass_fd = -1) {
        UniqueFd s = ConnectRaw(path);
        if (!s)
            return -100;
        struct iovec iov = {const_cast<void *>(data), len};
        struct msghdr msg {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        if (pass_fd >= 0) {
            msg.msg_control = control.buf;
            msg.msg_controllen = sizeof(control.buf);
            struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
        }
        if (sendmsg(s.get(), &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(len))
            return -101;
        return RawReplyStatus(s.get());
    };
    EXPECT_EQ(EPROTO, send_and_status("hello", 5));
    npuipc_ipc::WireRequest req = RequestFor(key, ipc::Kind::Memory);
    npuipc_ipc::WireRequest bad = req;
    bad.magic ^= 1;
    EXPECT_EQ(EPROTO, send_and_status(&bad, sizeof(bad)));
    bad = req;
    bad.version = 2;
    EXPECT_EQ(EPROTO, send_and_status(&bad, sizeof(bad)));
    bad = req;
    bad.kind = 9;
    EXPECT_EQ(EPROTO, send_and_status(&bad, sizeof(bad)));
    bad = req;
    bad.flags = 1;
    EXPECT_EQ(EPROTO, send_and_status(&bad, sizeof(bad)));
    char longer[sizeof(req) + 8] = {};
    std::memcpy(longer, &req, sizeof(req));
    EXPECT_EQ(EPROTO, send_and_status(longer, sizeof(longer)));
    // A request carrying an fd: refused, and the fd is not kept (the test's
    // fd count would show it).
    EXPECT_EQ(EPROTO, send_and_status(&req, sizeof(req), file.get()));
    EXPECT_TRUE(logged({"exporter: refused a malformed request"}));
    // A well-formed request by hand: served.
    EXPECT_EQ(0, send_and_status(&req, sizeof(req)));
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Memory));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, ConnectionFloodDoesNotStarveAFetch)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-flood"), false);
    ASSERT_TRUE(text.ok());
    const std::string path = SocketPath(g_process_dir, Parse(text.value()).endpoint);
    // No flood connection may reach its deadline, however slow the machine:
    // only the cap drops them.
    RequestDeadline far(120000);
    std::vector<UniqueFd> flood;
    for (int i = 0; i < 300; i++) {
        flood.push_back(ConnectRaw(path));
        ASSERT_TRUE(flood.back().valid());
    }
    pid_t child = ForkChild([&] { return FetchError(text.value(), ipc::Kind::Memory, 30000); });
    EXPECT_EQ(0, WaitChild(child, 60000));
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Memory, 30000));
    // The exporter kept at most its cap: the oldest were dropped with EAGAIN.
    int dropped = 0;
    for (UniqueFd &s : flood) {
        struct pollfd p = {s.get(), POLLIN, 0};
        if (poll(&p, 1, 0) == 1 && RawReplyStatus(s.get()) == EAGAIN)
            dropped++;
    }
    EXPECT_GE(dropped, 300 - static_cast<int>(npuipc_ipc::kMaxConnections));
    flood.clear();
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, ThirtyTwoConcurrentImporters)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-32", "thirty-two"), true);
    ASSERT_TRUE(text.ok());
    Pipe go; // closed by the parent: every child wakes at once
    std::vector<pid_t> children;
    for (int i = 0; i < 32; i++) {
        children.push_back(ForkChild([&] {
            go.close_write();
            char c;
            CHILD_CHECK(read(go.r, &c, 1) == 0);
            auto got = ipc::fetch(Parse(text.value()), ipc::Kind::Memory, 10000);
            CHILD_CHECK(got.ok());
            CHILD_CHECK(ReadAt(got.value().fd.get(), 10) == "thirty-two");
            return 0;
        }));
    }
    std::vector<int32_t> pids(children.begin(), children.end());
    ASSERT_TRUE(ipc::allow(text.value(), pids.data(), pids.size()).ok());
    go.close_write();
    for (pid_t c : children)
        EXPECT_EQ(0, WaitChild(c, 30000));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
}

TEST_F(IpcTransport, TenThousandLazyKeysHoldNoFds)
{
    constexpr int kKeys = 10000;
    std::atomic<int> made{0};
    std::vector<std::string> keys;
    keys.reserve(kKeys);
    auto start = Clock::now();
    for (int i = 0; i < kKeys; i++) {
        auto text = ipc::publish(
            ipc::Kind::Memory,
            [i, &made]() -> Result<UniqueFd> {
                made++;
                UniqueFd fd(memfd_create("npuipc-lazy", MFD_CLOEXEC));
                if (!fd)
                    return Status::from_errno(errno);
                std::string content = std::to_string(i);
                if (pwrite(fd.get(), content.data(), content.size(), 0) < 0)
                    return Status::from_errno(errno);
                return fd;
            },
            false, static_cast<uint32_t>(i));
        ASSERT_TRUE(text.ok());
        keys.push_back(text.value());
    }
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
    EXPECT_EQ(fds_at_start_, CountFds()) << "a lazy key holds no fd";
    EXPECT_EQ(0, made.load());
    pid_t child = ForkChild([&] {
        auto got = ipc::fetch(Parse(keys.back()), ipc::Kind::Memory);
        CHILD_CHECK(got.ok());
        CHILD_CHECK(got.value().tag == kKeys - 1);
        CHILD_CHECK(ReadAt(got.value().fd.get(), 4) == "9999");
        return 0;
    });
    EXPECT_EQ(0, WaitChild(child));
    EXPECT_EQ(1, made.load());
    for (const std::string &k : keys)
        ASSERT_TRUE(ipc::revoke(k).ok());
}

TEST_F(IpcTransport, LazyFdErrorsReachTheImporter)
{
    struct Case {
        int made_errno; // 0: success without an fd
        int fetched;
    } cases[] = {{ENOMEM, ENOMEM}, {EMFILE, EMFILE}, {ESRCH, ESRCH}, {EBADF, EIO}, {0, EIO}};
    for (const Case &c : cases) {
        int err = c.made_errno;
        auto text = ipc::publish(
            ipc::Kind::Event,
            [err]() -> Result<UniqueFd> {
                if (err)
                    return Status::from_errno(err);
                return UniqueFd();
            },
            false);
        ASSERT_TRUE(text.ok());
        EXPECT_EQ(c.fetched, FetchError(text.value(), ipc::Kind::Event)) << err;
        EXPECT_TRUE(ipc::revoke(text.value()).ok());
    }
}

// ---- a hostile peer ----

// A planted endpoint: a child listening on `path` answers the n-th
// connection with modes[n].
enum class Mode {
    TwoFds,
    NoFd,
    Garbage,
    SixFds,
    RefusalWithFd,
    WrongMagic,
    WrongSize,
    UnknownStatus,
    CloseWithoutReply,
    NeverAnswer,
    Good,
};

int RunPlantedEndpoint(const std::string &path, const std::vector<Mode> &modes, Pipe &ready,
                       Pipe &done)
{
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    CHILD_CHECK(bind(listener.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) == 0);
    CHILD_CHECK(listen(listener.get(), 8) == 0);
    ready.send("ready");
    std::vector<UniqueFd> kept;
    for (Mode mode : modes) {
        UniqueFd c(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
        CHILD_CHECK(c.valid());
        npuipc_ipc::WireRequest req{};
        CHILD_CHECK(recv(c.get(), &req, sizeof(req), 0) == sizeof(req));
        npuipc_ipc::WireReply reply{};
        reply.magic = npuipc_ipc::kReplyMagic;
        reply.version = npuipc_ipc::kWireVersion;
        reply.tag = 77;
        int nfds = 1;
        size_t size = sizeof(reply);
        switch (mode) {
        case Mode::TwoFds:
            nfds = 2;
            break;
        case Mode::NoFd:
            nfds = 0;
            break;
        case Mode::Garbage:
            nfds = 0;
            reply.magic = 0x41414141;
            size = 7;
            break;
        case Mode::SixFds:
            nfds = 6;
            break;
        case Mode::RefusalWithFd:
            reply.status = EACCES;
            break;
        case Mode::WrongMagic:
            reply.magic ^= 0x100;
            break;
        case Mode::WrongSize:
            size = sizeof(reply) - 1;
            break;
        case Mode::UnknownStatus:
            nfds = 0;
            reply.status = 12345;
            break;
        case Mode::CloseWithoutReply:
            continue;
        case Mode::NeverAnswer:
            kept.push_back(std::move(c));
            continue;
        case Mode::Good:
            break;
        }
        std::vector<int> fds;
        std::vector<UniqueFd> owned;
        for (int i = 0; i < nfds; i++) {
            owned.emplace_back(memfd_create("npuipc-planted", MFD_CLOEXEC));
            fds.push_back(owned.back().get());
        }
        struct iovec iov = {&reply, size};
        struct msghdr msg {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        std::vector<char> control(CMSG_SPACE(sizeof(int) * 8));
        if (nfds) {
            msg.msg_control = control.data();
            msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
            struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
            std::memcpy(CMSG_DATA(cm), fds.data(), sizeof(int) * fds.size());
        }
        CHILD_CHECK(sendmsg(c.get(), &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(size));
    }
    CHILD_CHECK(done.receive(30000) == "done");
    return 0;
}

TEST_F(IpcTransport, HostileEndpointIsEprotoAndLeaksNoFd)
{
    UseFreshDir();
    const std::string endpoint = "1-AAAAAAAAAAA";
    const std::string path = SocketPath(fresh_dir_, endpoint);
    const std::string text = "npk1." + endpoint + ".1.AAAAAAAAAAAAAAAAAAAAAA";
    struct Expect {
        Mode mode;
        int err;
    } expects[] = {
        {Mode::TwoFds, EPROTO},        {Mode::NoFd, EPROTO},
        {Mode::Garbage, EPROTO},       {Mode::SixFds, EPROTO},
        {Mode::RefusalWithFd, EPROTO}, {Mode::WrongMagic, EPROTO},
        {Mode::WrongSize, EPROTO},     {Mode::UnknownStatus, EPROTO},
        {Mode::CloseWithoutReply, EPROTO}, {Mode::NeverAnswer, ETIMEDOUT},
        {Mode::Good, 0},
    };
    std::vector<Mode> modes;
    for (const Expect &e : expects)
        modes.push_back(e.mode);
    Pipe ready, done;
    pid_t planted = ForkChild([&] { return RunPlantedEndpoint(path, modes, ready, done); });
    ASSERT_EQ("ready", ready.receive());
    const int fds = CountFds();
    for (const Expect &e : expects) {
        // A reply gets as long as a slow machine needs; the endpoint that
        // never answers is timed out after the fetch's own limit.
        const int timeout_ms = e.mode == Mode::NeverAnswer ? 500 : 30000;
        auto start = Clock::now();
        auto got = ipc::fetch(Parse(text), ipc::Kind::Memory, timeout_ms);
        EXPECT_EQ(e.err, got.ok() ? 0 : got.error()) << static_cast<int>(e.mode);
        if (got.ok()) {
            EXPECT_EQ(77u, got.value().tag);
        }
        if (e.mode == Mode::NeverAnswer) {
            EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(timeout_ms));
            EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(timeout_ms + 30000));
        }
        got = Status::from_errno(EIO); // closes a received fd
        EXPECT_EQ(fds, CountFds()) << "fds leaked with mode " << static_cast<int>(e.mode);
    }
    EXPECT_TRUE(logged({"importer:", "protocol error", "a success without exactly one fd"}));
    EXPECT_TRUE(logged({"importer:", "truncated control data"}));
    done.send("done");
    EXPECT_EQ(0, WaitChild(planted));
}

// A socket of another user in the directory is not even connected to.
TEST_F(IpcTransport, SocketOfAnotherUserIsNotConnectedTo)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root, to give a socket to another user";
    UseFreshDir();
    const std::string endpoint = "1-AAAAAAAAAAA";
    const std::string path = SocketPath(fresh_dir_, endpoint);
    const std::string text = "npk1." + endpoint + ".1.AAAAAAAAAAAAAAAAAAAAAA";
    UniqueFd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    ASSERT_EQ(0, bind(s.get(), reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)));
    ASSERT_EQ(0, listen(s.get(), 8));
    ASSERT_EQ(0, lchown(path.c_str(), 65534, 65534));
    EXPECT_EQ(EACCES, FetchError(text, ipc::Kind::Memory, 500));
    EXPECT_TRUE(logged({"importer: refusing", "owned by uid 65534"}));
}

// ---- the socket directory ----

// publish()'s errno (0: success) in a child with NPUIPC_IPC_DIR=dir: a
// child starts an exporter of its own. 200 if the child did not log
// `expect_log`.
int PublishErrorIn(const std::string &dir, const char *expect_log = nullptr)
{
    pid_t child = ForkChild([&] {
        clear_log();
        setenv("NPUIPC_IPC_DIR", dir.c_str(), 1);
        auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-dir"), false);
        if (expect_log && !logged({"refusing IPC socket directory", expect_log}))
            return 200;
        return text.ok() ? 0 : text.error();
    });
    return WaitChild(child);
}

TEST_F(IpcTransport, UnsafeDirectoriesAreRefused)
{
    const std::string loose = fresh_dir_ + "/loose";
    ASSERT_EQ(0, mkdir(loose.c_str(), 0700));
    ASSERT_EQ(0, chmod(loose.c_str(), 0755));
    EXPECT_EQ(EACCES, PublishErrorIn(loose, "mode 0755 is looser than 0700"));
    ASSERT_EQ(0, chmod(loose.c_str(), 0710));
    EXPECT_EQ(EACCES, PublishErrorIn(loose, "mode 0710 is looser than 0700"));
    // An importer refuses it too.
    setenv("NPUIPC_IPC_DIR", loose.c_str(), 1);
    EXPECT_EQ(EACCES, FetchError("npk1.1f3a-AAAAAAAAAAA.2a.AAAAAAAAAAAAAAAAAAAAAA",
                                 ipc::Kind::Memory));
    EXPECT_TRUE(logged({"refusing IPC socket directory", "looser than 0700"}));
    UseProcessDir();

    const std::string good = fresh_dir_ + "/good";
    ASSERT_EQ(0, mkdir(good.c_str(), 0700));
    const std::string link = fresh_dir_ + "/link";
    ASSERT_EQ(0, symlink(good.c_str(), link.c_str()));
    EXPECT_EQ(ENOTDIR, PublishErrorIn(link, "not a directory"));
    const std::string file = fresh_dir_ + "/file";
    UniqueFd(open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    EXPECT_EQ(ENOTDIR, PublishErrorIn(file));


    // Missing: made, 0700.
    const std::string made = fresh_dir_ + "/made";
    EXPECT_EQ(0, PublishErrorIn(made));
    struct stat st;
    ASSERT_EQ(0, lstat(made.c_str(), &st));
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(0700u, st.st_mode & 07777);
    // Only the last component is made.
    EXPECT_EQ(ENOENT, PublishErrorIn(fresh_dir_ + "/none/sub"));
    // sun_path holds 108 bytes.
    const std::string deep = fresh_dir_ + "/" + std::string(100 - fresh_dir_.size(), 'd');
    EXPECT_EQ(ENAMETOOLONG, PublishErrorIn(deep));
}

TEST_F(IpcTransport, DirectoryOfAnotherUserIsRefused)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root, to give a directory to another user";
    UseFreshDir();
    const std::string foreign = fresh_dir_ + "/foreign";
    ASSERT_EQ(0, mkdir(foreign.c_str(), 0700));
    ASSERT_EQ(0, chown(foreign.c_str(), 65534, 65534));
    EXPECT_EQ(EACCES, PublishErrorIn(foreign, "owned by uid 65534"));
}

// ---- fork ----

// The inode of the listening socket bound at `bound_path`, from /proc/net/unix.
std::string ListenerInode(const std::string &bound_path)
{
    std::ifstream in("/proc/net/unix");
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() < bound_path.size() ||
            line.compare(line.size() - bound_path.size(), bound_path.size(), bound_path) != 0)
            continue;
        // Num RefCount Protocol Flags Type St Inode Path
        char num[32];
        unsigned a, b, c, d, e;
        unsigned long inode;
        if (std::sscanf(line.c_str(), "%31s %x %x %x %x %x %lu", num, &a, &b, &c, &d, &e,
                        &inode) == 7 &&
            (c & 0x10000)) // __SO_ACCEPTCON: the listener, not a connection
            return "socket:[" + std::to_string(inode) + "]";
    }
    return "";
}

TEST_F(IpcTransport, ForkChildForgetsTheParentsExporter)
{
    auto text = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-fork-probe", "parent"), false);
    ASSERT_TRUE(text.ok());
    const ipc::Key key = Parse(text.value());
    const std::string path = SocketPath(g_process_dir, key.endpoint);
    const std::string listener = ListenerInode(g_process_dir + "/" + key.endpoint + ".tmp");
    ASSERT_FALSE(listener.empty());
    {
        std::vector<std::string> targets = FdTargets();
        ASSERT_NE(targets.end(), std::find(targets.begin(), targets.end(), listener));
    }
    Pipe key_pipe, done;
    pid_t child = ForkChild([&] {
        // Nothing of the parent's exporter is left here.
        for (const std::string &t : FdTargets()) {
            CHILD_CHECK(t != listener);
            CHILD_CHECK(t.find("npuipc-fork-probe") == std::string::npos);
            CHILD_CHECK(t.find("eventpoll") == std::string::npos);
            CHILD_CHECK(t.find("io_uring") == std::string::npos);
        }
        {
            // Nor the parent's ring's mappings.
            std::ifstream maps("/proc/self/maps");
            std::string line;
            while (std::getline(maps, line))
                CHILD_CHECK(line.find("io_uring") == std::string::npos);
        }
        CHILD_CHECK(!ipc::published_here(text.value()));
        int32_t self = getpid();
        CHILD_CHECK(ipc::allow(text.value(), &self, 1).error() == ENOENT);
        CHILD_CHECK(ipc::revoke(text.value()).error() == ENOENT);
        // The parent's key is served by the parent.
        auto got = ipc::fetch(key, ipc::Kind::Memory);
        CHILD_CHECK(got.ok());
        CHILD_CHECK(ReadAt(got.value().fd.get(), 6) == "parent");
        // A key of its own starts an exporter of its own.
        auto own = ipc::publish(ipc::Kind::Memory, Memfd("npuipc-fork-own", "child"), false);
        CHILD_CHECK(own.ok());
        CHILD_CHECK(Parse(own.value()).endpoint != key.endpoint);
        CHILD_CHECK(std::string(ipc::exporter_loop_name()) ==
                    ExpectedLoop());
        key_pipe.send(own.value());
        CHILD_CHECK(done.receive() == "done");
        return 0;
    });
    std::string child_key = key_pipe.receive();
    ASSERT_FALSE(child_key.empty());
    char pid_hex[16];
    std::snprintf(pid_hex, sizeof(pid_hex), "%x-", static_cast<unsigned>(child));
    EXPECT_EQ(0u, Parse(child_key).endpoint.find(pid_hex));
    EXPECT_FALSE(ipc::published_here(child_key));
    auto got = ipc::fetch(Parse(child_key), ipc::Kind::Memory);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ("child", ReadAt(got.value().fd.get(), 5));
    got = Status::from_errno(EIO);
    done.send("done");
    EXPECT_EQ(0, WaitChild(child));
    // The parent's socket is still there, and still served.
    struct stat st;
    EXPECT_EQ(0, lstat(path.c_str(), &st));
    EXPECT_EQ(0, FetchError(text.value(), ipc::Kind::Memory));
    EXPECT_TRUE(ipc::published_here(text.value()));
    EXPECT_TRUE(ipc::revoke(text.value()).ok());
    unlink(SocketPath(g_process_dir, Parse(child_key).endpoint).c_str());
}

} // namespace
