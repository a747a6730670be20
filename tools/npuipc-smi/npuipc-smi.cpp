// SPDX-License-Identifier: MIT
// npuipc-smi: npuipc devices, their memory and objects, and the processes
// using them, as nvidia-smi or npu-smi show real hardware (npuipc-smi(1)).
//
// Sources, each readable by whom it is: sysfs (which render nodes are
// npuipc's; anyone), GET_INFO on the render node (its memory; whoever may
// open it), /proc/PID/fdinfo (a process's memory, objects and pending jobs
// on a device; its owner or root), debugfs (the device's and module's live
// objects, exported buffers; root).
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "drm/npuipc_drm.h"
#include "npuipc/unique_fd.h"

namespace {

using npuipc::UniqueFd;

struct Device {
    std::string node; // /dev/dri/renderDN
    unsigned minor = 0;
    std::string pci_address; // empty for a virtual device
    int open_error = 0; // errno of opening the node, 0 when GET_INFO worked
    drm_npuipc_get_info info{};
    std::map<std::string, long long> state; // debugfs npuipc_state, if readable
};

struct Export {
    unsigned device = 0;
    unsigned long long offset = 0, size = 0;
    std::string page_class, access;
    int pid = 0, importers = 0;
};

// A stream with jobs pending or in error, from debugfs npuipc_streams.
struct PendingStream {
    unsigned device = 0;
    int pid = 0;
    unsigned long long client = 0;
    unsigned handle = 0, queued = 0;
    int error = 0;
    std::string head; // the head job and what it waits on
};

struct Client {
    int pid = 0;
    std::string comm;
    unsigned device = 0;
    std::map<std::string, std::string> fields; // fdinfo "drm-*" lines
};

struct Snapshot {
    std::vector<Device> devices;
    std::vector<Export> exports;
    std::vector<PendingStream> streams;
    int debugfs = -1; // index in devices of one whose debugfs state could be read
    std::vector<Client> clients;
};

bool read_text(const std::string &path, std::string *out)
{
    std::ifstream in(path);
    if (!in)
        return false;
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return true;
}

std::string link_name(const std::string &path)
{
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0)
        return "";
    buf[n] = '\0';
    const char *slash = std::strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

// The render nodes of npuipc devices, from sysfs (no open needed): those
// whose device carries npuipc_index; a PCI device's address too.
std::vector<Device> find_devices()
{
    std::vector<Device> out;
    DIR *dir = opendir("/sys/class/drm");
    if (!dir)
        return out;
    while (const dirent *e = readdir(dir)) {
        unsigned minor;
        if (std::sscanf(e->d_name, "renderD%u", &minor) != 1)
            continue;
        std::string device = std::string("/sys/class/drm/") + e->d_name + "/device";
        std::string index;
        if (!read_text(device + "/npuipc_index", &index))
            continue;
        Device d;
        d.node = std::string("/dev/dri/") + e->d_name;
        d.minor = minor;
        if (link_name(device + "/subsystem") == "pci")
            d.pci_address = link_name(device);
        out.push_back(d);
    }
    closedir(dir);
    return out;
}

// A debugfs file of the device (root only); false when it cannot be read.
bool read_debugfs(const Device &d, const char *name, std::string *out)
{
    return read_text("/sys/kernel/debug/dri/" + std::to_string(d.minor) + "/" + name, out);
}

void query_device(Device *d)
{
    UniqueFd fd(open(d->node.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd.valid()) {
        d->open_error = errno;
        return;
    }
    if (ioctl(fd.get(), DRM_IOCTL_NPUIPC_GET_INFO, &d->info) != 0) {
        d->open_error = errno;
        return;
    }
    std::string text;
    if (!read_debugfs(*d, "npuipc_state", &text))
        return;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        size_t colon = line.find(':');
        if (colon != std::string::npos)
            d->state[line.substr(0, colon)] = std::strtoll(line.c_str() + colon + 1, nullptr, 0);
    }
}

void read_exports(const Device &d, std::vector<Export> *out)
{
    std::string text;
    if (!read_debugfs(d, "npuipc_exports", &text))
        return;
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line); // header
    while (std::getline(lines, line)) {
        Export x;
        std::istringstream f(line);
        x.device = d.info.device_index;
        if (f >> x.offset >> x.size >> x.page_class >> x.access >> x.pid >> x.importers)
            out->push_back(x);
    }
}

void read_streams(const Device &d, std::vector<PendingStream> *out)
{
    std::string text;
    if (!read_debugfs(d, "npuipc_streams", &text))
        return;
    std::istringstream lines(text);
    std::string line;
    unsigned long long client = 0;
    int pid = 0;
    PendingStream *last = nullptr;
    while (std::getline(lines, line)) {
        PendingStream st;
        char claim[32];
        if (std::sscanf(line.c_str(), "client %llu pid %d", &client, &pid) == 2) {
            last = nullptr;
        } else if (std::sscanf(line.c_str(), "  stream %u: %u queued, error %d, claim %31s", &st.handle,
                               &st.queued, &st.error, claim) == 4) {
            last = nullptr;
            if (!st.queued && !st.error)
                continue;
            st.device = d.info.device_index;
            st.client = client;
            st.pid = pid;
            out->push_back(st);
            last = &out->back();
        } else if (last && line.compare(0, 10, "    head: ") == 0) {
            last->head = line.substr(10);
        }
    }
}

// Every open npuipc DRM fd of the processes this user may inspect.
void read_clients(const std::map<unsigned, unsigned> &index_of_minor, std::vector<Client> *out)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return;
    while (const dirent *p = readdir(proc)) {
        int pid = std::atoi(p->d_name);
        if (pid <= 0)
            continue;
        std::string base = std::string("/proc/") + p->d_name;
        DIR *fds = opendir((base + "/fd").c_str());
        if (!fds)
            continue; // another user's process
        std::string comm;
        read_text(base + "/comm", &comm);
        if (!comm.empty() && comm.back() == '\n')
            comm.pop_back();
        std::map<std::string, bool> seen_clients;
        while (const dirent *f = readdir(fds)) {
            if (f->d_name[0] == '.')
                continue;
            struct stat st;
            if (stat((base + "/fd/" + f->d_name).c_str(), &st) != 0 || !S_ISCHR(st.st_mode))
                continue;
            auto it = index_of_minor.find(minor(st.st_rdev));
            if (major(st.st_rdev) != 226 || it == index_of_minor.end())
                continue;
            std::string text;
            if (!read_text(base + "/fdinfo/" + f->d_name, &text))
                continue;
            Client c;
            c.pid = pid;
            c.comm = comm;
            c.device = it->second;
            std::istringstream lines(text);
            std::string line;
            while (std::getline(lines, line)) {
                size_t colon = line.find(':');
                if ((line.compare(0, 4, "drm-") != 0 && line.compare(0, 7, "npuipc-") != 0) ||
                    colon == std::string::npos)
                    continue;
                size_t v = line.find_first_not_of(" \t", colon + 1);
                c.fields[line.substr(0, colon)] = v == std::string::npos ? "" : line.substr(v);
            }
            // Duplicated fds of one open file share a client id: count it once.
            std::string id = c.fields.count("drm-client-id") ? c.fields["drm-client-id"] : "";
            if (seen_clients[id])
                continue;
            seen_clients[id] = true;
            out->push_back(c);
        }
        closedir(fds);
    }
    closedir(proc);
}

Snapshot take_snapshot()
{
    Snapshot s;
    s.devices = find_devices();
    std::map<unsigned, unsigned> index_of_minor;
    for (Device &d : s.devices) {
        query_device(&d);
        if (d.open_error)
            continue;
        index_of_minor[d.minor] = d.info.device_index;
        if (!d.state.empty()) {
            read_exports(d, &s.exports);
            read_streams(d, &s.streams);
        }
    }
    std::sort(s.devices.begin(), s.devices.end(), [](const Device &a, const Device &b) {
        return a.open_error != b.open_error ? a.open_error < b.open_error
                                            : a.info.device_index < b.info.device_index;
    });
    for (size_t i = 0; i < s.devices.size() && s.debugfs < 0; i++)
        if (!s.devices[i].state.empty())
            s.debugfs = static_cast<int>(i);
    read_clients(index_of_minor, &s.clients);
    return s;
}

const char *kind(const Device &d)
{
    return (d.info.caps & NPUIPC_CAP_VIRTUAL) ? "virtual" : "pci";
}

long long state(const Device &d, const char *key)
{
    auto it = d.state.find(key);
    return it == d.state.end() ? -1 : it->second;
}

std::string count(long long v)
{
    return v < 0 ? "-" : std::to_string(v);
}

std::string json_string(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        // Control characters, and bytes that may not be UTF-8 (a comm is
        // any bytes), escaped as code points.
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            char esc[8];
            std::snprintf(esc, sizeof(esc), "\\u%04x", static_cast<unsigned char>(c));
            out += esc;
            continue;
        }
        out += c;
    }
    return out + "\"";
}

void print_table(const Snapshot &s)
{
    std::printf("%-5s %-20s %-8s %-12s %10s %10s %8s %8s\n", "INDEX", "NODE", "KIND", "PCI",
                "MEM TOTAL", "MEM USED", "OBJECTS", "IMPORTS");
    for (const Device &d : s.devices) {
        if (d.open_error)
            continue;
        std::printf("%-5u %-20s %-8s %-12s %6" PRIu64 " MiB %6" PRIu64 " MiB %8s %8s\n",
                    d.info.device_index, d.node.c_str(), kind(d),
                    d.pci_address.empty() ? "-" : d.pci_address.c_str(),
                    static_cast<uint64_t>(d.info.mem_total >> 20),
                    static_cast<uint64_t>((d.info.mem_total - d.info.mem_free) >> 20), count(state(d, "live_objects")).c_str(),
                    count(state(d, "imports")).c_str());
    }
    if (s.debugfs >= 0) {
        const Device &d = s.devices[s.debugfs];
        std::printf("\nmodule: %s streams, %s events, %s notifies, %s jobs pending, %s dma-bufs, "
                    "%s event/notify files\n",
                    count(state(d, "streams")).c_str(), count(state(d, "events")).c_str(),
                    count(state(d, "notifies")).c_str(), count(state(d, "jobs")).c_str(),
                    count(state(d, "dmabufs")).c_str(), count(state(d, "object_files")).c_str());
        std::printf("\n%-6s %12s %12s %-8s %-6s %8s %9s\n", "DEVICE", "OFFSET", "SIZE", "CLASS",
                    "ACCESS", "PID", "IMPORTERS");
        if (s.exports.empty())
            std::printf("(no exported buffer)\n");
        for (const Export &x : s.exports)
            std::printf("%-6u %12llu %12llu %-8s %-6s %8d %9d\n", x.device, x.offset, x.size,
                        x.page_class.c_str(), x.access.c_str(), x.pid, x.importers);
        std::printf("\n%-6s %8s %6s %6s %6s %6s  %s\n", "DEVICE", "PID", "CLIENT", "STREAM",
                    "QUEUED", "ERROR", "HEAD JOB");
        if (s.streams.empty())
            std::printf("(no stream with pending jobs)\n");
        for (const PendingStream &st : s.streams)
            std::printf("%-6u %8d %6llu %6u %6u %6d  %s\n", st.device, st.pid, st.client, st.handle,
                        st.queued, st.error, st.head.c_str());
    } else {
        std::printf("\n(objects, exported buffers and streams: root only, from debugfs)\n");
    }
    std::printf("\n%-8s %-16s %-6s %6s %7s %7s %5s %6s %8s %12s %12s %12s\n", "PID", "PROCESS",
                "DEVICE", "CLIENT", "BUFFERS", "STREAMS", "JOBS", "EVENTS", "NOTIFIES", "DEVICE MEM",
                "IMPORTED", "COPY ENGINE");
    if (s.clients.empty())
        std::printf("(no process%s)\n", geteuid() == 0 ? "" : " of yours");
    for (const Client &c : s.clients) {
        auto field = [&](const char *k) {
            auto it = c.fields.find(k);
            return it == c.fields.end() ? std::string("-") : it->second;
        };
        std::printf("%-8d %-16s %-6u %6s %7s %7s %5s %6s %8s %12s %12s %12s\n", c.pid,
                    c.comm.c_str(), c.device, field("drm-client-id").c_str(),
                    field("npuipc-buffers").c_str(), field("npuipc-streams").c_str(),
                    field("npuipc-jobs").c_str(), field("npuipc-events").c_str(),
                    field("npuipc-notifies").c_str(), field("drm-memory-device").c_str(),
                    field("npuipc-memory-imported").c_str(), field("drm-engine-copy").c_str());
    }
}

void print_json(const Snapshot &s)
{
    std::printf("{\"devices\": [");
    const char *sep = "";
    for (const Device &d : s.devices) {
        if (d.open_error)
            continue;
        std::printf("%s{\"index\": %u, \"node\": %s, \"kind\": \"%s\", \"pci_address\": %s, "
                    "\"uapi_version\": %u, \"mem_total\": %" PRIu64 ", \"mem_used\": %" PRIu64,
                    sep, d.info.device_index, json_string(d.node).c_str(), kind(d),
                    d.pci_address.empty() ? "null" : json_string(d.pci_address).c_str(),
                    d.info.uapi_version, static_cast<uint64_t>(d.info.mem_total),
                    static_cast<uint64_t>(d.info.mem_total - d.info.mem_free));
        for (const char *k : {"live_objects", "imports"})
            if (state(d, k) >= 0)
                std::printf(", \"%s\": %lld", k, state(d, k));
        std::printf("}");
        sep = ", ";
    }
    std::printf("]");
    if (s.debugfs >= 0) {
        const Device &d = s.devices[s.debugfs];
        std::printf(", \"module\": {");
        sep = "";
        for (const char *k : {"streams", "events", "notifies", "jobs", "dmabufs", "object_files"}) {
            std::printf("%s\"%s\": %lld", sep, k, state(d, k));
            sep = ", ";
        }
        std::printf("}, \"exports\": [");
        sep = "";
        for (const Export &x : s.exports) {
            std::printf("%s{\"device\": %u, \"offset\": %llu, \"size\": %llu, \"class\": %s, "
                        "\"access\": %s, \"exporter_pid\": %d, \"importers\": %d}",
                        sep, x.device, x.offset, x.size, json_string(x.page_class).c_str(),
                        json_string(x.access).c_str(), x.pid, x.importers);
            sep = ", ";
        }
        std::printf("], \"streams\": [");
        sep = "";
        for (const PendingStream &st : s.streams) {
            std::printf("%s{\"device\": %u, \"pid\": %d, \"client\": %llu, \"stream\": %u, "
                        "\"queued\": %u, \"error\": %d, \"head\": %s}",
                        sep, st.device, st.pid, st.client, st.handle, st.queued, st.error,
                        json_string(st.head).c_str());
            sep = ", ";
        }
        std::printf("]");
    }
    std::printf(", \"processes\": [");
    sep = "";
    for (const Client &c : s.clients) {
        std::printf("%s{\"pid\": %d, \"comm\": %s, \"device\": %u", sep, c.pid,
                    json_string(c.comm).c_str(), c.device);
        for (const auto &f : c.fields)
            std::printf(", %s: %s", json_string(f.first).c_str(), json_string(f.second).c_str());
        std::printf("}");
        sep = ", ";
    }
    std::printf("]}\n");
}

void usage(FILE *to)
{
    std::fprintf(to, "usage: npuipc-smi [--json] [-l|--loop SECONDS]\n"
                     "Shows npuipc devices, their memory and objects, and the processes using them.\n"
                     "  --json            one JSON object per report\n"
                     "  -l, --loop SECS   report again every SECS seconds until interrupted\n"
                     "Exit status: 0; 1 no npuipc device (module not loaded), or no node\n"
                     "could be opened; 2 usage; 3 permission denied on every device node.\n");
}

} // namespace

int main(int argc, char **argv)
{
    bool json = false;
    long loop = 0;
    static const option options[] = {{"json", no_argument, nullptr, 'j'},
                                     {"loop", required_argument, nullptr, 'l'},
                                     {"help", no_argument, nullptr, 'h'},
                                     {nullptr, 0, nullptr, 0}};
    for (int c; (c = getopt_long(argc, argv, "l:h", options, nullptr)) != -1;) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'l': {
            char *end;
            loop = std::strtol(optarg, &end, 10);
            if (*end || loop <= 0 || loop > 86400) {
                std::fprintf(stderr, "npuipc-smi: --loop wants 1..86400 seconds, not '%s'\n", optarg);
                return 2;
            }
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    for (;;) {
        Snapshot s = take_snapshot();
        if (s.devices.empty()) {
            if (access("/sys/module/npuipc", F_OK) != 0)
                std::fprintf(stderr, "npuipc-smi: the npuipc module is not loaded (modprobe npuipc)\n");
            else
                std::fprintf(stderr, "npuipc-smi: npuipc is loaded but has no device (num_devices=0?)\n");
            return 1;
        }
        size_t failed = 0, denied = 0;
        for (const Device &d : s.devices) {
            if (!d.open_error)
                continue;
            failed++;
            denied += d.open_error == EACCES || d.open_error == EPERM;
            std::fprintf(stderr, "npuipc-smi: %s: %s%s\n", d.node.c_str(), std::strerror(d.open_error),
                         d.open_error == EACCES ? " (join the group owning it, usually 'render')" : "");
        }
        if (failed == s.devices.size())
            return denied == failed ? 3 : 1;
        if (json)
            print_json(s);
        else
            print_table(s);
        if (!loop)
            return 0;
        std::fflush(stdout);
        sleep(static_cast<unsigned>(loop));
        if (!json)
            std::printf("\n");
    }
}
