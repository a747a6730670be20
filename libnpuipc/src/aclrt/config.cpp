// SPDX-License-Identifier: MIT
// aclInit's file, read with nlohmann/json (as CANN's runtime reads it):
// strict JSON, and only the settings libnpuipc honours picked out.
#include "aclrt/config.h"

#include <nlohmann/json.hpp>

#include <cstdlib>

namespace npuipc_rt {
namespace {

// default_device as CANN writes it ("0") or as a number: a device id or -1.
int device_id(const nlohmann::json &value)
{
    if (value.is_number_unsigned())
        return value.get<uint64_t>() <= 1024 ? static_cast<int>(value.get<uint64_t>()) : -1;
    if (value.is_number_integer())
        return -1; // negative
    if (!value.is_string())
        return -1;
    const std::string &text = value.get_ref<const std::string &>();
    char *end = nullptr;
    long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end || v < 0 || v > 1024)
        return -1;
    return static_cast<int>(v);
}

} // namespace

ConfigError parse_config(const std::string &text, Config &out)
{
    // No exceptions: a document that is not valid JSON comes back discarded.
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded())
        return ConfigError::Malformed;
    Config config;
    if (doc.is_object()) {
        auto section = doc.find("defaultDevice");
        if (section != doc.end() && section->is_object()) {
            auto value = section->find("default_device");
            if (value != section->end()) {
                config.default_device = device_id(*value);
                if (config.default_device < 0)
                    return ConfigError::BadDefaultDevice;
            }
        }
    }
    out = config;
    return ConfigError::None;
}

} // namespace npuipc_rt
