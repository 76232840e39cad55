/* The entries' shared path (entry/): a decided call. */
#ifndef RW_COLL_ENTRY_H
#define RW_COLL_ENTRY_H

#include "coll.h"

/* A call decided and run (decided.c), for the MPI entries (entry.c) and
 * the C API's RW_COLL_AUTO (api.c): *pass = 1 when the MPI's own must run
 * instead (the caller runs it). */
rw_status rwc_decided_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, int *pass);
rw_status rwc_decided_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                             int *pass);
rw_status rwc_decided_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                             MPI_Comm comm, int *pass);
rw_status rwc_decided_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                              MPI_Comm comm, int *pass);
rw_status rwc_decided_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                int *pass);
rw_status rwc_decided_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                                int *pass);
rw_status rwc_decided_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                               int *pass);

#endif
