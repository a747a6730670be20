/* SPDX-License-Identifier: MIT */
/*
 * Every function the acl/ headers declare, from C (and, through
 * acl_all_functions_cxx.cpp, which includes this file, from C++): the program
 * that links this file proves each declaration compiles and links in both
 * languages. acl_all_functions_test.cpp walks the two tables:
 *  - implemented: only referenced (their address taken), never called;
 *  - stubs: called with zero and NULL arguments, each expected to fail the
 *    way its entry says and to name itself in aclGetRecentErrMsg().
 * The test checks that the two tables together hold every function of the
 * headers once, and that Documentation/library.md's table gives each the
 * same status. Implementing a function moves its line from the stubs to the
 * implemented functions (and deletes its call_ wrapper).
 *
 * Generated once from the headers; edited by hand since.
 */
#include <acl/acl.h>
#include <acl/acl_base.h>
#include <acl/acl_base_rt.h>
#include <acl/acl_rt.h>
#include <acl/acl_rt_allocator.h>

#include <stddef.h>
#include <stdint.h>

#include "acl_all_functions.h"

/* Seven functions are deprecated, as in CANN; they are called all the same. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

#ifdef __cplusplus
#define ALL_FUNCTIONS acl_all_functions_cxx
#define LANGUAGE      "C++"
#else
#define ALL_FUNCTIONS acl_all_functions_c
#define LANGUAGE      "C"
#endif

/* Zero values of the structures passed by value. */
static dim3 zero_dim3;

/* The stubs, called with zero and NULL arguments. Each returns what the stub
 * returned as an integer: the code or the value; for a pointer, whether it is
 * not NULL; for a float, whether it is not 0. */

/* acl/acl_base_rt.h */
/* acl/acl_rt.h */
static int64_t call_aclrtCheckArchCompatibility(void)
{ return aclrtCheckArchCompatibility(NULL, NULL); }
static int64_t call_aclrtGetArgsFromExceptionInfo(void)
{ return aclrtGetArgsFromExceptionInfo(NULL, NULL, NULL); }
static int64_t call_aclrtGetFuncHandleFromExceptionInfo(void)
{ return aclrtGetFuncHandleFromExceptionInfo(NULL, NULL); }
static int64_t call_aclrtBinarySetExceptionCallback(void)
{ return aclrtBinarySetExceptionCallback(NULL, NULL, NULL); }
static int64_t call_aclrtSetTsDevice(void)
{ return aclrtSetTsDevice((aclrtTsId)0); }
static int64_t call_aclrtSetDeviceSatMode(void)
{ return aclrtSetDeviceSatMode((aclrtFloatOverflowMode)0); }
static int64_t call_aclrtGetDeviceSatMode(void)
{ return aclrtGetDeviceSatMode(NULL); }
static int64_t call_aclrtGetHardwareSyncAddr(void)
{ return aclrtGetHardwareSyncAddr(NULL); }
static int64_t call_aclrtGetStreamResLimit(void)
{ return aclrtGetStreamResLimit(NULL, (aclrtDevResLimitType)0, NULL); }
static int64_t call_aclrtSetStreamResLimit(void)
{ return aclrtSetStreamResLimit(NULL, (aclrtDevResLimitType)0, 0); }
static int64_t call_aclrtResetStreamResLimit(void)
{ return aclrtResetStreamResLimit(NULL); }
static int64_t call_aclrtUseStreamResInCurrentThread(void)
{ return aclrtUseStreamResInCurrentThread(NULL); }
static int64_t call_aclrtUnuseStreamResInCurrentThread(void)
{ return aclrtUnuseStreamResInCurrentThread(NULL); }
static int64_t call_aclrtGetResInCurrentThread(void)
{ return aclrtGetResInCurrentThread((aclrtDevResLimitType)0, NULL); }
static int64_t call_aclrtSetOpExecuteTimeOut(void)
{ return aclrtSetOpExecuteTimeOut(0); }
static int64_t call_aclrtSetOpExecuteTimeOutWithMs(void)
{ return aclrtSetOpExecuteTimeOutWithMs(0); }
static int64_t call_aclrtSetOpExecuteTimeOutV2(void)
{ return aclrtSetOpExecuteTimeOutV2(0, NULL); }
static int64_t call_aclrtGetOpExecuteTimeout(void)
{ return aclrtGetOpExecuteTimeout(NULL); }
static int64_t call_aclrtGetOpTimeOutInterval(void)
{ return aclrtGetOpTimeOutInterval(NULL); }
static int64_t call_aclrtSetStreamOverflowSwitch(void)
{ return aclrtSetStreamOverflowSwitch(NULL, 0); }
static int64_t call_aclrtGetStreamOverflowSwitch(void)
{ return aclrtGetStreamOverflowSwitch(NULL, NULL); }
static int64_t call_aclrtGetOverflowStatus(void)
{ return aclrtGetOverflowStatus(NULL, 0, NULL); }
static int64_t call_aclrtResetOverflowStatus(void)
{ return aclrtResetOverflowStatus(NULL); }
static int64_t call_aclrtCtxGetFloatOverflowAddr(void)
{ return aclrtCtxGetFloatOverflowAddr(NULL); }
static int64_t call_aclrtGetFloatOverflowStatus(void)
{ return aclrtGetFloatOverflowStatus(NULL, 0, NULL); }
static int64_t call_aclrtResetFloatOverflowStatus(void)
{ return aclrtResetFloatOverflowStatus(NULL); }
static int64_t call_aclrtNpuGetFloatOverFlowStatus(void)
{ return aclrtNpuGetFloatOverFlowStatus(NULL, 0, 0, NULL); }
static int64_t call_aclrtNpuClearFloatOverFlowStatus(void)
{ return aclrtNpuClearFloatOverFlowStatus(0, NULL); }
static int64_t call_aclrtProfTrace(void)
{ return aclrtProfTrace(NULL, 0, NULL); }
static int64_t call_aclrtCacheLastTaskOpInfo(void)
{ return aclrtCacheLastTaskOpInfo(NULL, 0); }
static int64_t call_aclrtGetSymbolAddress(void)
{ return aclrtGetSymbolAddress(NULL, NULL); }
static int64_t call_aclrtGetSymbolSize(void)
{ return aclrtGetSymbolSize(NULL, NULL); }
static int64_t call_aclrtMemcpyFromSymbol(void)
{ return aclrtMemcpyFromSymbol(NULL, 0, NULL, 0, 0, (aclrtMemcpyKind)0); }
static int64_t call_aclrtMemcpyFromSymbolAsync(void)
{ return aclrtMemcpyFromSymbolAsync(NULL, 0, NULL, 0, 0, (aclrtMemcpyKind)0, NULL); }
static int64_t call_aclrtMemcpyToSymbol(void)
{ return aclrtMemcpyToSymbol(NULL, NULL, 0, 0, (aclrtMemcpyKind)0); }
static int64_t call_aclrtMemcpyToSymbolAsync(void)
{ return aclrtMemcpyToSymbolAsync(NULL, NULL, 0, 0, (aclrtMemcpyKind)0, NULL); }
static int64_t call_aclrtCreateBinary(void)
{ return aclrtCreateBinary(NULL, 0) != NULL; }
static int64_t call_aclrtDestroyBinary(void)
{ return aclrtDestroyBinary(NULL); }
static int64_t call_aclrtBinaryLoad(void)
{ return aclrtBinaryLoad(NULL, NULL); }
static int64_t call_aclrtBinaryLoadFromFile(void)
{ return aclrtBinaryLoadFromFile(NULL, NULL, NULL); }
static int64_t call_aclrtBinaryLoadFromData(void)
{ return aclrtBinaryLoadFromData(NULL, 0, NULL, NULL); }
static int64_t call_aclrtBinaryUnLoad(void)
{ return aclrtBinaryUnLoad(NULL); }
static int64_t call_aclrtBinaryGetDevAddress(void)
{ return aclrtBinaryGetDevAddress(NULL, NULL, NULL); }
static int64_t call_aclrtBinaryGetGlobal(void)
{ return aclrtBinaryGetGlobal(NULL, NULL, NULL, NULL); }
static int64_t call_aclrtBinaryGetFunction(void)
{ return aclrtBinaryGetFunction(NULL, NULL, NULL); }
static int64_t call_aclrtBinaryGetFunctionByEntry(void)
{ return aclrtBinaryGetFunctionByEntry(NULL, 0, NULL); }
static int64_t call_aclrtRegisterCpuFunc(void)
{ return aclrtRegisterCpuFunc(NULL, NULL, NULL, NULL); }
static int64_t call_aclrtGetFuncBySymbol(void)
{ return aclrtGetFuncBySymbol(NULL, NULL); }
static int64_t call_aclrtGetFunctionAddr(void)
{ return aclrtGetFunctionAddr(NULL, NULL, NULL); }
static int64_t call_aclrtGetFunctionSize(void)
{ return aclrtGetFunctionSize(NULL, NULL, NULL); }
static int64_t call_aclrtGetFunctionName(void)
{ return aclrtGetFunctionName(NULL, 0, NULL); }
static int64_t call_aclrtGetFunctionAttribute(void)
{ return aclrtGetFunctionAttribute(NULL, (aclrtFuncAttribute)0, NULL); }
static int64_t call_aclrtFunctionGetBinary(void)
{ return aclrtFunctionGetBinary(NULL, NULL); }
static int64_t call_aclrtFunctionGetParamCount(void)
{ return aclrtFunctionGetParamCount(NULL, NULL); }
static int64_t call_aclrtFunctionGetParamInfo(void)
{ return aclrtFunctionGetParamInfo(NULL, 0, NULL, NULL); }
static int64_t call_aclrtFunctionGetAvailDynUbufPerBlock(void)
{ return aclrtFunctionGetAvailDynUbufPerBlock(NULL, 0, NULL); }
static int64_t call_aclrtKernelArgsGetHandleMemSize(void)
{ return aclrtKernelArgsGetHandleMemSize(NULL, NULL); }
static int64_t call_aclrtKernelArgsGetMemSize(void)
{ return aclrtKernelArgsGetMemSize(NULL, 0, NULL); }
static int64_t call_aclrtKernelArgsInit(void)
{ return aclrtKernelArgsInit(NULL, NULL); }
static int64_t call_aclrtKernelArgsInitByUserMem(void)
{ return aclrtKernelArgsInitByUserMem(NULL, NULL, NULL, 0); }
static int64_t call_aclrtKernelArgsAppend(void)
{ return aclrtKernelArgsAppend(NULL, NULL, 0, NULL); }
static int64_t call_aclrtKernelArgsAppendPlaceHolder(void)
{ return aclrtKernelArgsAppendPlaceHolder(NULL, NULL); }
static int64_t call_aclrtKernelArgsGetPlaceHolderBuffer(void)
{ return aclrtKernelArgsGetPlaceHolderBuffer(NULL, NULL, 0, NULL); }
static int64_t call_aclrtKernelArgsParaUpdate(void)
{ return aclrtKernelArgsParaUpdate(NULL, NULL, NULL, 0); }
static int64_t call_aclrtKernelArgsFinalize(void)
{ return aclrtKernelArgsFinalize(NULL); }
static int64_t call_aclrtLaunchKernel(void)
{ return aclrtLaunchKernel(NULL, 0, NULL, 0, NULL); }
static int64_t call_aclrtLaunchKernelV2(void)
{ return aclrtLaunchKernelV2(NULL, 0, NULL, 0, NULL, NULL); }
static int64_t call_aclrtLaunchKernelWithConfig(void)
{ return aclrtLaunchKernelWithConfig(NULL, 0, NULL, NULL, NULL, NULL); }
static int64_t call_aclrtLaunchKernelWithHostArgs(void)
{ return aclrtLaunchKernelWithHostArgs(NULL, 0, NULL, NULL, NULL, 0, NULL, 0); }
static int64_t call_aclrtLaunchKernelWithArgsArray(void)
{ return aclrtLaunchKernelWithArgsArray(NULL, 0, NULL, NULL, NULL); }
static int64_t call_aclrtLaunchSIMTKernelWithArgsArray(void)
{ return aclrtLaunchSIMTKernelWithArgsArray(NULL, zero_dim3, zero_dim3, 0, NULL, NULL, NULL); }
static int64_t call_aclrtLaunchSIMTKernelWithHostArgs(void)
{ return aclrtLaunchSIMTKernelWithHostArgs(NULL, zero_dim3, zero_dim3, 0, NULL, NULL, NULL, 0, NULL,
                                           0); }
static int64_t call_aclrtSetGroup(void)
{ return aclrtSetGroup(0); }
static int64_t call_aclrtGetGroupCount(void)
{ return aclrtGetGroupCount(NULL); }
static int64_t call_aclrtCreateGroupInfo(void)
{ return aclrtCreateGroupInfo() != NULL; }
static int64_t call_aclrtDestroyGroupInfo(void)
{ return aclrtDestroyGroupInfo(NULL); }
static int64_t call_aclrtGetAllGroupInfo(void)
{ return aclrtGetAllGroupInfo(NULL); }
static int64_t call_aclrtGetGroupInfoDetail(void)
{ return aclrtGetGroupInfoDetail(NULL, 0, (aclrtGroupAttr)0, NULL, 0, NULL); }
static int64_t call_aclrtAllocBuf(void)
{ return aclrtAllocBuf(NULL, 0); }
static int64_t call_aclrtFreeBuf(void)
{ return aclrtFreeBuf(NULL); }
static int64_t call_aclrtGetBufData(void)
{ return aclrtGetBufData(NULL, NULL, NULL); }
static int64_t call_aclrtGetBufDataLen(void)
{ return aclrtGetBufDataLen(NULL, NULL); }
static int64_t call_aclrtSetBufDataLen(void)
{ return aclrtSetBufDataLen(NULL, 0); }
static int64_t call_aclrtGetBufUserData(void)
{ return aclrtGetBufUserData(NULL, NULL, 0, 0); }
static int64_t call_aclrtSetBufUserData(void)
{ return aclrtSetBufUserData(NULL, NULL, 0, 0); }
static int64_t call_aclrtCopyBufRef(void)
{ return aclrtCopyBufRef(NULL, NULL); }
static int64_t call_aclrtAppendBufChain(void)
{ return aclrtAppendBufChain(NULL, NULL); }
static int64_t call_aclrtGetBufChainNum(void)
{ return aclrtGetBufChainNum(NULL, NULL); }
static int64_t call_aclrtGetBufFromChain(void)
{ return aclrtGetBufFromChain(NULL, 0, NULL); }
static int64_t call_aclmdlRICaptureTaskGrpBegin(void)
{ return aclmdlRICaptureTaskGrpBegin(NULL); }
static int64_t call_aclmdlRICaptureTaskGrpEnd(void)
{ return aclmdlRICaptureTaskGrpEnd(NULL, NULL); }
static int64_t call_aclmdlRICaptureTaskUpdateBegin(void)
{ return aclmdlRICaptureTaskUpdateBegin(NULL, NULL); }
static int64_t call_aclmdlRICaptureTaskUpdateEnd(void)
{ return aclmdlRICaptureTaskUpdateEnd(NULL); }
static int64_t call_aclmdlRIKernelTaskGetAttribute(void)
{ return aclmdlRIKernelTaskGetAttribute(NULL, (aclrtLaunchKernelAttrId)0, NULL); }
static int64_t call_aclmdlInitDump(void)
{ return aclmdlInitDump(); }
static int64_t call_aclmdlSetDump(void)
{ return aclmdlSetDump(NULL); }
static int64_t call_aclmdlFinalizeDump(void)
{ return aclmdlFinalizeDump(); }
/* acl/acl_rt_allocator.h */

#define IMPLEMENTED(fn) { #fn, (void (*)(void))fn }

static const struct acl_implemented_function implemented[] = {
    /* acl/acl_rt.h */
    IMPLEMENTED(aclInit),
    IMPLEMENTED(aclFinalize),
    IMPLEMENTED(aclGetRecentErrMsg),
    IMPLEMENTED(aclrtPeekAtLastError),
    IMPLEMENTED(aclrtGetLastError),
    IMPLEMENTED(aclrtGetRunMode),
    IMPLEMENTED(aclmdlRIAddCondTask),
    IMPLEMENTED(aclmdlRICondHandleGetCondPtr),
    IMPLEMENTED(aclmdlRICondHandleCreate),
    IMPLEMENTED(aclmdlRICaptureToModelRIBegin),
    IMPLEMENTED(aclmdlRITaskDisable),
    IMPLEMENTED(aclmdlRITaskSetParams),
    IMPLEMENTED(aclmdlRITaskGetSeqId),
    IMPLEMENTED(aclrtTaskUpdateAsync),
    IMPLEMENTED(aclrtRandomNumAsync),
    IMPLEMENTED(aclrtCacheLastTaskExtendInfo),
    IMPLEMENTED(aclrtSnapShotCallbackUnregister),
    IMPLEMENTED(aclrtSnapShotCallbackRegister),
    IMPLEMENTED(aclrtSnapShotProcessRestore),
    IMPLEMENTED(aclrtSnapShotProcessBackup),
    IMPLEMENTED(aclrtSnapShotProcessUnlock),
    IMPLEMENTED(aclrtSnapShotProcessLock),
    IMPLEMENTED(aclmdlRITaskGetParams),
    IMPLEMENTED(aclmdlRITaskGetType),
    IMPLEMENTED(aclmdlRIGetTasksByStream),
    IMPLEMENTED(aclmdlRIGetStreams),
    IMPLEMENTED(aclmdlRIDebugPrint),
    IMPLEMENTED(aclmdlRIUpdate),
    IMPLEMENTED(aclmdlRIAbort),
    IMPLEMENTED(aclrtPersistentTaskClean),
    IMPLEMENTED(aclrtMemMapSelectedLink),
    IMPLEMENTED(aclrtMemMapNoAccess),
    IMPLEMENTED(aclrtReduceAsync),
    IMPLEMENTED(aclrtMallocForTaskScheduler),
    IMPLEMENTED(aclrtMemUceRepair),
    IMPLEMENTED(aclrtGetMemUceInfo),
    IMPLEMENTED(aclrtMemManagedPrefetchBatchAsync),
    IMPLEMENTED(aclrtMemManagedPrefetchAsync),
    IMPLEMENTED(aclrtMemManagedGetAttrs),
    IMPLEMENTED(aclrtMemManagedGetAttr),
    IMPLEMENTED(aclrtMemManagedAdvise),
    IMPLEMENTED(aclrtMemAllocManaged),
    IMPLEMENTED(aclrtMemcpyAsyncWithDesc),
    IMPLEMENTED(aclrtSetMemcpyDesc),
    IMPLEMENTED(aclrtGetMemcpyDescSize),
    IMPLEMENTED(aclrtMemcpyAsyncWithOffset),
    IMPLEMENTED(aclrtQueryEventWaitStatus),
    IMPLEMENTED(aclrtMemcpyAsyncWithCondition),
    IMPLEMENTED(aclrtDeviceL2CacheFlush),
    IMPLEMENTED(aclrtCmoAsyncWithDesc),
    IMPLEMENTED(aclrtCmoSetDesc),
    IMPLEMENTED(aclrtCmoGetDescSize),
    IMPLEMENTED(aclrtCmoWaitBarrier),
    IMPLEMENTED(aclrtCmoAsyncWithBarrier),
    IMPLEMENTED(aclrtCmoAsync),
    IMPLEMENTED(aclFinalizeCallbackUnRegister),
    IMPLEMENTED(aclFinalizeCallbackRegister),
    IMPLEMENTED(aclInitCallbackUnRegister),
    IMPLEMENTED(aclInitCallbackRegister),
    IMPLEMENTED(aclFinalizeReference),
    IMPLEMENTED(aclrtDeviceGetP2PAtomicCapabilities),
    IMPLEMENTED(aclrtDeviceGetHostAtomicCapabilities),
    IMPLEMENTED(aclrtGetDeviceUtilizationRate),
    IMPLEMENTED(aclrtQueryDeviceStatus),
    IMPLEMENTED(aclrtHostMemMapCapabilities),
    IMPLEMENTED(aclrtHostUnregister),
    IMPLEMENTED(aclrtHostGetDevicePointer),
    IMPLEMENTED(aclrtHostRegisterV2),
    IMPLEMENTED(aclrtHostRegister),
    IMPLEMENTED(aclrtSwitchLabelByIndex),
    IMPLEMENTED(aclrtDestroyLabelList),
    IMPLEMENTED(aclrtCreateLabelList),
    IMPLEMENTED(aclrtDestroyLabel),
    IMPLEMENTED(aclrtSetLabel),
    IMPLEMENTED(aclrtCreateLabel),
    IMPLEMENTED(aclrtSwitchStream),
    IMPLEMENTED(aclrtActiveStream),
    IMPLEMENTED(aclmdlRIUnbindStream),
    IMPLEMENTED(aclmdlRIBuildEnd),
    IMPLEMENTED(aclmdlRIEndTask),
    IMPLEMENTED(aclmdlRIBindStream),
    IMPLEMENTED(aclmdlRIBuildBegin),
    IMPLEMENTED(aclrtSetSysParamOpt),
    IMPLEMENTED(aclrtGetSysParamOpt),
    IMPLEMENTED(aclrtCtxSetSysParamOpt),
    IMPLEMENTED(aclrtCtxGetSysParamOpt),
    IMPLEMENTED(aclrtSetOpWaitTimeout),
    IMPLEMENTED(aclrtDeviceSetLimit),
    IMPLEMENTED(aclrtDeviceGetLimit),
    IMPLEMENTED(aclrtGetThreadLastTaskId),
    IMPLEMENTED(aclrtCntNotifyCreate),
    IMPLEMENTED(aclrtCntNotifyDestroy),
    IMPLEMENTED(aclrtCntNotifyRecord),
    IMPLEMENTED(aclrtCntNotifyWaitWithTimeout),
    IMPLEMENTED(aclrtCntNotifyReset),
    IMPLEMENTED(aclrtCntNotifyGetId),
    IMPLEMENTED(aclrtMemExportToShareableHandleV2),
    IMPLEMENTED(aclrtMemImportFromShareableHandleV2),
    IMPLEMENTED(aclrtMemSetPidToShareableHandleV2),
    IMPLEMENTED(aclrtReserveMemAddressNoUCMemory),
    IMPLEMENTED(aclrtMemP2PMap),
    IMPLEMENTED(aclrtMemMapSetLink),
    IMPLEMENTED(aclrtIpcMemImportPidInterServer),
    IMPLEMENTED(aclrtNotifySetImportPidInterServer),
    IMPLEMENTED(aclrtIpcMemSetAttr),
    IMPLEMENTED(aclmdlRICaptureBegin),
    IMPLEMENTED(aclmdlRICaptureGetInfo),
    IMPLEMENTED(aclmdlRICaptureEnd),
    IMPLEMENTED(aclmdlRICaptureThreadExchangeMode),
    IMPLEMENTED(aclmdlRIExecuteAsync),
    IMPLEMENTED(aclmdlRIExecute),
    IMPLEMENTED(aclmdlRIDestroy),
    IMPLEMENTED(aclmdlRIDestroyRegisterCallback),
    IMPLEMENTED(aclmdlRIDestroyUnregisterCallback),
    IMPLEMENTED(aclmdlRISetName),
    IMPLEMENTED(aclmdlRIGetName),
    IMPLEMENTED(aclmdlRIGetId),
    IMPLEMENTED(aclmdlRIDebugJsonPrint),
    IMPLEMENTED(aclrtMemsetD32),
    IMPLEMENTED(aclrtMemsetD32Async),
    IMPLEMENTED(aclrtMallocCached),
    IMPLEMENTED(aclrtFreeWithDevSync),
    IMPLEMENTED(aclrtFreeHostWithDevSync),
    IMPLEMENTED(aclrtMemFlush),
    IMPLEMENTED(aclrtMemInvalidate),
    IMPLEMENTED(aclrtCheckMemType),
    IMPLEMENTED(aclrtGetPrimaryCtxState),
    IMPLEMENTED(aclrtRegStreamStateCallback),
    IMPLEMENTED(aclrtRegDeviceStateCallback),
    IMPLEMENTED(aclrtSetDeviceTaskAbortCallback),
    IMPLEMENTED(aclrtStreamStop),
    IMPLEMENTED(aclrtDeviceTaskAbort),
    IMPLEMENTED(aclrtValueWrite),
    IMPLEMENTED(aclrtValueWait),
    IMPLEMENTED(aclrtMemcpyBatchAsyncV2),
    IMPLEMENTED(aclrtMemcpyBatchAsync),
    IMPLEMENTED(aclrtMemcpyBatchV2),
    IMPLEMENTED(aclrtMemcpyBatch),
    IMPLEMENTED(aclrtResetDeviceResLimit),
    IMPLEMENTED(aclrtSetDeviceResLimit),
    IMPLEMENTED(aclrtGetDeviceResLimit),
    IMPLEMENTED(aclrtGetMemUsageInfo),
    IMPLEMENTED(aclrtMemcpy2dAsync),
    IMPLEMENTED(aclrtMemcpy2d),
    IMPLEMENTED(aclrtAllocatorUnregister),
    IMPLEMENTED(aclrtAllocatorGetByStream),
    IMPLEMENTED(aclrtAllocatorRegister),
    IMPLEMENTED(aclrtAllocatorSetGetAddrFromBlockFuncToDesc),
    IMPLEMENTED(aclrtAllocatorSetAllocAdviseFuncToDesc),
    IMPLEMENTED(aclrtAllocatorSetFreeFuncToDesc),
    IMPLEMENTED(aclrtAllocatorSetAllocFuncToDesc),
    IMPLEMENTED(aclrtAllocatorSetObjToDesc),
    IMPLEMENTED(aclrtAllocatorDestroyDesc),
    IMPLEMENTED(aclrtAllocatorCreateDesc),
    IMPLEMENTED(aclrtRepairError),
    IMPLEMENTED(aclrtGetStreamAttribute),
    IMPLEMENTED(aclrtSetStreamAttribute),
    IMPLEMENTED(aclrtStreamAbort),
    IMPLEMENTED(aclrtSetStreamFailureMode),
    IMPLEMENTED(aclrtGetErrorCodeFromExceptionInfo),
    IMPLEMENTED(aclrtGetDeviceIdFromExceptionInfo),
    IMPLEMENTED(aclrtGetThreadIdFromExceptionInfo),
    IMPLEMENTED(aclrtGetStreamIdFromExceptionInfo),
    IMPLEMENTED(aclrtGetTaskIdFromExceptionInfo),
    IMPLEMENTED(aclrtExceptionInfoCallbackUnregister),
    IMPLEMENTED(aclrtExceptionInfoCallbackRegister),
    IMPLEMENTED(aclrtSetExceptionInfoCallback),
    IMPLEMENTED(aclrtGetErrorVerbose),
    IMPLEMENTED(aclrtMallocWithCfg),
    IMPLEMENTED(aclrtMallocAlign32),
    IMPLEMENTED(aclrtMallocHostWithCfg),
    IMPLEMENTED(aclrtPointerGetAttributes),
    IMPLEMENTED(aclrtLaunchHostFunc),
    IMPLEMENTED(aclrtSubscribeHostFunc),
    IMPLEMENTED(aclrtProcessHostFunc),
    IMPLEMENTED(aclrtUnSubscribeHostFunc),
    IMPLEMENTED(aclrtRecordEventWithFlag),
    IMPLEMENTED(aclrtStreamWaitEventWithFlag),
    IMPLEMENTED(aclrtEventGetTimestamp),
    IMPLEMENTED(aclrtSynchronizeDeviceWithTimeout),
    IMPLEMENTED(aclrtCreateStreamWithConfig),
    IMPLEMENTED(aclrtCreateStreamConfigHandle),
    IMPLEMENTED(aclrtDestroyStreamConfigHandle),
    IMPLEMENTED(aclrtSetStreamConfigOpt),
    IMPLEMENTED(aclrtCreateStreamV2),
    IMPLEMENTED(aclrtGetStreamAvailableNum),
    IMPLEMENTED(aclrtGetEventAvailNum),
    IMPLEMENTED(aclrtStreamGetId),
    IMPLEMENTED(aclrtStreamGetPriority),
    IMPLEMENTED(aclrtStreamGetFlags),
    IMPLEMENTED(aclrtCtxGetCurrentDefaultStream),
    IMPLEMENTED(aclrtGetEventId),
    IMPLEMENTED(aclrtGetSocName),
    IMPLEMENTED(aclGetDeviceCapability),
    IMPLEMENTED(aclsysGetCANNVersion),
    IMPLEMENTED(aclsysGetVersionStr),
    IMPLEMENTED(aclsysGetVersionNum),
    IMPLEMENTED(aclrtGetVersion),
    IMPLEMENTED(aclrtGetDeviceInfo),
    IMPLEMENTED(aclrtGetDeviceCapability),
    IMPLEMENTED(aclrtDeviceGetUuid),
    IMPLEMENTED(aclrtDeviceGetPCIBusId),
    IMPLEMENTED(aclrtDeviceGetByPCIBusId),
    IMPLEMENTED(aclrtGetDevicesTopo),
    IMPLEMENTED(aclrtDevicePeerAccessStatus),
    IMPLEMENTED(aclrtGetLogicDevIdByUserDevId),
    IMPLEMENTED(aclrtGetUserDevIdByLogicDevId),
    IMPLEMENTED(aclrtGetLogicDevIdByPhyDevId),
    IMPLEMENTED(aclrtGetPhyDevIdByLogicDevId),
    IMPLEMENTED(aclrtGetUserDevIdByPhyDevId),
    IMPLEMENTED(aclrtGetPhyDevIdByUserDevId),
    IMPLEMENTED(aclrtDeviceGetStreamPriorityRange),
    IMPLEMENTED(aclFloat16ToFloat),
    IMPLEMENTED(aclFloatToFloat16),
    IMPLEMENTED(aclCreateDataBuffer),
    IMPLEMENTED(aclDestroyDataBuffer),
    IMPLEMENTED(aclUpdateDataBuffer),
    IMPLEMENTED(aclGetDataBufferAddr),
    IMPLEMENTED(aclGetDataBufferSize),
    IMPLEMENTED(aclGetDataBufferSizeV2),
    IMPLEMENTED(aclDataTypeSize),
    IMPLEMENTED(aclAppLog),
    IMPLEMENTED(aclGetCannAttributeList),
    IMPLEMENTED(aclGetCannAttribute),
    IMPLEMENTED(aclrtSetDevice),
    IMPLEMENTED(aclrtResetDevice),
    IMPLEMENTED(aclrtResetDeviceForce),
    IMPLEMENTED(aclrtGetDevice),
    IMPLEMENTED(aclrtGetDeviceCount),
    IMPLEMENTED(aclrtSynchronizeDevice),
    IMPLEMENTED(aclrtDeviceGetBareTgid),
    IMPLEMENTED(aclrtDeviceCanAccessPeer),
    IMPLEMENTED(aclrtDeviceEnablePeerAccess),
    IMPLEMENTED(aclrtDeviceDisablePeerAccess),
    IMPLEMENTED(aclrtCreateContext),
    IMPLEMENTED(aclrtDestroyContext),
    IMPLEMENTED(aclrtSetCurrentContext),
    IMPLEMENTED(aclrtGetCurrentContext),
    IMPLEMENTED(aclrtCreateStream),
    IMPLEMENTED(aclrtDestroyStream),
    IMPLEMENTED(aclrtDestroyStreamForce),
    IMPLEMENTED(aclrtSynchronizeStream),
    IMPLEMENTED(aclrtSynchronizeStreamWithTimeout),
    IMPLEMENTED(aclrtStreamQuery),
    IMPLEMENTED(aclrtStreamWaitEvent),
    IMPLEMENTED(aclrtStreamWaitEventWithTimeout),
    IMPLEMENTED(aclrtSubscribeReport),
    IMPLEMENTED(aclrtLaunchCallback),
    IMPLEMENTED(aclrtProcessReport),
    IMPLEMENTED(aclrtUnSubscribeReport),
    IMPLEMENTED(aclrtCreateEvent),
    IMPLEMENTED(aclrtCreateEventWithFlag),
    IMPLEMENTED(aclrtCreateEventExWithFlag),
    IMPLEMENTED(aclrtDestroyEvent),
    IMPLEMENTED(aclrtRecordEvent),
    IMPLEMENTED(aclrtResetEvent),
    IMPLEMENTED(aclrtQueryEventStatus),
    IMPLEMENTED(aclrtQueryEvent),
    IMPLEMENTED(aclrtSynchronizeEvent),
    IMPLEMENTED(aclrtSynchronizeEventWithTimeout),
    IMPLEMENTED(aclrtEventElapsedTime),
    IMPLEMENTED(aclrtIpcGetEventHandle),
    IMPLEMENTED(aclrtIpcOpenEventHandle),
    IMPLEMENTED(aclrtCreateNotify),
    IMPLEMENTED(aclrtDestroyNotify),
    IMPLEMENTED(aclrtRecordNotify),
    IMPLEMENTED(aclrtWaitAndResetNotify),
    IMPLEMENTED(aclrtGetNotifyId),
    IMPLEMENTED(aclrtNotifyBatchReset),
    IMPLEMENTED(aclrtNotifyGetExportKey),
    IMPLEMENTED(aclrtNotifyImportByKey),
    IMPLEMENTED(aclrtNotifySetImportPid),
    IMPLEMENTED(aclrtMalloc),
    IMPLEMENTED(aclrtFree),
    IMPLEMENTED(aclrtMallocHost),
    IMPLEMENTED(aclrtFreeHost),
    IMPLEMENTED(aclrtGetMemInfo),
    IMPLEMENTED(aclrtMemGetAddressRange),
    IMPLEMENTED(aclrtMemcpy),
    IMPLEMENTED(aclrtMemcpyAsync),
    IMPLEMENTED(aclrtMemset),
    IMPLEMENTED(aclrtMemsetAsync),
    IMPLEMENTED(aclrtReserveMemAddress),
    IMPLEMENTED(aclrtReleaseMemAddress),
    IMPLEMENTED(aclrtMallocPhysical),
    IMPLEMENTED(aclrtFreePhysical),
    IMPLEMENTED(aclrtMapMem),
    IMPLEMENTED(aclrtUnmapMem),
    IMPLEMENTED(aclrtMemSetAccess),
    IMPLEMENTED(aclrtMemGetAccess),
    IMPLEMENTED(aclrtMemGetAllocationGranularity),
    IMPLEMENTED(aclrtMemRetainAllocationHandle),
    IMPLEMENTED(aclrtMemGetAllocationPropertiesFromHandle),
    IMPLEMENTED(aclrtMemExportToShareableHandle),
    IMPLEMENTED(aclrtMemImportFromShareableHandle),
    IMPLEMENTED(aclrtMemSetPidToShareableHandle),
    IMPLEMENTED(aclrtIpcMemGetExportKey),
    IMPLEMENTED(aclrtIpcMemSetImportPid),
    IMPLEMENTED(aclrtIpcMemImportByKey),
    IMPLEMENTED(aclrtIpcMemClose),
};

/* What a stub returns: CANN's failure value for its return type. */
#define FAILS_WITH_CODE       "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", ACL_ERROR_RT_FEATURE_NOT_SUPPORT
#define FAILS_WITH_NULL       "NULL", 0
#define FAILS_WITH_ZERO       "0", 0
#define FAILS_WITH_UINT32_MAX "0xFFFFFFFF", 0xFFFFFFFF
#define RETURNS_NOTHING       "nothing (void)", 0
#define STUB(fn, status, returns) { #fn, ACL_FN_##status, returns, call_##fn }

static const struct acl_stub_function stubs[] = {
    /* acl/acl_base_rt.h */
    /* acl/acl_rt.h */
    STUB(aclrtCheckArchCompatibility, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetArgsFromExceptionInfo, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFuncHandleFromExceptionInfo, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinarySetExceptionCallback, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetTsDevice, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetDeviceSatMode, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetDeviceSatMode, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetHardwareSyncAddr, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetStreamResLimit, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetStreamResLimit, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtResetStreamResLimit, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtUseStreamResInCurrentThread, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtUnuseStreamResInCurrentThread, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetResInCurrentThread, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetOpExecuteTimeOut, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetOpExecuteTimeOutWithMs, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetOpExecuteTimeOutV2, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetOpExecuteTimeout, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetOpTimeOutInterval, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetStreamOverflowSwitch, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetStreamOverflowSwitch, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetOverflowStatus, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtResetOverflowStatus, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtCtxGetFloatOverflowAddr, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFloatOverflowStatus, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtResetFloatOverflowStatus, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtNpuGetFloatOverFlowStatus, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtNpuClearFloatOverFlowStatus, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtProfTrace, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtCacheLastTaskOpInfo, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetSymbolAddress, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetSymbolSize, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtMemcpyFromSymbol, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtMemcpyFromSymbolAsync, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtMemcpyToSymbol, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtMemcpyToSymbolAsync, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtCreateBinary, NOT_SUPPORTED, FAILS_WITH_NULL),
    STUB(aclrtDestroyBinary, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryLoad, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryLoadFromFile, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryLoadFromData, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryUnLoad, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryGetDevAddress, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryGetGlobal, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryGetFunction, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtBinaryGetFunctionByEntry, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtRegisterCpuFunc, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFuncBySymbol, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFunctionAddr, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFunctionSize, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFunctionName, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetFunctionAttribute, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtFunctionGetBinary, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtFunctionGetParamCount, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtFunctionGetParamInfo, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtFunctionGetAvailDynUbufPerBlock, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsGetHandleMemSize, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsGetMemSize, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsInit, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsInitByUserMem, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsAppend, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsAppendPlaceHolder, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsGetPlaceHolderBuffer, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsParaUpdate, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtKernelArgsFinalize, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchKernel, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchKernelV2, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchKernelWithConfig, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchKernelWithHostArgs, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchKernelWithArgsArray, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchSIMTKernelWithArgsArray, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtLaunchSIMTKernelWithHostArgs, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetGroup, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetGroupCount, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtCreateGroupInfo, NOT_SUPPORTED, FAILS_WITH_NULL),
    STUB(aclrtDestroyGroupInfo, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetAllGroupInfo, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetGroupInfoDetail, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtAllocBuf, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtFreeBuf, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetBufData, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetBufDataLen, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetBufDataLen, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetBufUserData, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtSetBufUserData, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtCopyBufRef, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtAppendBufChain, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetBufChainNum, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclrtGetBufFromChain, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlRICaptureTaskGrpBegin, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlRICaptureTaskGrpEnd, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlRICaptureTaskUpdateBegin, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlRICaptureTaskUpdateEnd, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlRIKernelTaskGetAttribute, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlInitDump, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlSetDump, NOT_SUPPORTED, FAILS_WITH_CODE),
    STUB(aclmdlFinalizeDump, NOT_SUPPORTED, FAILS_WITH_CODE),
    /* acl/acl_rt_allocator.h */
};

const struct acl_all_functions ALL_FUNCTIONS = {
    LANGUAGE,
    implemented, sizeof(implemented) / sizeof(implemented[0]),
    stubs, sizeof(stubs) / sizeof(stubs[0]),
};
