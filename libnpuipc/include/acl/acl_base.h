/* SPDX-License-Identifier: MIT */
/*
 * acl/acl_base.h: the base types of the aclrt API as CANN (header version
 * 1.17.0) declares them: aclError, the visibility macro, the general error
 * codes and aclGetRecentErrMsg. The runtime error codes (ACL_ERROR_RT_*) come
 * from acl/error_codes/rt_error_codes.h, included below.
 */
#ifndef NPUIPC_ACL_ACL_BASE_H
#define NPUIPC_ACL_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "error_codes/rt_error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

typedef int aclError;

#define ACL_SUCCESS 0

/* General error codes: the complete list of CANN 1.17. */
static const int ACL_ERROR_NONE                            = 0;
static const int ACL_ERROR_INVALID_PARAM                   = 100000;
static const int ACL_ERROR_UNINITIALIZE                    = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE               = 100002;
static const int ACL_ERROR_INVALID_FILE                    = 100003;
static const int ACL_ERROR_WRITE_FILE                      = 100004;
static const int ACL_ERROR_INVALID_FILE_SIZE               = 100005;
static const int ACL_ERROR_PARSE_FILE                      = 100006;
static const int ACL_ERROR_FILE_MISSING_ATTR               = 100007;
static const int ACL_ERROR_FILE_ATTR_INVALID               = 100008;
static const int ACL_ERROR_INVALID_DUMP_CONFIG             = 100009;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG        = 100010;
static const int ACL_ERROR_INVALID_MODEL_ID                = 100011;
static const int ACL_ERROR_DESERIALIZE_MODEL               = 100012;
static const int ACL_ERROR_PARSE_MODEL                     = 100013;
static const int ACL_ERROR_READ_MODEL_FAILURE              = 100014;
static const int ACL_ERROR_MODEL_SIZE_INVALID              = 100015;
static const int ACL_ERROR_MODEL_MISSING_ATTR              = 100016;
static const int ACL_ERROR_MODEL_INPUT_NOT_MATCH           = 100017;
static const int ACL_ERROR_MODEL_OUTPUT_NOT_MATCH          = 100018;
static const int ACL_ERROR_MODEL_NOT_DYNAMIC               = 100019;
static const int ACL_ERROR_OP_TYPE_NOT_MATCH               = 100020;
static const int ACL_ERROR_OP_INPUT_NOT_MATCH              = 100021;
static const int ACL_ERROR_OP_OUTPUT_NOT_MATCH             = 100022;
static const int ACL_ERROR_OP_ATTR_NOT_MATCH               = 100023;
static const int ACL_ERROR_OP_NOT_FOUND                    = 100024;
static const int ACL_ERROR_OP_LOAD_FAILED                  = 100025;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE           = 100026;
static const int ACL_ERROR_FORMAT_NOT_MATCH                = 100027;
static const int ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED     = 100028;
static const int ACL_ERROR_KERNEL_NOT_FOUND                = 100029;
static const int ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030;
static const int ACL_ERROR_KERNEL_ALREADY_REGISTERED       = 100031;
static const int ACL_ERROR_INVALID_QUEUE_ID                = 100032;
static const int ACL_ERROR_REPEAT_SUBSCRIBE                = 100033;
static const int ACL_ERROR_STREAM_NOT_SUBSCRIBE            = 100034;
static const int ACL_ERROR_THREAD_NOT_SUBSCRIBE            = 100035;
static const int ACL_ERROR_WAIT_CALLBACK_TIMEOUT           = 100036;
static const int ACL_ERROR_REPEAT_FINALIZE                 = 100037;
static const int ACL_ERROR_NOT_STATIC_AIPP                 = 100038;
static const int ACL_ERROR_COMPILING_STUB_MODE             = 100039;
static const int ACL_ERROR_GROUP_NOT_SET                   = 100040;
static const int ACL_ERROR_GROUP_NOT_CREATE                = 100041;
static const int ACL_ERROR_PROF_ALREADY_RUN                = 100042;
static const int ACL_ERROR_PROF_NOT_RUN                    = 100043;
static const int ACL_ERROR_DUMP_ALREADY_RUN                = 100044;
static const int ACL_ERROR_DUMP_NOT_RUN                    = 100045;
static const int ACL_ERROR_PROF_REPEAT_SUBSCRIBE           = 148046;
static const int ACL_ERROR_PROF_API_CONFLICT               = 148047;
static const int ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG  = 148048;
static const int ACL_ERROR_INVALID_OPP_PATH                = 148049;
static const int ACL_ERROR_OP_UNSUPPORTED_DYNAMIC          = 148050;
static const int ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED   = 148051;
static const int ACL_ERROR_UNSUPPORTED_JPEG                = 148052;
static const int ACL_ERROR_INVALID_BUNDLE_MODEL_ID         = 148053;
static const int ACL_ERROR_BAD_ALLOC                       = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT                 = 200001;
static const int ACL_ERROR_INVALID_DEVICE                  = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED        = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH              = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE         = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED             = 200006;
static const int ACL_ERROR_PROF_MODULES_UNSUPPORTED        = 200007;
static const int ACL_ERROR_STORAGE_OVER_LIMIT              = 300000;
static const int ACL_ERROR_INTERNAL_ERROR                  = 500000;
static const int ACL_ERROR_FAILURE                         = 500001;
static const int ACL_ERROR_GE_FAILURE                      = 500002;
static const int ACL_ERROR_RT_FAILURE                      = 500003;
static const int ACL_ERROR_DRV_FAILURE                     = 500004;
static const int ACL_ERROR_PROFILING_FAILURE               = 500005;

/*
 * A readable description of the calling thread's most recent failure of an
 * acl* / aclrt* call.
 */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* NPUIPC_ACL_ACL_BASE_H */
