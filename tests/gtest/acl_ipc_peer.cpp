// SPDX-License-Identifier: MIT
// The other process of the aclrt IPC tests (acl_ipc_test.cpp): a program
// of its own, started with fork+exec, so that it has nothing of the test's
// runtime. It talks to the test through files in a directory:
//   DIR/key      the key or event handle it reads (waited for, 30 s)
//   DIR/rc       the aclError of its step, as text
//   DIR/seen     what it saw (memory: the first byte)
//   DIR/fds      (importing commands) the fds it holds that it did not hold
//                before its step, one per line, checked twice: once its
//                objects are closed and destroyed (against the fds it held
//                with its device set and its stream made), and after
//                aclFinalize (against the fds it held after aclInit). Empty
//                when nothing leaked.
// usage: acl_ipc_peer COMMAND DIR DEVICE FLAGS
//   mem-import     import DIR/key, write DIR/seen, write 'B' at offset 1, close
//   mem-import-as-nobody the same as uid and gid 65534, its device set first
//   notify-record  import DIR/key as a notify, record it, synchronize
//   notify-wait    import DIR/key as a notify and try to wait on it
//   event-wait     open DIR/key as an event handle, wait for it, synchronize
//   mem-export     export 2 MiB filled with 'E' (PID validation off), write
//                  DIR/key, then exit at once (the exporter gone)
//   mem-export-hold like mem-export, then stays (until killed)
//   event-hold     create an IPC event, record it behind a wait that nothing
//                  releases, write its handle to DIR/key, then stay (until
//                  killed: its pending record must then fail, not hang)
//   mem-export-listed    export 2 MiB filled with 'E' with PID validation on,
//                  write DIR/key and DIR/rc, then wait for DIR/pid (30 s), list
//                  that PID (aclrtIpcMemSetImportPid), write DIR/listed with
//                  its aclError, and stay (until killed)
//   notify-export-listed likewise with a notify (aclrtNotifySetImportPid)
//   bare-tgid      write aclrtDeviceGetBareTgid's PID to DIR/seen
//   fail-once      make one call fail (aclrtFree(NULL)), for its log line
//   sync-timeout   on DEVICE, let aclrtSynchronizeStreamWithTimeout run out
//                  on a stream held by a notify wait, for its log line
//   vmm-export-hold export 4 KiB of VMM memory filled with 'M' (validation
//                  off), write the shareable handle in decimal to DIR/key,
//                  then stay (until killed)
//   vmm-import     DIR/key holds a shareable handle in decimal: import it on
//                  DEVICE, reserve, map, write DIR/seen, write 'B' at offset
//                  1, unmap, release, free
//   vmm-import-v2  the same through aclrtMemImportFromShareableHandleV2
//                  (DEFAULT), on DEVICE set first
#include <acl/acl.h>

#include <dirent.h>
#include <grp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::string dir;

void write_text(const char *name, const std::string &text)
{
    std::string tmp = dir + "/." + name, path = dir + "/" + name;
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (!f)
        std::exit(3);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
}

// Waits (30 s) for DIR/name and reads up to `len` bytes of it; true if it
// held at least `min`.
bool read_file(const char *name, char *buf, size_t len, size_t min)
{
    std::string path = dir + "/" + name;
    for (int i = 0; i < 3000; i++) {
        FILE *f = std::fopen(path.c_str(), "rb");
        if (f) {
            // A key file holds 65 bytes, an event handle file 64.
            size_t n = std::fread(buf, 1, len, f);
            std::fclose(f);
            return n >= min;
        }
        usleep(10000);
    }
    return false;
}

// A key file holds 65 bytes, an event handle file 64.
bool read_key(char *buf, size_t len)
{
    return read_file("key", buf, len, 64);
}

// The PID the test writes to DIR/pid, as text; 0 if none came.
int32_t read_pid()
{
    char text[16] = {};
    if (!read_file("pid", text, sizeof(text) - 1, 1))
        return 0;
    return static_cast<int32_t>(std::atoi(text));
}

// What this process's open fds point to, sorted (a multiset).
std::vector<std::string> fd_targets()
{
    std::vector<std::string> targets;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        std::exit(11);
    while (const dirent *e = readdir(d)) {
        if (e->d_name[0] == '.' || std::atoi(e->d_name) == dirfd(d))
            continue;
        char target[256] = {};
        std::string link = std::string("/proc/self/fd/") + e->d_name;
        if (readlink(link.c_str(), target, sizeof(target) - 1) < 0)
            targets.push_back(std::string("fd ") + e->d_name + " (unreadable)");
        else
            targets.push_back(target);
    }
    closedir(d);
    std::sort(targets.begin(), targets.end());
    return targets;
}

// The fds now open that were not in `before`, a line each, prefixed with
// `when`.
std::string fds_gained(const std::vector<std::string> &before, const char *when)
{
    std::vector<std::string> now = fd_targets(), gained;
    std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                        std::back_inserter(gained));
    std::string text;
    for (const std::string &t : gained)
        text += std::string(when) + ": " + t + "\n";
    return text;
}

// Snapshots of the fds held after aclInit and once the step's device and
// stream were ready; `ready` stays empty where the step sets no device.
std::vector<std::string> fds_at_init, fds_when_ready;
bool ready_taken = false;

void fds_ready()
{
    fds_when_ready = fd_targets();
    ready_taken = true;
}

int finish(aclError rc)
{
    write_text("rc", std::to_string(rc));
    return 0;
}

// finish() for a command that imported: its objects are closed and
// destroyed by now; DIR/fds gets what it still holds beyond the snapshots.
int finish_import(aclError rc)
{
    std::string leaked = ready_taken ? fds_gained(fds_when_ready, "after closing") : "";
    aclError fin = aclFinalize();
    if (fin != ACL_SUCCESS)
        leaked += "aclFinalize: " + std::to_string(fin) + "\n";
    leaked += fds_gained(fds_at_init, "after aclFinalize");
    write_text("fds", leaked);
    return finish(rc);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    std::string cmd = argv[1];
    dir = argv[2];
    int32_t device = std::atoi(argv[3]);
    uint64_t flags = std::strtoull(argv[4], nullptr, 0);
    char key[65] = {};
    aclrtStream stream = nullptr;
    if (aclInit(nullptr) != ACL_SUCCESS)
        return 12;
    fds_at_init = fd_targets();

    if (cmd == "fail-once")
        return finish(aclrtFree(nullptr));
    if (cmd == "sync-timeout") {
        aclrtNotify notify = nullptr;
        aclrtStream releaser = nullptr;
        if (aclrtSetDevice(device) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS ||
            aclrtCreateStream(&releaser) != ACL_SUCCESS ||
            aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT) != ACL_SUCCESS ||
            aclrtWaitAndResetNotify(notify, stream, 30) != ACL_SUCCESS)
            return finish(ACL_ERROR_INTERNAL_ERROR);
        aclError rc = aclrtSynchronizeStreamWithTimeout(stream, 10);
        if (aclrtRecordNotify(notify, releaser) != ACL_SUCCESS ||
            aclrtSynchronizeStream(stream) != ACL_SUCCESS)
            return finish(ACL_ERROR_INTERNAL_ERROR);
        return finish(rc == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT ? ACL_SUCCESS : rc);
    }
    if (cmd == "vmm-export-hold") {
        aclrtPhysicalMemProp prop = {};
        prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
        prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
        prop.memAttr = ACL_HBM_MEM_NORMAL;
        prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = static_cast<uint32_t>(device);
        aclrtDrvMemHandle handle = nullptr;
        void *va = nullptr;
        uint64_t shareable = 0;
        if (aclrtMallocPhysical(&handle, 4096, &prop, 0) != ACL_SUCCESS ||
            aclrtReserveMemAddress(&va, 4096, 0, nullptr, 0) != ACL_SUCCESS ||
            aclrtMapMem(va, 4096, 0, handle, 0) != ACL_SUCCESS)
            return 9;
        std::memset(va, 'M', 4096);
        if (aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                            ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, &shareable) != ACL_SUCCESS)
            return 10;
        write_text("key", std::to_string(shareable));
        for (;;)
            pause();
    }
    if (cmd == "bare-tgid") {
        int32_t pid = 0;
        aclError rc = aclrtDeviceGetBareTgid(&pid);
        write_text("seen", std::to_string(pid));
        return finish(rc);
    }
    if (cmd == "vmm-import" || cmd == "vmm-import-v2") {
        // The seed's process B: no aclrtSetDevice, the import names the
        // device; V2 imports onto the current device.
        const bool v2 = cmd == "vmm-import-v2";
        if (v2 && aclrtSetDevice(device) != ACL_SUCCESS)
            return 4;
        if (!read_key(key, sizeof(key)))
            return 6;
        uint64_t shareable = std::strtoull(key, nullptr, 10);
        aclrtDrvMemHandle handle = nullptr;
        aclError rc = v2 ? aclrtMemImportFromShareableHandleV2(&shareable, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0,
                                                               &handle)
                         : aclrtMemImportFromShareableHandle(shareable, device, &handle);
        if (rc != ACL_SUCCESS)
            return finish_import(rc);
        aclrtPhysicalMemProp prop = {};
        size_t size = 0;
        void *va = nullptr;
        if ((rc = aclrtMemGetAllocationPropertiesFromHandle(handle, &prop)) == ACL_SUCCESS &&
            (rc = aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &size)) ==
                ACL_SUCCESS &&
            (rc = aclrtReserveMemAddress(&va, size, 0, nullptr, 0)) == ACL_SUCCESS &&
            (rc = aclrtMapMem(va, size, 0, handle, 0)) == ACL_SUCCESS) {
            unsigned char *bytes = static_cast<unsigned char *>(va);
            write_text("seen", std::string(1, static_cast<char>(bytes[0])));
            bytes[1] = 'B';
            rc = aclrtUnmapMem(va);
        }
        if (va && rc == ACL_SUCCESS)
            rc = aclrtReleaseMemAddress(va);
        if (rc == ACL_SUCCESS)
            rc = aclrtFreePhysical(handle);
        return finish_import(rc);
    }
    if (aclrtSetDevice(device) != ACL_SUCCESS)
        return 4;
    if (cmd == "event-hold") {
        aclrtEvent event = nullptr;
        aclrtNotify never = nullptr;
        aclrtIpcEventHandle handle = {};
        if (aclrtCreateStream(&stream) != ACL_SUCCESS ||
            aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC) != ACL_SUCCESS ||
            aclrtCreateNotify(&never, ACL_NOTIFY_DEFAULT) != ACL_SUCCESS ||
            aclrtWaitAndResetNotify(never, stream, 0) != ACL_SUCCESS ||
            aclrtRecordEvent(event, stream) != ACL_SUCCESS ||
            aclrtIpcGetEventHandle(event, &handle) != ACL_SUCCESS)
            return 8;
        write_text("key", std::string(handle.reserved));
        for (;;)
            pause();
    }
    if (cmd == "mem-export-listed" || cmd == "notify-export-listed") {
        const bool memory = cmd == "mem-export-listed";
        void *p = nullptr;
        aclrtNotify notify = nullptr;
        aclError rc;
        if (memory) {
            if (aclrtMalloc(&p, 2 << 20, ACL_MEM_MALLOC_HUGE_ONLY) != ACL_SUCCESS)
                return 5;
            std::memset(p, 'E', 2 << 20);
            rc = aclrtIpcMemGetExportKey(p, 2 << 20, key, sizeof(key), 0);
        } else {
            if (aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT) != ACL_SUCCESS)
                return 5;
            rc = aclrtNotifyGetExportKey(notify, key, sizeof(key), 0);
        }
        write_text("key", key);
        write_text("rc", std::to_string(rc));
        int32_t pid = read_pid();
        if (pid == 0)
            return 6;
        rc = memory ? aclrtIpcMemSetImportPid(key, &pid, 1) : aclrtNotifySetImportPid(notify, &pid, 1);
        write_text("listed", std::to_string(rc));
        for (;;)
            pause();
    }
    if (cmd == "mem-export" || cmd == "mem-export-hold") {
        void *p = nullptr;
        if (aclrtMalloc(&p, 2 << 20, ACL_MEM_MALLOC_HUGE_ONLY) != ACL_SUCCESS)
            return 5;
        std::memset(p, 'E', 2 << 20);
        aclError rc = aclrtIpcMemGetExportKey(p, 2 << 20, key, sizeof(key),
                                              ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION);
        write_text("key", key);
        if (cmd == "mem-export-hold") {
            write_text("rc", std::to_string(rc));
            for (;;)
                pause();
        }
        return finish(rc);
    }
    if (!read_key(key, sizeof(key)))
        return 6;
    if (cmd == "mem-import" || cmd == "mem-import-as-nobody") {
        // Another user with the device already open: render nodes are
        // root's in the test guest, and what this user lacks is the key.
        if (cmd == "mem-import-as-nobody" && (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
                                              setresuid(65534, 65534, 65534) != 0))
            return 13;
        fds_ready();
        void *p = nullptr;
        aclError rc = aclrtIpcMemImportByKey(&p, key, flags);
        if (rc == ACL_SUCCESS) {
            unsigned char *bytes = static_cast<unsigned char *>(p);
            write_text("seen", std::string(1, static_cast<char>(bytes[0])));
            bytes[1] = 'B';
            rc = aclrtIpcMemClose(key);
        }
        return finish_import(rc);
    }
    if (aclrtCreateStream(&stream) != ACL_SUCCESS)
        return 7;
    fds_ready();
    if (cmd == "notify-record" || cmd == "notify-wait") {
        aclrtNotify notify = nullptr;
        aclError rc = aclrtNotifyImportByKey(&notify, key, flags);
        if (rc == ACL_SUCCESS) {
            rc = cmd == "notify-record" ? aclrtRecordNotify(notify, stream)
                                        : aclrtWaitAndResetNotify(notify, stream, 1);
            if (rc == ACL_SUCCESS)
                rc = aclrtSynchronizeStream(stream);
            aclError destroyed = aclrtDestroyNotify(notify);
            if (rc == ACL_SUCCESS)
                rc = destroyed;
        }
        return finish_import(rc);
    }
    if (cmd == "event-wait") {
        aclrtIpcEventHandle handle;
        std::memcpy(handle.reserved, key, sizeof(handle.reserved));
        aclrtEvent event = nullptr;
        aclError rc = aclrtIpcOpenEventHandle(handle, &event);
        if (rc == ACL_SUCCESS) {
            rc = aclrtStreamWaitEvent(stream, event);
            if (rc == ACL_SUCCESS)
                rc = aclrtSynchronizeStream(stream);
            aclError destroyed = aclrtDestroyEvent(event);
            if (rc == ACL_SUCCESS)
                rc = destroyed;
        }
        return finish_import(rc);
    }
    return 2;
}
