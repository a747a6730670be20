// SPDX-License-Identifier: MIT
// Random numbers in a stream's order (aclrt_random(3)): aclrtRandomNumAsync
// fills device memory with a dropout bitmask or uniform, normal or
// truncated normal numbers from Philox4x32-10, seeded by the task and
// counted by a 16-byte counter in device memory that each task advances;
// aclrtTaskUpdateAsync changes a random task of a built model from a task
// description in device memory, in another stream's order. CANN's engine
// generates on the device; a mock NPU's is the runtime's copier thread,
// which reads the parameters given by address and the counter once the
// stream reaches the task, as the engine would.
#include <cmath>
#include <cstring>
#include <limits>

#include "aclrt/capture.h"
#include "aclrt/half_float.h"
#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

static_assert(sizeof(aclrtRandomParaInfo) == 16, "CANN's parameter is 16 bytes");
static_assert(sizeof(aclrtRandomNumTaskInfo) == 104, "CANN's random task is 104 bytes");

constexpr size_t kCounterSize = 16; // Philox's 128-bit counter

// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11): the seed is the
// 64-bit key (low word first), the counter four little-endian 32-bit
// words; each block of four outputs moves the counter on by one.
class Philox {
public:
    Philox(uint64_t seed, const uint32_t counter[4])
        : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}
    {
        std::memcpy(counter_, counter, sizeof(counter_));
    }

    uint32_t next()
    {
        if (used_ == 4) {
            block();
            used_ = 0;
        }
        return out_[used_++];
    }

    // In [0, 1), 24 bits: every float of the range as likely.
    float unit() { return static_cast<float>(next() >> 8) * 0x1p-24f; }

    // The counter past every block drawn from.
    const uint32_t *counter() const { return counter_; }

private:
    void block()
    {
        uint32_t c[4];
        std::memcpy(c, counter_, sizeof(c));
        uint32_t k0 = key_[0], k1 = key_[1];
        for (int round = 0; round < 10; round++) {
            const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
            const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
            const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0;
            const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1;
            c[0] = n0;
            c[1] = static_cast<uint32_t>(p1);
            c[2] = n2;
            c[3] = static_cast<uint32_t>(p0);
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        std::memcpy(out_, c, sizeof(out_));
        for (uint32_t &word : counter_)
            if (++word != 0)
                break;
    }

    uint32_t key_[2];
    uint32_t counter_[4];
    uint32_t out_[4] = {};
    int used_ = 4;
};

// The size of an element of the types CANN generates; 0 for the others.
size_t element_size(aclDataType type)
{
    switch (type) {
    case ACL_FLOAT16:
    case ACL_BF16:
        return 2;
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_FLOAT:
        return 4;
    case ACL_INT64:
    case ACL_UINT64:
        return 8;
    default:
        return 0;
    }
}

bool is_float(aclDataType type)
{
    return type == ACL_FLOAT || type == ACL_FLOAT16 || type == ACL_BF16;
}

// The distribution's two parameters (dropout: the ratio alone).
void distribution_params(const aclrtRandomNumTaskInfo &info, const aclrtRandomParaInfo *&first,
                         const aclrtRandomParaInfo *&second)
{
    const auto &p = info.randomNumFuncParaInfo.paramInfo;
    switch (info.randomNumFuncParaInfo.funcType) {
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
        first = &p.dropoutBitmaskInfo.dropoutRation;
        second = nullptr;
        return;
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
        first = &p.uniformDisInfo.min;
        second = &p.uniformDisInfo.max;
        return;
    default:
        first = &p.normalDisInfo.mean;
        second = &p.normalDisInfo.stddev;
        return;
    }
}

aclError check_para(const aclrtRandomParaInfo &p, size_t max_inline, const char *what)
{
    if (p.isAddr > 1)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s: isAddr is %u, not 0 (a value) or 1 (an address)", what,
                    p.isAddr);
    const size_t max = p.isAddr ? sizeof(uint64_t) : max_inline;
    if (p.size < 1 || p.size > max)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%s: size %u is not 1 to %zu", what, p.size, max);
    return ACL_SUCCESS;
}

// CANN's checks of a task's description, in its order.
aclError check_task(const aclrtRandomNumTaskInfo &info)
{
    const aclrtRandomNumFuncType func = info.randomNumFuncParaInfo.funcType;
    if (static_cast<uint32_t>(func) > ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "funcType %d is no random function", static_cast<int>(func));
    // Uniform numbers come as integers too; the others are floats (for a
    // dropout mask, the type of its ratio).
    if (!is_float(info.dataType) && func != ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "funcType %d takes float, float16 or bfloat16, not data type %d",
                    static_cast<int>(func), static_cast<int>(info.dataType));
    if (!info.randomCounterAddr)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "randomCounterAddr is NULL");
    if (!info.randomResultAddr)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "randomResultAddr is NULL");
    if (aclError err = check_para(info.randomSeed, sizeof(uint64_t), "randomSeed"))
        return err;
    if (aclError err = check_para(info.randomNum, sizeof(uint64_t), "randomNum"))
        return err;
    const aclrtRandomParaInfo *first, *second;
    distribution_params(info, first, second);
    const size_t element = element_size(info.dataType);
    if (aclError err = check_para(*first, element, second ? "the first parameter" : "dropoutRation"))
        return err;
    if (second)
        return check_para(*second, element, "the second parameter");
    return ACL_SUCCESS;
}

uint64_t little_endian(const uint8_t *bytes, size_t size)
{
    uint64_t v = 0;
    for (size_t i = size; i-- > 0;)
        v = v << 8 | bytes[i];
    return v;
}

// The `size` bytes of a parameter, zero-extended: inline, or read now from
// the device address it holds.
aclError read_para(const aclrtRandomParaInfo &p, uint32_t device, const char *what, uint64_t &out)
{
    if (!p.isAddr) {
        out = little_endian(p.valueOrAddr, p.size);
        return ACL_SUCCESS;
    }
    const void *addr = reinterpret_cast<const void *>(little_endian(p.valueOrAddr, sizeof(uint64_t)));
    std::shared_ptr<Allocation> hold;
    void *at = nullptr;
    if (aclError err = device_range(addr, p.size, device, what, hold, at))
        return err;
    uint8_t bytes[8];
    std::memcpy(bytes, at, p.size);
    out = little_endian(bytes, p.size);
    return ACL_SUCCESS;
}

// A parameter's bits as a number of the task's type.
double as_number(uint64_t raw, aclDataType type)
{
    switch (type) {
    case ACL_FLOAT16:
        return fp16_to_float(static_cast<uint16_t>(raw));
    case ACL_BF16:
        return bf16_to_float(static_cast<uint16_t>(raw));
    case ACL_FLOAT: {
        const uint32_t bits = static_cast<uint32_t>(raw);
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        return f;
    }
    default:
        return 0;
    }
}

void store_float(uint8_t *out, float v, aclDataType type)
{
    if (type == ACL_FLOAT) {
        std::memcpy(out, &v, sizeof(v));
        return;
    }
    const uint16_t half = type == ACL_FLOAT16 ? float_to_fp16(v) : float_to_bf16(v);
    std::memcpy(out, &half, sizeof(half));
}

// Uniform integers in [min, max) (min when the range is empty), as the
// remainder of 32 random bits (64 for 64-bit types) by the range.
void uniform_integers(Philox &gen, uint8_t *out, uint64_t n, aclDataType type, uint64_t min_raw, uint64_t max_raw)
{
    const size_t size = element_size(type);
    const bool wide = size == 8;
    const bool is_signed = type == ACL_INT32 || type == ACL_INT64;
    int64_t lo, hi;
    if (wide) {
        lo = static_cast<int64_t>(min_raw);
        hi = static_cast<int64_t>(max_raw);
    } else if (is_signed) {
        lo = static_cast<int32_t>(min_raw);
        hi = static_cast<int32_t>(max_raw);
    } else {
        lo = static_cast<int64_t>(static_cast<uint32_t>(min_raw));
        hi = static_cast<int64_t>(static_cast<uint32_t>(max_raw));
    }
    const bool empty = (is_signed || !wide) ? hi <= lo : max_raw <= min_raw;
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t bits = gen.next();
        if (wide)
            bits |= static_cast<uint64_t>(gen.next()) << 32;
        const uint64_t v = static_cast<uint64_t>(lo) + (empty ? 0 : bits % range);
        std::memcpy(out + i * size, &v, size); // little-endian: the low bytes
    }
}

// Two standard normal numbers (Box-Muller) from two draws.
void normal_pair(Philox &gen, double &z0, double &z1)
{
    const double u1 = (static_cast<double>(gen.next()) + 1.0) * 0x1p-32; // (0, 1]: a finite log
    const double u2 = static_cast<double>(gen.next()) * 0x1p-32;
    const double r = std::sqrt(-2.0 * std::log(u1));
    z0 = r * std::cos(2.0 * M_PI * u2);
    z1 = r * std::sin(2.0 * M_PI * u2);
}

void normal_floats(Philox &gen, uint8_t *out, uint64_t n, aclDataType type, double mean, double stddev,
                   bool truncated)
{
    const size_t size = element_size(type);
    double pending[2];
    int left = 0;
    for (uint64_t i = 0; i < n; i++) {
        double z;
        do {
            if (left == 0) {
                normal_pair(gen, pending[1], pending[0]);
                left = 2;
            }
            z = pending[--left];
        } while (truncated && std::fabs(z) > 2.0); // within two deviations: drawn again
        store_float(out + i * size, static_cast<float>(mean + stddev * z), type);
    }
}

// The bytes `n` numbers take at the result: a bit each in a dropout mask;
// false if they cannot fit in memory.
bool result_bytes(const aclrtRandomNumTaskInfo &info, uint64_t n, size_t &bytes)
{
    if (info.randomNumFuncParaInfo.funcType == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK) {
        bytes = static_cast<size_t>(n / 8 + (n % 8 != 0));
        return true;
    }
    const size_t element = element_size(info.dataType);
    if (n > std::numeric_limits<size_t>::max() / element)
        return false;
    bytes = static_cast<size_t>(n) * element;
    return true;
}

// What a task's bytes and counter come to once its stream reaches it.
aclError generate(const aclrtRandomNumTaskInfo &info, uint32_t device)
{
    if (aclError err = check_task(info)) // an update may have changed it
        return err;
    uint64_t seed = 0, n = 0, first_raw = 0, second_raw = 0;
    if (aclError err = read_para(info.randomSeed, device, "randomSeed", seed))
        return err;
    if (aclError err = read_para(info.randomNum, device, "randomNum", n))
        return err;
    const aclrtRandomParaInfo *first, *second;
    distribution_params(info, first, second);
    if (aclError err = read_para(*first, device, "the first parameter", first_raw))
        return err;
    if (second)
        if (aclError err = read_para(*second, device, "the second parameter", second_raw))
            return err;
    const aclrtRandomNumFuncType func = info.randomNumFuncParaInfo.funcType;
    const size_t element = element_size(info.dataType);
    size_t bytes = 0;
    if (!result_bytes(info, n, bytes))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%llu numbers do not fit in memory",
                    static_cast<unsigned long long>(n));
    std::shared_ptr<Allocation> counter_hold, result_hold;
    void *counter_at = nullptr, *result_at = nullptr;
    if (aclError err = device_range(info.randomCounterAddr, kCounterSize, device, "randomCounterAddr", counter_hold,
                                    counter_at))
        return err;
    if (n)
        if (aclError err =
                device_range(info.randomResultAddr, bytes, device, "the result range", result_hold, result_at))
            return err;
    uint32_t counter[4];
    std::memcpy(counter, counter_at, sizeof(counter));
    Philox gen(seed, counter);
    auto *out = static_cast<uint8_t *>(result_at);
    switch (func) {
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: {
        // Bit i (byte i / 8, least significant first) keeps element i: set
        // with probability 1 - ratio.
        const double ratio = as_number(first_raw, info.dataType);
        if (bytes)
            std::memset(out, 0, bytes);
        for (uint64_t i = 0; i < n; i++)
            if (gen.unit() >= ratio)
                out[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        break;
    }
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
        if (!is_float(info.dataType)) {
            uniform_integers(gen, out, n, info.dataType, first_raw, second_raw);
            break;
        }
        for (uint64_t i = 0; i < n; i++) {
            const double lo = as_number(first_raw, info.dataType), hi = as_number(second_raw, info.dataType);
            store_float(out + i * element, static_cast<float>(lo + (hi - lo) * gen.unit()), info.dataType);
        }
        break;
    default:
        normal_floats(gen, out, n, info.dataType, as_number(first_raw, info.dataType),
                      as_number(second_raw, info.dataType), func == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS);
        break;
    }
    std::memcpy(counter_at, gen.counter(), kCounterSize);
    return ACL_SUCCESS;
}

// A random task's description: the call's copy, which aclrtTaskUpdateAsync
// may change in a built model between its runs.
struct RandomTask {
    std::mutex mu; // Protects info
    aclrtRandomNumTaskInfo info;
};

aclError random_async(const std::shared_ptr<RandomTask> &task, aclrtStream stream);
aclError random_on(const std::shared_ptr<RandomTask> &task, const std::shared_ptr<Stream> &s);

// The launch a model records; aclrtTaskUpdateAsync knows a random task by
// this type.
struct RandomLaunch {
    std::shared_ptr<RandomTask> task;
    aclError operator()(aclrtStream to) const { return random_async(task, to); }
};

// The ranges a task names by value: device memory of the stream's device
// (what is given by address, and the result of a count given by address,
// are checked when the stream gets there).
aclError check_ranges(const aclrtRandomNumTaskInfo &info, uint32_t device)
{
    std::shared_ptr<Allocation> hold;
    void *at = nullptr;
    if (aclError err = device_range(info.randomCounterAddr, kCounterSize, device, "randomCounterAddr", hold, at))
        return err;
    if (!info.randomNum.isAddr) {
        const uint64_t n = little_endian(info.randomNum.valueOrAddr, info.randomNum.size);
        size_t bytes = 0;
        if (!result_bytes(info, n, bytes))
            return fail(ACL_ERROR_RT_PARAM_INVALID, "%llu numbers do not fit in memory",
                        static_cast<unsigned long long>(n));
        if (n)
            if (aclError err = device_range(info.randomResultAddr, bytes, device, "the result range", hold, at))
                return err;
    }
    return ACL_SUCCESS;
}

// A model's run queues its task on the stream it runs on; what it names is
// checked when the stream gets there (an update may have changed it).
aclError random_async(const std::shared_ptr<RandomTask> &task, aclrtStream stream)
{
    std::shared_ptr<Stream> s;
    if (aclError err = find_stream(stream, s))
        return err;
    return random_on(task, s);
}

aclError random_on(const std::shared_ptr<RandomTask> &task, const std::shared_ptr<Stream> &s)
{
    if (aclError err = stopped_context_error(*s))
        return err;
    if (captured(*s, "aclrtRandomNumAsync", RandomLaunch{task}))
        return ACL_SUCCESS;
    HostCopy copy;
    copy.stream = s;
    copy.resolve = [task](HostCopy &t) {
        aclrtRandomNumTaskInfo info;
        {
            std::lock_guard<std::mutex> lock(task->mu);
            info = task->info;
        }
        t.count = 0; // generated in place: nothing left to move
        return generate(info, t.stream->device);
    };
    return queue_copy(Runtime::get(), std::move(copy));
}

// The fields of a random task an update changes: its addresses and the
// seed's and count's values or addresses (how each is given stays).
void apply_update(aclrtRandomNumTaskInfo &info, const aclrtRandomNumTaskInfo &from)
{
    info.randomParaAddr = from.randomParaAddr;
    info.randomResultAddr = from.randomResultAddr;
    info.randomCounterAddr = from.randomCounterAddr;
    std::memcpy(info.randomSeed.valueOrAddr, from.randomSeed.valueOrAddr, sizeof(info.randomSeed.valueOrAddr));
    std::memcpy(info.randomNum.valueOrAddr, from.randomNum.valueOrAddr, sizeof(info.randomNum.valueOrAddr));
}

aclError update_random_task(aclrtStream taskStream, uint32_t taskId, const aclrtRandomTaskUpdateAttr &attr,
                            aclrtStream execStream)
{
    if (!taskStream)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "taskStream is NULL: name the model's stream holding the task");
    std::shared_ptr<Stream> ts, es;
    if (aclError err = find_stream(taskStream, ts))
        return err;
    if (aclError err = find_stream(execStream, es))
        return err;
    if (!attr.srcAddr)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "srcAddr is NULL");
    if (attr.size != sizeof(aclrtRandomNumTaskInfo))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "size is %zu, not the %zu bytes of an aclrtRandomNumTaskInfo",
                    attr.size, sizeof(aclrtRandomNumTaskInfo));
    if (es->bound.load(std::memory_order_acquire))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "execStream is bound to a model: an update runs on another stream");
    if (aclError err = refuse_if_capturing(*es))
        return err;
    if (aclError err = stream_of_current_context(execStream, es))
        return err;
    if (aclError err = stopped_context_error(*es))
        return err;
    std::shared_ptr<RandomTask> task;
    if (aclError err = with_bound_task(*ts, taskId, [&](CapturedCall &call) {
            const RandomLaunch *launch = call.make.target<RandomLaunch>();
            if (!launch)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "task %u is a task of %s, not a random-number task", taskId,
                            call.what);
            task = launch->task;
            return ACL_SUCCESS;
        }))
        return err;
    // Held by the task and read through `at` (queue_copy translates only
    // the copy's own ranges).
    std::shared_ptr<Allocation> held;
    void *at = nullptr;
    if (aclError err = device_range(attr.srcAddr, attr.size, es->device, "srcAddr", held, at))
        return err;
    HostCopy copy;
    copy.stream = es;
    copy.resolve = [task, held, at](HostCopy &t) {
        aclrtRandomNumTaskInfo from;
        std::memcpy(&from, at, sizeof(from));
        t.count = 0;
        std::lock_guard<std::mutex> lock(task->mu);
        apply_update(task->info, from);
        return ACL_SUCCESS;
    };
    return queue_copy(Runtime::get(), std::move(copy));
}

} // namespace

extern "C" {

aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo, const aclrtStream stream, void *reserve)
{
    return api("aclrtRandomNumAsync", [&] {
        if (!taskInfo)
            return fail(ACL_ERROR_INVALID_PARAM, "taskInfo is NULL");
        if (!element_size(taskInfo->dataType))
            return fail(ACL_ERROR_INVALID_PARAM, "data type %d is no type random numbers come in",
                        static_cast<int>(taskInfo->dataType));
        std::shared_ptr<Stream> s;
        if (stream)
            if (aclError err = find_stream(stream, s))
                return err;
        if (reserve)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "reserve must be NULL");
        if (aclError err = stream_of_current_context(stream, s))
            return err;
        if (aclError err = check_task(*taskInfo))
            return err;
        if (aclError err = check_ranges(*taskInfo, s->device))
            return err;
        auto task = std::make_shared<RandomTask>();
        task->info = *taskInfo;
        return random_on(task, s);
    });
}

aclError aclrtTaskUpdateAsync(aclrtStream taskStream, uint32_t taskId, aclrtTaskUpdateInfo *info,
                              aclrtStream execStream)
{
    return api("aclrtTaskUpdateAsync", [&] {
        if (!info)
            return fail(ACL_ERROR_INVALID_PARAM, "info is NULL");
        switch (info->id) {
        case ACL_RT_UPDATE_RANDOM_TASK:
            return update_random_task(taskStream, taskId, info->val.randomTaskAttr, execStream);
        case ACL_RT_UPDATE_AIC_AIV_TASK: {
            std::shared_ptr<Stream> s;
            if (taskStream)
                if (aclError err = find_stream(taskStream, s))
                    return err;
            if (execStream)
                if (aclError err = find_stream(execStream, s))
                    return err;
            const aclrtAicAivTaskUpdateAttr &a = info->val.aicAivTaskAttr;
            if (!taskStream || !execStream || !a.binHandle || !a.funcEntryAddr || !a.blockDimAddr)
                return fail(ACL_ERROR_RT_PARAM_INVALID, "a kernel task's update names both streams, the binary, "
                                                        "the entry and the block count");
            return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "a mock NPU runs no kernels");
        }
        default:
            return fail(ACL_ERROR_RT_PARAM_INVALID, "update id %d is neither ACL_RT_UPDATE_RANDOM_TASK nor "
                                                    "ACL_RT_UPDATE_AIC_AIV_TASK",
                        static_cast<int>(info->id));
        }
    });
}

} // extern "C"
