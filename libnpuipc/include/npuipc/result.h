// SPDX-License-Identifier: MIT
// libnpuipc's one error model: every fallible call returns Result<T> (or
// Status), holding either a value or a positive errno value that says why.
// No exceptions cross the library boundary; the aclrt layer maps errno
// values onto CANN error codes in a single place.
#ifndef NPUIPC_RESULT_H
#define NPUIPC_RESULT_H

#include <cassert>
#include <optional>
#include <utility>

namespace npuipc {

class Status {
public:
    Status() noexcept = default;
    static Status from_errno(int err) noexcept { return Status(err); }

    bool ok() const noexcept { return err_ == 0; }
    int error() const noexcept { return err_; }

private:
    explicit Status(int err) noexcept : err_(err) { assert(err > 0); }
    int err_ = 0;
};

template <typename T>
class Result {
public:
    Result(T value) : value_(std::move(value)) {}
    Result(Status status) : status_(status) { assert(!status.ok()); }

    bool ok() const noexcept { return status_.ok(); }
    int error() const noexcept { return status_.error(); }
    Status status() const noexcept { return status_; }

    T &value() &
    {
        assert(ok());
        return *value_;
    }
    const T &value() const &
    {
        assert(ok());
        return *value_;
    }
    T &&value() &&
    {
        assert(ok());
        return std::move(*value_);
    }

private:
    std::optional<T> value_;
    Status status_;
};

} // namespace npuipc

#endif // NPUIPC_RESULT_H
