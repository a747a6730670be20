// SPDX-License-Identifier: MIT
// acl_layout_test.c compiled as C++: the layouts are CANN's for C++ code too
// (acl_all_functions_gtest links this; acl_headers_gtest the C version).
#include "acl_layout_test.c"
