// SPDX-License-Identifier: MIT
// The tasks a stream runs, as typed values. Each prep_* function makes one
// task, in the manner of liburing's io_uring_prep_*; Device::submit queues
// a batch of them on a stream, where the driver runs them in order.
#ifndef NPUIPC_JOB_H
#define NPUIPC_JOB_H

#include <cstdint>

namespace npuipc {

struct Job {
    enum class Kind : uint32_t {
        Copy = 1,
        Fill = 2,
        WaitEvent = 5,
        WaitNotify = 6,
        RecordEvent = 7,
        RecordNotify = 8,
        ResetNotify = 9,
        WriteValue = 10,
        WaitValue = 11,
    };
    // How a WaitValue job compares the word w with `value`.
    enum class Compare : uint32_t {
        AtLeast = 0,    // (int64_t)(w - value) >= 0: counters that wrap
        Equal = 1,      // w == value
        AnyBit = 2,     // (w & value) != 0
        NotAllBits = 3, // ~(w | value) != 0
        Below = 4,      // w < value (unsigned)
        Above = 5,      // w > value (unsigned)
        NotBelow = 6,   // w >= value (unsigned)
        AllBits = 7,    // (w & value) == value
    };
    // How a WriteValue job puts `value` into the word w.
    enum class Update : uint32_t { Set = 0, Add = 1, Or = 2, And = 3 };
    Kind kind = Kind::Copy;
    uint32_t dst = 0; // buffer handles
    uint32_t src = 0;
    uint64_t dst_offset = 0;
    uint64_t src_offset = 0;
    uint64_t size = 0;
    uint64_t value = 0;      // a fill's byte, a value job's word
    uint32_t object = 0;     // an event or notify handle
    Compare compare = Compare::AtLeast; // a WaitValue's
    bool clear = false;                 // a WaitValue's: the word set to 0 as it ends
    Update update = Update::Set;        // a WriteValue's
    bool fill_words = false;            // a Fill of 32-bit words: value is the word
    uint64_t timeout_ns = 0; // of a wait; 0 waits without limit
};

// The most jobs one Device::submit takes.
constexpr uint32_t kMaxJobsPerSubmit = 256;

// `size` bytes from buffer `src` at `src_offset` to buffer `dst` at
// `dst_offset`; ranges of one buffer must not overlap.
Job prep_copy(uint32_t dst, uint64_t dst_offset, uint32_t src, uint64_t src_offset,
              uint64_t size) noexcept;
// `size` bytes of buffer `dst` from `offset` on set to `byte`.
Job prep_fill(uint32_t dst, uint64_t offset, uint64_t size, uint8_t byte) noexcept;
// `size` bytes of buffer `dst` from `offset` on (both multiples of 4) set
// to the 32-bit `word`, word by word.
Job prep_fill_u32(uint32_t dst, uint64_t offset, uint64_t size, uint32_t word) noexcept;
// The event's record: done when every earlier task of the stream is.
Job prep_record_event(uint32_t event) noexcept;
// Holds the stream until the event's record made before this submit is
// done; a positive timeout fails the stream with ETIME when it passes.
Job prep_wait_event(uint32_t event, uint64_t timeout_ns = 0) noexcept;
// Sets the notify when the stream gets there, releasing one waiter.
Job prep_record_notify(uint32_t notify) noexcept;
// Holds the stream until the notify is set, and clears it.
Job prep_wait_notify(uint32_t notify, uint64_t timeout_ns = 0) noexcept;
// Clears the notify when the stream gets there.
Job prep_reset_notify(uint32_t notify) noexcept;
// Stores the 64-bit `value` at `offset` (8-byte aligned) of buffer `dst`,
// or adds it, ORs it or ANDs it in, atomically with other value jobs.
Job prep_write_value(uint32_t dst, uint64_t offset, uint64_t value,
                     Job::Update update = Job::Update::Set) noexcept;
// Holds the stream until the 64-bit word at `offset` (8-byte aligned) of
// buffer `dst` compares true with `value`; a positive timeout fails the
// stream with ETIMEDOUT when it passes.
Job prep_wait_value(uint32_t dst, uint64_t offset, Job::Compare compare, uint64_t value,
                    uint64_t timeout_ns = 0, bool clear = false) noexcept;

} // namespace npuipc

#endif // NPUIPC_JOB_H
