// SPDX-License-Identifier: MIT
// Copies from device memory into host memory in stream order.
//
// The driver's jobs move bytes between device buffers only, and host
// memory is not one. So such a copy is a host task: a point on the stream
// (a pooled event recorded there) followed by a gate the stream waits on.
// The runtime's copier thread polls the points, moves the bytes once the
// stream reaches one, and opens its gate: later work on the stream, events
// recorded after the copy and aclrtSynchronizeStream all follow the copy,
// while the caller never waits.
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "aclrt/capture.h"
#include "aclrt/runtime.h"

namespace npuipc_rt {
namespace {

// Moves the bytes of the copies whose points polled ready.
void run_ready(Runtime &rt, const std::vector<uint64_t> &ids, const std::vector<pollfd> &fds)
{
    for (size_t i = 0; i < ids.size(); i++) {
        if (!(fds[i].revents & (POLLIN | POLLERR | POLLHUP)))
            continue;
        HostCopy copy;
        std::unique_lock<std::mutex> running(rt.copy_mu);
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            auto it = rt.host_copies.find(ids[i]);
            if (it == rt.host_copies.end())
                continue; // dropped with its stream meanwhile
            copy = std::move(it->second);
            rt.host_copies.erase(it);
        }
        Stream &stream = *copy.stream;
        // A record cancelled by an earlier failure on the stream: the bytes
        // are not moved, and the gate's wait was cancelled too.
        Result<int> reached = stream.dev->wait(copy.point.reached->event.get(), 0);
        bool ok = reached.ok() && reached.value() == 0;
        if (ok) {
            aclError failed = ACL_SUCCESS;
            try {
                failed = copy.resolve ? copy.resolve(copy) : ACL_SUCCESS;
            } catch (const std::bad_alloc &) {
                failed = fail(ACL_ERROR_BAD_ALLOC, "out of host memory in a task of the copier thread");
            }
            if (failed) {
                aclError none = ACL_SUCCESS;
                stream.run_error.compare_exchange_strong(none, failed, std::memory_order_acq_rel);
            } else {
                for (size_t r = 0; r < copy.rows; r++)
                    std::memmove(static_cast<char *>(copy.dst) + r * copy.dpitch,
                                 static_cast<const char *>(copy.src) + r * copy.spitch, copy.count);
            }
            open_gate(copy.point);
        }
        running.unlock();
        release_pooled_event(rt, stream.device, std::move(copy.point.reached));
    }
}

// The copier thread: never ends. The library is linked -z nodelete, so its
// code stays while the thread runs; a fork child has no copier until its
// first copy starts one (Runtime::discard_after_fork).
void copier_main(int wake_fd)
{
    pthread_setname_np(pthread_self(), "npuipc-copier");
    Runtime &rt = Runtime::get();
    for (;;) {
        std::vector<uint64_t> ids;
        std::vector<pollfd> fds;
        {
            std::lock_guard<std::mutex> lock(rt.mu);
            for (const auto &entry : rt.host_copies) {
                ids.push_back(entry.first);
                fds.push_back({entry.second.point.reached->fd.get(), POLLIN, 0});
            }
        }
        fds.push_back({wake_fd, POLLIN, 0});
        int n = ::poll(fds.data(), fds.size(), -1);
        if (n < 0) {
            if (errno != EINTR)
                log_warning("the copier thread cannot poll: errno %d", errno);
            continue;
        }
        if (fds.back().revents & POLLIN) {
            uint64_t count;
            (void)!::read(wake_fd, &count, sizeof(count));
        }
        fds.pop_back();
        run_ready(rt, ids, fds);
    }
}

// With Runtime::mu held.
aclError start_copier_locked(Runtime &rt)
{
    if (rt.copier_wake)
        return ACL_SUCCESS;
    UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake)
        return fail_errno(errno, Op::Generic, "creating the copier thread's wake-up fd");
    int fd = wake.get();
    if (aclError err = start_runtime_thread("the copier thread", [fd] { copier_main(fd); }))
        return err;
    rt.copier_wake = std::move(wake);
    return ACL_SUCCESS;
}

} // namespace

void wait_for_running_copy(Runtime &rt)
{
    std::lock_guard<std::mutex> barrier(rt.copy_mu);
}

void wake_copier_locked(Runtime &rt)
{
    uint64_t one = 1;
    if (rt.copier_wake && ::write(rt.copier_wake.get(), &one, sizeof(one)) < 0)
        log_warning("cannot wake the copier thread: errno %d", errno);
}

// The application may unmap its own view of VMM memory while a copy holds it.
aclError stable_address(const Allocation &alloc, const void *ptr, void *&out)
{
    out = const_cast<void *>(ptr);
    if (!alloc.physical)
        return ACL_SUCCESS;
    Physical &phys = *alloc.physical;
    std::lock_guard<std::mutex> lock(phys.mu);
    if (!phys.copy_view.addr()) {
        Result<BufferInfo> info = phys.dev->buffer_info(phys.buffer.get());
        if (!info.ok())
            return fail_errno(info.error(), Op::Generic, "querying the physical memory");
        Result<Mapping> view = Mapping::map(*phys.dev, info.value().mmap_offset, phys.size);
        if (!view.ok())
            return fail_errno(view.error(), Op::Generic, "mapping the physical memory for the copy");
        phys.copy_view = std::move(view.value());
    }
    out = static_cast<char *>(phys.copy_view.addr()) + (reinterpret_cast<uintptr_t>(ptr) - alloc.base);
    return ACL_SUCCESS;
}

aclError queue_copy(Runtime &rt, HostCopy copy)
{
    const std::shared_ptr<Stream> stream = copy.stream;
    if (aclError err = refuse_uncapturable(*stream))
        return err;
    void *at = nullptr;
    if (copy.source) {
        if (aclError err = stable_address(*copy.source, copy.src, at))
            return err;
        copy.src = at;
    }
    if (copy.dest) {
        if (aclError err = stable_address(*copy.dest, copy.dst, at))
            return err;
        copy.dst = at;
    }
    if (aclError err = make_point(rt, *stream, true, copy.point))
        return err;
    std::lock_guard<std::mutex> lock(rt.mu);
    if (aclError err = start_copier_locked(rt))
        return err;
    std::lock_guard<std::mutex> slock(stream->mu);
    if (!stream->listed.load(std::memory_order_relaxed))
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "the stream was destroyed meanwhile");
    Job jobs[2];
    if (aclError err = submit(*stream, jobs, point_jobs(copy.point, jobs)))
        return err;
    rt.host_copies.emplace(rt.next_host_copy++, std::move(copy));
    wake_copier_locked(rt);
    return ACL_SUCCESS;
}

} // namespace npuipc_rt
