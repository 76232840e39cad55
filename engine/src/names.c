/* The engine's enumerations by name, so that bindings look values up
 * instead of copying positions (rankwise.h), and the ABI version they
 * check at load time. */
#include "internal.h"

#include <string.h>

int rw_abi_version(void) { return RW_ABI_VERSION; }

static const char *name_of(const char *const *names, int count, int value)
{
    return value >= 0 && value < count ? names[value] : NULL;
}

static int value_of(const char *const *names, int count, const char *name)
{
    for (int v = 0; name && v < count; v++)
        if (strcmp(names[v], name) == 0)
            return v;
    return -1;
}

#define NAMED_ENUM(prefix, ...)                                                      \
    static const char *const prefix##_names[] = {__VA_ARGS__};                       \
    enum { prefix##_count = sizeof prefix##_names / sizeof *prefix##_names };         \
    const char *rw_##prefix##_name(int v) { return name_of(prefix##_names, prefix##_count, v); } \
    int rw_##prefix##_from_name(const char *s) { return value_of(prefix##_names, prefix##_count, s); }

/* In the order of the enumerations' values. */
NAMED_ENUM(status, "ok", "io", "parse", "nomem", "arg", "mpi", "state")
NAMED_ENUM(pair_state, "unprobed", "measured", "missing")
NAMED_ENUM(probe_mode, "concurrent", "isolated")

_Static_assert(RW_ERR_STATE == 6 && RW_PAIR_MISSING == 2 && RW_MODE_ISOLATED == 1,
               "a name table above is out of step with rankwise.h");
