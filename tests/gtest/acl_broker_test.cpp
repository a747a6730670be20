// SPDX-License-Identifier: MIT
// IPC keys through the broker (tools/npuipc-broker, Documentation/ipc.md):
// where users run. Each test starts a broker of its own, as an
// unprivileged user, and runs the exporter and the importer as separate
// processes that only use the aclrt API: with the exporter stopped, as
// another user, in one container and in two (new PID, mount, IPC, UTS and
// network namespaces with a private /tmp). Every import is checked by its
// data; keys are made with PID validation on. Runs in the VM.
#include <acl/acl.h>

#include "fork_at_pid.h"
#include "run_once.h"
#include "ipc/internal.h" // the broker's protocol, for the hostile clients

#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kSize = 8192;
// Neither root nor the broker's nobody.
constexpr uid_t kOtherUid = 4242;

uint8_t Pattern(size_t i)
{
    return static_cast<uint8_t>(i * 7 + 3);
}

// A pipe carrying fixed-size values from one process to another. Every
// process of a test holds both ends, so a read is bounded instead: a
// process that failed early must not leave its peers waiting.
constexpr int kReceiveTimeoutMs = 30000;

struct Channel {
    int fds[2] = {-1, -1};
    Channel() { EXPECT_EQ(0, ::pipe2(fds, O_CLOEXEC)); }
    ~Channel()
    {
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }
    template <typename T> bool Send(const T &v) const
    {
        return ::write(fds[1], &v, sizeof(v)) == static_cast<ssize_t>(sizeof(v));
    }
    template <typename T> bool Receive(T &v) const
    {
        size_t got = 0;
        while (got < sizeof(v)) {
            struct pollfd p = {fds[0], POLLIN, 0};
            if (::poll(&p, 1, kReceiveTimeoutMs) != 1)
                return false;
            ssize_t n = ::read(fds[0], reinterpret_cast<char *>(&v) + got, sizeof(v) - got);
            if (n <= 0)
                return false;
            got += static_cast<size_t>(n);
        }
        return true;
    }
};

// What is shared: device memory by key, a notify by key, physical memory
// by a VMM shareable handle, or an IPC event by handle (CANN's event
// handles have no allowlist).
enum class What { Memory, Notify, Shareable, Event };

struct KeyText {
    char text[65] = {};
    uint64_t shareable = 0;
};

aclrtPhysicalMemProp PhysicalProp()
{
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_NORMAL;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

// Device memory of kSize bytes holding Pattern, as `what` needs it: from
// aclrtMalloc, or physical memory mapped at a reserved address.
aclError MakePatternedMemory(What what, void **dev, aclrtDrvMemHandle *physical)
{
    aclError rc;
    if (what == What::Shareable) {
        aclrtPhysicalMemProp prop = PhysicalProp();
        rc = aclrtMallocPhysical(physical, kSize, &prop, 0);
        if (rc == ACL_SUCCESS)
            rc = aclrtReserveMemAddress(dev, kSize, 0, nullptr, 0);
        if (rc == ACL_SUCCESS)
            rc = aclrtMapMem(*dev, kSize, 0, *physical, 0);
    } else {
        rc = aclrtMalloc(dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY);
    }
    std::vector<uint8_t> host(kSize);
    for (size_t i = 0; i < kSize; i++)
        host[i] = Pattern(i);
    if (rc == ACL_SUCCESS)
        rc = aclrtMemcpy(*dev, kSize, host.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE);
    return rc;
}

// -1 when the kSize bytes at dev are not Pattern.
aclError CheckPattern(void *dev)
{
    std::vector<uint8_t> host(kSize);
    aclError rc = aclrtMemcpy(host.data(), kSize, dev, kSize, ACL_MEMCPY_DEVICE_TO_HOST);
    for (size_t i = 0; rc == ACL_SUCCESS && i < kSize; i++)
        if (host[i] != Pattern(i))
            rc = -1; // the data is not the exporter's
    return rc;
}

// Runs fn in a child process; its exit status is fn's result (0-255).
pid_t Spawn(const std::function<int()> &fn)
{
    std::fflush(stdout); // or the child writes the parent's buffer again
    pid_t pid = ::fork();
    if (pid == 0) {
        int rc = fn();
        std::fflush(stdout);
        ::_exit(rc);
    }
    return pid;
}

// fn in a new container: new PID, mount, IPC, UTS and network namespaces
// and a private /tmp, as `docker run` gives; fn runs as PID 1's child.
int InContainer(const std::function<int()> &fn)
{
    if (::unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) != 0)
        return 90;
    pid_t child = ::fork();
    if (child == 0) {
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", "/tmp", "tmpfs", 0, nullptr) != 0)
            ::_exit(91);
        int rc = fn();
        std::fflush(stdout);
        ::_exit(rc);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return 92;
    return WEXITSTATUS(status);
}

// Becomes the other user. The device is set first: the guest has no udev
// to give a render group the render nodes, as a host does.
bool BecomeOtherUser()
{
    return ::setgroups(0, nullptr) == 0 && ::setresgid(kOtherUid, kOtherUid, kOtherUid) == 0 &&
           ::setresuid(kOtherUid, kOtherUid, kOtherUid) == 0;
}

// The exporter: publishes `what` (memory holding Pattern, or a notify),
// allowlists the PID the importer sends, sends the key, then waits for
// `done` (or stops itself). A notify's exporter then waits for the
// importer's record.
int Export(What what, const Channel &pids, const Channel &keys, const Channel &done, bool stop)
{
    if (aclrtSetDevice(0) != ACL_SUCCESS)
        return 10;
    void *dev = nullptr;
    aclrtDrvMemHandle physical = nullptr;
    aclrtNotify notify = nullptr;
    KeyText key;
    if (what == What::Notify) {
        if (aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT) != ACL_SUCCESS ||
            aclrtNotifyGetExportKey(notify, key.text, sizeof(key.text), 0) != ACL_SUCCESS)
            return 11;
    } else if (what == What::Event) {
        // Recorded before the handle leaves: the importer's wait sees it.
        aclrtEvent event = nullptr;
        aclrtStream stream = nullptr;
        aclrtIpcEventHandle handle = {};
        if (aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC) != ACL_SUCCESS ||
            aclrtCreateStream(&stream) != ACL_SUCCESS ||
            aclrtIpcGetEventHandle(event, &handle) != ACL_SUCCESS ||
            aclrtRecordEvent(event, stream) != ACL_SUCCESS ||
            aclrtSynchronizeStream(stream) != ACL_SUCCESS)
            return 18;
        static_assert(sizeof(handle.reserved) <= sizeof(key.text), "a handle fits");
        std::memcpy(key.text, handle.reserved, sizeof(handle.reserved));
    } else {
        if (MakePatternedMemory(what, &dev, &physical) != ACL_SUCCESS)
            return 12;
        if (what == What::Memory
                ? aclrtIpcMemGetExportKey(dev, kSize, key.text, sizeof(key.text), 0) != ACL_SUCCESS
                : aclrtMemExportToShareableHandle(physical, ACL_MEM_HANDLE_TYPE_NONE, 0,
                                                  &key.shareable) != ACL_SUCCESS)
            return 13;
    }
    int32_t pid = 0;
    if (!pids.Receive(pid))
        return 14;
    aclError listed = what == What::Memory   ? aclrtIpcMemSetImportPid(key.text, &pid, 1)
                      : what == What::Notify ? aclrtNotifySetImportPid(notify, &pid, 1)
                      : what == What::Event  ? ACL_SUCCESS
                                             : aclrtMemSetPidToShareableHandle(key.shareable, &pid, 1);
    if (listed != ACL_SUCCESS)
        return 15;
    if (!keys.Send(key))
        return 16;
    if (stop)
        ::raise(SIGSTOP);
    if (what == What::Notify) {
        aclrtStream stream = nullptr;
        if (aclrtCreateStream(&stream) != ACL_SUCCESS ||
            aclrtWaitAndResetNotify(notify, stream, 30) != ACL_SUCCESS ||
            aclrtSynchronizeStream(stream) != ACL_SUCCESS)
            return 17; // the importer's record never arrived
    }
    char byte;
    (void)done.Receive(byte);
    return 0;
}

aclError ImportShared(What what, const KeyText &key)
{
    if (what == What::Event) {
        aclrtIpcEventHandle handle = {};
        std::memcpy(handle.reserved, key.text, sizeof(handle.reserved));
        aclrtEvent event = nullptr;
        aclrtStream stream = nullptr;
        aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
        aclError rc = aclrtIpcOpenEventHandle(handle, &event);
        if (rc == ACL_SUCCESS)
            rc = aclrtCreateStream(&stream);
        if (rc == ACL_SUCCESS)
            rc = aclrtStreamWaitEvent(stream, event);
        if (rc == ACL_SUCCESS)
            rc = aclrtSynchronizeStream(stream);
        if (rc == ACL_SUCCESS)
            rc = aclrtQueryEventStatus(event, &status);
        if (rc == ACL_SUCCESS && status != ACL_EVENT_RECORDED_STATUS_COMPLETE)
            rc = -4; // not the exporter's recorded event
        return rc;
    }
    if (what == What::Notify) {
        aclrtNotify notify = nullptr;
        aclrtStream stream = nullptr;
        aclError rc = aclrtNotifyImportByKey(&notify, key.text, 0);
        if (rc == ACL_SUCCESS)
            rc = aclrtCreateStream(&stream);
        if (rc == ACL_SUCCESS)
            rc = aclrtRecordNotify(notify, stream);
        if (rc == ACL_SUCCESS)
            rc = aclrtSynchronizeStream(stream);
        return rc;
    }
    if (what == What::Memory) {
        void *dev = nullptr;
        aclError rc = aclrtIpcMemImportByKey(&dev, key.text, 0);
        if (rc == ACL_SUCCESS) {
            rc = CheckPattern(dev);
            (void)aclrtIpcMemClose(key.text);
        }
        return rc;
    }
    aclrtDrvMemHandle physical = nullptr;
    aclError rc = aclrtMemImportFromShareableHandle(key.shareable, 0, &physical);
    if (rc != ACL_SUCCESS)
        return rc;
    void *va = nullptr;
    rc = aclrtReserveMemAddress(&va, kSize, 0, nullptr, 0);
    if (rc == ACL_SUCCESS)
        rc = aclrtMapMem(va, kSize, 0, physical, 0);
    if (rc == ACL_SUCCESS) {
        rc = CheckPattern(va);
        (void)aclrtUnmapMem(va);
    }
    (void)aclrtFreePhysical(physical);
    return rc;
}

// The importer: sends its bare PID, imports what it gets and checks it (the
// data, or a notify's record); sends the aclError of the import (or of what
// failed first).
// With `go`, it imports only once told (after the exporter has stopped).
int Import(What what, const Channel &pids, const Channel &keys, const Channel &results,
           bool as_other_user = false, const Channel *go = nullptr)
{
    aclError rc = aclrtSetDevice(0);
    if (rc == ACL_SUCCESS && as_other_user && !BecomeOtherUser())
        rc = -3;
    int32_t pid = 0;
    if (rc == ACL_SUCCESS)
        rc = aclrtDeviceGetBareTgid(&pid);
    if (rc != ACL_SUCCESS || !pids.Send(pid))
        return results.Send(rc) ? 20 : 21;
    KeyText key;
    if (!keys.Receive(key))
        return 22;
    char byte;
    if (go && !go->Receive(byte))
        return 24;
    rc = ImportShared(what, key);
    return results.Send(rc) ? 0 : 23;
}

int Wait(pid_t pid)
{
    int status = 0;
    if (pid <= 0 || ::waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class AclBrokerTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        dir_ = "/run/npuipc-test-" + std::to_string(::getpid());
        ASSERT_EQ(0, ::mkdir(dir_.c_str(), 0755)) << std::strerror(errno);
        socket_ = dir_ + "/broker.sock";
        ASSERT_NO_FATAL_FAILURE(StartBroker());
        ASSERT_EQ(0, ::setenv("NPUIPC_BROKER_SOCKET", socket_.c_str(), 1));
    }

    void TearDown() override
    {
        ::unsetenv("NPUIPC_BROKER_SOCKET");
        if (broker_ > 0) {
            EXPECT_EQ(0, StopBroker(SIGTERM)) << "the broker did not end cleanly";
        }
        ::unlink(socket_.c_str());
        ::rmdir(dir_.c_str());
    }

    // A broker of this test's own, as nobody, with `extra` options.
    void StartBroker(const std::vector<std::string> &extra = {})
    {
        ::unlink(socket_.c_str());
        std::vector<std::string> args = {"npuipc-broker", "--socket", socket_, "--user", "nobody"};
        args.insert(args.end(), extra.begin(), extra.end());
        std::fflush(stdout);
        broker_ = ::fork();
        if (broker_ == 0) {
            // A known fd limit, hence known connection limits.
            struct rlimit rl = {1024, 1024};
            ::setrlimit(RLIMIT_NOFILE, &rl);
            std::vector<char *> argv;
            for (std::string &a : args)
                argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(NPUIPC_BROKER_PATH, argv.data());
            ::_exit(127);
        }
        ASSERT_GT(broker_, 0);
        for (int i = 0; i < 500 && ::access(socket_.c_str(), F_OK) != 0; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_EQ(0, ::access(socket_.c_str(), F_OK)) << "the broker did not start";
    }

    // Signals the broker and reaps it within 5 s (then SIGKILL): its status.
    int StopBroker(int sig)
    {
        ::kill(broker_, sig);
        int status = 0;
        for (int i = 0; i < 500; i++) {
            if (::waitpid(broker_, &status, WNOHANG) == broker_)
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(broker_, SIGKILL);
        (void)::waitpid(broker_, &status, 0);
        return -1;
    }

    // The broker's open fds: what it holds.
    int BrokerFds() const
    {
        std::string path = "/proc/" + std::to_string(broker_) + "/fd";
        DIR *d = ::opendir(path.c_str());
        if (!d)
            return -1;
        int n = 0;
        while (struct dirent *e = ::readdir(d))
            if (e->d_name[0] != '.')
                n++;
        ::closedir(d);
        return n;
    }

    // The broker's fds once the connections of exited processes are closed:
    // the same count over 300 ms.
    int SettledBrokerFds() const
    {
        int last = BrokerFds(), same_for = 0;
        for (int i = 0; i < 100 && same_for < 6; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            int now = BrokerFds();
            same_for = now == last ? same_for + 1 : 0;
            last = now;
        }
        return last;
    }

    // A connection to the broker, as a hostile client makes it.
    int Connect() const
    {
        int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        struct timeval tv = {5, 0};
        ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); // bounds the connect
        struct sockaddr_un addr {};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_.c_str());
        if (s >= 0 && ::connect(s, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0) {
            ::close(s);
            return -1;
        }
        ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return s;
    }

    // Runs an exporter and an importer (each through `wrap`), and returns
    // the importer's result.
    aclError Share(const std::function<int(const std::function<int()> &)> &export_wrap,
                   const std::function<int(const std::function<int()> &)> &import_wrap,
                   bool stop_exporter = false, bool import_as_other_user = false,
                   What what = What::Memory)
    {
        Channel pids, keys, done, results, go;
        pid_t exporter = Spawn([&] {
            return export_wrap([&] { return Export(what, pids, keys, done, stop_exporter); });
        });
        pid_t importer = Spawn([&] {
            return import_wrap(
                [&] { return Import(what, pids, keys, results, import_as_other_user, &go); });
        });
        aclError rc = -2;
        if (stop_exporter) {
            int status = 0;
            EXPECT_EQ(exporter, ::waitpid(exporter, &status, WUNTRACED));
            EXPECT_TRUE(WIFSTOPPED(status)) << "the exporter did not stop";
        }
        char byte = 0;
        EXPECT_TRUE(go.Send(byte));
        EXPECT_TRUE(results.Receive(rc)) << "the importer sent no result";
        EXPECT_EQ(0, Wait(importer));
        if (stop_exporter)
            ::kill(exporter, SIGCONT);
        EXPECT_TRUE(done.Send(byte));
        EXPECT_EQ(0, Wait(exporter));
        return rc;
    }

    static int Plain(const std::function<int()> &fn) { return fn(); }

    std::string dir_, socket_;
    pid_t broker_ = -1;
};

TEST_F(AclBrokerTest, AnImportSucceedsBetweenTwoPlainProcesses)
{
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain));
}

// CANN's import needs nothing of the exporter: nor does the broker's.
TEST_F(AclBrokerTest, AnImportSucceedsWhileTheExporterIsStopped)
{
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain, true));
}

TEST_F(AclBrokerTest, AProcessOfAnotherUserImportsWhenListed)
{
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain, false, true));
}

TEST_F(AclBrokerTest, TwoProcessesInOneContainerShareWithPidValidation)
{
    Channel pids, keys, done, results;
    pid_t container = Spawn([&] {
        return InContainer([&] {
            pid_t exporter = Spawn([&] { return Export(What::Memory, pids, keys, done, false); });
            pid_t importer = Spawn([&] { return Import(What::Memory, pids, keys, results); });
            int imported = Wait(importer);
            char byte = 0;
            (void)done.Send(byte);
            int exported = Wait(exporter);
            return imported ? imported : exported;
        });
    });
    EXPECT_EQ(0, Wait(container));
    aclError result = -2;
    ASSERT_TRUE(results.Receive(result));
    EXPECT_EQ(ACL_SUCCESS, result);
}

TEST_F(AclBrokerTest, ProcessesInTwoContainersShareWithPidValidation)
{
    EXPECT_EQ(ACL_SUCCESS, Share(InContainer, InContainer));
}

TEST_F(AclBrokerTest, ProcessesInTwoContainersShareANotify)
{
    EXPECT_EQ(ACL_SUCCESS, Share(InContainer, InContainer, false, false, What::Notify));
}

TEST_F(AclBrokerTest, ProcessesInTwoContainersShareAShareableHandle)
{
    EXPECT_EQ(ACL_SUCCESS, Share(InContainer, InContainer, false, false, What::Shareable));
}

TEST_F(AclBrokerTest, ProcessesInTwoContainersShareAnIpcEvent)
{
    EXPECT_EQ(ACL_SUCCESS, Share(InContainer, InContainer, false, false, What::Event));
}

TEST_F(AclBrokerTest, AnIpcEventOpensWhileItsExporterIsStoppedAndForAnotherUser)
{
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain, true, true, What::Event));
}

TEST_F(AclBrokerTest, AShareableHandleImportsWhileItsExporterIsStopped)
{
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain, true, false, What::Shareable));
}

TEST_F(AclBrokerTest, AProcessOfAnotherUserImportsANotifyWhenListed)
{
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain, false, true, What::Notify));
}

namespace wire = npuipc_ipc;

// Sends `len` bytes with `fd` attached (-1: none).
bool SendWith(int s, const void *buf, size_t len, int fd)
{
    struct iovec iov = {const_cast<void *>(buf), len};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return ::sendmsg(s, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(len);
}

// A deposit of `fd` as `kind`; the broker's status.
int Deposit(int s, wire::Kind kind, int fd)
{
    wire::BrokerRequest req = {};
    req.magic = wire::kBrokerMagic;
    req.version = wire::kWireVersion;
    req.op = wire::kBrokerDeposit;
    req.kind = static_cast<uint8_t>(kind);
    if (!SendWith(s, &req, sizeof(req), fd))
        return -1;
    wire::BrokerReply reply = {};
    if (::recv(s, &reply, sizeof(reply), 0) != static_cast<ssize_t>(sizeof(reply)) ||
        reply.magic != wire::kBrokerReplyMagic)
        return -2;
    return reply.status;
}

// Every fd the broker gets is checked for what it claims to be and closed
// when it is not; an fd attached to a fetch or to garbage is closed too.
TEST_F(AclBrokerTest, FdsThatAreNotWhatTheySayAreRefusedAndClosed)
{
    // Once it has served: whatever it opens for good is open by then.
    ASSERT_EQ(ACL_SUCCESS, Share(Plain, Plain));
    const int before = SettledBrokerFds();
    ASSERT_GT(before, 0);
    int memfd = ::memfd_create("not-a-dmabuf", MFD_CLOEXEC);
    ASSERT_GE(memfd, 0);
    ASSERT_EQ(0, ::ftruncate(memfd, 4096));
    int s = Connect();
    ASSERT_GE(s, 0);
    EXPECT_EQ(EBADF, Deposit(s, wire::Kind::Memory, memfd));
    EXPECT_EQ(EBADF, Deposit(s, wire::Kind::Event, memfd));
    EXPECT_EQ(EINVAL, Deposit(s, wire::Kind::Notify, -1));
    // A deposit of another version, with its fd: refused, the fd closed.
    wire::BrokerRequest req = {};
    req.magic = wire::kBrokerMagic;
    req.version = wire::kWireVersion + 1;
    req.op = wire::kBrokerDeposit;
    req.kind = static_cast<uint8_t>(wire::Kind::Memory);
    ASSERT_TRUE(SendWith(s, &req, sizeof(req), memfd));
    wire::BrokerReply answer = {};
    EXPECT_EQ(static_cast<ssize_t>(sizeof(answer)), ::recv(s, &answer, sizeof(answer), 0));
    EXPECT_EQ(EPROTO, answer.status);
    ::close(s);
    // Two fds on one deposit: malformed, both closed, the connection too.
    s = Connect();
    ASSERT_GE(s, 0);
    {
        req.version = wire::kWireVersion;
        int two[2] = {memfd, memfd};
        struct iovec iov = {&req, sizeof(req)};
        struct msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(two))] = {};
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(two));
        std::memcpy(CMSG_DATA(c), two, sizeof(two));
        ASSERT_EQ(static_cast<ssize_t>(sizeof(req)), ::sendmsg(s, &msg, MSG_NOSIGNAL));
        char end;
        EXPECT_EQ(0, ::recv(s, &end, 1, 0)) << "the connection was not closed";
    }
    ::close(s);
    // A fetch with an fd attached, and garbage with one.
    s = Connect();
    ASSERT_GE(s, 0);
    wire::WireRequest fetch = {};
    fetch.magic = wire::kRequestMagic;
    fetch.version = wire::kWireVersion;
    fetch.kind = static_cast<uint8_t>(wire::Kind::Memory);
    fetch.object = 1;
    EXPECT_TRUE(SendWith(s, &fetch, sizeof(fetch), memfd));
    wire::WireReply reply = {};
    EXPECT_EQ(static_cast<ssize_t>(sizeof(reply)), ::recv(s, &reply, sizeof(reply), 0));
    EXPECT_EQ(ECONNREFUSED, reply.status); // no object of this broker; the fd was dropped
    char byte;
    ::close(s);
    s = Connect();
    ASSERT_GE(s, 0);
    char garbage[100];
    std::memset(garbage, 0xA5, sizeof(garbage));
    EXPECT_TRUE(SendWith(s, garbage, sizeof(garbage), memfd));
    EXPECT_EQ(0, ::recv(s, &byte, 1, 0)) << "the connection was not closed";
    ::close(s);
    // An empty message with an fd: received, closed, the connection too.
    s = Connect();
    ASSERT_GE(s, 0);
    EXPECT_TRUE(SendWith(s, garbage, 0, memfd));
    EXPECT_EQ(0, ::recv(s, &byte, 1, 0)) << "the connection was not closed";
    ::close(s);
    ::close(memfd);
    EXPECT_EQ(before, SettledBrokerFds()) << "the broker kept an fd";
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain));
}

// A TCP socket whose close() lingers: connected over this network
// namespace's loopback to a listener that never reads, its send buffer
// full, SO_LINGER set. -1 on failure.
int LingeringSocket(int listener)
{
    struct sockaddr_in addr {};
    socklen_t len = sizeof(addr);
    if (::getsockname(listener, reinterpret_cast<struct sockaddr *>(&addr), &len) != 0)
        return -1;
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -1;
    if (::connect(s, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0 &&
        errno != EINPROGRESS) {
        ::close(s);
        return -1;
    }
    struct pollfd p = {s, POLLOUT, 0};
    (void)::poll(&p, 1, 5000);
    static char chunk[65536];
    while (::send(s, chunk, sizeof(chunk), MSG_NOSIGNAL) > 0) {
    }
    struct linger lg = {1, 60};
    if (errno != EAGAIN || ::fcntl(s, F_SETFL, 0) != 0 ||
        ::setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) != 0) {
        ::close(s);
        return -1;
    }
    return s;
}

// One user whose refused fds never close (their close() lingers) holds up
// its own closes only: another user's refused fds are closed at once, and
// sharing goes on.
TEST_F(AclBrokerTest, AUserWhoseFdsNeverCloseDoesNotHoldUpOthersCloses)
{
    ASSERT_EQ(ACL_SUCCESS, Share(Plain, Plain));
    const int before = SettledBrokerFds();
    // More than the broker ever had closer threads before they grew.
    constexpr int kLingering = 5;
    Channel sent, done;
    ASSERT_EQ(0, ::kill(broker_, SIGSTOP));
    pid_t hostile = Spawn([&] {
        // Its own loopback to linger on.
        if (::unshare(CLONE_NEWNET) != 0)
            return 40;
        int ctl = ::socket(AF_INET, SOCK_DGRAM, 0);
        struct ifreq ifr {};
        std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
        ifr.ifr_flags = IFF_UP | IFF_RUNNING;
        if (ctl < 0 || ::ioctl(ctl, SIOCSIFFLAGS, &ifr) != 0)
            return 41;
        int listener = ::socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in addr {};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (listener < 0 || ::bind(listener, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0 ||
            ::listen(listener, kLingering) != 0 || !BecomeOtherUser())
            return 42;
        int s = Connect();
        if (s < 0)
            return 43;
        // Sent while the broker is stopped and closed here at once, so
        // that the broker's copies are the last.
        wire::BrokerRequest req = {};
        req.magic = wire::kBrokerMagic;
        req.version = wire::kWireVersion;
        req.op = wire::kBrokerDeposit;
        req.kind = static_cast<uint8_t>(wire::Kind::Memory);
        for (int i = 0; i < kLingering; i++) {
            int lingering = LingeringSocket(listener);
            if (lingering < 0 || !SendWith(s, &req, sizeof(req), lingering))
                return 44;
            ::close(lingering);
        }
        char byte = 0;
        if (!sent.Send(byte))
            return 45;
        for (int i = 0; i < kLingering; i++) {
            wire::BrokerReply reply = {};
            if (::recv(s, &reply, sizeof(reply), 0) != static_cast<ssize_t>(sizeof(reply)) ||
                reply.status != EBADF)
                return 46;
        }
        if (!sent.Send(byte) || !done.Receive(byte))
            return 47;
        return 0;
    });
    char byte = 0;
    bool sent_all = sent.Receive(byte);
    ASSERT_EQ(0, ::kill(broker_, SIGCONT));
    ASSERT_TRUE(sent_all);
    ASSERT_TRUE(sent.Receive(byte)) << "the broker did not refuse the sockets";
    int memfd = ::memfd_create("not-a-dmabuf", MFD_CLOEXEC);
    ASSERT_GE(memfd, 0);
    int s = Connect();
    ASSERT_GE(s, 0);
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(EBADF, Deposit(s, wire::Kind::Memory, memfd));
    ::close(memfd);
    ::close(s);
    // What the broker holds: the other user's connection and its
    // lingering sockets but the one being closed (out of the fd table
    // once close() began); none of this user's refused fds, nor its
    // connection.
    const int expected = before + 1 + (kLingering - 1);
    int held = -1;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((held = BrokerFds()) != expected && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(expected, held) << "a refused fd waits behind another user's";
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain));
    EXPECT_TRUE(done.Send(byte));
    EXPECT_EQ(0, Wait(hostile));
}

// The request must come from the process that connected: a connection
// handed to another process (which could wait for the connector's PID to
// be reused by a listed process) is refused, while the connector is served.
TEST_F(AclBrokerTest, ARequestSentByAnotherProcessThanTheConnectorIsRefused)
{
    Channel pids, keys, done;
    pid_t exporter = Spawn([&] { return Export(What::Memory, pids, keys, done, false); });
    int32_t self = static_cast<int32_t>(::getpid()); // listed: the connector
    ASSERT_TRUE(pids.Send(self));
    KeyText key;
    ASSERT_TRUE(keys.Receive(key));
    auto parsed = npuipc::ipc::parse_key(key.text);
    ASSERT_TRUE(parsed.ok());
    wire::WireRequest fetch = {};
    fetch.magic = wire::kRequestMagic;
    fetch.version = wire::kWireVersion;
    fetch.kind = static_cast<uint8_t>(wire::Kind::Memory);
    fetch.object = parsed.value().object;
    std::memcpy(fetch.secret, parsed.value().secret.data(), sizeof(fetch.secret));
    for (bool handed_on : {true, false}) {
        int s = Connect();
        ASSERT_GE(s, 0);
        if (handed_on) {
            pid_t sender = Spawn([&] { return SendWith(s, &fetch, sizeof(fetch), -1) ? 0 : 1; });
            EXPECT_EQ(0, Wait(sender));
        } else {
            ASSERT_TRUE(SendWith(s, &fetch, sizeof(fetch), -1));
        }
        wire::WireReply reply = {};
        struct iovec iov = {&reply, sizeof(reply)};
        struct msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        EXPECT_EQ(static_cast<ssize_t>(sizeof(reply)), ::recvmsg(s, &msg, MSG_CMSG_CLOEXEC));
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_type == SCM_RIGHTS) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c), sizeof(fd));
            ::close(fd);
        }
        EXPECT_EQ(handed_on ? EACCES : 0, reply.status) << "handed on: " << handed_on;
        EXPECT_EQ(handed_on, c == nullptr) << "handed on: " << handed_on;
        ::close(s);
    }
    char byte = 0;
    EXPECT_TRUE(done.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
}

// Clients that connect and say nothing, or ask and never read, cost the
// broker a slot each until their deadline: others are served meanwhile.
TEST_F(AclBrokerTest, SilentAndStoppedClientsDoNotStopOthers)
{
    // 100: within one uid's 128 connections, with room for the test's own.
    std::vector<int> silent;
    for (int i = 0; i < 100; i++) {
        int s = Connect();
        ASSERT_GE(s, 0);
        silent.push_back(s);
    }
    pid_t stopped = Spawn([this] {
        int s = Connect();
        wire::WireRequest fetch = {};
        fetch.magic = wire::kRequestMagic;
        fetch.version = wire::kWireVersion;
        fetch.kind = static_cast<uint8_t>(wire::Kind::Memory);
        fetch.object = 1;
        (void)SendWith(s, &fetch, sizeof(fetch), -1);
        ::raise(SIGSTOP); // never reads the reply
        return 0;
    });
    int status = 0;
    ASSERT_EQ(stopped, ::waitpid(stopped, &status, WUNTRACED));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain));
    // Well within the 2 s the silent ones are given: not served after them.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    ::kill(stopped, SIGKILL);
    EXPECT_EQ(128 + SIGKILL, Wait(stopped));
    for (int s : silent)
        ::close(s);
}

// One uid's flood of connections fills its own share of the broker's slots
// (a quarter of half its fd limit: 128 of 1024), never another uid's: the
// flooder's surplus is told the broker is busy, and others are served while
// the flood holds its slots. The broker gives silent connections 60 s here
// (--request-timeout-ms), so that no slot frees however slowly it serves.
TEST_F(AclBrokerTest, OneUsersFloodOfConnectionsLeavesOthersServed)
{
    ASSERT_EQ(0, StopBroker(SIGTERM));
    ASSERT_NO_FATAL_FAILURE(StartBroker({"--request-timeout-ms", "60000"}));
    constexpr int kFlood = 200, kPerUid = 128;
    Channel counts, done;
    pid_t flooder = Spawn([&] {
        if (::setresgid(kOtherUid + 1, kOtherUid + 1, kOtherUid + 1) != 0 ||
            ::setresuid(kOtherUid + 1, kOtherUid + 1, kOtherUid + 1) != 0)
            return 30;
        std::vector<struct pollfd> flood;
        for (int i = 0; i < kFlood; i++)
            flood.push_back({Connect(), POLLIN, 0});
        // The busy replies, as they come (bounded); the accepted
        // connections stay open and silent meanwhile.
        int busy = 0, other = 0;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (busy + other < kFlood - kPerUid && std::chrono::steady_clock::now() < give_up) {
            if (::poll(flood.data(), flood.size(), 100) < 0 && errno != EINTR)
                break;
            for (struct pollfd &p : flood) {
                if (p.fd < 0 || !p.revents)
                    continue;
                wire::WireReply reply = {};
                ssize_t n = ::recv(p.fd, &reply, sizeof(reply), MSG_DONTWAIT);
                if (n < 0 && errno == EAGAIN)
                    continue;
                if (n == static_cast<ssize_t>(sizeof(reply)) && reply.status == EAGAIN &&
                    reply.detail == wire::kDetailBusy)
                    busy++;
                else
                    other++;
                ::close(p.fd);
                p.fd = -1; // poll skips it
            }
        }
        int open = 0;
        for (struct pollfd &p : flood) {
            char byte;
            if (p.fd >= 0 && ::recv(p.fd, &byte, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
                open++;
        }
        char byte;
        if (!counts.Send(busy) || !counts.Send(other) || !counts.Send(open) || !done.Receive(byte))
            return 31;
        return 0;
    });
    int busy = -1, other = -1, open = -1;
    ASSERT_TRUE(counts.Receive(busy));
    ASSERT_TRUE(counts.Receive(other));
    ASSERT_TRUE(counts.Receive(open));
    EXPECT_EQ(kFlood - kPerUid, busy);
    EXPECT_EQ(0, other) << "connections of the flood closed or answered otherwise";
    EXPECT_EQ(kPerUid, open) << "accepted connections still open and unanswered";
    // The flood holds its 128 slots until it is done.
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain));
    char byte = 0;
    EXPECT_TRUE(done.Send(byte));
    EXPECT_EQ(0, Wait(flooder));
}

// A shareable handle's 64-bit name is no secret: without an allowlist it
// serves only the exporter's uid.
TEST_F(AclBrokerTest, AnUnvalidatedShareableHandleIsRefusedToAnotherUser)
{
    Channel keys, done, results;
    pid_t exporter = Spawn([&] {
        void *dev = nullptr;
        aclrtDrvMemHandle physical = nullptr;
        KeyText key;
        if (aclrtSetDevice(0) != ACL_SUCCESS ||
            MakePatternedMemory(What::Shareable, &dev, &physical) != ACL_SUCCESS ||
            aclrtMemExportToShareableHandle(physical, ACL_MEM_HANDLE_TYPE_NONE,
                                            ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                            &key.shareable) != ACL_SUCCESS ||
            !keys.Send(key) || !keys.Send(key))
            return 10;
        char byte;
        (void)done.Receive(byte);
        return 0;
    });
    KeyText key;
    ASSERT_TRUE(keys.Receive(key));
    for (bool other : {true, false}) {
        pid_t importer = Spawn([&] {
            aclError rc = aclrtSetDevice(0);
            if (rc == ACL_SUCCESS && other && !BecomeOtherUser())
                rc = -3;
            if (rc == ACL_SUCCESS)
                rc = ImportShared(What::Shareable, key);
            return results.Send(rc) ? 0 : 20;
        });
        aclError rc = -2;
        EXPECT_TRUE(results.Receive(rc));
        EXPECT_EQ(other ? ACL_ERROR_RT_INVALID_HANDLE : ACL_SUCCESS, rc) << "other user: " << other;
        EXPECT_EQ(0, Wait(importer));
    }
    char byte = 0;
    EXPECT_TRUE(done.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
}

// The broker holds at most --max-fds-per-uid objects for one uid.
TEST_F(AclBrokerTest, AUserPastItsQuotaIsRefusedAndOthersAreNot)
{
    ASSERT_EQ(0, StopBroker(SIGTERM));
    ASSERT_NO_FATAL_FAILURE(StartBroker({"--max-fds-per-uid", "1"}));
    pid_t exporter = Spawn([] {
        void *a = nullptr, *b = nullptr;
        char key[65];
        if (aclrtSetDevice(0) != ACL_SUCCESS ||
            aclrtMalloc(&a, kSize, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS ||
            aclrtMalloc(&b, kSize, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS)
            return 10;
        if (aclrtIpcMemGetExportKey(a, kSize, key, sizeof(key), 0) != ACL_SUCCESS)
            return 11;
        aclError second = aclrtIpcMemGetExportKey(b, kSize, key, sizeof(key), 0);
        return second == ACL_ERROR_RT_OVER_LIMIT ? 0 : 12;
    });
    EXPECT_EQ(0, Wait(exporter)) << "the second export was not refused as OVER_LIMIT";
    // The quota is freed with the exporter.
    EXPECT_EQ(ACL_SUCCESS, Share(Plain, Plain));
}

// A broker that restarts held the fds: its keys are gone (IPC_ERROR, as an
// exporter's that exited), and exports reconnect to the new one.
TEST_F(AclBrokerTest, KeysOfABrokerThatRestartedAreGoneAndExportsReconnect)
{
    Channel keys, restarted, results;
    pid_t exporter = Spawn([&] {
        void *dev = nullptr;
        KeyText key;
        if (aclrtSetDevice(0) != ACL_SUCCESS ||
            MakePatternedMemory(What::Memory, &dev, nullptr) != ACL_SUCCESS)
            return 10;
        if (aclrtIpcMemGetExportKey(dev, kSize, key.text, sizeof(key.text),
                                    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != ACL_SUCCESS ||
            !keys.Send(key))
            return 11;
        char byte;
        if (!restarted.Receive(byte))
            return 12;
        // The old key is gone with the broker; the same memory exports anew.
        KeyText fresh;
        if (aclrtIpcMemGetExportKey(dev, kSize, fresh.text, sizeof(fresh.text),
                                    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != ACL_SUCCESS)
            return 13;
        if (!keys.Send(fresh) || !restarted.Receive(byte))
            return 14;
        return 0;
    });
    KeyText old_key, new_key;
    ASSERT_TRUE(keys.Receive(old_key));
    EXPECT_EQ(128 + SIGKILL, StopBroker(SIGKILL));
    ASSERT_NO_FATAL_FAILURE(StartBroker());
    pid_t importer = Spawn([&] {
        void *dev = nullptr;
        aclError rc = aclrtSetDevice(0);
        if (rc == ACL_SUCCESS)
            rc = aclrtIpcMemImportByKey(&dev, old_key.text, 0);
        return results.Send(rc) ? 0 : 20;
    });
    aclError rc = -2;
    EXPECT_TRUE(results.Receive(rc));
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, rc);
    EXPECT_EQ(0, Wait(importer));
    char byte = 0;
    ASSERT_TRUE(restarted.Send(byte));
    ASSERT_TRUE(keys.Receive(new_key));
    EXPECT_STRNE(old_key.text, new_key.text);
    importer = Spawn([&] {
        KeyText key = new_key;
        aclError result = aclrtSetDevice(0);
        if (result == ACL_SUCCESS)
            result = ImportShared(What::Memory, key);
        return results.Send(result) ? 0 : 21;
    });
    EXPECT_TRUE(results.Receive(rc));
    EXPECT_EQ(ACL_SUCCESS, rc);
    EXPECT_EQ(0, Wait(importer));
    EXPECT_TRUE(restarted.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
}

TEST_F(AclBrokerTest, AnUnlistedProcessIsRefused)
{
    Channel pids, keys, done, results;
    pid_t exporter = Spawn([&] { return Export(What::Memory, pids, keys, done, false); });
    // Lists a PID that is not the importer's: its own.
    int32_t other = static_cast<int32_t>(::getpid());
    ASSERT_TRUE(pids.Send(other));
    pid_t importer = Spawn([&] {
        Channel ignored;
        return Import(What::Memory, ignored, keys, results);
    });
    aclError rc = -2;
    EXPECT_TRUE(results.Receive(rc));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, rc);
    EXPECT_EQ(0, Wait(importer));
    char byte = 0;
    EXPECT_TRUE(done.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
}

// The broker drops an exporter's keys when it exits; an import then says
// that the exporter is gone, as it does between two plain processes.
TEST_F(AclBrokerTest, KeysDieWithTheirExporter)
{
    Channel pids, keys, done, results;
    pid_t exporter = Spawn([&] { return Export(What::Memory, pids, keys, done, false); });
    int32_t pid = static_cast<int32_t>(::getpid());
    ASSERT_TRUE(pids.Send(pid));
    KeyText key;
    ASSERT_TRUE(keys.Receive(key));
    char byte = 0;
    ASSERT_TRUE(done.Send(byte));
    ASSERT_EQ(0, Wait(exporter));
    pid_t importer = Spawn([&] {
        Channel mine;
        if (!mine.Send(key))
            return 30;
        Channel ignored;
        return Import(What::Memory, ignored, mine, results);
    });
    aclError rc = -2;
    EXPECT_TRUE(results.Receive(rc));
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, rc);
    EXPECT_EQ(0, Wait(importer));
}

// aclrtIpcMemClose in the exporter revokes its key at the broker: the next
// first import is INVALID_HANDLE, as between two plain processes.
TEST_F(AclBrokerTest, AKeyClosedByItsExporterIsInvalidHandle)
{
    Channel keys, go, results;
    pid_t exporter = Spawn([&] {
        void *dev = nullptr;
        KeyText key;
        if (aclrtSetDevice(0) != ACL_SUCCESS ||
            MakePatternedMemory(What::Memory, &dev, nullptr) != ACL_SUCCESS ||
            aclrtIpcMemGetExportKey(dev, kSize, key.text, sizeof(key.text),
                                    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != ACL_SUCCESS ||
            !keys.Send(key))
            return 10;
        char byte;
        if (!go.Receive(byte) || aclrtIpcMemClose(key.text) != ACL_SUCCESS || !keys.Send(key))
            return 11;
        return go.Receive(byte) ? 0 : 12;
    });
    auto import = [&](const KeyText &key) {
        pid_t importer = Spawn([&] {
            aclError rc = aclrtSetDevice(0);
            if (rc == ACL_SUCCESS)
                rc = ImportShared(What::Memory, key);
            return results.Send(rc) ? 0 : 20;
        });
        aclError rc = -2;
        EXPECT_TRUE(results.Receive(rc));
        EXPECT_EQ(0, Wait(importer));
        return rc;
    };
    KeyText key;
    ASSERT_TRUE(keys.Receive(key));
    EXPECT_EQ(ACL_SUCCESS, import(key));
    char byte = 0;
    ASSERT_TRUE(go.Send(byte));
    ASSERT_TRUE(keys.Receive(key)); // closed
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, import(key));
    EXPECT_TRUE(go.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
}

// A broker that stops answering (SIGSTOP, a debugger) holds nobody up for
// long: an import and an export each give ACL_ERROR_RT_TIMEOUT after the
// 5 s reply limit. The exporter's connection is then dropped, and its
// keys with it; once the broker runs again, exports reconnect.
TEST_F(AclBrokerTest, AFrozenBrokerGivesTimeoutsAndThenServesAgain)
{
    SKIP_WHERE_RUN_ONCE_ELSEWHERE();
    // Once it has served: whatever it opens for good is open by then.
    ASSERT_EQ(ACL_SUCCESS, Share(Plain, Plain));
    const int fds_before = SettledBrokerFds();
    Channel keys, go, results;
    pid_t exporter = Spawn([&] {
        void *dev = nullptr;
        KeyText first, second, third;
        if (aclrtSetDevice(0) != ACL_SUCCESS ||
            MakePatternedMemory(What::Memory, &dev, nullptr) != ACL_SUCCESS ||
            aclrtIpcMemGetExportKey(dev, kSize, first.text, sizeof(first.text),
                                    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != ACL_SUCCESS ||
            !keys.Send(first))
            return 10;
        char byte;
        if (!go.Receive(byte)) // the broker is stopped
            return 11;
        void *other = nullptr;
        if (aclrtMalloc(&other, kSize, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS)
            return 12;
        aclError rc = aclrtIpcMemGetExportKey(other, kSize, second.text, sizeof(second.text),
                                              ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION);
        if (!results.Send(rc) || !go.Receive(byte)) // the broker runs again
            return 13;
        if (aclrtIpcMemGetExportKey(dev, kSize, third.text, sizeof(third.text),
                                    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != ACL_SUCCESS ||
            !keys.Send(third))
            return 14;
        return go.Receive(byte) ? 0 : 15;
    });
    // An import's result and how long it took.
    struct Outcome {
        aclError rc = -2;
        int64_t ms = -1;
    };
    Channel outcomes;
    auto import = [&](const KeyText &key) {
        pid_t importer = Spawn([&] {
            Outcome out;
            out.rc = aclrtSetDevice(0);
            auto start = std::chrono::steady_clock::now();
            if (out.rc == ACL_SUCCESS)
                out.rc = ImportShared(What::Memory, key);
            out.ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
            return outcomes.Send(out) ? 0 : 20;
        });
        Outcome out;
        EXPECT_TRUE(outcomes.Receive(out));
        EXPECT_EQ(0, Wait(importer));
        return out;
    };
    KeyText first;
    ASSERT_TRUE(keys.Receive(first));
    ASSERT_EQ(0, ::kill(broker_, SIGSTOP));
    Outcome frozen = import(first);
    EXPECT_EQ(ACL_ERROR_RT_TIMEOUT, frozen.rc);
    EXPECT_LT(frozen.ms, 15000) << "the import waited for the stopped broker";
    char byte = 0;
    ASSERT_TRUE(go.Send(byte));
    aclError rc = -2;
    EXPECT_TRUE(results.Receive(rc));
    EXPECT_EQ(ACL_ERROR_RT_TIMEOUT, rc) << "an export while the broker is stopped";
    ASSERT_EQ(0, ::kill(broker_, SIGCONT));
    ASSERT_TRUE(go.Send(byte));
    KeyText third;
    ASSERT_TRUE(keys.Receive(third));
    EXPECT_EQ(ACL_SUCCESS, import(third).rc);
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, import(first).rc) << "the dropped connection's key";
    EXPECT_TRUE(go.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
    // Everything the exporter deposited is released.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (BrokerFds() != fds_before && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(fds_before, BrokerFds());
}

// A listed importer's PID, reused by another process after it exited, is
// refused: the broker pins the listed process by its start time.
TEST_F(AclBrokerTest, AProcessReusingAListedPidIsRefused)
{
    Channel pids, keys, done, results;
    pid_t exporter = Spawn([&] { return Export(What::Memory, pids, keys, done, false); });
    Channel listed_keys;
    pid_t listed = Spawn([&] { return Import(What::Memory, pids, listed_keys, results); });
    KeyText key;
    ASSERT_TRUE(keys.Receive(key));
    ASSERT_TRUE(listed_keys.Send(key));
    aclError rc = -2;
    EXPECT_TRUE(results.Receive(rc));
    EXPECT_EQ(ACL_SUCCESS, rc) << "the listed process itself is admitted";
    ASSERT_EQ(0, Wait(listed));
    // Start times count clock ticks (10 ms): let a few pass.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Channel go;
    pid_t reborn = ForkAtPid(listed, [&] {
        return Spawn([&] {
            char byte;
            if (!go.Receive(byte))
                return 99;
            aclError result = aclrtSetDevice(0);
            if (result == ACL_SUCCESS)
                result = ImportShared(What::Memory, key);
            return results.Send(result) ? 0 : 20;
        });
    });
    char byte = 0;
    if (reborn > 0) {
        ASSERT_TRUE(go.Send(byte));
        EXPECT_TRUE(results.Receive(rc));
        EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, rc);
        EXPECT_EQ(0, Wait(reborn));
    }
    EXPECT_TRUE(done.Send(byte));
    EXPECT_EQ(0, Wait(exporter));
    if (reborn == -1)
        GTEST_SKIP() << "cannot choose PIDs (ns_last_pid) here";
}

} // namespace
