/* SPDX-License-Identifier: MIT */
/*
 * acl/acl.h: the header CANN programs include. It brings in acl_base.h and
 * acl_rt.h and declares aclInit / aclFinalize. The spellings used by the
 * samples of the interprocess-communication document are not here; see the
 * opt-in acl/acl_seed_compat.h.
 */
#ifndef NPUIPC_ACL_ACL_H
#define NPUIPC_ACL_ACL_H

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CANN version these headers follow: 1.17.0. */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0

/*
 * configPath may be NULL. A JSON config of the form
 * {"defaultDevice":{"default_device":"0"}} makes every thread start with that
 * device set.
 */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* NPUIPC_ACL_ACL_H */
