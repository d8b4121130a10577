#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// Turns off SQLite's memory statistics before the library initializes. With them on (the
/// default), every allocation takes one process-wide mutex, which connections used on different
/// threads contend for. sqlite3_config is variadic, so Swift cannot call it directly. Returns
/// SQLITE_MISUSE when SQLite was already initialized (the setting then stays as it was).
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
