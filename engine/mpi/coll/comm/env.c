/* The library's environment (docs/concepts/collectives.md, "Environment"), one
 * rule of each kind for every variable:
 *   - who speaks: a problem with the environment is the job's, not a
 *     rank's, so rank 0 of MPI_COMM_WORLD prints it, in one line;
 *   - a value echoed in a message is cut to RWC_SHOWN_VALUE characters (a
 *     path to RWC_SHOWN_PATH);
 *   - booleans: 1/0, true/false, yes/no, on/off in any case; anything
 *     else is one warning and off;
 *   - a file a variable names (RANKWISE_COLL_RULES, RANKWISE_MODEL; and
 *     rw_live_init's model) is read only when it is a regular file of at
 *     most a cap of bytes: opened without blocking (a FIFO with no writer
 *     would block the job forever), checked with fstat, read whole into
 *     memory, never beyond the cap (a device such as /dev/zero never
 *     ends), and parsed from there. */
#define _POSIX_C_SOURCE 200809L
#include "coll.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int rwc_world_rank0(void)
{
    int init = 0, done = 0, rank = 0;
    if (PMPI_Initialized(&init) != MPI_SUCCESS || !init || PMPI_Finalized(&done) != MPI_SUCCESS || done)
        return 0; /* no job to speak for */
    return PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank == 0;
}

void rwc_say(const char *kind, const char *fmt, ...)
{
    if (!rwc_world_rank0())
        return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rankwise-coll: %s: %s\n", kind, line); /* one write: lines of ranks do not mix */
}

const char *rwc_shown(const char *value, size_t max, char *buf)
{
    if (max > RWC_SHOWN_PATH)
        max = RWC_SHOWN_PATH;
    if (strlen(value) <= max)
        return value;
    memcpy(buf, value, max);
    memcpy(buf + max, "...", 4);
    return buf;
}

int rwc_env_bool(const char *name)
{
    static const char *const on[] = {"1", "true", "yes", "on"}, *const off[] = {"0", "false", "no", "off"};
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    for (size_t i = 0; i < sizeof on / sizeof *on; i++) {
        if (!strcasecmp(v, on[i]))
            return 1;
        if (!strcasecmp(v, off[i]))
            return 0;
    }
    char shown[RWC_SHOWN_BUF];
    rwc_say("warning", "%s=%s is not a boolean (1/0, true/false, yes/no, on/off); taken as off", name,
            rwc_shown(v, RWC_SHOWN_VALUE, shown));
    return 0;
}

/* What a file that is not regular is, worded as the CLI words it
 * (python/rankwise/inputs.py). */
static const char *not_regular(mode_t mode)
{
    if (S_ISDIR(mode))
        return "it is a directory, not a file";
    if (S_ISCHR(mode))
        return "it is a character device, not a file";
    if (S_ISBLK(mode))
        return "it is a block device, not a file";
    if (S_ISSOCK(mode))
        return "it is a socket, not a file";
    if (S_ISFIFO(mode))
        return "it is a FIFO; the library needs a regular file";
    return "it is not a regular file";
}

FILE *rwc_input_file(const char *path, const char *what, size_t cap, char **mem, rw_status *st)
{
    char shown[RWC_SHOWN_BUF];
    const char *name = rwc_shown(path, RWC_SHOWN_PATH, shown);
    *mem = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        *st = rw_fail(RW_ERR_IO, "%s: cannot open: %s", name, strerror(errno));
        return NULL;
    }
    struct stat info;
    if (fstat(fd, &info) != 0)
        *st = rw_fail(RW_ERR_IO, "%s: cannot open: %s", name, strerror(errno));
    else if (!S_ISREG(info.st_mode))
        *st = rw_fail(RW_ERR_IO, "%s: cannot open: %s", name, not_regular(info.st_mode));
    else if ((uintmax_t)info.st_size > cap)
        *st = rw_fail(RW_ERR_IO, "%s: %lld bytes, more than the %zu MiB %s may take", name,
                      (long long)info.st_size, cap >> 20, what);
    else
        *st = RW_OK;
    /* read whole, never more than cap bytes whatever happens to the file meanwhile */
    size_t len = 0, room = *st ? 0 : (size_t)info.st_size + 1;
    char *data = *st ? NULL : malloc(room);
    if (!*st && !data)
        *st = rw_fail(RW_ERR_NOMEM, "%s: out of memory for %zu bytes", name, room);
    while (!*st) {
        if (len == room) { /* it grew since fstat */
            char *more = room > cap ? NULL : realloc(data, room > cap / 2 ? cap + 1 : 2 * room);
            if (!more) {
                *st = room > cap ? rw_fail(RW_ERR_IO, "%s: grew beyond the %zu MiB %s may take", name, cap >> 20, what)
                                 : rw_fail(RW_ERR_NOMEM, "%s: out of memory", name);
                break;
            }
            room = room > cap / 2 ? cap + 1 : 2 * room;
            data = more;
        }
        ssize_t got = read(fd, data + len, room - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            *st = rw_fail(RW_ERR_IO, "%s: cannot read: %s", name, strerror(errno));
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    FILE *f = NULL;
    if (!*st && !(f = fmemopen(data, len, "r")))
        *st = rw_fail(RW_ERR_NOMEM, "%s: cannot read from memory: %s", name, strerror(errno));
    if (!f) {
        free(data);
        return NULL;
    }
    *mem = data;
    return f;
}

/* ---- RANKWISE_MODEL: read once per process, at its first use (rank 0 of
 * a communicator that decides from the network or reorders a topology;
 * rank 0 of MPI_COMM_WORLD at its first decision, net_decide.c), shared by
 * both; a model that cannot be read is one line from rank 0 of
 * MPI_COMM_WORLD. */

static rw_model *model;
static int model_state; /* 0 not read, 1 read, -1 failed */

const char *rwc_model_path(void)
{
    const char *m = getenv("RANKWISE_MODEL");
    return m && *m ? m : NULL;
}

rw_status rwc_model_read(const char *path, rw_model **out)
{
    char *mem = NULL, shown[RWC_SHOWN_BUF];
    rw_status st = RW_OK;
    *out = NULL;
    FILE *f = rwc_input_file(path, "a model", RWC_MODEL_MAX_BYTES, &mem, &st);
    if (f) {
        st = rw_model_read_stream(f, rwc_shown(path, RWC_SHOWN_PATH, shown), out);
        fclose(f);
    }
    free(mem);
    return st;
}

const rw_model *rwc_env_model(void)
{
    if (model_state)
        return model_state > 0 ? model : NULL;
    const char *path = rwc_model_path();
    rw_status st = path ? rwc_model_read(path, &model) : RW_ERR_ARG;
    model_state = st ? -1 : 1;
    if (st && path)
        rwc_say("error", "%s (collectives and topology constructors pass through to the MPI)", rw_last_error());
    return model_state > 0 ? model : NULL;
}
