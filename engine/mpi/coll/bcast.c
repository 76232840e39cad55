/* Broadcast over a tree: receive from the parent, send to the children in
 * the tree's order. Segmented (pipelined) when segment > 0: segment s+1 is
 * already being received while s is forwarded. Everything moves as the
 * data's bytes, so ranks may describe the data with different types of
 * the same signature. A node sends with blocking sends, one child after
 * the other (SMPI's binomial_tree does the same), or, fan_out_nonblocking,
 * posts all its sends at once and waits for them (SMPI's flattree). */
#include "coll.h"
#include "internal.h"

#include <stdlib.h>

static rw_status send_children(const char *data, int len, const rw_tree *t, int me, MPI_Comm dup,
                               int nonblocking, MPI_Request *reqs)
{
    int first = t->first_child[me], n = t->first_child[me + 1] - first;
    if (!nonblocking) {
        for (int i = 0; i < n; i++)
            if (PMPI_Send(data, len, MPI_BYTE, t->child[first + i], RWC_TAG_BCAST, dup) != MPI_SUCCESS)
                return rw_fail(RW_ERR_MPI, "MPI_Send (bcast) to rank %d failed", t->child[first + i]);
        return RW_OK;
    }
    for (int i = 0; i < n; i++)
        if (PMPI_Isend(data, len, MPI_BYTE, t->child[first + i], RWC_TAG_BCAST, dup, &reqs[i]) != MPI_SUCCESS)
            return rw_fail(RW_ERR_MPI, "MPI_Isend (bcast) to rank %d failed", t->child[first + i]);
    return rwc_mpi(PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall (bcast)");
}

rw_status rwc_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *t, MPI_Comm dup,
                         size_t segment, int fan_out_nonblocking)
{
    int me;
    PMPI_Comm_rank(dup, &me);
    int is_root = me == t->root;
    rwc_bytes b;
    rw_status st = rwc_bytes_open(&b, buf, count, type, dup, is_root);
    if (st || b.len == 0)
        return st;
    int n_children = t->first_child[me + 1] - t->first_child[me];
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(n_children + 1));
    if (!reqs) {
        rwc_bytes_close(&b, buf, count, type, dup, 0);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d requests", n_children + 1);
    }
    size_t seg = segment > 0 && segment < b.len ? segment : b.len;
    if (seg > (size_t)INT32_MAX / 2)
        seg = (size_t)INT32_MAX / 2;
    int parent = t->parent[me];
    MPI_Request incoming = MPI_REQUEST_NULL;
    size_t off = 0;
    if (parent >= 0)
        st = rwc_mpi(PMPI_Irecv(b.data, (int)(seg < b.len ? seg : b.len), MPI_BYTE, parent, RWC_TAG_BCAST, dup,
                                &incoming), "MPI_Irecv (bcast)");
    while (!st && off < b.len) {
        int len = (int)(b.len - off < seg ? b.len - off : seg);
        if (parent >= 0) {
            st = rwc_mpi(PMPI_Wait(&incoming, MPI_STATUS_IGNORE), "MPI_Wait (bcast)");
            size_t next = off + (size_t)len;
            if (!st && next < b.len)
                st = rwc_mpi(PMPI_Irecv(b.data + next, (int)(b.len - next < seg ? b.len - next : seg), MPI_BYTE,
                                        parent, RWC_TAG_BCAST, dup, &incoming), "MPI_Irecv (bcast)");
        }
        if (!st)
            st = send_children(b.data + off, len, t, me, dup, fan_out_nonblocking, reqs);
        off += (size_t)len;
    }
    if (incoming != MPI_REQUEST_NULL) { /* only after a failure */
        PMPI_Cancel(&incoming);
        PMPI_Request_free(&incoming);
    }
    free(reqs);
    rw_status close = rwc_bytes_close(&b, buf, count, type, dup, !is_root && !st);
    return st ? st : close;
}
