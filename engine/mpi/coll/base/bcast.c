/* Broadcast over a tree: receive from the parent, send to the children in
 * the tree's order. Segmented (pipelined) when segment > 0: the next segments
 * are already being received while s is forwarded. Everything moves as the
 * data's bytes, so ranks may describe the data with different types of
 * the same signature. A node sends with blocking sends, one child after
 * the other (SMPI's binomial_tree does the same), or, fan_out_nonblocking,
 * posts all its sends at once and waits for them (SMPI's flattree). */
#include "base.h"
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

/* Receive segment k of b from parent. */
static rw_status post_segment(rwc_bytes *b, size_t seg, size_t k, int parent, MPI_Comm dup, MPI_Request *req)
{
    size_t off = k * seg;
    int len = (int)(b->len - off < seg ? b->len - off : seg);
    return rwc_mpi(PMPI_Irecv(b->data + off, len, MPI_BYTE, parent, RWC_TAG_BCAST, dup, req), "MPI_Irecv (bcast)");
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
    size_t n_seg = (b.len + seg - 1) / seg;
    /* Receives are posted up to WINDOW segments ahead: a simulator (and a
     * rendezvous protocol) starts a transfer only once its receive is
     * posted, and one receive at a time would pay a latency per segment
     * the pipeline should hide (measured under SMPI: a 256 KiB chain in
     * 10 KiB segments took 167 us, twice its pipelined time). */
    enum { WINDOW = 8 };
    MPI_Request incoming[WINDOW];
    for (int k = 0; k < WINDOW; k++)
        incoming[k] = MPI_REQUEST_NULL;
    int parent = t->parent[me];
    for (size_t k = 0; parent >= 0 && !st && k < n_seg && k < WINDOW; k++)
        st = post_segment(&b, seg, k, parent, dup, &incoming[k]);
    for (size_t k = 0; !st && k < n_seg; k++) {
        size_t off = k * seg;
        int len = (int)(b.len - off < seg ? b.len - off : seg);
        if (parent >= 0) {
            st = rwc_mpi(PMPI_Wait(&incoming[k % WINDOW], MPI_STATUS_IGNORE), "MPI_Wait (bcast)");
            if (!st && k + WINDOW < n_seg)
                st = post_segment(&b, seg, k + WINDOW, parent, dup, &incoming[k % WINDOW]);
        }
        if (!st)
            st = send_children(b.data + off, len, t, me, dup, fan_out_nonblocking, reqs);
    }
    for (int k = 0; k < WINDOW; k++)
        if (incoming[k] != MPI_REQUEST_NULL) { /* only after a failure */
            PMPI_Cancel(&incoming[k]);
            PMPI_Request_free(&incoming[k]);
        }
    free(reqs);
    rw_status close = rwc_bytes_close(&b, buf, count, type, dup, !is_root && !st);
    return st ? st : close;
}
