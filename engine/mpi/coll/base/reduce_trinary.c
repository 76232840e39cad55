/* Reduce over the triple trinary trees reversed (Ajima 2018): element
 * range k of the vector goes up tree k, segment by segment, the three at
 * once. A leaf of a tree sends its own segments at once; an inner rank
 * keeps WINDOW segments' receives posted per child, folds each segment
 * once every child's is in (children in the tree's order, acc = child op
 * acc), posts the receives of the segment a window further and sends the
 * result up. Under SMPI a segment moves once its receive is posted: with
 * every receive posted at the start the segments shared the links to the
 * end, and the 4x4x2 torus took 0.239 / 0.834 ms (1 / 4 MiB) where the
 * window of 4 takes 0.205 / 0.734. Commutative operations only (the trees
 * are not in rank order). No rank ever blocks on one request: receives,
 * folds and sends of the three trees advance as their requests complete
 * (pipeline.h), each tree's sends in a lane of their own. Blocking on a
 * send deadlocked under rendezvous sends (a rank waiting for its parent in
 * one tree while the parent waited for it in another); a loop over
 * segments and trees together made the trees advance in lockstep, 4x
 * slower than the binomial tree on 32 ranks. */
#include "base.h"
#include "coll_trinary.h"
#include "coll/trinary.h"
#include "internal.h"
#include "pipeline.h"

#include <limits.h>
#include <stdlib.h>

enum { WINDOW = RW_TRINARY_WINDOW, DEPTH = 32 }; /* DEPTH: sends out per tree */

typedef struct rpart {
    const rw_tree *t;
    size_t off, len, n_seg; /* elements; segments */
    int n_kids;
    int first_slot;         /* child c's receive of segment i: pipe slot first_slot + c WINDOW + i % WINDOW */
    char *tmp;              /* n_kids x len elements: child c's segment i at c len + i seg */
    void *tmp_mem;
    size_t posted;          /* segments whose receives are posted (from every child) */
    size_t reduced;         /* segments folded (every segment of a leaf's own data) */
    size_t sent;            /* segments sent up */
    unsigned char *got;     /* n_kids x WINDOW: that slot's receive is complete */
} rpart;

static size_t seg_len(const rpart *p, size_t seg, size_t i)
{
    return i + 1 < p->n_seg ? seg : p->len - (p->n_seg - 1) * seg;
}

static char *tmp_at(const rpart *p, int c, size_t i, size_t seg, MPI_Aint extent)
{
    return p->tmp + (MPI_Aint)((size_t)c * p->len + i * seg) * extent;
}

/* Segment p->posted's receives from every child. */
static rw_status post(rpart *p, int k, rwc_pipe *pipe, size_t seg, MPI_Aint extent, int me, MPI_Datatype type,
                      MPI_Comm dup)
{
    size_t i = p->posted++;
    rw_status st = RW_OK;
    for (int c = 0; !st && c < p->n_kids; c++) {
        int w = c * WINDOW + (int)(i % WINDOW);
        p->got[w] = 0;
        st = rwc_mpi(PMPI_Irecv(tmp_at(p, c, i, seg, extent), (int)seg_len(p, seg, i), type,
                                p->t->child[p->t->first_child[me] + c], RWC_TAG_TRINARY + 3 + k, dup,
                                &pipe->req[p->first_slot + w]),
                     "MPI_Irecv (trinary reduce)");
    }
    return st;
}

/* Folds every segment whose children's parts are all in, in order, and
 * moves the window on. */
static rw_status fold_ready(rpart *p, int k, rwc_pipe *pipe, char *acc, size_t seg, MPI_Aint extent, int me,
                            MPI_Datatype type, MPI_Op op, MPI_Comm dup)
{
    rw_status st = RW_OK;
    while (!st && p->n_kids > 0 && p->reduced < p->posted) {
        size_t i = p->reduced;
        int all = 1;
        for (int c = 0; all && c < p->n_kids; c++)
            all = p->got[c * WINDOW + (int)(i % WINDOW)];
        if (!all)
            return RW_OK;
        int len = (int)seg_len(p, seg, i);
        char *at = acc + (MPI_Aint)(p->off + i * seg) * extent;
        for (int c = 0; !st && c < p->n_kids; c++)
            st = rwc_mpi(PMPI_Reduce_local(tmp_at(p, c, i, seg, extent), at, len, type, op), "MPI_Reduce_local");
        p->reduced++;
        if (!st && p->posted < p->n_seg)
            st = post(p, k, pipe, seg, extent, me, type, dup);
    }
    return st;
}

/* Every send up the lanes have room for, the lowest segment first. */
static rw_status send_ready(rpart *pt, rwc_pipe *pipe, char *acc, size_t seg, MPI_Aint extent, int me,
                            MPI_Datatype type, MPI_Comm dup)
{
    for (;;) {
        int k = -1;
        for (int j = 0; j < 3; j++)
            if (pt[j].sent < pt[j].reduced && rwc_pipe_room(pipe, j) && (k < 0 || pt[j].sent < pt[k].sent))
                k = j;
        if (k < 0)
            return RW_OK;
        rpart *p = &pt[k];
        size_t i = p->sent++;
        rw_status st = rwc_pipe_send(pipe, k, acc + (MPI_Aint)(p->off + i * seg) * extent,
                                     (int)seg_len(p, seg, i), type, p->t->parent[me], RWC_TAG_TRINARY + 3 + k, dup);
        if (st)
            return st;
    }
}

static int finished(const rpart *pt, int me, int root)
{
    for (int k = 0; k < 3; k++)
        if (pt[k].reduced < pt[k].n_seg || (me != root && pt[k].sent < pt[k].n_seg))
            return 0;
    return 1;
}

static rw_status run(rpart *pt, char *acc, size_t seg, MPI_Aint extent, int me, int root, MPI_Datatype type,
                     MPI_Op op, MPI_Comm dup)
{
    int n_recv = 0;
    for (int k = 0; k < 3; k++) {
        pt[k].first_slot = n_recv;
        n_recv += pt[k].n_kids * WINDOW;
    }
    rwc_pipe pipe;
    rw_status st = rwc_pipe_open(&pipe, n_recv, 3, DEPTH);
    for (int k = 0; !st && k < 3; k++) {
        if (pt[k].n_kids == 0) { /* a leaf: its own data is final */
            pt[k].reduced = pt[k].n_seg;
            continue;
        }
        while (!st && pt[k].posted < pt[k].n_seg && pt[k].posted < WINDOW)
            st = post(&pt[k], k, &pipe, seg, extent, me, type, dup);
    }
    while (!st && (me == root || !(st = send_ready(pt, &pipe, acc, seg, extent, me, type, dup))) &&
           !finished(pt, me, root)) {
        int idx;
        if ((st = rwc_pipe_wait(&pipe, &idx)) || idx < 0)
            continue;
        int k = 0;
        while (idx >= pt[k].first_slot + pt[k].n_kids * WINDOW) /* the part whose slots hold idx */
            k++;
        pt[k].got[idx - pt[k].first_slot] = 1;
        st = fold_ready(&pt[k], k, &pipe, acc, seg, extent, me, type, op, dup);
    }
    return rwc_pipe_close(&pipe, st);
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
    for (int k = 0; k < 3 && !st; k++) {
        rpart *p = &pt[k];
        p->t = t[k];
        p->len = rw_trinary_part((size_t)count, k, &p->off);
        p->n_seg = (p->len + seg - 1) / seg;
        p->n_kids = p->n_seg > 0 ? t[k]->first_child[me + 1] - t[k]->first_child[me] : 0;
        if (p->n_kids == 0)
            continue;
        if (!(p->got = calloc((size_t)p->n_kids * WINDOW, 1)))
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %d children", p->n_kids);
        if (!st && (size_t)p->n_kids * p->len > (size_t)INT_MAX)
            st = rw_fail(RW_ERR_STATE, "trinary reduce: %d x %zu elements exceed an MPI count", p->n_kids, p->len);
        if (!st)
            st = rwc_typed_alloc((int)((size_t)p->n_kids * p->len), type, &p->tmp_mem, &p->tmp);
    }
    if (!st)
        st = run(pt, acc, seg, extent, me, root, type, op, dup);
    for (int k = 0; k < 3; k++) {
        free(pt[k].got);
        free(pt[k].tmp_mem);
        rw_tree_free(t[k]);
    }
    free(acc_mem);
    return st;
}
