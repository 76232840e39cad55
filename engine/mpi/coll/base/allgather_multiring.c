/* The multi-ring allgather (Ajima 2018, the Tofu interconnect's
 * "three-phase quad rings"): every block is cut into RW_MULTIRING_PARTS
 * parts and part k travels its own ring, forward or backward, all parts at
 * once, so that a rank sends and receives on two neighbours at a time
 * instead of one. The rings run through the ranks in the network's order
 * (given: rw_multiring_order on rank 0's network, decision/params.c; rank
 * order without one), so ring neighbours
 * are one hop apart on a torus and a ring leaves each rack once on a fat
 * tree. The data moves as its bytes in MPI_Pack order: the whole result
 * buffer is one byte view (the buffer itself for dense predefined types). */
#include "base.h"
#include "internal.h"

#include "coll/multiring.h"

#include <stdio.h>
#include <stdlib.h>

enum { RWC_TAG_MULTIRING = 48 }; /* + ring, above the trinary trees' tags */

/* This rank's own block into the byte view at block `me`. */
static rw_status own_block(const void *sendbuf, int sc, MPI_Datatype stype, void *recvbuf, int rc,
                           MPI_Datatype rtype, const rwc_bytes *b, size_t blk, int me, MPI_Comm dup)
{
    MPI_Aint lb, ext;
    rw_status st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent");
    if (st)
        return st;
    const char *mine = (const char *)recvbuf + (MPI_Aint)me * rc * ext;
    if (!b->packed)
        return sendbuf == MPI_IN_PLACE ? RW_OK
                                       : rwc_copy(sendbuf, sc, stype, b->data + (size_t)me * blk, rc, rtype, dup);
    int pos = (int)((size_t)me * blk);
    st = sendbuf == MPI_IN_PLACE ? rwc_mpi(PMPI_Pack(mine, rc, rtype, b->data, (int)b->len, &pos, dup), "MPI_Pack")
                                 : rwc_mpi(PMPI_Pack(sendbuf, sc, stype, b->data, (int)b->len, &pos, dup), "MPI_Pack");
    if (!st && (size_t)pos != ((size_t)me + 1) * blk)
        st = rw_fail(RW_ERR_STATE, "MPI_Pack gave %zu bytes for a block of %zu (not the receive type's signature)",
                     (size_t)pos - (size_t)me * blk, blk);
    return st;
}

rw_status rwc_allgather_multiring(const void *sendbuf, int sc, MPI_Datatype stype, void *recvbuf, int rc,
                                  MPI_Datatype rtype, rwc_comm *c, const int32_t *order)
{
    int n = c->size, me = c->rank;
    size_t blk;
    rw_status st = rwc_type_bytes(rc, rtype, &blk);
    if (st || blk == 0)
        return st;
    int32_t *pos = malloc((size_t)n * sizeof *pos);
    if (!pos)
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", n);
    for (int32_t p = 0; p < n; p++)
        pos[order ? order[p] : p] = p;
#define AT(p) (order ? order[(p)] : (p))
    rwc_bytes b;
    /* derived types: a packed copy of the whole result, our block packed into it */
    if ((st = rwc_bytes_open(&b, recvbuf, rc * n, rtype, c->dup, 0))) {
        free(pos);
        return st;
    }
    st = own_block(sendbuf, sc, stype, recvbuf, rc, rtype, &b, blk, me, c->dup);
    size_t off[RW_MULTIRING_PARTS], len[RW_MULTIRING_PARTS];
    for (int k = 0; k < RW_MULTIRING_PARTS; k++)
        len[k] = rw_multiring_part(blk, RW_MULTIRING_PARTS, k, &off[k]);
    int32_t p = pos[me];
    for (int32_t s = 0; !st && s < n - 1; s++) {
        MPI_Request req[2 * RW_MULTIRING_PARTS];
        int nr = 0;
        for (int k = 0; !st && k < RW_MULTIRING_PARTS; k++) {
            if (len[k] == 0)
                continue;
            int32_t from = rw_multiring_prev(n, k, p), to = rw_multiring_next(n, k, p);
            /* at step s ring k carries on the block that started s places behind on it */
            int32_t back = (int32_t)(((int64_t)(from - p) * s % n + n) % n);
            int32_t send_blk = AT((p + back) % n), recv_blk = AT((from + back) % n);
            st = rwc_mpi(PMPI_Irecv(b.data + (size_t)recv_blk * blk + off[k], (int)len[k], MPI_BYTE, AT(from),
                                    RWC_TAG_MULTIRING + k, c->dup, &req[nr++]),
                         "MPI_Irecv (multiring allgather)");
            if (!st)
                st = rwc_mpi(PMPI_Isend(b.data + (size_t)send_blk * blk + off[k], (int)len[k], MPI_BYTE, AT(to),
                                        RWC_TAG_MULTIRING + k, c->dup, &req[nr++]),
                             "MPI_Isend (multiring allgather)");
        }
        rw_status w = rwc_mpi(PMPI_Waitall(nr, req, MPI_STATUSES_IGNORE), "MPI_Waitall (multiring allgather)");
        st = st ? st : w;
    }
#undef AT
    free(pos);
    rw_status close = rwc_bytes_close(&b, recvbuf, rc * n, rtype, c->dup, !st);
    return st ? st : close;
}
