// SPDX-License-Identifier: MIT
// What a program may ask about the devices and the runtime: versions, the
// SoC name, device attributes and capabilities, UUIDs, PCI bus ids,
// topology, peer-access status and the user/logical/physical id mappings.
// Everything comes from the driver's GET_INFO; the codes are those CANN's
// runtime returns for the same arguments. Documentation/man/aclrt_device_info.3.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "aclrt/fabric_memory.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

constexpr char kSocName[] = "npuipc-mock-npu";
constexpr char kVersionFile[] = "/sys/module/npuipc/version";
constexpr int32_t kPciBusIdLen = 13; // "dddd:bb:dd.f" and the NUL

// The npuipc devices, densely indexed from 0 as the runtime counts them.
Result<std::vector<DeviceInfo>> dense_devices()
{
    Result<std::vector<DeviceInfo>> list = list_devices();
    if (!list.ok())
        return list;
    std::vector<DeviceInfo> dense;
    for (DeviceInfo &info : list.value()) {
        if (info.index != dense.size())
            break;
        dense.push_back(std::move(info));
    }
    return dense;
}

// The information of the device the application calls `id`; `bad_id` is
// the code CANN gives for an id that names no visible device.
aclError visible_device(int32_t id, aclError bad_id, DeviceInfo &out)
{
    Runtime &rt = Runtime::get();
    uint32_t index = 0;
    {
        std::lock_guard<std::mutex> lock(rt.mu);
        if (id >= 0 && (!rt.device_count_known || static_cast<uint32_t>(id) >= rt.device_count))
            if (aclError err = rt.refresh_device_count())
                return err;
        if (id < 0 || static_cast<uint32_t>(id) >= rt.device_count)
            return fail(bad_id, "device id %d names no device (%u visible)", id, rt.device_count);
        index = rt.visible[static_cast<uint32_t>(id)];
    }
    Result<std::vector<DeviceInfo>> list = dense_devices();
    if (!list.ok())
        return fail_errno(list.error(), Op::Generic, "listing npuipc devices");
    if (index >= list.value().size())
        return fail(ACL_ERROR_RT_NO_DEVICE, "device %d (npuipc %u) is gone", id, index);
    out = list.value()[index];
    return ACL_SUCCESS;
}

// The user id of npuipc index `index` (negative: ACL_ERROR_RT_PARAM_INVALID;
// not visible: ACL_ERROR_RT_INVALID_DEVICEID). The devices are listed
// again only when the index is not among those known.
aclError user_of_index(int32_t index, int32_t &user)
{
    if (index < 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "device id %d is negative", index);
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    user = rt.device_count_known ? rt.logical_id(static_cast<uint32_t>(index)) : -1;
    if (user < 0) {
        if (aclError err = rt.refresh_device_count())
            return err;
        user = rt.logical_id(static_cast<uint32_t>(index));
    }
    if (user < 0)
        return fail(ACL_ERROR_RT_INVALID_DEVICEID,
                    "npuipc device %d is not a visible device (ASCEND_RT_VISIBLE_DEVICES)", index);
    return ACL_SUCCESS;
}

// domain << 16 | bus << 8 | devfn. A virtual device has none: it stands
// at domain 0xffff, bus 0, device = its index (32 per bus), function 0.
uint32_t pci_address(const DeviceInfo &info)
{
    if (info.is_pci())
        return info.pci_address;
    return 0xffffu << 16 | (info.index / 32) << 8 | (info.index % 32) << 3;
}

std::string pci_bus_id(const DeviceInfo &info)
{
    const uint32_t a = pci_address(info);
    char text[kPciBusIdLen + 8];
    std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", a >> 16, (a >> 8) & 0xff, (a >> 3) & 0x1f,
                  a & 0x7);
    return text;
}

// The version of an npuipc package, by CANN package name: the runtime is
// this library, the driver the loaded npuipc.ko. Empty if not installed.
std::string package_version(const std::string &name)
{
    if (name == "runtime")
        return NPUIPC_VERSION_STRING;
    if (name == "driver") {
        std::ifstream in(kVersionFile);
        std::string v;
        if (in && std::getline(in, v))
            return v;
    }
    return {};
}

aclError lookup_version(const char *pkg, std::string &out)
{
    out = package_version(pkg);
    if (out.empty())
        return fail(ACL_ERROR_INVALID_FILE,
                    "no npuipc package \"%s\" is installed (there are \"runtime\" and, with the "
                    "module loaded, \"driver\")",
                    pkg);
    return ACL_SUCCESS;
}

// A version text split as CANN splits it: A.B.C[.D][-pre], pre-release
// "rc.1" becoming "rc1"; false for anything but digits in A, B, C, D.
struct VersionParts {
    std::string converted; // "A.B.C.rc1", as CANN stores it
    std::string part[4] = {"0", "0", "0", "0"};
    unsigned number[3] = {0, 0, 0};
    std::string pre;       // "rc1", lower case, or ""
};

bool split_version(const std::string &v, VersionParts &out)
{
    const size_t dash = v.find('-');
    const std::string base = v.substr(0, dash);
    std::string pre = dash == std::string::npos ? "" : v.substr(dash + 1);
    pre.erase(std::remove(pre.begin(), pre.end(), '.'), pre.end());
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        size_t dot = base.find('.', start);
        parts.push_back(base.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    if (parts.size() < 2 || parts.size() > 4)
        return false;
    for (size_t i = 0; i < parts.size(); i++) {
        if (parts[i].empty() || parts[i].size() > 6 ||
            !std::all_of(parts[i].begin(), parts[i].end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return false;
        out.part[i] = parts[i];
        if (i < 3)
            out.number[i] = static_cast<unsigned>(std::stoul(parts[i]));
    }
    if (!pre.empty())
        out.part[3] = pre;
    out.converted = pre.empty() ? base : base + "." + pre;
    std::transform(pre.begin(), pre.end(), pre.begin(),
                   [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    out.pre = pre;
    return true;
}

// CANN's number of a version A.B.C[-{alpha,beta,rc}[.N]]:
// A*10^7 + B*10^5 + C*10^3, less 300/200/100 for a pre-release, plus N.
bool version_number(const std::string &v, int32_t &out)
{
    VersionParts p;
    if (!split_version(v, p) || p.number[0] > 200 || p.number[1] > 99 || p.number[2] > 99)
        return false;
    int64_t n = int64_t(p.number[0]) * 10000000 + int64_t(p.number[1]) * 100000 + int64_t(p.number[2]) * 1000;
    if (!p.pre.empty()) {
        int64_t less = 0;
        size_t len = 0;
        for (const auto &[word, minus] : {std::pair<const char *, int>{"alpha", 300}, {"beta", 200}, {"rc", 100}})
            if (p.pre.compare(0, std::strlen(word), word) == 0) {
                less = minus;
                len = std::strlen(word);
                break;
            }
        if (!less)
            return false;
        const std::string num = p.pre.substr(len);
        if (num.size() > 2 ||
            !std::all_of(num.begin(), num.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return false;
        n = n - less + (num.empty() ? 0 : std::stoi(num));
    }
    out = static_cast<int32_t>(n);
    return true;
}

// Copies `text` into a fixed array, NUL-terminated.
template <size_t N> void copy_text(char (&dst)[N], const std::string &text)
{
    std::snprintf(dst, N, "%s", text.c_str());
}

} // namespace

extern "C" {

const char *aclrtGetSocName(void)
{
    // One name for every device, as CANN gives device 0's, learnt once:
    // NULL until a device has been seen.
    static std::atomic<bool> known{false};
    if (known.load(std::memory_order_acquire))
        return kSocName;
    const char *name = nullptr;
    (void)api("aclrtGetSocName", [&] {
        DeviceInfo info;
        if (aclError err = visible_device(0, ACL_ERROR_RT_NO_DEVICE, info))
            return err;
        known.store(true, std::memory_order_release);
        name = kSocName;
        return ACL_SUCCESS;
    });
    return name;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    return api("aclrtGetVersion", [&] {
        if (!majorVersion || !minorVersion || !patchVersion)
            return fail(ACL_ERROR_INVALID_PARAM, "majorVersion, minorVersion and patchVersion must not be NULL");
        // The version of the acl API these headers declare.
        *majorVersion = ACL_MAJOR_VERSION;
        *minorVersion = ACL_MINOR_VERSION;
        *patchVersion = ACL_PATCH_VERSION;
        return ACL_SUCCESS;
    });
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    return api("aclsysGetVersionStr", [&] {
        if (!versionStr || !pkgName)
            return fail(ACL_ERROR_INVALID_PARAM, "pkgName and versionStr must not be NULL");
        std::string v;
        if (aclError err = lookup_version(pkgName, v))
            return err;
        if (v.size() >= ACL_PKG_VERSION_MAX_SIZE)
            return fail(ACL_ERROR_INTERNAL_ERROR, "the version of \"%s\" is too long", pkgName);
        std::memcpy(versionStr, v.c_str(), v.size() + 1);
        return ACL_SUCCESS;
    });
}

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    return api("aclsysGetVersionNum", [&] {
        if (!versionNum || !pkgName)
            return fail(ACL_ERROR_INVALID_PARAM, "pkgName and versionNum must not be NULL");
        std::string v;
        if (aclError err = lookup_version(pkgName, v))
            return err;
        if (!version_number(v, *versionNum))
            return fail(ACL_ERROR_INTERNAL_ERROR, "the version \"%s\" of \"%s\" is not A.B.C[-rc.N]",
                        v.c_str(), pkgName);
        return ACL_SUCCESS;
    });
}

aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    return api("aclsysGetCANNVersion", [&] {
        if (!version)
            return fail(ACL_ERROR_INVALID_PARAM, "version is NULL");
        const char *pkg = nullptr;
        switch (name) {
        case ACL_PKG_NAME_CANN:
        case ACL_PKG_NAME_RUNTIME:
            pkg = "runtime";
            break;
        case ACL_PKG_NAME_DRIVER:
            pkg = "driver";
            break;
        case ACL_PKG_NAME_COMPILER:
        case ACL_PKG_NAME_HCCL:
        case ACL_PKG_NAME_TOOLKIT:
        case ACL_PKG_NAME_OPP:
        case ACL_PKG_NAME_OPP_KERNEL:
            return fail(ACL_ERROR_INVALID_FILE, "package %d is not part of npuipc",
                        static_cast<int>(name));
        default:
            return fail(ACL_ERROR_INVALID_PARAM, "unknown package name %d", static_cast<int>(name));
        }
        std::string v;
        if (aclError err = lookup_version(pkg, v))
            return err;
        VersionParts parts;
        if (!split_version(v, parts))
            return fail(ACL_ERROR_INVALID_FILE, "the version \"%s\" of \"%s\" is not A.B[.C[.D]][-pre]",
                        v.c_str(), pkg);
        std::memset(version, 0, sizeof(*version));
        copy_text(version->version, parts.converted);
        copy_text(version->majorVersion, parts.part[0]);
        copy_text(version->minorVersion, parts.part[1]);
        copy_text(version->releaseVersion, parts.part[2]);
        copy_text(version->patchVersion, parts.part[3]);
        return ACL_SUCCESS;
    });
}

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)
{
    return api("aclrtGetDeviceInfo", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (deviceId > INT32_MAX)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "device id %u names no device", deviceId);
        DeviceInfo info;
        if (aclError err = visible_device(static_cast<int32_t>(deviceId), ACL_ERROR_RT_PARAM_INVALID, info))
            return err;
        switch (attr) {
        case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
            *value = static_cast<int64_t>(info.mem_total);
            return ACL_SUCCESS;
        case ACL_DEV_ATTR_IS_VIRTUAL:
            // RAM-backed devices of the module's parameters; PCI NPUs are
            // devices of their own.
            *value = info.is_pci() ? 0 : 1;
            return ACL_SUCCESS;
        case ACL_DEV_ATTR_PHY_CHIP_ID:
            *value = info.index;
            return ACL_SUCCESS;
        // A mock NPU has no AI CPUs, AI cores, vector cores, SIMT units or
        // L2 cache: CANN reports 0 for what a chip lacks.
        case ACL_DEV_ATTR_AICPU_CORE_NUM:
        case ACL_DEV_ATTR_AICORE_CORE_NUM:
        case ACL_DEV_ATTR_CUBE_CORE_NUM:
        case ACL_DEV_ATTR_VECTOR_CORE_NUM:
        case ACL_DEV_ATTR_WARP_SIZE:
        case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
        case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE:
        case ACL_DEV_ATTR_MAX_GRID_DIM_X:
        case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
        case ACL_DEV_ATTR_MAX_GRID_DIM_Z:
        case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID:
        case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK:
        case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
        case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y:
        case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
        case ACL_DEV_ATTR_L2_CACHE_SIZE:
        case ACL_DEV_ATTR_NPU_ARCH:
        // One SuperPOD at most, on no mainboard of CANN's, no custom operators.
        case ACL_DEV_ATTR_SMP_ID:
        case ACL_DEV_ATTR_SUPER_POD_ID:
        case ACL_DEV_ATTR_CUST_OP_PRIVILEGE:
        case ACL_DEV_ATTR_MAINBOARD_ID:
            *value = 0;
            return ACL_SUCCESS;
        // A server of a fabric: its window's sdid (one emulated server, one
        // id for its devices and itself); in no SuperPOD, 0.
        case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID:
        case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
            *value = fabric_sdid();
            return ACL_SUCCESS;
        case ACL_DEV_ATTR_HD_CONNECT_TYPE:
        case ACL_DEV_ATTR_DEVICE_FORM_FACTOR:
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "attribute %d is reported by Ascend 950 devices only", static_cast<int>(attr));
        default:
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown device attribute %d", static_cast<int>(attr));
        }
    });
}

aclError aclrtGetDeviceCapability(int32_t deviceId, aclrtDevFeatureType devFeatureType, int32_t *value)
{
    return api("aclrtGetDeviceCapability", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (devFeatureType != ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV &&
            devFeatureType != ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown device feature %d",
                        static_cast<int>(devFeatureType));
        DeviceInfo info;
        if (aclError err = visible_device(deviceId, ACL_ERROR_RT_INVALID_DEVICEID, info))
            return err;
        // Both are features of AI cores and the task scheduler's queues.
        *value = ACL_DEV_FEATURE_NOT_SUPPORT;
        return ACL_SUCCESS;
    });
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)
{
    return api("aclGetDeviceCapability", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (deviceId > INT32_MAX)
            return fail(ACL_ERROR_INVALID_PARAM, "device id %u names no device", deviceId);
        DeviceInfo info;
        if (aclError err = visible_device(static_cast<int32_t>(deviceId), ACL_ERROR_INVALID_PARAM, info))
            return err;
        switch (deviceInfo) {
        case ACL_DEVICE_INFO_AI_CORE_NUM:
        case ACL_DEVICE_INFO_VECTOR_CORE_NUM:
        case ACL_DEVICE_INFO_L2_SIZE:
            *value = 0; // none of either, and no L2 cache
            return ACL_SUCCESS;
        default:
            return fail(ACL_ERROR_INVALID_PARAM, "unknown device information %d", static_cast<int>(deviceInfo));
        }
    });
}

aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)
{
    return api("aclrtDeviceGetUuid", [&] {
        if (!uuid)
            return fail(ACL_ERROR_INVALID_PARAM, "uuid is NULL");
        DeviceInfo info;
        if (aclError err = visible_device(deviceId, ACL_ERROR_RT_INVALID_DEVICEID, info))
            return err;
        // An RFC 9562 version-8 UUID naming the device by what identifies
        // it across processes and module loads: "npuipc", whether it is a
        // PCI device, and its PCI address or its index.
        uint8_t b[16] = {'n', 'p', 'u', 'i', 'p', 'c'};
        b[6] = 0x80;                    // version 8
        b[7] = info.is_pci() ? 1 : 0;
        b[8] = 0x80;                    // the RFC's variant
        const uint32_t id = info.is_pci() ? info.pci_address : info.index;
        for (int i = 0; i < 4; i++)
            b[12 + i] = static_cast<uint8_t>(id >> (24 - 8 * i));
        static_assert(sizeof(uuid->bytes) == sizeof(b), "aclrtUuid is 16 bytes");
        std::memcpy(uuid->bytes, b, sizeof(b));
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId, int32_t len)
{
    return api("aclrtDeviceGetPCIBusId", [&] {
        if (!pciBusId)
            return fail(ACL_ERROR_INVALID_PARAM, "pciBusId is NULL");
        if (deviceId < 0)
            return fail(ACL_ERROR_RT_INVALID_DEVICEID, "device id %d is negative", deviceId);
        if (len < kPciBusIdLen)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "len is %d: a PCI bus id needs %d bytes", len,
                        kPciBusIdLen);
        DeviceInfo info;
        if (aclError err = visible_device(deviceId, ACL_ERROR_RT_INVALID_DEVICEID, info))
            return err;
        const std::string text = pci_bus_id(info);
        std::memcpy(pciBusId, text.c_str(), text.size() + 1);
        return ACL_SUCCESS;
    });
}

aclError aclrtDeviceGetByPCIBusId(const char *pciBusId, int32_t *deviceId)
{
    return api("aclrtDeviceGetByPCIBusId", [&] {
        if (!pciBusId || !deviceId)
            return fail(ACL_ERROR_INVALID_PARAM, "pciBusId and deviceId must not be NULL");
        Result<std::vector<DeviceInfo>> list = dense_devices();
        if (!list.ok())
            return fail_errno(list.error(), Op::Generic, "listing npuipc devices");
        // CANN compares the whole text, "0000:3d:00.0" in lower case, as
        // strcmp: reading no byte past the first that differs.
        auto same = [pciBusId](const std::string &text) {
            for (size_t i = 0; i <= text.size(); i++)
                if (pciBusId[i] != text[i])
                    return false;
            return true;
        };
        for (const DeviceInfo &info : list.value()) {
            if (!same(pci_bus_id(info)))
                continue;
            int32_t id = -1;
            if (aclError err = user_of_index(info.index, id))
                return err;
            *deviceId = id;
            return ACL_SUCCESS;
        }
        // (Shown up to 12 characters: no byte past a bus id's is read.)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "no device is at PCI bus id \"%.*s\"",
                    static_cast<int>(strnlen(pciBusId, kPciBusIdLen - 1)), pciBusId);
    });
}

aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId, uint64_t *value)
{
    return api("aclrtGetDevicesTopo", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        if (deviceId > INT32_MAX || otherDeviceId > INT32_MAX)
            return fail(ACL_ERROR_RT_INVALID_DEVICEID, "device ids %u and %u: one names no device",
                        deviceId, otherDeviceId);
        DeviceInfo a, b;
        if (aclError err = visible_device(static_cast<int32_t>(deviceId), ACL_ERROR_RT_INVALID_DEVICEID, a))
            return err;
        if (aclError err = visible_device(static_cast<int32_t>(otherDeviceId), ACL_ERROR_RT_INVALID_DEVICEID, b))
            return err;
        // One bit: the link between the two. A device and itself: HCCS,
        // as CANN reports; two PCI NPUs on one bus: PIX, through the host
        // bridge: PHB; virtual devices share host memory: SYS.
        if (a.index == b.index)
            *value = ACL_RT_DEVS_TOPOLOGY_HCCS;
        else if (a.is_pci() && b.is_pci())
            *value = (a.pci_address >> 8) == (b.pci_address >> 8) ? ACL_RT_DEVS_TOPOLOGY_PIX
                                                                  : ACL_RT_DEVS_TOPOLOGY_PHB;
        else
            *value = ACL_RT_DEVS_TOPOLOGY_SYS;
        return ACL_SUCCESS;
    });
}

aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status)
{
    return api("aclrtDevicePeerAccessStatus", [&] {
        if (!status)
            return fail(ACL_ERROR_INVALID_PARAM, "status is NULL");
        // CANN maps the id, and so finds it invalid, only under
        // ASCEND_RT_VISIBLE_DEVICES; else the driver refuses it.
        bool mapped = false;
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            if (!rt.device_count_known)
                if (aclError err = rt.refresh_device_count())
                    return err;
            mapped = rt.visible_env_set;
        }
        DeviceInfo from;
        if (aclError err = visible_device(
                deviceId, mapped ? ACL_ERROR_RT_INVALID_DEVICEID : ACL_ERROR_RT_PARAM_INVALID, from))
            return err;
        // CANN takes the peer as a physical id: an npuipc index here.
        Result<std::vector<DeviceInfo>> list = dense_devices();
        if (!list.ok())
            return fail_errno(list.error(), Op::Generic, "listing npuipc devices");
        if (peerDeviceId < 0 || static_cast<size_t>(peerDeviceId) >= list.value().size())
            return fail(ACL_ERROR_RT_PARAM_INVALID, "physical device id %d names no device", peerDeviceId);
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        auto it = rt.devices.find(from.index);
        *status = from.index != static_cast<uint32_t>(peerDeviceId) && it != rt.devices.end() &&
                          it->second.peers.count(static_cast<uint32_t>(peerDeviceId))
                      ? 1
                      : 0;
        return ACL_SUCCESS;
    });
}

} // extern "C"

// ---- device ids ----
//
// CANN numbers a device three ways: the user id the application uses (as
// ASCEND_RT_VISIBLE_DEVICES renumbers them), the logical id the driver
// gives it in this container, and its physical id on the host. npuipc's
// driver index is both of the last two: a container sees the host's
// indices. As in CANN, the "Logic...PhyDevId" pair takes and gives user
// ids (CANN's documentation says so; the UserDevId pair is the new name).

namespace {

// The npuipc index of user id `user`.
aclError index_of_user(int32_t user, uint32_t &index)
{
    if (user < 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "device id %d is negative", user);
    Runtime &rt = Runtime::get();
    std::lock_guard<std::mutex> lock(rt.mu);
    return rt.check_device_id(user, index);
}

aclError user_to_index(const char *name, int32_t user, int32_t *out)
{
    return api(name, [&] {
        if (!out)
            return fail(ACL_ERROR_INVALID_PARAM, "the output pointer is NULL");
        uint32_t index = 0;
        if (aclError err = index_of_user(user, index))
            return err;
        *out = static_cast<int32_t>(index);
        return ACL_SUCCESS;
    });
}

aclError index_to_user(const char *name, int32_t index, int32_t *out)
{
    return api(name, [&] {
        if (!out)
            return fail(ACL_ERROR_INVALID_PARAM, "the output pointer is NULL");
        int32_t user = -1;
        if (aclError err = user_of_index(index, user))
            return err;
        *out = user;
        return ACL_SUCCESS;
    });
}

} // namespace

extern "C" {

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
    return user_to_index("aclrtGetLogicDevIdByUserDevId", userDevid, logicDevId);
}

aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid)
{
    return index_to_user("aclrtGetUserDevIdByLogicDevId", logicDevId, userDevid);
}

aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId, int32_t *const phyDevId)
{
    return user_to_index("aclrtGetPhyDevIdByUserDevId", userDevId, phyDevId);
}

aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId, int32_t *const userDevId)
{
    return index_to_user("aclrtGetUserDevIdByPhyDevId", phyDevId, userDevId);
}

aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId)
{
    return user_to_index("aclrtGetPhyDevIdByLogicDevId", logicDevId, phyDevId);
}

aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t *const logicDevId)
{
    return index_to_user("aclrtGetLogicDevIdByPhyDevId", phyDevId, logicDevId);
}

aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)
{
    return api("aclrtDeviceGetStreamPriorityRange", [&] {
        // CANN's fixed range, and as in CANN either pointer may be NULL.
        if (leastPriority)
            *leastPriority = 7;
        if (greatestPriority)
            *greatestPriority = 0;
        return ACL_SUCCESS;
    }, true); // constants: a fork child may ask too
}

} // extern "C"

namespace {

// The state of a device the process has set, for its resource limits,
// after CANN's checks in its order: the id's sign, the type (when the call
// takes one), the id, the device set (CANN keeps the limits in its device
// object, which exists from aclrtSetDevice to the device's reset). With
// Runtime::mu held.
aclError res_limit_device(Runtime &rt, int32_t deviceId, const aclrtDevResLimitType *type,
                          DeviceState *&out)
{
    if (deviceId < 0)
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, "device id %d is negative", deviceId);
    if (type && *type != ACL_RT_DEV_RES_CUBE_CORE && *type != ACL_RT_DEV_RES_VECTOR_CORE)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "unknown resource type %d", static_cast<int>(*type));
    uint32_t index;
    if (aclError err = rt.check_device_id(deviceId, index))
        return err;
    auto it = rt.devices.find(index);
    if (it == rt.devices.end() || it->second.refs == 0)
        return fail(ACL_ERROR_RT_DEV_SETUP_ERROR, "device %d is not set in this process (aclrtSetDevice)",
                    deviceId);
    out = &it->second;
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value)
{
    return api("aclrtGetDeviceResLimit", [&] {
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "value is NULL");
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        DeviceState *state;
        if (aclError err = res_limit_device(rt, deviceId, &type, state))
            return err;
        *value = state->res_limit[type];
        return ACL_SUCCESS;
    });
}

aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value)
{
    return api("aclrtSetDeviceResLimit", [&] {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        DeviceState *state;
        if (aclError err = res_limit_device(rt, deviceId, &type, state))
            return err;
        // As CANN: at most the cores the device has, and a mock NPU has none.
        if (value > 0)
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "limit %u: must be less than or equal to 0, the device's %s cores", value,
                        type == ACL_RT_DEV_RES_CUBE_CORE ? "cube" : "vector");
        state->res_limit[type] = value;
        return ACL_SUCCESS;
    });
}

aclError aclrtResetDeviceResLimit(int32_t deviceId)
{
    return api("aclrtResetDeviceResLimit", [&] {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        DeviceState *state;
        if (aclError err = res_limit_device(rt, deviceId, nullptr, state))
            return err;
        state->res_limit[ACL_RT_DEV_RES_CUBE_CORE] = 0;
        state->res_limit[ACL_RT_DEV_RES_VECTOR_CORE] = 0;
        return ACL_SUCCESS;
    });
}

} // extern "C"
