// SPDX-License-Identifier: MIT
// Leases between fabric daemons (Documentation/fabric.md, Lifetime across
// servers). The owner's daemon grants an import and keeps the memory for
// as long as the grant runs (Grants); the importer's daemon renews its
// grants and revokes an import whose grant it cannot renew in time
// (Leases). The times are such that an importer has always revoked before
// its owner lets the memory go: the importer counts its lease from before
// it asked, the owner from after it answered, and the owner's is longer.
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

// An importer revokes an import whose grant it has not renewed for this long.
constexpr std::chrono::milliseconds kLeaseTerm{3000};
// It renews every grant this often; a renewal or release waits this long at most.
constexpr std::chrono::milliseconds kRenewEvery{1000};
// An owner drops a grant not renewed for this long...
constexpr std::chrono::milliseconds kGrantTerm{8000};
// ...and the kernel keeps the memory for this long after the last renewal,
// even when the owner's daemon dies (FABRIC_HOLD).
constexpr uint32_t kHoldMs = 10000;
static_assert(kGrantTerm >= 2 * kLeaseTerm, "an importer revokes well before its owner drops");
static_assert(std::chrono::milliseconds(kHoldMs) > kGrantTerm, "the hold outlasts the grant");

// The owner's side: what it granted to other servers.
class Grants {
public:
    explicit Grants(int window_fd) : window_fd_(window_fd) {}

    // Grants server `sdid` the memory of `dmabuf` (a duplicate, kept with
    // the grant) at `offset`: 0 and its id, or a positive errno.
    int add(uint32_t sdid, npuipc::UniqueFd dmabuf, uint64_t offset, uint64_t *id);
    // Renews those of server `sdid` named: the ids it does not know.
    std::vector<uint64_t> renew(uint32_t sdid, const std::vector<uint64_t> &ids);
    void release(uint32_t sdid, const std::vector<uint64_t> &ids);
    // Drops, every half second, the grants past their term. Never returns.
    void expire_forever();

private:
    struct Grant {
        uint32_t sdid;
        uint64_t offset;
        npuipc::UniqueFd dmabuf;
        Clock::time_point expires;
    };
    void drop_locked(std::map<uint64_t, Grant>::iterator it);
    bool hold(int dmabuf, uint32_t ms);

    int window_fd_;
    // Protects grants_
    std::mutex mu_;
    std::map<uint64_t, Grant> grants_;
};

// The importer's side: the lease fds of its imports (FABRIC_IMPORT's).
class Leases {
public:
    Leases(uint32_t own_sdid, const std::map<uint32_t, std::unique_ptr<Stub>> *stubs)
        : own_sdid_(own_sdid), stubs_(stubs)
    {
    }

    // An import of grant `id` of server `owner`, asked at `asked`, for
    // `term` unless renewed.
    void add(uint32_t owner, uint64_t id, npuipc::UniqueFd lease_fd, Clock::time_point asked,
             std::chrono::milliseconds term);
    // Tells `owner` its grant `id` is let go (an import that failed after it).
    void release(uint32_t owner, uint64_t id);
    // Tells owners of the imports let go, renews the others, revokes those
    // not renewed in time. Never returns.
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
    void renew_all();
    void revoke_late();

    uint32_t own_sdid_;
    const std::map<uint32_t, std::unique_ptr<Stub>> *stubs_;
    // Protects leases_; only run_forever() takes leases out (closing their fds).
    std::mutex mu_;
    std::vector<Lease> leases_;
};

} // namespace npuipc_fabricd

#endif // NPUIPC_FABRICD_LEASE_H
