/* MPI_Bcast, MPI_Reduce, MPI_Gather, MPI_Scatter, MPI_Allreduce and
 * MPI_Allgather: each asks the decision (decide.c) for an algorithm and
 * runs it, or the MPI's own. A case an algorithm does not take
 * (intercommunicators, arguments MPI should reject, ...) is refused before
 * anything is sent and goes to the MPI's own collective, which also
 * reports MPI's errors. The nonblocking and persistent collectives are not
 * defined here: they reach the MPI unchanged. */
#include "coll.h"

#include <stdio.h>

/* RW_ERR_ARG and RW_ERR_STATE: nothing sent, the MPI's own runs. */
#define PASSED(st) ((st) == RW_ERR_ARG || (st) == RW_ERR_STATE)

static int failed(rw_status st)
{
    fprintf(stderr, "rankwise-coll: error: %s\n", rw_last_error());
    return MPI_ERR_OTHER;
}

#define RUN(op, root, bytes, run, real)                                                                 \
    do {                                                                                                \
        rw_coll_alg alg = rwc_decide(op, comm, root, bytes);                                            \
        if (alg != RW_COLL_PASSTHROUGH) {                                                               \
            rw_status st = run;                                                                         \
            if (!PASSED(st))                                                                            \
                return st ? failed(st) : MPI_SUCCESS;                                                   \
        }                                                                                               \
        return real;                                                                                    \
    } while (0)

#ifndef RW_SMPI
/* PMPI_ names are the same functions (a profiler above calls them). */
#define ALSO_PMPI(name) __attribute__((alias(#name)))
int PMPI_Bcast(void *, int, MPI_Datatype, int, MPI_Comm) ALSO_PMPI(MPI_Bcast);
int PMPI_Reduce(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm) ALSO_PMPI(MPI_Reduce);
int PMPI_Gather(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm) ALSO_PMPI(MPI_Gather);
int PMPI_Scatter(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm) ALSO_PMPI(MPI_Scatter);
int PMPI_Allreduce(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) ALSO_PMPI(MPI_Allreduce);
int PMPI_Allgather(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm) ALSO_PMPI(MPI_Allgather);
#endif

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    RUN(RWC_BCAST, root, rwc_bytes_of(count, type), rwc_run_bcast(buf, count, type, root, comm, alg),
        rwc_real_bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    RUN(RWC_REDUCE, root, rwc_bytes_of(count, type), rwc_run_reduce(s, r, count, type, op, root, comm, alg),
        rwc_real_reduce(s, r, count, type, op, root, comm));
}

int MPI_Gather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    RUN(RWC_GATHER, root, rwc_is_root(comm, root) ? rwc_bytes_of(rc, rtype) : rwc_bytes_of(sc, stype),
        rwc_run_gather(s, sc, stype, r, rc, rtype, root, comm, alg),
        rwc_real_gather(s, sc, stype, r, rc, rtype, root, comm));
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    RUN(RWC_SCATTER, root, rwc_is_root(comm, root) ? rwc_bytes_of(sc, stype) : rwc_bytes_of(rc, rtype),
        rwc_run_scatter(s, sc, stype, r, rc, rtype, root, comm, alg),
        rwc_real_scatter(s, sc, stype, r, rc, rtype, root, comm));
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    RUN(RWC_ALLREDUCE, -1, rwc_bytes_of(count, type), rwc_run_allreduce(s, r, count, type, op, comm, alg),
        rwc_real_allreduce(s, r, count, type, op, comm));
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, MPI_Comm comm)
{
    RUN(RWC_ALLGATHER, -1, rwc_bytes_of(rc, rtype), rwc_run_allgather(s, sc, stype, r, rc, rtype, comm, alg),
        rwc_real_allgather(s, sc, stype, r, rc, rtype, comm));
}
