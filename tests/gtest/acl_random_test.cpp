// SPDX-License-Identifier: MIT
// Random numbers in a stream's order (aclrt_random(3)): Philox4x32-10's
// known answers, the counter each task moves on, the four functions and
// their ranges, parameters read from device memory when the stream gets
// there, a built model's random task changed by aclrtTaskUpdateAsync, and
// CANN's codes for what it refuses.
#include "acl_test_util.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

using namespace acltest;

namespace {

constexpr size_t kSize = 1 << 16;

aclrtRandomParaInfo Value(uint64_t v, uint8_t size)
{
    aclrtRandomParaInfo p;
    std::memset(&p, 0, sizeof(p));
    p.size = size;
    std::memcpy(p.valueOrAddr, &v, sizeof(v)); // little-endian
    return p;
}

aclrtRandomParaInfo FloatValue(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return Value(bits, 4);
}

aclrtRandomParaInfo Address(const void *p, uint8_t size)
{
    aclrtRandomParaInfo a = Value(reinterpret_cast<uintptr_t>(p), size);
    a.isAddr = 1;
    return a;
}

class AclRandomTest : public AclTest {
protected:
    void SetUp() override
    {
        AclTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream_));
        for (void *&p : mem_) {
            ASSERT_EQ(ACL_SUCCESS, aclrtMalloc(&p, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
            ASSERT_EQ(ACL_SUCCESS, aclrtMemset(p, kSize, 0, kSize));
        }
    }
    void TearDown() override
    {
        if (model_) {
            EXPECT_EQ(ACL_SUCCESS, aclmdlRIDestroy(model_));
        }
        if (bound_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStreamForce(bound_));
        }
        for (void *p : mem_)
            if (p) {
                EXPECT_EQ(ACL_SUCCESS, aclrtFree(p));
            }
        if (stream_) {
            EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream_));
        }
        AclTest::TearDown();
    }
    // A task of `n` numbers of `type` into mem_[0], counted by mem_[1].
    aclrtRandomNumTaskInfo Task(aclrtRandomNumFuncType func, aclDataType type, uint64_t seed, uint64_t n)
    {
        aclrtRandomNumTaskInfo t;
        std::memset(&t, 0, sizeof(t));
        t.dataType = type;
        t.randomNumFuncParaInfo.funcType = func;
        t.randomResultAddr = mem_[0];
        t.randomCounterAddr = mem_[1];
        t.randomSeed = Value(seed, 8);
        t.randomNum = Value(n, 8);
        return t;
    }
    // Uniform 32-bit words in [0, 0xFFFFFFFF): Philox's outputs themselves
    // but for the one value the range leaves out.
    aclrtRandomNumTaskInfo Words(uint64_t seed, uint64_t n)
    {
        aclrtRandomNumTaskInfo t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_UINT32, seed, n);
        t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = Value(0, 4);
        t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = Value(0xFFFFFFFF, 4);
        return t;
    }
    template <typename T> std::vector<T> Read(const void *p, size_t n)
    {
        std::vector<T> out(n);
        EXPECT_EQ(ACL_SUCCESS, aclrtMemcpy(out.data(), n * sizeof(T), p, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST));
        return out;
    }
    void Write(void *p, const void *from, size_t n)
    {
        ASSERT_EQ(ACL_SUCCESS, aclrtMemcpy(p, n, from, n, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    void SetCounter(const uint32_t (&words)[4]) { Write(mem_[1], words, sizeof(words)); }
    std::vector<uint32_t> Counter() { return Read<uint32_t>(mem_[1], 4); }
    aclError Run(const aclrtRandomNumTaskInfo &t)
    {
        aclError err = aclrtRandomNumAsync(&t, stream_, nullptr);
        if (err != ACL_SUCCESS)
            return err;
        return aclrtSynchronizeStream(stream_);
    }
    aclrtStream stream_ = nullptr;
    aclrtStream bound_ = nullptr;
    aclmdlRI model_ = nullptr;
    void *mem_[3] = {}; // results, counter, parameters
};

// Random123's known answers for Philox4x32-10 (kat_vectors): counter and
// key all zeros, and the digits of pi.
TEST_F(AclRandomTest, PhiloxGivesItsKnownAnswersAndMovesTheCounterOnByTheBlocksUsed)
{
    ASSERT_EQ(ACL_SUCCESS, Run(Words(0, 4)));
    EXPECT_EQ((std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}), Read<uint32_t>(mem_[0], 4));
    EXPECT_EQ((std::vector<uint32_t>{1, 0, 0, 0}), Counter());

    SetCounter({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344});
    ASSERT_EQ(ACL_SUCCESS, Run(Words(0x299f31d0a4093822ULL, 4)));
    EXPECT_EQ((std::vector<uint32_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}), Read<uint32_t>(mem_[0], 4));
    EXPECT_EQ((std::vector<uint32_t>{0x243f6a89, 0x85a308d3, 0x13198a2e, 0x03707344}), Counter());

    // A partly used block counts whole; the counter's words carry.
    SetCounter({0xFFFFFFFF, 0xFFFFFFFF, 0, 0});
    ASSERT_EQ(ACL_SUCCESS, Run(Words(7, 5)));
    EXPECT_EQ((std::vector<uint32_t>{1, 0, 1, 0}), Counter());
}

TEST_F(AclRandomTest, TheNextTaskOnTheSameCounterContinuesTheSequence)
{
    ASSERT_EQ(ACL_SUCCESS, Run(Words(42, 16)));
    std::vector<uint32_t> whole = Read<uint32_t>(mem_[0], 16);
    SetCounter({0, 0, 0, 0});
    ASSERT_EQ(ACL_SUCCESS, Run(Words(42, 8)));
    std::vector<uint32_t> first = Read<uint32_t>(mem_[0], 8);
    ASSERT_EQ(ACL_SUCCESS, Run(Words(42, 8)));
    std::vector<uint32_t> second = Read<uint32_t>(mem_[0], 8);
    first.insert(first.end(), second.begin(), second.end());
    EXPECT_EQ(whole, first);
    // Another seed, another sequence.
    SetCounter({0, 0, 0, 0});
    ASSERT_EQ(ACL_SUCCESS, Run(Words(43, 16)));
    EXPECT_NE(whole, Read<uint32_t>(mem_[0], 16));
}

TEST_F(AclRandomTest, ADropoutMaskKeepsEachBitWithOneMinusTheRatio)
{
    constexpr uint64_t kBits = 4000;
    aclrtRandomNumTaskInfo t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ACL_FLOAT, 9, kBits);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemset(mem_[0], kSize, 0xEE, kSize));
    t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation = FloatValue(0.0f);
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    std::vector<uint8_t> mask = Read<uint8_t>(mem_[0], kBits / 8 + 1);
    EXPECT_TRUE(BytesAre(mask.data(), kBits / 8, 0xFF));
    EXPECT_EQ(0xEE, mask[kBits / 8]); // the bytes past the mask untouched

    t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation = FloatValue(1.0f);
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    mask = Read<uint8_t>(mem_[0], kBits / 8);
    EXPECT_TRUE(BytesAre(mask.data(), kBits / 8, 0));

    t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation = FloatValue(0.25f);
    t.randomNum = Value(kBits - 3, 8); // the last byte's high bits stay clear
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    mask = Read<uint8_t>(mem_[0], kBits / 8);
    size_t kept = 0;
    for (uint8_t b : mask)
        kept += static_cast<size_t>(__builtin_popcount(b));
    EXPECT_EQ(0, mask.back() & 0xE0);
    EXPECT_GT(kept, 2800u); // 2997 expected, sd 27
    EXPECT_LT(kept, 3200u);
}

TEST_F(AclRandomTest, UniformNumbersStayInTheirRangeForEachType)
{
    constexpr uint64_t kN = 2000;
    aclrtRandomNumTaskInfo t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_FLOAT, 1, kN);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = FloatValue(-3.0f);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = FloatValue(5.0f);
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    double sum = 0;
    for (float f : Read<float>(mem_[0], kN)) {
        ASSERT_GE(f, -3.0f);
        ASSERT_LT(f, 5.0f);
        sum += f;
    }
    EXPECT_NEAR(1.0, sum / kN, 0.2); // sd of the mean 0.05

    // int64 in [-5, 5): every value, none outside.
    t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_INT64, 2, kN);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = Value(static_cast<uint64_t>(-5), 8);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = Value(5, 8);
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    std::set<int64_t> seen;
    for (int64_t v : Read<int64_t>(mem_[0], kN))
        seen.insert(v);
    EXPECT_EQ((std::set<int64_t>{-5, -4, -3, -2, -1, 0, 1, 2, 3, 4}), seen);

    // float16 in [0.5, 1): 512 values of the format, bits 0x3800 to 0x3BFF.
    t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_FLOAT16, 3, kN);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = Value(0x3800, 2);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = Value(0x3C00, 2);
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    for (uint16_t h : Read<uint16_t>(mem_[0], kN)) {
        ASSERT_GE(h, 0x3800);
        ASSERT_LE(h, 0x3C00); // 1.0 itself only by rounding up
    }
}

TEST_F(AclRandomTest, NormalNumbersHaveTheirMeanAndDeviationAndTruncatedOnesStayWithinTwo)
{
    constexpr uint64_t kN = 8000;
    aclrtRandomNumTaskInfo t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ACL_FLOAT, 5, kN);
    t.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean = FloatValue(3.0f);
    t.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev = FloatValue(2.0f);
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    std::vector<float> v = Read<float>(mem_[0], kN);
    double sum = 0, squares = 0;
    size_t outside = 0;
    for (float f : v) {
        sum += f;
        squares += (f - 3.0) * (f - 3.0);
        outside += std::fabs(f - 3.0f) > 4.0f;
    }
    EXPECT_NEAR(3.0, sum / kN, 0.1);                 // sd of the mean 0.022
    EXPECT_NEAR(2.0, std::sqrt(squares / kN), 0.1);  // sd about 0.016
    EXPECT_GT(outside, 250u);                        // 4.55 %: 364 expected
    EXPECT_LT(outside, 480u);

    t.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS;
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    sum = 0;
    for (float f : Read<float>(mem_[0], kN)) {
        ASSERT_GE(f, -1.0f);
        ASSERT_LE(f, 7.0f);
        sum += f;
    }
    EXPECT_NEAR(3.0, sum / kN, 0.1);
}

TEST_F(AclRandomTest, ParametersGivenByAddressAreReadWhenTheStreamGetsThere)
{
    // Seed, count and range in device memory, written by work queued
    // before the task.
    auto *words = static_cast<uint64_t *>(mem_[2]);
    aclrtRandomNumTaskInfo t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_UINT32, 0, 0);
    t.randomSeed = Address(words, 8);
    t.randomNum = Address(words + 1, 8);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = Address(words + 2, 4);
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max = Address(words + 3, 4);
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words, 0, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words + 1, 4, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words + 2, 0, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words + 3, 0xFFFFFFFF, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[0], kSize, 0xAB, kSize, stream_));
    ASSERT_EQ(ACL_SUCCESS, Run(t));
    EXPECT_EQ((std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8, 0xABABABAB}),
              Read<uint32_t>(mem_[0], 5));

    // A count read at run time too large for the result fails the task,
    // for the next synchronize, and writes nothing.
    ASSERT_EQ(ACL_SUCCESS, aclrtValueWrite(words + 1, kSize, 0, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[0], kSize, 0xCD, kSize, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtRandomNumAsync(&t, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtSynchronizeStream(stream_));
    EXPECT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_)); // reported once
    std::vector<uint8_t> result = Read<uint8_t>(mem_[0], kSize);
    EXPECT_TRUE(BytesAre(result.data(), kSize, 0xCD));
    EXPECT_EQ((std::vector<uint32_t>{1, 0, 0, 0}), Counter());
}

TEST_F(AclRandomTest, ACapturedRandomTaskDrawsAgainAtEachRun)
{
    aclrtRandomNumTaskInfo t = Words(0, 4);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_EQ(ACL_SUCCESS, aclrtRandomNumAsync(&t, stream_, nullptr));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(stream_, &model_));
    EXPECT_EQ((std::vector<uint32_t>{0, 0, 0, 0}), Counter()); // recorded, not run
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_EQ(0x6627e8d5u, Read<uint32_t>(mem_[0], 1)[0]);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_EQ((std::vector<uint32_t>{2, 0, 0, 0}), Counter());
    EXPECT_NE(0x6627e8d5u, Read<uint32_t>(mem_[0], 1)[0]);
}

TEST_F(AclRandomTest, AnUpdateChangesABuiltModelsRandomTaskFromDeviceMemoryInTheExecStreamsOrder)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&bound_, 0, ACL_STREAM_PERSISTENT));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildBegin(&model_, 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_, ACL_MODEL_STREAM_FLAG_HEAD));
    aclrtRandomNumTaskInfo t = Words(0x299f31d0a4093822ULL, 4);
    ASSERT_EQ(ACL_SUCCESS, aclrtRandomNumAsync(&t, bound_, nullptr));
    uint32_t random_task = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&random_task));
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(mem_[2], 64, 0, 64, bound_));
    uint32_t set_task = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&set_task));
    EXPECT_NE(random_task, set_task);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, bound_));
    uint32_t end_task = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&end_task)); // the end task is numbered too
    EXPECT_EQ(set_task + 1, end_task);
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));
    SetCounter({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344});
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecute(model_, kSyncTimeoutMs));
    EXPECT_EQ(0xd16cfe09u, Read<uint32_t>(mem_[0], 1)[0]);

    // The new description: seed 0, results at mem_[0] + 64, the counter
    // at mem_[2] (zeros); its function and types are the task's own.
    aclrtRandomNumTaskInfo next = Words(0, 4);
    next.randomResultAddr = static_cast<uint8_t *>(mem_[0]) + 64;
    next.randomCounterAddr = static_cast<uint8_t *>(mem_[2]) + 128;
    next.dataType = ACL_INT64; // not taken
    void *src = static_cast<uint8_t *>(mem_[2]) + 1024;
    Write(src, &next, sizeof(next));
    aclrtTaskUpdateInfo update;
    std::memset(&update, 0, sizeof(update));
    update.id = ACL_RT_UPDATE_RANDOM_TASK;
    update.val.randomTaskAttr.srcAddr = src;
    update.val.randomTaskAttr.size = sizeof(aclrtRandomNumTaskInfo);
    ASSERT_EQ(ACL_SUCCESS, aclrtTaskUpdateAsync(bound_, random_task, &update, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecute(model_, kSyncTimeoutMs));
    EXPECT_EQ((std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}),
              Read<uint32_t>(static_cast<uint8_t *>(mem_[0]) + 64, 4));
    EXPECT_EQ(1u, Read<uint32_t>(static_cast<uint8_t *>(mem_[2]) + 128, 1)[0]);

    // What CANN refuses, and the task unchanged by each: the description
    // at src now names another counter, which no refused update may take.
    aclrtRandomNumTaskInfo refused = next;
    refused.randomCounterAddr = static_cast<uint8_t *>(mem_[2]) + 256;
    Write(src, &refused, sizeof(refused));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtTaskUpdateAsync(bound_, random_task, nullptr, stream_));
    aclrtTaskUpdateInfo bad = update;
    bad.id = static_cast<aclrtUpdateTaskAttrId>(3);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, random_task, &bad, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(nullptr, random_task, &update, stream_));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtTaskUpdateAsync(reinterpret_cast<aclrtStream>(0x1234), random_task, &update, stream_));
    bad = update;
    bad.val.randomTaskAttr.size = sizeof(aclrtRandomNumTaskInfo) - 8;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, random_task, &bad, stream_));
    bad.val.randomTaskAttr.size = sizeof(aclrtRandomNumTaskInfo);
    bad.val.randomTaskAttr.srcAddr = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, random_task, &bad, stream_));
    bad.val.randomTaskAttr.srcAddr = &next; // host memory
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, random_task, &bad, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, set_task, &update, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, set_task + 100, &update, stream_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, random_task, &update, bound_));
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(stream_, random_task, &update, stream_));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtTaskUpdateAsync(bound_, random_task, &update, reinterpret_cast<aclrtStream>(0x1234)));
    aclmdlRI capture = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CAPTURED, aclrtTaskUpdateAsync(bound_, random_task, &update, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRICaptureEnd(stream_, &capture));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIDestroy(capture));
    // A kernel task's update: a mock NPU runs no kernels.
    aclrtTaskUpdateInfo kernel;
    std::memset(&kernel, 0, sizeof(kernel));
    kernel.id = ACL_RT_UPDATE_AIC_AIV_TASK;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtTaskUpdateAsync(bound_, random_task, &kernel, bound_));
    kernel.val.aicAivTaskAttr = {src, src, src, {}};
    EXPECT_EQ(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, aclrtTaskUpdateAsync(bound_, random_task, &kernel, bound_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecute(model_, kSyncTimeoutMs));
    EXPECT_EQ(2u, Read<uint32_t>(static_cast<uint8_t *>(mem_[2]) + 128, 1)[0]);
    EXPECT_EQ(0u, Read<uint32_t>(static_cast<uint8_t *>(mem_[2]) + 256, 1)[0]);
}

// The description an update reads may lie in VMM memory, reached through
// its mapping.
TEST_F(AclRandomTest, AnUpdateReadsItsDescriptionFromVmmMemory)
{
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStreamWithConfig(&bound_, 0, ACL_STREAM_PERSISTENT));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildBegin(&model_, 0));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBindStream(model_, bound_, ACL_MODEL_STREAM_FLAG_HEAD));
    aclrtRandomNumTaskInfo t = Words(7, 4);
    ASSERT_EQ(ACL_SUCCESS, aclrtRandomNumAsync(&t, bound_, nullptr));
    uint32_t task = 0;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetThreadLastTaskId(&task));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIEndTask(model_, bound_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIBuildEnd(model_, nullptr));

    constexpr size_t kVmm = 2 << 20;
    aclrtPhysicalMemProp prop = {};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    aclrtDrvMemHandle phys = nullptr;
    void *va = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtMallocPhysical(&phys, kVmm, &prop, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtReserveMemAddress(&va, kVmm, 0, nullptr, 0));
    ASSERT_EQ(ACL_SUCCESS, aclrtMapMem(va, kVmm, 0, phys, 0));
    aclrtRandomNumTaskInfo next = Words(0, 4);
    next.randomResultAddr = static_cast<uint8_t *>(mem_[0]) + 64;
    Write(static_cast<uint8_t *>(va) + 4096, &next, sizeof(next));
    aclrtTaskUpdateInfo update;
    std::memset(&update, 0, sizeof(update));
    update.id = ACL_RT_UPDATE_RANDOM_TASK;
    update.val.randomTaskAttr.srcAddr = static_cast<uint8_t *>(va) + 4096;
    update.val.randomTaskAttr.size = sizeof(aclrtRandomNumTaskInfo);
    ASSERT_EQ(ACL_SUCCESS, aclrtTaskUpdateAsync(bound_, task, &update, stream_));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    ASSERT_EQ(ACL_SUCCESS, aclmdlRIExecute(model_, kSyncTimeoutMs));
    EXPECT_EQ((std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}),
              Read<uint32_t>(static_cast<uint8_t *>(mem_[0]) + 64, 4));
    ASSERT_EQ(ACL_SUCCESS, aclrtUnmapMem(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtReleaseMemAddress(va));
    ASSERT_EQ(ACL_SUCCESS, aclrtFreePhysical(phys));
}

TEST_F(AclRandomTest, TheCallRefusesWhatCANNRefusesWithItsCodes)
{
    const aclrtRandomNumTaskInfo good = Words(0, 4);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtRandomNumAsync(nullptr, stream_, nullptr));
    aclrtRandomNumTaskInfo t = good;
    t.dataType = ACL_INT8;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtRandomNumAsync(&t, stream_, nullptr));
    EXPECT_EQ(ACL_ERROR_RT_INVALID_HANDLE,
              aclrtRandomNumAsync(&good, reinterpret_cast<aclrtStream>(0x1234), nullptr));
    int reserve = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&good, stream_, &reserve));
    t = good;
    t.randomNumFuncParaInfo.funcType = static_cast<aclrtRandomNumFuncType>(4);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS; // integers are uniform only
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomCounterAddr = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomResultAddr = nullptr;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomSeed.isAddr = 2;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomNum.size = 9;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomNum.size = 0;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.size = 5; // a uint32 inline
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.isAddr = 1; // an address: 8 bytes at most
    t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.size = 9;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    // npuipc's: ranges that are not device memory, or too small.
    uint8_t host[64];
    t = good;
    t.randomCounterAddr = host;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomCounterAddr = static_cast<uint8_t *>(mem_[1]) + kSize - 8;
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    t = good;
    t.randomNum = Value(kSize / 4 + 1, 8);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    // A mask of 2^64 - 1 bits: 2^61 bytes, no wrap to nothing.
    t = Task(ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ACL_FLOAT, 0, ~0ULL);
    t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation = FloatValue(0.0f);
    EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, aclrtRandomNumAsync(&t, stream_, nullptr));
    // A stream of another context.
    aclrtContext mine = nullptr, theirs = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtGetCurrentContext(&mine));
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateContext(&theirs, 0));
    aclrtStream foreign = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&foreign));
    ASSERT_EQ(ACL_SUCCESS, aclrtSetCurrentContext(mine));
    EXPECT_EQ(ACL_ERROR_RT_STREAM_CONTEXT, aclrtRandomNumAsync(&good, foreign, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyContext(theirs));
    // Nothing ran.
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStream(stream_));
    EXPECT_EQ((std::vector<uint32_t>{0, 0, 0, 0}), Counter());
}

} // namespace
