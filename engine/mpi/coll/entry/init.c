/* MPI_Init and MPI_Init_thread: the MPI's own, then the thread level is
 * noted and the rules file (RANKWISE_COLL_RULES) is read once, so that a
 * broken file is reported at start-up rather than in the middle of the
 * first collective. As for the collectives (real.c), the shared library
 * also defines the PMPI_ names (a profiler preloaded above calls them) and
 * reaches the MPI's own as the next definition; under SMPI the static
 * library defines MPI_ only and PMPI_ is SimGrid's. A program whose
 * MPI_Init does not come through here (a Fortran program, say) reads the
 * rules, and learns the thread level, at its first collective.
 *
 * Threads: the library's state (its first-call set-up of each
 * communicator, a private MPI_Comm_dup; the environment and the model,
 * read at first use) is not made for two threads making first calls at
 * once. Under MPI_THREAD_MULTIPLE it therefore runs nothing of its own:
 * every collective goes to the MPI's own (as Open MPI components that are
 * not thread-safe disqualify themselves at that level), said once per job
 * when a variable asked the library for something. A lock could not do it:
 * the set-up is collective, and a rank holding the lock in one
 * communicator's MPI_Comm_dup would wait for a rank whose thread waits for
 * the lock in the other's. */
#include "coll.h"
#include "decision/decision.h"

static int multiple = -1; /* the MPI's thread level is MPI_THREAD_MULTIPLE; -1 not known yet */
static int said;

/* After the MPI's initialisation (or at the first call of a program whose
 * MPI_Init did not come through here). */
static int note_thread_level(void)
{
    int level = MPI_THREAD_SINGLE;
    int v = PMPI_Query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE;
    __atomic_store_n(&multiple, v, __ATOMIC_RELEASE);
    if (v && rwc_env_asks() && !__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
        rwc_say("warning", "MPI_THREAD_MULTIPLE: the library is not thread-safe; every collective goes to the "
                           "MPI's own");
    return v;
}

int rwc_thread_multiple(void)
{
    int v = __atomic_load_n(&multiple, __ATOMIC_ACQUIRE);
    return v >= 0 ? v : note_thread_level();
}

#ifndef RW_SMPI
#include <dlfcn.h>
#include <stdio.h>

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);

RWC_INTERPOSED int PMPI_Init(int *, char ***) __attribute__((alias("MPI_Init")));
RWC_INTERPOSED int PMPI_Init_thread(int *, char ***, int, int *) __attribute__((alias("MPI_Init_thread")));

/* MPI is not running yet: nothing to abort, say why and fail the call. */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        fprintf(stderr, "rankwise-coll: error: no %s below librankwise_coll (%s)\n", name, dlerror());
    return f;
}
#endif

RWC_INTERPOSED int MPI_Init(int *argc, char ***argv)
{
#ifndef RW_SMPI
    static init_fn real;
    if (!real && !(real = (init_fn)next("PMPI_Init")))
        return MPI_ERR_OTHER;
    int rc = real(argc, argv);
#else
    int rc = PMPI_Init(argc, argv);
#endif
    if (rc == MPI_SUCCESS && !note_thread_level())
        rwc_rules_load();
    return rc;
}

RWC_INTERPOSED int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
#ifndef RW_SMPI
    static init_thread_fn real;
    if (!real && !(real = (init_thread_fn)next("PMPI_Init_thread")))
        return MPI_ERR_OTHER;
    int rc = real(argc, argv, required, provided);
#else
    int rc = PMPI_Init_thread(argc, argv, required, provided);
#endif
    if (rc == MPI_SUCCESS && !note_thread_level())
        rwc_rules_load();
    return rc;
}
