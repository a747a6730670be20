// SPDX-License-Identifier: MIT
// Where the pointers of a copy or a set lie, and the checks every copy
// makes (api_memory.cpp), shared by the 1-D and 2-D copies.
#ifndef NPUIPC_ACLRT_MEMORY_PLACE_H
#define NPUIPC_ACLRT_MEMORY_PLACE_H

#include "aclrt/runtime.h"

namespace npuipc_rt {

// Where a pointer of a copy lies.
struct Place {
    std::shared_ptr<Allocation> alloc; // null: host memory
    uint64_t offset = 0;
};

// `count` bytes at `ptr`: inside one device allocation, or host memory;
// a range crossing an allocation's end is ACL_ERROR_RT_PARAM_INVALID.
aclError locate(Runtime &rt, const void *ptr, size_t count, Place &out);
// A copy's arguments and kind, checked against where its pointers lie.
aclError check_copy(Runtime &rt, void *dst, size_t destMax, const void *src, size_t count,
                    aclrtMemcpyKind kind, Place &d, Place &s);
// The device of the current context, which a synchronous copy or set
// works in: refused, as CANN's, once the context stopped on a failure.
aclError working_device(Runtime &rt, uint32_t &device);
// ACL_ERROR_RT_NO_PERMISSION unless `device` may reach the memory at `p`.
aclError check_peer(Runtime &rt, uint32_t device, const Place &p);
// Whether the stream has nothing left to run.
bool stream_idle(Stream &stream);
// `count` bytes at `ptr`: device memory of `device`, held in `hold` and
// reached at `at` for as long as it is held; `what` names it in the error.
aclError device_range(const void *ptr, size_t count, uint32_t device, const char *what,
                      std::shared_ptr<Allocation> &hold, void *&at);
// aclrtMemcpyAsync's work: checks, then a copy in the stream's order.
aclError copy_async(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                    aclrtStream handle);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_MEMORY_PLACE_H
