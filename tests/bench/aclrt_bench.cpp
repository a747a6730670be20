// SPDX-License-Identifier: MIT
/*
 * aclrt runtime benchmark, run in the guest: tools/vm-run -- aclrt_bench
 *
 * Each figure is the median of interleaved batches, and each ratio compares
 * the aclrt call with the floor measured in the same run:
 * 1. aclrtMalloc + aclrtFree against the bare driver calls they need
 *    (BO_CREATE, BO_INFO, mmap, munmap, GEM_CLOSE) at 4 KiB, 64 KiB and
 *    2 MiB (huge pages). Goal at 2 MiB: at most 1.3x.
 * 2. aclrtMemcpy host-to-device and device-to-host of 64 MiB against
 *    memcpy between two host buffers. Goal: at least 0.9x the bandwidth.
 * 3. aclrtSynchronizeStream of an empty stream against the bare WAIT ioctl
 *    on an empty stream, in batches that alternate which side runs first.
 *    Goal: at most 1.2x.
 * Each goal is judged by bench_goal: a miss is reported, not failed.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <vector>

#include "acl/acl.h"
#include "bench_util.h"
#include "npuipc/device.h"

namespace {

constexpr int kBatches = 7;
constexpr int kPerBatch = 200;
constexpr int kSyncBatches = 15;
constexpr int kSyncPerBatch = 5000;

void check_acl(aclError err, const char *what)
{
    if (err != ACL_SUCCESS) {
        std::fprintf(stderr, "aclrt_bench: %s: error %d\n", what, err);
        std::exit(1);
    }
}

void check_sys(int err, const char *what)
{
    if (err) {
        std::fprintf(stderr, "aclrt_bench: %s: %s\n", what, std::strerror(err));
        std::exit(1);
    }
}

template <typename T> T value_of(npuipc::Result<T> r, const char *what)
{
    check_sys(r.error(), what);
    return std::move(r).value();
}

struct Figure {
    std::vector<double> floor, subject;
    double median_ratio() const
    {
        std::vector<double> r;
        for (size_t i = 0; i < floor.size(); i++)
            r.push_back(subject[i] / floor[i]);
        return bench_median(r.data(), static_cast<int>(r.size()));
    }
    double min_ratio() const
    {
        double m = 1e30;
        for (size_t i = 0; i < floor.size(); i++)
            m = std::min(m, subject[i] / floor[i]);
        return m;
    }
    double max_ratio() const
    {
        double m = 0;
        for (size_t i = 0; i < floor.size(); i++)
            m = std::max(m, subject[i] / floor[i]);
        return m;
    }
};

// The driver calls an allocation needs, through the native API's one-ioctl
// wrappers: BO_CREATE, BO_INFO, mmap; munmap, GEM_CLOSE.
double bare_alloc_free_us(const npuipc::Device &dev, uint64_t size, npuipc::PageClass page_class)
{
    double t0 = bench_now_us();
    for (int i = 0; i < kPerBatch; i++) {
        uint32_t handle = value_of(dev.create_buffer(size, page_class), "BO_CREATE");
        npuipc::BufferInfo info = value_of(dev.buffer_info(handle), "BO_INFO");
        npuipc::Mapping map = value_of(npuipc::Mapping::map(dev, info.mmap_offset, size), "mmap");
        map.reset();
        check_sys(dev.close_buffer(handle).error(), "GEM_CLOSE");
    }
    return (bench_now_us() - t0) / kPerBatch;
}

double acl_alloc_free_us(size_t size, aclrtMemMallocPolicy policy)
{
    double t0 = bench_now_us();
    for (int i = 0; i < kPerBatch; i++) {
        void *p;
        check_acl(aclrtMalloc(&p, size, policy), "aclrtMalloc");
        check_acl(aclrtFree(p), "aclrtFree");
    }
    return (bench_now_us() - t0) / kPerBatch;
}

// Prints the medians of both sides and the median ratio subject/floor; judges
// it against @limit by @cmp ("<=" or ">="), unless @cmp is null (no goal).
void report(const char *what, const char *floor_name, const char *subject_name, const Figure &f,
            const char *cmp, double limit)
{
    std::vector<double> fl = f.floor, su = f.subject;
    std::printf("%-46s %s %9.2f us, %s %9.2f us: %.2fx (spread %.2f-%.2f)\n", what, floor_name,
                bench_median(fl.data(), static_cast<int>(fl.size())), subject_name,
                bench_median(su.data(), static_cast<int>(su.size())), f.median_ratio(),
                f.min_ratio(), f.max_ratio());
    if (cmp)
        bench_goal(what, f.median_ratio(), cmp, limit);
}

} // namespace

int main()
{
    npuipc::Result<npuipc::Device> opened = npuipc::Device::open(0);
    if (!opened.ok()) {
        std::fprintf(stderr, "aclrt_bench: no npuipc device (is npuipc.ko loaded?)\n");
        return 1;
    }
    const npuipc::Device &drv = opened.value();
    check_acl(aclrtSetDevice(0), "aclrtSetDevice");

    std::printf("aclrt_bench: medians of %d interleaved batches; ratios against a floor of the same run\n",
                kBatches);
    struct {
        const char *name;
        uint64_t size;
        npuipc::PageClass page_class;
        aclrtMemMallocPolicy policy;
        const char *cmp; // the goal, if any
        double limit;
    } sizes[] = {
        {"aclrtMalloc+Free 4 KiB vs driver calls", 4096, npuipc::PageClass::Normal,
         ACL_MEM_MALLOC_NORMAL_ONLY, nullptr, 0},
        {"aclrtMalloc+Free 64 KiB vs driver calls", 65536, npuipc::PageClass::Normal,
         ACL_MEM_MALLOC_NORMAL_ONLY, nullptr, 0},
        {"aclrtMalloc+Free 2 MiB vs driver calls", 2 << 20, npuipc::PageClass::Huge,
         ACL_MEM_MALLOC_HUGE_ONLY, "<=", 1.3},
    };
    for (auto &s : sizes) {
        Figure f;
        for (int b = 0; b < kBatches; b++) {
            f.floor.push_back(bare_alloc_free_us(drv, s.size, s.page_class));
            f.subject.push_back(acl_alloc_free_us(s.size, s.policy));
        }
        report(s.name, "driver", "aclrt", f, s.cmp, s.limit);
    }

    // Bandwidth: time per 64 MiB copy; the ratio is floor time / aclrt time.
    const size_t copy_size = 64u << 20;
    std::vector<char> host_a(copy_size, 1), host_b(copy_size, 2);
    void *dev;
    check_acl(aclrtMalloc(&dev, copy_size, ACL_MEM_MALLOC_HUGE_ONLY), "aclrtMalloc 64 MiB");
    std::memset(dev, 3, copy_size); // fault it in: steady-state bandwidth
    Figure h2d, d2h;
    for (int b = 0; b < kBatches; b++) {
        double t0 = bench_now_us();
        std::memcpy(host_b.data(), host_a.data(), copy_size);
        double t1 = bench_now_us();
        check_acl(aclrtMemcpy(dev, copy_size, host_a.data(), copy_size, ACL_MEMCPY_HOST_TO_DEVICE),
                  "aclrtMemcpy H2D");
        double t2 = bench_now_us();
        check_acl(aclrtMemcpy(host_b.data(), copy_size, dev, copy_size, ACL_MEMCPY_DEVICE_TO_HOST),
                  "aclrtMemcpy D2H");
        double t3 = bench_now_us();
        // A bandwidth ratio is the inverse of the time ratio: the aclrt
        // time is the "floor" here, so the ratio reads memcpy/aclrt time.
        h2d.floor.push_back(t2 - t1);
        h2d.subject.push_back(t1 - t0);
        d2h.floor.push_back(t3 - t2);
        d2h.subject.push_back(t1 - t0);
    }
    report("aclrtMemcpy H2D 64 MiB, bandwidth vs memcpy", "aclrt", "memcpy", h2d, ">=", 0.9);
    report("aclrtMemcpy D2H 64 MiB, bandwidth vs memcpy", "aclrt", "memcpy", d2h, ">=", 0.9);
    check_acl(aclrtFree(dev), "aclrtFree");

    aclrtStream stream;
    check_acl(aclrtCreateStream(&stream), "aclrtCreateStream");
    uint32_t bare_stream = value_of(drv.create_object(npuipc::ObjectType::Stream), "OBJ_CREATE");
    // A call takes about 2 us: more and longer batches than above, and
    // each batch swaps which side runs first, so that neither always
    // follows the other's cache and timer state.
    Figure sync;
    for (int b = 0; b < kSyncBatches; b++) {
        double floor_us = 0, subject_us = 0;
        for (int side = 0; side < 2; side++) {
            double t0 = bench_now_us();
            if ((side == 0) == (b % 2 == 0)) {
                for (int i = 0; i < kSyncPerBatch; i++)
                    (void)value_of(drv.wait(bare_stream, -1), "WAIT");
                floor_us = (bench_now_us() - t0) / kSyncPerBatch;
            } else {
                for (int i = 0; i < kSyncPerBatch; i++)
                    check_acl(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
                subject_us = (bench_now_us() - t0) / kSyncPerBatch;
            }
        }
        sync.floor.push_back(floor_us);
        sync.subject.push_back(subject_us);
    }
    report("aclrtSynchronizeStream (empty) vs WAIT ioctl", "WAIT", "aclrt", sync, "<=", 1.2);
    check_acl(aclrtDestroyStream(stream), "aclrtDestroyStream");
    check_sys(drv.destroy_object(bare_stream).error(), "OBJ_DESTROY");
    check_acl(aclrtResetDeviceForce(0), "aclrtResetDeviceForce");
    return 0;
}
