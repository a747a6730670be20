// SPDX-License-Identifier: MIT
// acl_all_functions.c compiled as C++: every declaration of the acl/ headers
// compiles and links from C++ too (its tables are acl_all_functions_cxx).
#include "acl_all_functions.c"
