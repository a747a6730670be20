// SPDX-License-Identifier: MIT
// The host-only helpers of acl_base_rt.h (aclrt_host(3)): data buffers, data
// type sizes, float16 conversions and the application log, with the results
// CANN's runtime gives. No device, no aclInit.
#include <acl/acl.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

// aclGetDataBufferSize is deprecated, as in CANN, and tested all the same.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

uint32_t FloatBits(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return bits;
}

float BitsFloat(uint32_t bits)
{
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

std::string RecentError()
{
    const char *msg = aclGetRecentErrMsg();
    return msg ? msg : "";
}

TEST(AclDataBufferTest, CreateTakesAnyDataAndSizeAndTheGettersReturnThem)
{
    char bytes[16];
    aclDataBuffer *b = aclCreateDataBuffer(bytes, sizeof(bytes));
    ASSERT_NE(nullptr, b);
    EXPECT_EQ(static_cast<void *>(bytes), aclGetDataBufferAddr(b));
    EXPECT_EQ(sizeof(bytes), aclGetDataBufferSizeV2(b));
    EXPECT_EQ(sizeof(bytes), aclGetDataBufferSize(b));
    EXPECT_EQ(ACL_SUCCESS, aclDestroyDataBuffer(b));

    // As CANN: NULL data, with or without a size, makes a buffer too.
    aclDataBuffer *empty = aclCreateDataBuffer(nullptr, 0);
    aclDataBuffer *sized = aclCreateDataBuffer(nullptr, 4096);
    ASSERT_NE(nullptr, empty);
    ASSERT_NE(nullptr, sized);
    EXPECT_NE(empty, sized);
    EXPECT_EQ(nullptr, aclGetDataBufferAddr(sized));
    EXPECT_EQ(4096u, aclGetDataBufferSizeV2(sized));
    EXPECT_EQ(0u, aclGetDataBufferSizeV2(empty));
    EXPECT_EQ(ACL_SUCCESS, aclDestroyDataBuffer(empty));
    EXPECT_EQ(ACL_SUCCESS, aclDestroyDataBuffer(sized));
}

TEST(AclDataBufferTest, TheDeprecatedSizeGetterReturnsTheLow32Bits)
{
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, (size_t(1) << 32) + 16);
    ASSERT_NE(nullptr, b);
    EXPECT_EQ(16u, aclGetDataBufferSize(b));
    EXPECT_EQ((size_t(1) << 32) + 16, aclGetDataBufferSizeV2(b));
    EXPECT_EQ(ACL_SUCCESS, aclUpdateDataBuffer(b, nullptr, size_t(1) << 32));
    EXPECT_EQ(0u, aclGetDataBufferSize(b));
    EXPECT_EQ(ACL_SUCCESS, aclDestroyDataBuffer(b));
}

TEST(AclDataBufferTest, UpdateReplacesDataAndSizeAndLeavesTheOldMemoryAlone)
{
    char first[8], second[32];
    std::memset(first, 'a', sizeof(first));
    aclDataBuffer *b = aclCreateDataBuffer(first, sizeof(first));
    ASSERT_NE(nullptr, b);
    EXPECT_EQ(ACL_SUCCESS, aclUpdateDataBuffer(b, second, sizeof(second)));
    EXPECT_EQ(static_cast<void *>(second), aclGetDataBufferAddr(b));
    EXPECT_EQ(sizeof(second), aclGetDataBufferSizeV2(b));
    EXPECT_EQ(ACL_SUCCESS, aclUpdateDataBuffer(b, nullptr, 0));
    EXPECT_EQ(nullptr, aclGetDataBufferAddr(b));
    EXPECT_EQ(0u, aclGetDataBufferSizeV2(b));
    EXPECT_EQ(ACL_SUCCESS, aclDestroyDataBuffer(b));
    EXPECT_EQ(std::string(8, 'a'), std::string(first, sizeof(first)));
}

TEST(AclDataBufferTest, NullIsInvalidParamForDestroyAndUpdateAndZeroForTheGetters)
{
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclDestroyDataBuffer(nullptr));
    EXPECT_NE(std::string::npos, RecentError().find("aclDestroyDataBuffer")) << RecentError();
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclUpdateDataBuffer(nullptr, nullptr, 0));
    EXPECT_NE(std::string::npos, RecentError().find("aclUpdateDataBuffer")) << RecentError();
    EXPECT_EQ(nullptr, aclGetDataBufferAddr(nullptr));
    EXPECT_EQ(0u, aclGetDataBufferSize(nullptr));
    EXPECT_EQ(0u, aclGetDataBufferSizeV2(nullptr));
}

// What CANN would dereference or free is refused: a destroyed buffer, one
// destroyed twice, and a pointer that never was a buffer.
TEST(AclDataBufferTest, BuffersNotMadeOrAlreadyDestroyedAreRefused)
{
    char bytes[64] = {};
    aclDataBuffer *b = aclCreateDataBuffer(bytes, sizeof(bytes));
    ASSERT_NE(nullptr, b);
    ASSERT_EQ(ACL_SUCCESS, aclDestroyDataBuffer(b));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclDestroyDataBuffer(b));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclUpdateDataBuffer(b, bytes, 1));
    EXPECT_EQ(nullptr, aclGetDataBufferAddr(b));
    EXPECT_EQ(0u, aclGetDataBufferSizeV2(b));

    auto *never = reinterpret_cast<aclDataBuffer *>(bytes);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclDestroyDataBuffer(never));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclUpdateDataBuffer(never, bytes, 1));
    EXPECT_EQ(nullptr, aclGetDataBufferAddr(never));
    EXPECT_NE(std::string::npos, RecentError().find("aclGetDataBufferAddr")) << RecentError();
    EXPECT_EQ(0u, aclGetDataBufferSize(never));
    EXPECT_EQ(0u, aclGetDataBufferSizeV2(never));
    EXPECT_EQ(std::string(64, '\0'), std::string(bytes, sizeof(bytes)));
}

TEST(AclDataTypeSizeTest, EveryTypeHasCannsSize)
{
    const struct {
        int type;
        size_t size;
    } sizes[] = {
        {ACL_DT_UNDEFINED, 0}, {ACL_FLOAT, 4},       {ACL_FLOAT16, 2},       {ACL_INT8, 1},
        {ACL_INT32, 4},        {ACL_UINT8, 1},       {ACL_INT16, 2},         {ACL_UINT16, 2},
        {ACL_UINT32, 4},       {ACL_INT64, 8},       {ACL_UINT64, 8},        {ACL_DOUBLE, 8},
        {ACL_BOOL, 1},         {ACL_STRING, 0},      {ACL_COMPLEX64, 8},     {ACL_COMPLEX128, 16},
        {ACL_BF16, 2},         {ACL_INT4, 1},        {ACL_UINT1, 1},         {ACL_COMPLEX32, 4},
        {ACL_HIFLOAT8, 1},     {ACL_FLOAT8_E5M2, 1}, {ACL_FLOAT8_E4M3FN, 1}, {ACL_FLOAT8_E8M0, 1},
        // CANN's runtime has no case for these and answers its default, 8.
        {ACL_FLOAT6_E3M2, 8},  {ACL_FLOAT6_E2M3, 8}, {ACL_FLOAT4_E2M1, 8},   {ACL_FLOAT4_E1M2, 8},
        // Values no type has: the default too.
        {5, 8},                {14, 8},              {42, 8},                {-2, 8},
    };
    for (const auto &t : sizes)
        EXPECT_EQ(t.size, aclDataTypeSize(static_cast<aclDataType>(t.type))) << "type " << t.type;
}

TEST(AclFloat16Test, KnownValuesConvertBothWays)
{
    const struct {
        float f;
        aclFloat16 h;
    } exact[] = {
        {0.0f, 0x0000},     {-0.0f, 0x8000},     {1.0f, 0x3C00},          {-2.0f, 0xC000},
        {0.5f, 0x3800},     {65504.0f, 0x7BFF},  {-65504.0f, 0xFBFF},     {6.103515625e-05f, 0x0400},
        {5.9604645e-08f, 0x0001}, {6.0975552e-05f, 0x03FF}, {-5.9604645e-08f, 0x8001},
    };
    for (const auto &v : exact) {
        EXPECT_EQ(v.h, aclFloatToFloat16(v.f)) << v.f;
        EXPECT_EQ(FloatBits(v.f), FloatBits(aclFloat16ToFloat(v.h))) << std::hex << v.h;
    }
    EXPECT_EQ(0x2E66, aclFloatToFloat16(0.1f));
}

TEST(AclFloat16Test, FloatToHalfRoundsToNearestWithTiesToEven)
{
    EXPECT_EQ(0x3C00, aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11)));     // tie: even stays
    EXPECT_EQ(0x3C02, aclFloatToFloat16(1.0f + 3 * std::ldexp(1.0f, -11))); // tie: odd goes up
    EXPECT_EQ(0x3C01, aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)));
    EXPECT_EQ(0x0000, aclFloatToFloat16(std::ldexp(1.0f, -25)));            // tie to 0
    EXPECT_EQ(0x0001, aclFloatToFloat16(1.5f * std::ldexp(1.0f, -25)));
    EXPECT_EQ(0x0002, aclFloatToFloat16(2.5f * std::ldexp(1.0f, -24)));     // tie: even
    EXPECT_EQ(0x8000, aclFloatToFloat16(-std::ldexp(1.0f, -30)));
    EXPECT_EQ(0x0400, aclFloatToFloat16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26))); // up to the smallest normal

    // Against the nearest finite half, for floats all over the range.
    std::mt19937 rng(1234);
    std::uniform_int_distribution<uint32_t> any;
    for (int i = 0; i < 200000; i++) {
        float f = BitsFloat(any(rng));
        if (!std::isfinite(f) || std::fabs(f) >= 65504.0f)
            continue;
        aclFloat16 h = aclFloatToFloat16(f);
        double got = aclFloat16ToFloat(h);
        double err = std::fabs(got - f);
        for (int step : {-1, 1}) {
            aclFloat16 other = static_cast<aclFloat16>(h + step);
            if ((other & 0x7C00) == 0x7C00)
                continue; // an infinity or NaN, or across zero from -0
            double alt = std::fabs(double(aclFloat16ToFloat(other)) - f);
            ASSERT_TRUE(err < alt || (err == alt && (h & 1) == 0))
                << f << " gave " << std::hex << h << ", but " << other << " is nearer or an even tie";
        }
    }
}

// CANN saturates: what IEEE makes infinite or NaN is the largest finite half
// of its sign, and the half encodings of infinity and NaN read back as
// numbers of 2^16 and above.
TEST(AclFloat16Test, OverflowInfinityAndNanSaturateAsInCann)
{
    EXPECT_EQ(0x7BFF, aclFloatToFloat16(65519.0f));
    EXPECT_EQ(0x7BFF, aclFloatToFloat16(65520.0f));
    EXPECT_EQ(0x7BFF, aclFloatToFloat16(1e10f));
    EXPECT_EQ(0xFBFF, aclFloatToFloat16(-1e10f));
    EXPECT_EQ(0x7BFF, aclFloatToFloat16(INFINITY));
    EXPECT_EQ(0xFBFF, aclFloatToFloat16(-INFINITY));
    EXPECT_EQ(0x7BFF, aclFloatToFloat16(BitsFloat(0x7FC00000)));
    EXPECT_EQ(0xFBFF, aclFloatToFloat16(BitsFloat(0xFFC00000)));
    EXPECT_EQ(65536.0f, aclFloat16ToFloat(0x7C00));
    EXPECT_EQ(-65536.0f, aclFloat16ToFloat(0xFC00));
    EXPECT_EQ(98304.0f, aclFloat16ToFloat(0x7E00));
    EXPECT_EQ(131008.0f, aclFloat16ToFloat(0x7FFF));
}

TEST(AclFloat16Test, EveryFiniteHalfSurvivesTheRoundTrip)
{
    int checked = 0;
    for (uint32_t h = 0; h <= 0xFFFF; h++) {
        if ((h & 0x7C00) == 0x7C00)
            continue; // infinities and NaNs
        float f = aclFloat16ToFloat(static_cast<aclFloat16>(h));
        ASSERT_EQ(h, aclFloatToFloat16(f)) << std::hex << h;
        checked++;
    }
    EXPECT_EQ(63488, checked);
}

TEST(AclCannAttributeTest, NoAttributeIsAvailableOnAMockNpu)
{
    const aclCannAttr *list = nullptr;
    size_t num = 7;
    ASSERT_EQ(ACL_SUCCESS, aclGetCannAttributeList(&list, &num));
    EXPECT_NE(nullptr, list);
    EXPECT_EQ(0u, num);
    for (aclCannAttr attr : {ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16, ACL_CANN_ATTR_JIT_COMPILE}) {
        int32_t value = 7;
        EXPECT_EQ(ACL_SUCCESS, aclGetCannAttribute(attr, &value)) << attr;
        EXPECT_EQ(0, value) << attr;
    }
}

TEST(AclCannAttributeTest, NullPointersAndUnknownAttributesAreInvalidParam)
{
    const aclCannAttr *list = nullptr;
    size_t num = 7;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetCannAttributeList(nullptr, &num));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetCannAttributeList(&list, nullptr));
    EXPECT_EQ(7u, num);
    int32_t value = 7;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetCannAttribute(ACL_CANN_ATTR_BF16, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &value));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclGetCannAttribute(static_cast<aclCannAttr>(3), &value));
    EXPECT_EQ(7, value);
    EXPECT_NE(std::string::npos, RecentError().find("aclGetCannAttribute")) << RecentError();
}

// The output of aclAppLog(level, ...) in a child process whose logger
// writes to standard output at level `threshold`.
std::string AppLogOutput(int threshold, void (*log)())
{
    int fds[2];
    if (pipe(fds) != 0)
        return "pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
        // A fork child reads the log variables again.
        setenv("ASCEND_LOG_PRINT_TO_STDOUT", "1", 1);
        setenv("ASCEND_GLOBAL_LOG_LEVEL", std::to_string(threshold).c_str(), 1);
        unsetenv("ASCEND_MODULE_LOG_LEVEL");
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        log();
        fflush(stdout);
        _exit(0);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        out.append(buf, n);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "child failed";
    return out;
}

TEST(AclAppLogTest, WritesOneLineWithTheCallersPlaceAtItsLevel)
{
    std::string out = AppLogOutput(2, [] { aclAppLog(ACL_WARNING, "fn", "file.c", 42, "value %d of %s", 7, "x"); });
    EXPECT_NE(std::string::npos, out.find("WARNING APP: ")) << out;
    EXPECT_NE(std::string::npos, out.find(" fn:file.c:42: \"value 7 of x\"\n")) << out;
    EXPECT_EQ(1, std::count(out.begin(), out.end(), '\n')) << out;

    out = AppLogOutput(2, [] { ACL_APP_LOG(ACL_ERROR, "through the macro"); });
    EXPECT_NE(std::string::npos, out.find(": \"through the macro\"")) << out;
    EXPECT_NE(std::string::npos, out.find("acl_host_test.cpp")) << out;
}

TEST(AclAppLogTest, WritesNothingBelowTheLogLevelOrForUnknownLevelsOrNullArguments)
{
    EXPECT_EQ("", AppLogOutput(2, [] { aclAppLog(ACL_INFO, "fn", "f.c", 1, "below"); }));
    EXPECT_EQ("", AppLogOutput(0, [] { aclAppLog(static_cast<aclLogLevel>(4), "fn", "f.c", 1, "unknown"); }));
    EXPECT_EQ("", AppLogOutput(0, [] { aclAppLog(static_cast<aclLogLevel>(-1), "fn", "f.c", 1, "unknown"); }));
    EXPECT_EQ("", AppLogOutput(0, [] {
                  aclAppLog(ACL_ERROR, nullptr, "f.c", 1, "no function");
                  aclAppLog(ACL_ERROR, "fn", nullptr, 1, "no file");
                  aclAppLog(ACL_ERROR, "fn", "f.c", 1, nullptr);
              }));
    EXPECT_NE("", AppLogOutput(0, [] { aclAppLog(ACL_DEBUG, "fn", "f.c", 1, "at debug"); }));
}

TEST(AclAppLogTest, ALongMessageIsCutAt1024BytesAndSaysSo)
{
    std::string out = AppLogOutput(3, [] {
        std::string big(5000, 'y');
        aclAppLog(ACL_ERROR, "fn", "f.c", 1, "%s", big.c_str());
    });
    size_t start = out.find("APP: ");
    ASSERT_NE(std::string::npos, start) << out;
    std::string text = out.substr(start + 5);
    ASSERT_FALSE(text.empty());
    text.pop_back(); // the newline
    EXPECT_EQ(1023u, text.size());
    EXPECT_EQ("...[truncated]", text.substr(text.size() - 14));
}

} // namespace
