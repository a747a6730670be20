// SPDX-License-Identifier: MIT
/*
 * Cross-process hop latency through the aclrt API, run in the guest:
 * tools/vm-run -- aclrt_hop_bench
 *
 * Two processes, one per CPU, exchange keys once (untimed), then run three
 * ping-pongs in interleaved batches, every round timed by the initiator and
 * halved into a one-way hop:
 *   floor:  an eventfd ping-pong between the same two processes;
 *   notify: each side's stream waits on its own notify (aclrtWaitAndResetNotify);
 *           the initiator records the other's imported notify
 *           (aclrtRecordNotify) and returns from aclrtSynchronizeStream
 *           once the other has recorded back (goal <= 2x the floor);
 *   event:  each side's stream waits (aclrtStreamWaitEvent) on the other's
 *           IPC event (aclrtIpcOpenEventHandle), whose record is queued
 *           behind a gate; the initiator opens its gate, the other opens
 *           its own once its wait returns (goal <= 2.5x the floor).
 * Each ratio is the median of the per-batch ratios (of per-round medians),
 * printed with their spread and judged by bench_goal (a miss is reported,
 * not failed); like npuipc_sync_bench, which times the same hops through
 * the bare ioctls.
 */
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "bench_util.h"

namespace {

constexpr int kBatches = 7;
constexpr int kBatchRounds = 50;
constexpr int32_t kGateTimeoutS = 30;

void die(const char *what)
{
    std::fprintf(stderr, "aclrt_hop_bench: %s\n", what);
    std::exit(1);
}

void check(aclError err, const char *what)
{
    if (err != ACL_SUCCESS) {
        std::fprintf(stderr, "aclrt_hop_bench: %s: error %d (%s)\n", what, err, aclGetRecentErrMsg());
        std::exit(1);
    }
}

void pin_to_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set))
        die("sched_setaffinity");
}

// What one side owns and imported.
struct Side {
    int sock = -1; // to the peer: the untimed handshakes and the keys
    bool initiator = false;
    int efd_out = -1, efd_in = -1;
    aclrtStream waits = nullptr, records = nullptr, gated = nullptr, opener = nullptr;
    aclrtNotify my_notify = nullptr, peer_notify = nullptr, gate = nullptr;
    aclrtEvent my_event = nullptr, peer_event = nullptr;
};

void sync_peer(const Side &s)
{
    char c = 's';
    if (write(s.sock, &c, 1) != 1 || read(s.sock, &c, 1) != 1)
        die("peer handshake");
}

void swap_with_peer(const Side &s, const void *mine, void *theirs, size_t len)
{
    if (write(s.sock, mine, len) != static_cast<ssize_t>(len) ||
        read(s.sock, theirs, len) != static_cast<ssize_t>(len))
        die("key exchange");
}

void setup(Side &s)
{
    check(aclInit(nullptr), "aclInit");
    check(aclrtSetDevice(0), "aclrtSetDevice");
    for (aclrtStream *st : {&s.waits, &s.records, &s.gated, &s.opener})
        check(aclrtCreateStream(st), "aclrtCreateStream");
    check(aclrtCreateNotify(&s.my_notify, ACL_NOTIFY_DEFAULT), "aclrtCreateNotify");
    check(aclrtCreateNotify(&s.gate, ACL_NOTIFY_DEFAULT), "aclrtCreateNotify");
    check(aclrtCreateEventExWithFlag(&s.my_event, ACL_EVENT_IPC), "aclrtCreateEventExWithFlag");

    char mine[65] = {}, theirs[65] = {};
    check(aclrtNotifyGetExportKey(s.my_notify, mine, sizeof(mine),
                                  ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION),
          "aclrtNotifyGetExportKey");
    swap_with_peer(s, mine, theirs, sizeof(mine));
    check(aclrtNotifyImportByKey(&s.peer_notify, theirs, 0), "aclrtNotifyImportByKey");

    aclrtIpcEventHandle my_handle, peer_handle;
    check(aclrtIpcGetEventHandle(s.my_event, &my_handle), "aclrtIpcGetEventHandle");
    swap_with_peer(s, &my_handle, &peer_handle, sizeof(my_handle));
    check(aclrtIpcOpenEventHandle(peer_handle, &s.peer_event), "aclrtIpcOpenEventHandle");
    // Each keeps its objects alive until the other has imported them.
    sync_peer(s);
}

void eventfd_batch(const Side &s, double *samples)
{
    uint64_t v = 1;
    for (int i = 0; i < kBatchRounds; i++) {
        sync_peer(s); // as before each round of the others
        double t0 = bench_now_us();
        if (s.initiator && write(s.efd_out, &v, 8) != 8)
            die("eventfd write");
        if (read(s.efd_in, &v, 8) != 8)
            die("eventfd read");
        if (!s.initiator && write(s.efd_out, &v, 8) != 8)
            die("eventfd write");
        samples[i] = (bench_now_us() - t0) / 2;
    }
}

// One timed round trip, halved: the initiator releases the other side's
// queued wait, whose stream completes; the other releases back.
template <typename Release> double timed_hop(const Side &s, Release release)
{
    double t0 = bench_now_us();
    if (s.initiator)
        release();
    check(aclrtSynchronizeStream(s.waits), "aclrtSynchronizeStream");
    if (!s.initiator)
        release();
    return (bench_now_us() - t0) / 2;
}

void notify_batch(const Side &s, double *samples)
{
    for (int i = 0; i < kBatchRounds; i++) {
        check(aclrtWaitAndResetNotify(s.my_notify, s.waits, kGateTimeoutS), "aclrtWaitAndResetNotify");
        sync_peer(s); // both waits are queued
        samples[i] = timed_hop(s, [&] { check(aclrtRecordNotify(s.peer_notify, s.records), "aclrtRecordNotify"); });
    }
}

void event_batch(const Side &s, double *samples)
{
    for (int i = 0; i < kBatchRounds; i++) {
        check(aclrtWaitAndResetNotify(s.gate, s.gated, kGateTimeoutS), "gate the record");
        check(aclrtRecordEvent(s.my_event, s.gated), "aclrtRecordEvent");
        sync_peer(s); // both records are queued
        check(aclrtStreamWaitEvent(s.waits, s.peer_event), "aclrtStreamWaitEvent");
        sync_peer(s); // both waits are queued
        samples[i] = timed_hop(s, [&] { check(aclrtRecordNotify(s.gate, s.opener), "open the gate"); });
        check(aclrtSynchronizeStream(s.gated), "drain the record");
    }
}

void run(Side &s, std::vector<double> &floor, std::vector<double> &notify, std::vector<double> &event)
{
    floor.assign(kBatches * kBatchRounds, 0);
    notify = event = floor;
    for (int b = 0; b < kBatches; b++) {
        eventfd_batch(s, &floor[b * kBatchRounds]);
        notify_batch(s, &notify[b * kBatchRounds]);
        event_batch(s, &event[b * kBatchRounds]);
    }
    for (aclrtStream st : {s.records, s.opener})
        check(aclrtSynchronizeStream(st), "aclrtSynchronizeStream");
    sync_peer(s); // neither goes before the other's last wait has returned
}

double median(std::vector<double> v)
{
    return bench_median(v.data(), static_cast<int>(v.size()));
}

void report(const char *what, std::vector<double> subject, std::vector<double> floor, double goal)
{
    double lo, hi;
    double ratio = bench_batch_ratio(subject.data(), floor.data(), kBatches, kBatchRounds, &lo, &hi);
    std::printf("%-36s %7.1f us vs %7.1f us: %.2fx (spread %.2f-%.2f)\n", what, median(subject),
                median(floor), ratio, lo, hi);
    bench_goal(what, ratio, "<=", goal);
}

} // namespace

int main()
{
    int ab = eventfd(0, EFD_CLOEXEC), ba = eventfd(0, EFD_CLOEXEC), sv[2];
    if (ab < 0 || ba < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
        die("eventfd/socketpair");
    // Forked before either uses the runtime.
    pid_t child = fork();
    if (child < 0)
        die("fork");
    Side s;
    std::vector<double> floor, notify, event;
    if (child == 0) {
        // A side that dies closes its end: the other's next read fails.
        close(sv[0]);
        pin_to_cpu(1);
        s.sock = sv[1];
        s.efd_out = ba;
        s.efd_in = ab;
        setup(s);
        run(s, floor, notify, event);
        _exit(aclrtResetDeviceForce(0) == ACL_SUCCESS && aclFinalize() == ACL_SUCCESS ? 0 : 1);
    }
    close(sv[1]);
    pin_to_cpu(0);
    s.sock = sv[0];
    s.initiator = true;
    s.efd_out = ab;
    s.efd_in = ba;
    setup(s);
    run(s, floor, notify, event);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
        die("the peer process failed");
    std::printf("aclrt_hop_bench: one-way hops between two processes, %d interleaved batches of "
                "%d rounds; ratio: the median of the per-batch ratios\n",
                kBatches, kBatchRounds);
    report("notify hop (aclrt) vs eventfd hop", notify, floor, 2.0);
    report("event hop (aclrt) vs eventfd hop", event, floor, 2.5);
    check(aclrtResetDeviceForce(0), "aclrtResetDeviceForce");
    check(aclFinalize(), "aclFinalize");
    return 0;
}
