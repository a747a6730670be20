// SPDX-License-Identifier: MIT
// External allocators (aclrt_allocator(3)): descriptors, registration by
// stream and the lookup CANN's executors make, with CANN's codes.
#include "acl_test_util.h"

using namespace acltest;

namespace {

class AclAllocatorTest : public AclTest {};

// An allocator of the application's over aclrtMalloc, counting its calls.
struct CountingAllocator {
    int allocs = 0, frees = 0;
};

struct Block {
    void *addr;
};

void *Alloc(aclrtAllocator allocator, size_t size)
{
    auto *a = static_cast<CountingAllocator *>(allocator);
    auto *b = new Block{nullptr};
    if (aclrtMalloc(&b->addr, size, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS) {
        delete b;
        return nullptr;
    }
    a->allocs++;
    return b;
}

void Free(aclrtAllocator allocator, aclrtAllocatorBlock block)
{
    auto *b = static_cast<Block *>(block);
    aclrtFree(b->addr);
    delete b;
    static_cast<CountingAllocator *>(allocator)->frees++;
}

void *Advise(aclrtAllocator, size_t, aclrtAllocatorAddr)
{
    return nullptr;
}

void *AddrOf(aclrtAllocatorBlock block)
{
    return static_cast<Block *>(block)->addr;
}

// A descriptor with every function of CountingAllocator set.
aclrtAllocatorDesc FullDesc(CountingAllocator *a)
{
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_NE(nullptr, d);
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorSetObjToDesc(d, a));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorSetAllocFuncToDesc(d, Alloc));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorSetFreeFuncToDesc(d, Free));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, AddrOf));
    return d;
}

// What a CANN executor does: looks the stream's allocator up, allocates
// through it, uses the memory on the stream and gives it back.
TEST_F(AclAllocatorTest, ARegisteredAllocatorIsFoundByItsStreamAndServesWorkOnIt)
{
    CountingAllocator counting;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    aclrtAllocatorDesc desc = FullDesc(&counting);
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorSetAllocAdviseFuncToDesc(desc, Advise));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorRegister(stream, desc));

    aclrtAllocatorDesc found = nullptr;
    aclrtAllocator obj = nullptr;
    aclrtAllocatorAllocFunc alloc = nullptr;
    aclrtAllocatorFreeFunc free_fn = nullptr;
    aclrtAllocatorAllocAdviseFunc advise = nullptr;
    aclrtAllocatorGetAddrFromBlockFunc addr_of = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorGetByStream(stream, &found, &obj, &alloc, &free_fn, &advise, &addr_of));
    EXPECT_EQ(desc, found);
    EXPECT_EQ(&counting, obj);
    EXPECT_EQ(&Alloc, alloc);
    EXPECT_EQ(&Free, free_fn);
    EXPECT_EQ(&Advise, advise);
    EXPECT_EQ(&AddrOf, addr_of);

    aclrtAllocatorBlock block = alloc(obj, 4096);
    ASSERT_NE(nullptr, block);
    void *p = addr_of(block);
    ASSERT_EQ(ACL_SUCCESS, aclrtMemsetAsync(p, 4096, 0x6B, 4096, stream));
    ASSERT_EQ(ACL_SUCCESS, aclrtSynchronizeStreamWithTimeout(stream, kSyncTimeoutMs));
    EXPECT_TRUE(BytesAre(p, 4096, 0x6B));
    free_fn(obj, block);
    EXPECT_EQ(1, counting.allocs);
    EXPECT_EQ(1, counting.frees);

    // Other out pointers are optional; unregistered, it is gone.
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorGetByStream(stream, &found, nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorUnregister(stream));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtAllocatorGetByStream(stream, &found, nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorUnregister(stream)); // none left: no error
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorDestroyDesc(desc));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

// A registration keeps the functions it was given: a later change of the
// descriptor, or its destruction, does not reach it; registering again
// replaces it.
TEST_F(AclAllocatorTest, ARegistrationKeepsItsFunctionsAndARegisterAgainReplacesThem)
{
    CountingAllocator first, second;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    aclrtAllocatorDesc d1 = FullDesc(&first);
    aclrtAllocatorDesc d2 = FullDesc(&second);
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorRegister(stream, d1));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorSetObjToDesc(d1, &second));
    aclrtAllocatorDesc found = nullptr;
    aclrtAllocator obj = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorGetByStream(stream, &found, &obj, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(&first, obj);
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorDestroyDesc(d1));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorGetByStream(stream, &found, &obj, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(d1, found);
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorRegister(stream, d2));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorGetByStream(stream, &found, &obj, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(d2, found);
    EXPECT_EQ(&second, obj);
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorUnregister(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorDestroyDesc(d2));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

TEST_F(AclAllocatorTest, AllocatorCallsRefuseNullsIncompleteAndUnknownDescriptorsWithCannsCode)
{
    CountingAllocator counting;
    aclrtStream stream = nullptr;
    ASSERT_EQ(ACL_SUCCESS, aclrtCreateStream(&stream));
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    ASSERT_NE(nullptr, d);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetObjToDesc(nullptr, &counting));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetObjToDesc(d, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetAllocFuncToDesc(d, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetFreeFuncToDesc(d, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetAllocAdviseFuncToDesc(d, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, nullptr));
    // Each of the four required members missing in turn.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(stream, d));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorSetObjToDesc(d, &counting));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(stream, d));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorSetAllocFuncToDesc(d, Alloc));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(stream, d));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorSetFreeFuncToDesc(d, Free));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(stream, d));
    ASSERT_EQ(ACL_SUCCESS, aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, AddrOf));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(nullptr, d)); // the default stream takes none
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(stream, nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorRegister(stream, d));
    aclrtAllocatorDesc found = nullptr;
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtAllocatorGetByStream(stream, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM,
              aclrtAllocatorGetByStream(nullptr, &found, nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorUnregister(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorUnregister(stream));
    EXPECT_EQ(ACL_SUCCESS, aclrtAllocatorDestroyDesc(d));
    // Destroyed or never made: refused, never dereferenced.
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorDestroyDesc(d));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetObjToDesc(d, &counting));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorRegister(stream, d));
    auto *bogus = reinterpret_cast<aclrtAllocatorDesc>(&counting);
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorSetAllocFuncToDesc(bogus, Alloc));
    EXPECT_EQ(ACL_ERROR_INVALID_PARAM, aclrtAllocatorDestroyDesc(nullptr));
    EXPECT_EQ(ACL_SUCCESS, aclrtDestroyStream(stream));
}

} // namespace
