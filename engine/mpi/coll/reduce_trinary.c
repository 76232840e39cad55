/* Reduce over the triple trinary trees reversed (Ajima 2018): element
 * range k of the vector goes up tree k, segment by segment, the three at
 * once. A leaf of a tree sends its own segments at once (nonblocking); an
 * inner rank keeps RW_TRINARY_WINDOW segments' receives posted per child
 * (room for its part once per child), folds each arriving segment into its
 * own (children in the tree's order, acc = child op acc), posts the
 * receives of the segment a window further and sends the result up. Under
 * SMPI a segment moves once its receive is posted: with every receive
 * posted at the start the segments shared the links to the end, and the
 * 4x4x2 torus took 0.239 / 0.834 ms (1 / 4 MiB) where the window of 4 takes
 * 0.205 / 0.734. Commutative operations only (the
 * trees are not in rank order). A rank first sends everything of the trees
 * where it is a leaf (its own data: nothing to wait for), then works
 * through the one tree where it is inner (the root through all three,
 * segments interleaved): no wait of one tree holds another tree's segments
 * (a loop over segments and trees together made the ranks' trees advance
 * in lockstep, 4x slower than the binomial tree on 32 ranks). */
#include "coll.h"
#include "coll_trinary.h"
#include "coll/trinary.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>

enum { SENDS = 64 };

typedef struct rpart {
    const rw_tree *t;
    size_t off, len, n_seg; /* elements; segments */
    int n_kids;
    char *tmp;              /* n_kids x len elements: child c's segment i at c len + i seg */
    void *tmp_mem;
    MPI_Request *in;        /* n_kids x n_seg */
} rpart;

static size_t seg_len(const rpart *p, size_t seg, size_t i)
{
    return i + 1 < p->n_seg ? seg : p->len - (p->n_seg - 1) * seg;
}

static char *tmp_at(const rpart *p, int c, size_t i, size_t seg, MPI_Aint extent)
{
    return p->tmp + (MPI_Aint)((size_t)c * p->len + i * seg) * extent;
}

static rw_status post(rpart *p, int k, size_t i, size_t seg, MPI_Aint extent, int me, MPI_Datatype type,
                      MPI_Comm dup)
{
    rw_status st = RW_OK;
    for (int c = 0; !st && c < p->n_kids; c++)
        st = rwc_mpi(PMPI_Irecv(tmp_at(p, c, i, seg, extent), (int)seg_len(p, seg, i), type,
                                p->t->child[p->t->first_child[me] + c], RWC_TAG_TRINARY + 3 + k, dup,
                                &p->in[(size_t)c * p->n_seg + i]),
                     "MPI_Irecv (trinary reduce)");
    return st;
}

rw_status rwc_reduce_trinary(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                             MPI_Comm dup, const int32_t *order, size_t segment)
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
    if ((st = rw_tree_trinary_ordered(n, root, order, t)))
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
        size_t slots = (size_t)p->n_kids * p->n_seg;
        if (!(p->in = malloc(slots * sizeof *p->in)))
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %zu requests", slots);
        if (!st && (size_t)p->n_kids * p->len > (size_t)INT_MAX)
            st = rw_fail(RW_ERR_STATE, "trinary reduce: %d x %zu elements exceed an MPI count", p->n_kids, p->len);
        if (!st)
            st = rwc_typed_alloc((int)((size_t)p->n_kids * p->len), type, &p->tmp_mem, &p->tmp);
        for (size_t s = 0; p->in && s < slots; s++)
            p->in[s] = MPI_REQUEST_NULL;
        for (size_t i = 0; !st && i < p->n_seg && i < RW_TRINARY_WINDOW; i++)
            st = post(p, k, i, seg, extent, me, type, dup);
    }
    /* the trees where this rank is a leaf, then the others */
    for (int leaves = 1; leaves >= 0; leaves--) {
        for (size_t i = 0; !st && i < most; i++)
            for (int k = 0; !st && k < 3; k++) {
                rpart *p = &pt[k];
                if (i >= p->n_seg || (p->n_kids == 0) != leaves)
                    continue;
                int len = (int)seg_len(p, seg, i);
                char *at = acc + (MPI_Aint)(p->off + i * seg) * extent;
                for (int c = 0; !st && c < p->n_kids; c++) {
                    st = rwc_mpi(PMPI_Wait(&p->in[(size_t)c * p->n_seg + i], MPI_STATUS_IGNORE),
                                 "MPI_Wait (trinary reduce)");
                    if (!st)
                        st = rwc_mpi(PMPI_Reduce_local(tmp_at(p, c, i, seg, extent), at, len, type, op),
                                     "MPI_Reduce_local");
                }
                if (!st && p->n_kids > 0 && i + RW_TRINARY_WINDOW < p->n_seg) /* the window moves on */
                    st = post(p, k, i + RW_TRINARY_WINDOW, seg, extent, me, type, dup);
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
    }
    rw_status sent = rwc_mpi(PMPI_Waitall(SENDS, sends, MPI_STATUSES_IGNORE), "MPI_Waitall (trinary reduce)");
    st = st ? st : sent;
    for (int k = 0; k < 3; k++) {
        for (size_t s = 0; pt[k].in && s < (size_t)pt[k].n_kids * pt[k].n_seg; s++)
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
