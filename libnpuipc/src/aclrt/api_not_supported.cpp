// SPDX-License-Identifier: MIT
// The functions of the acl/ headers that need hardware a mock NPU does not
// model (AI cores and AI CPUs running kernels, their overflow state, dump,
// profiling, data queues): every one is defined, so that a program written
// for CANN links and learns at run time what is missing. Each returns
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000), the code CANN's runtime gives
// for a feature the device lacks, records it as the thread's last error
// ("aclrtFoo: not supported on a mock NPU: <reason> (error 207000)",
// aclGetRecentErrMsg) and logs that one line; the reason is the one of
// Documentation/library.md's table, word for word. Functions that return no
// aclError return CANN's failure value instead (NULL; 0; 0xFFFFFFFF for the
// getters of exception information; nothing) and record and log the same.
// No argument is looked at: none can make one crash.
#include "aclrt/runtime.h"

using namespace npuipc_rt;

// The stubs keep CANN's parameter names, for reading, and use none of them.
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace {

// Through api(), like every function: in a fork child that has not called
// aclInit they too return ACL_ERROR_UNINITIALIZE.
aclError not_supported(const char *name, const char *reason)
{
    auto fn = [reason] {
        return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported on a mock NPU: %s", reason);
    };
    return api(name, fn);
}

// Why a function is not supported: the reasons of library.md's table.
constexpr char kKernels[] = "it has no AI cores or AI CPUs, so it loads and runs no kernels";
constexpr char kTaskGroups[] =
    "a task group holds single-operator (kernel) launches only, as CANN's, and it runs no kernels";
constexpr char kSymbols[] = "device symbols are globals of kernel binaries, and it loads none";
constexpr char kOverflow[] =
    "floating-point overflow and saturation are states of AI cores, which it does not have";
constexpr char kOpTimeout[] = "operator timeouts bound kernels on AI cores, and it runs none";
constexpr char kCores[] = "it has no AI cube or vector cores to group, schedule or limit";
constexpr char kDump[] = "dumps record the inputs and outputs of operators, and it runs none";
constexpr char kProfiling[] = "it produces no profiling data";
constexpr char kMbuf[] =
    "buffer chains (mbufs) carry the data queues (TDT) of AI CPUs, which it does not have";

} // namespace

extern "C" {

// ======== Not yet ========

// Tasks: updates of issued tasks, random numbers.

// Model runtime instances: capture into a model, a captured model's tasks, conditions.

// ======== Not supported on a mock NPU ========

// Task groups of a capture, and their updates: single-operator launches only.
aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)
{ return not_supported(__func__, kTaskGroups); }
aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)
{ return not_supported(__func__, kTaskGroups); }
aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)
{ return not_supported(__func__, kTaskGroups); }
aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)
{ return not_supported(__func__, kTaskGroups); }

// Kernel binaries, functions, arguments and launches (and their exception information).
aclError aclrtCheckArchCompatibility(const char *socVersion, int32_t *canCompatible)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info, void **devArgsPtr,
                                       uint32_t *devArgsLen)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info, aclrtFuncHandle *func)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinarySetExceptionCallback(aclrtBinHandle binHandle,
                                         aclrtOpExceptionCallback callback, void *userData)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetHardwareSyncAddr(void **addr)
{ return not_supported(__func__, kKernels); }
aclrtBinary aclrtCreateBinary(const void *data, size_t dataLen)
{ not_supported(__func__, kKernels); return nullptr; }
aclError aclrtDestroyBinary(aclrtBinary binary)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryLoad(const aclrtBinary binary, aclrtBinHandle *binHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
                                 aclrtBinHandle *binHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryLoadFromData(const void *data, size_t length,
                                 const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryGetDevAddress(const aclrtBinHandle binHandle, void **binAddr, size_t *binSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryGetGlobal(aclrtBinHandle binHandle, const char *name, void **dptr, size_t *size)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                aclrtFuncHandle *funcHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle binHandle, uint64_t funcEntry,
                                       aclrtFuncHandle *funcHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtRegisterCpuFunc(const aclrtBinHandle handle, const char *funcName,
                              const char *kernelName, aclrtFuncHandle *funcHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetFuncBySymbol(const void *symbol, aclrtFuncHandle *funcHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetFunctionAddr(aclrtFuncHandle funcHandle, void **aicAddr, void **aivAddr)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetFunctionSize(aclrtFuncHandle funcHandle, size_t *aicSize, size_t *aivSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetFunctionName(aclrtFuncHandle funcHandle, uint32_t maxLen, char *name)
{ return not_supported(__func__, kKernels); }
aclError aclrtGetFunctionAttribute(aclrtFuncHandle funcHandle, aclrtFuncAttribute attrType,
                                   int64_t *attrValue)
{ return not_supported(__func__, kKernels); }
aclError aclrtFunctionGetBinary(const aclrtFuncHandle funcHandle, aclrtBinHandle *binHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtFunctionGetParamCount(const void *func, size_t *paramCount)
{ return not_supported(__func__, kKernels); }
aclError aclrtFunctionGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset,
                                   size_t *paramSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtFunctionGetAvailDynUbufPerBlock(void *func, uint32_t flags, size_t *dynamicUbufSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsGetHandleMemSize(aclrtFuncHandle funcHandle, size_t *memSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsGetMemSize(aclrtFuncHandle funcHandle, size_t userArgsSize,
                                   size_t *actualArgsSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle, aclrtArgsHandle *argsHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsInitByUserMem(aclrtFuncHandle funcHandle, aclrtArgsHandle argsHandle,
                                      void *userHostMem, size_t actualArgsSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle, void *param, size_t paramSize,
                               aclrtParamHandle *paramHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsAppendPlaceHolder(aclrtArgsHandle argsHandle, aclrtParamHandle *paramHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsGetPlaceHolderBuffer(aclrtArgsHandle argsHandle,
                                             aclrtParamHandle paramHandle, size_t dataSize,
                                             void **bufferAddr)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle,
                                   void *param, size_t paramSize)
{ return not_supported(__func__, kKernels); }
aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData,
                           size_t argsSize, aclrtStream stream)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchKernelV2(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData,
                             size_t argsSize, aclrtLaunchKernelCfg *cfg, aclrtStream stream)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                     aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                     aclrtArgsHandle argsHandle, void *reserve)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                       aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                       void *hostArgs, size_t argsSize,
                                       aclrtPlaceHolderInfo *placeHolderArray,
                                       size_t placeHolderNum)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchKernelWithArgsArray(void *func, uint32_t numBlocks, aclrtStream stream,
                                        aclrtLaunchKernelCfg *cfg, void **args)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchSIMTKernelWithArgsArray(void *func, dim3 gridDim, dim3 blockDim,
                                            size_t dynUbufSize, aclrtStream stream,
                                            aclrtLaunchKernelCfg *cfg, void **args)
{ return not_supported(__func__, kKernels); }
aclError aclrtLaunchSIMTKernelWithHostArgs(void *func, dim3 gridDim, dim3 blockDim,
                                           size_t dynUbufSize, aclrtStream stream,
                                           aclrtLaunchKernelCfg *cfg, void *hostArgs,
                                           size_t argsSize, aclrtPlaceHolderInfo *placeHolderArray,
                                           size_t placeHolderNum)
{ return not_supported(__func__, kKernels); }
aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task, aclrtLaunchKernelAttrId attrId,
                                        aclrtLaunchKernelAttrValue *attrValue)
{ return not_supported(__func__, kKernels); }

// Device symbols of kernel binaries.
aclError aclrtGetSymbolAddress(const void *symbol, void **devPtr)
{ return not_supported(__func__, kSymbols); }
aclError aclrtGetSymbolSize(const void *symbol, size_t *size)
{ return not_supported(__func__, kSymbols); }
aclError aclrtMemcpyFromSymbol(void *dst, size_t dstMax, const void *symbol, size_t count,
                               size_t offset, aclrtMemcpyKind kind)
{ return not_supported(__func__, kSymbols); }
aclError aclrtMemcpyFromSymbolAsync(void *dst, size_t dstMax, const void *symbol, size_t count,
                                    size_t offset, aclrtMemcpyKind kind, aclrtStream stream)
{ return not_supported(__func__, kSymbols); }
aclError aclrtMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                             aclrtMemcpyKind kind)
{ return not_supported(__func__, kSymbols); }
aclError aclrtMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                  aclrtMemcpyKind kind, aclrtStream stream)
{ return not_supported(__func__, kSymbols); }

// AI-core floating-point overflow and saturation.
aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)
{ return not_supported(__func__, kOverflow); }
aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode)
{ return not_supported(__func__, kOverflow); }
aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)
{ return not_supported(__func__, kOverflow); }
aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)
{ return not_supported(__func__, kOverflow); }
aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream)
{ return not_supported(__func__, kOverflow); }
aclError aclrtResetOverflowStatus(aclrtStream stream)
{ return not_supported(__func__, kOverflow); }
aclError aclrtCtxGetFloatOverflowAddr(void **overflowAddr)
{ return not_supported(__func__, kOverflow); }
aclError aclrtGetFloatOverflowStatus(void *outputAddr, uint64_t outputSize, aclrtStream stream)
{ return not_supported(__func__, kOverflow); }
aclError aclrtResetFloatOverflowStatus(aclrtStream stream)
{ return not_supported(__func__, kOverflow); }
aclError aclrtNpuGetFloatOverFlowStatus(void *outputAddr, uint64_t outputSize, uint32_t checkMode,
                                        aclrtStream stream)
{ return not_supported(__func__, kOverflow); }
aclError aclrtNpuClearFloatOverFlowStatus(uint32_t checkMode, aclrtStream stream)
{ return not_supported(__func__, kOverflow); }

// Operator execution timeouts.
aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)
{ return not_supported(__func__, kOpTimeout); }
aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout)
{ return not_supported(__func__, kOpTimeout); }
aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)
{ return not_supported(__func__, kOpTimeout); }
aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs)
{ return not_supported(__func__, kOpTimeout); }
aclError aclrtGetOpTimeOutInterval(uint64_t *interval)
{ return not_supported(__func__, kOpTimeout); }

// AI-core groups, task schedulers and core limits.
aclError aclrtSetTsDevice(aclrtTsId tsId)
{ return not_supported(__func__, kCores); }
aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value)
{ return not_supported(__func__, kCores); }
aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value)
{ return not_supported(__func__, kCores); }
aclError aclrtResetStreamResLimit(aclrtStream stream)
{ return not_supported(__func__, kCores); }
aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)
{ return not_supported(__func__, kCores); }
aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)
{ return not_supported(__func__, kCores); }
aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)
{ return not_supported(__func__, kCores); }
aclError aclrtSetGroup(int32_t groupId)
{ return not_supported(__func__, kCores); }
aclError aclrtGetGroupCount(uint32_t *count)
{ return not_supported(__func__, kCores); }
aclrtGroupInfo *aclrtCreateGroupInfo(void)
{ not_supported(__func__, kCores); return nullptr; }
aclError aclrtDestroyGroupInfo(aclrtGroupInfo *groupInfo)
{ return not_supported(__func__, kCores); }
aclError aclrtGetAllGroupInfo(aclrtGroupInfo *groupInfo)
{ return not_supported(__func__, kCores); }
aclError aclrtGetGroupInfoDetail(const aclrtGroupInfo *groupInfo, int32_t groupIndex,
                                 aclrtGroupAttr attr, void *attrValue, size_t valueLen,
                                 size_t *paramRetSize)
{ return not_supported(__func__, kCores); }

// Dump.
aclError aclmdlInitDump(void)
{ return not_supported(__func__, kDump); }
aclError aclmdlSetDump(const char *dumpCfgPath)
{ return not_supported(__func__, kDump); }
aclError aclmdlFinalizeDump(void)
{ return not_supported(__func__, kDump); }

// Profiling.
aclError aclrtProfTrace(void *userdata, int32_t length, aclrtStream stream)
{ return not_supported(__func__, kProfiling); }
aclError aclrtCacheLastTaskOpInfo(const void *const infoPtr, const size_t infoSize)
{ return not_supported(__func__, kProfiling); }

// Buffer chains (mbufs) of data queues.
aclError aclrtAllocBuf(aclrtMbuf *buf, size_t size)
{ return not_supported(__func__, kMbuf); }
aclError aclrtFreeBuf(aclrtMbuf buf)
{ return not_supported(__func__, kMbuf); }
aclError aclrtGetBufData(const aclrtMbuf buf, void **dataPtr, size_t *size)
{ return not_supported(__func__, kMbuf); }
aclError aclrtGetBufDataLen(aclrtMbuf buf, size_t *len)
{ return not_supported(__func__, kMbuf); }
aclError aclrtSetBufDataLen(aclrtMbuf buf, size_t len)
{ return not_supported(__func__, kMbuf); }
aclError aclrtGetBufUserData(const aclrtMbuf buf, void *dataPtr, size_t size, size_t offset)
{ return not_supported(__func__, kMbuf); }
aclError aclrtSetBufUserData(aclrtMbuf buf, const void *dataPtr, size_t size, size_t offset)
{ return not_supported(__func__, kMbuf); }
aclError aclrtCopyBufRef(const aclrtMbuf buf, aclrtMbuf *newBuf)
{ return not_supported(__func__, kMbuf); }
aclError aclrtAppendBufChain(aclrtMbuf headBuf, aclrtMbuf buf)
{ return not_supported(__func__, kMbuf); }
aclError aclrtGetBufChainNum(aclrtMbuf headBuf, uint32_t *num)
{ return not_supported(__func__, kMbuf); }
aclError aclrtGetBufFromChain(aclrtMbuf headBuf, uint32_t index, aclrtMbuf *buf)
{ return not_supported(__func__, kMbuf); }

} // extern "C"
