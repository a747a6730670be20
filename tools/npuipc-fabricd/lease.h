// SPDX-License-Identifier: MIT
// Leases between fabric daemons (Documentation/fabric.md, Lifetime across
// servers). The owner's daemon grants an import and holds the memory for
// as long as the grant may run (Grants); the importer's daemon renews its
// grants and gives each import a term in its kernel (FABRIC_IMPORT's
// lease_ms, FABRIC_RENEW), which revokes it when not renewed in time
// (Leases). The importer's term is counted from before it asked, the
// owner's from after it answered, and the owner's is the longer: an
// importer's kernel has always revoked before its owner lets the memory go.
#ifndef NPUIPC_FABRICD_LEASE_H
#define NPUIPC_FABRICD_LEASE_H

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "fabric.grpc.pb.h"
#include "npuipc/unique_fd.h"

namespace npuipc_fabricd {

using Clock = std::chrono::steady_clock;
using Stub = npuipc::fabric::v1::Fabric::Stub;

// An import's term in its kernel: it is revoked this long after the
// importer asked for the grant, or for its last renewal that came back.
constexpr std::chrono::milliseconds kLeaseTerm{3000};
// An import is made only with this much of its term left.
constexpr std::chrono::milliseconds kLeastTermLeft{1000};
// Each grant is renewed this often; a renewal or release waits this long at most.
constexpr std::chrono::milliseconds kRenewEvery{1000};
// An owner drops a grant not renewed for this long, and its kernel keeps
// the memory this long after each renewal (FABRIC_HOLD), even when the
// daemon dies.
constexpr std::chrono::milliseconds kGrantTerm{6000};
static_assert(kGrantTerm >= 2 * kLeaseTerm, "an importer revokes well before its owner lets go");
static_assert(kLeastTermLeft >= kRenewEvery, "a new import lives to its first renewal");
// Grant ids one Renew or Release names at most, and grants one server holds.
constexpr int kMaxGrantsPerCall = 4096;
constexpr size_t kMaxGrantsPerServer = 4096;

// The owner's side: what it granted to other servers.
class Grants {
public:
    explicit Grants(int window_fd) : window_fd_(window_fd) {}

    // Grants server `sdid` the memory of `dmabuf` (a duplicate, kept with
    // the grant): 0 and its id, or a positive errno (ENOSPC past
    // kMaxGrantsPerServer).
    int add(uint32_t sdid, npuipc::UniqueFd dmabuf, uint64_t *id);
    // Renews those of server `sdid` named: the ids it does not know.
    std::vector<uint64_t> renew(uint32_t sdid, const std::vector<uint64_t> &ids);
    void release(uint32_t sdid, const std::vector<uint64_t> &ids);
    // Drops, every half second, the grants past their term. Never returns.
    void expire_forever();

private:
    struct Grant {
        uint32_t sdid;
        npuipc::UniqueFd dmabuf;
        Clock::time_point expires;
    };
    bool hold(int dmabuf);

    int window_fd_;
    // Protects grants_
    std::mutex mu_;
    std::map<uint64_t, Grant> grants_;
};

// The importer's side: the lease fds of its imports (FABRIC_IMPORT's).
class Leases {
public:
    Leases(int window_fd, uint32_t own_sdid,
           const std::map<uint32_t, std::unique_ptr<Stub>> *stubs)
        : window_fd_(window_fd), own_sdid_(own_sdid), stubs_(stubs)
    {
    }

    // An import of grant `id` of server `owner`, asked at `asked`, whose
    // kernel term is `term` (at most kLeaseTerm) from then.
    void add(uint32_t owner, uint64_t id, npuipc::UniqueFd lease_fd, Clock::time_point asked,
             std::chrono::milliseconds term);
    // Tells `owner` its grant `id` is let go (an import that failed after it).
    void release(uint32_t owner, uint64_t id);
    // Tells owners of the imports let go, renews the others. Never returns.
    void run_forever();

private:
    struct Lease {
        uint32_t owner;
        uint64_t id;
        npuipc::UniqueFd fd;
        Clock::time_point renewed; // when the last renewal that came back was asked
        std::chrono::milliseconds term;
    };
    npuipc::fabric::v1::LeaseRequest request(const std::vector<uint64_t> &ids) const;
    void release_all(const std::map<uint32_t, std::vector<uint64_t>> &ids);
    void renew_from(uint32_t owner, const std::vector<uint64_t> &ids);
    void renew_all();
    void forget_revoked();

    int window_fd_;
    uint32_t own_sdid_;
    const std::map<uint32_t, std::unique_ptr<Stub>> *stubs_;
    // Protects leases_; only run_forever()'s thread takes leases out
    // (closing their fds), its helpers included.
    std::mutex mu_;
    std::vector<Lease> leases_;
};

} // namespace npuipc_fabricd

#endif // NPUIPC_FABRICD_LEASE_H
