// SPDX-License-Identifier: MIT
// Keys, the socket directory, randomness and logging of the IPC transport.
#include "ipc/internal.h"
#include "log.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace npuipc_ipc {
namespace {

std::atomic<LogHook> g_log_hook{nullptr};

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

// base64url without padding.
std::string b64_encode(const uint8_t *data, size_t len)
{
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        acc = (acc << 8) | data[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += kB64[(acc >> bits) & 63];
        }
    }
    if (bits > 0)
        out += kB64[(acc << (6 - bits)) & 63];
    return out;
}

size_t b64_length(size_t bytes)
{
    return (bytes * 8 + 5) / 6;
}

// Decodes exactly `len` bytes from exactly b64_length(len) characters;
// false on another character or non-zero padding bits (one text per value).
bool b64_decode(const char *text, size_t text_len, uint8_t *out, size_t len)
{
    if (text_len != b64_length(len))
        return false;
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 0; i < text_len; i++) {
        int v = b64_value(text[i]);
        if (v < 0)
            return false;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = static_cast<uint8_t>(acc >> bits);
        }
        acc &= (1u << bits) - 1;
    }
    return n == len && acc == 0;
}

bool is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Canonical lowercase hex without leading zeros, not 0, at most max_digits.
bool parse_hex(const char *s, size_t len, size_t max_digits, uint64_t *value)
{
    if (len == 0 || len > max_digits || s[0] == '0')
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_lower_hex(s[i]))
            return false;
        v = (v << 4) | static_cast<uint64_t>(s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
    }
    *value = v;
    return true;
}

std::string hex(uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%" PRIx64, v);
    return buf;
}

bool parse_endpoint(const char *s, size_t len)
{
    const char *dash = static_cast<const char *>(std::memchr(s, '-', len));
    if (!dash)
        return false;
    // PID 0 names a broker (new_broker_endpoint).
    uint64_t pid = 0;
    const bool broker = dash - s == 1 && s[0] == '0';
    if (!broker && !parse_hex(s, static_cast<size_t>(dash - s), 8, &pid))
        return false;
    uint8_t random[kEndpointRandomBytes];
    return b64_decode(dash + 1, len - static_cast<size_t>(dash - s) - 1, random, sizeof(random));
}

} // namespace

const char *detail_text(uint16_t detail)
{
    switch (detail) {
    case kDetailNone:
        return "no reason given";
    case kDetailUid:
        return "the importer runs as another user";
    case kDetailNotListed:
        return "the importer's PID is not on the key's allowlist";
    case kDetailNotAlive:
        return "the importer's PID was not alive when it was allowed";
    case kDetailReused:
        return "the importer's PID was allowed for an earlier process (PID reused)";
    case kDetailPeerGone:
        return "the importer's process could not be verified (it exited?)";
    case kDetailPidNs:
        return "exporter is not in the initial PID namespace: use DISABLE_PID_VALIDATION";
    case kDetailUnknown:
        return "no such object (never published, revoked, or wrong secret)";
    case kDetailKind:
        return "the object is of another kind";
    case kDetailBadRequest:
        return "malformed request";
    case kDetailBusy:
        return "exporter busy: connection cap reached";
    case kDetailMakeFd:
        return "the exporter could not make the object's fd";
    case kDetailPeerNoPid:
        return "the importer has no PID in the exporter's PID namespace";
    default:
        return "unknown reason";
    }
}

bool valid_kind(Kind kind)
{
    return kind == Kind::Memory || kind == Kind::Event || kind == Kind::Notify;
}

const char *kind_name(Kind kind)
{
    switch (kind) {
    case Kind::Memory:
        return "memory";
    case Kind::Event:
        return "event";
    case Kind::Notify:
        return "notify";
    }
    return "unknown";
}

Result<std::string> new_endpoint()
{
    uint8_t random[kEndpointRandomBytes];
    Status st = fill_random(random, sizeof(random));
    if (!st.ok())
        return st;
    return hex(static_cast<uint64_t>(getpid())) + "-" + b64_encode(random, sizeof(random));
}

Result<std::string> new_broker_endpoint()
{
    uint8_t random[kEndpointRandomBytes];
    Status st = fill_random(random, sizeof(random));
    if (!st.ok())
        return st;
    return "0-" + b64_encode(random, sizeof(random));
}

ssize_t send_with_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
    struct iovec iov = {const_cast<void *>(buf), len};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n;
    do
        n = ::sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}

bool trusted_broker(uid_t listener_uid)
{
    return listener_uid == 0 || listener_uid == ::geteuid();
}

bool is_broker_endpoint(const std::string &endpoint)
{
    return endpoint.compare(0, 2, "0-") == 0;
}

std::string broker_socket_path(bool *explicit_path)
{
    const char *env = std::getenv("NPUIPC_BROKER_SOCKET");
    if (explicit_path)
        *explicit_path = env != nullptr;
    return env ? env : "/run/npuipc/broker.sock";
}

bool valid_endpoint(const std::string &endpoint)
{
    return parse_endpoint(endpoint.data(), endpoint.size());
}

std::string format_key(const std::string &endpoint, uint64_t object,
                       const std::array<uint8_t, kSecretBytes> &secret)
{
    return std::string(kKeyPrefix) + endpoint + "." + hex(object) + "." +
           b64_encode(secret.data(), secret.size());
}

std::string redacted(const std::string &endpoint, uint64_t object)
{
    return std::string(kKeyPrefix) + endpoint + "." + hex(object) + ".<secret>";
}

bool secrets_equal(const uint8_t *a, const uint8_t *b)
{
    // Constant time: the exporter's answer time says nothing about how
    // much of a guessed secret was right.
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < kSecretBytes; i++)
        diff = static_cast<uint8_t>(diff | (a[i] ^ b[i]));
    return diff == 0;
}

std::string exporter_dir()
{
    const char *env = std::getenv("NPUIPC_IPC_DIR");
    if (env && *env)
        return env;
    const char *xdg = std::getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (xdg && xdg[0] == '/' && ::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode))
        return std::string(xdg) + "/npuipc";
    return "/tmp/npuipc-" + std::to_string(geteuid());
}

std::vector<std::string> importer_dirs()
{
    const char *env = std::getenv("NPUIPC_IPC_DIR");
    if (env && *env)
        return {env};
    std::vector<std::string> dirs;
    const char *xdg = std::getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0] == '/')
        dirs.push_back(std::string(xdg) + "/npuipc");
    dirs.push_back("/tmp/npuipc-" + std::to_string(geteuid()));
    return dirs;
}

Status check_dir(const std::string &dir, bool create)
{
    if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        int err = errno;
        log(LogLevel::Error, "cannot create the IPC socket directory %s: %s", dir.c_str(),
            std::strerror(err));
        return Status::from_errno(err);
    }
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) {
        int err = errno;
        if (create || err != ENOENT)
            log(LogLevel::Error, "IPC socket directory %s: %s", dir.c_str(), std::strerror(err));
        return Status::from_errno(err);
    }
    if (!S_ISDIR(st.st_mode)) {
        log(LogLevel::Error,
            "refusing IPC socket directory %s: not a directory (symlinks are refused)",
            dir.c_str());
        return Status::from_errno(ENOTDIR);
    }
    if (st.st_uid != geteuid()) {
        log(LogLevel::Error, "refusing IPC socket directory %s: owned by uid %u, not by uid %u",
            dir.c_str(), static_cast<unsigned>(st.st_uid), static_cast<unsigned>(geteuid()));
        return Status::from_errno(EACCES);
    }
    if (st.st_mode & 077) {
        log(LogLevel::Error,
            "refusing IPC socket directory %s: mode %04o is looser than 0700 (fix it: chmod "
            "700, or set NPUIPC_IPC_DIR)",
            dir.c_str(), static_cast<unsigned>(st.st_mode & 07777));
        return Status::from_errno(EACCES);
    }
    return {};
}

Result<std::string> socket_path(const std::string &dir, const std::string &name)
{
    std::string path = dir + "/" + name;
    if (path.size() >= sizeof(sockaddr_un::sun_path)) {
        log(LogLevel::Error, "IPC socket path %s is longer than sun_path allows (%zu bytes)",
            path.c_str(), sizeof(sockaddr_un::sun_path) - 1);
        return Status::from_errno(ENAMETOOLONG);
    }
    return path;
}

Status fill_random(void *buf, size_t len)
{
    auto *p = static_cast<uint8_t *>(buf);
    while (len > 0) {
        ssize_t n = ::getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            log(LogLevel::Error, "getrandom: %s", std::strerror(err));
            return Status::from_errno(err);
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return {};
}

void log(LogLevel level, const char *fmt, ...)
{
    LogHook hook = g_log_hook.load(std::memory_order_acquire);
    if (!hook && !npuipc_log::enabled(static_cast<int>(level)))
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (hook) {
        hook(level, text);
        return;
    }
    npuipc_log::write(static_cast<int>(level), "ipc", text);
}

} // namespace npuipc_ipc

namespace npuipc::ipc {

void set_log_hook(LogHook hook)
{
    detail::g_log_hook.store(hook, std::memory_order_release);
}

Result<Key> parse_key(const char *text, size_t max_len)
{
    if (!text)
        return Status::from_errno(EINVAL);
    size_t len = ::strnlen(text, max_len);
    if (len == max_len || len > kKeyMax)
        return Status::from_errno(EINVAL);
    const size_t prefix = sizeof(detail::kKeyPrefix) - 1;
    if (len <= prefix || std::memcmp(text, detail::kKeyPrefix, prefix) != 0)
        return Status::from_errno(EINVAL);
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '.' || c == '-' || c == '_';
        if (!ok)
            return Status::from_errno(EINVAL);
    }
    // <endpoint>.<object>.<secret>
    const char *p = text + prefix;
    const char *end = text + len;
    const char *dot1 = static_cast<const char *>(std::memchr(p, '.', static_cast<size_t>(end - p)));
    if (!dot1)
        return Status::from_errno(EINVAL);
    const char *dot2 = static_cast<const char *>(
        std::memchr(dot1 + 1, '.', static_cast<size_t>(end - dot1 - 1)));
    if (!dot2 || std::memchr(dot2 + 1, '.', static_cast<size_t>(end - dot2 - 1)))
        return Status::from_errno(EINVAL);

    try {
        Key key;
        if (!detail::parse_endpoint(p, static_cast<size_t>(dot1 - p)))
            return Status::from_errno(EINVAL);
        if (!detail::parse_hex(dot1 + 1, static_cast<size_t>(dot2 - dot1 - 1), 16, &key.object))
            return Status::from_errno(EINVAL);
        if (!detail::b64_decode(dot2 + 1, static_cast<size_t>(end - dot2 - 1), key.secret.data(),
                                key.secret.size()))
            return Status::from_errno(EINVAL);
        key.endpoint.assign(p, static_cast<size_t>(dot1 - p));
        key.text.assign(text, len);
        return key;
    } catch (const std::bad_alloc &) {
        return Status::from_errno(ENOMEM);
    }
}

} // namespace npuipc::ipc
