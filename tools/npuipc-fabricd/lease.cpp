// SPDX-License-Identifier: MIT
// Leases between fabric daemons: lease.h.
#include "lease.h"

#include <poll.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "drm/npuipc_drm.h"
#include "ipc/internal.h"
#include "log.h"

namespace npuipc_fabricd {

using npuipc::UniqueFd;

bool Grants::hold(int dmabuf, uint32_t ms)
{
    drm_npuipc_fabric_hold args{};
    args.fd = dmabuf;
    args.timeout_ms = ms;
    if (drmIoctl(window_fd_, DRM_IOCTL_NPUIPC_FABRIC_HOLD, &args) == 0)
        return true;
    logf("FABRIC_HOLD: %s", std::strerror(errno));
    return false;
}

int Grants::add(uint32_t sdid, UniqueFd dmabuf, uint64_t offset, uint64_t *id)
{
    // Held before it is granted: whatever happens to this daemon, the
    // memory outlives the importer's lease.
    if (!hold(dmabuf.get(), kHoldMs))
        return EIO;
    std::lock_guard<std::mutex> lock(mu_);
    do {
        if (!npuipc_ipc::fill_random(id, sizeof(*id)).ok())
            return EIO;
    } while (*id == 0 || grants_.count(*id));
    grants_.emplace(*id, Grant{sdid, offset, std::move(dmabuf), Clock::now() + kGrantTerm});
    return 0;
}

// The hold ends with the last grant of its memory: the memory is then its
// exporter's again (or free, once its exporter let go too).
void Grants::drop_locked(std::map<uint64_t, Grant>::iterator it)
{
    const uint64_t offset = it->second.offset;
    UniqueFd dmabuf = std::move(it->second.dmabuf);
    grants_.erase(it);
    bool more = std::any_of(grants_.begin(), grants_.end(),
                            [offset](const auto &g) { return g.second.offset == offset; });
    if (!more)
        hold(dmabuf.get(), 0);
}

std::vector<uint64_t> Grants::renew(uint32_t sdid, const std::vector<uint64_t> &ids)
{
    std::vector<uint64_t> unknown;
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids) {
        auto it = grants_.find(id);
        if (it == grants_.end() || it->second.sdid != sdid || !hold(it->second.dmabuf.get(), kHoldMs)) {
            unknown.push_back(id);
            continue;
        }
        it->second.expires = Clock::now() + kGrantTerm;
    }
    return unknown;
}

void Grants::release(uint32_t sdid, const std::vector<uint64_t> &ids)
{
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids) {
        auto it = grants_.find(id);
        if (it != grants_.end() && it->second.sdid == sdid)
            drop_locked(it);
    }
}

void Grants::expire_forever()
{
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        std::lock_guard<std::mutex> lock(mu_);
        const auto now = Clock::now();
        for (auto it = grants_.begin(); it != grants_.end();) {
            auto next = std::next(it);
            if (it->second.expires <= now) {
                logf("grant %016llx to server %u not renewed: dropped",
                     static_cast<unsigned long long>(it->first), it->second.sdid);
                drop_locked(it);
            }
            it = next;
        }
    }
}

void Leases::add(uint32_t owner, uint64_t id, UniqueFd lease_fd, Clock::time_point asked,
                 std::chrono::milliseconds term)
{
    std::lock_guard<std::mutex> lock(mu_);
    leases_.push_back(Lease{owner, id, std::move(lease_fd), asked, std::min(term, kLeaseTerm)});
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
    for (const auto &[owner, grants] : ids) {
        auto stub = stubs_->find(owner);
        if (stub == stubs_->end())
            continue;
        const npuipc::fabric::v1::LeaseRequest req = request(grants);
        npuipc::fabric::v1::ReleaseReply reply;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + kRenewEvery);
        // Not told, the owner drops the grants when they run out.
        grpc::Status status = stub->second->Release(&ctx, req, &reply);
        if (!status.ok())
            logf("server %u not told of %zu released imports: %s", owner, grants.size(),
                 status.error_message().c_str());
    }
}

void Leases::renew_all()
{
    std::map<uint32_t, std::vector<uint64_t>> ids;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (const Lease &l : leases_)
            ids[l.owner].push_back(l.id);
    }
    for (const auto &[owner, grants] : ids) {
        auto stub = stubs_->find(owner);
        if (stub == stubs_->end())
            continue;
        const npuipc::fabric::v1::LeaseRequest req = request(grants);
        npuipc::fabric::v1::RenewReply reply;
        grpc::ClientContext ctx;
        const auto asked = Clock::now();
        ctx.set_deadline(std::chrono::system_clock::now() + kRenewEvery);
        grpc::Status status = stub->second->Renew(&ctx, req, &reply);
        if (!status.ok())
            continue; // revoked by revoke_late() if it lasts
        std::vector<uint64_t> unknown(reply.unknown().begin(), reply.unknown().end());
        std::lock_guard<std::mutex> lock(mu_);
        for (auto it = leases_.begin(); it != leases_.end();) {
            bool asked_for = it->owner == owner &&
                             std::find(grants.begin(), grants.end(), it->id) != grants.end();
            if (asked_for && std::find(unknown.begin(), unknown.end(), it->id) != unknown.end()) {
                logf("server %u no longer grants %016llx: import revoked", owner,
                     static_cast<unsigned long long>(it->id));
                it = leases_.erase(it); // closing the lease fd revokes
                continue;
            }
            if (asked_for)
                it->renewed = asked;
            ++it;
        }
    }
}

void Leases::revoke_late()
{
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = leases_.begin(); it != leases_.end();) {
        if (now - it->renewed < it->term) {
            ++it;
            continue;
        }
        logf("grant %016llx of server %u not renewed in time: import revoked",
             static_cast<unsigned long long>(it->id), it->owner);
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
        if (::poll(fds.data(), fds.size(), 250) > 0) {
            std::map<uint32_t, std::vector<uint64_t>> released;
            {
                std::lock_guard<std::mutex> lock(mu_);
                for (auto it = leases_.begin(); it != leases_.end();) {
                    auto pfd = std::find_if(fds.begin(), fds.end(), [&](const pollfd &p) {
                        return p.fd == it->fd.get();
                    });
                    if (pfd != fds.end() && (pfd->revents & POLLIN)) {
                        released[it->owner].push_back(it->id);
                        it = leases_.erase(it);
                    } else {
                        ++it;
                    }
                }
            }
            release_all(released);
        }
        if (Clock::now() >= next_renewal) {
            next_renewal = Clock::now() + kRenewEvery;
            renew_all();
        }
        revoke_late();
    }
}

} // namespace npuipc_fabricd
