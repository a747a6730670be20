// SPDX-License-Identifier: MIT
#include "log.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace npuipc_log {
namespace {

struct Config {
    pid_t pid = 0; // 0 until read (again in a fork child)
    int level = kError;
    bool to_stdout = false;
    int fd = -1; // the log file, once made
    bool file_failed = false;
};

// Protects the configuration and the file. A leaf: no lock is taken under
// it, and fork() takes it after every other lock of the library, as its
// handlers are registered first (at load).
std::mutex g_mu;
Config g_config;

void lock_for_fork()
{
    g_mu.lock();
}

void unlock_after_fork()
{
    g_mu.unlock();
}

// The child's own log starts afresh; the parent's file is closed now,
// before the child's code can reuse its number.
void reset_in_child()
{
    if (g_config.fd >= 0)
        ::close(g_config.fd);
    g_config = Config();
    g_mu.unlock();
}

const int g_fork_handlers = ::pthread_atfork(lock_for_fork, unlock_after_fork, reset_in_child);

// One digit from 0 to 4, ended by `end` or the string's end.
int parse_level(const char *text, int fallback, char end = '\0')
{
    if (!text || *text < '0' || *text > '4' || (text[1] != '\0' && text[1] != end))
        return fallback;
    return *text - '0';
}

int configured_level()
{
    int level = parse_level(std::getenv("ASCEND_GLOBAL_LOG_LEVEL"), kError);
    // "RUNTIME=1:GE=3": the runtime's entry wins.
    if (const char *modules = std::getenv("ASCEND_MODULE_LOG_LEVEL")) {
        for (const char *p = modules; (p = std::strstr(p, "RUNTIME=")); p += 8)
            if (p == modules || p[-1] == ':')
                level = parse_level(p + 8, level, ':');
    }
    return level;
}

bool print_to_stdout()
{
    const char *v = std::getenv("ASCEND_LOG_PRINT_TO_STDOUT");
    if (!v)
        v = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    return v && std::strcmp(v, "1") == 0;
}

// With g_mu held.
Config &config()
{
    if (!g_config.pid) {
        g_config.pid = ::getpid();
        g_config.level = configured_level();
        g_config.to_stdout = print_to_stdout();
    }
    return g_config;
}

void make_dirs(const std::string &path)
{
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1))
        ::mkdir(path.substr(0, slash).c_str(), 0750);
    ::mkdir(path.c_str(), 0750);
}

// With g_mu held: the log file, made on first use; -1 if it cannot be.
int log_file(Config &c)
{
    if (c.fd >= 0 || c.file_failed)
        return c.fd;
    std::string dir;
    if (const char *root = std::getenv("ASCEND_PROCESS_LOG_PATH"); root && *root)
        dir = root;
    else if (const char *home = std::getenv("HOME"); home && *home)
        dir = std::string(home) + "/ascend/log";
    if (dir.empty()) { // no place of the user's own: standard error
        c.file_failed = true;
        return -1;
    }
    dir += "/debug/plog";
    make_dirs(dir);
    // UTC: localtime_r takes a lock a fork child may find held.
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::tm tm;
    std::strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", ::gmtime_r(&now, &tm));
    std::string path = dir + "/plog-" + std::to_string(c.pid) + "_" + stamp + ".log";
    // A new file of this process's own: never one planted under its name.
    c.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0640);
    c.file_failed = c.fd < 0;
    return c.fd;
}

} // namespace

bool enabled(int level)
{
    std::lock_guard<std::mutex> lock(g_mu);
    return level >= config().level;
}

void write(int level, const char *where, const char *text)
{
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    // Room for aclAppLog's 1023 characters after the prefix; a longer
    // text is cut, its line still ending in a newline.
    char line[1152];
    int n = std::snprintf(line, sizeof(line), "[npuipc] %s %s: %s\n", names[level & 3], where, text);
    if (n < 0)
        return;
    size_t len = static_cast<size_t>(n);
    if (len >= sizeof(line)) {
        len = sizeof(line) - 1;
        line[len - 1] = '\n';
    }
    std::lock_guard<std::mutex> lock(g_mu);
    Config &c = config();
    if (level < c.level)
        return;
    if (c.to_stdout) {
        std::fwrite(line, 1, len, stdout);
        std::fflush(stdout);
        return;
    }
    int fd = log_file(c);
    if (fd < 0 || ::write(fd, line, len) != static_cast<ssize_t>(len))
        std::fwrite(line, 1, len, stderr);
}

int file_fd()
{
    std::lock_guard<std::mutex> lock(g_mu);
    return g_config.fd;
}

} // namespace npuipc_log
