/* MPI_Init and MPI_Init_thread: the MPI's own, then the rules file
 * (RANKWISE_COLL_RULES) is read once, so that a broken file is reported at
 * start-up rather than in the middle of the first collective. As for the
 * collectives (real.c), the shared library also defines the PMPI_ names
 * (a profiler preloaded above calls them) and reaches the MPI's own as the
 * next definition; under SMPI the static library defines MPI_ only and
 * PMPI_ is SimGrid's. A program whose MPI_Init does not come through here
 * (a Fortran program, say) reads the rules at its first decision. */
#include "coll.h"

#ifndef RW_SMPI
#include <dlfcn.h>
#include <stdio.h>

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);

int PMPI_Init(int *, char ***) __attribute__((alias("MPI_Init")));
int PMPI_Init_thread(int *, char ***, int, int *) __attribute__((alias("MPI_Init_thread")));

/* MPI is not running yet: nothing to abort, say why and fail the call. */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        fprintf(stderr, "rankwise-coll: error: no %s below librankwise_coll (%s)\n", name, dlerror());
    return f;
}
#endif

int MPI_Init(int *argc, char ***argv)
{
#ifndef RW_SMPI
    static init_fn real;
    if (!real && !(real = (init_fn)next("PMPI_Init")))
        return MPI_ERR_OTHER;
    int rc = real(argc, argv);
#else
    int rc = PMPI_Init(argc, argv);
#endif
    if (rc == MPI_SUCCESS)
        rwc_rules_load();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
#ifndef RW_SMPI
    static init_thread_fn real;
    if (!real && !(real = (init_thread_fn)next("PMPI_Init_thread")))
        return MPI_ERR_OTHER;
    int rc = real(argc, argv, required, provided);
#else
    int rc = PMPI_Init_thread(argc, argv, required, provided);
#endif
    if (rc == MPI_SUCCESS)
        rwc_rules_load();
    return rc;
}
