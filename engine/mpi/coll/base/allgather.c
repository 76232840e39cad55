/* Allgather without a root: ring (n-1 steps, one block each) and recursive
 * doubling (power-of-two sizes; others take the ring). Blocks move in the
 * receive type, which has the same signature on every rank. */
#include "base.h"
#include "internal.h"

static rw_status own_block(const void *sendbuf, int sc, MPI_Datatype st, char *recvbuf, int rc,
                           MPI_Datatype rt, MPI_Aint ext, int me, MPI_Comm dup)
{
    if (sendbuf == MPI_IN_PLACE)
        return RW_OK;
    return rwc_copy(sendbuf, sc, st, recvbuf + (MPI_Aint)me * rc * ext, rc, rt, dup);
}

rw_status rwc_allgather_ring(const void *sendbuf, int sc, MPI_Datatype stype, void *recvbuf, int rc,
                             MPI_Datatype rtype, MPI_Comm dup)
{
    int me, n;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    MPI_Aint lb, ext;
    size_t bytes;
    rw_status st = rwc_type_bytes(rc, rtype, &bytes);
    if (st || bytes == 0)
        return st;
    if ((st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent")))
        return st;
    char *r = recvbuf;
    st = own_block(sendbuf, sc, stype, r, rc, rtype, ext, me, dup);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int s = 0; !st && s < n - 1; s++) {
        int sb = (me - s + n) % n, rb = (me - s - 1 + n) % n;
        st = rwc_mpi(PMPI_Sendrecv(r + (MPI_Aint)sb * rc * ext, rc, rtype, right, RWC_TAG_ALLGATHER,
                                   r + (MPI_Aint)rb * rc * ext, rc, rtype, left, RWC_TAG_ALLGATHER, dup,
                                   MPI_STATUS_IGNORE), "MPI_Sendrecv (allgather)");
    }
    return st;
}

rw_status rwc_allgather_rd(const void *sendbuf, int sc, MPI_Datatype stype, void *recvbuf, int rc,
                           MPI_Datatype rtype, MPI_Comm dup)
{
    int me, n;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    if (n & (n - 1))
        return rwc_allgather_ring(sendbuf, sc, stype, recvbuf, rc, rtype, dup);
    MPI_Aint lb, ext;
    size_t bytes;
    rw_status st = rwc_type_bytes(rc, rtype, &bytes);
    if (st || bytes == 0)
        return st;
    if ((st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent")))
        return st;
    char *r = recvbuf;
    st = own_block(sendbuf, sc, stype, r, rc, rtype, ext, me, dup);
    /* after the step with mask m, a rank holds the 2m blocks of its group */
    for (int mask = 1; !st && mask < n; mask <<= 1) {
        int peer = me ^ mask, mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        st = rwc_mpi(PMPI_Sendrecv(r + (MPI_Aint)mine * rc * ext, rc * mask, rtype, peer, RWC_TAG_ALLGATHER,
                                   r + (MPI_Aint)theirs * rc * ext, rc * mask, rtype, peer, RWC_TAG_ALLGATHER, dup,
                                   MPI_STATUS_IGNORE), "MPI_Sendrecv (allgather)");
    }
    return st;
}
