// SPDX-License-Identifier: MIT
// IPC by key between separate processes: the seed's memory, event and
// notify scenarios, access control, lifetimes and the failure codes of
// Documentation/ipc.md. The other process is acl_ipc_peer, started with
// fork+exec; the two exchange keys and results through files. Every test
// must leave this process with the open fds it started with.
#include "acl_test_util.h"
#include "run_once.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "drm/npuipc_drm.h"

using namespace acltest;

namespace {

// Keys served by the exporting process itself, whether or not a broker
// runs here: this suite specifies that path, its timeouts and refusals;
// acl_broker_gtest specifies the broker's.
class PeerToPeerEnvironment : public ::testing::Environment {
public:
    void SetUp() override { ASSERT_EQ(0, ::setenv("NPUIPC_BROKER_SOCKET", "", 1)); }
};

::testing::Environment *const g_peer_to_peer =
    ::testing::AddGlobalTestEnvironment(new PeerToPeerEnvironment);

class AclIpcTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        char tmpl[] = "/tmp/acl_ipc_test.XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir_ = tmpl;
        // This process's endpoint (a socket, an event loop, a thread) comes
        // with its first export and lives as long as the process: started
        // before the count.
        void *p = nullptr;
        char key[65];
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key),
                                                       ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
        ASSERT_EQ(ACL_SUCCESS, aclrtFree(p));
        fds_at_start_ = CountOpenFds();
    }
    void TearDown() override
    {
        for (pid_t pid : peers_) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
        if (!dir_.empty()) {
            std::string cmd = "rm -rf '" + dir_ + "'";
            (void)!system(cmd.c_str());
        }
        // The endpoint closes a finished connection on its own thread.
        if (fds_at_start_ >= 0) {
            EXPECT_TRUE(WaitUntil([&] { return CountOpenFds() == fds_at_start_; },
                                  std::chrono::milliseconds(5000)))
                << "open fds: " << CountOpenFds() << ", " << fds_at_start_ << " at the start";
        }
        AclTest::TearDown();
    }

    // Starts the peer program; it runs until it has written DIR/rc. `env`:
    // variables set (or, with an empty value, unset) in the peer only.
    pid_t Start(const char *cmd, int device, uint64_t flags,
                const std::map<std::string, std::string> &env = {})
    {
        pid_t pid = fork();
        if (pid == 0) {
            for (const auto &[name, value] : env)
                (void)(value.empty() ? unsetenv(name.c_str()) : setenv(name.c_str(), value.c_str(), 1));
            std::string dev = std::to_string(device), fl = std::to_string(flags);
            execl(ACL_IPC_PEER_PATH, ACL_IPC_PEER_PATH, cmd, dir_.c_str(), dev.c_str(), fl.c_str(),
                  static_cast<char *>(nullptr));
            _exit(127);
        }
        Track(pid, cmd);
        return pid;
    }

    // Keeps `pid`, a peer running `cmd`, to be finished or killed.
    void Track(pid_t pid, const std::string &cmd)
    {
        peers_.push_back(pid);
        importing_[pid] = cmd == "mem-import" || cmd == "mem-import-as-nobody" || cmd == "notify-record" ||
                          cmd == "notify-wait" || cmd == "event-wait";
    }

    // Waits (bounded) for the peer to exit 0; returns the aclError it wrote.
    int Finish(pid_t pid)
    {
        int status = 0;
        auto start = std::chrono::steady_clock::now();
        while (waitpid(pid, &status, WNOHANG) == 0) {
            if (MsSince(start) > 30000) {
                ADD_FAILURE() << "the peer did not finish within 30 s";
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        peers_.erase(std::find(peers_.begin(), peers_.end(), pid));
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "peer status " << status;
        // An importing peer ends with the fds it started with.
        if (importing_[pid]) {
            EXPECT_TRUE(Exists("fds")) << "the peer did not account for its fds";
            EXPECT_EQ("", Read("fds")) << "fds the peer leaked";
            unlink((dir_ + "/fds").c_str());
        }
        std::string rc = Read("rc");
        return rc.empty() ? -1 : std::stoi(rc);
    }

    std::string Read(const char *name)
    {
        std::ifstream in(dir_ + "/" + name);
        std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return s;
    }
    bool Exists(const char *name)
    {
        struct stat st;
        return stat((dir_ + "/" + name).c_str(), &st) == 0;
    }
    // 4 KiB of device memory filled with `fill`, shared without PID
    // validation: its key in `key` and in DIR/key, for a peer.
    void SharePage(char fill, void *&p, char (&key)[65])
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
        memset(p, fill, 4 * kKiB);
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key),
                                                       ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
        WriteKey(key, sizeof(key));
    }
    // Writes `pid` to DIR/pid, where a "-listed" peer waits for it.
    void WritePid(int32_t pid)
    {
        std::string text = std::to_string(pid), tmp = dir_ + "/.pid";
        FILE *f = fopen(tmp.c_str(), "w");
        ASSERT_NE(nullptr, f);
        fputs(text.c_str(), f);
        fclose(f);
        ASSERT_EQ(0, rename(tmp.c_str(), (dir_ + "/pid").c_str()));
    }
    void WriteKey(const void *key, size_t len)
    {
        std::string tmp = dir_ + "/.key", path = dir_ + "/key";
        FILE *f = fopen(tmp.c_str(), "wb");
        ASSERT_NE(nullptr, f);
        ASSERT_EQ(len, fwrite(key, 1, len, f));
        fclose(f);
        ASSERT_EQ(0, rename(tmp.c_str(), path.c_str()));
    }

    // Waits (bounded) for the peer `pid` to be gone, and forgets it.
    void Kill(pid_t pid)
    {
        ASSERT_EQ(0, kill(pid, SIGKILL));
        ASSERT_EQ(pid, waitpid(pid, nullptr, 0));
        peers_.erase(std::find(peers_.begin(), peers_.end(), pid));
    }

    std::string dir_;
    std::vector<pid_t> peers_;
    std::map<pid_t, bool> importing_;
    int fds_at_start_ = -1;
};

constexpr size_t k2M = 2 * kMiB;

TEST_F(AclIpcTest, AnotherProcessImportsMemoryOnAnotherDeviceAndSeesAndWritesTheSameBytes)
{
    ACL_NEED_DEVICES(2);
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, k2M, ACL_MEM_MALLOC_HUGE_ONLY));
    memset(p, 'A', k2M);
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, k2M, key, sizeof(key),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    EXPECT_LE(strlen(key), 64u);
    WriteKey(key, sizeof(key));
    pid_t peer = Start("mem-import", 1, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS);
    EXPECT_EQ(ACL_SUCCESS, Finish(peer));
    EXPECT_EQ("A", Read("seen"));
    EXPECT_EQ('B', static_cast<char *>(p)[1]);
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, ImportOnAnotherDeviceWithoutPeerAccessIsNoPermission)
{
    ACL_NEED_DEVICES(2);
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, k2M, ACL_MEM_MALLOC_HUGE_ONLY));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, k2M, key, sizeof(key),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Finish(Start("mem-import", 1, 0)));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, WithPidValidationOnlyListedProcessesImport)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, k2M, ACL_MEM_MALLOC_HUGE_ONLY));
    memset(p, 'V', k2M);
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, k2M, key, sizeof(key), ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));
    // Not listed: refused.
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Finish(Start("mem-import", 0, 0)));
    // Listed (the peer's PID in the initial namespace is its PID here).
    ASSERT_EQ(0, unlink((dir_ + "/rc").c_str()));
    ASSERT_EQ(0, unlink((dir_ + "/key").c_str()));
    pid_t listed = Start("mem-import", 0, 0);
    int32_t pid = listed;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemSetImportPid(key, &pid, 1));
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_SUCCESS, Finish(listed));
    EXPECT_EQ("V", Read("seen"));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, InterServerAllowlistsOfThisServerListImportersAndOtherServersAreBeyondReach)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, k2M, ACL_MEM_MALLOC_HUGE_ONLY));
    memset(p, 'W', k2M);
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, k2M, key, sizeof(key), ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));
    // This machine's devices are in no SuperPOD: their sdid is 0.
    int64_t sdid = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_DEVICE_ID, &sdid));
    EXPECT_EQ(0, sdid);
    // Another server's entry, or a bad one, refuses the whole call: the
    // process of the good entry is not listed and cannot import.
    pid_t refused = Start("mem-import", 0, 0);
    int32_t pid = refused, other = 1, bad = -5;
    aclrtServerPid here = {static_cast<uint32_t>(sdid), &pid, 1};
    aclrtServerPid elsewhere = {7, &other, 1};
    aclrtServerPid malformed = {static_cast<uint32_t>(sdid), &bad, 1};
    aclrtServerPid with_elsewhere[] = {here, elsewhere}, with_malformed[] = {here, malformed};
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtIpcMemImportPidInterServer(key, with_elsewhere, 2));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportPidInterServer(key, with_malformed, 2));
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Finish(refused));
    ASSERT_EQ(0, unlink((dir_ + "/rc").c_str()));
    ASSERT_EQ(0, unlink((dir_ + "/key").c_str()));
    pid_t listed = Start("mem-import", 0, 0);
    pid = listed;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportPidInterServer(key, &here, 1));
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_SUCCESS, Finish(listed));
    EXPECT_EQ("W", Read("seen"));
    // CANN's checks.
    aclrtServerPid no_pids = {0, nullptr, 1};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportPidInterServer(nullptr, &here, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportPidInterServer(key, nullptr, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportPidInterServer(key, &here, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportPidInterServer(key, &no_pids, 1));

    // The access link of an exported key: the one a mock NPU has.
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO));
    EXPECT_EQ(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED,
              aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 4));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtIpcMemSetAttr(key, static_cast<aclrtIpcMemAttrType>(1), ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtIpcMemSetAttr(nullptr, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION,
              aclrtIpcMemSetAttr("not a key", ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));

    // Notifies: one PID a server.
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    char nkey[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, nkey, sizeof(nkey), 0));
    int32_t self = getpid(), two[] = {self, self};
    aclrtServerPid mine = {0, &self, 1}, pair = {0, two, 2}, far = {3, &self, 1};
    EXPECT_EQ(ACL_SUCCESS, aclrtNotifySetImportPidInterServer(notify, &mine, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifySetImportPidInterServer(notify, &pair, 1));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtNotifySetImportPidInterServer(notify, &far, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifySetImportPidInterServer(nullptr, &mine, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifySetImportPidInterServer(notify, nullptr, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifySetImportPidInterServer(notify, &mine, 0));
    int not_a_notify = 0;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtNotifySetImportPidInterServer(&not_a_notify, &mine, 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclIpcTest, ImportInTheExportingProcessAliasesTheMemoryAndRepeatsShareOneMapping)
{
    void *p = nullptr, *q = nullptr, *r = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 8 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 8 * kKiB, key, sizeof(key),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&r, key, 0));
    EXPECT_NE(p, q);
    EXPECT_EQ(q, r);
    static_cast<char *>(p)[5] = 'x';
    EXPECT_EQ('x', static_cast<char *>(q)[5]);
    // An import is freed by aclrtIpcMemClose, not aclrtFree.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtFree(q));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key)); // one reference left
    EXPECT_EQ('x', static_cast<char *>(q)[5]);
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key)); // unmapped
    void *base = nullptr;
    size_t size = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtMemGetAddressRange(q, &base, &size));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key)); // the exporter's close
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, AFirstImportAfterTheExporterClosedTheKeyIsInvalidHandle)
{
    void *p = nullptr, *q = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key)); // the importer's (importers close first)
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key)); // the exporter's
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemImportByKey(&q, key, 0));
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, Finish(Start("mem-import", 0, 0)));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, AFirstImportAfterTheExporterExitedIsIpcError)
{
    pid_t exporter = Start("mem-export", 0, 0);
    EXPECT_EQ(ACL_SUCCESS, Finish(exporter));
    std::string key = Read("key");
    ASSERT_FALSE(key.empty());
    void *q = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
}

TEST_F(AclIpcTest, ImportersKeepTheirMemoryWhenTheExporterFreesAndExits)
{
    void *p = nullptr, *q = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    memset(p, 'K', 4 * kKiB);
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtFree(p)); // also ends sharing under the key
    EXPECT_TRUE(BytesAre(q, 4 * kKiB, 'K'));
    void *r = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&r, key, 0)); // repeat: same mapping
    EXPECT_EQ(q, r);
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemImportByKey(&r, key, 0));
}

TEST_F(AclIpcTest, ExportChecksAlignmentFlagsAndArguments)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, k2M, ACL_MEM_MALLOC_HUGE_ONLY));
    char key[65];
    char *c = static_cast<char *>(p);
    EXPECT_EQ(ACL_ERROR_RT_ADDR_UNALIGNED, aclrtIpcMemGetExportKey(c + 4096, 4096, key, sizeof(key), 1));
    EXPECT_EQ(ACL_ERROR_RT_ADDR_UNALIGNED, aclrtIpcMemGetExportKey(p, 4096, key, sizeof(key), 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemGetExportKey(p, k2M, key, sizeof(key), 4));
    // CANN's codes: a short key buffer and size 0 are found past the API
    // layer (107000); NULL pointers at it (100000).
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemGetExportKey(p, k2M, key, 64, 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtIpcMemGetExportKey(nullptr, k2M, key, sizeof(key), 1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtIpcMemGetExportKey(p, k2M, nullptr, sizeof(key), 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemGetExportKey(p, 0, key, sizeof(key), 1));
    int host = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemGetExportKey(&host, 4096, key, sizeof(key), 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemGetExportKey(p, 2 * k2M, key, sizeof(key), 1));
    // A thread with no current context exports nothing, even memory another
    // thread allocated (CANN: 107002).
    aclError other_thread = ACL_SUCCESS;
    std::thread([&] { other_thread = aclrtIpcMemGetExportKey(p, k2M, key, sizeof(key), 1); }).join();
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, other_thread);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, KeyFailuresHaveTheirDocumentedCodes)
{
    void *q = nullptr;
    int32_t pid = getpid();
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtIpcMemImportByKey(nullptr, "x", 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportByKey(&q, "not a key", 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportByKey(&q, "", 0));
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key), 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemImportByKey(&q, key, 8));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcMemSetImportPid(key, &pid, 0));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtIpcMemSetImportPid(key, nullptr, 1));
    // A well-formed key with a wrong secret: unknown. (The secret's last
    // character carries padding bits; one before it is free.)
    std::string forged = key;
    char &c = forged[forged.size() - 3];
    c = c == 'A' ? 'B' : 'A';
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemImportByKey(&q, forged.c_str(), 0));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtIpcMemSetImportPid(forged.c_str(), &pid, 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

// One key per range and flags, as one shareable handle per physical
// allocation: a loop that exports grows no table; a closed key is replaced.
TEST_F(AclIpcTest, ExportingTheSameThingAgainGivesTheSameKeyUntilItIsClosed)
{
    void *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 8 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    char first[65], again[65], other[65], whole[65], after[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, first, sizeof(first), 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, again, sizeof(again), 0));
    EXPECT_STREQ(first, again);
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, other, sizeof(other),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    EXPECT_STRNE(first, other);
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 8 * kKiB, whole, sizeof(whole), 0));
    EXPECT_STRNE(first, whole);
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(first));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, after, sizeof(after), 0));
    EXPECT_STRNE(first, after);
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemClose(first));
    for (const char *key : {after, other, whole})
        EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));

    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, first, sizeof(first), 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, again, sizeof(again), 0));
    EXPECT_STREQ(first, again);
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, other, sizeof(other),
                                                   ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    EXPECT_STRNE(first, other);
    // A notify's key is no memory key to list importers for or close.
    int32_t self = static_cast<int32_t>(getpid());
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtIpcMemSetImportPid(first, &self, 1));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemClose(first));
    EXPECT_EQ(ACL_SUCCESS, aclrtNotifySetImportPid(notify, &self, 1)) << "the key is still open";
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));

    aclrtEvent event = nullptr;
    aclrtIpcEventHandle h1 = {}, h2 = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcGetEventHandle(event, &h1));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcGetEventHandle(event, &h2));
    EXPECT_EQ(0, memcmp(&h1, &h2, sizeof(h1)));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

TEST_F(AclIpcTest, AnotherProcessWaitsForAnIpcEventUntilItsRecordCompletes)
{
    ACL_NEED_DEVICES(2);
    aclrtEvent event = nullptr;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtRecordEvent(event, stream));
    aclrtIpcEventHandle handle;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcGetEventHandle(event, &handle));
    WriteKey(handle.reserved, sizeof(handle.reserved));
    pid_t peer = Start("event-wait", 1, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_FALSE(Exists("rc")) << "the peer's wait ended before the record";
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    EXPECT_EQ(ACL_SUCCESS, Finish(peer));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    // IPC events cannot be reset or timed.
    float ms;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtResetEvent(event, stream));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtEventElapsedTime(&ms, event, event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclIpcTest, OnlyIpcEventsHaveHandles)
{
    aclrtEvent event = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEvent(&event));
    aclrtIpcEventHandle handle;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtIpcGetEventHandle(event, &handle));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtIpcGetEventHandle(event, nullptr));
    memset(&handle, 0, sizeof(handle));
    aclrtEvent opened = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtIpcOpenEventHandle(handle, &opened));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
}

TEST_F(AclIpcTest, AnotherProcessRecordsANotifyTheCreatorWaitsOn)
{
    ACL_NEED_DEVICES(2);
    aclrtNotify notify = nullptr;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, key, sizeof(key),
                                                   ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    ASSERT_EQ(ACL_SUCCESS, aclrtWaitAndResetNotify(notify, stream, kGateTimeoutS));
    aclrtStreamStatus status;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamQuery(stream, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_NOT_READY, status);
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_SUCCESS, Finish(Start("notify-record", 1, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS)));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclIpcTest, AnImporterCannotWaitOnANotify)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, key, sizeof(key),
                                                   ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Finish(Start("notify-wait", 0, 0)));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclIpcTest, NotifyKeysCheckFlagsAndThePidList)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    char key[65];
    int32_t pid = getpid();
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtNotifySetImportPid(notify, &pid, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifyGetExportKey(notify, key, sizeof(key), 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, key, sizeof(key), ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    // Validation on, nobody listed: refused; then the peer's PID is listed.
    WriteKey(key, sizeof(key));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, Finish(Start("notify-record", 0, 0)));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifySetImportPid(notify, &pid, 0));
    aclrtNotify imported = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtNotifyImportByKey(&imported, key, 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclIpcTest, BareTgidOfAnotherProcessIsItsPid)
{
    pid_t peer = Start("bare-tgid", 0, 0);
    EXPECT_EQ(ACL_SUCCESS, Finish(peer));
    EXPECT_EQ(std::to_string(peer), Read("seen"));
}

// A process holds NPUIPC_MAX_IMPORTS imported buffers at most (a DRM file's
// limit): one import more is ACL_ERROR_RT_OVER_LIMIT and maps nothing, and
// closing an import makes room again. Each page of one allocation is
// exported under its own key, so every import is a buffer of its own.
TEST_F(AclIpcTest, ImportsBeyondTheDriversLimitAreOverLimitUntilOneIsClosed)
{
    // 16,384 imports, each a mapping of its own: under KASAN, lockdep and
    // kmemleak that is ten minutes of the same path, whose limit the
    // kselftests reach there through the driver alone.
    struct stat st;
    if (stat("/sys/kernel/debug/kmemleak", &st) == 0)
        GTEST_SKIP() << "a kmemleak kernel: NPUIPC_MAX_IMPORTS imports are too slow here";
    SKIP_WHERE_RUN_ONCE_ELSEWHERE(); // half a minute under TCG
    const size_t pages = NPUIPC_MAX_IMPORTS + 1;
    char *p = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(reinterpret_cast<void **>(&p), pages * 4 * kKiB,
                                       ACL_MEM_MALLOC_NORMAL_ONLY));
    std::vector<std::string> keys;
    std::vector<char *> imported;
    for (size_t i = 0; i < pages; i++) {
        char key[65];
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p + i * 4 * kKiB, 4 * kKiB, key, sizeof(key),
                                                       ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION))
            << "page " << i;
        keys.emplace_back(key);
        const uint32_t marker = static_cast<uint32_t>(i) + 1; // 0 is what untouched memory reads
        std::memcpy(p + i * 4 * kKiB, &marker, sizeof(marker));
    }
    for (size_t i = 0; i < NPUIPC_MAX_IMPORTS; i++) {
        void *q = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, keys[i].c_str(), 0)) << "import " << i;
        imported.push_back(static_cast<char *>(q));
    }
    void *q = &q;
    EXPECT_EQ(ACL_ERROR_RT_OVER_LIMIT, aclrtIpcMemImportByKey(&q, keys.back().c_str(), 0));
    EXPECT_EQ(static_cast<void *>(&q), q); // nothing written back
    EXPECT_EQ(ACL_ERROR_RT_OVER_LIMIT, aclrtGetLastError(ACL_RT_THREAD_LEVEL));
    // Each import is its own page of the allocation.
    for (size_t i = 0; i < NPUIPC_MAX_IMPORTS; i++) {
        uint32_t marker = 0;
        std::memcpy(&marker, imported[i], sizeof(marker));
        ASSERT_EQ(i + 1, marker) << "import " << i;
    }

    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(keys[0].c_str())); // the import of page 0
    q = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, keys.back().c_str(), 0));
    uint32_t marker = 0;
    std::memcpy(&marker, q, sizeof(marker));
    EXPECT_EQ(uint32_t(NPUIPC_MAX_IMPORTS) + 1, marker);
    for (size_t i = 1; i < pages; i++)
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(keys[i].c_str())) << "import " << i;
    for (const std::string &key : keys) // the exporter's closes
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key.c_str()));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, OpenFdCountIsBackToItsStartAfterSharing)
{
    // The first export starts this process's endpoint (a socket, an event
    // loop, a thread), which lives as long as the process: warm it up.
    void *p = nullptr, *q = nullptr;
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 4 * kKiB, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key), 1));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    int fds = CountOpenFds();
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(p, 4 * kKiB, key, sizeof(key), 1));
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key, 0));
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
        ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    }
    // The exporter's thread closes its end of the last import's connection,
    // and the fd it sent, once the reply is out: the importer may return
    // first.
    EXPECT_TRUE(WaitUntil([&] { return CountOpenFds() == fds; }))
        << fds << " fds before, " << CountOpenFds() << " after";
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

} // namespace

namespace {

TEST_F(AclIpcTest, HugeMemoryIsAlignedToItsPageSoAnyPageOfItCanBeExported)
{
    void *p = nullptr, *q = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, 2 * k2M, ACL_MEM_MALLOC_HUGE_ONLY));
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % k2M);
    char *second = static_cast<char *>(p) + k2M;
    second[7] = 's';
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(second, k2M, key, sizeof(key),
                                                   ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key, 0));
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(q) % k2M);
    EXPECT_EQ('s', static_cast<char *>(q)[7]);
    void *base = nullptr;
    size_t size = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemGetAddressRange(q, &base, &size));
    EXPECT_EQ(k2M, size); // exactly the exported range
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

TEST_F(AclIpcTest, EachKeyFunctionTakesOnlyItsOwnKindOfKey)
{
    aclrtNotify notify = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    char key[65];
    ASSERT_EQ(ACL_SUCCESS, aclrtNotifyGetExportKey(notify, key, sizeof(key), ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    int32_t pid = getpid();
    // A notify key is not memory: neither closed nor listed by the memory functions.
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtIpcMemSetImportPid(key, &pid, 1));
    void *q = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcMemImportByKey(&q, key, 0));
    // The notify key still works for its own functions.
    EXPECT_EQ(ACL_SUCCESS, aclrtNotifySetImportPid(notify, &pid, 1));
    aclrtNotify imported = nullptr;
    EXPECT_EQ(ACL_SUCCESS, aclrtNotifyImportByKey(&imported, key, 0));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(imported));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
}

TEST_F(AclIpcTest, AnEventOpenedFromAHandleCannotBeSharedAgain)
{
    aclrtEvent event = nullptr, opened = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
    aclrtIpcEventHandle handle, again;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcGetEventHandle(event, &handle));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcOpenEventHandle(handle, &opened));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtIpcGetEventHandle(opened, &again));
    // Nor queried with the deprecated call (CANN's runtime refuses IPC events).
    aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtQueryEvent(opened, &status));
#pragma GCC diagnostic pop
    EXPECT_EQ(ACL_EVENT_STATUS_RESERVED, status);
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(opened));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    // Destroyed: its handle opens nothing any more.
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, aclrtIpcOpenEventHandle(handle, &opened));
}

} // namespace

namespace {

// Waits (bounded) for DIR/name to appear.
bool AppearsWithin(const std::string &path, int ms)
{
    return WaitUntil([&] { return access(path.c_str(), F_OK) == 0; }, std::chrono::milliseconds(ms));
}

TEST_F(AclIpcTest, AKeyOfAnExporterKilledAfterExportingIsIpcError)
{
    pid_t exporter = Start("mem-export-hold", 0, 0);
    ASSERT_TRUE(AppearsWithin(dir_ + "/rc", 30000));
    EXPECT_EQ("0", Read("rc"));
    std::string key = Read("key");
    Kill(exporter);
    void *q = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
}

TEST_F(AclIpcTest, ImportersKeepMemoryOfAnExporterKilledAfterTheImport)
{
    pid_t exporter = Start("mem-export-hold", 0, 0);
    ASSERT_TRUE(AppearsWithin(dir_ + "/rc", 30000));
    std::string key = Read("key");
    void *q = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
    Kill(exporter);
    EXPECT_TRUE(BytesAre(q, 2 * kMiB, 'E'));
    static_cast<char *>(q)[0] = 'x';
    EXPECT_EQ('x', static_cast<char *>(q)[0]);
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key.c_str()));
}

// Waits (bounded) until `pid` is stopped (state T): kill(SIGSTOP) returns
// before the signal has taken effect.
bool StoppedWithin(pid_t pid, int ms)
{
    return WaitUntil(
        [&] {
            std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
            std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            size_t paren = stat.rfind(')');
            return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T';
        },
        std::chrono::milliseconds(ms));
}

// Whether process `pid` (or its thread `tid`) sleeps in poll(): an
// importer waiting for its reply.
bool InPoll(pid_t pid, pid_t tid = 0)
{
    std::string task = tid ? "/task/" + std::to_string(tid) : "";
    std::ifstream in("/proc/" + std::to_string(pid) + task + "/wchan");
    std::string wchan;
    in >> wchan;
    return wchan.find("poll") != std::string::npos;
}

// An importer killed with its import in flight (the exporter, stopped, has
// not answered): resumed, the exporter drops the dead connection, goes on
// serving the key, and its open fds come back to where they were.
TEST_F(AclIpcTest, AnImporterKilledMidImportLeavesTheExporterServingWithoutLeaks)
{
    pid_t exporter = Start("mem-export-hold", 0, 0);
    ASSERT_TRUE(AppearsWithin(dir_ + "/rc", 30000));
    ASSERT_EQ("0", Read("rc"));
    std::string key = Read("key");
    const int exporter_fds = CountOpenFds(exporter);
    ASSERT_LT(0, exporter_fds);
    void *q = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key.c_str(), 0)); // both sides warm
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key.c_str()));
    // The exporter closes the connection and the fd it sent just after
    // replying, which may trail the import; it keeps nothing of it.
    ASSERT_TRUE(WaitUntil([&] { return CountOpenFds(exporter) == exporter_fds; }))
        << "exporter fds " << CountOpenFds(exporter) << " after a served import, "
        << exporter_fds << " before";

    char padded[65] = {}; // the peer reads a key as the 65 bytes of its buffer
    std::strncpy(padded, key.c_str(), sizeof(padded) - 1);
    WriteKey(padded, sizeof(padded));
    ASSERT_EQ(0, kill(exporter, SIGSTOP));
    ASSERT_TRUE(StoppedWithin(exporter, 30000));
    pid_t importer = Start("mem-import", 0, 0);
    ASSERT_TRUE(WaitUntil([&] { return InPoll(importer); }, std::chrono::milliseconds(30000)))
        << "the importer never waited for the exporter";
    ASSERT_EQ(0, kill(importer, SIGKILL));
    ASSERT_EQ(importer, waitpid(importer, nullptr, 0));
    peers_.erase(std::find(peers_.begin(), peers_.end(), importer));
    EXPECT_FALSE(Exists("seen"));
    ASSERT_EQ(0, kill(exporter, SIGCONT));

    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
    EXPECT_TRUE(BytesAre(q, 2 * kMiB, 'E'));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key.c_str()));
    EXPECT_TRUE(WaitUntil([&] { return CountOpenFds(exporter) == exporter_fds; },
                          std::chrono::milliseconds(10000)))
        << "exporter fds " << CountOpenFds(exporter) << ", " << exporter_fds << " before";
}

// ---- the exporter killed at each step of the handshake ----
//
// With PID validation on, the handshake is: the exporter makes a key and
// hands it over (a file here), the importer tells it its PID, the exporter
// lists it, the importer imports. Killed at any step before the import
// completes, the importer's import fails with ACL_ERROR_RT_IPC_ERROR ("the
// exporting process is gone") at once: never ACL_ERROR_RT_TIMEOUT (an
// exporter that is alive but does not answer), never a hang.

enum class Shared { Memory, Notify };

// The thread's last error message says the exporter is gone (not another
// cause of ACL_ERROR_RT_IPC_ERROR: a broken protocol, an overloaded one).
bool SaysExporterGone()
{
    const char *msg = aclGetRecentErrMsg();
    return msg && std::strstr(msg, "the exporting process is gone");
}
enum class KilledAt { Exported, Listed, Serving };

// The import of `key` as `kind`, undone if it succeeded.
aclError ImportOnce(Shared kind, const std::string &key)
{
    if (kind == Shared::Memory) {
        void *q = nullptr;
        aclError rc = aclrtIpcMemImportByKey(&q, key.c_str(), 0);
        if (rc == ACL_SUCCESS) {
            EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key.c_str()));
        }
        return rc;
    }
    aclrtNotify notify = nullptr;
    aclError rc = aclrtNotifyImportByKey(&notify, key.c_str(), 0);
    if (rc == ACL_SUCCESS) {
        EXPECT_EQ(ACL_SUCCESS, aclrtDestroyNotify(notify));
    }
    return rc;
}

class AclIpcHandshakeTest : public AclIpcTest {
protected:
    void KillExporterAt(Shared kind, KilledAt step)
    {
        pid_t exporter = Start(kind == Shared::Memory ? "mem-export-listed" : "notify-export-listed", 0, 0);
        ASSERT_TRUE(AppearsWithin(dir_ + "/rc", 30000));
        ASSERT_EQ("0", Read("rc"));
        const std::string key = Read("key");
        // Not listed yet: refused, which also proves the key is live.
        ASSERT_EQ(ACL_ERROR_RT_NO_PERMISSION, ImportOnce(kind, key));
        if (step == KilledAt::Exported) {
            Kill(exporter);
            EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, ImportOnce(kind, key));
            EXPECT_TRUE(SaysExporterGone()) << aclGetRecentErrMsg();
            return;
        }
        int32_t me = 0;
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetBareTgid(&me));
        WritePid(me);
        ASSERT_TRUE(AppearsWithin(dir_ + "/listed", 30000));
        ASSERT_EQ("0", Read("listed"));
        if (step == KilledAt::Listed) {
            Kill(exporter);
            EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, ImportOnce(kind, key));
            EXPECT_TRUE(SaysExporterGone()) << aclGetRecentErrMsg();
            return;
        }
        // In flight: the request waits on the stopped exporter's socket
        // when it dies.
        ASSERT_EQ(0, kill(exporter, SIGSTOP));
        ASSERT_TRUE(StoppedWithin(exporter, 30000));
        std::atomic<pid_t> tid{0};
        aclError rc = ACL_ERROR_INTERNAL_ERROR;
        bool gone = false;
        aclrtContext context = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&context));
        std::thread importer([&] {
            tid = static_cast<pid_t>(syscall(SYS_gettid));
            rc = aclrtSetCurrentContext(context);
            if (rc == ACL_SUCCESS)
                rc = ImportOnce(kind, key);
            gone = SaysExporterGone();
        });
        bool waiting = WaitUntil([&] { return tid != 0 && InPoll(getpid(), tid); },
                                 std::chrono::milliseconds(30000));
        Kill(exporter);
        importer.join();
        ASSERT_TRUE(waiting) << "the import never waited for the exporter";
        EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR, rc);
        EXPECT_TRUE(gone) << "another cause than the exporter gone";
    }
};

struct HandshakeStep {
    Shared kind;
    KilledAt step;
    const char *name;
};

class AclIpcKilledExporterTest : public AclIpcHandshakeTest,
                                 public ::testing::WithParamInterface<HandshakeStep> {};

TEST_P(AclIpcKilledExporterTest, ImportFailsWithIpcErrorSayingTheExporterIsGone)
{
    KillExporterAt(GetParam().kind, GetParam().step);
}

INSTANTIATE_TEST_SUITE_P(
    EachStep, AclIpcKilledExporterTest,
    ::testing::Values(HandshakeStep{Shared::Memory, KilledAt::Exported, "MemoryAfterMakingTheKey"},
                      HandshakeStep{Shared::Memory, KilledAt::Listed, "MemoryAfterListingTheImporter"},
                      HandshakeStep{Shared::Memory, KilledAt::Serving, "MemoryWithTheImportInFlight"},
                      HandshakeStep{Shared::Notify, KilledAt::Exported, "NotifyAfterMakingTheKey"},
                      HandshakeStep{Shared::Notify, KilledAt::Listed, "NotifyAfterListingTheImporter"},
                      HandshakeStep{Shared::Notify, KilledAt::Serving, "NotifyWithTheImportInFlight"}),
    [](const ::testing::TestParamInfo<HandshakeStep> &info) { return std::string(info.param.name); });

// A record the exporter queued and never completed: when the exporter
// dies, a stream waiting for it fails instead of hanging.
TEST_F(AclIpcTest, AWaitOnTheRecordOfAProcessThatDiedFailsInsteadOfHanging)
{
    pid_t exporter = Start("event-hold", 0, 0);
    ASSERT_TRUE(AppearsWithin(dir_ + "/key", 30000));
    aclrtIpcEventHandle handle = {};
    std::string text = Read("key");
    ASSERT_LT(text.size(), sizeof(handle.reserved));
    memcpy(handle.reserved, text.c_str(), text.size() + 1);
    aclrtEvent event = nullptr;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcOpenEventHandle(handle, &event));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamWaitEvent(stream, event));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, aclrtSynchronizeStreamWithTimeout(stream, 200));
    Kill(exporter);
    EXPECT_EQ(ACL_ERROR_RT_STREAM_ABORT, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    // Reported once; the stream works again.
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyEvent(event));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// Starts the peer as `unshare -p -f PEER cmd`: in a PID namespace of its
// own. --kill-child: the peer is unshare's child, and killing unshare
// (Kill, TearDown) must not leave it running with the device open.
pid_t StartInPidNamespace(const std::string &dir, const char *cmd)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/usr/bin/unshare", "unshare", "-p", "-f", "--kill-child", ACL_IPC_PEER_PATH, cmd, dir.c_str(),
              "0", "0", static_cast<char *>(nullptr));
        _exit(127);
    }
    return pid;
}

// An importer in a PID namespace of its own (unshare -p -f): keys work
// without PID validation, and the driver tells it the PID an exporter in
// the initial namespace would list, not its own PID 1.
TEST_F(AclIpcTest, AnImporterInItsOwnPidNamespace)
{
    if (access("/usr/bin/unshare", X_OK) != 0)
        GTEST_SKIP() << "no unshare(1)";
    void *p = nullptr;
    char key[65];
    ASSERT_NO_FATAL_FAILURE(SharePage('N', p, key));
    auto run_in_namespace = [&](const char *cmd) {
        pid_t pid = StartInPidNamespace(dir_, cmd);
        Track(pid, cmd);
        return pid;
    };
    EXPECT_EQ(ACL_SUCCESS, Finish(run_in_namespace("mem-import")));
    EXPECT_EQ("N", Read("seen"));
    ASSERT_EQ(0, unlink((dir_ + "/rc").c_str()));
    EXPECT_EQ(ACL_SUCCESS, Finish(run_in_namespace("bare-tgid")));
    int bare = std::stoi(Read("seen"));
    EXPECT_GT(bare, 1); // its PID here, not the 1 it has in its namespace
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

// PID validation needs the exporter in the initial PID namespace, where the
// PIDs importers list (aclrtDeviceGetBareTgid) are its PIDs. An exporter in
// a namespace of its own still exports and lists, but every import of a
// validated key is refused, a listed importer's too.
TEST_F(AclIpcTest, AValidatedKeyOfAnExporterInItsOwnPidNamespaceRefusesEveryImporter)
{
    if (access("/usr/bin/unshare", X_OK) != 0)
        GTEST_SKIP() << "no unshare(1)";
    pid_t exporter = StartInPidNamespace(dir_, "mem-export-listed");
    Track(exporter, "mem-export-listed");
    ASSERT_TRUE(AppearsWithin(dir_ + "/rc", 30000));
    ASSERT_EQ(std::to_string(ACL_SUCCESS), Read("rc"));
    const std::string key = Read("key");
    int32_t me = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetBareTgid(&me));
    WritePid(me);
    ASSERT_TRUE(AppearsWithin(dir_ + "/listed", 30000));
    ASSERT_EQ(std::to_string(ACL_SUCCESS), Read("listed"));
    void *q = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
    EXPECT_EQ(nullptr, q);
    Kill(exporter);
}

// The peer-to-peer path needs the exporter's thread to answer: while the
// exporter is stopped (SIGSTOP, a debugger's breakpoint) a first import
// waits up to its limit (5 s, ipc.md) and fails with TIMEOUT, having
// imported nothing; resumed, the exporter serves the same key again.
TEST_F(AclIpcTest, AFirstImportFromAStoppedExporterTimesOut)
{
    SKIP_WHERE_RUN_ONCE_ELSEWHERE();
    pid_t exporter = Start("mem-export-hold", 0, 0);
    ASSERT_TRUE(AppearsWithin(dir_ + "/rc", 30000));
    ASSERT_EQ(std::to_string(ACL_SUCCESS), Read("rc"));
    const std::string key = Read("key");
    ASSERT_EQ(0, kill(exporter, SIGSTOP));
    ASSERT_TRUE(StoppedWithin(exporter, 30000));
    void *q = nullptr;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ACL_ERROR_RT_TIMEOUT, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
    EXPECT_GE(MsSince(start), 4900) << "gave up before the exporter's limit";
    EXPECT_EQ(nullptr, q);
    ASSERT_EQ(0, kill(exporter, SIGCONT));
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemImportByKey(&q, key.c_str(), 0));
    EXPECT_TRUE(BytesAre(q, 2 * kMiB, 'E'));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key.c_str()));
    Kill(exporter);
}

// The directory an exporter of this process listens in (ipc.md, "The socket
// directory and finding an endpoint").
std::string OwnSocketDirectory()
{
    const char *set = getenv("NPUIPC_IPC_DIR");
    if (set && *set)
        return set;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode))
        return std::string(xdg) + "/npuipc";
    return "/tmp/npuipc-" + std::to_string(geteuid());
}

// Keys do not cross users on the peer-to-peer path: an importer of another
// uid (its device opened before it became that user) finds no exporter in
// its own socket directories (IPC_ERROR), and pointed at the exporter's
// directory with NPUIPC_IPC_DIR is refused there, as that directory is not
// its own (NO_PERMISSION). Either way it imports nothing.
TEST_F(AclIpcTest, AnImporterOfAnotherUserGetsNothing)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "becoming another user needs root";
    void *p = nullptr;
    char key[65];
    ASSERT_NO_FATAL_FAILURE(SharePage('U', p, key));
    ASSERT_EQ(0, chmod(dir_.c_str(), 0777)); // the peer reports there as that user
    // Its own default directory: /tmp/npuipc-65534.
    EXPECT_EQ(ACL_ERROR_RT_IPC_ERROR,
              Finish(Start("mem-import-as-nobody", 0, 0, {{"NPUIPC_IPC_DIR", ""}, {"XDG_RUNTIME_DIR", ""}})));
    EXPECT_FALSE(Exists("seen"));
    ASSERT_EQ(0, unlink((dir_ + "/rc").c_str()));
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION,
              Finish(Start("mem-import-as-nobody", 0, 0, {{"NPUIPC_IPC_DIR", OwnSocketDirectory()}})));
    EXPECT_FALSE(Exists("seen"));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
}

// aclrtResetDevice releases the device's memory in this process and every
// key shared from it: a first import afterwards finds no such key.
TEST_F(AclIpcTest, ResettingTheExportingDeviceEndsTheKeysItShared)
{
    void *p = nullptr;
    char key[65];
    ASSERT_NO_FATAL_FAILURE(SharePage('R', p, key));
    EXPECT_EQ(ACL_SUCCESS, Finish(Start("mem-import", 0, 0))); // live before the reset
    EXPECT_EQ("R", Read("seen"));
    ASSERT_EQ(0, unlink((dir_ + "/rc").c_str()));
    ASSERT_EQ(0, unlink((dir_ + "/seen").c_str()));
    ASSERT_EQ(ACL_SUCCESS, aclrtResetDevice(0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE, Finish(Start("mem-import", 0, 0)));
    EXPECT_FALSE(Exists("seen"));
    ASSERT_EQ(ACL_SUCCESS, UseDevice(0)); // as the test started, for the leak check
}

} // namespace
