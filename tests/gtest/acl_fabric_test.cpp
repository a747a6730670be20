// SPDX-License-Identifier: MIT
// The aclrt surface of fabric handles across servers: the V2 shareable
// handle calls with ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, on both servers of a
// `tools/vm-pair --bind-window --fabric-daemon` at once (make check step
// 10), with CANN's codes. (Without a fabric window they return
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT: acl_vmm_gtest.)
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "acl/acl.h"
#include "pair_peer.h"

namespace {

using npuipc_pair::me;
using npuipc_pair::meet;
using npuipc_pair::peer;
using npuipc_pair::swap_with_peer;

constexpr size_t kCount = 1024;

aclrtPhysicalMemProp device0_prop()
{
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.memAttr = ACL_HBM_MEM_NORMAL;
    return prop;
}

class AclFabric : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
        aclrtPhysicalMemProp prop = device0_prop();
        ASSERT_EQ(ACL_SUCCESS,
                  aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
        size = (kCount * sizeof(int32_t) + granularity - 1) / granularity * granularity;
    }

    void TearDown() override
    {
        npuipc_pair::leave_if_failed();
        for (auto &m : maps) {
            EXPECT_EQ(ACL_SUCCESS, aclrtUnmapMem(m));
            EXPECT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(m));
        }
        for (auto h : handles)
            EXPECT_EQ(ACL_SUCCESS, aclrtFreePhysical(h));
        EXPECT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(0));
    }

    aclrtDrvMemHandle allocate()
    {
        aclrtPhysicalMemProp prop = device0_prop();
        aclrtDrvMemHandle h = nullptr;
        EXPECT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&h, size, &prop, 0));
        handles.push_back(h);
        return h;
    }

    void *map(aclrtDrvMemHandle h)
    {
        void *va = nullptr;
        EXPECT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, size, 0, nullptr, 0));
        EXPECT_EQ(ACL_SUCCESS, aclrtMapMem(va, size, 0, h, 0));
        aclrtMemAccessDesc desc = {};
        desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
        desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = 0;
        EXPECT_EQ(ACL_SUCCESS, aclrtMemSetAccess(va, size, &desc, 1));
        maps.push_back(va);
        return va;
    }

    void write(void *va, int32_t value)
    {
        std::vector<int32_t> data(kCount, value);
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(va, kCount * 4, data.data(), kCount * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    }

    bool holds(void *va, int32_t value)
    {
        std::vector<int32_t> data(kCount);
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(data.data(), kCount * 4, va, kCount * 4, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int32_t v : data)
            if (v != value)
                return false;
        return true;
    }

    aclrtDrvMemHandle import(const aclrtMemFabricHandle &h, aclError expect = ACL_SUCCESS)
    {
        aclrtMemFabricHandle copy = h;
        aclrtDrvMemHandle imported = nullptr;
        EXPECT_EQ(expect, aclrtMemImportFromShareableHandleV2(&copy, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported));
        if (expect == ACL_SUCCESS && imported)
            handles.push_back(imported);
        return imported;
    }

    size_t granularity = 0, size = 0;
    std::vector<aclrtDrvMemHandle> handles;
    std::vector<void *> maps;
};

TEST_F(AclFabric, PhysicalMemoryIsSharedBothWaysAcrossServers)
{
    aclrtDrvMemHandle own = allocate();
    void *own_va = map(own);
    write(own_va, 100 + me());
    aclrtMemFabricHandle h = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandleV2(own, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                             ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &h));
    // Exported again: the same handle.
    aclrtMemFabricHandle again = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandleV2(own, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                             ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &again));
    EXPECT_EQ(0, std::memcmp(&h, &again, sizeof(h)));

    aclrtMemFabricHandle theirs = swap_with_peer(h);
    void *remote = map(import(theirs));
    EXPECT_TRUE(holds(remote, 100 + peer()));
    write(remote, 200 + me());
    meet();
    EXPECT_TRUE(holds(own_va, 200 + peer()));
    // Device work on it: a copy job of device 0 out of the other server's
    // memory, and one of device 1 (a peer) out of this server's.
    void *local = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&local, size, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(local, kCount * 4, remote, kCount * 4, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_TRUE(holds(local, 200 + me()));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(1));
    ASSERT_EQ(ACL_SUCCESS, aclrtDeviceEnablePeerAccess(0, 0));
    void *on1 = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&on1, size, ACL_MEM_MALLOC_NORMAL_ONLY));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(on1, kCount * 4, own_va, kCount * 4, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_TRUE(holds(on1, 200 + peer()));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(on1));
    EXPECT_EQ(ACL_SUCCESS, aclrtResetDeviceForce(1));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetDevice(0));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(local));
    // An import of another server's memory leaves as no fabric handle.
    aclrtMemFabricHandle re = {};
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              aclrtMemExportToShareableHandleV2(handles.back(), 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &re));
    meet();
}

TEST_F(AclFabric, AnExportWithPidValidationAdmitsTheProcessesItsExporterLists)
{
    aclrtDrvMemHandle own = allocate();
    aclrtMemFabricHandle h = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandleV2(own, 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &h));
    struct Told {
        aclrtMemFabricHandle h;
        int32_t pid;
    } theirs = swap_with_peer(Told{h, static_cast<int32_t>(::getpid())});

    import(theirs.h, ACL_ERROR_RT_NO_PERMISSION);
    // Only the exporter lists importers.
    int32_t mine = ::getpid();
    EXPECT_EQ(ACL_ERROR_RT_NO_PERMISSION,
              aclrtMemSetPidToShareableHandleV2(&theirs.h, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &mine, 1));
    meet();
    int32_t bad = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemSetPidToShareableHandleV2(&h, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &bad, 1));
    // A bare PID: the importer's, on whatever server.
    EXPECT_EQ(ACL_SUCCESS,
              aclrtMemSetPidToShareableHandleV2(&h, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &theirs.pid, 1));
    meet();
    EXPECT_NE(nullptr, import(theirs.h));
    meet();
}

TEST_F(AclFabric, FreedMemoryAndMalformedOrUnreachableHandlesAreRefusedWithCannsCodes)
{
    aclrtDrvMemHandle own = allocate();
    aclrtMemFabricHandle h = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtMemExportToShareableHandleV2(own, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                             ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &h));
    aclrtMemFabricHandle theirs = swap_with_peer(h);
    // The owner frees its last handle: the export goes with it.
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(own));
    handles.clear();
    meet();
    import(theirs, ACL_ERROR_RT_INVALID_HANDLE);

    aclrtMemFabricHandle zero = {}, elsewhere = theirs;
    import(zero, ACL_ERROR_RT_PARAM_INVALID);
    const uint32_t nowhere = 9; // a server the daemons do not know
    std::memcpy(elsewhere.data + 12, &nowhere, sizeof(nowhere));
    import(elsewhere, ACL_ERROR_RT_IPC_ERROR);
    int32_t pid = ::getpid();
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID,
              aclrtMemSetPidToShareableHandleV2(&zero, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &pid, 1));
    meet();
}

TEST_F(AclFabric, EachServerReportsItsSdidAndKeepsIpcKeysToItself)
{
    int64_t value = -1;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_DEVICE_ID, &value));
    EXPECT_EQ(static_cast<int64_t>(me()), value);
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_SERVER_ID, &value));
    EXPECT_EQ(static_cast<int64_t>(me()), value);
    // The attributes beside them stay a mock NPU's.
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICPU_CORE_NUM, &value));
    EXPECT_EQ(0, value);
    ASSERT_EQ(ACL_SUCCESS, aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_ID, &value));
    EXPECT_EQ(0, value);

    void *dev = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&dev, 2 << 20, ACL_MEM_MALLOC_HUGE_ONLY));
    char key[65] = {};
    ASSERT_EQ(ACL_SUCCESS, aclrtIpcMemGetExportKey(dev, 2 << 20, key, sizeof(key), 0));
    int32_t pid = 4242;
    aclrtServerPid here = {me(), &pid, 1}, there = {peer(), &pid, 1};
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemImportPidInterServer(key, &here, 1));
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtIpcMemImportPidInterServer(key, &there, 1));
    EXPECT_EQ(ACL_SUCCESS, aclrtIpcMemClose(key));
    EXPECT_EQ(ACL_SUCCESS, aclrtFree(dev));
}

} // namespace

NPUIPC_PAIR_TEST_MAIN(7792)
