// SPDX-License-Identifier: MIT
// The functions the acl/ headers declare, read from the headers' text (the
// test programs get their directory as ACL_INCLUDE_DIR), and the table of
// every function in Documentation/library.md (LIBRARY_DOC).
#ifndef NPUIPC_TESTS_ACL_DECLARATIONS_H
#define NPUIPC_TESTS_ACL_DECLARATIONS_H

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace acl_test {

inline std::string read_text(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The text without comments and preprocessor lines (string literals kept).
inline std::string strip_c(const std::string &in)
{
    std::string out;
    bool line_start = true;
    for (size_t i = 0; i < in.size();) {
        char c = in[i];
        if (line_start && (c == ' ' || c == '\t')) {
            out += c;
            i++;
            continue;
        }
        if (line_start && c == '#') { // a directive, with its continuations
            while (i < in.size() && !(in[i] == '\n' && in[i - 1] != '\\'))
                i++;
            continue;
        }
        line_start = c == '\n';
        if (in.compare(i, 2, "/*") == 0) {
            size_t end = in.find("*/", i + 2);
            i = end == std::string::npos ? in.size() : end + 2;
            out += ' ';
        } else if (in.compare(i, 2, "//") == 0) {
            i = in.find('\n', i);
            if (i == std::string::npos)
                i = in.size();
        } else if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < in.size() && in[j] != c)
                j += in[j] == '\\' ? 2 : 1;
            out.append(in, i, j + 1 - i);
            i = j + 1;
        } else {
            out += c;
            i++;
        }
    }
    return out;
}

inline std::string trim(const std::string &s)
{
    size_t b = s.find_first_not_of(" \t\r\n");
    size_t e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e + 1 - b);
}

// A statement that declares a function: not a typedef, a name right before
// its first parenthesis (which does not open "(*": a pointer), and a type
// before the name. Attribute macros are removed first.
inline std::string declared_function(std::string stmt)
{
    for (const char *attr : {"ACL_DEPRECATED_MESSAGE", "__attribute__"}) {
        for (size_t at; (at = stmt.find(attr)) != std::string::npos;) {
            size_t open = stmt.find('(', at);
            int depth = 0;
            size_t j = open;
            for (; j < stmt.size(); j++) {
                depth += stmt[j] == '(' ? 1 : stmt[j] == ')' ? -1 : 0;
                if (depth == 0)
                    break;
            }
            stmt.erase(at, j + 1 - at);
        }
    }
    stmt = trim(stmt);
    if (stmt.rfind("typedef", 0) == 0)
        return "";
    size_t paren = stmt.find('(');
    if (paren == std::string::npos || stmt.back() != ')')
        return "";
    size_t after = stmt.find_first_not_of(" \t\n", paren + 1);
    if (after != std::string::npos && stmt[after] == '*')
        return "";
    size_t end = stmt.find_last_not_of(" \t\n", paren - 1);
    if (end == std::string::npos)
        return "";
    size_t begin = end + 1;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(stmt[begin - 1])) ||
                         stmt[begin - 1] == '_'))
        begin--;
    if (begin == end + 1 || std::isdigit(static_cast<unsigned char>(stmt[begin])) ||
        trim(stmt.substr(0, begin)).empty())
        return "";
    return stmt.substr(begin, end + 1 - begin);
}

struct Declaration {
    std::string name;
    std::string header; // "acl/acl_rt.h"
};

// Every function declared at file scope (or in extern "C") of the headers
// under `dir` (the acl/ directory), in the order of the files' names and
// then of their text. Definitions (acl_seed_compat.h's inline functions)
// are not declarations of the library's functions and are skipped.
// `visibility` counts ACL_FUNC_VISIBILITY outside directives: each
// declaration of CANN's headers carries it once, a cross-check of the reading.
inline std::vector<Declaration> acl_declarations(const std::string &dir,
                                                 size_t *visibility = nullptr)
{
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    for (const auto &entry : fs::recursive_directory_iterator(dir))
        if (entry.is_regular_file() && entry.path().extension() == ".h")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<Declaration> out;
    if (visibility)
        *visibility = 0;
    for (const fs::path &file : files) {
        std::string header = "acl/" + fs::relative(file, dir).generic_string();
        std::string text = strip_c(read_text(file.string()));
        for (size_t at = 0; (at = text.find("ACL_FUNC_VISIBILITY", at)) != std::string::npos; at++)
            if (visibility)
                ++*visibility;
        int depth = 0;
        std::string stmt;
        for (char c : text) {
            if (c == '{') {
                if (trim(stmt) != "extern \"C\"")
                    depth++;
                stmt.clear();
            } else if (c == '}') {
                if (depth > 0) // else the end of extern "C"
                    depth--;
                stmt.clear();
            } else if (c == ';') {
                if (depth == 0) {
                    std::string name = declared_function(stmt);
                    if (!name.empty())
                        out.push_back({name, header});
                }
                stmt.clear();
            } else {
                stmt += c;
            }
        }
    }
    return out;
}

struct DocRow {
    std::string header;
    std::string status; // "implemented", "not yet" or "not supported"
    std::string notes;
    int line = 0;
};

// The rows of library.md's table of every function, by function. Rows
// that repeat a function are returned in `repeated`.
inline std::map<std::string, DocRow> doc_table(const std::string &path,
                                               std::vector<std::string> &repeated)
{
    std::istringstream text(read_text(path));
    std::map<std::string, DocRow> rows;
    std::string line;
    int number = 0;
    bool in_table = false;
    while (std::getline(text, line)) {
        number++;
        if (!in_table) {
            in_table = line.rfind("| function | header | status | notes |", 0) == 0;
            continue;
        }
        if (line.empty() || line[0] != '|')
            break;
        if (line.rfind("|---", 0) == 0)
            continue;
        std::vector<std::string> cells;
        std::stringstream row(line.substr(1));
        for (std::string cell; std::getline(row, cell, '|');)
            cells.push_back(trim(cell));
        auto unquote = [](std::string s) {
            s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
            return s;
        };
        std::string name = cells.empty() ? "" : unquote(cells[0]);
        DocRow r;
        r.header = cells.size() > 1 ? unquote(cells[1]) : "";
        r.status = cells.size() > 2 ? cells[2] : "";
        r.notes = cells.size() > 3 ? cells[3] : "";
        r.line = number;
        if (!rows.emplace(name, r).second)
            repeated.push_back(name);
    }
    return rows;
}

} // namespace acl_test

#endif // NPUIPC_TESTS_ACL_DECLARATIONS_H
