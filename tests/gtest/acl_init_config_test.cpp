// SPDX-License-Identifier: MIT
// aclInit's JSON file on a host without devices: strict JSON (anything else
// is ACL_ERROR_PARSE_FILE and initialises nothing), settings npuipc does not
// use ignored, defaultDevice.default_device checked. Setting the default
// device itself is tested in the VM (acl_device_gtest).
#include <acl/acl.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

class AclInitConfigTest : public testing::Test {
protected:
    // aclInit with `text` as its file.
    aclError InitWith(const std::string &text)
    {
        char path[] = "/tmp/acl_init_config_test.XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0)
            return -1;
        bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        close(fd);
        aclError rc = written ? aclInit(path) : -1;
        unlink(path);
        return rc;
    }
};

TEST_F(AclInitConfigTest, ValidDocumentsInitialiseAndUnknownSettingsAreIgnored)
{
    const std::string depth(10000, '[');
    const std::string docs[] = {
        "{}",
        " \n{ }\t",
        "[]",
        "{\"dump\":{\"dump_list\":[{\"model_name\":\"m\"}],\"dump_path\":\"/tmp\"},\"profiler\":null}",
        "{\"defaultDevice\":{}}",
        "{\"defaultDevice\":{\"other\":\"x\"},\"err_msg_mode\":\"1\"}",
        "{\"s\":\"\\u00e9\\n\\\"\",\"n\":[1,-2,3.5e3,true,false,null]}",
        depth + std::string(10000, ']'),
    };
    for (const std::string &doc : docs) {
        EXPECT_EQ(ACL_SUCCESS, InitWith(doc)) << doc.substr(0, 80);
        EXPECT_EQ(ACL_SUCCESS, aclFinalize()) << doc.substr(0, 80);
    }
}

TEST_F(AclInitConfigTest, AnythingButOneJsonDocumentIsParseFileAndInitialisesNothing)
{
    const std::string docs[] = {
        "",
        "   ",
        "{",
        "{\"defaultDevice\":{\"default_device\":\"0\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1,]",
        "{'a':1}",
        "{a:1}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":nul}",
        "{\"a\":\"\\x\"}",
        "{\"a\":\"\x01\"}",
        "{\"a\":\"\xff\"}",
        "{\"a\":\"\\ud800\"}",
        "{} x",
        "{}{}",
        "{\"a\":1} // comment",
        std::string(100000, '['),
        std::string("{\"a\":\"") + '\0' + "\"}",
    };
    for (const std::string &doc : docs) {
        EXPECT_EQ(ACL_ERROR_PARSE_FILE, InitWith(doc)) << doc.substr(0, 80);
        EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize()) << doc.substr(0, 80);
    }
}

TEST_F(AclInitConfigTest, ADefaultDeviceThatIsNoDeviceIdIsInvalidDeviceId)
{
    const std::string values[] = {
        "\"x\"", "\"\"", "\"1x\"", "\"-1\"", "\" 1\"", "-1", "1.5", "true", "null", "{}", "[0]",
        "\"99999\"", "4294967296",
    };
    for (const std::string &value : values) {
        std::string doc = "{\"defaultDevice\":{\"default_device\":" + value + "}}";
        EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, InitWith(doc)) << doc;
        EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize()) << doc;
    }
}

TEST_F(AclInitConfigTest, AFileThatCannotBeReadIsInvalidFile)
{
    EXPECT_EQ(ACL_ERROR_INVALID_FILE, aclInit("/nonexistent/acl_init_config.json"));
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize());
}

} // namespace
