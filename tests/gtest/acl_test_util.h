// SPDX-License-Identifier: MIT
// Shared helpers of the aclrt GoogleTest suites (tests/gtest/acl_*_test.cpp).
// They run in the VM (tools/vm-run) against npuipc.ko with its default
// parameters: two devices of 256 MiB each.
//
// Every test starts from a clean runtime and leaves it clean: AclTest sets
// device 0 in SetUp and force-resets, in TearDown, every device the test set,
// which releases every stream, event, notify, context and allocation the test
// made on it (the library's documented semantics), so a test that fails
// half-way leaves nothing behind for the next one. Before that reset, the
// process's npuipc state must be what it was when the test started
// (npuipc_state.h): what the test released, the library released too.
#ifndef NPUIPC_ACL_TEST_UTIL_H
#define NPUIPC_ACL_TEST_UTIL_H

#include <acl/acl.h>

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <thread>

#include "npuipc/device.h"
#include "npuipc_state.h"

namespace acltest {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

// Bound of every synchronize a test expects to return at once (ms). Work in
// these tests takes milliseconds; 10 s leaves room for QEMU TCG.
constexpr int32_t kSyncTimeoutMs = 10000;
// Timeout of a notify wait a test releases itself (aclrtWaitAndResetNotify
// counts seconds): long enough never to fire in a passing test, short enough
// that a failing one ends.
constexpr uint32_t kGateTimeoutS = 30;

// Number of npuipc devices the driver offers (0 when the module is absent).
inline size_t DriverDeviceCount()
{
    auto devices = npuipc::list_devices();
    return devices.ok() ? devices.value().size() : 0;
}

// The driver's budget of device `index` (mem_mib of the module), 0 if none.
inline uint64_t DriverMemTotal(uint32_t index)
{
    auto devices = npuipc::list_devices();
    if (!devices.ok() || index >= devices.value().size())
        return 0;
    return devices.value()[index].mem_total;
}

// Open file descriptors of process `pid` (0: this one); a leak shows as
// growth. The runtime's log file is not counted: it is made by the first
// line logged (without ASCEND_LOG_PRINT_TO_STDOUT), whichever test that is.
inline int CountOpenFds(pid_t pid = 0)
{
    std::string path = pid ? "/proc/" + std::to_string(pid) + "/fd" : "/proc/self/fd";
    DIR *dir = opendir(path.c_str());
    if (!dir) {
        ADD_FAILURE() << "opendir(" << path << "): " << strerror(errno);
        return -1;
    }
    int n = 0;
    while (const struct dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        char target[PATH_MAX];
        ssize_t len = readlink((path + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
        if (len > 0 && std::string(target, static_cast<size_t>(len)).find("/debug/plog/plog-") !=
                           std::string::npos)
            continue;
        n++;
    }
    closedir(dir);
    return pid ? n : n - 1; // our own listing holds the directory open
}

// Free bytes of the current device's budget, as aclrtGetMemInfo reports them.
inline size_t DeviceFreeMem()
{
    size_t free = 0, total = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
    return free;
}

// Total bytes of the current device's budget.
inline size_t DeviceTotalMem()
{
    size_t free = 0, total = 0;
    EXPECT_EQ(ACL_SUCCESS, aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
    return total;
}

// Checks every byte; reports the first that differs.
// A failure naming the first wrong byte. One string: AssertionResult
// formats each << on its own, so std::hex would not reach the values.
inline ::testing::AssertionResult WrongByte(size_t i, size_t size, uint8_t got, uint8_t expected)
{
    char what[96];
    std::snprintf(what, sizeof(what), "byte %zu of %zu is 0x%02x, expected 0x%02x", i, size,
                  unsigned(got), unsigned(expected));
    return ::testing::AssertionFailure() << what;
}

inline ::testing::AssertionResult BytesAre(const void *p, size_t size, uint8_t value)
{
    const uint8_t *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < size; i++)
        if (b[i] != value)
            return WrongByte(i, size, b[i], value);
    return ::testing::AssertionSuccess();
}

// A pattern that differs from byte to byte, so misplaced bytes show.
inline uint8_t PatternByte(size_t i, uint8_t seed)
{
    return static_cast<uint8_t>((i * 31 + seed) ^ (i >> 8));
}

inline void FillPattern(void *p, size_t size, uint8_t seed)
{
    uint8_t *b = static_cast<uint8_t *>(p);
    for (size_t i = 0; i < size; i++)
        b[i] = PatternByte(i, seed);
}

inline ::testing::AssertionResult HasPattern(const void *p, size_t size, uint8_t seed)
{
    const uint8_t *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < size; i++)
        if (b[i] != PatternByte(i, seed))
            return WrongByte(i, size, b[i], PatternByte(i, seed));
    return ::testing::AssertionSuccess();
}

// Polls `done` until it holds or `timeout` passes; true if it held.
inline bool WaitUntil(const std::function<bool()> &done,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(kSyncTimeoutMs))
{
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline)
            return done();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

inline double MsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Writes `content` to a new file under /tmp and returns its path.
inline std::string WriteTempFile(const std::string &content)
{
    char path[] = "/tmp/acl_test_config_XXXXXX.json";
    int fd = mkstemps(path, 5);
    if (fd < 0) {
        ADD_FAILURE() << "mkstemps: " << strerror(errno);
        return "";
    }
    if (write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()))
        ADD_FAILURE() << "write " << path << ": " << strerror(errno);
    close(fd);
    return path;
}

// An enum argument holding any int, as a C caller may pass: static_cast of
// a value outside an enum's range is undefined in C++, copying the bytes is
// not.
template <typename E>
inline E RawEnum(int value)
{
    static_assert(sizeof(E) == sizeof(int), "the aclrt enums are int-sized");
    E e;
    memcpy(&e, &value, sizeof(e));
    return e;
}

inline uint64_t ThisThreadId()
{
    return static_cast<uint64_t>(pthread_self());
}

// Device 0 set before each test; every device the test sets is force-reset
// after it.
class AclTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        device_count_ = DriverDeviceCount();
        if (device_count_ == 0)
            GTEST_SKIP() << "npuipc.ko is not loaded or has no device";
        if (set_device_in_setup_) {
            ASSERT_EQ(ACL_SUCCESS, UseDevice(0));
        }
        at_start_ = TakeSettledNpuipcState(std::chrono::milliseconds(kSyncTimeoutMs));
        state_taken_ = true;
    }

    void TearDown() override
    {
        // Before the force reset, which would release what leaked.
        if (state_taken_) {
            NpuipcState now;
            EXPECT_TRUE(NpuipcStateReturnsTo(at_start_, now, std::chrono::milliseconds(kSyncTimeoutMs)))
                << NpuipcLeftBehind(at_start_, now);
        }
        for (const auto &d : devices_) {
            aclError rc = aclrtResetDeviceForce(d.first);
            if (!d.second) {
                EXPECT_EQ(ACL_SUCCESS, rc) << "force reset of device " << d.first;
            }
        }
        devices_.clear();
    }

    // aclrtSetDevice, remembering the device for TearDown.
    aclError UseDevice(int32_t device)
    {
        aclError rc = aclrtSetDevice(device);
        if (rc == ACL_SUCCESS)
            devices_[device] = false;
        return rc;
    }

    // Remembers a device the test holds by other means (aclrtCreateContext,
    // a config's defaultDevice, another thread's aclrtSetDevice).
    void TrackDevice(int32_t device)
    {
        devices_.emplace(device, false);
    }

    // The test released `device` itself: TearDown still force-resets it (in
    // case the test set it again) but ignores the result.
    void MarkReset(int32_t device)
    {
        devices_[device] = true;
    }

    size_t device_count_ = 0;
    bool set_device_in_setup_ = true;

private:
    std::map<int32_t, bool> devices_; // device -> already reset by the test
    NpuipcState at_start_;
    bool state_taken_ = false;
};

#define ACL_NEED_DEVICES(n)                                                                   \
    do {                                                                                      \
        if (device_count_ < (n))                                                              \
            GTEST_SKIP() << "needs " << (n) << " npuipc devices, found " << device_count_;    \
    } while (0)

// A point a test controls on a stream: Hold() queues a wait on a notify,
// so everything queued after it on that stream waits, until Release()
// records the notify from the gate's own stream. Must be made on a thread
// with a current context. Cleanup in the destructor ignores results: the
// fixture's force reset is the backstop when a test fails half-way.
class Gate {
public:
    Gate()
    {
        EXPECT_EQ(ACL_SUCCESS, aclrtCreateNotify(&notify_, ACL_NOTIFY_DEFAULT));
        EXPECT_EQ(ACL_SUCCESS, aclrtCreateStream(&releaser_));
    }

    ~Gate()
    {
        if (releaser_)
            aclrtDestroyStreamForce(releaser_);
        if (notify_)
            aclrtDestroyNotify(notify_);
    }

    Gate(const Gate &) = delete;
    Gate &operator=(const Gate &) = delete;

    aclError Hold(aclrtStream stream, uint32_t timeout_s = kGateTimeoutS)
    {
        return aclrtWaitAndResetNotify(notify_, stream, timeout_s);
    }

    aclError Release()
    {
        aclError rc = aclrtRecordNotify(notify_, releaser_);
        if (rc != ACL_SUCCESS)
            return rc;
        return aclrtSynchronizeStreamWithTimeout(releaser_, kSyncTimeoutMs);
    }

    aclrtNotify notify() const { return notify_; }

private:
    aclrtNotify notify_ = nullptr;
    aclrtStream releaser_ = nullptr;
};

// The host thread that runs a stream's callbacks, as CANN asks: a thread
// loops on aclrtProcessReport(100) until told to stop, and the test
// subscribes it to the stream with its pthread_self() value. The thread
// starts looping only once the subscription is in place, and Stop() joins
// it before unsubscribing, so the loop never sees an unsubscribed state.
class ReportThread {
public:
    explicit ReportThread(aclrtStream stream) : stream_(stream)
    {
        // The promises are members: they outlive the thread, which is joined
        // before they are destroyed.
        std::future<uint64_t> id_future = id_promise_.get_future();
        std::shared_future<bool> go = go_.get_future().share();
        thread_ = std::thread([this, go] {
            id_promise_.set_value(ThisThreadId());
            // Bounded: a test that never subscribes must not hang here.
            if (go.wait_for(std::chrono::milliseconds(kSyncTimeoutMs)) != std::future_status::ready ||
                !go.get())
                return;
            while (!stop_.load()) {
                aclError rc = aclrtProcessReport(100);
                if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT) {
                    unexpected_.fetch_add(1);
                    last_unexpected_.store(rc);
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
            }
        });
        id_ = id_future.get();
        subscribe_result_ = aclrtSubscribeReport(id_, stream_);
        go_.set_value(subscribe_result_ == ACL_SUCCESS);
    }

    ~ReportThread() { Stop(); }

    ReportThread(const ReportThread &) = delete;
    ReportThread &operator=(const ReportThread &) = delete;

    // Stops and joins the thread; returns aclrtUnSubscribeReport's result
    // (ACL_SUCCESS if the subscription had failed, as there is none to end).
    aclError Stop()
    {
        if (!thread_.joinable())
            return ACL_SUCCESS;
        stop_.store(true);
        thread_.join();
        if (subscribe_result_ != ACL_SUCCESS)
            return ACL_SUCCESS;
        return aclrtUnSubscribeReport(id_, stream_);
    }

    aclError subscribe_result() const { return subscribe_result_; }
    uint64_t id() const { return id_; }
    // aclrtProcessReport results other than ACL_SUCCESS and
    // ACL_ERROR_RT_REPORT_TIMEOUT, and the last of them.
    int unexpected() const { return unexpected_.load(); }
    aclError last_unexpected() const { return last_unexpected_.load(); }

private:
    aclrtStream stream_;
    std::promise<uint64_t> id_promise_;
    std::promise<bool> go_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> unexpected_{0};
    std::atomic<aclError> last_unexpected_{ACL_SUCCESS};
    uint64_t id_ = 0;
    aclError subscribe_result_ = ACL_ERROR_FAILURE;
};

} // namespace acltest

#endif // NPUIPC_ACL_TEST_UTIL_H
