/* Gather and scatter over a tree, in blocks of whole subtrees. A rank
 * holds the blocks of its subtree in preorder: its own, then each child's
 * subtree, children taken in the reverse of the tree's send order (the
 * order a gather receives them in: smallest subtree first on the standard
 * shapes). On a binomial tree rooted at 0 that is rank order. The root
 * reorders the blocks into rank order; every block moves as bytes. */
#include "base.h"
#include "internal.h"

#include <stdlib.h>

/* Preorder of r's subtree into out; returns how many ranks it wrote. */
static int32_t preorder(const rw_tree *t, int32_t r, int32_t *out)
{
    int32_t n = 1;
    out[0] = r;
    for (int32_t i = t->first_child[r + 1] - 1; i >= t->first_child[r]; i--)
        n += preorder(t, t->child[i], out + n);
    return n;
}

/* The block size in bytes, which every rank agrees on. */
static rw_status block_bytes(int is_root, int sc, MPI_Datatype st, int rc, MPI_Datatype rt, size_t *out)
{
    return is_root ? rwc_type_bytes(rc, rt, out) : rwc_type_bytes(sc, st, out);
}

rw_status rwc_gather_tree(const void *sendbuf, int sc, MPI_Datatype stype, void *recvbuf, int rc,
                          MPI_Datatype rtype, const rw_tree *t, MPI_Comm dup)
{
    int me;
    PMPI_Comm_rank(dup, &me);
    int is_root = me == t->root, in_place = is_root && sendbuf == MPI_IN_PLACE;
    size_t blk;
    rw_status st = block_bytes(is_root, sc, stype, rc, rtype, &blk);
    if (st || blk == 0)
        return st;
    MPI_Aint lb, ext;
    if (is_root && (st = rwc_mpi(PMPI_Type_get_extent(rtype, &lb, &ext), "MPI_Type_get_extent")))
        return st;
    int first = t->first_child[me], n = t->first_child[me + 1] - first;
    if (n == 0 && !is_root) { /* a leaf sends its block as it is */
        rwc_bytes own;
        if ((st = rwc_bytes_open(&own, sendbuf, sc, stype, dup, 1)))
            return st;
        st = rwc_mpi(PMPI_Send(own.data, (int)own.len, MPI_BYTE, t->parent[me], RWC_TAG_GATHER, dup), "MPI_Send (gather)");
        rwc_bytes_close(&own, NULL, 0, stype, dup, 0);
        return st;
    }
    int32_t sub = rw_tree_subtree_size(t, me);
    int32_t *ranks = malloc(sizeof(int32_t) * (size_t)sub);
    char *data = malloc(blk * (size_t)sub);
    if (!ranks || !data) {
        free(ranks);
        free(data);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d blocks of %zu bytes", (int)sub, blk);
    }
    preorder(t, me, ranks);
    /* own block first (the root's in-place block is already in place) */
    if (!in_place) {
        int pos = 0;
        st = is_root ? rwc_mpi(PMPI_Pack(sendbuf, sc, stype, data, (int)blk, &pos, dup), "MPI_Pack")
                     : rwc_mpi(PMPI_Pack(sendbuf, sc, stype, data, (int)blk, &pos, dup), "MPI_Pack");
    }
    /* Every child's receive posted at once: a child's transfer starts when
     * its receive is posted, so in-order blocking receives would pay each
     * child's latency one after the other. */
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1));
    if (!st && !req)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d receives", n);
    int posted = 0;
    size_t off = blk;
    for (int32_t i = t->first_child[me + 1] - 1; !st && i >= first; i--) {
        int32_t c = t->child[i];
        size_t len = blk * (size_t)rw_tree_subtree_size(t, c);
        if (len > INT32_MAX)
            st = rw_fail(RW_ERR_STATE, "a subtree's %zu bytes do not fit an MPI count", len);
        else
            st = rwc_mpi(PMPI_Irecv(data + off, (int)len, MPI_BYTE, c, RWC_TAG_GATHER, dup, &req[posted++]),
                         "MPI_Irecv (gather)");
        off += len;
    }
    if (posted) {
        rw_status w = rwc_mpi(PMPI_Waitall(posted, req, MPI_STATUSES_IGNORE), "MPI_Waitall (gather)");
        if (!st)
            st = w;
    }
    free(req);
    if (!st && !is_root)
        st = blk * (size_t)sub > INT32_MAX
                 ? rw_fail(RW_ERR_STATE, "a subtree's bytes do not fit an MPI count")
                 : rwc_mpi(PMPI_Send(data, (int)(blk * (size_t)sub), MPI_BYTE, t->parent[me], RWC_TAG_GATHER, dup),
                           "MPI_Send (gather)");
    for (int32_t i = in_place ? 1 : 0; !st && is_root && i < sub; i++) {
        int pos = 0;
        st = rwc_mpi(PMPI_Unpack(data + blk * (size_t)i, (int)blk, &pos, (char *)recvbuf + (MPI_Aint)ranks[i] * rc * ext,
                                 rc, rtype, dup), "MPI_Unpack");
    }
    free(ranks);
    free(data);
    return st;
}

rw_status rwc_scatter_tree(const void *sendbuf, int sc, MPI_Datatype stype, void *recvbuf, int rc,
                           MPI_Datatype rtype, const rw_tree *t, MPI_Comm dup)
{
    int me;
    PMPI_Comm_rank(dup, &me);
    int is_root = me == t->root, in_place = is_root && recvbuf == MPI_IN_PLACE;
    size_t blk;
    /* scatter's root describes blocks with the send type */
    rw_status st = is_root ? rwc_type_bytes(sc, stype, &blk) : rwc_type_bytes(rc, rtype, &blk);
    if (st || blk == 0)
        return st;
    MPI_Aint lb, ext;
    if (is_root && (st = rwc_mpi(PMPI_Type_get_extent(stype, &lb, &ext), "MPI_Type_get_extent")))
        return st;
    int first = t->first_child[me], n = t->first_child[me + 1] - first;
    if (n == 0 && !is_root) { /* a leaf receives its block as it is */
        rwc_bytes own;
        if ((st = rwc_bytes_open(&own, recvbuf, rc, rtype, dup, 0)))
            return st;
        st = rwc_mpi(PMPI_Recv(own.data, (int)own.len, MPI_BYTE, t->parent[me], RWC_TAG_SCATTER, dup,
                               MPI_STATUS_IGNORE), "MPI_Recv (scatter)");
        rw_status close = rwc_bytes_close(&own, recvbuf, rc, rtype, dup, !st);
        return st ? st : close;
    }
    int32_t sub = rw_tree_subtree_size(t, me);
    int32_t *ranks = malloc(sizeof(int32_t) * (size_t)sub);
    char *data = malloc(blk * (size_t)sub);
    if (!ranks || !data) {
        free(ranks);
        free(data);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d blocks of %zu bytes", (int)sub, blk);
    }
    preorder(t, me, ranks);
    if (blk * (size_t)sub > INT32_MAX)
        st = rw_fail(RW_ERR_STATE, "a subtree's %zu bytes do not fit an MPI count", blk * (size_t)sub);
    for (int32_t i = 0; !st && is_root && i < sub; i++) {
        if (i == 0 && in_place)
            continue;
        int pos = 0;
        st = rwc_mpi(PMPI_Pack((const char *)sendbuf + (MPI_Aint)ranks[i] * sc * ext, sc, stype,
                               data + blk * (size_t)i, (int)blk, &pos, dup), "MPI_Pack");
    }
    if (!st && !is_root)
        st = rwc_mpi(PMPI_Recv(data, (int)(blk * (size_t)sub), MPI_BYTE, t->parent[me], RWC_TAG_SCATTER, dup,
                               MPI_STATUS_IGNORE), "MPI_Recv (scatter)");
    /* each child's subtree, in the tree's send order; offsets follow the preorder */
    size_t *offset = malloc(sizeof(size_t) * (size_t)(n > 0 ? n : 1));
    if (!st && !offset)
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %d children", n);
    size_t off = blk;
    for (int32_t i = n - 1; !st && i >= 0; i--) {
        offset[i] = off;
        off += blk * (size_t)rw_tree_subtree_size(t, t->child[first + i]);
    }
    for (int32_t i = 0; !st && i < n; i++) {
        int32_t c = t->child[first + i];
        st = rwc_mpi(PMPI_Send(data + offset[i], (int)(blk * (size_t)rw_tree_subtree_size(t, c)), MPI_BYTE, c,
                               RWC_TAG_SCATTER, dup), "MPI_Send (scatter)");
    }
    if (!st && !in_place) {
        int pos = 0;
        st = rwc_mpi(PMPI_Unpack(data, (int)blk, &pos, recvbuf, rc, rtype, dup), "MPI_Unpack");
    }
    free(offset);
    free(ranks);
    free(data);
    return st;
}
