/* Collective wrappers. A collective is counted as the logical data each
 * rank must deliver to each other rank, whatever algorithm the MPI library
 * runs: every rank records its own part when its call succeeds (so the
 * matrix does not depend on the library, its tuning, or the simulator),
 * nonblocking variants when they are posted. A logical message of 0 bytes
 * is not recorded, nor traffic of a rank to itself. The rules, per call,
 * are in docs/reference/formats.md ("Profile"); i and j are ranks of the
 * communicator, translated to world ranks.
 *
 * Traffic that is the same to every other member (bcast at the root,
 * allgather, alltoall, the even part of allreduce, ...) is accumulated once
 * per communicator and expanded into the row when the matrix is written,
 * so those calls cost O(1) however large the job. Collectives on
 * intercommunicators are timed but not recorded.
 *
 * The calls of bcast, reduce, allreduce, gather, scatter, allgather and
 * alltoall (and their I forms) are also counted in groups, with one size
 * per call as rankwise-bench-collectives counts it (collective_calls.c);
 * the v and w forms, whose sizes differ from rank to rank, and the other
 * collectives are volumes only. */
#include "profile.h"

/* The entry of an intracommunicator with at least two members. */
static inline rwp_comm *intra(MPI_Comm comm)
{
    rwp_comm *c = rwp_comm_of(comm);
    return c && !c->remote_size && c->size > 1 ? c : NULL;
}

/* One message of `bytes` to every other member (none when empty). */
static inline void to_all(rwp_comm *c, int64_t bytes)
{
    if (bytes > 0)
        rwp_send_uniform(c, 1, bytes);
}

/* One call of op on comm, counted by its rank 0 alone (the size is
 * worked out there only); g_ is the communicator's entry. */
#define GROUP(comm, op, root, bytes)                                                               \
    ({                                                                                             \
        rwp_comm *g_ = intra(comm);                                                                \
        if (g_ && g_->rank == 0)                                                                   \
            rwp_coll_count(g_, (op), (root), (bytes));                                             \
    })

/* The size of one call, the same on every rank: a rank's contribution
 * (gather: at the root in place, its receive block; scatter: the root's
 * send block, a receive block elsewhere), alltoall per rank pair. */
#define IN_PLACE_OR(buf, in_place, otherwise) ((buf) == MPI_IN_PLACE ? (in_place) : (otherwise))
#define GROUP_GATHER(comm, root)                                                                   \
    GROUP(comm, RW_COLL_GATHER, root,                                                              \
          g_->rank == (root) ? IN_PLACE_OR(sendbuf, rwp_bytes(recvcount, recvtype),                \
                                           rwp_bytes(sendcount, sendtype))                         \
                             : rwp_bytes(sendcount, sendtype))
#define GROUP_SCATTER(comm, root)                                                                  \
    GROUP(comm, RW_COLL_SCATTER, root,                                                             \
          g_->rank == (root) ? rwp_bytes(sendcount, sendtype) : rwp_bytes(recvcount, recvtype))
#define GROUP_ALL(comm, op)                                                                        \
    GROUP(comm, op, 0, IN_PLACE_OR(sendbuf, rwp_bytes(recvcount, recvtype),                        \
                                   rwp_bytes(sendcount, sendtype)))

/* ------------------------------------------------------------ the rules */

/* bcast: root -> every other rank, count x size. */
static void bcast(MPI_Comm comm, int count, MPI_Datatype type, int root)
{
    rwp_comm *c = intra(comm);
    if (c && c->rank == root)
        to_all(c, rwp_bytes(count, type));
}

/* reduce: every non-root -> root, count x size. */
static void reduce(MPI_Comm comm, int count, MPI_Datatype type, int root)
{
    rwp_comm *c = intra(comm);
    if (c && c->rank != root)
        rwp_send_coll(c, root, rwp_bytes(count, type));
}

/* allreduce as reduce-scatter + allgather of the block distribution of
 * count elements over N ranks, blk(k) = count/N + (k < count mod N):
 * i -> j one message of blk(j) (i's share of j's block) and one of blk(i)
 * (i's reduced block), each when not empty. */
static void allreduce(MPI_Comm comm, int count, MPI_Datatype type)
{
    rwp_comm *c = intra(comm);
    if (!c || count <= 0)
        return;
    int64_t size = rwp_bytes(1, type);
    int n = c->size, q = count / n, r = count % n;
    int mine = q + (c->rank < r);
    rwp_send_uniform(c, (mine > 0) + (q > 0), (int64_t)(mine + q) * size);
    for (int j = 0; j < r; j++) /* the larger blocks: O(count mod N) < O(count) */
        if (j != c->rank)
            rwp_send(rwp_world_of(c, j), q == 0, size, RWP_KIND_COLL);
}

/* reduce_scatter_block: i -> j, recvcount x size. */
static void reduce_scatter_block(MPI_Comm comm, int recvcount, MPI_Datatype type)
{
    rwp_comm *c = intra(comm);
    if (c)
        to_all(c, rwp_bytes(recvcount, type));
}

/* reduce_scatter: i -> j, recvcounts[j] x size. */
static void reduce_scatter(MPI_Comm comm, const int *recvcounts, MPI_Datatype type)
{
    rwp_comm *c = intra(comm);
    if (!c)
        return;
    int64_t size = rwp_bytes(1, type);
    for (int j = 0; j < c->size; j++)
        rwp_send_coll(c, j, (int64_t)recvcounts[j] * size);
}

/* scan, exscan: i -> i + 1, count x size (the running prefix). */
static void scan(MPI_Comm comm, int count, MPI_Datatype type)
{
    rwp_comm *c = intra(comm);
    if (c && c->rank + 1 < c->size)
        rwp_send_coll(c, c->rank + 1, rwp_bytes(count, type));
}

/* gather, gatherv: every non-root -> root, its sendcount x size(sendtype). */
static void gather(MPI_Comm comm, int sendcount, MPI_Datatype sendtype, int root)
{
    rwp_comm *c = intra(comm);
    if (c && c->rank != root)
        rwp_send_coll(c, root, rwp_bytes(sendcount, sendtype));
}

/* scatter: root -> every other rank, sendcount x size(sendtype). */
static void scatter(MPI_Comm comm, int sendcount, MPI_Datatype sendtype, int root)
{
    rwp_comm *c = intra(comm);
    if (c && c->rank == root)
        to_all(c, rwp_bytes(sendcount, sendtype));
}

/* scatterv: root -> j, sendcounts[j] x size(sendtype). */
static void scatterv(MPI_Comm comm, const int *sendcounts, MPI_Datatype sendtype, int root)
{
    rwp_comm *c = intra(comm);
    if (!c || c->rank != root)
        return;
    int64_t size = rwp_bytes(1, sendtype);
    for (int j = 0; j < c->size; j++)
        rwp_send_coll(c, j, (int64_t)sendcounts[j] * size);
}

/* allgather, alltoall: i -> every j, sendcount x size(sendtype) (in place:
 * recvcount x size(recvtype)). */
static void allgather(MPI_Comm comm, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      int recvcount, MPI_Datatype recvtype)
{
    rwp_comm *c = intra(comm);
    if (c)
        to_all(c, sendbuf == MPI_IN_PLACE ? rwp_bytes(recvcount, recvtype)
                                          : rwp_bytes(sendcount, sendtype));
}

/* allgatherv: i -> every j, sendcount x size(sendtype) (in place:
 * recvcounts[i] x size(recvtype)). */
static void allgatherv(MPI_Comm comm, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       const int *recvcounts, MPI_Datatype recvtype)
{
    rwp_comm *c = intra(comm);
    if (c)
        to_all(c, sendbuf == MPI_IN_PLACE ? rwp_bytes(recvcounts[c->rank], recvtype)
                                          : rwp_bytes(sendcount, sendtype));
}

/* alltoallv: i -> j, sendcounts[j] x size(sendtype) (in place: recvcounts
 * and recvtype). */
static void alltoallv(MPI_Comm comm, const void *sendbuf, const int *sendcounts,
                      MPI_Datatype sendtype, const int *recvcounts, MPI_Datatype recvtype)
{
    rwp_comm *c = intra(comm);
    if (!c)
        return;
    const int *counts = sendbuf == MPI_IN_PLACE ? recvcounts : sendcounts;
    int64_t size = rwp_bytes(1, sendbuf == MPI_IN_PLACE ? recvtype : sendtype);
    for (int j = 0; j < c->size; j++)
        rwp_send_coll(c, j, (int64_t)counts[j] * size);
}

/* alltoallw: i -> j, sendcounts[j] x size(sendtypes[j]) (in place: recv*). */
static void alltoallw(MPI_Comm comm, const void *sendbuf, const int *sendcounts,
                      const MPI_Datatype *sendtypes, const int *recvcounts,
                      const MPI_Datatype *recvtypes)
{
    rwp_comm *c = intra(comm);
    if (!c)
        return;
    int in_place = sendbuf == MPI_IN_PLACE;
    const int *counts = in_place ? recvcounts : sendcounts;
    const MPI_Datatype *types = in_place ? recvtypes : sendtypes;
    for (int j = 0; j < c->size; j++)
        if (j != c->rank && counts[j] > 0)
            rwp_send_coll(c, j, rwp_bytes(counts[j], types[j]));
}

/* ------------------------------------------------------------- blocking */

int MPI_Barrier(MPI_Comm comm)
{
    RWP_ENTER;
    int rc = PMPI_Barrier(comm);
    RWP_LEAVE(RWP_COLL);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    COLL_CALL(PMPI_Bcast(buf, count, type, root, comm),
              (bcast(comm, count, type, root), GROUP(comm, RW_COLL_BCAST, root, rwp_bytes(count, type))));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    COLL_CALL(PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm),
              (reduce(comm, count, type, root), GROUP(comm, RW_COLL_REDUCE, root, rwp_bytes(count, type))));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    COLL_CALL(PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm),
              (allreduce(comm, count, type), GROUP(comm, RW_COLL_ALLREDUCE, 0, rwp_bytes(count, type))));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    COLL_CALL(PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm),
              reduce_scatter_block(comm, recvcount, type));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    COLL_CALL(PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm),
              reduce_scatter(comm, recvcounts, type));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm)
{
    COLL_CALL(PMPI_Scan(sendbuf, recvbuf, count, type, op, comm), scan(comm, count, type));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    COLL_CALL(PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm), scan(comm, count, type));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL_CALL(PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              (gather(comm, sendcount, sendtype, root), GROUP_GATHER(comm, root)));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    COLL_CALL(PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                           comm),
              gather(comm, sendcount, sendtype, root));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL_CALL(PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              (scatter(comm, sendcount, sendtype, root), GROUP_SCATTER(comm, root)));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    COLL_CALL(PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                            comm),
              scatterv(comm, sendcounts, sendtype, root));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              (allgather(comm, sendbuf, sendcount, sendtype, recvcount, recvtype),
               GROUP_ALL(comm, RW_COLL_ALLGATHER)));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                              comm),
              allgatherv(comm, sendbuf, sendcount, sendtype, recvcounts, recvtype));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
              (allgather(comm, sendbuf, sendcount, sendtype, recvcount, recvtype),
               GROUP_ALL(comm, RW_COLL_ALLTOALL)));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_CALL(PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                             recvtype, comm),
              alltoallv(comm, sendbuf, sendcounts, sendtype, recvcounts, recvtype));
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    COLL_CALL(PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                             recvtypes, comm),
              alltoallw(comm, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes));
}

/* ---------------------------------------------------------- nonblocking */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    RWP_ENTER;
    int rc = PMPI_Ibarrier(comm, request);
    RWP_LEAVE(RWP_COLL);
    return rc;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ibcast(buf, count, type, root, comm, request),
              (bcast(comm, count, type, root), GROUP(comm, RW_COLL_BCAST, root, rwp_bytes(count, type))));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request),
              (reduce(comm, count, type, root), GROUP(comm, RW_COLL_REDUCE, root, rwp_bytes(count, type))));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request),
              (allreduce(comm, count, type), GROUP(comm, RW_COLL_ALLREDUCE, 0, rwp_bytes(count, type))));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request),
              reduce_scatter_block(comm, recvcount, type));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request),
              reduce_scatter(comm, recvcounts, type));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request), scan(comm, count, type));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request), scan(comm, count, type));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                           request),
              (gather(comm, sendcount, sendtype, root), GROUP_GATHER(comm, root)));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                            comm, request),
              gather(comm, sendcount, sendtype, root));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    COLL_CALL(PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request),
              (scatter(comm, sendcount, sendtype, root), GROUP_SCATTER(comm, root)));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                             comm, request),
              scatterv(comm, sendcounts, sendtype, root));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request),
              (allgather(comm, sendbuf, sendcount, sendtype, recvcount, recvtype),
               GROUP_ALL(comm, RW_COLL_ALLGATHER)));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, request),
              allgatherv(comm, sendbuf, sendcount, sendtype, recvcounts, recvtype));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request),
              (allgather(comm, sendbuf, sendcount, sendtype, recvcount, recvtype),
               GROUP_ALL(comm, RW_COLL_ALLTOALL)));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    COLL_CALL(PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, request),
              alltoallv(comm, sendbuf, sendcounts, sendtype, recvcounts, recvtype));
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    COLL_CALL(PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request),
              alltoallw(comm, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes));
}
