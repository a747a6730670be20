// SPDX-License-Identifier: MIT
// A move-only owner of one file descriptor, in the style of Android's
// unique_fd and folly::File: it closes what it owns exactly once.
#ifndef NPUIPC_UNIQUE_FD_H
#define NPUIPC_UNIQUE_FD_H

#include <unistd.h>

namespace npuipc {

class UniqueFd {
public:
    UniqueFd() noexcept = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    ~UniqueFd() { reset(); }

    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
    UniqueFd &operator=(UniqueFd &&other) noexcept
    {
        if (this != &other)
            reset(other.release());
        return *this;
    }

    int get() const noexcept { return fd_; }
    bool valid() const noexcept { return fd_ >= 0; }
    explicit operator bool() const noexcept { return valid(); }

    // Gives up ownership without closing.
    int release() noexcept
    {
        int fd = fd_;
        fd_ = -1;
        return fd;
    }

    // Closes what is owned, then owns fd. close() errors are ignored on
    // purpose: Linux releases the descriptor even when close() fails.
    void reset(int fd = -1) noexcept
    {
        if (fd_ >= 0 && fd_ != fd)
            ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

} // namespace npuipc

#endif // NPUIPC_UNIQUE_FD_H
