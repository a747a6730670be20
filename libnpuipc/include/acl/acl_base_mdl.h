/* SPDX-License-Identifier: MIT */
/*
 * acl/acl_base_mdl.h: empty, as CANN's runtime package ships it. The model
 * (aclmdl*) API belongs to another CANN package, which replaces this file;
 * it exists so that acl/acl_base.h includes what CANN's does.
 */
#ifndef NPUIPC_ACL_ACL_BASE_MDL_H
#define NPUIPC_ACL_ACL_BASE_MDL_H

#endif /* NPUIPC_ACL_ACL_BASE_MDL_H */
