// SPDX-License-Identifier: MIT
// The library's one logger, configured by CANN's variables so that a CANN
// user's settings apply unchanged:
//  - the level: ASCEND_MODULE_LOG_LEVEL's RUNTIME entry ("RUNTIME=1:GE=3"),
//    else ASCEND_GLOBAL_LOG_LEVEL; 0 debug, 1 info, 2 warning, 3 error
//    (the default), 4 none;
//  - where: standard output when ASCEND_LOG_PRINT_TO_STDOUT is 1 (or, when
//    it is unset, the older ASCEND_SLOG_PRINT_TO_STDOUT); otherwise this
//    process's log file, $ASCEND_PROCESS_LOG_PATH (default
//    $HOME/ascend/log) /debug/plog/plog-<pid>_<UTC time>.log, made new on
//    the first line; standard error when that file cannot be made (or
//    neither variable is set).
// The variables are read once per process (again in a fork child).
#ifndef NPUIPC_SRC_LOG_H
#define NPUIPC_SRC_LOG_H

namespace npuipc_log {

enum Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kNone = 4 };

// Whether lines of `level` are written.
bool enabled(int level);
// Writes "[npuipc] <LEVEL> <where>: <text>" as one line.
void write(int level, const char *where, const char *text);
// The log file's fd, once the first line made it; -1 before.
int file_fd();

} // namespace npuipc_log

#endif // NPUIPC_SRC_LOG_H
