// SPDX-License-Identifier: MIT
// Host functions (aclrt_stream(3)): run in the stream's order, on the
// runtime's thread or on one the application subscribed, each holding the
// stream's later work until it returns; kept apart from callbacks, with
// CANN's codes.
#include "acl_test_util.h"

#include <pthread.h>
#include <sys/wait.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace acltest;

namespace {

class AclHostFuncTest : public AclTest {};

// What a host function saw, and a gate it may wait at.
struct Probe {
    std::atomic<int> calls{0};
    std::atomic<uint64_t> thread{0};
    std::atomic<int> first_byte{-1};
    const uint8_t *watched = nullptr;
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false, go = true;

    static void Run(void *arg)
    {
        auto *p = static_cast<Probe *>(arg);
        p->thread = static_cast<uint64_t>(pthread_self());
        if (p->watched)
            p->first_byte = p->watched[0];
        std::unique_lock<std::mutex> lock(p->mu);
        p->entered = true;
        p->cv.notify_all();
        p->cv.wait_for(lock, std::chrono::seconds(30), [p] { return p->go; });
        p->calls++;
    }
};

TEST_F(AclHostFuncTest, AHostFunctionRunsInStreamOrderOnAnotherThreadAndHoldsTheStream)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    void *d = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
    Probe probe;
    probe.watched = static_cast<const uint8_t *>(d);
    probe.go = false;
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x11, 4096, s));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(s, Probe::Run, &probe));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(d, 4096, 0x22, 4096, s));
    {
        std::unique_lock<std::mutex> lock(probe.mu);
        ASSERT_TRUE(probe.cv.wait_for(lock, std::chrono::seconds(10), [&] { return probe.entered; }));
    }
    EXPECT_EQ(0x11, probe.first_byte.load()) << "the work queued before it had run";
    EXPECT_NE(static_cast<uint64_t>(pthread_self()), probe.thread.load());
    // It holds the stream: the fill behind it has not run.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    ASSERT_EQ(ACL_SUCCESS, aclrtStreamQuery(s, &status));
    EXPECT_EQ(ACL_STREAM_STATUS_NOT_READY, status);
    EXPECT_EQ(0x11, static_cast<const uint8_t *>(d)[0]);
    {
        std::lock_guard<std::mutex> lock(probe.mu);
        probe.go = true;
        probe.cv.notify_all();
    }
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    EXPECT_EQ(1, probe.calls.load());
    EXPECT_TRUE(BytesAre(d, 4096, 0x22));
    // The same thread runs the next one, on the default stream too.
    Probe again;
    const uint64_t runtime_thread = probe.thread.load();
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(nullptr, Probe::Run, &again));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(nullptr, kSyncTimeoutMs));
    EXPECT_EQ(1, again.calls.load());
    EXPECT_EQ(runtime_thread, again.thread.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(d));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

TEST_F(AclHostFuncTest, HostFunctionsAndCallbacksKeepToTheirOwnStreams)
{
    aclrtStream callbacks = nullptr, funcs = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&callbacks));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&funcs));
    const uint64_t self = static_cast<uint64_t>(pthread_self());
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeReport(self, callbacks));
    Probe probe;
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtLaunchHostFunc(callbacks, Probe::Run, &probe));
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(funcs, Probe::Run, &probe));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE,
              aclrtLaunchCallback(Probe::Run, &probe, ACL_CALLBACK_BLOCK, funcs));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtSubscribeReport(self, funcs));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(funcs, kSyncTimeoutMs));
    EXPECT_EQ(1, probe.calls.load());
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtLaunchHostFunc(funcs, nullptr, &probe));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtLaunchHostFunc(reinterpret_cast<aclrtStream>(0x1234), Probe::Run, &probe));
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeReport(self, callbacks));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(callbacks));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(funcs));
}

// A thread of the application subscribes a stream's host functions and
// runs them with aclrtProcessHostFunc.
TEST_F(AclHostFuncTest, ASubscribedThreadRunsTheStreamsHostFunctions)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    aclrtContext ctx = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&ctx));
    std::atomic<bool> stop{false}, subscribed{false};
    std::atomic<uint64_t> worker_id{0};
    std::atomic<aclError> bad_process{-1}, wrong_kind{-1};
    std::thread worker([&] {
        EXPECT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(ctx));
        worker_id = static_cast<uint64_t>(pthread_self());
        while (!subscribed.load())
            std::this_thread::yield();
        // Subscribed for host functions, not callbacks.
        wrong_kind = aclrtProcessReport(100);
        while (!stop.load()) {
            aclError rc = aclrtProcessHostFunc(100);
            if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT && rc != ACL_ERROR_RT_THREAD_SUBSCRIBE)
                ADD_FAILURE() << "aclrtProcessHostFunc: " << rc;
            if (rc == ACL_ERROR_RT_THREAD_SUBSCRIBE)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        bad_process = aclrtProcessHostFunc(0);
    });
    while (!worker_id.load())
        std::this_thread::yield();
    ASSERT_EQ(ACL_SUCCESS, aclrtSubscribeHostFunc(worker_id, s));
    subscribed = true;
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtSubscribeReport(worker_id, s));
    Probe probe;
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(s, Probe::Run, &probe));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(s, kSyncTimeoutMs));
    EXPECT_EQ(1, probe.calls.load());
    EXPECT_EQ(worker_id.load(), probe.thread.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtUnSubscribeHostFunc(worker_id, s));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_SUBSCRIBE, aclrtUnSubscribeHostFunc(worker_id, s));
    stop = true;
    worker.join();
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, bad_process.load());
    EXPECT_EQ(ACL_ERROR_RT_THREAD_SUBSCRIBE, wrong_kind.load());
    EXPECT_EQ(ACL_ERROR_RT_THREAD_SUBSCRIBE, aclrtProcessHostFunc(100)) << "this thread subscribed nothing";
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSubscribeHostFunc(worker_id, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtUnSubscribeHostFunc(worker_id, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(s));
}

// A stream destroyed with a function still queued behind held work lets
// it go: the function never runs, and nothing waits for it.
TEST_F(AclHostFuncTest, AStreamDestroyedWithAQueuedHostFunctionDropsIt)
{
    aclrtStream s = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&s));
    Gate gate;
    ASSERT_EQ(ACL_SUCCESS, gate.Hold(s));
    Probe probe;
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(s, Probe::Run, &probe));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(s));
    ASSERT_EQ(ACL_SUCCESS, gate.Release());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(0, probe.calls.load());
    // The runtime's thread goes on serving other streams.
    aclrtStream next = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&next));
    Probe later;
    ASSERT_EQ(ACL_SUCCESS, aclrtLaunchHostFunc(next, Probe::Run, &later));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(next, kSyncTimeoutMs));
    EXPECT_EQ(1, later.calls.load());
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(next));
}

// glibc gives a new thread the id of one that ended: the runtime's thread,
// started after a thread subscribed for callbacks and ended without
// unsubscribing, must not take that thread's subscription for its own.
// In a fork child, where the runtime's thread is not started yet.
TEST_F(AclHostFuncTest, TheRuntimesThreadIsNotMistakenForAnEndedThreadOfTheSameId)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        aclrtStream callbacks = nullptr, funcs = nullptr;
        if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
            aclrtCreateStream(&callbacks) != ACL_SUCCESS || aclrtCreateStream(&funcs) != ACL_SUCCESS)
            _exit(10);
        aclrtContext ctx = nullptr;
        (void)aclrtGetCurrentContext(&ctx);
        aclError subscribed = -1;
        std::thread ended([&] {
            (void)aclrtSetCurrentContext(ctx);
            subscribed = aclrtSubscribeReport(static_cast<uint64_t>(pthread_self()), callbacks);
        });
        ended.join();
        if (subscribed != ACL_SUCCESS)
            _exit(11);
        Probe probe;
        if (aclrtLaunchHostFunc(funcs, Probe::Run, &probe) != ACL_SUCCESS)
            _exit(12);
        if (aclrtSynchronizeStreamWithTimeout(funcs, kSyncTimeoutMs) != ACL_SUCCESS || probe.calls != 1)
            _exit(13);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status)) << "the step that failed";
}

} // namespace
