/* SPDX-License-Identifier: MIT */
/*
 * acl/acl_seed_compat.h: OPT-IN compatibility with the spellings used by the
 * sample code of the interprocess-communication document ("the seed"). No
 * CANN header declares these names; this header exists only so that the
 * seed's samples build unchanged, and acl/acl.h does not include it. Real
 * code should use the real names on the right:
 *
 *   aclrtNotifyCreate(&notify)          aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT)
 *   aclrtNotifyDestroy(notify)          aclrtDestroyNotify(notify)
 *   aclrtNotifyRecord(notify, stream)   aclrtRecordNotify(notify, stream)
 *   aclrtNotifyWait(notify, stream)     aclrtWaitAndResetNotify(notify, stream, 0)  (0: wait forever)
 *   aclrtEventRecord(event, stream)     aclrtRecordEvent(event, stream)
 *   aclrtSynchonizeStream(stream)       aclrtSynchronizeStream(stream)  (the seed's typo)
 *   aclrtMalloc(&ptr, size)  (C++)      aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST)
 *
 * They are static inline functions, not macros, so they behave as functions
 * in C and C++ and their address can be taken.
 */
#ifndef NPUIPC_ACL_ACL_SEED_COMPAT_H
#define NPUIPC_ACL_ACL_SEED_COMPAT_H

#include <stddef.h>

#include "acl.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline aclError aclrtNotifyCreate(aclrtNotify *notify)
{
    return aclrtCreateNotify(notify, ACL_NOTIFY_DEFAULT);
}

static inline aclError aclrtNotifyDestroy(aclrtNotify notify)
{
    return aclrtDestroyNotify(notify);
}

static inline aclError aclrtNotifyRecord(aclrtNotify notify, aclrtStream stream)
{
    return aclrtRecordNotify(notify, stream);
}

static inline aclError aclrtNotifyWait(aclrtNotify notify, aclrtStream stream)
{
    return aclrtWaitAndResetNotify(notify, stream, 0);
}

static inline aclError aclrtEventRecord(aclrtEvent event, aclrtStream stream)
{
    return aclrtRecordEvent(event, stream);
}

static inline aclError aclrtSynchonizeStream(aclrtStream stream)
{
    return aclrtSynchronizeStream(stream);
}

#ifdef __cplusplus
}

/* The seed calls aclrtMalloc without a policy; C++ only (an overload). */
inline aclError aclrtMalloc(void **devPtr, size_t size)
{
    return aclrtMalloc(devPtr, size, ACL_MEM_MALLOC_HUGE_FIRST);
}
#endif

#endif /* NPUIPC_ACL_ACL_SEED_COMPAT_H */
