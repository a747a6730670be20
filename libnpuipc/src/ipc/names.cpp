// SPDX-License-Identifier: MIT
// 64-bit names of keys, for APIs that pass a number instead of a string
// (aclrtMemExportToShareableHandle). A name is 64 random bits. Where a
// broker serves the key, the broker names it. Otherwise the key is kept in
// a file "h<16 hex digits>" of the subdirectory "names" of the user's
// private socket directory: mode 0300, so that the user's processes open a
// file whose name they know but cannot list the names (no secret is
// readable by listing a directory). The key inside still carries its
// secret and its PID allowlist.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/internal.h"
#include "npuipc/ipc.h"

namespace npuipc::ipc {
namespace {

std::string names_dir(const std::string &dir)
{
    return dir + "/names";
}

std::string file_of(const std::string &dir, uint64_t name)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "h%016" PRIx64, name);
    return names_dir(dir) + "/" + buf;
}

// The names directory of socket directory `dir` (checked first): ours,
// a real directory, mode 0300. Made when `create`.
Status check_names_dir(const std::string &dir, bool create)
{
    if (Status st = detail::check_dir(dir, create); !st.ok())
        return st;
    const std::string names = names_dir(dir);
    if (create && ::mkdir(names.c_str(), 0300) == 0)
        (void)::chmod(names.c_str(), 0300); // whatever the umask
    struct stat st;
    if (::lstat(names.c_str(), &st) != 0)
        return Status::from_errno(errno);
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0777) != 0300) {
        detail::log(LogLevel::Error,
                    "names: refusing %s: not a directory of uid %u with mode 0300 (remove it)",
                    names.c_str(), static_cast<unsigned>(geteuid()));
        return Status::from_errno(EACCES);
    }
    return {};
}

} // namespace

Result<uint64_t> name_key(const std::string &key_text)
{
    Result<Key> key = parse_key(key_text.c_str());
    if (!key.ok())
        return key.status();
    // The broker names what it serves: no file.
    if (detail::is_broker_endpoint(key.value().endpoint))
        return detail::broker_name(key.value());
    const std::string dir = detail::exporter_dir();
    if (Status st = check_names_dir(dir, true); !st.ok())
        return st;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint64_t name = 0;
        if (Status st = detail::fill_random(&name, sizeof(name)); !st.ok())
            return st;
        if (name == 0)
            continue;
        const std::string path = file_of(dir, name);
        UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!fd) {
            if (errno == EEXIST)
                continue;
            return Status::from_errno(errno);
        }
        const std::string &text = key.value().text;
        if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
            int err = errno ? errno : EIO;
            ::unlink(path.c_str());
            return Status::from_errno(err);
        }
        return name;
    }
    return Status::from_errno(EEXIST);
}

Result<std::string> resolve_name(uint64_t name)
{
    if (name == 0)
        return Status::from_errno(EINVAL);
    for (const std::string &dir : detail::importer_dirs()) {
        if (!check_names_dir(dir, false).ok())
            continue;
        const std::string path = file_of(dir, name);
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
        if (!fd)
            continue;
        struct stat st;
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            detail::log(LogLevel::Error, "names: refusing %s: not a regular file of uid %u",
                        path.c_str(), static_cast<unsigned>(geteuid()));
            return Status::from_errno(EACCES);
        }
        char buf[kKeyMax + 1] = {};
        ssize_t n = ::read(fd.get(), buf, kKeyMax);
        if (n <= 0)
            return Status::from_errno(EPROTO);
        Result<Key> key = parse_key(buf, sizeof(buf));
        if (!key.ok())
            return Status::from_errno(EPROTO);
        return key.value().text;
    }
    return Status::from_errno(ESRCH);
}

void unname(uint64_t name)
{
    if (name)
        ::unlink(file_of(detail::exporter_dir(), name).c_str());
}


} // namespace npuipc::ipc

void npuipc_ipc::forget_dead_name(uint64_t name)
{
    using namespace npuipc::ipc;
    for (const std::string &dir : importer_dirs())
        if (check_names_dir(dir, false).ok())
            ::unlink(file_of(dir, name).c_str());
}
