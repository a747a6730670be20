// SPDX-License-Identifier: MIT
// aclInitCallbackRegister, aclInitCallbackUnRegister,
// aclFinalizeCallbackRegister, aclFinalizeCallbackUnRegister
// (aclrt_init(3)): CANN's components hook into aclInit and aclFinalize by
// component type. Each of CANN's own types holds one callback; ACL_REG_TYPE_OTHER
// holds any number, run in the order they were registered.
#include <map>
#include <new>
#include <pthread.h>
#include <utility>
#include <vector>

#include "aclrt/init_callbacks.h"
#include "aclrt/runtime.h"

using namespace npuipc_rt;

namespace {

template <typename Fn> using Registrations = std::multimap<int, std::pair<Fn, void *>>;

struct Registry {
    // Protects init, finalize and config.
    std::mutex mu;
    Registrations<aclInitCallbackFunc> init;
    Registrations<aclFinalizeCallbackFunc> finalize;
    // The configuration of the last aclInit that succeeded.
    std::string config;
};

// Never destroyed: a callback may be unregistered while the process exits.
// fork() does not wait for an aclInit or aclFinalize under way (their
// callbacks may wait for a thread that forks): the registry's lock, held
// only briefly, keeps the child's copy whole, and the child makes the
// serialising lock anew, as its owner may be a thread of the parent's.
Registry &registry()
{
    static Registry *r = [] {
        auto *made = new Registry;
        pthread_atfork([] { registry().mu.lock(); }, [] { registry().mu.unlock(); },
                       [] {
                           registry().mu.unlock();
                           new (&init_mu()) std::recursive_mutex();
                       });
        return made;
    }();
    return *r;
}

template <typename Fn> aclError add(Registrations<Fn> &to, int type, Fn fn, void *user_data)
{
    if (!fn)
        return fail(ACL_ERROR_INVALID_PARAM, "cbFunc is NULL");
    if (type != ACL_REG_TYPE_OTHER && to.count(type))
        return fail(ACL_ERROR_INTERNAL_ERROR,
                    "a callback of component type %d is registered already: each of CANN's component "
                    "types takes one (ACL_REG_TYPE_OTHER takes any number)",
                    type);
    to.emplace(type, std::make_pair(fn, user_data));
    return ACL_SUCCESS;
}

template <typename Fn> aclError remove(Registrations<Fn> &from, int type, Fn fn)
{
    if (!fn)
        return fail(ACL_ERROR_INVALID_PARAM, "cbFunc is NULL");
    auto range = from.equal_range(type);
    for (auto it = range.first; it != range.second; ++it)
        if (it->second.first == fn) {
            from.erase(it);
            return ACL_SUCCESS;
        }
    return fail(ACL_ERROR_INTERNAL_ERROR, "no such callback is registered for component type %d", type);
}

// The callbacks of `type`, copied so that they run without the registry's
// lock: a callback may register or unregister callbacks.
template <typename Fn> std::vector<std::pair<Fn, void *>> of_type(Registrations<Fn> Registry::*which, int type)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    std::vector<std::pair<Fn, void *>> out;
    auto range = (r.*which).equal_range(type);
    for (auto it = range.first; it != range.second; ++it)
        out.push_back(it->second);
    return out;
}

aclError callback_failed(const char *when, int type, aclError code)
{
    return fail(code, "a %s callback of component type %d failed", when, type);
}

} // namespace

namespace npuipc_rt {

// Never destroyed: aclFinalize may run while the process exits.
std::recursive_mutex &init_mu()
{
    static auto &mu = *new std::recursive_mutex;
    return mu;
}

aclError run_init_callbacks(const std::string &config, bool config_given)
{
    // The order in which CANN's aclInit initialises its components.
    for (int type : {ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_OP_EXECUTOR, ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER}) {
        if (type == ACL_REG_TYPE_ACL_OP_EXECUTOR && !config_given)
            continue;
        for (const auto &cb : of_type(&Registry::init, type))
            if (aclError err = cb.first(config.c_str(), config.size(), cb.second))
                return callback_failed("init", type, err);
    }
    return ACL_SUCCESS;
}

aclError run_finalize_callbacks()
{
    for (int type : {ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER})
        for (const auto &cb : of_type(&Registry::finalize, type))
            if (aclError err = cb.first(cb.second))
                return callback_failed("finalize", type, err);
    return ACL_SUCCESS;
}

void set_init_config(const std::string &config)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.config = config;
}

} // namespace npuipc_rt

extern "C" {

aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc, void *userData)
{
    return api("aclInitCallbackRegister", [&] {
        std::lock_guard<std::recursive_mutex> serial(init_mu());
        Registry &r = registry();
        std::string config;
        {
            std::lock_guard<std::mutex> lock(r.mu);
            if (aclError err = add(r.init, type, cbFunc, userData))
                return err;
            config = r.config;
        }
        bool now;
        {
            Runtime &rt = Runtime::get();
            std::lock_guard<std::mutex> lock(rt.mu);
            now = rt.init_references > 0 && !rt.forked;
        }
        // Registered after aclInit: it runs now, and, as in CANN, what it
        // returns does not undo the registration.
        if (now)
            (void)cbFunc(config.c_str(), config.size(), userData);
        return ACL_SUCCESS;
    });
}

aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc)
{
    return api("aclInitCallbackUnRegister", [&] {
        Registry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        return remove(r.init, type, cbFunc);
    });
}

aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc, void *userData)
{
    return api("aclFinalizeCallbackRegister", [&] {
        Registry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        return add(r.finalize, type, cbFunc, userData);
    });
}

aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc)
{
    return api("aclFinalizeCallbackUnRegister", [&] {
        Registry &r = registry();
        std::lock_guard<std::mutex> lock(r.mu);
        return remove(r.finalize, type, cbFunc);
    });
}

} // extern "C"
