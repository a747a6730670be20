// SPDX-License-Identifier: MIT
// The callbacks CANN's components hook into aclInit and aclFinalize, and
// aclInit's reference count (aclrt_device(3)), on a host without devices:
// CANN's order of component types, its codes, failures that leave the
// runtime as it was.
#include <acl/acl.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// What the callbacks saw, in order.
std::vector<std::string> calls;
aclError init_result = ACL_SUCCESS;
aclError finalize_result = ACL_SUCCESS;

aclError on_init(const char *configStr, size_t len, void *userData)
{
    calls.push_back(std::string("init ") + static_cast<const char *>(userData) + " " + std::string(configStr, len));
    return init_result;
}

aclError on_init_too(const char *configStr, size_t len, void *userData)
{
    return on_init(configStr, len, userData);
}

aclError on_finalize(void *userData)
{
    calls.push_back(std::string("finalize ") + static_cast<const char *>(userData));
    return finalize_result;
}

aclError on_finalize_too(void *userData)
{
    return on_finalize(userData);
}

char kModel[] = "model", kExecutor[] = "executor", kCompiler[] = "compiler", kDvpp[] = "dvpp", kOther1[] = "other1",
     kOther2[] = "other2";

// An init callback that registers a finalize callback: callbacks may call
// the runtime.
aclError registers_a_finalize_callback(const char *, size_t, void *)
{
    calls.push_back("init registers");
    return aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, kOther2);
}

class AclInitCallbacksTest : public testing::Test {
protected:
    void SetUp() override
    {
        calls.clear();
        init_result = ACL_SUCCESS;
        finalize_result = ACL_SUCCESS;
        char path[] = "/tmp/acl_init_callbacks_test.XXXXXX";
        int fd = mkstemp(path);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(2, write(fd, "{}", 2));
        close(fd);
        config_ = path;
    }
    void TearDown() override
    {
        // Whatever a test left: every registration goes, the runtime ends.
        init_result = ACL_SUCCESS;
        finalize_result = ACL_SUCCESS;
        for (aclRegisterCallbackType type : kTypes)
            for (aclInitCallbackFunc fn : {on_init, on_init_too, registers_a_finalize_callback})
                while (aclInitCallbackUnRegister(type, fn) == ACL_SUCCESS) {
                }
        for (aclRegisterCallbackType type : kTypes)
            for (aclFinalizeCallbackFunc fn : {on_finalize, on_finalize_too})
                while (aclFinalizeCallbackUnRegister(type, fn) == ACL_SUCCESS) {
                }
        (void)aclFinalize();
        unlink(config_.c_str());
    }
    static constexpr aclRegisterCallbackType kTypes[] = {
        ACL_REG_TYPE_ACL_MODEL,      ACL_REG_TYPE_ACL_OP_EXECUTOR, ACL_REG_TYPE_ACL_OP_CBLAS,
        ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_TDT_CHANNEL, ACL_REG_TYPE_ACL_TDT_QUEUE,
        ACL_REG_TYPE_ACL_DVPP,       ACL_REG_TYPE_ACL_RETR,        ACL_REG_TYPE_OTHER,
    };
    std::string config_;
};

constexpr aclRegisterCallbackType AclInitCallbacksTest::kTypes[];

TEST_F(AclInitCallbacksTest, InitCallbacksRunByComponentTypeInCANNsOrderWithTheFilesText)
{
    // Registered out of order; the op compiler's is never an init step.
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init, kOther1));
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_init, kDvpp));
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init_too, kOther2));
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_ACL_OP_EXECUTOR, on_init, kExecutor));
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init, kModel));
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_ACL_OP_COMPILER, on_init, kCompiler));
    ASSERT_EQ(ACL_SUCCESS, aclInit(config_.c_str()));
    EXPECT_EQ((std::vector<std::string>{"init model {}", "init executor {}", "init dvpp {}", "init other1 {}",
                                        "init other2 {}"}),
              calls);
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());

    // Without a file, the op executor's is skipped and the text is empty.
    calls.clear();
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    EXPECT_EQ((std::vector<std::string>{"init model ", "init dvpp ", "init other1 ", "init other2 "}), calls);
}

TEST_F(AclInitCallbacksTest, FinalizeCallbacksRunByComponentTypeInCANNsOrderAtTheLastFinalize)
{
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, kOther1));
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize, kDvpp));
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize, kModel));
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_OP_COMPILER, on_finalize, kCompiler));
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_OP_EXECUTOR, on_finalize, kExecutor));
    ASSERT_EQ(ACL_SUCCESS, aclInit(config_.c_str()));
    EXPECT_TRUE(calls.empty());
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    const std::vector<std::string> order{"finalize compiler", "finalize model", "finalize dvpp", "finalize other1"};
    EXPECT_EQ(order, calls);

    // Through references: only the last one finalizes.
    calls.clear();
    ASSERT_EQ(ACL_SUCCESS, aclInit(config_.c_str()));
    ASSERT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit(config_.c_str()));
    uint64_t references = 99;
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeReference(&references));
    EXPECT_EQ(1u, references);
    EXPECT_TRUE(calls.empty());
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeReference(&references));
    EXPECT_EQ(0u, references);
    EXPECT_EQ(order, calls);
}

TEST_F(AclInitCallbacksTest, AFailingInitCallbackFailsAclInitWithItsCodeAndInitialisesNothing)
{
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init, kModel));
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init, kOther1));
    init_result = ACL_ERROR_RT_PARAM_INVALID;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclInit(config_.c_str()));
    EXPECT_EQ((std::vector<std::string>{"init model {}"}), calls); // the first failure stops it
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtGetLastError(ACL_RT_THREAD_LEVEL));
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize());
    uint64_t references = 99;
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalizeReference(&references));
    EXPECT_EQ(0u, references);

    // Not counted as an aclInit: the next one initialises.
    init_result = ACL_SUCCESS;
    calls.clear();
    EXPECT_EQ(ACL_SUCCESS, aclInit(config_.c_str()));
    EXPECT_EQ((std::vector<std::string>{"init model {}", "init other1 {}"}), calls);
}

TEST_F(AclInitCallbacksTest, AFailingFinalizeCallbackLeavesTheRuntimeInitialisedForAnotherTry)
{
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize, kModel));
    ASSERT_EQ(ACL_SUCCESS, aclInit(config_.c_str()));
    finalize_result = ACL_ERROR_FAILURE;
    EXPECT_EQ(ACL_ERROR_FAILURE, aclFinalize());
    uint64_t references = 99;
    EXPECT_EQ(ACL_ERROR_FAILURE, aclFinalizeReference(&references));
    EXPECT_EQ(1u, references);
    EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit(config_.c_str()));

    finalize_result = ACL_SUCCESS;
    EXPECT_EQ(ACL_SUCCESS, aclFinalize()); // every reference at once
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize());
    EXPECT_EQ((std::vector<std::string>{"finalize model", "finalize model", "finalize model"}), calls);
}

TEST_F(AclInitCallbacksTest, AnInitCallbackRegisteredAfterAclInitRunsAtOnceAndStaysWhateverItReturns)
{
    ASSERT_EQ(ACL_SUCCESS, aclInit(config_.c_str()));
    init_result = ACL_ERROR_FAILURE;
    EXPECT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init, kOther1));
    EXPECT_EQ((std::vector<std::string>{"init other1 {}"}), calls);
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    // Before the next aclInit it waits for it.
    init_result = ACL_SUCCESS;
    calls.clear();
    EXPECT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init_too, kOther2));
    EXPECT_TRUE(calls.empty());
    EXPECT_EQ(ACL_SUCCESS, aclInit(nullptr));
    EXPECT_EQ((std::vector<std::string>{"init other1 ", "init other2 "}), calls);
}

TEST_F(AclInitCallbacksTest, RegistrationErrorsAreCANNs)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, nullptr, kOther1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, nullptr, kOther1));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, nullptr));

    // One callback per CANN component type, even another function.
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init, kModel));
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init_too, kModel));
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize, kDvpp));
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize, kDvpp));

    // Unregistering: by function under its type only.
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init_too));
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init));
    EXPECT_EQ(ACL_SUCCESS, aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init));
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init));
    EXPECT_EQ(ACL_SUCCESS, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize));
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize));

    // ACL_REG_TYPE_OTHER takes any number, one function twice included,
    // and runs each registration.
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, kOther1));
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, kOther2));
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    EXPECT_EQ((std::vector<std::string>{"finalize other1", "finalize other2"}), calls);
    EXPECT_EQ(ACL_SUCCESS, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, on_finalize));
    EXPECT_EQ(ACL_SUCCESS, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, on_finalize));
    EXPECT_EQ(ACL_ERROR_INTERNAL_ERROR, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, on_finalize));
}

TEST_F(AclInitCallbacksTest, EveryAclInitIsCountedAndOnlyTheLastReferenceFinalizes)
{
    ASSERT_EQ(ACL_SUCCESS, aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, kOther1));
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit(nullptr));
    EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, aclInit("/nonexistent/file/not/read"));
    uint64_t references = 99;
    EXPECT_EQ(ACL_SUCCESS, aclFinalizeReference(&references));
    EXPECT_EQ(2u, references);
    EXPECT_EQ(ACL_SUCCESS, aclFinalizeReference(nullptr));
    EXPECT_TRUE(calls.empty());
    EXPECT_EQ(ACL_SUCCESS, aclFinalizeReference(&references));
    EXPECT_EQ(0u, references);
    EXPECT_EQ((std::vector<std::string>{"finalize other1"}), calls);
    references = 99;
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalizeReference(&references));
    EXPECT_EQ(0u, references);
    EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, aclFinalize());
    EXPECT_EQ((std::vector<std::string>{"finalize other1"}), calls);
}

TEST_F(AclInitCallbacksTest, ACallbackMayRegisterCallbacksItself)
{
    ASSERT_EQ(ACL_SUCCESS, aclInitCallbackRegister(ACL_REG_TYPE_OTHER, registers_a_finalize_callback, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclInit(nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclFinalize());
    EXPECT_EQ((std::vector<std::string>{"init registers", "finalize other2"}), calls);
}

} // namespace
