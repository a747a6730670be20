// SPDX-License-Identifier: MIT
// aclrt from many threads at once: eight threads each set device 0 and run
// 200 rounds of create stream/event/notify, fill, notify record and wait,
// event record and synchronize, destroy. Every call must succeed, every
// fill must land, and afterwards the device budget and the process's open
// file descriptors are back where they started. Runs in the VM against
// npuipc.ko with default parameters.
#include "acl_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace acltest;

class AclThreadsTest : public AclTest {};

constexpr int kThreads = 8;
constexpr int kRounds = 200;
constexpr size_t kBufSize = 4096;

// What one thread saw: its first failure, if any. The threads do not use
// gtest assertions in the loop, so a broken call reports once, not 200 times.
struct ThreadResult {
    int failures = 0;
    std::string first;
};

#define ROUND_CALL(result, round, call)                                                       \
    do {                                                                                      \
        aclError rc_ = (call);                                                                \
        if (rc_ != ACL_SUCCESS) {                                                             \
            if ((result).failures++ == 0)                                                     \
                (result).first = std::string(#call) + " = " + std::to_string(rc_) +           \
                                 " in round " + std::to_string(round);                        \
        }                                                                                     \
    } while (0)

// One round; returns false after a failure so the thread stops there.
bool Round(ThreadResult &result, int round, void *buf, uint8_t value)
{
    const int before = result.failures;
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    aclrtNotify notify = nullptr;
    ROUND_CALL(result, round, aclrtCreateStream(&stream));
    ROUND_CALL(result, round, aclrtCreateEvent(&event));
    ROUND_CALL(result, round, aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    if (result.failures != before)
        return false;
    ROUND_CALL(result, round, aclrtMemsetAsync(buf, kBufSize, value, kBufSize, stream));
    ROUND_CALL(result, round, aclrtRecordNotify(notify, stream));
    // Bounded: a lost record fails the stream after the timeout instead of
    // hanging the synchronize below.
    ROUND_CALL(result, round, aclrtWaitAndResetNotify(notify, stream, kGateTimeoutS));
    ROUND_CALL(result, round, aclrtRecordEvent(event, stream));
    ROUND_CALL(result, round, aclrtSynchronizeEvent(event));
    if (result.failures == before && !BytesAre(buf, kBufSize, value)) {
        if (result.failures++ == 0)
            result.first = "fill of round " + std::to_string(round) + " missing";
    }
    ROUND_CALL(result, round, aclrtDestroyEvent(event));
    ROUND_CALL(result, round, aclrtDestroyNotify(notify));
    ROUND_CALL(result, round, aclrtDestroyStream(stream));
    return result.failures == before;
}

void Worker(int index, ThreadResult &result)
{
    ROUND_CALL(result, -1, aclrtSetDevice(0));
    if (result.failures)
        return;
    void *buf = nullptr;
    ROUND_CALL(result, -1, aclrtMalloc(&buf, kBufSize, ACL_MEM_MALLOC_NORMAL_ONLY));
    for (int round = 0; buf && round < kRounds; round++)
        if (!Round(result, round, buf, static_cast<uint8_t>(index * 31 + round)))
            break;
    if (buf)
        ROUND_CALL(result, -1, aclrtFree(buf));
    ROUND_CALL(result, -1, aclrtResetDevice(0));
}

TEST_F(AclThreadsTest, EightThreadsOfStreamEventNotifyRoundsAllSucceedAndLeakNothing)
{
    // One round here first, so state the library sets up once is not
    // counted as a leak.
    const size_t free_before = DeviceFreeMem();
    {
        ThreadResult warmup;
        void *buf = nullptr;
        ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&buf, kBufSize, ACL_MEM_MALLOC_NORMAL_ONLY));
        EXPECT_TRUE(Round(warmup, 0, buf, 0x5A)) << warmup.first;
        ASSERT_EQ(ACL_SUCCESS, aclrtFree(buf));
    }
    // A done job lets go of its buffer on the driver's work item, so the
    // memory of a freed buffer may come back a moment after aclrtFree.
    ASSERT_TRUE(WaitUntil([&] { return DeviceFreeMem() == free_before; }));
    const int fds_before = CountOpenFds();

    std::vector<ThreadResult> results(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++)
        threads.emplace_back(Worker, i, std::ref(results[i]));
    for (std::thread &t : threads)
        t.join();

    for (int i = 0; i < kThreads; i++)
        EXPECT_EQ(0, results[i].failures) << "thread " << i << ": " << results[i].first;
    EXPECT_TRUE(WaitUntil([&] { return DeviceFreeMem() == free_before; }))
        << free_before - DeviceFreeMem() << " bytes still charged";
    EXPECT_EQ(fds_before, CountOpenFds());
    // The threads' references are gone; this thread's device is still set.
    int32_t device = -1;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetDevice(&device));
    EXPECT_EQ(0, device);
}

// fork() takes the runtime's lock before the IPC transport's, the order
// of every thread: forks while one thread publishes physical memory (its
// lock, then the transport's) and another sets and resets the device it
// lives on (the runtime's lock, then the memory's) never deadlock. The
// calls of the two threads may fail as the device comes and goes; every
// fork must return and every child exit cleanly.
TEST_F(AclThreadsTest, ForksWhileThreadsPublishMemoryAndResetItsDeviceNeverDeadlock)
{
    ACL_NEED_DEVICES(2);
    std::atomic<bool> stop{false};
    std::atomic<int> published{0};
    std::thread publisher([&] {
        aclrtPhysicalMemProp prop = {};
        prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
        prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
        prop.memAttr = ACL_HBM_MEM_NORMAL;
        prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 1;
        // Every other round holds its own reference to the device, so the
        // resetter cannot drop the memory under it and some exports
        // complete however slow the kernel; the other rounds race the
        // device going away.
        for (unsigned round = 0; !stop.load(); round++) {
            bool hold = round % 2 == 0;
            if (hold && aclrtSetDevice(1) != ACL_SUCCESS)
                continue;
            aclrtDrvMemHandle handle = nullptr;
            uint64_t shareable = 0;
            if (aclrtMallocPhysical(&handle, 4 * kKiB, &prop, 0) == ACL_SUCCESS) {
                if (aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                                    ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                    &shareable) == ACL_SUCCESS)
                    published++;
                (void)aclrtFreePhysical(handle);
            }
            if (hold)
                (void)aclrtResetDevice(1);
        }
    });
    std::thread resetter([&] {
        while (!stop.load()) {
            if (aclrtSetDevice(1) == ACL_SUCCESS)
                (void)aclrtResetDevice(1);
        }
    });
    // At least 100 forks, and on until the publisher got through once,
    // so that forks overlap a complete publish however slow the kernel.
    int forks = 0, clean = 0;
    for (; forks < 100 || (published.load() == 0 && forks < 5000); forks++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        ASSERT_GT(pid, 0);
        int status = 0;
        ASSERT_EQ(pid, waitpid(pid, &status, 0));
        clean += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    stop = true;
    publisher.join();
    resetter.join();
    EXPECT_EQ(forks, clean);
    EXPECT_GT(published.load(), 0);
}

} // namespace
