/* The triple trinary tree broadcast and reduce as the library runs them.
 * Broadcast: the three
 * thirds go down their trees at once, segment by segment; a rank forwards
 * segment i of a tree to that tree's children once it has received it
 * (nonblocking sends, receives posted at the start), so the only order
 * between transfers is a segment's arrival before its forwarding. The
 * root posts every segment of every tree at the start, segments
 * interleaved across trees (segment 0 of trees 0, 1, 2, then 1, ...). */
#include "trinary_sched.h"

#include "coll/trinary.h"

#include <stdlib.h>

/* The three parts of `total` units and their segments of `seg` units: the
 * most segments a part has. */
static int64_t split_parts(size_t total, size_t seg, size_t len[3], int64_t n_seg[3])
{
    int64_t most = 0;
    for (int k = 0; k < 3; k++) {
        len[k] = rw_trinary_part(total, k, NULL);
        n_seg[k] = (int64_t)((len[k] + seg - 1) / seg);
        most = n_seg[k] > most ? n_seg[k] : most;
    }
    return most;
}

rw_status rw_b_trinary_bcast(rw_builder *b, int32_t root, double bytes, int64_t segment, const int64_t *after,
                             int32_t n_after)
{
    int32_t n = b->p;
    if (n < 2 || bytes <= 0)
        return RW_OK;
    rw_tree *t[3];
    rw_status st = rw_tree_trinary(n, root, t);
    if (st != RW_OK)
        return st;
    int32_t *bfs[3] = {rw_tree_bfs(t[0]), rw_tree_bfs(t[1]), rw_tree_bfs(t[2])};
    int64_t *got = malloc((size_t)n * 3 * sizeof *got);
    if (!bfs[0] || !bfs[1] || !bfs[2] || !got)
        st = rw_fail(RW_ERR_NOMEM, "schedule: out of memory for trinary trees of %d ranks", (int)n);
    size_t total = (size_t)bytes;
    size_t seg = segment > 0 ? (size_t)segment : rw_trinary_segment(total);
    size_t len[3];
    int64_t n_seg[3], most = split_parts(total, seg, len, n_seg);
    for (int64_t i = 0; st == RW_OK && i < most; i++)
        for (int k = 0; k < 3 && st == RW_OK; k++) {
            if (i >= n_seg[k])
                continue;
            double sz = (double)(i + 1 < n_seg[k] ? seg : len[k] - (size_t)(n_seg[k] - 1) * seg);
            int64_t *g = got + (size_t)k * n;
            g[root] = -1;
            for (int32_t q = 0; q < n && st == RW_OK; q++) {
                int32_t r = bfs[k][q];
                for (int32_t c = t[k]->first_child[r]; c < t[k]->first_child[r + 1]; c++) {
                    int32_t to = t[k]->child[c];
                    int64_t id = -1;
                    if (r == root)
                        st = rw_sched_add(b->s, r, to, sz, 0.0, n_after, n_after ? after : NULL, &id);
                    else
                        st = rw_sched_add(b->s, r, to, sz, 0.0, 1, &g[r], &id);
                    if (st != RW_OK)
                        break;
                    b->s->detached[id] = (uint8_t)(sz < (double)b->opt.eager_threshold);
                    b->s->preposted[id] = 1;
                    g[to] = id;
                }
            }
        }
    for (int k = 0; k < 3; k++) {
        rw_tree_free(t[k]);
        free(bfs[k]);
    }
    free(got);
    return st;
}

/* Reduce: the trees reversed. Segment i of part k leaves rank r for its
 * tree-k parent once r has received segment i from every tree-k child and
 * folded them in (gamma per byte per child, before the send); a leaf sends
 * at once. Elements of elem_size bytes, segments whole elements, as the
 * library cuts them (engine/mpi/coll/reduce_trinary.c). */
rw_status rw_b_trinary_reduce(rw_builder *b, int32_t root, double bytes, double elem_size, int64_t segment,
                              int64_t *into_root, int32_t *n_into)
{
    *n_into = 0;
    int32_t n = b->p;
    if (n < 2 || bytes <= 0)
        return RW_OK;
    rw_tree *t[3];
    rw_status st = rw_tree_trinary(n, root, t);
    if (st != RW_OK)
        return st;
    int32_t *bfs[3] = {rw_tree_bfs(t[0]), rw_tree_bfs(t[1]), rw_tree_bfs(t[2])};
    int64_t *sent = malloc((size_t)n * sizeof *sent); /* r's send of the current segment */
    int64_t *deps = malloc(4 * sizeof *deps);
    if (!bfs[0] || !bfs[1] || !bfs[2] || !sent || !deps)
        st = rw_fail(RW_ERR_NOMEM, "schedule: out of memory for trinary trees of %d ranks", (int)n);
    size_t count = (size_t)(bytes / elem_size);
    size_t seg_bytes = segment > 0 ? (size_t)segment : rw_trinary_segment(count * (size_t)elem_size);
    size_t seg = (size_t)((double)seg_bytes / elem_size);
    seg = seg ? seg : 1;
    size_t len[3];
    int64_t n_seg[3], most = split_parts(count, seg, len, n_seg);
    for (int64_t i = 0; st == RW_OK && i < most; i++)
        for (int k = 0; k < 3 && st == RW_OK; k++) {
            if (i >= n_seg[k])
                continue;
            double sz = elem_size * (double)(i + 1 < n_seg[k] ? seg : len[k] - (size_t)(n_seg[k] - 1) * seg);
            /* children before parents: reverse breadth-first order */
            for (int32_t q = n - 1; q >= 1 && st == RW_OK; q--) {
                int32_t r = bfs[k][q], nd = 0;
                for (int32_t c = t[k]->first_child[r]; c < t[k]->first_child[r + 1]; c++)
                    deps[nd++] = sent[t[k]->child[c]];
                int64_t id = -1;
                st = rw_sched_add(b->s, r, t[k]->parent[r], sz, b->opt.gamma * sz * nd, nd, nd ? deps : NULL, &id);
                if (st != RW_OK)
                    break;
                b->s->detached[id] = (uint8_t)(sz < (double)b->opt.eager_threshold);
                b->s->preposted[id] = 1;
                sent[r] = id;
                if (i + 1 == n_seg[k] && t[k]->parent[r] == root && *n_into < RW_TRINARY_ROOT_IN)
                    into_root[(*n_into)++] = id;
            }
        }
    for (int k = 0; k < 3; k++) {
        rw_tree_free(t[k]);
        free(bfs[k]);
    }
    free(sent);
    free(deps);
    return st;
}
