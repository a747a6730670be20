// SPDX-License-Identifier: MIT
// The acl headers as C code sees them, and what libnpuipc.so exports.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

extern "C" int acl_headers_c_test_ok(void);

TEST(AclHeaders, CompileAsC11WithEveryValueAndPrototypeOfTheReference)
{
    EXPECT_EQ(1, acl_headers_c_test_ok());
}

TEST(AclHeaders, LibraryExportsOnlyAclAndNpuipcSymbols)
{
    std::string cmd = std::string("nm -D --defined-only ") + NPUIPC_LIBRARY_PATH;
    FILE *nm = popen(cmd.c_str(), "r");
    ASSERT_NE(nullptr, nm);
    char line[1024];
    int acl = 0, native = 0;
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
            acl++;
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
    // Every function of the reference, and the native API.
    EXPECT_EQ(78, acl);
    EXPECT_GT(native, 0);
}
