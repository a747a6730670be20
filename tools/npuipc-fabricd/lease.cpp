// SPDX-License-Identifier: MIT
// Leases between fabric daemons: lease.h.
#include "lease.h"

#include <poll.h>
#include <time.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "drm/npuipc_drm.h"
#include "ipc/internal.h"
#include "log.h"

namespace npuipc_fabricd {

using npuipc::UniqueFd;

static_assert(2 * kMaxLeaseTerm.count() <= NPUIPC_FABRIC_HOLD_MAX_MS, "a grant's hold fits FABRIC_HOLD");
static_assert(kMaxLeaseTerm.count() <= NPUIPC_FABRIC_LEASE_MAX_MS, "an import's deadline fits FABRIC_RENEW");

uint64_t boottime_ns()
{
    struct timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

namespace {

uint64_t ns(std::chrono::milliseconds ms)
{
    return static_cast<uint64_t>(ms.count()) * 1000000ULL;
}

// Runs fn(owner, ids) for each owner at once, in batches a call takes:
// one owner that does not answer delays no other's renewals. Without a
// thread to spare, a batch runs here.
template <typename Fn>
void for_each_owner(const std::map<uint32_t, std::vector<uint64_t>> &ids, Fn fn)
{
    std::vector<std::thread> threads;
    for (const auto &[owner, grants] : ids) {
        for (size_t at = 0; at < grants.size(); at += kMaxGrantsPerCall) {
            std::vector<uint64_t> part(grants.begin() + at,
                                       grants.begin() + std::min(grants.size(), at + kMaxGrantsPerCall));
            try {
                threads.emplace_back([&fn, owner = owner, part] { fn(owner, part); });
            } catch (const std::system_error &) {
                fn(owner, part);
            }
        }
    }
    for (std::thread &t : threads)
        t.join();
}

} // namespace

// A hold only grows (FABRIC_HOLD): renewing one grant never shortens
// another's, nor a dead daemon's.
bool Grants::hold(int dmabuf)
{
    drm_npuipc_fabric_hold args{};
    args.fd = dmabuf;
    args.timeout_ms = static_cast<uint32_t>(grant_term_.count());
    if (drmIoctl(window_fd_, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args) == 0)
        return true;
    logf("FABRIC_HOLD: %s", std::strerror(errno));
    return false;
}

int Grants::add(uint32_t sdid, UniqueFd dmabuf, uint64_t *id)
{
    std::lock_guard<std::mutex> lock(mu_);
    size_t of_server = std::count_if(grants_.begin(), grants_.end(),
                                     [sdid](const auto &g) { return g.second.sdid == sdid; });
    if (of_server >= kMaxGrantsPerServer)
        return ENOSPC;
    // Held before it is granted: whatever happens to this daemon, the
    // memory outlives the importer's term.
    if (!hold(dmabuf.get()))
        return EIO;
    do {
        if (!npuipc_ipc::fill_random(id, sizeof(*id)).ok())
            return EIO;
    } while (*id == 0 || grants_.count(*id));
    grants_.emplace(*id, Grant{sdid, std::move(dmabuf), Clock::now() + grant_term_});
    return 0;
}

std::vector<uint64_t> Grants::renew(uint32_t sdid, const std::vector<uint64_t> &ids)
{
    std::vector<uint64_t> unknown;
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids) {
        auto it = grants_.find(id);
        if (it == grants_.end() || it->second.sdid != sdid || !hold(it->second.dmabuf.get())) {
            unknown.push_back(id);
            continue;
        }
        it->second.expires = Clock::now() + grant_term_;
    }
    return unknown;
}

// The grant goes; its memory, once the kernel's hold ends (at most
// twice the lease term after the last renewal), is its exporter's again, or free.
void Grants::release(uint32_t sdid, const std::vector<uint64_t> &ids)
{
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids) {
        auto it = grants_.find(id);
        if (it != grants_.end() && it->second.sdid == sdid)
            grants_.erase(it);
    }
}

void Grants::expire_forever()
{
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        std::lock_guard<std::mutex> lock(mu_);
        const auto now = Clock::now();
        for (auto it = grants_.begin(); it != grants_.end();) {
            if (it->second.expires > now) {
                ++it;
                continue;
            }
            logf("grant %016llx to server %u not renewed: dropped",
                 static_cast<unsigned long long>(it->first), it->second.sdid);
            it = grants_.erase(it);
        }
    }
}

void Leases::add(uint32_t owner, uint64_t id, UniqueFd lease_fd, uint64_t deadline_ns,
                 std::chrono::milliseconds term)
{
    std::lock_guard<std::mutex> lock(mu_);
    leases_.push_back(
        Lease{owner, id, std::move(lease_fd), deadline_ns, term, true});
    fresh_ = true;
}

void Leases::release(uint32_t owner, uint64_t id)
{
    release_all({{owner, {id}}});
}

npuipc::fabric::v1::LeaseRequest Leases::request(const std::vector<uint64_t> &ids) const
{
    npuipc::fabric::v1::LeaseRequest req;
    req.set_importer_sdid(own_sdid_);
    for (uint64_t id : ids)
        req.add_grant_ids(id);
    return req;
}

void Leases::release_all(const std::map<uint32_t, std::vector<uint64_t>> &ids)
{
    for_each_owner(ids, [this](uint32_t owner, const std::vector<uint64_t> &grants) {
        auto stub = stubs_->find(owner);
        if (stub == stubs_->end())
            return;
        const npuipc::fabric::v1::LeaseRequest req = request(grants);
        npuipc::fabric::v1::ReleaseReply reply;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + kRenewEvery);
        // Not told, the owner drops the grants when they run out.
        grpc::Status status = stub->second->Release(&ctx, req, &reply);
        if (!status.ok())
            logf("server %u not told of %zu released imports: %s", owner, grants.size(),
                 status.error_message().c_str());
    });
}

// The renewal of `ids`, asked at `asked`, came back: each deadline moves to
// `asked` + its term in the kernel; those the owner no longer knows, or
// whose term ended meanwhile, go.
void Leases::renew_from(uint32_t owner, const std::vector<uint64_t> &ids)
{
    auto stub = stubs_->find(owner);
    if (stub == stubs_->end())
        return;
    const npuipc::fabric::v1::LeaseRequest req = request(ids);
    npuipc::fabric::v1::RenewReply reply;
    grpc::ClientContext ctx;
    const uint64_t asked = boottime_ns();
    ctx.set_deadline(std::chrono::system_clock::now() + kRenewEvery);
    grpc::Status status = stub->second->Renew(&ctx, req, &reply);
    if (!status.ok())
        return; // the kernel revokes when the term ends
    // Up to kMaxGrantsPerCall each, looked up for every lease.
    const std::unordered_set<uint64_t> asked_for(ids.begin(), ids.end());
    const std::unordered_set<uint64_t> unknown(reply.unknown().begin(), reply.unknown().end());
    std::vector<Lease> gone; // closed (revoking) once the lock is dropped
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = leases_.begin(); it != leases_.end();) {
        if (it->owner != owner || !asked_for.count(it->id)) {
            ++it;
            continue;
        }
        if (unknown.count(it->id)) {
            logf("server %u no longer grants %016llx: import revoked", owner,
                 static_cast<unsigned long long>(it->id));
            gone.push_back(std::move(*it));
            it = leases_.erase(it);
            continue;
        }
        drm_npuipc_fabric_renew renew{};
        renew.lease_fd = it->fd.get();
        renew.deadline_ns = asked + ns(it->term);
        if (drmIoctl(window_fd_, DRM_IOCTL_NPUIPC_FABRIC_RENEW, &renew) == 0) {
            it->deadline_ns = renew.deadline_ns;
            ++it;
            continue;
        }
        logf("grant %016llx of server %u renewed too late: import revoked",
             static_cast<unsigned long long>(it->id), owner);
        gone.push_back(std::move(*it));
        it = leases_.erase(it);
    }
}

void Leases::renew_all(bool only_fresh)
{
    std::map<uint32_t, std::vector<uint64_t>> ids;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (Lease &l : leases_) {
            if (only_fresh && !l.fresh)
                continue;
            ids[l.owner].push_back(l.id);
            l.fresh = false;
        }
    }
    for_each_owner(ids, [this](uint32_t owner, const std::vector<uint64_t> &grants) {
        renew_from(owner, grants);
    });
}

// The kernel revoked those whose term ended: their fds go, with a word.
void Leases::forget_revoked()
{
    const uint64_t now = boottime_ns();
    std::vector<Lease> gone;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = leases_.begin(); it != leases_.end();) {
        if (now < it->deadline_ns) {
            ++it;
            continue;
        }
        logf("grant %016llx of server %u not renewed in time: import revoked",
             static_cast<unsigned long long>(it->id), it->owner);
        gone.push_back(std::move(*it));
        it = leases_.erase(it);
    }
}

void Leases::run_forever()
{
    auto next_renewal = Clock::now();
    for (;;) {
        std::vector<struct pollfd> fds;
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (const Lease &l : leases_)
                fds.push_back({l.fd.get(), POLLIN, 0});
        }
        // Only this thread closes lease fds: those polled stay open.
        if (::poll(fds.data(), fds.size(), 100) > 0) {
            std::map<uint32_t, std::vector<uint64_t>> released;
            std::vector<Lease> gone;
            {
                std::lock_guard<std::mutex> lock(mu_);
                for (auto it = leases_.begin(); it != leases_.end();) {
                    auto pfd = std::find_if(fds.begin(), fds.end(), [&](const pollfd &p) {
                        return p.fd == it->fd.get();
                    });
                    if (pfd != fds.end() && (pfd->revents & POLLIN)) {
                        released[it->owner].push_back(it->id);
                        gone.push_back(std::move(*it));
                        it = leases_.erase(it);
                    } else {
                        ++it;
                    }
                }
            }
            // Told on the side: a release is no renewal's business.
            try {
                std::thread([this, released] { release_all(released); }).detach();
            } catch (const std::system_error &) {
                release_all(released);
            }
        }
        bool fresh;
        {
            std::lock_guard<std::mutex> lock(mu_);
            fresh = fresh_;
            fresh_ = false;
        }
        if (Clock::now() >= next_renewal) {
            next_renewal = Clock::now() + kRenewEvery;
            renew_all(false);
        } else if (fresh) {
            renew_all(true);
        }
        forget_revoked();
    }
}

} // namespace npuipc_fabricd
