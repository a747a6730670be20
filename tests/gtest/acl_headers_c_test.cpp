// SPDX-License-Identifier: MIT
// The acl headers as C code sees them, and what libnpuipc.so exports.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "acl_declarations.h"

extern "C" int acl_headers_c_test_ok(void);
extern "C" int acl_layout_test_ok(void);

TEST(AclHeaders, CompileAsC11WithEveryValueAndPrototypeOfTheReference)
{
    EXPECT_EQ(1, acl_headers_c_test_ok());
}

// acl_layout_test.c: every size, alignment and offset of CANN's structures
// (static assertions; reaching run time means they held).
TEST(AclHeaders, CompileAsC11WithTheLayoutsOfTheReference)
{
    EXPECT_EQ(1, acl_layout_test_ok());
}

TEST(AclHeaders, LibraryExportsOnlyAclAndNpuipcSymbols)
{
    std::string cmd = std::string("nm -D --defined-only ") + NPUIPC_LIBRARY_PATH;
    FILE *nm = popen(cmd.c_str(), "r");
    ASSERT_NE(nullptr, nm);
    char line[1024];
    std::set<std::string> acl;
    int native = 0;
    std::string stray;
    while (fgets(line, sizeof(line), nm)) {
        char type = 0;
        char name[900] = {};
        if (sscanf(line, "%*s %c %899s", &type, name) != 2)
            continue;
        if (type == 'A') // the version node
            continue;
        std::string sym(name);
        sym = sym.substr(0, sym.find('@'));
        if (sym.rfind("acl", 0) == 0) {
            acl.insert(sym);
            continue;
        }
        bool ours = false;
        for (const char *prefix : {"_ZN6npuipc", "_ZNK6npuipc", "_ZTVN6npuipc", "_ZTIN6npuipc",
                                   "_ZTSN6npuipc"})
            ours = ours || sym.rfind(prefix, 0) == 0;
        if (ours)
            native++;
        else
            stray += sym + " ";
    }
    EXPECT_EQ(0, pclose(nm));
    EXPECT_EQ("", stray);
    // Every function the acl/ headers declare (implemented or not), none
    // else, and the native API.
    std::set<std::string> declared;
    for (const acl_test::Declaration &d : acl_test::acl_declarations(ACL_INCLUDE_DIR))
        declared.insert(d.name);
    EXPECT_EQ(397u, declared.size()) // CANN 1.17's acl_rt.h, acl_base_rt.h, acl_rt_allocator.h
        << "functions read from the headers";
    EXPECT_EQ(declared, acl);
    EXPECT_GT(native, 0);
}
