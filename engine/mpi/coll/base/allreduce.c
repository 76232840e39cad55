/* Allreduce without a root: ring (reduce-scatter then allgather of
 * blocks) and recursive doubling. Commutative operations only (the
 * caller sends non-commutative ones to reduce + bcast over an in-order
 * tree). Every combination puts the lower rank's data on the left, so all
 * ranks compute bit-identical results, the same on every run. */
#include "base.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* acc = (lower rank's) op (higher rank's); other holds the peer's data and
 * may be overwritten; returns which buffer holds the result via *acc. */
static rw_status combine(char **acc, char **other, int peer_is_lower, int count, MPI_Datatype type, MPI_Op op)
{
    if (peer_is_lower)
        return rwc_mpi(PMPI_Reduce_local(*other, *acc, count, type, op), "MPI_Reduce_local");
    rw_status st = rwc_mpi(PMPI_Reduce_local(*acc, *other, count, type, op), "MPI_Reduce_local");
    char *swap = *acc;
    *acc = *other;
    *other = swap;
    return st;
}

rw_status rwc_allreduce_rd(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm dup)
{
    int me, n;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    if (count == 0)
        return RW_OK;
    void *m1 = NULL, *m2 = NULL;
    char *acc, *tmp;
    rw_status st = rwc_typed_alloc(count, type, &m1, &acc);
    if (!st)
        st = rwc_typed_alloc(count, type, &m2, &tmp);
    if (!st)
        st = rwc_copy(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type, acc, count, type, dup);
    /* fold: of the first 2 rem ranks, the even ones hand their data to
     * the odd ones and wait; the rest (p2 of them) double recursively */
    int p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    int rem = n - p2, vrank;
    if (!st && me < 2 * rem) {
        if (me % 2 == 0) {
            st = rwc_mpi(PMPI_Send(acc, count, type, me + 1, RWC_TAG_ALLREDUCE, dup), "MPI_Send (allreduce)");
            vrank = -1;
        } else {
            st = rwc_mpi(PMPI_Recv(tmp, count, type, me - 1, RWC_TAG_ALLREDUCE, dup, MPI_STATUS_IGNORE), "MPI_Recv (allreduce)");
            if (!st)
                st = combine(&acc, &tmp, 1, count, type, op);
            vrank = me / 2;
        }
    } else {
        vrank = me - rem;
    }
    for (int mask = 1; !st && vrank >= 0 && mask < p2; mask <<= 1) {
        int vpeer = vrank ^ mask;
        int peer = vpeer < rem ? vpeer * 2 + 1 : vpeer + rem;
        st = rwc_mpi(PMPI_Sendrecv(acc, count, type, peer, RWC_TAG_ALLREDUCE, tmp, count, type, peer,
                                   RWC_TAG_ALLREDUCE, dup, MPI_STATUS_IGNORE), "MPI_Sendrecv (allreduce)");
        if (!st)
            st = combine(&acc, &tmp, peer < me, count, type, op);
    }
    if (!st && me < 2 * rem)
        st = me % 2 ? rwc_mpi(PMPI_Send(acc, count, type, me - 1, RWC_TAG_ALLREDUCE, dup), "MPI_Send (allreduce)")
                    : rwc_mpi(PMPI_Recv(acc, count, type, me + 1, RWC_TAG_ALLREDUCE, dup, MPI_STATUS_IGNORE),
                              "MPI_Recv (allreduce)");
    if (!st)
        st = rwc_copy(acc, count, type, recvbuf, count, type, dup);
    free(m1);
    free(m2);
    return st;
}

rw_status rwc_allreduce_ring(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm dup)
{
    int me, n;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    if (count == 0)
        return RW_OK;
    if (count < n) /* some blocks would be empty: doubling is as good */
        return rwc_allreduce_rd(sendbuf, recvbuf, count, type, op, dup);
    MPI_Aint lb, ext;
    rw_status st = rwc_mpi(PMPI_Type_get_extent(type, &lb, &ext), "MPI_Type_get_extent");
    void *m1 = NULL, *m2 = NULL;
    char *acc = NULL, *tmp = NULL;
    if (!st)
        st = rwc_typed_alloc(count, type, &m1, &acc);
    if (!st)
        st = rwc_typed_alloc(count / n + 1, type, &m2, &tmp);
    if (!st)
        st = rwc_copy(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type, acc, count, type, dup);
    /* block b: elements [start(b), start(b) + len(b)) */
#define LEN(b) (count / n + ((b) < count % n))
#define START(b) ((MPI_Aint)(b) * (count / n) + ((b) < count % n ? (b) : count % n))
    int right = (me + 1) % n, left = (me + n - 1) % n;
    /* reduce-scatter: at step s, send block me - s, receive block me - s - 1
     * and fold it in; block b travels b+1, b+2, ..., b and ends complete at
     * rank b - 1 ... each block is combined in the same ring order every run */
    for (int s = 0; !st && s < n - 1; s++) {
        int sb = ((me - s) % n + n) % n, rb = ((me - s - 1) % n + n) % n;
        st = rwc_mpi(PMPI_Sendrecv(acc + START(sb) * ext, LEN(sb), type, right, RWC_TAG_ALLREDUCE, tmp, LEN(rb), type,
                                   left, RWC_TAG_ALLREDUCE, dup, MPI_STATUS_IGNORE), "MPI_Sendrecv (allreduce)");
        /* the data arriving from the left has been gathered from ranks
         * rb+1 .. me-1 (ring order): it goes on the left of mine */
        if (!st)
            st = rwc_mpi(PMPI_Reduce_local(tmp, acc + START(rb) * ext, LEN(rb), type, op), "MPI_Reduce_local");
    }
    /* rank me now holds block (me + 1) mod n complete: allgather it */
    for (int s = 0; !st && s < n - 1; s++) {
        int sb = ((me + 1 - s) % n + n) % n, rb = ((me - s) % n + n) % n;
        st = rwc_mpi(PMPI_Sendrecv(acc + START(sb) * ext, LEN(sb), type, right, RWC_TAG_ALLREDUCE,
                                   acc + START(rb) * ext, LEN(rb), type, left, RWC_TAG_ALLREDUCE, dup,
                                   MPI_STATUS_IGNORE), "MPI_Sendrecv (allreduce)");
    }
#undef LEN
#undef START
    if (!st)
        st = rwc_copy(acc, count, type, recvbuf, count, type, dup);
    free(m1);
    free(m2);
    return st;
}

rw_status rwc_allreduce_hier(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             rwc_comm *c)
{
    rw_status st = rwc_nodes(c);
    if (st || count == 0)
        return st;
    int node_rank;
    PMPI_Comm_rank(c->node, &node_rank);
    /* inside the node to its leader (node rank 0); in place: the data is in recvbuf */
    const void *mine = sendbuf == MPI_IN_PLACE && node_rank != 0 ? recvbuf : sendbuf;
    st = rwc_reduce_tree(mine, recvbuf, count, type, op, c->node_tree, c->node);
    if (!st && c->leaders != MPI_COMM_NULL)
        st = rwc_allreduce_rd(MPI_IN_PLACE, recvbuf, count, type, op, c->leaders);
    return st ? st : rwc_bcast_tree(recvbuf, count, type, c->node_tree, c->node, 0, 0);
}
