/* Reduce over the triple trinary trees reversed (Ajima 2018): element
 * range k of the vector goes up tree k, segment by segment, the three at
 * once. A leaf of a tree sends its own segments at once (nonblocking); an
 * inner rank keeps WINDOW segments of receives posted from each child,
 * folds each arriving segment into its own (children in the tree's order,
 * acc = child op acc) and sends the result up. Commutative operations
 * only (the trees are not in rank order). A rank waits only in the one
 * tree where it is inner (the root in all three), after it has sent the
 * earlier trees' segments of the same index, so no wait closes a cycle. */
#include "coll.h"
#include "coll_trinary.h"
#include "coll/trinary.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>

enum { WINDOW = 4, SENDS = 64 };

typedef struct rpart {
    const rw_tree *t;
    size_t off, len, n_seg; /* elements; segments */
    int n_kids;
    char *tmp;              /* n_kids x WINDOW segments */
    void *tmp_mem;
    MPI_Request *in;        /* n_kids x WINDOW */
} rpart;

static size_t seg_len(const rpart *p, size_t seg, size_t i)
{
    return i + 1 < p->n_seg ? seg : p->len - (p->n_seg - 1) * seg;
}

static rw_status post(rpart *p, int k, size_t i, size_t seg, MPI_Aint extent, int me, MPI_Datatype type,
                      MPI_Comm dup)
{
    rw_status st = RW_OK;
    for (int c = 0; !st && c < p->n_kids; c++) {
        size_t slot = (size_t)c * WINDOW + i % WINDOW;
        st = rwc_mpi(PMPI_Irecv(p->tmp + (MPI_Aint)(slot * seg) * extent, (int)seg_len(p, seg, i), type,
                                p->t->child[p->t->first_child[me] + c], RWC_TAG_TRINARY + 3 + k, dup,
                                &p->in[slot]),
                     "MPI_Irecv (trinary reduce)");
    }
    return st;
}

rw_status rwc_reduce_trinary(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                             MPI_Comm dup, size_t segment)
{
    int me, n, tsize, commute = 0;
    MPI_Aint lb, extent;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    rw_status st = rwc_mpi(PMPI_Op_commutative(op, &commute), "MPI_Op_commutative");
    if (!st)
        st = rwc_mpi(PMPI_Type_size(type, &tsize), "MPI_Type_size");
    if (!st)
        st = rwc_mpi(PMPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
    if (st)
        return st;
    if (!commute)
        return rw_fail(RW_ERR_STATE, "trinary reduce: a non-commutative operation (the trees are out of rank order)");
    if (count == 0)
        return RW_OK;
    const void *mine = me == root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    rw_tree *t[3];
    if ((st = rw_tree_trinary(n, root, t)))
        return st;
    /* acc: the root's receive buffer, elsewhere a copy of the rank's data */
    void *acc_mem = NULL;
    char *acc = me == root ? recvbuf : NULL;
    if (me != root)
        st = rwc_typed_alloc(count, type, &acc_mem, &acc);
    if (!st && mine != acc)
        st = rwc_copy(mine, count, type, acc, count, type, dup);
    size_t seg_bytes = segment > 0 ? segment : rw_trinary_segment((size_t)count * (size_t)(tsize > 0 ? tsize : 1));
    size_t seg = tsize > 0 ? seg_bytes / (size_t)tsize : (size_t)count;
    if (seg == 0)
        seg = 1;
    if (seg > (size_t)INT_MAX / 2)
        seg = (size_t)INT_MAX / 2;
    rpart pt[3] = {{0}};
    MPI_Request sends[SENDS];
    int next_send = 0;
    for (int i = 0; i < SENDS; i++)
        sends[i] = MPI_REQUEST_NULL;
    size_t most = 0;
    for (int k = 0; k < 3 && !st; k++) {
        rpart *p = &pt[k];
        p->t = t[k];
        p->len = rw_trinary_part((size_t)count, k, &p->off);
        p->n_seg = (p->len + seg - 1) / seg;
        p->n_kids = t[k]->first_child[me + 1] - t[k]->first_child[me];
        most = p->n_seg > most ? p->n_seg : most;
        if (p->n_kids == 0 || p->n_seg == 0)
            continue;
        size_t slots = (size_t)p->n_kids * WINDOW;
        if (!(p->in = malloc(slots * sizeof *p->in)))
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %zu requests", slots);
        if (!st)
            st = rwc_typed_alloc((int)(slots * seg), type, &p->tmp_mem, &p->tmp);
        for (size_t s = 0; p->in && s < slots; s++)
            p->in[s] = MPI_REQUEST_NULL;
        for (size_t i = 0; !st && i < p->n_seg && i < WINDOW; i++)
            st = post(p, k, i, seg, extent, me, type, dup);
    }
    for (size_t i = 0; !st && i < most; i++)
        for (int k = 0; !st && k < 3; k++) {
            rpart *p = &pt[k];
            if (i >= p->n_seg)
                continue;
            int len = (int)seg_len(p, seg, i);
            char *at = acc + (MPI_Aint)(p->off + i * seg) * extent;
            for (int c = 0; !st && c < p->n_kids; c++) {
                size_t slot = (size_t)c * WINDOW + i % WINDOW;
                st = rwc_mpi(PMPI_Wait(&p->in[slot], MPI_STATUS_IGNORE), "MPI_Wait (trinary reduce)");
                if (!st)
                    st = rwc_mpi(PMPI_Reduce_local(p->tmp + (MPI_Aint)(slot * seg) * extent, at, len, type, op),
                                 "MPI_Reduce_local");
            }
            if (!st && p->n_kids > 0 && i + WINDOW < p->n_seg)
                st = post(p, k, i + WINDOW, seg, extent, me, type, dup);
            if (!st && me != root) {
                MPI_Request *q = &sends[next_send];
                next_send = (next_send + 1) % SENDS;
                if (*q != MPI_REQUEST_NULL)
                    st = rwc_mpi(PMPI_Wait(q, MPI_STATUS_IGNORE), "MPI_Wait (trinary reduce)");
                if (!st)
                    st = rwc_mpi(PMPI_Isend(at, len, type, t[k]->parent[me], RWC_TAG_TRINARY + 3 + k, dup, q),
                                 "MPI_Isend (trinary reduce)");
            }
        }
    rw_status sent = rwc_mpi(PMPI_Waitall(SENDS, sends, MPI_STATUSES_IGNORE), "MPI_Waitall (trinary reduce)");
    st = st ? st : sent;
    for (int k = 0; k < 3; k++) {
        for (size_t s = 0; pt[k].in && s < (size_t)pt[k].n_kids * WINDOW; s++)
            if (pt[k].in[s] != MPI_REQUEST_NULL) { /* only after a failure */
                PMPI_Cancel(&pt[k].in[s]);
                PMPI_Request_free(&pt[k].in[s]);
            }
        free(pt[k].in);
        free(pt[k].tmp_mem);
        rw_tree_free(t[k]);
    }
    free(acc_mem);
    return st;
}
