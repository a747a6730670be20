// SPDX-License-Identifier: MIT
/*
 * Fabric import benchmark, on both servers of a `tools/vm-pair
 * --bind-window --fabric-daemon` (tools/bench runs it after the one-guest
 * benchmarks).
 *
 * Server 0, and a child process on server 1, each export 2 MiB of physical
 * memory (4 KiB pages) as a FABRIC handle without PID validation. Server 1
 * imports each (aclrtMemImportFromShareableHandleV2, then aclrtFreePhysical)
 * in interleaved batches, one process through the same local daemon:
 *   floor: the same-server import (the child's handle: the local daemon
 *          judges it and hands over the memory it keeps);
 *   subject: the cross-server import (server 0's handle: the local daemon
 *          asks server 0's over gRPC, then maps the range, FABRIC_IMPORT).
 * The ratio's goal, <= 50x, says that crossing servers costs a round trip
 * on the link and not much more. A miss is reported, not failed.
 */
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "bench_util.h"
#include "pair_link.h"

namespace {

constexpr int kBatches = 8;
constexpr int kRounds = 20;
constexpr size_t kSize = 2u << 20;
constexpr int kPort = 7793;

bool ok(aclError err, const char *what)
{
    if (err != ACL_SUCCESS)
        std::fprintf(stderr, "fabric_import_bench: %s: %d (%s)\n", what, err, aclGetRecentErrMsg());
    return err == ACL_SUCCESS;
}

// 2 MiB of physical memory on device 0 exported as a FABRIC handle.
bool export_memory(aclrtDrvMemHandle *memory, aclrtMemFabricHandle *handle)
{
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.memAttr = ACL_HBM_MEM_NORMAL;
    return ok(aclInit(nullptr), "aclInit") && ok(aclrtSetDevice(0), "aclrtSetDevice") &&
           ok(aclrtMallocPhysical(memory, kSize, &prop, 0), "aclrtMallocPhysical") &&
           ok(aclrtMemExportToShareableHandleV2(*memory, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, handle),
              "aclrtMemExportToShareableHandleV2");
}

// One import and its free, in microseconds; < 0 on failure.
double import_once(const aclrtMemFabricHandle &h)
{
    aclrtMemFabricHandle copy = h;
    aclrtDrvMemHandle imported = nullptr;
    double t0 = bench_now_us();
    if (!ok(aclrtMemImportFromShareableHandleV2(&copy, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported),
            "aclrtMemImportFromShareableHandleV2") ||
        !ok(aclrtFreePhysical(imported), "aclrtFreePhysical"))
        return -1;
    return bench_now_us() - t0;
}

int owner(int link)
{
    aclrtDrvMemHandle memory = nullptr;
    aclrtMemFabricHandle handle = {}, unused = {};
    if (!export_memory(&memory, &handle) || !npuipc_pair::exchange(link, handle, unused))
        return 1;
    char done = 0, ack = 'd';
    // The importer's word that it is done (or gone).
    bool told = npuipc_pair::exchange(link, ack, done);
    aclrtFreePhysical(memory);
    return told && done == 'd' ? 0 : 1;
}

int importer(int link)
{
    int to_parent[2], from_parent[2];
    if (::pipe(to_parent) || ::pipe(from_parent))
        return 1;
    pid_t child = ::fork();
    if (child == 0) {
        // The same-server exporter: its memory lives until the parent is done.
        ::close(to_parent[0]);
        ::close(from_parent[1]);
        aclrtDrvMemHandle memory = nullptr;
        aclrtMemFabricHandle handle = {};
        bool made = export_memory(&memory, &handle);
        char go;
        if (!made || ::write(to_parent[1], &handle, sizeof(handle)) != sizeof(handle) ||
            ::read(from_parent[0], &go, 1) < 0)
            ::_exit(1);
        ::_exit(0);
    }
    // The child's ends: its exit ends the parent's read.
    ::close(to_parent[1]);
    ::close(from_parent[0]);
    aclrtMemFabricHandle local = {}, remote = {}, unused = {};
    bool ready = child > 0 && ::read(to_parent[0], &local, sizeof(local)) == sizeof(local) &&
                 npuipc_pair::exchange(link, unused, remote) && ok(aclInit(nullptr), "aclInit") &&
                 ok(aclrtSetDevice(0), "aclrtSetDevice");
    std::vector<double> same(kBatches * kRounds), cross(kBatches * kRounds);
    for (int i = 0; ready && i < kBatches * kRounds; i++) {
        same[i] = import_once(local);
        cross[i] = import_once(remote);
        ready = same[i] > 0 && cross[i] > 0;
    }
    char done = 'd', ack = 0;
    npuipc_pair::exchange(link, done, ack);
    ::close(from_parent[1]);
    int status = 0;
    if (child > 0)
        ::waitpid(child, &status, 0);
    if (!ready || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "fabric_import_bench: could not measure\n");
        return 1;
    }
    double lo, hi, ratio = bench_batch_ratio(cross.data(), same.data(), kBatches, kRounds, &lo, &hi);
    std::printf("fabric import of 2 MiB (import + free), medians of %d batches of %d:\n", kBatches,
                kRounds);
    std::printf("  same server (floor): %.0f us\n", bench_median(same.data(), kBatches * kRounds));
    std::printf("  across servers: %.0f us, %.2fx the floor (batches %.2fx to %.2fx)\n",
                bench_median(cross.data(), kBatches * kRounds), ratio, lo, hi);
    bench_goal("cross-server fabric import against a same-server one", ratio, "<=", 50.0);
    return 0;
}

} // namespace

int main()
{
    int link = npuipc_pair::link_to_peer(kPort);
    if (link < 0) {
        std::fprintf(stderr, "fabric_import_bench: no link to the other server\n");
        return 1;
    }
    return npuipc_pair::me() == 0 ? owner(link) : importer(link);
}
