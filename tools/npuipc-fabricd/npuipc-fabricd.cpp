// SPDX-License-Identifier: MIT
// npuipc-fabricd: one server's fabric daemon. It holds the memory this
// server's processes export as fabric handles (the dma-bufs of their
// buffers in the fabric window), answers the other servers' daemons when
// they ask to import one (gRPC: by secret and allowlist), and makes the
// imports its own processes ask for (FABRIC_IMPORT, which only it may
// do: CAP_SYS_ADMIN). Local processes reach it on a Unix socket
// (libnpuipc's npuipc/fabric.h). Documentation/fabric.md describes the
// design and the trust model; npuipc-fabricd(8) the options.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "drm/npuipc_drm.h"
#include "fabric.grpc.pb.h"
#include "fabric/wire.h"
#include "ipc/internal.h"
#include "lease.h"
#include "log.h"
#include "npuipc/fabric.h"
#include "npuipc/unique_fd.h"

namespace {

namespace wire = npuipc::fabric::wire;
static_assert(wire::kSecretBytes == npuipc::ipc::kSecretBytes, "secrets_equal's length");
using npuipc::UniqueFd;
using npuipc::fabric::AllowedProcess;
using npuipc::fabric::Handle;
using npuipc::fabric::kAnyServer;
using npuipc::fabric::kHandleBytes;
using npuipc_fabricd::logf;

// Exports one daemon holds (each a dma-buf and an import in its DRM file),
// and those of one user.
constexpr size_t kMaxExports = 1024;
constexpr size_t kMaxExportsPerUid = 256;
// Connections served at once (a thread each), and those of one user.
constexpr int kMaxConnections = 256;
constexpr int kMaxConnectionsPerUid = 64;
// How long an import waits for the owner's daemon.
constexpr auto kPeerDeadline = std::chrono::seconds(10);
// Allowlist entries one export holds.
constexpr size_t kMaxAllowed = 256;


struct Options {
    std::string socket = npuipc::fabric::daemon_socket_path();
    std::string listen;                  // host:port of the gRPC service
    std::map<uint32_t, std::string> peers; // sdid -> host:port
    std::chrono::milliseconds lease_term = npuipc_fabricd::kDefaultLeaseTerm;
};

struct Export {
    UniqueFd dmabuf;
    std::array<uint8_t, wire::kSecretBytes> secret{};
    uint64_t offset = 0; // in the window
    uint64_t size = 0;
    bool validate_pid = false;
    std::vector<AllowedProcess> allowed;
    uint64_t conn = 0; // the exporting connection
    uid_t uid = 0;     // its user's
};

// The window this daemon serves: its DRM fd and its part.
struct Window {
    int fd = -1;
    drm_npuipc_fabric_info info{};
};

Window g_window;

// Protects g_exports, g_next_id, g_connections and g_user_connections
std::mutex g_mu;
std::map<uint64_t, Export> g_exports;
uint64_t g_next_id = 1;
int g_connections = 0;
std::map<uid_t, int> g_user_connections;

// Protects the GEM handles of the window's DRM file: a dma-buf already
// imported there gives back the same handle, which one thread must not
// close while another uses it.
std::mutex g_drm_mu;

bool allowed_to(const Export &e, uint32_t sdid, int32_t pid)
{
    if (!e.validate_pid)
        return true;
    for (const AllowedProcess &a : e.allowed)
        if ((a.sdid == sdid || a.sdid == kAnyServer) && a.pid == pid)
            return true;
    return false;
}

// The owner's check of an import, local or asked by a peer: 0 with the
// range, or the errno of the refusal.
int judge(uint64_t id, const uint8_t *secret, uint64_t size_asked, uint32_t sdid, int32_t pid,
          uint64_t *offset, uint64_t *size, int *dmabuf_dup)
{
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_exports.find(id);
    if (it == g_exports.end() || !npuipc_ipc::secrets_equal(it->second.secret.data(), secret) ||
        it->second.size != size_asked)
        return ESRCH;
    if (!allowed_to(it->second, sdid, pid))
        return EACCES;
    *offset = it->second.offset;
    *size = it->second.size;
    if (dmabuf_dup) {
        *dmabuf_dup = ::fcntl(it->second.dmabuf.get(), F_DUPFD_CLOEXEC, 0);
        if (*dmabuf_dup < 0)
            return errno == EMFILE || errno == ENFILE ? EAGAIN : errno;
    }
    return 0;
}

std::unique_ptr<npuipc_fabricd::Grants> g_grants;
std::unique_ptr<npuipc_fabricd::Leases> g_leases;

std::vector<uint64_t> grant_ids(const npuipc::fabric::v1::LeaseRequest &req)
{
    return std::vector<uint64_t>(req.grant_ids().begin(), req.grant_ids().end());
}

class FabricService final : public npuipc::fabric::v1::Fabric::Service {
    grpc::Status Renew(grpc::ServerContext *, const npuipc::fabric::v1::LeaseRequest *req,
                       npuipc::fabric::v1::RenewReply *reply) override
    {
        if (req->importer_sdid() == g_window.info.sdid ||
            req->grant_ids_size() > npuipc_fabricd::kMaxGrantsPerCall)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "malformed request");
        for (uint64_t id : g_grants->renew(req->importer_sdid(), grant_ids(*req)))
            reply->add_unknown(id);
        return grpc::Status::OK;
    }

    grpc::Status Release(grpc::ServerContext *, const npuipc::fabric::v1::LeaseRequest *req,
                         npuipc::fabric::v1::ReleaseReply *) override
    {
        if (req->importer_sdid() == g_window.info.sdid ||
            req->grant_ids_size() > npuipc_fabricd::kMaxGrantsPerCall)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "malformed request");
        g_grants->release(req->importer_sdid(), grant_ids(*req));
        return grpc::Status::OK;
    }

    grpc::Status Import(grpc::ServerContext *, const npuipc::fabric::v1::ImportRequest *req,
                        npuipc::fabric::v1::ImportReply *reply) override
    {
        if (req->secret().size() != wire::kSecretBytes || req->export_id() == 0)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "malformed request");
        uint64_t offset = 0, size = 0;
        if (req->importer_sdid() == g_window.info.sdid)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "an import asked as this server");
        int dup = -1;
        int err = judge(req->export_id(),
                        reinterpret_cast<const uint8_t *>(req->secret().data()), req->size(),
                        req->importer_sdid(), req->importer_pid(), &offset, &size, &dup);
        if (err == ESRCH) {
            logf("refused server %u pid %d: no such export", req->importer_sdid(),
                 req->importer_pid());
            return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such export");
        }
        if (err == EACCES) {
            logf("refused server %u pid %d: not on the allowlist", req->importer_sdid(),
                 req->importer_pid());
            return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not on the allowlist");
        }
        // The grant keeps the memory, whatever its exporter does, until
        // the importer lets go or stops renewing.
        uint64_t grant = 0;
        if (!err)
            err = g_grants->add(req->importer_sdid(), UniqueFd(dup), &grant);
        if (err == ENOSPC)
            return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many grants");
        if (err)
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, std::strerror(err));
        reply->set_offset(offset);
        reply->set_size(size);
        reply->set_grant_id(grant);
        reply->set_lease_ms(static_cast<uint32_t>(g_grants->lease_term().count()));
        return grpc::Status::OK;
    }
};

std::map<uint32_t, std::unique_ptr<npuipc::fabric::v1::Fabric::Stub>> g_stubs;

int errno_of(const grpc::Status &status)
{
    switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND:
        return ESRCH;
    case grpc::StatusCode::PERMISSION_DENIED:
        return EACCES;
    case grpc::StatusCode::INVALID_ARGUMENT:
        return EINVAL;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
        return ETIMEDOUT;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return ENOSPC;
    case grpc::StatusCode::UNAVAILABLE:
        return EHOSTUNREACH;
    default:
        return EPROTO;
    }
}

// ---- the window ----

int open_window(Window *w)
{
    for (int minor = 128; minor < 128 + 256; minor++) {
        char path[32];
        std::snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
        UniqueFd fd(::open(path, O_RDWR | O_CLOEXEC));
        if (!fd)
            continue;
        drmVersionPtr v = drmGetVersion(fd.get());
        bool ours = v && std::strcmp(v->name, NPUIPC_DRIVER_NAME) == 0;
        drmFreeVersion(v);
        drm_npuipc_fabric_info info{};
        if (ours && drmIoctl(fd.get(), DRM_IOCTL_NPUIPC_FABRIC_INFO, &info) == 0) {
            w->fd = fd.release();
            w->info = info;
            return 0;
        }
    }
    return ENODEV;
}

// The range of this server's part that a dma-buf of the window holds.
int locate(int dmabuf, uint64_t *offset, uint64_t *size)
{
    std::lock_guard<std::mutex> lock(g_drm_mu);
    uint32_t handle = 0;
    if (drmPrimeFDToHandle(g_window.fd, dmabuf, &handle) != 0)
        return EINVAL;
    drm_npuipc_bo_info info{};
    info.handle = handle;
    int err = drmIoctl(g_window.fd, DRM_IOCTL_NPUIPC_BO_INFO, &info) == 0 ? 0 : errno;
    drmCloseBufferHandle(g_window.fd, handle);
    if (err)
        return err;
    const uint64_t part = g_window.info.part_offset, part_size = g_window.info.part_size;
    if (!(info.bo_flags & NPUIPC_BO_FABRIC) || (info.bo_flags & NPUIPC_BO_READ_ONLY) ||
        info.fabric_offset < part || info.size > part_size ||
        info.fabric_offset - part > part_size - info.size)
        return EINVAL;
    *offset = info.fabric_offset;
    *size = info.size;
    return 0;
}

// FABRIC_IMPORT of another server's range until `deadline_ns` (the
// kernel's CLOCK_BOOTTIME), as a dma-buf, and its lease fd.
int import_range(uint32_t sdid, uint64_t offset, uint64_t size, uint64_t deadline_ns,
                 UniqueFd *out, UniqueFd *lease)
{
    std::lock_guard<std::mutex> lock(g_drm_mu);
    drm_npuipc_fabric_import args{};
    args.offset = offset;
    args.size = size;
    args.sdid = sdid;
    args.lease_deadline_ns = deadline_ns;
    if (drmIoctl(g_window.fd, DRM_IOCTL_NPUIPC_FABRIC_IMPORT, &args) != 0) {
        if (errno == ETIMEDOUT)
            return ETIMEDOUT;
        return errno == EINVAL ? EPROTO : EIO; // a peer that named a bad range
    }
    *lease = UniqueFd(args.lease_fd);
    int fd = -1;
    int err = drmPrimeHandleToFD(g_window.fd, args.handle, DRM_CLOEXEC | DRM_RDWR, &fd) == 0 ? 0 : EIO;
    drmCloseBufferHandle(g_window.fd, args.handle);
    *out = UniqueFd(fd);
    return err;
}

// ---- local requests ----

void new_handle(uint64_t id, const Export &e, uint8_t *out)
{
    std::memset(out, 0, kHandleBytes);
    const uint32_t version = wire::kHandleVersion, sdid = g_window.info.sdid;
    std::memcpy(out, wire::kHandleMagic, sizeof(wire::kHandleMagic));
    std::memcpy(out + wire::kVersionAt, &version, sizeof(version));
    std::memcpy(out + wire::kSdidAt, &sdid, sizeof(sdid));
    std::memcpy(out + wire::kIdAt, &id, sizeof(id));
    std::memcpy(out + wire::kSizeAt, &e.size, sizeof(e.size));
    std::memcpy(out + wire::kSecretAt, e.secret.data(), e.secret.size());
}

int do_export(uint64_t conn, uid_t uid, const wire::Request &req, UniqueFd dmabuf,
              wire::Reply *reply)
{
    if (!dmabuf || (req.flags & ~wire::kValidatePid) || req.npids)
        return EINVAL;
    Export e;
    int err = locate(dmabuf.get(), &e.offset, &e.size);
    if (err)
        return err;
    if (!npuipc_ipc::fill_random(e.secret.data(), e.secret.size()).ok())
        return EIO;
    e.dmabuf = std::move(dmabuf);
    e.validate_pid = req.flags & wire::kValidatePid;
    e.conn = conn;
    e.uid = uid;
    std::lock_guard<std::mutex> lock(g_mu);
    size_t of_user = 0;
    for (const auto &entry : g_exports)
        of_user += entry.second.uid == uid;
    if (g_exports.size() >= kMaxExports || of_user >= kMaxExportsPerUid)
        return ENOSPC;
    uint64_t id = g_next_id++;
    new_handle(id, e, reply->handle);
    g_exports.emplace(id, std::move(e));
    return 0;
}

// The export of this connection that a request's handle names.
Export *own_export(uint64_t conn, const Handle &h)
{
    auto it = g_exports.find(h.export_id());
    if (h.owner_sdid() != g_window.info.sdid || it == g_exports.end() || it->second.conn != conn ||
        !npuipc_ipc::secrets_equal(it->second.secret.data(), h.data.data() + wire::kSecretAt))
        return nullptr;
    return &it->second;
}

int do_allow(uint64_t conn, const wire::Request &req, const Handle &h)
{
    if (req.flags || req.npids == 0 || req.npids > npuipc::fabric::kMaxPidsPerCall)
        return EINVAL;
    std::lock_guard<std::mutex> lock(g_mu);
    Export *e = own_export(conn, h);
    if (!e)
        return ESRCH;
    if (e->allowed.size() + req.npids > kMaxAllowed)
        return ENOSPC;
    for (uint32_t i = 0; i < req.npids; i++) {
        if (req.pids[i].pid <= 0)
            return EINVAL;
    }
    e->allowed.insert(e->allowed.end(), req.pids, req.pids + req.npids);
    return 0;
}

int do_release(uint64_t conn, const wire::Request &req, const Handle &h)
{
    if (req.flags || req.npids)
        return EINVAL;
    std::lock_guard<std::mutex> lock(g_mu);
    if (!own_export(conn, h))
        return ESRCH;
    g_exports.erase(h.export_id());
    return 0;
}

int do_import(const wire::Request &req, const Handle &h, int32_t pid, UniqueFd *out)
{
    if (req.flags || req.npids)
        return EINVAL;
    const uint8_t *secret = h.data.data() + wire::kSecretAt;
    uint64_t offset = 0, size = 0;
    if (h.owner_sdid() == g_window.info.sdid) {
        int fd = -1;
        int err = judge(h.export_id(), secret, h.size(), g_window.info.sdid, pid, &offset, &size,
                        &fd);
        if (!err)
            *out = UniqueFd(fd);
        return err;
    }
    auto stub = g_stubs.find(h.owner_sdid());
    if (stub == g_stubs.end())
        return EHOSTUNREACH;
    npuipc::fabric::v1::ImportRequest ask;
    ask.set_export_id(h.export_id());
    ask.set_secret(secret, wire::kSecretBytes);
    ask.set_importer_sdid(g_window.info.sdid);
    ask.set_importer_pid(pid);
    ask.set_size(h.size());
    npuipc::fabric::v1::ImportReply granted;
    grpc::ClientContext ctx;
    const uint64_t asked = npuipc_fabricd::boottime_ns();
    ctx.set_deadline(std::chrono::system_clock::now() + kPeerDeadline);
    // A peer that restarted is reached again within the deadline, not
    // after the channel's reconnect backoff.
    ctx.set_wait_for_ready(true);
    grpc::Status status = stub->second->Import(&ctx, ask, &granted);
    if (!status.ok()) {
        logf("server %u refused or failed an import for pid %d: %s", h.owner_sdid(), pid,
             status.error_message().c_str());
        return errno_of(status);
    }
    // The term runs from the asking: an answer that took long leaves too
    // little of it to reach the first renewal.
    const auto term = g_leases->term(std::chrono::milliseconds(granted.lease_ms()));
    const uint64_t deadline =
        asked + static_cast<uint64_t>(std::chrono::nanoseconds(term).count());
    const uint64_t least = static_cast<uint64_t>(
        std::chrono::nanoseconds(npuipc_fabricd::kLeastTermLeft).count());
    UniqueFd lease;
    int err;
    if (granted.size() != h.size() || !granted.grant_id() || !granted.lease_ms())
        err = EPROTO;
    else if (npuipc_fabricd::boottime_ns() + least > deadline)
        err = ETIMEDOUT;
    else
        err = import_range(h.owner_sdid(), granted.offset(), granted.size(), deadline, out, &lease);
    if (err) {
        g_leases->release(h.owner_sdid(), granted.grant_id());
        return err;
    }
    g_leases->add(h.owner_sdid(), granted.grant_id(), std::move(lease), deadline, term);
    return 0;
}

void serve(UniqueFd conn_fd, uint64_t conn, struct ucred cred)
{
    for (;;) {
        wire::Request req{};
        std::vector<UniqueFd> fds;
        int flags = 0;
        ssize_t n = wire::receive(conn_fd.get(), &req, sizeof(req), fds, &flags);
        if (n <= 0)
            break;
        UniqueFd fd_in;
        if (fds.size() == 1)
            fd_in = std::move(fds.front());
        wire::Reply reply{};
        reply.magic = wire::kReplyMagic;
        UniqueFd fd_out;
        Handle h;
        std::memcpy(h.data.data(), req.handle, kHandleBytes);
        const auto op = static_cast<wire::Op>(req.op);
        int err;
        if (n != sizeof(req) || req.magic != wire::kRequestMagic ||
            (flags & (MSG_CTRUNC | MSG_TRUNC)) || fds.size() > 1)
            err = EPROTO;
        else if (op == wire::Op::Export)
            err = do_export(conn, cred.uid, req, std::move(fd_in), &reply);
        else if (fd_in || !h.well_formed())
            err = EINVAL;
        else if (op == wire::Op::Allow)
            err = do_allow(conn, req, h);
        else if (op == wire::Op::Release)
            err = do_release(conn, req, h);
        else if (op == wire::Op::Import)
            err = do_import(req, h, cred.pid, &fd_out);
        else
            err = EINVAL;
        reply.error = err;
        if (npuipc_ipc::send_with_fd(conn_fd.get(), &reply, sizeof(reply), err ? -1 : fd_out.get(), 0) < 0)
            break;
    }
    // The exporter is gone: so are its exports (imports made stay).
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto it = g_exports.begin(); it != g_exports.end();)
        it = it->second.conn == conn ? g_exports.erase(it) : std::next(it);
    g_connections--;
    if (--g_user_connections[cred.uid] == 0)
        g_user_connections.erase(cred.uid);
}

// A connection over the caps gets one answer, EBUSY, and is closed.
void refuse_busy(int fd)
{
    wire::Reply reply{};
    reply.magic = wire::kReplyMagic;
    reply.error = EBUSY;
    npuipc_ipc::send_with_fd(fd, &reply, sizeof(reply), -1, MSG_DONTWAIT);
}

int listen_on(const std::string &path)
{
    struct sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        return -ENAMETOOLONG;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    // Its directory (/run/npuipc, shared with the broker) made if need be.
    size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0)
        ::mkdir(path.substr(0, slash).c_str(), 0755);
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    // A daemon that answers there already keeps its socket.
    if (::connect(fd, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) == 0) {
        ::close(fd);
        return -EADDRINUSE;
    }
    ::close(fd);
    fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    ::unlink(path.c_str());
    if (::bind(fd, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) != 0 ||
        ::chmod(path.c_str(), 0666) != 0 || ::listen(fd, 64) != 0) {
        int err = errno;
        ::close(fd);
        return -err;
    }
    return fd;
}

void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: npuipc-fabricd --listen HOST:PORT [--peer SDID=HOST:PORT]... [--socket PATH]\n"
                 "                      [--lease-term SECONDS]\n"
                 "Serves this server's fabric window: local processes on the Unix socket\n"
                 "(default $NPUIPC_FABRIC_SOCKET, else /run/npuipc/fabric.sock), the other\n"
                 "servers' daemons on HOST:PORT (gRPC). See npuipc-fabricd(8).\n");
}

int parse(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            std::exit(0);
        }
        if (i + 1 >= argc)
            return -1;
        std::string value = argv[++i];
        if (arg == "--listen") {
            o->listen = value;
        } else if (arg == "--socket") {
            o->socket = value;
        } else if (arg == "--peer") {
            size_t eq = value.find('=');
            char *end = nullptr;
            unsigned long sdid = std::strtoul(value.c_str(), &end, 10);
            if (eq == std::string::npos || eq == 0 || end != value.c_str() + eq ||
                sdid >= kAnyServer || eq + 1 == value.size())
                return -1;
            o->peers[static_cast<uint32_t>(sdid)] = value.substr(eq + 1);
        } else if (arg == "--lease-term") {
            char *end = nullptr;
            errno = 0;
            const unsigned long n = std::strtoul(value.c_str(), &end, 10);
            // Bounded before the conversion, which a huge n would overflow.
            if (!std::isdigit(static_cast<unsigned char>(value[0])) || *end || errno || n > 1000000)
                return -1;
            const std::chrono::milliseconds term = std::chrono::seconds(n);
            if (term < npuipc_fabricd::kMinLeaseTerm || term > npuipc_fabricd::kMaxLeaseTerm)
                return -1;
            o->lease_term = term;
        } else {
            return -1;
        }
    }
    return o->listen.empty() ? -1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
    Options options;
    if (parse(argc, argv, &options) != 0) {
        usage(stderr);
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);
    // Every export holds an fd: as many as the hard limit allows.
    struct rlimit nofile{};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &nofile);
    }
    int err = open_window(&g_window);
    if (err) {
        logf("no fabric window (is npuipc.ko loaded with fabric_sdid?)");
        return 1;
    }
    for (const auto &[sdid, address] : options.peers) {
        if (sdid == g_window.info.sdid) {
            logf("--peer %u is this server", sdid);
            return 2;
        }
        // A peer that restarts is reached again within a second, not after
        // gRPC's default backoff (up to two minutes): leases are renewed
        // every second.
        grpc::ChannelArguments args;
        args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
        args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
        args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
        g_stubs[sdid] = npuipc::fabric::v1::Fabric::NewStub(grpc::CreateCustomChannel(
            address, grpc::InsecureChannelCredentials(), args));
    }

    g_grants = std::make_unique<npuipc_fabricd::Grants>(g_window.fd, options.lease_term);
    g_leases = std::make_unique<npuipc_fabricd::Leases>(g_window.fd, g_window.info.sdid, &g_stubs,
                                                         options.lease_term);
    std::thread([] { g_grants->expire_forever(); }).detach();
    std::thread([] { g_leases->run_forever(); }).detach();

    FabricService service;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server || port == 0) {
        logf("cannot serve gRPC on %s", options.listen.c_str());
        std::_Exit(1);
    }
    int listen_fd = listen_on(options.socket);
    if (listen_fd < 0) {
        logf("cannot listen on %s: %s", options.socket.c_str(), std::strerror(-listen_fd));
        std::_Exit(1); // gRPC's threads run: no static destructors
    }
    logf("sdid %u, part %llu+%llu of the window; gRPC on %s; local on %s; leases of %lld s",
         g_window.info.sdid, static_cast<unsigned long long>(g_window.info.part_offset),
         static_cast<unsigned long long>(g_window.info.part_size), options.listen.c_str(),
         options.socket.c_str(),
         static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(options.lease_term).count()));

    uint64_t next_conn = 1;
    for (;;) {
        int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                continue;
            }
            logf("accept: %s", std::strerror(errno));
            std::_Exit(1); // threads run: no static destructors
        }
        UniqueFd conn(fd);
        struct ucred cred{};
        socklen_t len = sizeof(cred);
        if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
            continue;
        {
            std::lock_guard<std::mutex> lock(g_mu);
            if (g_connections >= kMaxConnections ||
                g_user_connections[cred.uid] >= kMaxConnectionsPerUid) {
                if (g_user_connections[cred.uid] == 0)
                    g_user_connections.erase(cred.uid);
                refuse_busy(conn.get());
                continue;
            }
            g_connections++;
            g_user_connections[cred.uid]++;
        }
        uint64_t id = next_conn++;
        try {
            std::thread([c = std::move(conn), id, cred]() mutable { serve(std::move(c), id, cred); })
                .detach();
        } catch (const std::system_error &) {
            std::lock_guard<std::mutex> lock(g_mu);
            g_connections--;
            if (--g_user_connections[cred.uid] == 0)
                g_user_connections.erase(cred.uid);
        }
    }
}
