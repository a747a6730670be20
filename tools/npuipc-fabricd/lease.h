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
constexpr std::chrono::milliseconds kLeaseTerm{3000};
// Each grant is renewed this often (a new one at once); a renewal or
// release waits this long at most.
constexpr std::chrono::milliseconds kRenewEvery{1000};
// An import is made only with this much of its term left: enough for its
// first renewal, asked within a poll of the loop (100 ms) once a renewal
// in flight came back, and answered within kRenewEvery. (A renewal in
// flight waits for an owner that does not answer: with more than one
// owner, one unreachable may cost another's new import its lease.)
constexpr std::chrono::milliseconds kLeastTermLeft{1500};
// An owner drops a grant not renewed for this long, and its kernel keeps
// the memory this long after each renewal (FABRIC_HOLD), even when the
// daemon dies.
constexpr std::chrono::milliseconds kGrantTerm{6000};
static_assert(kGrantTerm >= 2 * kLeaseTerm, "an importer revokes well before its owner lets go");
static_assert(kLeastTermLeft > kRenewEvery, "a new import lives to its first renewal");
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

    // An import of grant `id` of server `owner`, whose kernel deadline is
    // `deadline_ns` and term `term` (at most kLeaseTerm).
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
    // Protects leases_ and fresh_; only run_forever()'s thread takes leases
    // out (closing their fds, outside the lock), its helpers included.
    std::mutex mu_;
    std::vector<Lease> leases_;
    bool fresh_ = false; // a lease added since the last renewal_all()
};

} // namespace npuipc_fabricd

#endif // NPUIPC_FABRICD_LEASE_H
