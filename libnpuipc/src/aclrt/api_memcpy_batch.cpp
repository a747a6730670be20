// SPDX-License-Identifier: MIT
// Batch copies: copy k takes sizes[k] bytes from srcs[k] to dsts[k], each
// between host and device memory; attrs[j] says where the memory of copies
// attrsIndexes[j] up to the next index lies. Every copy is checked before
// any is made: the synchronous batch copies them all with the CPU, the
// asynchronous one queues each as aclrtMemcpyAsync would. *failIndex names
// the copy a check refused (SIZE_MAX when none, or none in particular).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "aclrt/memory_place.h"
#include "aclrt/runtime.h"

using namespace npuipc;
using namespace npuipc_rt;

namespace {

// CANN's driver takes at most this many copies in one synchronous batch.
constexpr size_t kMaxSyncBatch = 4096;

struct Batch {
    void **dsts;
    size_t *destMaxs;
    void **srcs;
    size_t *sizes;
    size_t numBatches;
    aclrtMemcpyBatchAttr *attrs;
    size_t *attrsIndexes;
    size_t numAttrs;
};

// The checks CANN's acl layer makes: ACL_ERROR_INVALID_PARAM. `empty`:
// every size is 0, nothing to do.
aclError check_batch_args(const Batch &b, bool &empty)
{
    if (!b.sizes || b.numBatches == 0)
        return fail(ACL_ERROR_INVALID_PARAM, "sizes is NULL or numBatches is 0");
    empty = true;
    for (size_t i = 0; i < b.numBatches && empty; i++)
        empty = b.sizes[i] == 0;
    if (empty)
        return ACL_SUCCESS;
    if (!b.dsts || !b.destMaxs || !b.srcs || !b.attrs || !b.attrsIndexes)
        return fail(ACL_ERROR_INVALID_PARAM, "dsts, destMaxs, srcs, attrs and attrsIndexes must not be NULL");
    for (size_t i = 0; i < b.numBatches; i++)
        if (b.destMaxs[i] < b.sizes[i])
            return fail(ACL_ERROR_INVALID_PARAM, "copy %zu: size %zu is larger than destMax %zu", i,
                        b.sizes[i], b.destMaxs[i]);
    for (size_t j = 0; j < b.numAttrs; j++)
        for (uint8_t byte : b.attrs[j].rsv)
            if (byte)
                return fail(ACL_ERROR_INVALID_PARAM, "attrs[%zu].rsv is not zero", j);
    return ACL_SUCCESS;
}

// As CANN compares them: NUMA host memory is host memory, and an
// attribute never says UNREGISTERED (the application's own memory is host).
bool is_host(aclrtMemLocationType t)
{
    return t == ACL_MEM_LOCATION_TYPE_HOST || t == ACL_MEM_LOCATION_TYPE_HOST_NUMA;
}

// Whether `loc` says where `p` (found at `place`) lies.
bool location_matches(Runtime &rt, const aclrtMemLocation &loc, const Place &place)
{
    if (!place.alloc)
        return is_host(loc.type);
    if (loc.type != ACL_MEM_LOCATION_TYPE_DEVICE)
        return false;
    std::lock_guard<std::mutex> lock(rt.mu);
    return rt.logical_id(place.alloc->device) == static_cast<int32_t>(loc.id);
}

// The runtime's checks, copy by copy, where each copy's memory is kept in
// `places` (held until the copies are made); `*failIndex` names a refused
// copy. `stream`: the asynchronous batch's, whose device must reach the
// memory as aclrtMemcpyAsync's does.
aclError check_batch_copies(Runtime &rt, const Batch &b, Stream *stream, size_t *failIndex,
                            std::vector<std::pair<Place, Place>> &places)
{
    const bool async = stream != nullptr;
    if (b.numAttrs == 0 || b.numAttrs > b.numBatches)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "numAttrs %zu: 1 to numBatches (%zu)", b.numAttrs,
                    b.numBatches);
    if (!async && b.numBatches > kMaxSyncBatch)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "%zu copies: at most %zu in one batch", b.numBatches,
                    kMaxSyncBatch);
    if (b.attrsIndexes[0] != 0)
        return fail(ACL_ERROR_RT_PARAM_INVALID, "attrsIndexes[0] is %zu, not 0", b.attrsIndexes[0]);
    for (size_t j = 1; j < b.numAttrs; j++)
        if (b.attrsIndexes[j] <= b.attrsIndexes[j - 1] || b.attrsIndexes[j] >= b.numBatches)
            return fail(ACL_ERROR_RT_PARAM_INVALID, "attrsIndexes must rise, below numBatches");
    if (stream) {
        if (aclError err = stopped_context_error(*stream))
            return err;
    }
    places.assign(b.numBatches, {});
    size_t attr = 0;
    for (size_t i = 0; i < b.numBatches; i++) {
        if (attr + 1 < b.numAttrs && i == b.attrsIndexes[attr + 1])
            attr++;
        if ((async && b.sizes[i] == 0) || !b.dsts[i] || !b.srcs[i]) {
            *failIndex = i;
            return fail(ACL_ERROR_RT_PARAM_INVALID, "copy %zu: a NULL pointer%s", i,
                        async ? " or a size of 0" : "");
        }
        // A synchronous copy of 0 bytes is checked where its pointers lie.
        const size_t span = std::max<size_t>(b.sizes[i], 1);
        Place &d = places[i].first, &s = places[i].second;
        if (aclError err = locate(rt, b.dsts[i], span, d)) {
            *failIndex = i;
            return err;
        }
        if (aclError err = locate(rt, b.srcs[i], span, s)) {
            *failIndex = i;
            return err;
        }
        const aclrtMemcpyBatchAttr &a = b.attrs[attr];
        if (!location_matches(rt, a.dstLoc, d) || !location_matches(rt, a.srcLoc, s)) {
            *failIndex = i;
            return fail(ACL_ERROR_RT_PARAM_INVALID, "copy %zu: its memory is not where attrs[%zu] says", i,
                        attr);
        }
        if (!d.alloc == !s.alloc) {
            *failIndex = i;
            return fail(ACL_ERROR_RT_PARAM_INVALID,
                        "copy %zu: a batch copies between host and device memory only", i);
        }
        if (stream) {
            aclError err = check_peer(rt, stream->device, d);
            if (!err)
                err = check_peer(rt, stream->device, s);
            if (err) {
                *failIndex = i;
                return err;
            }
        }
    }
    return ACL_SUCCESS;
}

// The V2 calls have no failIndex: `failIndex` is then null, and
// `reports_index` false.
aclError batch(const char *name, const Batch &b, size_t *failIndex, bool reports_index, bool async,
               aclrtStream stream)
{
    size_t ignored = 0;
    return api(name, [&] {
        if (reports_index && !failIndex)
            return fail(ACL_ERROR_INVALID_PARAM, "failIndex is NULL");
        size_t *fail_at = failIndex ? failIndex : &ignored;
        bool empty = false;
        if (aclError err = check_batch_args(b, empty))
            return err;
        if (empty) {
            *fail_at = SIZE_MAX;
            return ACL_SUCCESS;
        }
        std::shared_ptr<Stream> s;
        if (async) {
            if (aclError err = find_stream(stream, s))
                return err;
        }
        *fail_at = SIZE_MAX;
        Runtime &rt = Runtime::get();
        // Holding each copy's memory: a free racing the batch cannot unmap it.
        std::vector<std::pair<Place, Place>> places;
        if (aclError err = check_batch_copies(rt, b, s.get(), fail_at, places))
            return err;
        for (size_t i = 0; i < b.numBatches; i++) {
            if (b.sizes[i] == 0)
                continue;
            if (!async) {
                std::memmove(b.dsts[i], b.srcs[i], b.sizes[i]);
                continue;
            }
            if (aclError err = copy_async(b.dsts[i], b.destMaxs[i], b.srcs[i], b.sizes[i], ACL_MEMCPY_DEFAULT,
                                          stream)) {
                *fail_at = i;
                return err;
            }
        }
        return ACL_SUCCESS;
    });
}

} // namespace

extern "C" {

aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                          aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs,
                          size_t *failIndex)
{
    return batch("aclrtMemcpyBatch", {dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs},
                 failIndex, true, false, nullptr);
}

aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                            aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs)
{
    return batch("aclrtMemcpyBatchV2",
                 {dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs}, nullptr, false, false,
                 nullptr);
}

aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                               aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs,
                               size_t *failIndex, aclrtStream stream)
{
    return batch("aclrtMemcpyBatchAsync",
                 {dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs}, failIndex, true, true,
                 stream);
}

aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                 size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                                 size_t numAttrs, aclrtStream stream)
{
    return batch("aclrtMemcpyBatchAsyncV2",
                 {dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs}, nullptr, false, true,
                 stream);
}

} // extern "C"
