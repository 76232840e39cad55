/* The MPI's own collectives and topology constructors beneath this
 * library. The shared library defines PMPI_Bcast etc. too (so that a
 * profiler above it, calling PMPI_, reaches it: docs/concepts/collectives.md "Layering"); the real ones are
 * then the next definitions in the search order (RTLD_NEXT). Under SMPI
 * the static library defines MPI_ only and PMPI_ is SimGrid's. */
#include "coll.h"

#ifndef RW_SMPI
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* The next definition of `name`; a missing one cannot be recovered from
 * (the MPI library lacks a collective of MPI-1), so say so and abort the
 * job as MPI would on a fatal error. */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "rankwise-coll: error: no %s below librankwise_coll (%s)\n", name, dlerror());
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    return f;
}
#define REAL(type, name) static type real; if (!real) real = (type)next(#name)
#else
#define REAL(type, name) type real = name
#endif

typedef int (*bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*reduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*gather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*allgather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
typedef int (*cart_fn)(MPI_Comm, int, const int *, const int *, int, MPI_Comm *);
typedef int (*graph_fn)(MPI_Comm, int, const int *, const int *, int, MPI_Comm *);
typedef int (*dist_fn)(MPI_Comm, int, const int *, const int *, const int *, const int *, MPI_Info, int,
                       MPI_Comm *);
typedef int (*adjacent_fn)(MPI_Comm, int, const int *, const int *, int, const int *, const int *, MPI_Info, int,
                           MPI_Comm *);

int rwc_real_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    REAL(bcast_fn, PMPI_Bcast);
    return real(buf, count, type, root, comm);
}

int rwc_real_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    REAL(reduce_fn, PMPI_Reduce);
    return real(s, r, count, type, op, root, comm);
}

int rwc_real_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    REAL(gather_fn, PMPI_Gather);
    return real(s, sc, st, r, rc, rt, root, comm);
}

int rwc_real_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    REAL(gather_fn, PMPI_Scatter);
    return real(s, sc, st, r, rc, rt, root, comm);
}

int rwc_real_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    REAL(allreduce_fn, PMPI_Allreduce);
    return real(s, r, count, type, op, comm);
}

int rwc_real_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    REAL(allgather_fn, PMPI_Alltoall);
    return real(s, sc, st, r, rc, rt, comm);
}

int rwc_real_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    REAL(allgather_fn, PMPI_Allgather);
    return real(s, sc, st, r, rc, rt, comm);
}

/* The topology constructors beneath MPI's reorder flag (reorder/topo.c). */
int rwc_real_cart_create(MPI_Comm comm, int ndims, const int *dims, const int *periods, int reorder, MPI_Comm *out)
{
    REAL(cart_fn, PMPI_Cart_create);
    return real(comm, ndims, dims, periods, reorder, out);
}

int rwc_real_graph_create(MPI_Comm comm, int nnodes, const int *index, const int *edges, int reorder, MPI_Comm *out)
{
    REAL(graph_fn, PMPI_Graph_create);
    return real(comm, nnodes, index, edges, reorder, out);
}

int rwc_real_dist_graph_create(MPI_Comm comm, int n, const int *sources, const int *degrees, const int *dest,
                               const int *weights, MPI_Info info, int reorder, MPI_Comm *out)
{
    REAL(dist_fn, PMPI_Dist_graph_create);
    return real(comm, n, sources, degrees, dest, weights, info, reorder, out);
}

int rwc_real_dist_graph_create_adjacent(MPI_Comm comm, int indeg, const int *src, const int *srcw, int outdeg,
                                        const int *dst, const int *dstw, MPI_Info info, int reorder, MPI_Comm *out)
{
    REAL(adjacent_fn, PMPI_Dist_graph_create_adjacent);
    return real(comm, indeg, src, srcw, outdeg, dst, dstw, info, reorder, out);
}
