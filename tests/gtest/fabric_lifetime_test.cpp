// SPDX-License-Identifier: MIT
// Lifetime of fabric memory across servers (Documentation/fabric.md,
// Lifetime across servers): run on both servers of a `tools/vm-pair
// --bind-window` at once, without --fabric-daemon: each test starts this
// server's daemon (NPUIPC_FABRICD, the npuipc-fabricd to run) and stops,
// restarts or loses it, cuts the link, or, last, powers its server off.
// Server 0 owns the memory and server 1 imports it, except in the first
// test, where each does both. The tests run in the same order on both
// servers and meet over their own connection (pair_peer.h).
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fabric_devices.h"
#include "npuipc/fabric.h"
#include "pair_peer.h"

namespace {

using npuipc::UniqueFd;
using npuipc::fabric::Handle;
using npuipc::fabric::Session;
using npuipc_fabric_test::kSize;
using npuipc_pair::me;
using npuipc_pair::meet;
using npuipc_pair::peer;
using npuipc_pair::swap_with_peer;
using std::chrono::seconds;

// This server's fabric daemon, as tools/vm-pair-guest runs it.
class Daemon {
public:
    ~Daemon() { kill_now(); }

    ::testing::AssertionResult start(const char *lease_term = nullptr)
    {
        const char *path = std::getenv("NPUIPC_FABRICD");
        const char *peer_address = std::getenv("NPUIPC_PEER");
        if (!path || !peer_address)
            return ::testing::AssertionFailure() << "NPUIPC_FABRICD or NPUIPC_PEER unset";
        const std::string socket = npuipc::fabric::daemon_socket_path();
        ::unlink(socket.c_str());
        const std::string listen = "10.77.0." + std::to_string(me() + 1) + ":7790";
        const std::string peers = std::to_string(peer()) + "=" + peer_address + ":7790";
        pid_ = ::fork();
        if (pid_ < 0)
            return ::testing::AssertionFailure() << "fork";
        if (pid_ == 0) {
            if (lease_term)
                ::execl(path, path, "--listen", listen.c_str(), "--peer", peers.c_str(),
                        "--lease-term", lease_term, nullptr);
            else
                ::execl(path, path, "--listen", listen.c_str(), "--peer", peers.c_str(), nullptr);
            ::_exit(127);
        }
        for (int i = 0; i < 100; i++) {
            if (Session::open().ok())
                return ::testing::AssertionSuccess();
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                pid_ = -1;
                return ::testing::AssertionFailure() << "the daemon exited";
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return ::testing::AssertionFailure() << "the daemon did not start in 10 s";
    }

    // As a crash would: no word to anyone.
    void kill_now()
    {
        if (pid_ <= 0)
            return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
};

// This server's end of the link (as tools/vm-pair-guest finds it), up or down.
bool set_link(bool up)
{
    char mac[32];
    std::snprintf(mac, sizeof(mac), "52:54:00:4e:50:0%u", me() + 1);
    std::string cmd = "for d in /sys/class/net/*; do [ \"$(cat $d/address)\" = " + std::string(mac) +
                      " ] && exec ip link set dev \"${d##*/}\" " + (up ? "up" : "down") +
                      "; done; exit 1";
    return std::system(cmd.c_str()) == 0;
}

// How a read of @p ends in a child process: 0 when it read @want, the
// signal that killed it (SIGBUS), or -1 when it read something else.
int child_read(const volatile uint8_t *p, uint8_t want)
{
    pid_t pid = ::fork();
    if (pid == 0)
        ::_exit(*p == want ? 0 : 1);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid)
        return -2;
    if (WIFSIGNALED(status))
        return WTERMSIG(status);
    return WEXITSTATUS(status) ? -1 : 0;
}

// Whether reading @p raises SIGBUS within @limit (never @want's bytes on the way).
bool sigbus_within(const volatile uint8_t *p, uint8_t want, seconds limit)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    do {
        int r = child_read(p, want);
        if (r == SIGBUS)
            return true;
        if (r != 0)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < end);
    return false;
}

class FabricLifetime : public ::testing::Test, protected npuipc_fabric_test::FabricDevices {
protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(open_devices());
        ASSERT_TRUE(daemon.start());
        open_session();
        meet(); // both daemons up
    }

    void TearDown() override
    {
        npuipc_pair::leave_if_failed();
        for (void *m : maps)
            ::munmap(m, kSize);
    }

    void open_session()
    {
        auto s = Session::open();
        ASSERT_TRUE(s.ok()) << s.error();
        session.emplace(std::move(s.value()));
    }

    const volatile uint8_t *map(int dmabuf)
    {
        void *p = ::mmap(nullptr, kSize, PROT_READ, MAP_SHARED, dmabuf, 0);
        EXPECT_NE(MAP_FAILED, p);
        if (p == MAP_FAILED)
            return nullptr;
        maps.push_back(p);
        return static_cast<const volatile uint8_t *>(p);
    }

    // Fabric memory filled with @value through the NPU, and its handle.
    UniqueFd filled_export(uint8_t value, Handle *handle)
    {
        UniqueFd mem = fabric_memory();
        uint32_t bo = on_npu(mem.get());
        EXPECT_EQ(0, fill(bo, value));
        drmCloseBufferHandle(npu.get(), bo);
        auto h = session->export_memory(mem.get(), false);
        EXPECT_TRUE(h.ok()) << h.error();
        if (h.ok())
            *handle = h.value();
        return mem;
    }

    // Memory allocated at @offset within @limit: the memory, or an invalid
    // fd. The lowest free range is allocated first, so what lands below
    // @offset (a range an earlier test's hold kept) is kept meanwhile.
    UniqueFd allocated_at_within(uint64_t offset, seconds limit)
    {
        std::vector<UniqueFd> below;
        const auto end = std::chrono::steady_clock::now() + limit;
        for (;;) {
            UniqueFd mem = fabric_memory();
            const uint64_t at = fabric_offset(mem.get());
            if (at == offset)
                return mem;
            if (!mem.valid() || below.size() > 16)
                return UniqueFd();
            if (at < offset) {
                below.push_back(std::move(mem));
                continue;
            }
            mem.reset();
            if (std::chrono::steady_clock::now() >= end)
                return UniqueFd();
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }

    // The importer's side: the handle server 0 sends, imported, seen by the
    // NPU (npu_bo) and mapped (p), which reads @value.
    struct Import {
        Handle handle;
        UniqueFd mem;
        uint32_t npu_bo = 0;
        const volatile uint8_t *p = nullptr;
    };
    void import_mapped(uint8_t value, Import *in)
    {
        in->handle = swap_with_peer(Handle{});
        auto imported = session->import_memory(in->handle);
        ASSERT_TRUE(imported.ok()) << imported.error();
        in->mem = std::move(imported.value());
        in->npu_bo = on_npu(in->mem.get());
        in->p = map(in->mem.get());
        ASSERT_NE(nullptr, in->p);
        // Mapped here first: a child inherits the pages mapped, so that
        // only the zap of a revocation, not the refusal of new faults,
        // keeps the later children out.
        ASSERT_EQ(value, in->p[0]);
        EXPECT_EQ(0, child_read(in->p, value));
        meet(); // imported
    }

    // The owner's side: memory filled with @value sent to server 1, which
    // imported it, then freed here (export released, memory closed):
    // where it lay.
    uint64_t export_then_free(uint8_t value)
    {
        Handle handle;
        UniqueFd mem = filled_export(value, &handle);
        const uint64_t offset = fabric_offset(mem.get());
        swap_with_peer(handle);
        meet(); // imported
        EXPECT_TRUE(session->release(handle).ok());
        return offset;
    }

    // The import's copy on the NPU fails as revoked memory does.
    void expect_copy_revoked(const Import &in)
    {
        uint32_t copy = 0;
        EXPECT_EQ(-ENODEV, copy_out(in.npu_bo, &copy));
    }

    // This server's daemon started again, with leases of @lease_term
    // seconds, and both servers' up.
    void restart_daemon(const char *lease_term)
    {
        session.reset();
        daemon.kill_now();
        ASSERT_TRUE(daemon.start(lease_term));
        ASSERT_NO_FATAL_FAILURE(open_session());
        meet();
    }

    Daemon daemon;
    std::optional<Session> session;
    std::vector<void *> maps;
};

// The owner frees memory another server imported: its range is not
// allocated again until the importer let go, and the importer reads the
// owner's bytes to the end.
TEST_F(FabricLifetime, AnOwnersFreedMemoryStaysTheImportersUntilItLetsGo)
{
    Handle mine;
    UniqueFd mem = filled_export(0xa0 + me(), &mine);
    const uint64_t first = fabric_offset(mem.get());
    Handle theirs = swap_with_peer(mine);
    auto imported = session->import_memory(theirs);
    ASSERT_TRUE(imported.ok()) << imported.error();
    UniqueFd remote_mem = std::move(imported.value());
    uint32_t remote = on_npu(remote_mem.get());
    EXPECT_TRUE(holds(remote, 0xa0 + peer()));
    meet();

    ASSERT_TRUE(session->release(mine).ok());
    mem.reset();
    UniqueFd next = fabric_memory();
    EXPECT_FALSE(allocated_at_within(first, seconds(0)).valid()) << "allocated again under an importer";
    uint32_t next_bo = on_npu(next.get());
    ASSERT_EQ(0, fill(next_bo, 0x5a));
    meet();
    EXPECT_TRUE(holds(remote, 0xa0 + peer())) << "the importer sees another allocation's bytes";
    meet();

    drmCloseBufferHandle(npu.get(), remote);
    remote_mem.reset();
    meet();
    // The owner's kernel holds it up to 6 s past the last renewal.
    EXPECT_TRUE(allocated_at_within(first, seconds(10)).valid())
        << "the range was not freed after the importer let go";
    meet();
}

// A daemon that restarts forgot its grants: the importer's next renewal
// says so, and the import is revoked at once; the old handle is unknown,
// and a new export of the same memory imports again. The daemons take
// 30 s leases here (the import outlives the default 3 s term without a
// renewal while the owner's daemon is down), so that only that answer,
// never the term, revokes within the 5 s the importer waits.
TEST_F(FabricLifetime, AnImportIsRevokedWhenItsOwnersDaemonRestarts)
{
    ASSERT_NO_FATAL_FAILURE(restart_daemon("30"));
    if (me() == 0) {
        Handle handle;
        UniqueFd mem = filled_export(0xb0, &handle);
        swap_with_peer(handle);
        meet(); // imported
        session.reset();
        daemon.kill_now();
        meet(); // the owner's daemon down
        meet(); // the import outlived the default term
        ASSERT_TRUE(daemon.start("30"));
        ASSERT_NO_FATAL_FAILURE(open_session());
        meet(); // restarted
        meet(); // the importer saw its import go
        auto again = session->export_memory(mem.get(), false);
        ASSERT_TRUE(again.ok()) << again.error();
        swap_with_peer(again.value());
        meet();
        return;
    }
    Import in;
    ASSERT_NO_FATAL_FAILURE(import_mapped(0xb0, &in));
    meet(); // the owner's daemon down: no renewal from here on
    std::this_thread::sleep_for(seconds(4));
    EXPECT_EQ(0, child_read(in.p, 0xb0)) << "a 30 s lease ended within the default 3 s term";
    meet(); // the import outlived the default term
    meet(); // the owner's daemon restarted
    EXPECT_TRUE(sigbus_within(in.p, 0xb0, seconds(5)));
    expect_copy_revoked(in);
    EXPECT_EQ(ESRCH, session->import_memory(in.handle).error());
    meet();
    Handle again = swap_with_peer(Handle{});
    auto reimported = session->import_memory(again);
    ASSERT_TRUE(reimported.ok()) << reimported.error();
    EXPECT_TRUE(holds(on_npu(reimported.value().get()), 0xb0));
    meet();
}

// The importer's daemon dies: its imports go with it, at once; the owner
// keeps the range until the grant runs out, then it is free.
TEST_F(FabricLifetime, AnImportIsRevokedWhenItsDaemonDiesAndTheOwnerKeepsTheRangeUntilTheGrantRunsOut)
{
    if (me() == 0) {
        const uint64_t first = export_then_free(0xc0);
        meet(); // the importer's daemon died
        EXPECT_FALSE(allocated_at_within(first, seconds(0)).valid()) << "the grant did not keep the range";
        EXPECT_TRUE(allocated_at_within(first, seconds(15)).valid())
            << "the range was not freed when the grant ran out";
        meet();
        return;
    }
    Import in;
    ASSERT_NO_FATAL_FAILURE(import_mapped(0xc0, &in));
    session.reset();
    daemon.kill_now();
    EXPECT_EQ(SIGBUS, child_read(in.p, 0xc0));
    expect_copy_revoked(in);
    meet();
    meet();
}

// The link drops: the importer, renewing in vain, revokes before the owner
// lets the range go; the owner's next allocation there is never seen.
TEST_F(FabricLifetime, ALinkCutRevokesTheImportBeforeTheOwnerReusesTheRange)
{
    if (me() == 0) {
        const uint64_t first = export_then_free(0xd0);
        meet(); // the link is back
        UniqueFd reused = allocated_at_within(first, seconds(15));
        ASSERT_TRUE(reused.valid()) << "the range was not freed when the grant ran out";
        uint32_t bo = on_npu(reused.get());
        ASSERT_EQ(0, fill(bo, 0x77));
        meet(); // reused
        meet();
        return;
    }
    Import in;
    ASSERT_NO_FATAL_FAILURE(import_mapped(0xd0, &in));
    ASSERT_TRUE(set_link(false));
    EXPECT_TRUE(sigbus_within(in.p, 0xd0, seconds(8)));
    ASSERT_TRUE(set_link(true));
    meet();
    meet(); // the owner allocated the range again
    EXPECT_EQ(SIGBUS, child_read(in.p, 0x77));
    expect_copy_revoked(in);
    meet();
}

// Last: the owner's server dies. The importer revokes when its renewals
// go unanswered, and asking the dead server ends in an error, not a hang.
TEST_F(FabricLifetime, AnImportIsRevokedWhenItsOwnersServerDies)
{
    if (me() == 0) {
        Handle handle;
        UniqueFd mem = filled_export(0xe0, &handle);
        swap_with_peer(handle);
        meet(); // imported
        std::printf("server 0 powers off now\n");
        std::fflush(stdout);
        ::fsync(STDOUT_FILENO);
        ::sync();
        std::ofstream("/proc/sysrq-trigger") << 'o';
        std::this_thread::sleep_for(seconds(60));
        FAIL() << "still running a minute after powering off";
    }
    Import in;
    ASSERT_NO_FATAL_FAILURE(import_mapped(0xe0, &in));
    EXPECT_TRUE(sigbus_within(in.p, 0xe0, seconds(8)));
    expect_copy_revoked(in);
    const auto asked = std::chrono::steady_clock::now();
    const int err = session->import_memory(in.handle).error();
    EXPECT_TRUE(err == ETIMEDOUT || err == EHOSTUNREACH) << err;
    EXPECT_LT(std::chrono::steady_clock::now() - asked, seconds(15));
}

} // namespace

NPUIPC_PAIR_TEST_MAIN(7792)
