/* SPDX-License-Identifier: MIT */
/*
 * acl/acl.h: the header CANN programs include. CANN's brings in acl_rt.h
 * (which includes acl_base.h and declares aclInit / aclFinalize) and the
 * operator and model headers acl_op.h and acl_mdl.h, which belong to other
 * CANN packages and which libnpuipc does not provide. The spellings used by
 * the samples of the interprocess-communication document are not here; see
 * the opt-in acl/acl_seed_compat.h.
 */
#ifndef NPUIPC_ACL_ACL_H
#define NPUIPC_ACL_ACL_H

#include "acl_base.h"
#include "acl_rt.h"

#endif /* NPUIPC_ACL_ACL_H */
