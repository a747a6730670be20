// SPDX-License-Identifier: MIT
// Leases between fabric daemons (Documentation/fabric.md, Lifetime across
// servers). The owner's daemon grants an import and holds the memory for
// as long as the grant may run (Grants); the importer's daemon renews its
// grants and gives each import a deadline in its kernel (FABRIC_IMPORT's
// lease_deadline_ns, FABRIC_RENEW), which revokes it when not renewed in
// time (Leases). The importer's term is counted from before it asked, the
// owner's from when the request reached it, and the owner's is the
// longer: an importer's kernel has always revoked before its owner lets
// the memory go.
#ifndef NPUIPC_FABRICD_LEASE_H
#define NPUIPC_FABRICD_LEASE_H

#include <algorithm>
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

// CLOCK_BOOTTIME, in nanoseconds: the kernel's clock for lease deadlines
// (it goes on while the server is suspended).
uint64_t boottime_ns();

// An import's term in its kernel: it is revoked this long after the
// importer asked for the grant, or for its last renewal that came back.
// The owner offers its own (--lease-term), the importer takes the shorter
// of the offer and its own.
constexpr std::chrono::milliseconds kDefaultLeaseTerm{3000};
constexpr std::chrono::milliseconds kMinLeaseTerm{3000};
// The owner's kernel holds a buffer for twice the term, at most
// NPUIPC_FABRIC_HOLD_MAX_MS.
constexpr std::chrono::milliseconds kMaxLeaseTerm{300000};
// Each grant is renewed this often (a new one at once); a renewal or
// release waits this long at most.
constexpr std::chrono::milliseconds kRenewEvery{1000};
// An import is made only with this much of its term left: enough for its
// first renewal, asked within a poll of the loop (100 ms) once a renewal
// in flight came back, and answered within kRenewEvery. (A renewal in
// flight waits for an owner that does not answer: with more than one
// owner, one unreachable may cost another's new import its lease.)
constexpr std::chrono::milliseconds kLeastTermLeft{1500};
static_assert(kLeastTermLeft > kRenewEvery, "a new import lives to its first renewal");
static_assert(kMinLeaseTerm >= 2 * kLeastTermLeft, "a new import is made with half its term left");
// Grant ids one Renew or Release names at most, and grants one server holds.
constexpr int kMaxGrantsPerCall = 4096;
constexpr size_t kMaxGrantsPerServer = 4096;

// The owner's side: what it granted to other servers.
class Grants {
public:
    // An owner drops a grant not renewed for twice `lease_term`, and its
    // kernel keeps the memory that long after each renewal (FABRIC_HOLD),
    // even when the daemon dies: an importer revokes well before its
    // owner lets go.
    Grants(int window_fd, std::chrono::milliseconds lease_term)
        : window_fd_(window_fd), lease_term_(lease_term), grant_term_(2 * lease_term)
    {
    }

    // The term this owner offers its importers.
    std::chrono::milliseconds lease_term() const { return lease_term_; }

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
    const std::chrono::milliseconds lease_term_, grant_term_;
    // Protects grants_
    std::mutex mu_;
    std::map<uint64_t, Grant> grants_;
};

// The importer's side: the lease fds of its imports (FABRIC_IMPORT's).
class Leases {
public:
    // `lease_term`: the longest term this importer takes.
    Leases(int window_fd, uint32_t own_sdid,
           const std::map<uint32_t, std::unique_ptr<Stub>> *stubs,
           std::chrono::milliseconds lease_term)
        : window_fd_(window_fd), own_sdid_(own_sdid), stubs_(stubs), lease_term_(lease_term)
    {
    }

    // The term of an import whose owner offered `offered`.
    std::chrono::milliseconds term(std::chrono::milliseconds offered) const
    {
        return std::min(offered, lease_term_);
    }
    // An import of grant `id` of server `owner`, whose kernel deadline is
    // `deadline_ns` and term `term` (term()'s).
    void add(uint32_t owner, uint64_t id, npuipc::UniqueFd lease_fd, uint64_t deadline_ns,
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
        uint64_t deadline_ns; // the kernel's: the last renewal that came back, asked, + term
        std::chrono::milliseconds term;
        bool fresh; // not renewed yet
    };
    npuipc::fabric::v1::LeaseRequest request(const std::vector<uint64_t> &ids) const;
    void release_all(const std::map<uint32_t, std::vector<uint64_t>> &ids);
    void renew_from(uint32_t owner, const std::vector<uint64_t> &ids);
    // Renews every lease, or only those not renewed yet.
    void renew_all(bool only_fresh);
    void forget_revoked();

    int window_fd_;
    uint32_t own_sdid_;
    const std::map<uint32_t, std::unique_ptr<Stub>> *stubs_;
    const std::chrono::milliseconds lease_term_;
    // Protects leases_ and fresh_; only run_forever()'s thread takes leases
    // out (closing their fds, outside the lock), its helpers included.
    std::mutex mu_;
    std::vector<Lease> leases_;
    bool fresh_ = false; // a lease added since the last renewal_all()
};

} // namespace npuipc_fabricd

#endif // NPUIPC_FABRICD_LEASE_H
