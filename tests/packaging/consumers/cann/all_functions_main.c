/* SPDX-License-Identifier: MIT */
/*
 * Links acl_all_functions.c, which references every function the acl/
 * headers declare, against the installed CANN root: each declaration
 * compiles and links there. Built once as C and once as C++.
 */
#include "acl_all_functions.h"

#ifdef __cplusplus
#define ALL_FUNCTIONS acl_all_functions_cxx
#else
#define ALL_FUNCTIONS acl_all_functions_c
#endif

int main(void)
{
    return ALL_FUNCTIONS.implemented_count + ALL_FUNCTIONS.stub_count > 0 ? 0 : 1;
}
