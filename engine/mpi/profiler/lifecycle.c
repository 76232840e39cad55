/* When the profiler records: tables allocated after MPI_Init, the matrix
 * written before MPI_Finalize, and the small C API of rankwise_profile.h
 * (write, reset, pause/resume; MPI_Pcontrol(0)/(1) pause and resume too).
 *
 * A program that dies before MPI_Finalize writes nothing: the counts live
 * in the ranks' memory until the collective write, which replaces the
 * output file atomically. */
#define _POSIX_C_SOURCE 200809L
#include "profile.h"
#include "rankwise_profile.h"

#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_OUTPUT "rankwise-profile.rwc"

/* Set by the first MPI_Init of this copy of the profiler. Under SMPI each
 * rank has its own copy of the program; a second MPI_Init here means the
 * ranks share their globals (smpi/privatization:no). */
static int initialised;

const char *rwp_output_path(const char *path)
{
    if (path && *path)
        return path;
    const char *env = getenv("RANKWISE_PROFILE_OUT");
    return env && *env ? env : DEFAULT_OUTPUT;
}

/* The matrix's source line: $RANKWISE_PROFILE_SOURCE, else "pmpi:" and
 * the command line, on one line of at most 255 bytes. */
static void make_source(int argc, char **argv)
{
    const char *env = getenv("RANKWISE_PROFILE_SOURCE");
    char *p = rwp.source, *end = rwp.source + sizeof rwp.source - 1;
    if (env && *env) {
        snprintf(rwp.source, sizeof rwp.source, "%s", env);
    } else {
        p += snprintf(p, (size_t)(end - p), "pmpi:");
        for (int i = 0; argv && i < argc && argv[i] && p < end; i++)
            p += snprintf(p, (size_t)(end - p + 1), i ? " %s" : "%s", argv[i]);
    }
    for (p = rwp.source; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
}

/* The time-stamp counter times calls when the kernel keeps its own time
 * with it (it then found it invariant and synchronised across cores);
 * RANKWISE_PROFILE_CLOCK=monotonic forces clock_gettime. */
static int tsc_is_the_clock(void)
{
#if defined(__x86_64__) && !defined(RW_SMPI)
    const char *env = getenv("RANKWISE_PROFILE_CLOCK");
    if (env && !strcmp(env, "monotonic"))
        return 0;
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char name[32] = "";
    if (!f)
        return 0;
    int ok = fgets(name, sizeof name, f) != NULL && !strncmp(name, "tsc", 3) &&
             (name[3] == '\n' || name[3] == '\0');
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

void rwp_setup(int argc, char **argv, int thread_level)
{
    if (initialised) {
        if (!rwp.broken)
            fprintf(stderr, "rankwise-profile: error: the ranks share one profiler state (SMPI without "
                            "smpi/privatization:dlopen?): nothing will be recorded\n");
        rwp.broken = 1;
        rwp.on = 0;
        return;
    }
    initialised = 1;
    if (PMPI_Comm_size(MPI_COMM_WORLD, &rwp.world_size) != MPI_SUCCESS ||
        PMPI_Comm_rank(MPI_COMM_WORLD, &rwp.world_rank) != MPI_SUCCESS)
        return;
    rwp.atomic = thread_level == MPI_THREAD_MULTIPLE;
    rwp.msgs = calloc((size_t)rwp.world_size, sizeof *rwp.msgs);
    rwp.bytes = calloc((size_t)rwp.world_size, sizeof *rwp.bytes);
    if (!rwp.msgs || !rwp.bytes || rwp_comm_setup() != 0) {
        fprintf(stderr, "rankwise-profile: error: rank %d cannot set up its tables for %d ranks: "
                        "nothing will be recorded\n", rwp.world_rank, rwp.world_size);
        free(rwp.msgs);
        free(rwp.bytes);
        rwp.msgs = rwp.bytes = NULL;
        return;
    }
    make_source(argc, argv);
    rwp.use_tsc = tsc_is_the_clock();
    rwp.calib_ns = rwp.start_ns = rwp_now_ns();
    rwp.calib_ticks = rwp_ticks();
    rwp.ready = 1;
    rwp.on = !rwp.paused && !rwp.broken;
}

void rwp_finish(void)
{
    if (!initialised || rwp.broken)
        return;
    const char *env = getenv("RANKWISE_PROFILE_OUT");
    if (env && !strcmp(env, "none"))
        return;
    rwp.on = 0;
    rw_status st = rwp_write(rwp_output_path(NULL));
    if (st && rwp.world_rank == 0)
        fprintf(stderr, "rankwise-profile: error: %s\n", rw_last_error());
}

void rwp_teardown(void)
{
    rwp.on = rwp.ready = 0;
    free(rwp.msgs);
    free(rwp.bytes);
    rwp.msgs = rwp.bytes = NULL;
    rwp_persistent_clear();
    rwp_coll_free();
}

/* ------------------------------------------------------------ wrappers */

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        rwp_setup(argc && argv ? *argc : 0, argv ? *argv : NULL, MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        rwp_setup(argc && argv ? *argc : 0, argv ? *argv : NULL, *provided);
    return rc;
}

int MPI_Finalize(void)
{
    rwp_finish();
    int rc = PMPI_Finalize();
    rwp_teardown();
    return rc;
}

int MPI_Pcontrol(const int level, ...)
{
    if (level == 0)
        rw_profile_pause();
    else
        rw_profile_resume();
#ifdef RW_SMPI
    return MPI_SUCCESS; /* SMPI 3.32 aborts in PMPI_Pcontrol */
#else
    return PMPI_Pcontrol(level);
#endif
}

/* ---------------------------------------------------------------- C API */

int rw_profile_write(const char *path)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
        return rw_fail(RW_ERR_STATE, "rw_profile_write: MPI is not running (call it between MPI_Init "
                                     "and MPI_Finalize)");
    return rwp_write(rwp_output_path(path));
}

void rw_profile_reset(void) { rwp_reset_counts(); }

void rw_profile_pause(void)
{
    rwp.paused = 1;
    rwp.on = 0;
}

void rw_profile_resume(void)
{
    rwp.paused = 0;
    rwp.on = rwp.ready && !rwp.broken;
}

const char *rw_profile_last_error(void) { return rw_last_error(); }
