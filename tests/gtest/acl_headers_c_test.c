/* SPDX-License-Identifier: MIT */
/*
 * The acl/ headers seen from C: they compile as C, and their numeric values,
 * struct layouts and prototypes are those of the contract (CANN 1.17, see
 * the aclrt API reference). Almost everything is checked at compile time;
 * the general error codes are `static const int` as in CANN, which C does
 * not accept in a constant expression, so acl_headers_c_test_ok() compares
 * those at run time and returns 1 when all of them match. The file calls no
 * aclrt function, so it links without the library implementing any.
 */
#include <acl/acl.h>
#include <acl/acl_rt.h>
#include <acl/acl_base.h>
#include <acl/error_codes/rt_error_codes.h>
#include <acl/acl_seed_compat.h>

#include <stddef.h>
#include <stdint.h>

#define PIN(expr) _Static_assert(expr, #expr)
#define PIN_TYPE(expr, type) _Static_assert(_Generic((expr), type: 1, default: 0), #expr " is " #type)
#define PIN_FN(fn, type) _Static_assert(_Generic(&(fn), type: 1, default: 0), "prototype of " #fn)

/* Error codes: types (the values of the general ones are checked at run time). */
PIN_TYPE(ACL_SUCCESS, int);
PIN_TYPE(ACL_ERROR_NONE, int);
PIN_TYPE(ACL_ERROR_INVALID_PARAM, int);
PIN_TYPE(ACL_ERROR_RT_PARAM_INVALID, int);
PIN_TYPE((aclError)0, int);

/* Runtime error codes of the reference's short list (and two it names elsewhere). */
PIN(ACL_ERROR_RT_PARAM_INVALID == 107000);
PIN(ACL_ERROR_RT_INVALID_DEVICEID == 107001);
PIN(ACL_ERROR_RT_CONTEXT_NULL == 107002);
PIN(ACL_ERROR_RT_STREAM_CONTEXT == 107003);
PIN(ACL_ERROR_RT_ADDR_UNALIGNED == 107008);
PIN(ACL_ERROR_RT_STREAM_NO_CB_REG == 107015);
PIN(ACL_ERROR_RT_INVALID_MEMORY_TYPE == 107016);
PIN(ACL_ERROR_RT_INVALID_HANDLE == 107017);
PIN(ACL_ERROR_RT_WAIT_TIMEOUT == 107019);
PIN(ACL_ERROR_RT_TASK_TIMEOUT == 107020);
PIN(ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000);
PIN(ACL_ERROR_RT_MEMORY_ALLOCATION == 207001);
PIN(ACL_ERROR_RT_MEMORY_FREE == 207002);
PIN(ACL_ERROR_RT_NO_DEVICE == 207004);
PIN(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL == 207005);
PIN(ACL_ERROR_RT_NO_PERMISSION == 207006);
PIN(ACL_ERROR_RT_NO_EVENT_RESOURCE == 207007);
PIN(ACL_ERROR_RT_NO_STREAM_RESOURCE == 207008);
PIN(ACL_ERROR_RT_NO_NOTIFY_RESOURCE == 207009);
PIN(ACL_ERROR_RT_OVER_LIMIT == 207012);
PIN(ACL_ERROR_RT_DEVICE_OOM == 207018);
PIN(ACL_ERROR_RT_TIMEOUT == 207020);
PIN(ACL_ERROR_RT_INTERNAL_ERROR == 507000);
PIN(ACL_ERROR_RT_STREAM_NOT_COMPLETE == 507004);
PIN(ACL_ERROR_RT_EVENT_NOT_COMPLETE == 507006);
PIN(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR == 507007);
PIN(ACL_ERROR_RT_IPC_ERROR == 507022);
PIN(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046);
PIN(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT == 507047);
PIN(ACL_ERROR_RT_DRV_INTERNAL_ERROR == 507899);

/* Enums. */
PIN(ACL_MEM_MALLOC_HUGE_FIRST == 0);
PIN(ACL_MEM_MALLOC_HUGE_ONLY == 1);
PIN(ACL_MEM_MALLOC_NORMAL_ONLY == 2);
PIN(ACL_MEM_MALLOC_HUGE_FIRST_P2P == 3);
PIN(ACL_MEM_MALLOC_HUGE_ONLY_P2P == 4);
PIN(ACL_MEM_MALLOC_NORMAL_ONLY_P2P == 5);
PIN(ACL_MEM_MALLOC_HUGE1G_ONLY == 6);
PIN(ACL_MEM_MALLOC_HUGE1G_ONLY_P2P == 7);
PIN(ACL_MEM_TYPE_LOW_BAND_WIDTH == 0x0100);
PIN(ACL_MEM_TYPE_HIGH_BAND_WIDTH == 0x1000);
PIN(ACL_MEM_ACCESS_USER_SPACE_READONLY == 0x100000);

PIN(ACL_MEMCPY_HOST_TO_HOST == 0);
PIN(ACL_MEMCPY_HOST_TO_DEVICE == 1);
PIN(ACL_MEMCPY_DEVICE_TO_HOST == 2);
PIN(ACL_MEMCPY_DEVICE_TO_DEVICE == 3);
PIN(ACL_MEMCPY_DEFAULT == 4);
PIN(ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE == 5);
PIN(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE == 6);
PIN(ACL_MEMCPY_INTER_DEVICE_TO_DEVICE == 7);

PIN(ACL_STREAM_STATUS_COMPLETE == 0);
PIN(ACL_STREAM_STATUS_NOT_READY == 1);
PIN(ACL_EVENT_RECORDED_STATUS_NOT_READY == 0);
PIN(ACL_EVENT_RECORDED_STATUS_COMPLETE == 1);
PIN(ACL_CALLBACK_NO_BLOCK == 0);
PIN(ACL_CALLBACK_BLOCK == 1);

PIN(ACL_DDR_MEM == 0);
PIN(ACL_HBM_MEM == 1);
PIN(ACL_DDR_MEM_HUGE == 2);
PIN(ACL_DDR_MEM_NORMAL == 3);
PIN(ACL_HBM_MEM_HUGE == 4);
PIN(ACL_HBM_MEM_NORMAL == 5);
PIN(ACL_DDR_MEM_P2P_HUGE == 6);
PIN(ACL_DDR_MEM_P2P_NORMAL == 7);
PIN(ACL_HBM_MEM_P2P_HUGE == 8);
PIN(ACL_HBM_MEM_P2P_NORMAL == 9);
PIN(ACL_HBM_MEM_HUGE1G == 10);
PIN(ACL_HBM_MEM_P2P_HUGE1G == 11);
PIN(ACL_MEM_NORMAL == 12);
PIN(ACL_MEM_HUGE == 13);
PIN(ACL_MEM_HUGE1G == 14);
PIN(ACL_MEM_P2P_NORMAL == 15);
PIN(ACL_MEM_P2P_HUGE == 16);
PIN(ACL_MEM_P2P_HUGE1G == 17);

PIN(ACL_MEM_HANDLE_TYPE_NONE == 0);
PIN(ACL_MEM_HANDLE_TYPE_POSIX == 2);
PIN(ACL_MEM_ALLOCATION_TYPE_PINNED == 0);
PIN(ACL_MEM_LOCATION_TYPE_HOST == 0);
PIN(ACL_MEM_LOCATION_TYPE_DEVICE == 1);
PIN(ACL_MEM_LOCATION_TYPE_UNREGISTERED == 2);
PIN(ACL_MEM_LOCATION_TYPE_MANAGED == 3);
PIN(ACL_MEM_LOCATION_TYPE_HOST_NUMA == 4);
PIN(ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM == 0);
PIN(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED == 1);
PIN(ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF == 0xFFFF);
PIN(ACL_RT_MEM_ACCESS_FLAGS_NONE == 0);
PIN(ACL_RT_MEM_ACCESS_FLAGS_READ == 1);
PIN(ACL_RT_MEM_ACCESS_FLAGS_READWRITE == 3);

/* Flag macros: values and types (uint32_t-sized U, uint64_t-sized UL as CANN). */
PIN(ACL_EVENT_SYNC == 0x1);
PIN(ACL_EVENT_CAPTURE_STREAM_PROGRESS == 0x2);
PIN(ACL_EVENT_TIME_LINE == 0x8);
PIN(ACL_EVENT_DEVICE_USE_ONLY == 0x10);
PIN(ACL_EVENT_EXTERNAL == 0x20);
PIN(ACL_EVENT_IPC == 0x40);
PIN_TYPE(ACL_EVENT_IPC, unsigned int);
PIN(ACL_NOTIFY_DEFAULT == 0x0);
PIN(ACL_NOTIFY_DEVICE_USE_ONLY == 0x1);
PIN_TYPE(ACL_NOTIFY_DEVICE_USE_ONLY, unsigned int);

PIN(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT == 0x0);
PIN(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION == 0x1);
PIN(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT == 0x0);
PIN(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS == 0x1);
PIN(ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT == 0x0);
PIN(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION == 0x2);
PIN(ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT == 0x0);
PIN(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS == 0x2);
PIN(ACL_RT_VMM_EXPORT_FLAG_DEFAULT == 0x0);
PIN(ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION == 0x1);
PIN_TYPE(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT, unsigned long);
PIN_TYPE(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION, unsigned long);
PIN_TYPE(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT, unsigned long);
PIN_TYPE(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS, unsigned long);
PIN_TYPE(ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT, unsigned long);
PIN_TYPE(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION, unsigned long);
PIN_TYPE(ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT, unsigned long);
PIN_TYPE(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS, unsigned long);
PIN_TYPE(ACL_RT_VMM_EXPORT_FLAG_DEFAULT, unsigned long);
PIN_TYPE(ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, unsigned long);
PIN(sizeof(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT) == sizeof(uint64_t));

/* Structs. */
PIN(ACL_IPC_EVENT_HANDLE_SIZE == 64);
PIN_TYPE(ACL_IPC_EVENT_HANDLE_SIZE, unsigned int);
PIN(sizeof(aclrtIpcEventHandle) == 64);
PIN(sizeof(((aclrtIpcEventHandle *)0)->reserved) == ACL_IPC_EVENT_HANDLE_SIZE);

PIN(sizeof(aclrtMemLocation) == 8);
PIN(offsetof(aclrtMemLocation, id) == 0);
PIN(offsetof(aclrtMemLocation, type) == 4);

PIN(sizeof(aclrtPhysicalMemProp) == 32);
PIN(offsetof(aclrtPhysicalMemProp, handleType) == 0);
PIN(offsetof(aclrtPhysicalMemProp, allocationType) == 4);
PIN(offsetof(aclrtPhysicalMemProp, memAttr) == 8);
PIN(offsetof(aclrtPhysicalMemProp, location) == 12);
PIN(offsetof(aclrtPhysicalMemProp, reserve) == 24);

PIN(sizeof(aclrtMemAccessDesc) == 4 + 8 + 12);
PIN(offsetof(aclrtMemAccessDesc, flags) == 0);
PIN(offsetof(aclrtMemAccessDesc, location) == 4);
PIN(offsetof(aclrtMemAccessDesc, rsv) == 12);
PIN(sizeof(((aclrtMemAccessDesc *)0)->rsv) == 12);

/* Handles. */
PIN(sizeof(aclrtStream) == sizeof(void *));
PIN(sizeof(aclrtEvent) == sizeof(void *));
PIN(sizeof(aclrtContext) == sizeof(void *));
PIN(sizeof(aclrtNotify) == sizeof(void *));
PIN(sizeof(aclrtDrvMemHandle) == sizeof(void *));
PIN_TYPE((aclrtCallback)0, void (*)(void *));

/* Prototypes: argument order and types (unevaluated: nothing is referenced). */
PIN_FN(aclInit, aclError (*)(const char *));
PIN_FN(aclFinalize, aclError (*)(void));
PIN_FN(aclGetRecentErrMsg, const char *(*)(void));
PIN_FN(aclrtSetDevice, aclError (*)(int32_t));
PIN_FN(aclrtResetDevice, aclError (*)(int32_t));
PIN_FN(aclrtResetDeviceForce, aclError (*)(int32_t));
PIN_FN(aclrtGetDevice, aclError (*)(int32_t *));
PIN_FN(aclrtGetDeviceCount, aclError (*)(uint32_t *));
PIN_FN(aclrtSynchronizeDevice, aclError (*)(void));
PIN_FN(aclrtCreateContext, aclError (*)(aclrtContext *, int32_t));
PIN_FN(aclrtDestroyContext, aclError (*)(aclrtContext));
PIN_FN(aclrtSetCurrentContext, aclError (*)(aclrtContext));
PIN_FN(aclrtGetCurrentContext, aclError (*)(aclrtContext *));
PIN_FN(aclrtDeviceCanAccessPeer, aclError (*)(int32_t *, int32_t, int32_t));
PIN_FN(aclrtDeviceEnablePeerAccess, aclError (*)(int32_t, uint32_t));
PIN_FN(aclrtDeviceDisablePeerAccess, aclError (*)(int32_t));
PIN_FN(aclrtDeviceGetBareTgid, aclError (*)(int32_t *));
PIN_FN(aclrtGetMemInfo, aclError (*)(aclrtMemAttr, size_t *, size_t *));
PIN_FN(aclrtMalloc, aclError (*)(void **, size_t, aclrtMemMallocPolicy));
PIN_FN(aclrtFree, aclError (*)(void *));
PIN_FN(aclrtMallocHost, aclError (*)(void **, size_t));
PIN_FN(aclrtFreeHost, aclError (*)(void *));
PIN_FN(aclrtMemcpy, aclError (*)(void *, size_t, const void *, size_t, aclrtMemcpyKind));
PIN_FN(aclrtMemcpyAsync, aclError (*)(void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream));
PIN_FN(aclrtMemset, aclError (*)(void *, size_t, int32_t, size_t));
PIN_FN(aclrtMemsetAsync, aclError (*)(void *, size_t, int32_t, size_t, aclrtStream));
PIN_FN(aclrtMemGetAddressRange, aclError (*)(void *, void **, size_t *));
PIN_FN(aclrtCreateStream, aclError (*)(aclrtStream *));
PIN_FN(aclrtDestroyStream, aclError (*)(aclrtStream));
PIN_FN(aclrtDestroyStreamForce, aclError (*)(aclrtStream));
PIN_FN(aclrtSynchronizeStream, aclError (*)(aclrtStream));
PIN_FN(aclrtSynchronizeStreamWithTimeout, aclError (*)(aclrtStream, int32_t));
PIN_FN(aclrtStreamQuery, aclError (*)(aclrtStream, aclrtStreamStatus *));
PIN_FN(aclrtLaunchCallback, aclError (*)(aclrtCallback, void *, aclrtCallbackBlockType, aclrtStream));
PIN_FN(aclrtSubscribeReport, aclError (*)(uint64_t, aclrtStream));
PIN_FN(aclrtProcessReport, aclError (*)(int32_t));
PIN_FN(aclrtUnSubscribeReport, aclError (*)(uint64_t, aclrtStream));
PIN_FN(aclrtCreateEvent, aclError (*)(aclrtEvent *));
PIN_FN(aclrtCreateEventWithFlag, aclError (*)(aclrtEvent *, uint32_t));
PIN_FN(aclrtCreateEventExWithFlag, aclError (*)(aclrtEvent *, uint32_t));
PIN_FN(aclrtRecordEvent, aclError (*)(aclrtEvent, aclrtStream));
PIN_FN(aclrtResetEvent, aclError (*)(aclrtEvent, aclrtStream));
PIN_FN(aclrtStreamWaitEvent, aclError (*)(aclrtStream, aclrtEvent));
PIN_FN(aclrtStreamWaitEventWithTimeout, aclError (*)(aclrtStream, aclrtEvent, int32_t));
PIN_FN(aclrtSynchronizeEvent, aclError (*)(aclrtEvent));
PIN_FN(aclrtSynchronizeEventWithTimeout, aclError (*)(aclrtEvent, int32_t));
PIN_FN(aclrtQueryEventStatus, aclError (*)(aclrtEvent, aclrtEventRecordedStatus *));
PIN_FN(aclrtEventElapsedTime, aclError (*)(float *, aclrtEvent, aclrtEvent));
PIN_FN(aclrtDestroyEvent, aclError (*)(aclrtEvent));
PIN_FN(aclrtIpcGetEventHandle, aclError (*)(aclrtEvent, aclrtIpcEventHandle *));
PIN_FN(aclrtIpcOpenEventHandle, aclError (*)(aclrtIpcEventHandle, aclrtEvent *));
PIN_FN(aclrtIpcMemGetExportKey, aclError (*)(void *, size_t, char *, size_t, uint64_t));
PIN_FN(aclrtIpcMemSetImportPid, aclError (*)(const char *, int32_t *, size_t));
PIN_FN(aclrtIpcMemImportByKey, aclError (*)(void **, const char *, uint64_t));
PIN_FN(aclrtIpcMemClose, aclError (*)(const char *));
PIN_FN(aclrtCreateNotify, aclError (*)(aclrtNotify *, uint64_t));
PIN_FN(aclrtDestroyNotify, aclError (*)(aclrtNotify));
PIN_FN(aclrtRecordNotify, aclError (*)(aclrtNotify, aclrtStream));
PIN_FN(aclrtWaitAndResetNotify, aclError (*)(aclrtNotify, aclrtStream, uint32_t));
PIN_FN(aclrtGetNotifyId, aclError (*)(aclrtNotify, uint32_t *));
PIN_FN(aclrtNotifyBatchReset, aclError (*)(aclrtNotify *, size_t));
PIN_FN(aclrtNotifyGetExportKey, aclError (*)(aclrtNotify, char *, size_t, uint64_t));
PIN_FN(aclrtNotifyImportByKey, aclError (*)(aclrtNotify *, const char *, uint64_t));
PIN_FN(aclrtNotifySetImportPid, aclError (*)(aclrtNotify, int32_t *, size_t));
PIN_FN(aclrtMemGetAllocationGranularity,
       aclError (*)(aclrtPhysicalMemProp *, aclrtMemGranularityOptions, size_t *));
PIN_FN(aclrtMallocPhysical, aclError (*)(aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *, uint64_t));
PIN_FN(aclrtFreePhysical, aclError (*)(aclrtDrvMemHandle));
PIN_FN(aclrtReserveMemAddress, aclError (*)(void **, size_t, size_t, void *, uint64_t));
PIN_FN(aclrtReleaseMemAddress, aclError (*)(void *));
PIN_FN(aclrtMapMem, aclError (*)(void *, size_t, size_t, aclrtDrvMemHandle, uint64_t));
PIN_FN(aclrtUnmapMem, aclError (*)(void *));
PIN_FN(aclrtMemSetAccess, aclError (*)(void *, size_t, aclrtMemAccessDesc *, size_t));
PIN_FN(aclrtMemGetAccess, aclError (*)(void *, aclrtMemLocation *, uint64_t *));
PIN_FN(aclrtMemExportToShareableHandle, aclError (*)(aclrtDrvMemHandle, aclrtMemHandleType, uint64_t, uint64_t *));
PIN_FN(aclrtMemImportFromShareableHandle, aclError (*)(uint64_t, int32_t, aclrtDrvMemHandle *));
PIN_FN(aclrtMemSetPidToShareableHandle, aclError (*)(uint64_t, int32_t *, size_t));
PIN_FN(aclrtMemRetainAllocationHandle, aclError (*)(void *, aclrtDrvMemHandle *));
PIN_FN(aclrtMemGetAllocationPropertiesFromHandle, aclError (*)(aclrtDrvMemHandle, aclrtPhysicalMemProp *));

/* The seed's spellings (acl_seed_compat.h). */
PIN_FN(aclrtNotifyCreate, aclError (*)(aclrtNotify *));
PIN_FN(aclrtNotifyDestroy, aclError (*)(aclrtNotify));
PIN_FN(aclrtNotifyRecord, aclError (*)(aclrtNotify, aclrtStream));
PIN_FN(aclrtNotifyWait, aclError (*)(aclrtNotify, aclrtStream));
PIN_FN(aclrtEventRecord, aclError (*)(aclrtEvent, aclrtStream));
PIN_FN(aclrtSynchonizeStream, aclError (*)(aclrtStream));

int acl_headers_c_test_ok(void);

int acl_headers_c_test_ok(void)
{
    /* The general error codes of the reference's short list. */
    return ACL_SUCCESS == 0 &&
           ACL_ERROR_NONE == 0 &&
           ACL_ERROR_INVALID_PARAM == 100000 &&
           ACL_ERROR_UNINITIALIZE == 100001 &&
           ACL_ERROR_REPEAT_INITIALIZE == 100002 &&
           ACL_ERROR_REPEAT_FINALIZE == 100037 &&
           ACL_ERROR_BAD_ALLOC == 200000 &&
           ACL_ERROR_API_NOT_SUPPORT == 200001 &&
           ACL_ERROR_INVALID_DEVICE == 200002 &&
           ACL_ERROR_MEMORY_ADDRESS_UNALIGNED == 200003 &&
           ACL_ERROR_RESOURCE_NOT_MATCH == 200004 &&
           ACL_ERROR_INVALID_RESOURCE_HANDLE == 200005 &&
           ACL_ERROR_FEATURE_UNSUPPORTED == 200006 &&
           ACL_ERROR_STORAGE_OVER_LIMIT == 300000 &&
           ACL_ERROR_INTERNAL_ERROR == 500000 &&
           ACL_ERROR_FAILURE == 500001 &&
           ACL_ERROR_RT_FAILURE == 500003 &&
           ACL_ERROR_DRV_FAILURE == 500004;
}
