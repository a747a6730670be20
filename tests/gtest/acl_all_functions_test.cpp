// SPDX-License-Identifier: MIT
// Every function of the acl/ headers: declared, listed once in
// Documentation/library.md's table with its status, exported by
// libnpuipc.so, compiled and linked from C and C++ (acl_all_functions.c),
// and, where not implemented, failing as the table says: CANN's
// ACL_ERROR_RT_FEATURE_NOT_SUPPORT (or its failure value), the last error
// naming the function, one log line. No device is needed.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl_all_functions.h"
#include "acl_declarations.h"

extern "C" int acl_layout_test_ok(void);

namespace {

using namespace acl_test;

// Errors are logged at the default level (3), to standard output, whatever
// the environment says: the test reads the log lines. Set before the
// library's first log.
const int kLogLevel = setenv("ASCEND_GLOBAL_LOG_LEVEL", "3", 1) |
                      unsetenv("ASCEND_MODULE_LOG_LEVEL") |
                      setenv("ASCEND_LOG_PRINT_TO_STDOUT", "1", 1);

const char *status_name(acl_function_status s)
{
    switch (s) {
    case ACL_FN_IMPLEMENTED:
        return "implemented";
    case ACL_FN_NOT_SUPPORTED:
        return "not supported";
    }
    return "?";
}

std::map<std::string, DocRow> documented()
{
    std::vector<std::string> repeated;
    auto rows = doc_table(LIBRARY_DOC, repeated);
    for (const std::string &name : repeated)
        ADD_FAILURE() << name << " has more than one row in " << LIBRARY_DOC;
    return rows;
}

// What standard output received while `fn` ran.
template <typename Fn> std::string stdout_of(Fn &&fn)
{
    std::fflush(stdout);
    FILE *capture = std::tmpfile();
    if (!capture)
        return "(tmpfile failed)";
    int saved = dup(1);
    dup2(fileno(capture), 1);
    fn();
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
    std::string out;
    std::rewind(capture);
    char buf[1024];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), capture)) > 0;)
        out.append(buf, n);
    std::fclose(capture);
    return out;
}

// Each stub of one compilation of acl_all_functions.c fails as the table of
// library.md says its function does.
void check_stubs(const acl_all_functions &all)
{
    ASSERT_EQ(0, kLogLevel);
    auto doc = documented();
    const std::string code = std::to_string(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    for (size_t i = 0; i < all.stub_count; i++) {
        const acl_stub_function &stub = all.stubs[i];
        SCOPED_TRACE(std::string(stub.name) + " called from " + all.language);
        int64_t got = 0;
        std::string log = stdout_of([&] { got = stub.call(); });
        EXPECT_EQ(stub.failure_value, got) << "expected " << stub.failure;

        const char *msg = aclGetRecentErrMsg();
        ASSERT_NE(nullptr, msg);
        auto row = doc.find(stub.name);
        std::string expected = std::string(stub.name) + ": not supported on a mock NPU: " +
                               (row == doc.end() ? std::string("(no row)") : row->second.notes);
        expected += " (error " + code + ")";
        EXPECT_EQ(expected, msg);
        // One line, naming the function, with the message.
        EXPECT_EQ("[npuipc] ERROR " + expected + "\n", log);
    }
}

} // namespace

// a. The headers' functions are the rows of library.md's table, each once,
// with its header and one of the two statuses; a function not supported
// says why.
TEST(AclAllFunctions, DocumentationListsEveryDeclaredFunctionOnce)
{
    size_t visibility = 0;
    auto declared = acl_declarations(ACL_INCLUDE_DIR, &visibility);
    ASSERT_FALSE(declared.empty());
    EXPECT_EQ(visibility, declared.size()) << "ACL_FUNC_VISIBILITY lines versus declarations read";
    std::set<std::string> names;
    for (const Declaration &d : declared)
        EXPECT_TRUE(names.insert(d.name).second) << d.name << " is declared twice";

    auto doc = documented();
    for (const Declaration &d : declared) {
        auto row = doc.find(d.name);
        if (row == doc.end()) {
            ADD_FAILURE() << d.name << " (" << d.header << ") has no row in " << LIBRARY_DOC;
            continue;
        }
        const DocRow &r = row->second;
        EXPECT_EQ(d.header, r.header) << d.name << ", line " << r.line;
        bool known = r.status == "implemented" || r.status == "not supported";
        EXPECT_TRUE(known) << d.name << ", line " << r.line << ": status \"" << r.status << "\"";
        if (r.status == "not supported") {
            EXPECT_FALSE(r.notes.empty()) << d.name << ", line " << r.line << ": no reason";
        }
    }
    for (const auto &[name, r] : doc)
        EXPECT_TRUE(names.count(name)) << LIBRARY_DOC << ", line " << r.line << ": " << name
                                       << " is declared by no header";
}

// b. libnpuipc.so exports each of them.
TEST(AclAllFunctions, LibraryExportsEveryDeclaredFunction)
{
    void *lib = dlopen(NPUIPC_LIBRARY_PATH, RTLD_NOW);
    ASSERT_NE(nullptr, lib) << dlerror();
    for (const Declaration &d : acl_declarations(ACL_INCLUDE_DIR))
        EXPECT_NE(nullptr, dlsym(lib, d.name.c_str())) << d.name << " is not exported";
    dlclose(lib);
}

// c. acl_all_functions.c, compiled as C and as C++, names every declared
// function once, as implemented or as a stub, with library.md's status.
TEST(AclAllFunctions, CAndCxxProgramsReferEveryDeclaredFunctionWithItsStatus)
{
    std::set<std::string> declared;
    for (const Declaration &d : acl_declarations(ACL_INCLUDE_DIR))
        declared.insert(d.name);
    auto doc = documented();
    for (const acl_all_functions *all : {&acl_all_functions_c, &acl_all_functions_cxx}) {
        SCOPED_TRACE(all->language);
        std::map<std::string, acl_function_status> seen;
        for (size_t i = 0; i < all->implemented_count; i++) {
            EXPECT_NE(nullptr, all->implemented[i].address) << all->implemented[i].name;
            EXPECT_TRUE(seen.emplace(all->implemented[i].name, ACL_FN_IMPLEMENTED).second)
                << all->implemented[i].name << " is listed twice";
        }
        for (size_t i = 0; i < all->stub_count; i++)
            EXPECT_TRUE(seen.emplace(all->stubs[i].name, all->stubs[i].status).second)
                << all->stubs[i].name << " is listed twice";
        for (const std::string &name : declared)
            EXPECT_TRUE(seen.count(name)) << name << " is missing from acl_all_functions.c";
        for (const auto &[name, status] : seen) {
            EXPECT_TRUE(declared.count(name)) << name << " is declared by no header";
            auto row = doc.find(name);
            if (row != doc.end()) {
                EXPECT_EQ(row->second.status, status_name(status))
                    << name << ": library.md's line " << row->second.line
                    << " versus acl_all_functions.c";
            }
        }
    }
}

TEST(AclAllFunctions, StubsFailAsDocumentedFromC)
{
    check_stubs(acl_all_functions_c);
}

TEST(AclAllFunctions, StubsFailAsDocumentedFromCxx)
{
    check_stubs(acl_all_functions_cxx);
}

TEST(AclAllFunctions, LayoutsAreCannsInCxx)
{
    EXPECT_EQ(1, acl_layout_test_ok());
}
