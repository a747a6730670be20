// SPDX-License-Identifier: MIT
// Fabric handles through the fabric daemons (npuipc/fabric.h,
// npuipc-fabricd), across two servers: run on both servers of a
// `tools/vm-pair --bind-window` at once, each with its daemon started by
// tools/vm-pair --fabric-daemon (make check step 10). The tests run in
// the same order on both; each meets the other server over a connection
// of their own (server 0 listens, server 1 connects) at the points where
// one needs what the other did.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <xf86drm.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "drm/npuipc_drm.h"
#include "fabric/wire.h"
#include "fabric_devices.h"
#include "npuipc/fabric.h"
#include "npuipc/unique_fd.h"
#include "pair_peer.h"

namespace {

using npuipc::UniqueFd;
using npuipc::fabric::AllowedProcess;
using npuipc::fabric::Handle;
using npuipc::fabric::Session;
using npuipc_pair::me;
using npuipc_pair::meet;
using npuipc_pair::peer;

using npuipc_fabric_test::ioctl_errno;
using npuipc_fabric_test::kSize;

// Each test's devices (the window, NPU 0, a stream on it) and a session.
class FabricDaemon : public ::testing::Test, protected npuipc_fabric_test::FabricDevices {
protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(open_devices());
        auto s = Session::open();
        ASSERT_TRUE(s.ok()) << s.error();
        session.emplace(std::move(s.value()));
    }

    void TearDown() override { npuipc_pair::leave_if_failed(); }

    std::optional<Session> session;
};

TEST_F(FabricDaemon, ExportedMemoryIsReadAndWrittenByTheOtherServersNpu)
{
    UniqueFd mem = fabric_memory();
    uint32_t own = on_npu(mem.get());
    ASSERT_EQ(0, fill(own, 0xc0 + me()));
    auto handle = session->export_memory(mem.get(), false);
    ASSERT_TRUE(handle.ok()) << handle.error();
    EXPECT_EQ(me(), handle.value().owner_sdid());
    EXPECT_EQ(kSize, handle.value().size());

    Handle theirs = npuipc_pair::swap_with_peer(handle.value());
    auto imported = session->import_memory(theirs);
    ASSERT_TRUE(imported.ok()) << imported.error();
    uint32_t remote = on_npu(imported.value().get());
    EXPECT_TRUE(holds(remote, 0xc0 + peer()));
    ASSERT_EQ(0, fill(remote, 0xd0 + me()));
    meet();
    EXPECT_TRUE(holds(own, 0xd0 + peer()));
    meet();
}

TEST_F(FabricDaemon, AnExportThatValidatesPidsAdmitsOnlyTheProcessesItLists)
{
    UniqueFd mem = fabric_memory();
    auto strict = session->export_memory(mem.get(), true);
    auto bare = session->export_memory(mem.get(), true);
    ASSERT_TRUE(strict.ok() && bare.ok());
    struct Told {
        Handle strict, bare;
        int32_t pid;
    } mine{strict.value(), bare.value(), ::getpid()};
    Told theirs = npuipc_pair::swap_with_peer(mine);

    // Not listed; then listed with another server's sdid, or another PID.
    EXPECT_EQ(EACCES, session->import_memory(theirs.strict).error());
    meet();
    ASSERT_TRUE(session->allow(strict.value(), {{me(), theirs.pid}, {peer(), theirs.pid + 1}}).ok());
    meet();
    EXPECT_EQ(EACCES, session->import_memory(theirs.strict).error());
    meet();
    ASSERT_TRUE(session->allow(strict.value(), {{peer(), theirs.pid}}).ok());
    ASSERT_TRUE(session->allow(bare.value(), {{npuipc::fabric::kAnyServer, theirs.pid}}).ok());
    meet();
    auto a = session->import_memory(theirs.strict);
    auto b = session->import_memory(theirs.bare);
    EXPECT_TRUE(a.ok()) << a.error();
    EXPECT_TRUE(b.ok()) << b.error();
    meet();
}

TEST_F(FabricDaemon, AWrongSecretIsRefusedAsAnUnknownExportIs)
{
    UniqueFd mem = fabric_memory();
    auto handle = session->export_memory(mem.get(), false);
    ASSERT_TRUE(handle.ok());
    Handle theirs = npuipc_pair::swap_with_peer(handle.value());
    Handle wrong_secret = theirs, unknown = theirs;
    wrong_secret.data[40] ^= 1;
    unknown.data[16] ^= 0x80; // the export id
    EXPECT_EQ(ESRCH, session->import_memory(wrong_secret).error());
    EXPECT_EQ(ESRCH, session->import_memory(unknown).error());
    EXPECT_TRUE(session->import_memory(theirs).ok());
    meet();
}

TEST_F(FabricDaemon, ReleasedExportsAndThoseOfAClosedSessionAreGoneForImporters)
{
    UniqueFd mem = fabric_memory();
    ASSERT_EQ(0, fill(on_npu(mem.get()), 0xf0 + me()));
    auto released = session->export_memory(mem.get(), false);
    auto other = Session::open();
    ASSERT_TRUE(other.ok());
    auto closed = other.value().export_memory(mem.get(), false);
    ASSERT_TRUE(released.ok() && closed.ok());
    struct Pair {
        Handle released, closed;
    } theirs = npuipc_pair::swap_with_peer(Pair{released.value(), closed.value()});

    // Imports made before stay usable.
    auto before = session->import_memory(theirs.released);
    ASSERT_TRUE(before.ok());
    meet();
    EXPECT_TRUE(session->release(released.value()).ok());
    EXPECT_EQ(ESRCH, session->release(released.value()).error());
    { Session gone = std::move(other.value()); }
    // The daemon drops a closed session's exports when it sees it close:
    // wait for that here (an import of it on this server), bounded.
    int err = 0;
    for (int i = 0; i < 500 && err != ESRCH; i++) {
        err = session->import_memory(closed.value()).error();
        if (err != ESRCH)
            ::usleep(10000);
    }
    EXPECT_EQ(ESRCH, err);
    meet();
    EXPECT_EQ(ESRCH, session->import_memory(theirs.released).error());
    EXPECT_EQ(ESRCH, session->import_memory(theirs.closed).error());
    EXPECT_TRUE(holds(on_npu(before.value().get()), 0xf0 + peer()));
    meet();
}

TEST_F(FabricDaemon, AnotherSessionCannotAllowOrReleaseAnExport)
{
    UniqueFd mem = fabric_memory();
    auto handle = session->export_memory(mem.get(), true);
    ASSERT_TRUE(handle.ok());
    auto other = Session::open();
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(ESRCH, other.value().allow(handle.value(), {{me(), ::getpid()}}).error());
    EXPECT_EQ(ESRCH, other.value().release(handle.value()).error());
    EXPECT_EQ(EACCES, other.value().import_memory(handle.value()).error());
}

TEST_F(FabricDaemon, AnImportOnTheOwnersServerIsTheExportersMemory)
{
    UniqueFd mem = fabric_memory();
    uint32_t own = on_npu(mem.get());
    ASSERT_EQ(0, fill(own, 0xe0 + me()));
    auto open = session->export_memory(mem.get(), false);
    auto strict = session->export_memory(mem.get(), true);
    ASSERT_TRUE(open.ok() && strict.ok());
    auto imported = session->import_memory(open.value());
    ASSERT_TRUE(imported.ok()) << imported.error();
    EXPECT_TRUE(holds(on_npu(imported.value().get()), 0xe0 + me()));
    EXPECT_EQ(EACCES, session->import_memory(strict.value()).error());
    ASSERT_TRUE(session->allow(strict.value(), {{me(), ::getpid()}}).ok());
    EXPECT_TRUE(session->import_memory(strict.value()).ok());
}

TEST_F(FabricDaemon, MalformedHandlesUnknownServersAndForeignMemoryAreRefused)
{
    UniqueFd mem = fabric_memory();
    auto handle = session->export_memory(mem.get(), false);
    ASSERT_TRUE(handle.ok());

    Handle bad_magic = handle.value(), bad_tail = handle.value(), elsewhere = handle.value();
    bad_magic.data[0] ^= 1;
    bad_tail.data[127] = 1;
    const uint32_t nowhere = 9;
    std::memcpy(elsewhere.data.data() + 12, &nowhere, sizeof(nowhere));
    EXPECT_EQ(EINVAL, session->import_memory(bad_magic).error());
    EXPECT_EQ(EINVAL, session->import_memory(bad_tail).error());
    EXPECT_EQ(EINVAL, session->allow(bad_magic, {{me(), 1}}).error());
    EXPECT_EQ(EINVAL, session->allow(handle.value(), {}).error());
    EXPECT_EQ(EHOSTUNREACH, session->import_memory(elsewhere).error());

    // Only fabric memory of this server's part leaves as a fabric handle.
    drm_npuipc_bo_create create{};
    create.size = kSize;
    ASSERT_EQ(0, ioctl_errno(npu.get(), DRM_IOCTL_NPUIPC_BO_CREATE, &create));
    int npu_mem = -1;
    ASSERT_EQ(0, drmPrimeHandleToFD(npu.get(), create.handle, DRM_CLOEXEC | DRM_RDWR, &npu_mem));
    UniqueFd npu_fd(npu_mem);
    EXPECT_EQ(EINVAL, session->export_memory(npu_fd.get(), false).error());
    EXPECT_EQ(EBADF, session->export_memory(-1, false).error());

    Handle theirs = npuipc_pair::swap_with_peer(handle.value());
    auto imported = session->import_memory(theirs);
    ASSERT_TRUE(imported.ok());
    EXPECT_EQ(EINVAL, session->export_memory(imported.value().get(), false).error());
    meet();
}

// A client that breaks the protocol gets an error, its fds go, and the
// daemon serves the next one.
TEST_F(FabricDaemon, RequestsThatBreakTheProtocolAreRefusedAndTheDaemonStaysUp)
{
    namespace wire = npuipc::fabric::wire;
    std::string path = npuipc::fabric::daemon_socket_path();
    UniqueFd sock(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(0, ::connect(sock.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)));
    UniqueFd mem = fabric_memory();

    // Sends `len` bytes of `req` with `nfds` copies of the memory's fd;
    // the reply's error.
    auto ask = [&](const wire::Request &req, size_t len, int nfds) {
        int fds[2] = {mem.get(), mem.get()};
        union {
            struct cmsghdr align;
            char buf[CMSG_SPACE(2 * sizeof(int))];
        } control{};
        iovec iov = {const_cast<wire::Request *>(&req), len};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        if (nfds) {
            msg.msg_control = control.buf;
            msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
            cmsghdr *c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
            std::memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
        }
        EXPECT_EQ(static_cast<ssize_t>(len), ::sendmsg(sock.get(), &msg, MSG_NOSIGNAL));
        wire::Reply reply{};
        EXPECT_EQ(static_cast<ssize_t>(sizeof(reply)), ::recv(sock.get(), &reply, sizeof(reply), 0));
        EXPECT_EQ(wire::kReplyMagic, reply.magic);
        return reply.error;
    };
    wire::Request req{};
    req.magic = wire::kRequestMagic;
    req.op = static_cast<uint32_t>(wire::Op::Export);
    EXPECT_EQ(EPROTO, ask(req, sizeof(req) - 1, 1));
    EXPECT_EQ(EPROTO, ask(req, sizeof(req), 2));
    req.magic ^= 1;
    EXPECT_EQ(EPROTO, ask(req, sizeof(req), 1));
    req.magic ^= 1;
    req.flags = 2;
    EXPECT_EQ(EINVAL, ask(req, sizeof(req), 1));
    req.flags = 0;
    req.op = 99;
    EXPECT_EQ(EINVAL, ask(req, sizeof(req), 0));
    // An import with an fd attached, of a well-formed handle.
    auto made = session->export_memory(mem.get(), false);
    ASSERT_TRUE(made.ok());
    req.op = static_cast<uint32_t>(wire::Op::Import);
    std::memcpy(req.handle, made.value().data.data(), npuipc::fabric::kHandleBytes);
    EXPECT_EQ(EINVAL, ask(req, sizeof(req), 1));
    // The daemon still serves, this connection and others.
    EXPECT_EQ(0, ask(req, sizeof(req), 0));
    EXPECT_TRUE(session->import_memory(made.value()).ok());
}

TEST(FabricDaemonAbsent, ASessionWithoutADaemonIsRefused)
{
    ::setenv("NPUIPC_FABRIC_SOCKET", "/run/npuipc/no-such-fabric.sock", 1);
    EXPECT_EQ(ECONNREFUSED, Session::open().error());
    ::unsetenv("NPUIPC_FABRIC_SOCKET");
}

} // namespace

NPUIPC_PAIR_TEST_MAIN(7791)
