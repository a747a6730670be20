/* SPDX-License-Identifier: MIT */
/*
 * The tables of acl_all_functions.c, compiled once as C (acl_all_functions_c)
 * and once as C++ (acl_all_functions_cxx), for acl_all_functions_test.cpp.
 */
#ifndef NPUIPC_TESTS_ACL_ALL_FUNCTIONS_H
#define NPUIPC_TESTS_ACL_ALL_FUNCTIONS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The statuses of Documentation/library.md's table. */
enum acl_function_status {
    ACL_FN_IMPLEMENTED = 1,
    ACL_FN_NOT_SUPPORTED, /* "not supported" (on a mock NPU) */
};

struct acl_implemented_function {
    const char *name;
    void (*address)(void);
};

/* A function libnpuipc defines only to fail. */
struct acl_stub_function {
    const char *name;
    enum acl_function_status status;
    const char *failure;     /* what it returns, as CANN documents it */
    int64_t failure_value;   /* the same, as call() reports it */
    int64_t (*call)(void);   /* calls it with zero and NULL arguments */
};

struct acl_all_functions {
    const char *language;
    const struct acl_implemented_function *implemented;
    size_t implemented_count;
    const struct acl_stub_function *stubs;
    size_t stub_count;
};

extern const struct acl_all_functions acl_all_functions_c;
extern const struct acl_all_functions acl_all_functions_cxx;

#ifdef __cplusplus
}
#endif

#endif /* NPUIPC_TESTS_ACL_ALL_FUNCTIONS_H */
