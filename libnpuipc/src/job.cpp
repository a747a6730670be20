// SPDX-License-Identifier: MIT
#include "npuipc/job.h"

#include "drm/npuipc_drm.h"

namespace npuipc {

static_assert(kMaxJobsPerSubmit == NPUIPC_MAX_JOBS_PER_SUBMIT);
static_assert(static_cast<uint32_t>(Job::Kind::Copy) == NPUIPC_JOB_COPY);
static_assert(static_cast<uint32_t>(Job::Kind::Fill) == NPUIPC_JOB_FILL);
static_assert(static_cast<uint32_t>(Job::Kind::WaitEvent) == NPUIPC_JOB_WAIT_EVENT);
static_assert(static_cast<uint32_t>(Job::Kind::WaitNotify) == NPUIPC_JOB_WAIT_NOTIFY);
static_assert(static_cast<uint32_t>(Job::Kind::RecordEvent) == NPUIPC_JOB_RECORD_EVENT);
static_assert(static_cast<uint32_t>(Job::Kind::RecordNotify) == NPUIPC_JOB_RECORD_NOTIFY);
static_assert(static_cast<uint32_t>(Job::Kind::ResetNotify) == NPUIPC_JOB_RESET_NOTIFY);
static_assert(static_cast<uint32_t>(Job::Kind::WriteValue) == NPUIPC_JOB_WRITE_VALUE);
static_assert(static_cast<uint32_t>(Job::Kind::WaitValue) == NPUIPC_JOB_WAIT_VALUE);
static_assert(static_cast<uint32_t>(Job::Compare::AtLeast) == NPUIPC_WAIT_VALUE_GEQ);
static_assert(static_cast<uint32_t>(Job::Compare::Equal) == NPUIPC_WAIT_VALUE_EQ);
static_assert(static_cast<uint32_t>(Job::Compare::AnyBit) == NPUIPC_WAIT_VALUE_AND);
static_assert(static_cast<uint32_t>(Job::Compare::NotAllBits) == NPUIPC_WAIT_VALUE_NOR);
static_assert(static_cast<uint32_t>(Job::Compare::Below) == NPUIPC_WAIT_VALUE_LT);
static_assert(static_cast<uint32_t>(Job::Compare::Above) == NPUIPC_WAIT_VALUE_GT);
static_assert(static_cast<uint32_t>(Job::Compare::NotBelow) == NPUIPC_WAIT_VALUE_GE);
static_assert(static_cast<uint32_t>(Job::Compare::AllBits) == NPUIPC_WAIT_VALUE_ALL);
static_assert(static_cast<uint32_t>(Job::Update::Set) == NPUIPC_WRITE_VALUE_SET);
static_assert(static_cast<uint32_t>(Job::Update::Add) == NPUIPC_WRITE_VALUE_ADD);
static_assert(static_cast<uint32_t>(Job::Update::Or) == NPUIPC_WRITE_VALUE_OR);
static_assert(static_cast<uint32_t>(Job::Update::And) == NPUIPC_WRITE_VALUE_AND);

namespace {

Job on_object(Job::Kind kind, uint32_t object, uint64_t timeout_ns = 0) noexcept
{
    Job job;
    job.kind = kind;
    job.object = object;
    job.timeout_ns = timeout_ns;
    return job;
}

} // namespace

Job prep_copy(uint32_t dst, uint64_t dst_offset, uint32_t src, uint64_t src_offset,
              uint64_t size) noexcept
{
    Job job;
    job.kind = Job::Kind::Copy;
    job.dst = dst;
    job.dst_offset = dst_offset;
    job.src = src;
    job.src_offset = src_offset;
    job.size = size;
    return job;
}

Job prep_fill(uint32_t dst, uint64_t offset, uint64_t size, uint8_t byte) noexcept
{
    Job job;
    job.kind = Job::Kind::Fill;
    job.dst = dst;
    job.dst_offset = offset;
    job.size = size;
    job.value = byte;
    return job;
}

Job prep_fill_u32(uint32_t dst, uint64_t offset, uint64_t size, uint32_t word) noexcept
{
    Job job = prep_fill(dst, offset, size, 0);
    job.fill_words = true;
    job.value = word;
    return job;
}

Job prep_record_event(uint32_t event) noexcept
{
    return on_object(Job::Kind::RecordEvent, event);
}

Job prep_wait_event(uint32_t event, uint64_t timeout_ns) noexcept
{
    return on_object(Job::Kind::WaitEvent, event, timeout_ns);
}

Job prep_record_notify(uint32_t notify) noexcept
{
    return on_object(Job::Kind::RecordNotify, notify);
}

Job prep_wait_notify(uint32_t notify, uint64_t timeout_ns) noexcept
{
    return on_object(Job::Kind::WaitNotify, notify, timeout_ns);
}

Job prep_reset_notify(uint32_t notify) noexcept
{
    return on_object(Job::Kind::ResetNotify, notify);
}

Job prep_write_value(uint32_t dst, uint64_t offset, uint64_t value, Job::Update update) noexcept
{
    Job job;
    job.kind = Job::Kind::WriteValue;
    job.dst = dst;
    job.dst_offset = offset;
    job.value = value;
    job.update = update;
    return job;
}

Job prep_wait_value(uint32_t dst, uint64_t offset, Job::Compare compare, uint64_t value,
                    uint64_t timeout_ns, bool clear) noexcept
{
    Job job;
    job.kind = Job::Kind::WaitValue;
    job.dst = dst;
    job.dst_offset = offset;
    job.compare = compare;
    job.value = value;
    job.timeout_ns = timeout_ns;
    job.clear = clear;
    return job;
}

} // namespace npuipc
