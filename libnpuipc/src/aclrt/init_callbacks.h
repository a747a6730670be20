// SPDX-License-Identifier: MIT
// The callbacks CANN's components register to run inside aclInit and
// aclFinalize (aclInitCallbackRegister and friends, aclrt_init(3)).
#ifndef NPUIPC_ACLRT_INIT_CALLBACKS_H
#define NPUIPC_ACLRT_INIT_CALLBACKS_H

#include <mutex>
#include <string>

#include "acl/acl_rt.h"

namespace npuipc_rt {

// Serialises aclInit, aclFinalize, aclFinalizeReference and the init
// callbacks' registration, and is held while callbacks run; recursive, as a
// callback may register another.
std::recursive_mutex &init_mu();

// Runs the init callbacks aclInit runs, in CANN's order of component types
// (the op executor's only when a configuration file was given); the first
// failure's code, or ACL_SUCCESS. With init_mu held.
aclError run_init_callbacks(const std::string &config, bool config_given);

// Runs the finalize callbacks, in CANN's order of component types; the
// first failure's code, or ACL_SUCCESS. With init_mu held.
aclError run_finalize_callbacks();

// aclInit succeeded with the configuration `config`: init callbacks
// registered from now on run at once with it. With init_mu held.
void set_init_config(const std::string &config);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_INIT_CALLBACKS_H
