// SPDX-License-Identifier: MIT
// A strict JSON reader (RFC 8259 values, no extensions), just big enough to
// validate aclInit's file and pick out the settings libnpuipc honours.
#include "aclrt/config.h"

#include <cctype>
#include <cstdlib>

namespace npuipc_rt {
namespace {

class Parser {
public:
    explicit Parser(const std::string &text) : s_(text) {}

    // Parses the whole document, noting the settings it knows by their
    // dotted path.
    bool document(Config &config)
    {
        config_ = &config;
        skip_ws();
        if (!value(0, ""))
            return false;
        skip_ws();
        return pos_ == s_.size();
    }
    bool bad_default_device = false;

private:
    bool value(int depth, const std::string &key)
    {
        if (depth > 64 || pos_ >= s_.size())
            return false;
        char c = s_[pos_];
        if (c == '{')
            return object(depth, key);
        if (c == '[')
            return array(depth);
        std::string scalar;
        bool is_string = c == '"';
        if (is_string ? !string(scalar) : !literal(scalar))
            return false;
        if (key == "defaultDevice.default_device")
            set_default_device(scalar);
        return true;
    }

    void set_default_device(const std::string &text)
    {
        char *end = nullptr;
        long v = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end || v < 0 || v > 1024) {
            bad_default_device = true;
            return;
        }
        config_->default_device = static_cast<int>(v);
    }

    bool object(int depth, const std::string &path)
    {
        pos_++; // {
        skip_ws();
        if (peek('}')) {
            pos_++;
            return true;
        }
        for (;;) {
            std::string name;
            skip_ws();
            if (!peek('"') || !string(name))
                return false;
            skip_ws();
            if (!peek(':'))
                return false;
            pos_++;
            skip_ws();
            if (!value(depth + 1, path.empty() ? name : path + "." + name))
                return false;
            skip_ws();
            if (peek(',')) {
                pos_++;
                continue;
            }
            if (peek('}')) {
                pos_++;
                return true;
            }
            return false;
        }
    }

    bool array(int depth)
    {
        pos_++; // [
        skip_ws();
        if (peek(']')) {
            pos_++;
            return true;
        }
        for (;;) {
            skip_ws();
            if (!value(depth + 1, "[]"))
                return false;
            skip_ws();
            if (peek(',')) {
                pos_++;
                continue;
            }
            if (peek(']')) {
                pos_++;
                return true;
            }
            return false;
        }
    }

    bool string(std::string &out)
    {
        pos_++; // "
        while (pos_ < s_.size()) {
            char c = s_[pos_++];
            if (c == '"')
                return true;
            if (static_cast<unsigned char>(c) < 0x20)
                return false;
            if (c == '\\') {
                if (pos_ >= s_.size())
                    return false;
                char e = s_[pos_++];
                if (e == 'u') {
                    for (int i = 0; i < 4; i++)
                        if (pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_++])))
                            return false;
                    out += '?';
                    continue;
                }
                static const std::string escapes = "\"\\/bfnrt";
                if (escapes.find(e) == std::string::npos)
                    return false;
                out += e;
                continue;
            }
            out += c;
        }
        return false;
    }

    bool literal(std::string &out)
    {
        size_t start = pos_;
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                    s_[pos_] == '-' || s_[pos_] == '+' || s_[pos_] == '.'))
            pos_++;
        out = s_.substr(start, pos_ - start);
        if (out == "true" || out == "false" || out == "null")
            return true;
        // A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
        size_t i = 0;
        auto digits = [&] {
            size_t n = 0;
            while (i < out.size() && std::isdigit(static_cast<unsigned char>(out[i])))
                i++, n++;
            return n;
        };
        if (i < out.size() && out[i] == '-')
            i++;
        if (i < out.size() && out[i] == '0')
            i++;
        else if (digits() == 0)
            return false;
        if (i < out.size() && out[i] == '.') {
            i++;
            if (digits() == 0)
                return false;
        }
        if (i < out.size() && (out[i] == 'e' || out[i] == 'E')) {
            i++;
            if (i < out.size() && (out[i] == '+' || out[i] == '-'))
                i++;
            if (digits() == 0)
                return false;
        }
        return i == out.size();
    }

    bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
    void skip_ws()
    {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            pos_++;
    }

    const std::string &s_;
    size_t pos_ = 0;
    Config *config_ = nullptr;
};

} // namespace

ConfigError parse_config(const std::string &text, Config &out)
{
    Config config;
    Parser parser(text);
    if (!parser.document(config))
        return ConfigError::Malformed;
    if (parser.bad_default_device)
        return ConfigError::BadDefaultDevice;
    out = config;
    return ConfigError::None;
}

} // namespace npuipc_rt
