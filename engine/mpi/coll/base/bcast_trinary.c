/* The triple trinary tree broadcast (Ajima 2018, the Tofu interconnect's
 * long-message broadcast): the message in three parts, each sent down its
 * own spanning tree (rw_tree_trinary_ordered: a rank is inner in one tree
 * at most, so the trees share no directed edge and no rank sends more than
 * the message), in segments, the three pipelines running at once. A rank
 * keeps WINDOW receives posted per tree and forwards each segment to the
 * tree's children with nonblocking sends as soon as it is in, in order
 * (receives of one tree match in the order posted); it never blocks on a
 * send (pipeline.h): with sends that wait for their receive (rendezvous)
 * a rank blocked on one posted no more receives, and ranks waiting on each
 * other's sends hung. The data moves as its bytes in MPI_Pack order, as
 * the tree broadcast's. */
#include "coll_trinary.h"

#include "coll/trinary.h"
#include "internal.h"
#include "pipeline.h"

#include <limits.h>
#include <stdlib.h>

enum { WINDOW = RW_TRINARY_WINDOW, DEPTH = 32 }; /* DEPTH: sends out per tree */

typedef struct part {
    const rw_tree *t;
    size_t off, len, seg, n_seg;
    size_t posted;            /* segments whose receive is posted */
    size_t next_seg;          /* the next send: segment next_seg to child next_child */
    int32_t next_child;
    unsigned char *done;      /* n_seg: received (all of them at the root) */
    size_t in_seg[WINDOW];    /* the segment each receive slot holds */
} part;

static size_t seg_len(const part *p, size_t i)
{
    return i + 1 < p->n_seg ? p->seg : p->len - (p->n_seg - 1) * p->seg;
}

static int n_children(const part *p, int me)
{
    return p->t->first_child[me + 1] - p->t->first_child[me];
}

/* Whether part p has a send to make now. */
static int ready(const part *p, int me)
{
    return n_children(p, me) > 0 && p->next_seg < p->n_seg && p->done[p->next_seg];
}

static rw_status post(part *p, int k, MPI_Request *slot, int w, char *data, int me, MPI_Comm dup)
{
    size_t i = p->posted++;
    p->in_seg[w] = i;
    return rwc_mpi(PMPI_Irecv(data + p->off + i * p->seg, (int)seg_len(p, i), MPI_BYTE, p->t->parent[me],
                              RWC_TAG_TRINARY + k, dup, slot),
                   "MPI_Irecv (trinary bcast)");
}

/* Every send the lanes have room for, the lowest segment first (the root
 * interleaves the three trees' segments so), each segment to the tree's
 * children in order. */
static rw_status send_ready(part *pt, char *data, int me, rwc_pipe *pipe, MPI_Comm dup)
{
    for (;;) {
        int k = -1;
        for (int j = 0; j < 3; j++)
            if (ready(&pt[j], me) && rwc_pipe_room(pipe, j) && (k < 0 || pt[j].next_seg < pt[k].next_seg))
                k = j;
        if (k < 0)
            return RW_OK;
        part *p = &pt[k];
        size_t i = p->next_seg;
        int32_t c = p->t->first_child[me] + p->next_child;
        rw_status st = rwc_pipe_send(pipe, k, data + p->off + i * p->seg, (int)seg_len(p, i), MPI_BYTE,
                                     p->t->child[c], RWC_TAG_TRINARY + k, dup);
        if (st)
            return st;
        if (++p->next_child == n_children(p, me)) {
            p->next_child = 0;
            p->next_seg++;
        }
    }
}

static int finished(const part *pt, int me, size_t left)
{
    for (int k = 0; k < 3; k++)
        if (n_children(&pt[k], me) > 0 && pt[k].next_seg < pt[k].n_seg)
            return 0;
    return left == 0;
}

static rw_status run(part *pt, char *data, int me, int root, MPI_Comm dup)
{
    rwc_pipe pipe;
    rw_status st = rwc_pipe_open(&pipe, me == root ? 0 : 3 * WINDOW, 3, DEPTH);
    if (st)
        return st;
    size_t left = 0;
    for (int k = 0; k < 3; k++) {
        if (me == root) {
            for (size_t i = 0; i < pt[k].n_seg; i++)
                pt[k].done[i] = 1;
            continue;
        }
        left += pt[k].n_seg;
        for (int w = 0; !st && w < WINDOW && pt[k].posted < pt[k].n_seg; w++)
            st = post(&pt[k], k, &pipe.req[k * WINDOW + w], w, data, me, dup);
    }
    while (!st && !(st = send_ready(pt, data, me, &pipe, dup)) && !finished(pt, me, left)) {
        int idx;
        if ((st = rwc_pipe_wait(&pipe, &idx)) || idx < 0)
            continue;
        int k = idx / WINDOW, w = idx % WINDOW;
        part *p = &pt[k];
        p->done[p->in_seg[w]] = 1;
        left--;
        if (p->posted < p->n_seg)
            st = post(p, k, &pipe.req[idx], w, data, me, dup);
    }
    return rwc_pipe_close(&pipe, st);
}

rw_status rwc_bcast_trinary(void *buf, int count, MPI_Datatype type, int root, MPI_Comm dup, const int32_t *order,
                            size_t segment)
{
    int me, n;
    PMPI_Comm_rank(dup, &me);
    PMPI_Comm_size(dup, &n);
    rw_tree *t[3];
    rw_status st = rw_tree_trinary_ordered(n, root, order, t);
    if (st)
        return st;
    rwc_bytes b;
    if ((st = rwc_bytes_open(&b, buf, count, type, dup, me == root)) || b.len == 0) {
        for (int k = 0; k < 3; k++)
            rw_tree_free(t[k]);
        return st;
    }
    size_t seg = segment > 0 ? segment : rw_trinary_segment(b.len);
    if (seg > (size_t)INT_MAX / 2)
        seg = (size_t)INT_MAX / 2;
    part pt[3] = {{0}};
    for (int k = 0; k < 3 && !st; k++) {
        pt[k].t = t[k];
        pt[k].len = rw_trinary_part(b.len, k, &pt[k].off);
        pt[k].seg = seg;
        pt[k].n_seg = (pt[k].len + seg - 1) / seg;
        if (!(pt[k].done = calloc(pt[k].n_seg + 1, 1)))
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %zu segments", pt[k].n_seg);
    }
    if (!st)
        st = run(pt, b.data, me, root, dup);
    for (int k = 0; k < 3; k++) {
        free(pt[k].done);
        rw_tree_free(t[k]);
    }
    rw_status close = rwc_bytes_close(&b, buf, count, type, dup, me != root && !st);
    return st ? st : close;
}
