/* Neighbourhood collectives (real MPI only: SMPI 3.32 does not implement
 * them). Block k of the send buffer goes to out-neighbour k of the
 * communicator's topology, in the order MPI defines: for a Cartesian
 * topology, per dimension, the rank at displacement -1 then +1 (MPI_PROC_NULL
 * at a non-periodic border); for a graph, MPI_Graph_neighbors; for a
 * distributed graph, the destinations of MPI_Dist_graph_neighbors. The list
 * is built at the first neighbourhood collective on the communicator and
 * cached with its entry (duplicates share it). */
#include "profile.h"

#include <stdlib.h>

/* Out-neighbours of comm as ranks of comm, in MPI's order; -1 on error. */
static int out_neighbours(MPI_Comm comm, int rank, int **out)
{
    int topo, n = 0, *list = NULL;
    *out = NULL;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return -1;
    if (topo == MPI_CART) {
        int dims;
        if (PMPI_Cartdim_get(comm, &dims) != MPI_SUCCESS || !(list = malloc(2 * (size_t)dims * sizeof *list + 1)))
            return -1;
        for (int d = 0; d < dims; d++)
            if (PMPI_Cart_shift(comm, d, 1, &list[2 * d], &list[2 * d + 1]) != MPI_SUCCESS)
                goto fail;
        n = 2 * dims;
    } else if (topo == MPI_GRAPH) {
        if (PMPI_Graph_neighbors_count(comm, rank, &n) != MPI_SUCCESS ||
            !(list = malloc((size_t)n * sizeof *list + 1)) ||
            PMPI_Graph_neighbors(comm, rank, n, list) != MPI_SUCCESS)
            goto fail;
    } else if (topo == MPI_DIST_GRAPH) {
        int in, weighted;
        if (PMPI_Dist_graph_neighbors_count(comm, &in, &n, &weighted) != MPI_SUCCESS)
            return -1;
        int *sources = malloc((size_t)in * sizeof *sources + 1);
        int *sw = weighted ? malloc((size_t)in * sizeof *sw + 1) : MPI_UNWEIGHTED;
        int *dw = weighted ? malloc((size_t)n * sizeof *dw + 1) : MPI_UNWEIGHTED;
        list = malloc((size_t)n * sizeof *list + 1);
        int ok = sources && sw && dw && list &&
                 PMPI_Dist_graph_neighbors(comm, in, sources, sw, n, list, dw) == MPI_SUCCESS;
        free(sources);
        if (weighted) {
            free(sw);
            free(dw);
        }
        if (!ok)
            goto fail;
    } else {
        return -1; /* no topology: MPI itself refuses the call */
    }
    *out = list;
    return n;
fail:
    free(list);
    return -1;
}

rwp_comm *rwp_comm_with_neighbours(MPI_Comm comm)
{
    rwp_comm *c = rwp_comm_of(comm);
    if (!c || c->remote_size)
        return NULL;
    if (__atomic_load_n(&c->n_out, __ATOMIC_ACQUIRE) >= 0)
        return c;
    int *list;
    int n = out_neighbours(comm, c->rank, &list);
    if (n < 0)
        return NULL;
    for (int k = 0; k < n; k++)
        list[k] = list[k] >= 0 && list[k] < c->size ? rwp_world_of(c, list[k]) : -1;
    rwp_lock();
    if (c->n_out < 0) {
        c->out = list;
        __atomic_store_n(&c->n_out, n, __ATOMIC_RELEASE);
        list = NULL;
    }
    rwp_unlock();
    free(list);
    return c;
}

/* One message of bytes[k] (or `same` for all) to each out-neighbour. */
static void to_neighbours(MPI_Comm comm, int64_t same, const int *counts, MPI_Datatype type,
                          const MPI_Datatype *types)
{
    rwp_comm *c = rwp_comm_with_neighbours(comm);
    if (!c)
        return;
    int64_t size = types ? 0 : rwp_bytes(1, type);
    for (int k = 0; k < c->n_out; k++) {
        int64_t bytes = !counts ? same : types ? rwp_bytes(counts[k], types[k]) : counts[k] * size;
        if (bytes > 0 && c->out[k] != rwp.world_rank)
            rwp_send(c->out[k], 1, bytes, RWP_KIND_COLL);
    }
}

/* neighbor_allgather(v): sendcount x size(sendtype) to each out-neighbour. */
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              to_neighbours(comm, rwp_bytes(sendcount, sendtype), NULL, sendtype, NULL));
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    COLL_CALL(PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, comm),
              to_neighbours(comm, rwp_bytes(sendcount, sendtype), NULL, sendtype, NULL));
}

/* neighbor_alltoall: block k, sendcount x size(sendtype), to neighbour k. */
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              to_neighbours(comm, rwp_bytes(sendcount, sendtype), NULL, sendtype, NULL));
}

/* neighbor_alltoallv: sendcounts[k] x size(sendtype) to neighbour k. */
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                      rdispls, recvtype, comm),
              to_neighbours(comm, 0, sendcounts, sendtype, NULL));
}

/* neighbor_alltoallw: sendcounts[k] x size(sendtypes[k]) to neighbour k. */
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    COLL_CALL(PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                      rdispls, recvtypes, comm),
              to_neighbours(comm, 0, sendcounts, MPI_DATATYPE_NULL, sendtypes));
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    COLL_CALL(PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm, request),
              to_neighbours(comm, rwp_bytes(sendcount, sendtype), NULL, sendtype, NULL));
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, comm, request),
              to_neighbours(comm, rwp_bytes(sendcount, sendtype), NULL, sendtype, NULL));
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    COLL_CALL(PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, request),
              to_neighbours(comm, rwp_bytes(sendcount, sendtype), NULL, sendtype, NULL));
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    COLL_CALL(PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, request),
              to_neighbours(comm, 0, sendcounts, sendtype, NULL));
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    COLL_CALL(PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                       rdispls, recvtypes, comm, request),
              to_neighbours(comm, 0, sendcounts, MPI_DATATYPE_NULL, sendtypes));
}
