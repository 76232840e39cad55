/* MPI_Bcast, MPI_Reduce, MPI_Gather, MPI_Scatter, MPI_Allreduce, MPI_Alltoall and
 * MPI_Allgather (and their PMPI_ names): the decided call (decided.c), or
 * the MPI's own when it passes (its own return code). The nonblocking and
 * persistent collectives are not defined here: they reach the MPI
 * unchanged. */
#include "decision/verify.h"
#include "entry.h"
#include "internal.h"

#include <stdio.h>

/* A call the library ran and that failed: one line on this rank, and the
 * failing MPI call's own code (which that call has already given to the
 * error handler of the communicator's duplicate, the application's), else
 * MPI_ERR_OTHER. */
static int failed(rw_status st)
{
    fprintf(stderr, "rankwise-coll: error: %s\n", rw_last_error());
    return st == RW_ERR_MPI ? rwc_mpi_code() : MPI_ERR_OTHER;
}

/* The MPI entries: the MPI's own when passed (its own return code). */
#define MPI_ENTRY(call, real)                                                                           \
    do {                                                                                                \
        int pass = 0;                                                                                   \
        rw_status st = call;                                                                            \
        if (pass) {                                                                                     \
            int real_rc_ = real; /* (a parameter is named rc) */                                        \
            rwc_verify_end(1);                                                                          \
            return real_rc_;                                                                            \
        }                                                                                               \
        rwc_verify_end(0);                                                                              \
        return st ? failed(st) : MPI_SUCCESS;                                                           \
    } while (0)

#ifndef RW_SMPI
/* PMPI_ names are the same functions (a profiler above calls them). */
#define ALSO_PMPI(name) __attribute__((alias(#name)))
RWC_INTERPOSED int PMPI_Bcast(void *, int, MPI_Datatype, int, MPI_Comm) ALSO_PMPI(MPI_Bcast);
RWC_INTERPOSED int PMPI_Reduce(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm) ALSO_PMPI(MPI_Reduce);
RWC_INTERPOSED int PMPI_Gather(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm) ALSO_PMPI(MPI_Gather);
RWC_INTERPOSED int PMPI_Scatter(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm) ALSO_PMPI(MPI_Scatter);
RWC_INTERPOSED int PMPI_Allreduce(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) ALSO_PMPI(MPI_Allreduce);
RWC_INTERPOSED int PMPI_Allgather(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm) ALSO_PMPI(MPI_Allgather);
RWC_INTERPOSED int PMPI_Alltoall(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm) ALSO_PMPI(MPI_Alltoall);
#endif

RWC_INTERPOSED int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_bcast(buf, count, type, root, comm, &pass), rwc_real_bcast(buf, count, type, root, comm));
}

RWC_INTERPOSED int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_reduce(s, r, count, type, op, root, comm, &pass), rwc_real_reduce(s, r, count, type, op, root, comm));
}

RWC_INTERPOSED int MPI_Gather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_gather(s, sc, stype, r, rc, rtype, root, comm, &pass),
              rwc_real_gather(s, sc, stype, r, rc, rtype, root, comm));
}

RWC_INTERPOSED int MPI_Scatter(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_scatter(s, sc, stype, r, rc, rtype, root, comm, &pass),
              rwc_real_scatter(s, sc, stype, r, rc, rtype, root, comm));
}

RWC_INTERPOSED int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_allreduce(s, r, count, type, op, comm, &pass), rwc_real_allreduce(s, r, count, type, op, comm));
}

RWC_INTERPOSED int MPI_Allgather(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_allgather(s, sc, stype, r, rc, rtype, comm, &pass),
              rwc_real_allgather(s, sc, stype, r, rc, rtype, comm));
}

RWC_INTERPOSED int MPI_Alltoall(const void *s, int sc, MPI_Datatype stype, void *r, int rc, MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_ENTRY(rwc_decided_alltoall(s, sc, stype, r, rc, rtype, comm, &pass), rwc_real_alltoall(s, sc, stype, r, rc, rtype, comm));
}
