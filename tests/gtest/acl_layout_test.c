/* SPDX-License-Identifier: MIT */
/*
 * The layouts of the acl/ headers' structures and unions are CANN's: every
 * size, alignment and member offset below was measured by compiling CANN's
 * own headers (hicann/runtime, header version 1.17.0) with GCC for x86-64
 * and checked against the LP64 rules by hand. A structure that drifts from
 * CANN's breaks binary compatibility with code built against CANN even when
 * everything still compiles, so the build stops here instead.
 *
 * Compiles as C11 (_Static_assert) and as C++ (static_assert); it defines
 * one function so that it can be linked into a test program, and references
 * nothing.
 */
#include "acl/acl_rt.h"

#include <stddef.h>

#ifdef __cplusplus
#define LAYOUT(expr)  static_assert(expr, #expr)
#define ALIGNOF(type) alignof(type)
#else
#define LAYOUT(expr)  _Static_assert(expr, #expr)
#define ALIGNOF(type) _Alignof(type)
#endif

#define SIZE(type, size, align) LAYOUT(sizeof(type) == (size)); LAYOUT(ALIGNOF(type) == (align))
#define FIELD(type, member, offset, size) \
    LAYOUT(offsetof(type, member) == (offset)); LAYOUT(sizeof(((type *)0)->member) == (size))

/* The measured values are those of x86-64 (LP64); other ABIs are not checked. */
#if defined(__x86_64__) && defined(__LP64__)

/* Scalars and handles. */
SIZE(aclError, 4, 4);
SIZE(aclFloat16, 2, 2);
SIZE(aclrtStream, 8, 8);
SIZE(aclrtEvent, 8, 8);
SIZE(aclrtContext, 8, 8);
SIZE(aclrtNotify, 8, 8);
SIZE(aclrtCntNotify, 8, 8);
SIZE(aclrtLabel, 8, 8);
SIZE(aclrtLabelList, 8, 8);
SIZE(aclrtMbuf, 8, 8);
SIZE(aclrtTaskGrp, 8, 8);
SIZE(aclmdlRITask, 8, 8);
SIZE(aclrtAllocatorDesc, 8, 8);
SIZE(aclrtAllocator, 8, 8);
SIZE(aclrtAllocatorBlock, 8, 8);
SIZE(aclrtAllocatorAddr, 8, 8);
SIZE(aclrtDrvMemHandle, 8, 8);
SIZE(aclrtBinary, 8, 8);
SIZE(aclrtBinHandle, 8, 8);
SIZE(aclrtFuncHandle, 8, 8);
SIZE(aclrtArgsHandle, 8, 8);
SIZE(aclrtParamHandle, 8, 8);
SIZE(aclmdlRI, 8, 8);
SIZE(aclmdlRICondHandle, 8, 8);

/* Enumerations: int-sized, as the structures embedding them assume. */
SIZE(aclDataType, 4, 4);
SIZE(aclFormat, 4, 4);
SIZE(aclLogLevel, 4, 4);
SIZE(aclMemType, 4, 4);
SIZE(aclSysParamOpt, 4, 4);
SIZE(aclCannAttr, 4, 4);
SIZE(aclDeviceInfo, 4, 4);
SIZE(aclrtRunMode, 4, 4);
SIZE(aclrtTsId, 4, 4);
SIZE(aclrtDeviceStatus, 4, 4);
SIZE(aclrtLastErrLevel, 4, 4);
SIZE(aclRegisterCallbackType, 4, 4);
SIZE(aclCANNPackageName, 4, 4);
SIZE(aclrtDevAttr, 4, 4);
SIZE(aclrtDevFeatureType, 4, 4);
SIZE(aclrtDevResLimitType, 4, 4);
SIZE(aclrtDeviceLimit, 4, 4);
SIZE(aclrtFloatOverflowMode, 4, 4);
SIZE(aclrtGroupAttr, 4, 4);
SIZE(aclrtHacType, 4, 4);
SIZE(aclrtHostMemMapCapability, 4, 4);
SIZE(aclrtAtomicOperationCapability, 4, 4);
SIZE(aclrtAtomicOperation, 4, 4);
SIZE(aclrtErrorType, 4, 4);
SIZE(aclrtAicoreErrorType, 4, 4);
SIZE(aclrtEventStatus, 4, 4);
SIZE(aclrtEventRecordedStatus, 4, 4);
SIZE(aclrtEventWaitStatus, 4, 4);
SIZE(aclrtStreamStatus, 4, 4);
SIZE(aclrtCallbackBlockType, 4, 4);
SIZE(aclrtStreamConfigAttr, 4, 4);
SIZE(aclrtStreamAttr, 4, 4);
SIZE(aclrtCondition, 4, 4);
SIZE(aclrtCompareDataType, 4, 4);
SIZE(aclrtCntNotifyRecordMode, 4, 4);
SIZE(aclrtCntNotifyWaitMode, 4, 4);
SIZE(aclrtDeviceState, 4, 4);
SIZE(aclrtStreamState, 4, 4);
SIZE(aclrtDeviceTaskAbortStage, 4, 4);
SIZE(aclrtSnapShotStage, 4, 4);
SIZE(aclrtProcessState, 4, 4);
SIZE(aclrtMemcpyKind, 4, 4);
SIZE(aclrtMemMallocPolicy, 4, 4);
SIZE(aclrtMemAttr, 4, 4);
SIZE(enum aclrtMemPgType, 4, 4);
SIZE(enum aclrtMemType, 4, 4);
SIZE(aclrtHostRegisterType, 4, 4);
SIZE(aclrtMallocAttrType, 4, 4);
SIZE(aclrtMemLocationType, 4, 4);
SIZE(aclrtMemManagedAdviseType, 4, 4);
SIZE(aclrtMemManagedLocationType, 4, 4);
SIZE(aclrtMemManagedRangeAttribute, 4, 4);
SIZE(aclrtReduceKind, 4, 4);
SIZE(aclrtCmoType, 4, 4);
SIZE(aclrtIpcMemAttrType, 4, 4);
SIZE(aclrtMemAllocationType, 4, 4);
SIZE(aclrtMemHandleType, 4, 4);
SIZE(aclrtMemSharedHandleType, 4, 4);
SIZE(aclrtMemGranularityOptions, 4, 4);
SIZE(aclrtMemAccessFlags, 4, 4);
SIZE(aclrtMemLinkType, 4, 4);
SIZE(aclrtBinaryLoadOptionType, 4, 4);
SIZE(aclrtEngineType, 4, 4);
SIZE(aclrtLaunchKernelAttrId, 4, 4);
SIZE(aclrtFuncAttribute, 4, 4);
SIZE(aclrtKernelType, 4, 4);
SIZE(aclrtRandomNumFuncType, 4, 4);
SIZE(aclrtUpdateTaskAttrId, 4, 4);
SIZE(aclmdlRICaptureMode, 4, 4);
SIZE(aclmdlRICaptureStatus, 4, 4);
SIZE(aclmdlRITaskType, 4, 4);
SIZE(aclmdlRICondHandleFlag, 4, 4);
SIZE(aclmdlRICondTaskType, 4, 4);

/* Structures and unions, member by member. */

SIZE(aclCANNPackageVersion, 512, 1);
FIELD(aclCANNPackageVersion, version, 0, 128);
FIELD(aclCANNPackageVersion, majorVersion, 128, 64);
FIELD(aclCANNPackageVersion, minorVersion, 192, 64);
FIELD(aclCANNPackageVersion, releaseVersion, 256, 64);
FIELD(aclCANNPackageVersion, patchVersion, 320, 64);
FIELD(aclCANNPackageVersion, reserved, 384, 128);

SIZE(aclrtUtilizationInfo, 24, 8);
FIELD(aclrtUtilizationInfo, cubeUtilization, 0, 4);
FIELD(aclrtUtilizationInfo, vectorUtilization, 4, 4);
FIELD(aclrtUtilizationInfo, aicpuUtilization, 8, 4);
FIELD(aclrtUtilizationInfo, memoryUtilization, 12, 4);
FIELD(aclrtUtilizationInfo, utilizationExtend, 16, 8);

SIZE(aclrtUuid, 16, 1);
FIELD(aclrtUuid, bytes, 0, 16);

SIZE(aclrtMemUceInfo, 128, 8);
FIELD(aclrtMemUceInfo, addr, 0, 8);
FIELD(aclrtMemUceInfo, len, 8, 8);
FIELD(aclrtMemUceInfo, reserved, 16, 112);

SIZE(aclrtMemUceInfoArray, 2568, 8);
FIELD(aclrtMemUceInfoArray, arraySize, 0, 8);
FIELD(aclrtMemUceInfoArray, memUceInfoArray, 8, 2560);

SIZE(aclrtErrorInfoDetail, 2568, 8);
FIELD(aclrtErrorInfoDetail, uceInfo, 0, 2568);
FIELD(aclrtErrorInfoDetail, aicoreErrType, 0, 4);

SIZE(aclrtErrorInfo, 2576, 8);
FIELD(aclrtErrorInfo, tryRepair, 0, 1);
FIELD(aclrtErrorInfo, hasDetail, 1, 1);
FIELD(aclrtErrorInfo, reserved, 2, 2);
FIELD(aclrtErrorInfo, errorType, 4, 4);
FIELD(aclrtErrorInfo, detail, 8, 2568);

SIZE(aclrtStreamConfigHandle, 32, 8);
FIELD(aclrtStreamConfigHandle, workptr, 0, 8);
FIELD(aclrtStreamConfigHandle, workSize, 8, 8);
FIELD(aclrtStreamConfigHandle, flag, 16, 8);
FIELD(aclrtStreamConfigHandle, priority, 24, 4);

SIZE(aclrtStreamAttrValue, 16, 8);
FIELD(aclrtStreamAttrValue, failureMode, 0, 8);
FIELD(aclrtStreamAttrValue, overflowSwitch, 0, 4);
FIELD(aclrtStreamAttrValue, userCustomTag, 0, 4);
FIELD(aclrtStreamAttrValue, cacheOpInfoSwitch, 0, 4);
FIELD(aclrtStreamAttrValue, streamPriority, 0, 4);
FIELD(aclrtStreamAttrValue, reserve, 0, 16);

SIZE(aclrtIpcEventHandle, 64, 1);
FIELD(aclrtIpcEventHandle, reserved, 0, 64);

SIZE(aclrtCntNotifyRecordInfo, 8, 4);
FIELD(aclrtCntNotifyRecordInfo, mode, 0, 4);
FIELD(aclrtCntNotifyRecordInfo, value, 4, 4);

SIZE(aclrtCntNotifyWaitInfo, 16, 4);
FIELD(aclrtCntNotifyWaitInfo, mode, 0, 4);
FIELD(aclrtCntNotifyWaitInfo, value, 4, 4);
FIELD(aclrtCntNotifyWaitInfo, timeout, 8, 4);
FIELD(aclrtCntNotifyWaitInfo, isClear, 12, 1);
FIELD(aclrtCntNotifyWaitInfo, rsv, 13, 3);

SIZE(aclrtSnapShotBackupArgs, 64, 4);
FIELD(aclrtSnapShotBackupArgs, backupFlags, 0, 4);
FIELD(aclrtSnapShotBackupArgs, reserved, 4, 60);

SIZE(aclrtSnapShotRestoreArgs, 64, 4);
FIELD(aclrtSnapShotRestoreArgs, restoreFlags, 0, 4);
FIELD(aclrtSnapShotRestoreArgs, reserved, 4, 60);

SIZE(struct MemAttrMapping, 16, 4);
FIELD(struct MemAttrMapping, pgType, 0, 4);
FIELD(struct MemAttrMapping, memType, 4, 4);
FIELD(struct MemAttrMapping, isHostAlloc, 8, 1);
FIELD(struct MemAttrMapping, memAttr, 12, 4);

SIZE(aclrtMallocAttrValue, 8, 4);
FIELD(aclrtMallocAttrValue, moduleId, 0, 2);
FIELD(aclrtMallocAttrValue, deviceId, 0, 4);
FIELD(aclrtMallocAttrValue, vaFlag, 0, 4);
FIELD(aclrtMallocAttrValue, rsv, 0, 8);

SIZE(aclrtMallocAttribute, 12, 4);
FIELD(aclrtMallocAttribute, attr, 0, 4);
FIELD(aclrtMallocAttribute, value, 4, 8);

SIZE(aclrtMallocConfig, 16, 8);
FIELD(aclrtMallocConfig, attrs, 0, 8);
FIELD(aclrtMallocConfig, numAttrs, 8, 8);

SIZE(aclrtMemLocation, 8, 4);
FIELD(aclrtMemLocation, id, 0, 4);
FIELD(aclrtMemLocation, type, 4, 4);

SIZE(aclrtPtrAttributes, 28, 4);
FIELD(aclrtPtrAttributes, location, 0, 8);
FIELD(aclrtPtrAttributes, pageSize, 8, 4);
FIELD(aclrtPtrAttributes, rsv, 12, 16);

SIZE(aclrtMemUsageInfo, 112, 8);
FIELD(aclrtMemUsageInfo, name, 0, 32);
FIELD(aclrtMemUsageInfo, curMemSize, 32, 8);
FIELD(aclrtMemUsageInfo, memPeakSize, 40, 8);
FIELD(aclrtMemUsageInfo, reserved, 48, 64);

SIZE(aclrtMemManagedLocation, 8, 4);
FIELD(aclrtMemManagedLocation, type, 0, 4);
FIELD(aclrtMemManagedLocation, id, 4, 4);

SIZE(aclrtMemcpyBatchAttr, 32, 4);
FIELD(aclrtMemcpyBatchAttr, dstLoc, 0, 8);
FIELD(aclrtMemcpyBatchAttr, srcLoc, 8, 8);
FIELD(aclrtMemcpyBatchAttr, rsv, 16, 16);

SIZE(aclrtBarrierCmoInfo, 8, 4);
FIELD(aclrtBarrierCmoInfo, cmoType, 0, 4);
FIELD(aclrtBarrierCmoInfo, barrierId, 4, 4);

SIZE(aclrtBarrierTaskInfo, 56, 8);
FIELD(aclrtBarrierTaskInfo, barrierNum, 0, 8);
FIELD(aclrtBarrierTaskInfo, cmoInfo, 8, 48);

SIZE(aclrtServerPid, 24, 8);
FIELD(aclrtServerPid, sdid, 0, 4);
FIELD(aclrtServerPid, pid, 8, 8);
FIELD(aclrtServerPid, num, 16, 8);

SIZE(aclrtMemFabricHandle, 128, 1);
FIELD(aclrtMemFabricHandle, data, 0, 128);

SIZE(aclrtPhysicalMemProp, 32, 8);
FIELD(aclrtPhysicalMemProp, handleType, 0, 4);
FIELD(aclrtPhysicalMemProp, allocationType, 4, 4);
FIELD(aclrtPhysicalMemProp, memAttr, 8, 4);
FIELD(aclrtPhysicalMemProp, location, 12, 8);
FIELD(aclrtPhysicalMemProp, reserve, 24, 8);

SIZE(aclrtMemAccessDesc, 24, 4);
FIELD(aclrtMemAccessDesc, flags, 0, 4);
FIELD(aclrtMemAccessDesc, location, 4, 8);
FIELD(aclrtMemAccessDesc, rsv, 12, 12);

SIZE(aclrtBinaryLoadOptionValue, 16, 4);
FIELD(aclrtBinaryLoadOptionValue, isLazyLoad, 0, 4);
FIELD(aclrtBinaryLoadOptionValue, magic, 0, 4);
FIELD(aclrtBinaryLoadOptionValue, cpuKernelMode, 0, 4);
FIELD(aclrtBinaryLoadOptionValue, rsv, 0, 16);

SIZE(aclrtBinaryLoadOption, 20, 4);
FIELD(aclrtBinaryLoadOption, type, 0, 4);
FIELD(aclrtBinaryLoadOption, value, 4, 16);

SIZE(aclrtBinaryLoadOptions, 16, 8);
FIELD(aclrtBinaryLoadOptions, options, 0, 8);
FIELD(aclrtBinaryLoadOptions, numOpt, 8, 8);

SIZE(dim3, 12, 4);
FIELD(dim3, x, 0, 4);
FIELD(dim3, y, 4, 4);
FIELD(dim3, z, 8, 4);

SIZE(aclrtTimeoutUs, 8, 4);
FIELD(aclrtTimeoutUs, timeoutLow, 0, 4);
FIELD(aclrtTimeoutUs, timeoutHigh, 4, 4);

SIZE(aclrtLaunchKernelAttrValue, 16, 4);
FIELD(aclrtLaunchKernelAttrValue, schemMode, 0, 1);
/* The deprecated name of dynUBufSize is still a member of the union. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
FIELD(aclrtLaunchKernelAttrValue, localMemorySize, 0, 4);
#pragma GCC diagnostic pop
FIELD(aclrtLaunchKernelAttrValue, dynUBufSize, 0, 4);
FIELD(aclrtLaunchKernelAttrValue, engineType, 0, 4);
FIELD(aclrtLaunchKernelAttrValue, blockDimOffset, 0, 4);
FIELD(aclrtLaunchKernelAttrValue, isBlockTaskPrefetch, 0, 1);
FIELD(aclrtLaunchKernelAttrValue, isDataDump, 0, 1);
FIELD(aclrtLaunchKernelAttrValue, timeout, 0, 2);
FIELD(aclrtLaunchKernelAttrValue, timeoutUs, 0, 8);
FIELD(aclrtLaunchKernelAttrValue, enableProfiling, 0, 1);
FIELD(aclrtLaunchKernelAttrValue, rsv, 0, 16);

SIZE(aclrtLaunchKernelAttr, 20, 4);
FIELD(aclrtLaunchKernelAttr, id, 0, 4);
FIELD(aclrtLaunchKernelAttr, value, 4, 16);

SIZE(aclrtLaunchKernelCfg, 16, 8);
FIELD(aclrtLaunchKernelCfg, attrs, 0, 8);
FIELD(aclrtLaunchKernelCfg, numAttrs, 8, 8);

SIZE(aclrtPlaceHolderInfo, 8, 4);
FIELD(aclrtPlaceHolderInfo, addrOffset, 0, 4);
FIELD(aclrtPlaceHolderInfo, dataOffset, 4, 4);

SIZE(aclrtRandomParaInfo, 16, 1);
FIELD(aclrtRandomParaInfo, isAddr, 0, 1);
FIELD(aclrtRandomParaInfo, valueOrAddr, 1, 8);
FIELD(aclrtRandomParaInfo, size, 9, 1);
FIELD(aclrtRandomParaInfo, rsv, 10, 6);

SIZE(aclrtDropoutBitmaskInfo, 16, 1);
FIELD(aclrtDropoutBitmaskInfo, dropoutRation, 0, 16);

SIZE(aclrtUniformDisInfo, 32, 1);
FIELD(aclrtUniformDisInfo, min, 0, 16);
FIELD(aclrtUniformDisInfo, max, 16, 16);

SIZE(aclrtNormalDisInfo, 32, 1);
FIELD(aclrtNormalDisInfo, mean, 0, 16);
FIELD(aclrtNormalDisInfo, stddev, 16, 16);

SIZE(aclrtRandomNumFuncParaInfo, 36, 4);
FIELD(aclrtRandomNumFuncParaInfo, funcType, 0, 4);
FIELD(aclrtRandomNumFuncParaInfo, paramInfo, 4, 32);

SIZE(aclrtRandomNumTaskInfo, 104, 8);
FIELD(aclrtRandomNumTaskInfo, dataType, 0, 4);
FIELD(aclrtRandomNumTaskInfo, randomNumFuncParaInfo, 4, 36);
FIELD(aclrtRandomNumTaskInfo, randomParaAddr, 40, 8);
FIELD(aclrtRandomNumTaskInfo, randomResultAddr, 48, 8);
FIELD(aclrtRandomNumTaskInfo, randomCounterAddr, 56, 8);
FIELD(aclrtRandomNumTaskInfo, randomSeed, 64, 16);
FIELD(aclrtRandomNumTaskInfo, randomNum, 80, 16);
FIELD(aclrtRandomNumTaskInfo, rsv, 96, 8);

SIZE(aclrtRandomTaskUpdateAttr, 32, 8);
FIELD(aclrtRandomTaskUpdateAttr, srcAddr, 0, 8);
FIELD(aclrtRandomTaskUpdateAttr, size, 8, 8);
FIELD(aclrtRandomTaskUpdateAttr, rsv, 16, 16);

SIZE(aclrtAicAivTaskUpdateAttr, 40, 8);
FIELD(aclrtAicAivTaskUpdateAttr, binHandle, 0, 8);
FIELD(aclrtAicAivTaskUpdateAttr, funcEntryAddr, 8, 8);
FIELD(aclrtAicAivTaskUpdateAttr, blockDimAddr, 16, 8);
FIELD(aclrtAicAivTaskUpdateAttr, rsv, 24, 16);

SIZE(aclrtUpdateTaskAttrVal, 40, 8);
FIELD(aclrtUpdateTaskAttrVal, randomTaskAttr, 0, 32);
FIELD(aclrtUpdateTaskAttrVal, aicAivTaskAttr, 0, 40);

SIZE(aclrtTaskUpdateInfo, 48, 8);
FIELD(aclrtTaskUpdateInfo, id, 0, 4);
FIELD(aclrtTaskUpdateInfo, val, 8, 40);

SIZE(aclmdlRIKernelTaskParams, 88, 8);
FIELD(aclmdlRIKernelTaskParams, funcHandle, 0, 8);
FIELD(aclmdlRIKernelTaskParams, cfg, 8, 8);
FIELD(aclmdlRIKernelTaskParams, args, 16, 8);
FIELD(aclmdlRIKernelTaskParams, isHostArgs, 24, 4);
FIELD(aclmdlRIKernelTaskParams, argsSize, 32, 8);
FIELD(aclmdlRIKernelTaskParams, numBlocks, 40, 4);
FIELD(aclmdlRIKernelTaskParams, rsv, 44, 40);

SIZE(aclmdlRIEventRecordTaskParams, 16, 8);
FIELD(aclmdlRIEventRecordTaskParams, event, 0, 8);
FIELD(aclmdlRIEventRecordTaskParams, eventFlag, 8, 4);
FIELD(aclmdlRIEventRecordTaskParams, recordFlag, 12, 4);

SIZE(aclmdlRIEventWaitTaskParams, 16, 8);
FIELD(aclmdlRIEventWaitTaskParams, event, 0, 8);
FIELD(aclmdlRIEventWaitTaskParams, eventFlag, 8, 4);
FIELD(aclmdlRIEventWaitTaskParams, waitFlag, 12, 4);

SIZE(aclmdlRIEventResetTaskParams, 16, 8);
FIELD(aclmdlRIEventResetTaskParams, event, 0, 8);
FIELD(aclmdlRIEventResetTaskParams, eventFlag, 8, 4);
FIELD(aclmdlRIEventResetTaskParams, resetFlag, 12, 4);

SIZE(aclmdlRIValueWriteTaskParams, 16, 8);
FIELD(aclmdlRIValueWriteTaskParams, devAddr, 0, 8);
FIELD(aclmdlRIValueWriteTaskParams, value, 8, 8);

SIZE(aclmdlRIValueWaitTaskParams, 24, 8);
FIELD(aclmdlRIValueWaitTaskParams, devAddr, 0, 8);
FIELD(aclmdlRIValueWaitTaskParams, value, 8, 8);
FIELD(aclmdlRIValueWaitTaskParams, flag, 16, 4);

SIZE(aclmdlRITaskParams, 200, 8);
FIELD(aclmdlRITaskParams, type, 0, 4);
FIELD(aclmdlRITaskParams, rsv0, 4, 12);
FIELD(aclmdlRITaskParams, taskGrp, 16, 8);
FIELD(aclmdlRITaskParams, opInfoPtr, 24, 8);
FIELD(aclmdlRITaskParams, opInfoSize, 32, 8);
FIELD(aclmdlRITaskParams, rsv1, 40, 32);
FIELD(aclmdlRITaskParams, rsv2, 72, 128);
FIELD(aclmdlRITaskParams, kernelTaskParams, 72, 88);
FIELD(aclmdlRITaskParams, eventRecordTaskParams, 72, 16);
FIELD(aclmdlRITaskParams, eventWaitTaskParams, 72, 16);
FIELD(aclmdlRITaskParams, eventResetTaskParams, 72, 16);
FIELD(aclmdlRITaskParams, valueWriteTaskParams, 72, 16);
FIELD(aclmdlRITaskParams, valueWaitTaskParams, 72, 24);

SIZE(aclmdlRICondTaskParams, 24, 8);
FIELD(aclmdlRICondTaskParams, handle, 0, 8);
FIELD(aclmdlRICondTaskParams, type, 8, 4);
FIELD(aclmdlRICondTaskParams, size, 12, 4);
FIELD(aclmdlRICondTaskParams, modelRIArray, 16, 8);

/* Array sizes that the layouts above follow from. */
LAYOUT(ACL_IPC_EVENT_HANDLE_SIZE == 64);
LAYOUT(ACL_RT_CMO_MAX_BARRIER_NUM == 6);
LAYOUT(ACL_PKG_VERSION_MAX_SIZE == 128);
LAYOUT(ACL_PKG_VERSION_PARTS_MAX_SIZE == 64);
LAYOUT(UCE_INFO_RESERVED_SIZE == 14);
LAYOUT(ACL_RT_MEM_UCE_INFO_MAX_NUM == 20);

#endif /* __x86_64__ && __LP64__ */

#ifdef __cplusplus
extern "C" {
#endif

int acl_layout_test_ok(void);

/* Returns 1: reaching run time means every assertion above held. */
int acl_layout_test_ok(void)
{
    return 1;
}

#ifdef __cplusplus
}
#endif
