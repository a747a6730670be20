/* SPDX-License-Identifier: MIT */
/*
 * acl/acl_base.h: the base of the aclrt API, as CANN (header version 1.17.0)
 * arranges it: the types, macros, general error codes and base functions of
 * acl/acl_base_rt.h, the (empty) model part acl/acl_base_mdl.h, and the
 * runtime and graph engine error codes.
 */
#ifndef NPUIPC_ACL_ACL_BASE_H
#define NPUIPC_ACL_ACL_BASE_H

#include "acl_base_rt.h"
#include "acl_base_mdl.h"
#include "error_codes/rt_error_codes.h"
#include "error_codes/ge_error_codes.h"

#endif /* NPUIPC_ACL_ACL_BASE_H */
