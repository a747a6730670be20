// SPDX-License-Identifier: MIT
// aclInit's JSON configuration file: what libnpuipc reads of it.
#ifndef NPUIPC_ACLRT_CONFIG_H
#define NPUIPC_ACLRT_CONFIG_H

#include <string>

namespace npuipc_rt {

struct Config {
    int default_device = -1; // {"defaultDevice":{"default_device":"N"}}
};

enum class ConfigError { None, Malformed, BadDefaultDevice };

// Parses a whole JSON document; keys other than the ones above are ignored.
ConfigError parse_config(const std::string &text, Config &out);

} // namespace npuipc_rt

#endif // NPUIPC_ACLRT_CONFIG_H
