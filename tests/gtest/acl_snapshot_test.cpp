// SPDX-License-Identifier: MIT
// Process snapshots (aclrt_snapshot(3)): a lock holding the other threads'
// calls until unlock, a backup of device memory that a restore writes back,
// the callbacks of each stage for each device set, CANN's states and codes.
#include "acl_test_util.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kSize = 1 << 16;

std::vector<std::string> stages_seen;

uint32_t record_stage(int32_t device, void *args)
{
    stages_seen.push_back(std::to_string(reinterpret_cast<uintptr_t>(args)) + "@" + std::to_string(device));
    return 0;
}

uint32_t refuse(int32_t, void *)
{
    return 7;
}

class AclSnapshotTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        stages_seen.clear();
    }
    void TearDown() override
    {
        (void)aclrtSnapShotProcessUnlock(getpid(), nullptr);
        for (int stage = ACL_RT_SNAPSHOT_LOCK_PRE; stage <= ACL_RT_SNAPSHOT_UNLOCK_POST; stage++)
            for (aclrtSnapShotCallBack cb : {record_stage, refuse})
                (void)aclrtSnapShotCallbackUnregister(static_cast<aclrtSnapShotStage>(stage), cb);
        AclTest::TearDown();
    }
};

TEST_F(AclSnapshotTest, ALockHoldsTheOtherThreadsCallsUntilUnlock)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessLock(getpid(), nullptr));
    void *mine = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&mine, kSize, ACL_MEM_MALLOC_NORMAL_ONLY)); // the locker goes on
    std::atomic<bool> done{false};
    aclError held = -1, passed = -1;
    void *theirs = nullptr;
    std::thread other([&] {
        passed = aclrtSynchronizeDevice(); // waiting starts no work: not held
        EXPECT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
        held = aclrtMalloc(&theirs, kSize, ACL_MEM_MALLOC_NORMAL_ONLY);
        done = true;
    });
    EXPECT_FALSE(WaitUntil([&] { return done.load(); }, std::chrono::milliseconds(300)));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessUnlock(getpid(), nullptr));
    other.join();
    EXPECT_TRUE(done);
    EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, passed); // the other thread had no device yet
    EXPECT_EQ(ACL_SUCCESS, held);
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(theirs));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(mine));
    TrackDevice(0);
}

TEST_F(AclSnapshotTest, ARestoreRollsDeviceMemoryBackToTheBackup)
{
    void *a = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&a, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(a, kSize, 0x11, kSize));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessLock(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessBackup(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(a, kSize, 0x22, kSize / 2));
    void *later = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&later, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(later, kSize, 0x33, kSize));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessRestore(getpid(), nullptr));
    std::vector<uint8_t> back(kSize);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(back.data(), kSize, a, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(BytesAre(back.data(), kSize, 0x11));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(back.data(), kSize, later, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_TRUE(BytesAre(back.data(), kSize, 0x33)); // allocated since: left as it is
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessUnlock(getpid(), nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(later));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(a));
}

TEST_F(AclSnapshotTest, EachStepTakesTheStateCANNsRuntimeAsksFor)
{
    aclrtSnapShotBackupArgs backup = {};
    aclrtSnapShotRestoreArgs restore = {};
    int reserve = 0;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSnapShotProcessLock(getpid() + 1, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSnapShotProcessLock(getpid(), &reserve));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_UNLOCK_FAILED, aclrtSnapShotProcessUnlock(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_BACKUP_FAILED, aclrtSnapShotProcessBackup(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_RESTORE_FAILED, aclrtSnapShotProcessRestore(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessLock(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_LOCK_FAILED, aclrtSnapShotProcessLock(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_RESTORE_FAILED, aclrtSnapShotProcessRestore(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSnapShotProcessBackup(getpid(), &backup));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessBackup(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_BACKUP_FAILED, aclrtSnapShotProcessBackup(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtSnapShotProcessRestore(getpid(), &restore));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessRestore(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_RESTORE_FAILED, aclrtSnapShotProcessRestore(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessUnlock(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_UNLOCK_FAILED, aclrtSnapShotProcessUnlock(getpid(), nullptr));
}

TEST_F(AclSnapshotTest, CallbacksRunAtEachStageForEachDeviceSet)
{
    for (int stage = ACL_RT_SNAPSHOT_LOCK_PRE; stage <= ACL_RT_SNAPSHOT_UNLOCK_POST; stage++)
        ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotCallbackRegister(static_cast<aclrtSnapShotStage>(stage), record_stage,
                                                             reinterpret_cast<void *>(static_cast<uintptr_t>(stage))));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessLock(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessBackup(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessRestore(getpid(), nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotProcessUnlock(getpid(), nullptr));
    EXPECT_EQ((std::vector<std::string>{"0@0", "1@0", "2@0", "3@0", "4@0", "5@0"}), stages_seen);

    EXPECT_EQ(ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED,
              aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, record_stage, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtSnapShotCallbackRegister(RawEnum<aclrtSnapShotStage>(6), record_stage, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, nullptr, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSnapShotCallbackUnregister(ACL_RT_SNAPSHOT_LOCK_PRE, refuse));

    // A callback that fails stops the step, which changes nothing.
    ASSERT_EQ(ACL_SUCCESS, aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, refuse, nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_CALLBACK_FAILED, aclrtSnapShotProcessLock(getpid(), nullptr));
    EXPECT_EQ(ACL_ERROR_SNAPSHOT_UNLOCK_FAILED, aclrtSnapShotProcessUnlock(getpid(), nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtSnapShotCallbackUnregister(ACL_RT_SNAPSHOT_LOCK_PRE, refuse));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSnapShotCallbackUnregister(ACL_RT_SNAPSHOT_LOCK_PRE, refuse));
}

} // namespace
