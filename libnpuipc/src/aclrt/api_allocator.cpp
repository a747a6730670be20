// SPDX-License-Identifier: MIT
// External allocators (acl/acl_rt_allocator.h): a registry of the
// application's allocators by stream. As in CANN, the runtime itself never
// calls them; the components above it that allocate per stream (CANN's
// operator and model executors) look them up with aclrtAllocatorGetByStream.
//
// Descriptors are tokens of this registry, like every handle of the
// runtime: an unknown or destroyed one is ACL_ERROR_INVALID_PARAM, never a
// dereference. Streams are keys, not checked, as CANN keys them: an entry
// outlives its stream until aclrtAllocatorUnregister.
#include <cstdint>
#include <map>
#include <mutex>

#include "aclrt/runtime.h"

using namespace npuipc_rt;

namespace {

struct AllocatorFuncs {
    aclrtAllocator obj = nullptr;
    aclrtAllocatorAllocFunc alloc = nullptr;
    aclrtAllocatorFreeFunc free = nullptr;
    aclrtAllocatorAllocAdviseFunc advise = nullptr; // optional
    aclrtAllocatorGetAddrFromBlockFunc addr = nullptr;
};

struct Registration {
    uintptr_t desc = 0;   // the descriptor given, handed back as it was
    AllocatorFuncs funcs; // copied at registration
};

struct AllocatorRegistry {
    std::mutex mu; // protects what follows
    std::map<uintptr_t, AllocatorFuncs> descs;
    std::map<uintptr_t, Registration> by_stream;
    // Apart from the runtime's object tokens, and never 0.
    uintptr_t next_desc = uintptr_t{0xa110c} << 16;
};

// Never destroyed: an allocator may be looked up while the process exits.
AllocatorRegistry &registry()
{
    static AllocatorRegistry *r = new AllocatorRegistry;
    return *r;
}

// Sets one member of a live descriptor; `value` NULL is refused, as CANN.
template <typename T>
aclError set_in_desc(const char *name, aclrtAllocatorDesc desc, T value, T AllocatorFuncs::*member)
{
    return api(name, [&] {
        if (!desc)
            return fail(ACL_ERROR_INVALID_PARAM, "allocatorDesc is NULL");
        if (!value)
            return fail(ACL_ERROR_INVALID_PARAM, "the value to set is NULL");
        AllocatorRegistry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        auto it = r.descs.find(reinterpret_cast<uintptr_t>(desc));
        if (it == r.descs.end())
            return fail(ACL_ERROR_INVALID_PARAM, "%p is not a live allocator descriptor", desc);
        it->second.*member = value;
        return ACL_SUCCESS;
    });
}

} // namespace

extern "C" {

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
    aclrtAllocatorDesc desc = nullptr;
    (void)api("aclrtAllocatorCreateDesc", [&] {
        AllocatorRegistry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        const uintptr_t token = r.next_desc++;
        r.descs.emplace(token, AllocatorFuncs());
        desc = reinterpret_cast<aclrtAllocatorDesc>(token);
        return ACL_SUCCESS;
    });
    return desc;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
    return api("aclrtAllocatorDestroyDesc", [&] {
        if (!allocatorDesc)
            return fail(ACL_ERROR_INVALID_PARAM, "allocatorDesc is NULL");
        AllocatorRegistry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        // Registrations keep their copy of the functions, as CANN's.
        if (!r.descs.erase(reinterpret_cast<uintptr_t>(allocatorDesc)))
            return fail(ACL_ERROR_INVALID_PARAM, "%p is not a live allocator descriptor", allocatorDesc);
        return ACL_SUCCESS;
    });
}

aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator)
{
    return set_in_desc("aclrtAllocatorSetObjToDesc", allocatorDesc, allocator, &AllocatorFuncs::obj);
}

aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocFunc func)
{
    return set_in_desc("aclrtAllocatorSetAllocFuncToDesc", allocatorDesc, func, &AllocatorFuncs::alloc);
}

aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorFreeFunc func)
{
    return set_in_desc("aclrtAllocatorSetFreeFuncToDesc", allocatorDesc, func, &AllocatorFuncs::free);
}

aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                aclrtAllocatorAllocAdviseFunc func)
{
    return set_in_desc("aclrtAllocatorSetAllocAdviseFuncToDesc", allocatorDesc, func,
                       &AllocatorFuncs::advise);
}

aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                     aclrtAllocatorGetAddrFromBlockFunc func)
{
    return set_in_desc("aclrtAllocatorSetGetAddrFromBlockFuncToDesc", allocatorDesc, func,
                       &AllocatorFuncs::addr);
}

aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)
{
    return api("aclrtAllocatorRegister", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL: the default stream takes no allocator");
        if (!allocatorDesc)
            return fail(ACL_ERROR_INVALID_PARAM, "allocatorDesc is NULL");
        AllocatorRegistry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        auto it = r.descs.find(reinterpret_cast<uintptr_t>(allocatorDesc));
        if (it == r.descs.end())
            return fail(ACL_ERROR_INVALID_PARAM, "%p is not a live allocator descriptor", allocatorDesc);
        const AllocatorFuncs &f = it->second;
        if (!f.obj || !f.alloc || !f.free || !f.addr)
            return fail(ACL_ERROR_INVALID_PARAM,
                        "the descriptor lacks its allocator, alloc, free or get-address function");
        // Registering again on a stream replaces its allocator.
        r.by_stream[reinterpret_cast<uintptr_t>(stream)] =
            Registration{reinterpret_cast<uintptr_t>(allocatorDesc), f};
        return ACL_SUCCESS;
    });
}

aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
                                   aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
                                   aclrtAllocatorFreeFunc *freeFunc,
                                   aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
                                   aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
    return api("aclrtAllocatorGetByStream", [&] {
        if (!allocatorDesc)
            return fail(ACL_ERROR_INVALID_PARAM, "allocatorDesc is NULL");
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        AllocatorRegistry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        auto it = r.by_stream.find(reinterpret_cast<uintptr_t>(stream));
        // Callers take this code for "no allocator of the application's".
        if (it == r.by_stream.end())
            return fail(ACL_ERROR_INVALID_PARAM, "no allocator is registered on stream %p", stream);
        const Registration &reg = it->second;
        *allocatorDesc = reinterpret_cast<aclrtAllocatorDesc>(reg.desc);
        if (allocator)
            *allocator = reg.funcs.obj;
        if (allocFunc)
            *allocFunc = reg.funcs.alloc;
        if (freeFunc)
            *freeFunc = reg.funcs.free;
        if (allocAdviseFunc)
            *allocAdviseFunc = reg.funcs.advise;
        if (getAddrFromBlockFunc)
            *getAddrFromBlockFunc = reg.funcs.addr;
        return ACL_SUCCESS;
    });
}

aclError aclrtAllocatorUnregister(aclrtStream stream)
{
    return api("aclrtAllocatorUnregister", [&] {
        if (!stream)
            return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
        AllocatorRegistry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        r.by_stream.erase(reinterpret_cast<uintptr_t>(stream)); // none registered: no error, as CANN
        return ACL_SUCCESS;
    });
}

} // extern "C"
