// SPDX-License-Identifier: MIT
// Memory-value synchronisation between streams: aclrtValueWrite stores a
// 64-bit word of device memory in stream order, aclrtValueWait holds a
// stream until a word compares true. Both are driver jobs (WRITE_VALUE,
// WAIT_VALUE); the device polls a waited word, so a host write through the
// memory's mapping releases a wait as well.
#include "aclrt/memory_place.h"
#include "aclrt/capture.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

static_assert(ACL_STREAM_WAIT_VALUE_GEQ == static_cast<uint32_t>(Job::Compare::AtLeast));
static_assert(ACL_STREAM_WAIT_VALUE_EQ == static_cast<uint32_t>(Job::Compare::Equal));
static_assert(ACL_STREAM_WAIT_VALUE_AND == static_cast<uint32_t>(Job::Compare::AnyBit));
static_assert(ACL_STREAM_WAIT_VALUE_NOR == static_cast<uint32_t>(Job::Compare::NotAllBits));

namespace {

// The word at `devAddr` on `stream`'s device: its buffer handle and offset.
aclError locate_word(void *devAddr, const std::shared_ptr<Stream> &s, uint32_t &handle,
                     uint64_t &offset)
{
    Runtime &rt = Runtime::get();
    Place p;
    if (aclError err = locate(rt, devAddr, sizeof(uint64_t), p))
        return err;
    if (!p.alloc)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not device memory", devAddr);
    // CANN's documentation asks for it; the device reads and writes whole
    // aligned words.
    if (reinterpret_cast<uintptr_t>(devAddr) % sizeof(uint64_t))
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%p is not 8-byte aligned", devAddr);
    if (aclError err = buffer_on(rt, *p.alloc, *s, handle))
        return err;
    offset = p.offset;
    return ACL_SUCCESS;
}

// CANN's order: the address, the stream, the flag, a current context and
// the stream of that context, then the memory.
aclError value_job(void *devAddr, uint32_t flag, uint32_t flag_limit, aclrtStream stream,
                   std::shared_ptr<Stream> &s, uint32_t &handle, uint64_t &offset)
{
    if (!devAddr)
        return fail(ACL_ERROR_INVALID_PARAM, "devAddr is NULL");
    {
        Runtime &rt = Runtime::get();
        std::lock_guard<std::mutex> lock(rt.mu);
        if (aclError err = rt.resolve_stream(stream, s))
            return err;
        if (flag >= flag_limit)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "flag %u is not valid here", flag);
        std::shared_ptr<Context> ctx;
        if (aclError err = rt.current_context(ctx))
            return err;
        if (s->context != ctx->token)
            return fail(ACL_ERROR_RT_STREAM_CONTEXT, "the stream is not of the current context");
    }
    if (aclError err = require_uapi(*s, 10, "value jobs"))
        return err;
    return locate_word(devAddr, s, handle, offset);
}

} // namespace

aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    return api("aclrtValueWrite", [&] {
        std::shared_ptr<Stream> s;
        uint32_t handle = 0;
        uint64_t offset = 0;
        // The only flag CANN takes is 0.
        if (aclError err = value_job(devAddr, flag, 1, stream, s, handle, offset))
            return err;
        aclmdlRITaskParams task;
        std::memset(&task, 0, sizeof(task));
        task.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
        task.valueWriteTaskParams = {devAddr, value};
        if (captured(*s, "aclrtValueWrite",
                     [=](aclrtStream to) { return aclrtValueWrite(devAddr, value, flag, to); }, &task))
            return ACL_SUCCESS;
        return submit(*s, prep_write_value(handle, offset, value));
    });
}

aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    return api("aclrtValueWait", [&] {
        std::shared_ptr<Stream> s;
        uint32_t handle = 0;
        uint64_t offset = 0;
        if (aclError err = value_job(devAddr, flag, ACL_STREAM_WAIT_VALUE_NOR + 1, stream, s, handle,
                                     offset))
            return err;
        aclmdlRITaskParams task;
        std::memset(&task, 0, sizeof(task));
        task.type = ACL_MODEL_RI_TASK_VALUE_WAIT;
        task.valueWaitTaskParams = {devAddr, value, flag};
        if (captured(*s, "aclrtValueWait",
                     [=](aclrtStream to) { return aclrtValueWait(devAddr, value, flag, to); }, &task))
            return ACL_SUCCESS;
        // As CANN, no timeout: an abort, a forced destroy or a reset ends it.
        return submit(*s, prep_wait_value(handle, offset, static_cast<Job::Compare>(flag), value));
    });
}
