// SPDX-License-Identifier: MIT
// What the aclrt API tells about the runtime and the devices
// (aclrt_device_info(3)): versions, the SoC name, device attributes and
// capabilities, UUIDs, PCI bus ids, topology, peer-access status and the
// user/logical/physical id mappings, each with the codes CANN's runtime
// returns for bad arguments. Runs in the VM on virtual devices, and in
// make check's PCI pass on mock PCI NPUs, where the PCI bus ids must be
// those the PCI core gives the devices.
#include "acl_test_util.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <set>

using namespace acltest;

// aclrtGetVersion and aclsysGetCANNVersion are deprecated, and tested.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

class AclDeviceInfoTest : public AclTest {
protected:
    // The driver's view of application device `id` (ids are indices here:
    // the tests run without ASCEND_RT_VISIBLE_DEVICES).
    npuipc::DeviceInfo Driver(uint32_t id)
    {
        auto list = npuipc::list_devices();
        EXPECT_TRUE(list.ok());
        if (!list.ok() || id >= list.value().size())
            return {};
        return list.value()[id];
    }
};

TEST_F(AclDeviceInfoTest, VersionsAreNpuipcsOwnAndUnknownPackagesAreNotInstalled)
{
    int32_t major = -1, minor = -1, patch = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetVersion(&major, &minor, &patch));
    EXPECT_EQ(ACL_MAJOR_VERSION, major);
    EXPECT_EQ(ACL_MINOR_VERSION, minor);
    EXPECT_EQ(ACL_PATCH_VERSION, patch);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetVersion(&major, nullptr, &patch));

    char runtime[] = "runtime", driver[] = "driver", hccl[] = "hccl";
    char text[ACL_PKG_VERSION_MAX_SIZE] = {};
    ASSERT_EQ(ACL_SUCCESS, aclsysGetVersionStr(runtime, text));
    EXPECT_STREQ(NPUIPC_TEST_VERSION, text);
    // The loaded module is this tree's.
    char module[ACL_PKG_VERSION_MAX_SIZE] = {};
    ASSERT_EQ(ACL_SUCCESS, aclsysGetVersionStr(driver, module));
    EXPECT_STREQ(NPUIPC_TEST_VERSION, module);
    EXPECT_EQ(ACL_ERROR_INVALID_FILE, aclsysGetVersionStr(hccl, text));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclsysGetVersionStr(nullptr, text));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclsysGetVersionStr(runtime, nullptr));

    unsigned a = 0, b = 0, c = 0;
    ASSERT_EQ(3, std::sscanf(NPUIPC_TEST_VERSION, "%u.%u.%u", &a, &b, &c));
    int32_t num = -1;
    ASSERT_EQ(ACL_SUCCESS, aclsysGetVersionNum(runtime, &num));
    EXPECT_EQ(static_cast<int32_t>(a * 10000000 + b * 100000 + c * 1000), num);
    EXPECT_EQ(ACL_ERROR_INVALID_FILE, aclsysGetVersionNum(hccl, &num));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclsysGetVersionNum(runtime, nullptr));

    aclCANNPackageVersion v;
    std::memset(&v, 0x5a, sizeof(v));
    ASSERT_EQ(ACL_SUCCESS, aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &v));
    EXPECT_STREQ(NPUIPC_TEST_VERSION, v.version);
    EXPECT_EQ(std::to_string(a), v.majorVersion);
    EXPECT_EQ(std::to_string(b), v.minorVersion);
    EXPECT_EQ(std::to_string(c), v.releaseVersion);
    EXPECT_STREQ("0", v.patchVersion);
    EXPECT_EQ('\0', v.reserved[0]);
    ASSERT_EQ(ACL_SUCCESS, aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &v));
    EXPECT_STREQ(NPUIPC_TEST_VERSION, v.version);
    EXPECT_EQ(ACL_ERROR_INVALID_FILE, aclsysGetCANNVersion(ACL_PKG_NAME_HCCL, &v));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclsysGetCANNVersion(static_cast<aclCANNPackageName>(8), &v));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclsysGetCANNVersion(ACL_PKG_NAME_CANN, nullptr));
}

TEST_F(AclDeviceInfoTest, TheSocNameIsOneStaticString)
{
    const char *name = aclrtGetSocName();
    ASSERT_NE(nullptr, name);
    EXPECT_STREQ("npuipc-mock-npu", name);
    EXPECT_EQ(name, aclrtGetSocName());
}

TEST_F(AclDeviceInfoTest, AttributesComeFromTheDriverAndAMockNpuHasNoCores)
{
    for (uint32_t id = 0; id < device_count_; id++) {
        SCOPED_TRACE("device " + std::to_string(id));
        const npuipc::DeviceInfo driver = Driver(id);
        int64_t value = -1;
        ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(id, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &value));
        EXPECT_EQ(static_cast<int64_t>(driver.mem_total), value);
        ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(id, ACL_DEV_ATTR_IS_VIRTUAL, &value));
        EXPECT_EQ(driver.is_pci() ? 0 : 1, value);
        ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(id, ACL_DEV_ATTR_PHY_CHIP_ID, &value));
        EXPECT_EQ(static_cast<int64_t>(driver.index), value);
        for (aclrtDevAttr none : {ACL_DEV_ATTR_AICPU_CORE_NUM, ACL_DEV_ATTR_AICORE_CORE_NUM,
                                  ACL_DEV_ATTR_CUBE_CORE_NUM, ACL_DEV_ATTR_VECTOR_CORE_NUM,
                                  ACL_DEV_ATTR_L2_CACHE_SIZE, ACL_DEV_ATTR_SUPER_POD_ID}) {
            value = -1;
            EXPECT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(id, none, &value)) << none;
            EXPECT_EQ(0, value) << none;
        }
    }
    // The memory total is what aclrtGetMemInfo says of the current device.
    int64_t total = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &total));
    EXPECT_EQ(static_cast<int64_t>(DeviceTotalMem()), total);

    int64_t value = 42;
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_HD_CONNECT_TYPE, &value));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtGetDeviceInfo(0, static_cast<aclrtDevAttr>(9999), &value));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtGetDeviceInfo(static_cast<uint32_t>(device_count_), ACL_DEV_ATTR_IS_VIRTUAL, &value));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtGetDeviceInfo(UINT32_MAX, ACL_DEV_ATTR_IS_VIRTUAL, &value));
    EXPECT_EQ(42, value) << "a failed call wrote its output";
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_IS_VIRTUAL, nullptr));
}

TEST_F(AclDeviceInfoTest, CapabilitiesOfAICoresAreNotSupported)
{
    int32_t cap = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &cap));
    EXPECT_EQ(ACL_DEV_FEATURE_NOT_SUPPORT, cap);
    cap = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &cap));
    EXPECT_EQ(ACL_DEV_FEATURE_NOT_SUPPORT, cap);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtGetDeviceCapability(0, static_cast<aclrtDevFeatureType>(2), &cap));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID,
              aclrtGetDeviceCapability(-1, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &cap));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, nullptr));

    int64_t value = -1;
    for (aclDeviceInfo info : {ACL_DEVICE_INFO_AI_CORE_NUM, ACL_DEVICE_INFO_VECTOR_CORE_NUM,
                               ACL_DEVICE_INFO_L2_SIZE}) {
        value = -1;
        EXPECT_EQ(ACL_SUCCESS, aclGetDeviceCapability(0, info, &value)) << info;
        EXPECT_EQ(0, value) << info;
    }
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetDeviceCapability(0, ACL_DEVICE_INFO_UNDEFINED, &value));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclGetDeviceCapability(static_cast<uint32_t>(device_count_), ACL_DEVICE_INFO_L2_SIZE, &value));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, nullptr));
}

// A UUID per device: the same in every process, different between
// devices, RFC 9562 version 8.
TEST_F(AclDeviceInfoTest, EachDeviceHasOneUuidInEveryProcess)
{
    std::set<std::string> seen;
    for (uint32_t id = 0; id < device_count_; id++) {
        aclrtUuid uuid = {}, again = {};
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetUuid(static_cast<int32_t>(id), &uuid));
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetUuid(static_cast<int32_t>(id), &again));
        EXPECT_EQ(0, std::memcmp(&uuid, &again, sizeof(uuid)));
        EXPECT_EQ(0x80, static_cast<uint8_t>(uuid.bytes[6]) & 0xf0) << "version 8";
        EXPECT_EQ(0x80, static_cast<uint8_t>(uuid.bytes[8]) & 0xc0) << "the RFC's variant";
        EXPECT_TRUE(seen.insert(std::string(uuid.bytes, sizeof(uuid.bytes))).second)
            << "device " << id << " shares a UUID";
        // Another process, which never set a device, sees the same.
        int fds[2];
        ASSERT_EQ(0, pipe(fds));
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            aclrtUuid child = {};
            int rc = aclInit(nullptr) == ACL_SUCCESS &&
                             aclrtDeviceGetUuid(static_cast<int32_t>(id), &child) == ACL_SUCCESS &&
                             write(fds[1], &child, sizeof(child)) == static_cast<ssize_t>(sizeof(child))
                         ? 0
                         : 1;
            _exit(rc);
        }
        close(fds[1]);
        aclrtUuid child = {};
        EXPECT_EQ(static_cast<ssize_t>(sizeof(child)), read(fds[0], &child, sizeof(child)));
        close(fds[0]);
        int status = 0;
        ASSERT_EQ(pid, waitpid(pid, &status, 0));
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        EXPECT_EQ(0, std::memcmp(&uuid, &child, sizeof(uuid)));
    }
    aclrtUuid uuid = {};
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceGetUuid(static_cast<int32_t>(device_count_), &uuid));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceGetUuid(-1, &uuid));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceGetUuid(0, nullptr));
}

// A PCI NPU's bus id is the address the PCI core bound npuipc to; a
// virtual device's the documented stand-in at domain ffff.
TEST_F(AclDeviceInfoTest, PciBusIdsAreThePciCoresAndLeadBackToTheirDevice)
{
    for (uint32_t id = 0; id < device_count_; id++) {
        SCOPED_TRACE("device " + std::to_string(id));
        const npuipc::DeviceInfo driver = Driver(id);
        char bus_id[13] = {};
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetPCIBusId(static_cast<int32_t>(id), bus_id, sizeof(bus_id)));
        EXPECT_EQ(12u, std::strlen(bus_id));
        if (driver.is_pci()) {
            struct stat st;
            EXPECT_EQ(0, stat((std::string("/sys/bus/pci/drivers/npuipc/") + bus_id).c_str(), &st))
                << bus_id << " is not a PCI device npuipc drives";
        } else {
            char expected[32];
            std::snprintf(expected, sizeof(expected), "ffff:%02x:%02x.0", driver.index / 32, driver.index % 32);
            EXPECT_STREQ(expected, bus_id);
        }
        int32_t back = -1;
        ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetByPCIBusId(bus_id, &back));
        EXPECT_EQ(static_cast<int32_t>(id), back);
        // The whole text, as written: upper case is another text.
        for (char *c = bus_id; *c; c++)
            *c = static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
        if (std::strpbrk(bus_id, "ABCDEF")) {
            EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetByPCIBusId(bus_id, &back));
        }
    }
    char bus_id[13] = {};
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetPCIBusId(0, bus_id, 12)) << "room for 12 + NUL";
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtDeviceGetPCIBusId(-1, bus_id, sizeof(bus_id)));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID,
              aclrtDeviceGetPCIBusId(static_cast<int32_t>(device_count_), bus_id, sizeof(bus_id)));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceGetPCIBusId(0, nullptr, sizeof(bus_id)));
    int32_t id = -1;
    // 12 characters without a NUL, against an unreadable page: read no
    // further than the first byte that differs, as CANN's strcmp.
    const long page = sysconf(_SC_PAGESIZE);
    char *pages = static_cast<char *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, pages);
    ASSERT_EQ(0, mprotect(pages + page, page, PROT_NONE));
    char *tail = pages + page - 12;
    std::memcpy(tail, "eeee:ee:1f.7", 12);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetByPCIBusId(tail, &id));
    munmap(pages, 2 * page);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetByPCIBusId("0000:00:00", &id));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDeviceGetByPCIBusId("", &id));
    EXPECT_EQ(-1, id);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceGetByPCIBusId(nullptr, &id));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDeviceGetByPCIBusId("ffff:00:00.0", nullptr));
}

TEST_F(AclDeviceInfoTest, TopologyIsOneBitForEachPairOfDevices)
{
    ACL_NEED_DEVICES(2);
    uint64_t link = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDevicesTopo(0, 0, &link));
    EXPECT_EQ(ACL_RT_DEVS_TOPOLOGY_HCCS, link);
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDevicesTopo(0, 1, &link));
    const npuipc::DeviceInfo a = Driver(0), b = Driver(1);
    if (a.is_pci() && b.is_pci())
        EXPECT_EQ((a.pci_address >> 8) == (b.pci_address >> 8) ? ACL_RT_DEVS_TOPOLOGY_PIX
                                                               : ACL_RT_DEVS_TOPOLOGY_PHB,
                  link);
    else
        EXPECT_EQ(ACL_RT_DEVS_TOPOLOGY_SYS, link);
    uint64_t back = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDevicesTopo(1, 0, &back));
    EXPECT_EQ(link, back) << "a link is the same both ways";
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtGetDevicesTopo(0, static_cast<uint32_t>(device_count_), &link));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDevicesTopo(0, 1, nullptr));
}

TEST_F(AclDeviceInfoTest, PeerAccessStatusFollowsEnableAndDisable)
{
    ACL_NEED_DEVICES(2);
    int32_t status = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtDevicePeerAccessStatus(0, 1, &status));
    EXPECT_EQ(0, status);
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(1, 0)); // from device 0, the current one
    ASSERT_EQ(ACL_SUCCESS, aclrtDevicePeerAccessStatus(0, 1, &status));
    EXPECT_EQ(1, status);
    ASSERT_EQ(ACL_SUCCESS, aclrtDevicePeerAccessStatus(1, 0, &status));
    EXPECT_EQ(0, status) << "access is one-directional";
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceDisablePeerAccess(1));
    ASSERT_EQ(ACL_SUCCESS, aclrtDevicePeerAccessStatus(0, 1, &status));
    EXPECT_EQ(0, status);
    ASSERT_EQ(ACL_SUCCESS, aclrtDevicePeerAccessStatus(0, 0, &status));
    EXPECT_EQ(0, status);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtDevicePeerAccessStatus(0, static_cast<int32_t>(device_count_), &status));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDevicePeerAccessStatus(0, -1, &status));
    // Without ASCEND_RT_VISIBLE_DEVICES CANN's driver refuses the id.
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtDevicePeerAccessStatus(-1, 1, &status));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtDevicePeerAccessStatus(static_cast<int32_t>(device_count_), 1, &status));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtDevicePeerAccessStatus(0, 1, nullptr));
}

TEST_F(AclDeviceInfoTest, StreamPriorityRangeIsCannsAndTakesNull)
{
    int32_t least = -1, greatest = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT_EQ(7, least);
    EXPECT_EQ(0, greatest);
    EXPECT_EQ(ACL_SUCCESS, aclrtDeviceGetStreamPriorityRange(nullptr, nullptr));
}

// In a fork child with ASCEND_RT_VISIBLE_DEVICES=1: the id mappings, and
// what a hidden device is. 0 when all hold, else the failed check's number.
int VisibleDeviceOneChild()
{
    setenv("ASCEND_RT_VISIBLE_DEVICES", "1", 1);
    if (aclInit(nullptr) != ACL_SUCCESS)
        return 100;
    int32_t out = -1;
    struct Case {
        aclError (*fn)(const int32_t, int32_t *const);
        int32_t in;
        aclError rc;
        int32_t out;
    } cases[] = {
        {aclrtGetLogicDevIdByUserDevId, 0, ACL_SUCCESS, 1},
        {aclrtGetPhyDevIdByUserDevId, 0, ACL_SUCCESS, 1},
        {aclrtGetPhyDevIdByLogicDevId, 0, ACL_SUCCESS, 1}, // CANN: a user id
        {aclrtGetUserDevIdByLogicDevId, 1, ACL_SUCCESS, 0},
        {aclrtGetUserDevIdByPhyDevId, 1, ACL_SUCCESS, 0},
        {aclrtGetLogicDevIdByPhyDevId, 1, ACL_SUCCESS, 0}, // CANN: gives a user id
        {aclrtGetLogicDevIdByUserDevId, 1, ACL_ERROR_RT_INVALID_DEVICEID, -1},
        {aclrtGetUserDevIdByPhyDevId, 0, ACL_ERROR_RT_INVALID_DEVICEID, -1}, // hidden
        {aclrtGetUserDevIdByLogicDevId, 7, ACL_ERROR_RT_INVALID_DEVICEID, -1},
        {aclrtGetPhyDevIdByUserDevId, -1, ACL_ERROR_RT_PARAM_INVALID, -1},
        {aclrtGetUserDevIdByPhyDevId, -1, ACL_ERROR_RT_PARAM_INVALID, -1},
    };
    int n = 0;
    for (const Case &c : cases) {
        n++;
        out = -1;
        if (c.fn(c.in, &out) != c.rc || out != c.out)
            return n;
    }
    if (aclrtGetLogicDevIdByUserDevId(0, nullptr) != ACL_ERROR_INVALID_PARAM)
        return 50;
    // Device 0 of this process is npuipc device 1.
    char bus_id[13] = {}, hidden[13] = {};
    if (aclrtDeviceGetPCIBusId(0, bus_id, sizeof(bus_id)) != ACL_SUCCESS)
        return 51;
    if (aclrtDeviceGetByPCIBusId(bus_id, &out) != ACL_SUCCESS || out != 0)
        return 52;
    // npuipc device 0 is there, but hidden.
    auto list = npuipc::list_devices();
    if (!list.ok() || list.value().size() < 2)
        return 53;
    const npuipc::DeviceInfo &first = list.value()[0];
    const uint32_t a = first.is_pci() ? first.pci_address : 0xffffu << 16;
    std::snprintf(hidden, sizeof(hidden), "%04x:%02x:%02x.%x", a >> 16, (a >> 8) & 0xff, (a >> 3) & 0x1f,
                  a & 7);
    if (aclrtDeviceGetByPCIBusId(hidden, &out) != ACL_ERROR_RT_INVALID_DEVICEID)
        return 54;
    return 0;
}

TEST_F(AclDeviceInfoTest, IdMappingsFollowVisibleDevices)
{
    ACL_NEED_DEVICES(2);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(VisibleDeviceOneChild());
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status)) << "the check that failed";
    // Without the variable every id is its own index.
    int32_t out = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetLogicDevIdByUserDevId(1, &out));
    EXPECT_EQ(1, out);
    ASSERT_EQ(ACL_SUCCESS, aclrtGetUserDevIdByPhyDevId(1, &out));
    EXPECT_EQ(1, out);
}

// A mock NPU has no cube or vector cores: 0 is the limit there is, and
// CANN refuses a limit above the device's cores.
TEST_F(AclDeviceInfoTest, ResourceLimitsAreTheDevicesZeroCoresWithCannsCodes)
{
    uint32_t value = 42;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &value));
    EXPECT_EQ(0u, value);
    value = 42;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &value));
    EXPECT_EQ(0u, value);
    EXPECT_EQ(ACL_SUCCESS, aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 1));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtSetDeviceResLimit(0, static_cast<aclrtDevResLimitType>(2), 0));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtGetDeviceResLimit(0, static_cast<aclrtDevResLimitType>(2), &value));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtGetDeviceResLimit(-1, ACL_RT_DEV_RES_CUBE_CORE, &value));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID,
              aclrtSetDeviceResLimit(static_cast<int32_t>(device_count_), ACL_RT_DEV_RES_CUBE_CORE, 0));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, aclrtResetDeviceResLimit(-1));
    EXPECT_EQ(ACL_SUCCESS, aclrtResetDeviceResLimit(0));
    if (device_count_ > 1) {
        // A device this process has not set has no limits to ask or change.
        EXPECT_EQ(ACL_ERROR_RT_DEV_SETUP_ERROR, aclrtGetDeviceResLimit(1, ACL_RT_DEV_RES_CUBE_CORE, &value));
        EXPECT_EQ(ACL_ERROR_RT_DEV_SETUP_ERROR, aclrtResetDeviceResLimit(1));
    }
}

} // namespace
