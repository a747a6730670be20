// SPDX-License-Identifier: MIT
// The npuipc state of this process as the kernel sees it, minus what the
// aclrt runtime holds for its own use (npuipc/runtime_objects.h): every fd
// but the runtime's own, by number and what it is, and per device the
// handles its DRM files hold (fdinfo, npuipc(4)). AclTest takes it before
// and after each test: a library leak is a difference.
#ifndef NPUIPC_TEST_NPUIPC_STATE_H
#define NPUIPC_TEST_NPUIPC_STATE_H

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "npuipc/runtime_objects.h"

namespace acltest {

struct NpuipcState {
    std::map<int, std::string> fds; // fd -> its /proc/self/fd link
    // npuipc index -> fdinfo key -> value summed over the process's DRM
    // files of that device (each file once), the runtime's own subtracted;
    // a device whose values are all 0 is left out.
    std::map<uint32_t, std::map<std::string, int64_t>> devices;

    bool operator==(const NpuipcState &o) const { return fds == o.fds && devices == o.devices; }
    bool operator!=(const NpuipcState &o) const { return !(*this == o); }

    // What `now` has that this state had not, and the other way round.
    std::string DiffTo(const NpuipcState &now) const
    {
        std::ostringstream out;
        for (const auto &fd : now.fds)
            if (!fds.count(fd.first) || fds.at(fd.first) != fd.second)
                out << "\n  fd " << fd.first << " (" << fd.second << ") is new";
        for (const auto &fd : fds)
            if (!now.fds.count(fd.first) || now.fds.at(fd.first) != fd.second)
                out << "\n  fd " << fd.first << " (" << fd.second << ") is gone";
        std::set<uint32_t> all;
        for (const auto &d : devices)
            all.insert(d.first);
        for (const auto &d : now.devices)
            all.insert(d.first);
        for (uint32_t d : all) {
            std::map<std::string, int64_t> before, after;
            if (devices.count(d))
                before = devices.at(d);
            if (now.devices.count(d))
                after = now.devices.at(d);
            std::set<std::string> keys;
            for (const auto &k : before)
                keys.insert(k.first);
            for (const auto &k : after)
                keys.insert(k.first);
            for (const auto &k : keys)
                if (before[k] != after[k])
                    out << "\n  device " << d << " " << k << ": " << before[k] << " -> "
                        << after[k];
        }
        return out.str();
    }
};

// The fdinfo keys that count what a DRM file holds (values in KiB or units).
inline const std::vector<std::string> &NpuipcFdinfoKeys()
{
    static const std::vector<std::string> keys = {
        "drm-memory-device", "npuipc-memory-imported", "npuipc-buffers", "npuipc-imports",
        "npuipc-streams",    "npuipc-events",          "npuipc-notifies", "npuipc-jobs"};
    return keys;
}

// The npuipc index of a render node ("/dev/dri/renderD128"), -1 if none.
inline int64_t NpuipcIndexOfNode(const std::string &node)
{
    std::string name = node.substr(node.rfind('/') + 1);
    std::ifstream in("/sys/class/drm/" + name + "/device/npuipc_index");
    int64_t index = -1;
    if (!(in >> index))
        return -1;
    return index;
}

inline NpuipcState TakeNpuipcState()
{
    NpuipcState state;
    std::vector<int> own = npuipc::runtime_own_fds();
    std::set<std::string> files_seen; // device/client-id
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return state;
    while (const struct dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd == dirfd(dir))
            continue;
        char link[256] = {};
        std::string path = std::string("/proc/self/fd/") + e->d_name;
        if (readlink(path.c_str(), link, sizeof(link) - 1) < 0)
            continue; // closed meanwhile
        std::ifstream info(std::string("/proc/self/fdinfo/") + e->d_name);
        std::map<std::string, std::string> fields;
        for (std::string line; std::getline(info, line);) {
            size_t colon = line.find(':');
            if (colon == std::string::npos)
                continue;
            size_t v = line.find_first_not_of(" \t", colon + 1);
            fields[line.substr(0, colon)] = v == std::string::npos ? "" : line.substr(v);
        }
        if (std::find(own.begin(), own.end(), fd) == own.end())
            state.fds[fd] = link;
        if (fields["drm-driver"] != "npuipc")
            continue;
        int64_t index = NpuipcIndexOfNode(link);
        if (!files_seen.insert(std::to_string(index) + "/" + fields["drm-client-id"]).second)
            continue; // a dup of a file counted already
        for (const auto &key : NpuipcFdinfoKeys())
            state.devices[static_cast<uint32_t>(index)][key] += strtoll(fields[key].c_str(), nullptr, 10);
    }
    closedir(dir);
    for (auto it = state.devices.begin(); it != state.devices.end();) {
        npuipc::RuntimeObjects own_objects = npuipc::runtime_own_objects(it->first);
        it->second["npuipc-streams"] -= own_objects.streams;
        it->second["npuipc-events"] -= own_objects.events;
        it->second["npuipc-notifies"] -= own_objects.notifies;
        bool all_zero = std::all_of(it->second.begin(), it->second.end(),
                                    [](const auto &kv) { return kv.second == 0; });
        it = all_zero ? state.devices.erase(it) : std::next(it);
    }
    return state;
}

// The state once two snapshots in a row agree (within `bound`): what is
// in flight when a test starts (a connection the IPC exporter serves, a
// pooled event between a callback and the pool, an fd another thread is
// closing) must not become the state the test has to return to.
inline NpuipcState TakeSettledNpuipcState(std::chrono::milliseconds bound)
{
    auto deadline = std::chrono::steady_clock::now() + bound;
    NpuipcState last = TakeNpuipcState(), now;
    while ((now = TakeNpuipcState()) != last && std::chrono::steady_clock::now() < deadline) {
        last = now;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return now;
}

// Polls until the state is `start` again, for at most `bound`: the
// runtime's own objects and fds in flight (a pooled event on its way back
// to the pool, a connection the exporter is closing) settle within it.
// `now` is the last state taken.
inline bool NpuipcStateReturnsTo(const NpuipcState &start, NpuipcState &now,
                                 std::chrono::milliseconds bound)
{
    auto deadline = std::chrono::steady_clock::now() + bound;
    while ((now = TakeNpuipcState()) != start) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// The message of a test that left state behind.
inline std::string NpuipcLeftBehind(const NpuipcState &start, const NpuipcState &now)
{
    return "npuipc state differs from the test's start (fds other than the runtime's own; "
           "per device, fdinfo counts less the runtime's own):" +
           start.DiffTo(now);
}

} // namespace acltest

#endif
