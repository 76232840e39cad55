/* The triple trinary tree broadcast (Ajima 2018, the Tofu interconnect's
 * long-message broadcast): the message in three parts, each sent down its
 * own spanning tree (rw_tree_trinary_ordered: a rank is inner in one tree
 * at most, so the trees share no directed edge and no rank sends more than
 * the message), in segments, the three pipelines running at once. A rank
 * keeps WINDOW receives posted per tree and forwards each segment to the
 * tree's children with nonblocking sends as soon as it is in, in order
 * (receives of one tree match in the order posted). The data moves as its
 * bytes in MPI_Pack order, as the tree broadcast's. */
#include "coll_trinary.h"

#include "coll/trinary.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>

enum { WINDOW = RW_TRINARY_WINDOW, SENDS = 64 };

typedef struct part {
    const rw_tree *t;
    size_t off, len, seg, n_seg;
    size_t posted, forwarded; /* segments whose receive is posted, that were sent on */
    unsigned char *done;      /* n_seg: received */
    MPI_Request in[WINDOW];
    size_t in_seg[WINDOW];
} part;

/* A bounded ring of outstanding sends: the oldest is waited for before
 * its slot is reused, so a long message never holds thousands of requests. */
typedef struct sends {
    MPI_Request r[SENDS];
    int next;
} sends;

static rw_status send_seg(sends *s, const char *data, size_t len, int to, int tag, MPI_Comm dup)
{
    MPI_Request *q = &s->r[s->next];
    s->next = (s->next + 1) % SENDS;
    if (*q != MPI_REQUEST_NULL && PMPI_Wait(q, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return rw_fail(RW_ERR_MPI, "MPI_Wait (trinary bcast) failed");
    if (PMPI_Isend(data, (int)len, MPI_BYTE, to, tag, dup, q) != MPI_SUCCESS)
        return rw_fail(RW_ERR_MPI, "MPI_Isend (trinary bcast) to rank %d failed", to);
    return RW_OK;
}

static size_t seg_len(const part *p, size_t i)
{
    return i + 1 < p->n_seg ? p->seg : p->len - (p->n_seg - 1) * p->seg;
}

static rw_status forward(part *p, int k, char *data, int me, sends *s, MPI_Comm dup)
{
    rw_status st = RW_OK;
    for (; !st && p->forwarded < p->n_seg && p->done[p->forwarded]; p->forwarded++) {
        size_t i = p->forwarded;
        for (int32_t c = p->t->first_child[me]; !st && c < p->t->first_child[me + 1]; c++)
            st = send_seg(s, data + p->off + i * p->seg, seg_len(p, i), p->t->child[c], RWC_TAG_TRINARY + k, dup);
    }
    return st;
}

static rw_status post(part *p, int k, int slot, char *data, int me, MPI_Comm dup)
{
    size_t i = p->posted++;
    p->in_seg[slot] = i;
    return rwc_mpi(PMPI_Irecv(data + p->off + i * p->seg, (int)seg_len(p, i), MPI_BYTE, p->t->parent[me],
                              RWC_TAG_TRINARY + k, dup, &p->in[slot]),
                   "MPI_Irecv (trinary bcast)");
}

static rw_status run(part *pt, char *data, int me, int root, sends *s, MPI_Comm dup)
{
    rw_status st = RW_OK;
    if (me == root) { /* every segment to every tree's first ranks, interleaved */
        size_t most = 0;
        for (int k = 0; k < 3; k++) {
            for (size_t i = 0; i < pt[k].n_seg; i++)
                pt[k].done[i] = 1;
            most = pt[k].n_seg > most ? pt[k].n_seg : most;
        }
        for (size_t i = 0; !st && i < most; i++)
            for (int k = 0; !st && k < 3; k++)
                if (i < pt[k].n_seg) {
                    for (int32_t c = pt[k].t->first_child[me]; !st && c < pt[k].t->first_child[me + 1]; c++)
                        st = send_seg(s, data + pt[k].off + i * pt[k].seg, seg_len(&pt[k], i),
                                      pt[k].t->child[c], RWC_TAG_TRINARY + k, dup);
                }
        return st;
    }
    MPI_Request all[3 * WINDOW];
    size_t left = 0;
    for (int k = 0; k < 3; k++) {
        left += pt[k].n_seg;
        for (int w = 0; !st && w < WINDOW && pt[k].posted < pt[k].n_seg; w++)
            st = post(&pt[k], k, w, data, me, dup);
    }
    while (!st && left > 0) {
        for (int k = 0; k < 3; k++)
            for (int w = 0; w < WINDOW; w++)
                all[k * WINDOW + w] = pt[k].in[w];
        int idx = MPI_UNDEFINED;
        if (PMPI_Waitany(3 * WINDOW, all, &idx, MPI_STATUS_IGNORE) != MPI_SUCCESS || idx == MPI_UNDEFINED) {
            st = rw_fail(RW_ERR_MPI, "MPI_Waitany (trinary bcast) failed");
            break;
        }
        int k = idx / WINDOW, w = idx % WINDOW;
        part *p = &pt[k];
        p->in[w] = MPI_REQUEST_NULL;
        p->done[p->in_seg[w]] = 1;
        left--;
        if (p->posted < p->n_seg)
            st = post(p, k, w, data, me, dup);
        if (!st)
            st = forward(p, k, data, me, s, dup);
    }
    for (int k = 0; k < 3; k++)
        for (int w = 0; w < WINDOW; w++)
            if (pt[k].in[w] != MPI_REQUEST_NULL) { /* only after a failure */
                PMPI_Cancel(&pt[k].in[w]);
                PMPI_Request_free(&pt[k].in[w]);
            }
    return st;
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
    sends s = {.next = 0};
    for (int i = 0; i < SENDS; i++)
        s.r[i] = MPI_REQUEST_NULL;
    for (int k = 0; k < 3 && !st; k++) {
        pt[k].t = t[k];
        pt[k].len = rw_trinary_part(b.len, k, &pt[k].off);
        pt[k].seg = seg;
        pt[k].n_seg = (pt[k].len + seg - 1) / seg;
        for (int w = 0; w < WINDOW; w++)
            pt[k].in[w] = MPI_REQUEST_NULL;
        if (!(pt[k].done = calloc(pt[k].n_seg + 1, 1)))
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %zu segments", pt[k].n_seg);
    }
    if (!st)
        st = run(pt, b.data, me, root, &s, dup);
    rw_status sent = rwc_mpi(PMPI_Waitall(SENDS, s.r, MPI_STATUSES_IGNORE), "MPI_Waitall (trinary bcast)");
    st = st ? st : sent;
    for (int k = 0; k < 3; k++) {
        free(pt[k].done);
        rw_tree_free(t[k]);
    }
    rw_status close = rwc_bytes_close(&b, buf, count, type, dup, me != root && !st);
    return st ? st : close;
}
