/* The triple trinary tree broadcast and reduce as the library runs them.
 * Broadcast: the three thirds go down their trees at once, segment by
 * segment; a rank forwards segment i of a tree to that tree's children
 * once it has received it (nonblocking sends). A rank keeps
 * RW_TRINARY_WINDOW receives posted per tree and SMPI moves a message only
 * once its receive is posted: segment i into a rank waits for segment
 * i - WINDOW to be received there. Without that bound every segment of a
 * 4 MiB broadcast flowed at once, sharing the links until the end, and
 * the 4x4x2 torus was predicted 25.6 % too slow (0.651 ms for SMPI's 0.518).
 * The root posts every segment of every tree at the start, segments
 * interleaved across trees (segment 0 of trees 0, 1, 2, then 1, ...).
 * A rank forwards (reduce: folds and sends up) its segments in order:
 * segment i once segments 0..i are in, not as each arrives. A short last
 * segment arrives first (it shares the links with the others); forwarded
 * on arrival, it left the 64 KiB broadcast on 8 ranks predicted 12 % short
 * of SMPI (19.1 us for 21.8). */
#include "trinary_sched.h"

#include "coll/registry.h"
#include "coll/trinary.h"

#include <stdlib.h>
#include <string.h>

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

rw_status rw_b_trinary_bcast(rw_builder *b, int32_t root, double bytes, int64_t segment, const int32_t *order,
                             const int64_t *after, int32_t n_after, const int64_t *start)
{
    int32_t n = b->p;
    if (n < 2 || bytes <= 0)
        return RW_OK;
    rw_tree *t[3];
    rw_status st = rw_tree_trinary_ordered(n, root, order, t);
    if (st != RW_OK)
        return st;
    int32_t *bfs[3] = {rw_tree_bfs(t[0]), rw_tree_bfs(t[1]), rw_tree_bfs(t[2])};
    /* into[(k n + r) W + i % W]: the transfer of segment i of tree k into r */
    int64_t *into = malloc((size_t)n * 3 * RW_TRINARY_WINDOW * sizeof *into);
    int64_t *deps = malloc(((size_t)n_after + RW_TRINARY_WINDOW + 1) * sizeof *deps);
    if (!bfs[0] || !bfs[1] || !bfs[2] || !into || !deps)
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
            for (int32_t q = 0; q < n && st == RW_OK; q++) {
                int32_t r = bfs[k][q];
                for (int32_t c = t[k]->first_child[r]; c < t[k]->first_child[r + 1]; c++) {
                    int32_t to = t[k]->child[c], nd = 0, ns;
                    int64_t id = -1, *slot = &into[((size_t)k * n + to) * RW_TRINARY_WINDOW + i % RW_TRINARY_WINDOW];
                    if (r == root)
                        for (int32_t a = 0; a < n_after; a++)
                            deps[nd++] = after[a];
                    else /* segments i - W + 1 .. i into r (each one's receive waited for the one W before) */
                        for (int64_t j = i >= RW_TRINARY_WINDOW ? i - RW_TRINARY_WINDOW + 1 : 0; j <= i; j++)
                            deps[nd++] = into[((size_t)k * n + r) * RW_TRINARY_WINDOW + j % RW_TRINARY_WINDOW];
                    ns = nd;
                    /* the receiver's side: its receive of this segment is posted */
                    if (i >= RW_TRINARY_WINDOW)
                        deps[nd++] = *slot;
                    else if (start && start[to] >= 0)
                        deps[nd++] = start[to];
                    st = rw_sched_add(b->s, r, to, sz, 0.0, nd, nd ? deps : NULL, &id);
                    if (st != RW_OK)
                        break;
                    b->s->n_sdeps[id] = ns;
                    b->s->detached[id] = (uint8_t)(sz < (double)b->opt.eager_threshold);
                    b->s->preposted[id] = 1;
                    *slot = id;
                }
            }
        }
    for (int k = 0; k < 3; k++) {
        rw_tree_free(t[k]);
        free(bfs[k]);
    }
    free(into);
    free(deps);
    return st;
}

/* ends[r]: an empty transfer r -> r once every transfer into r from
 * `first` on is over (-1 where none comes in): where a rank's reduce is
 * done. Not its last segment's transfer: the segments of the reduce share
 * the links, and a short last one arrives well before the others (the
 * allreduce's broadcast then started at 0.084 ms of a 0.289 ms reduce on
 * the 4x4x2 torus). */
static rw_status mark_ends(rw_sched *s, int64_t first, int32_t n, int64_t *ends)
{
    int64_t last = s->n, *count = calloc((size_t)n + 1, sizeof *count);
    int64_t *deps = malloc((size_t)(last - first + 1) * sizeof *deps);
    rw_status st = count && deps ? RW_OK : rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)n);
    for (int64_t k = first; st == RW_OK && k < last; k++)
        count[s->dst[k] + 1]++;
    for (int32_t r = 0; st == RW_OK && r < n; r++)
        count[r + 1] += count[r];
    /* deps grouped by receiver: count[r] .. count[r + 1] */
    int64_t *fill = st == RW_OK ? malloc((size_t)n * sizeof *fill) : NULL;
    if (st == RW_OK && !fill)
        st = rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)n);
    for (int32_t r = 0; st == RW_OK && r < n; r++)
        fill[r] = count[r];
    for (int64_t k = first; st == RW_OK && k < last; k++)
        deps[fill[s->dst[k]]++] = k;
    for (int32_t r = 0; st == RW_OK && r < n; r++) {
        int32_t nd = (int32_t)(count[r + 1] - count[r]);
        if (nd > 0)
            st = rw_sched_add(s, r, r, 0.0, 0.0, nd, deps + count[r], &ends[r]);
    }
    free(count);
    free(deps);
    free(fill);
    return st;
}

/* Reduce: the trees reversed. Segment i of part k leaves rank r for its
 * tree-k parent once r has received segment i from every tree-k child and
 * folded them in (gamma per byte per child, before the send); a leaf sends
 * at once. Elements of elem_size bytes, segments whole elements, as the
 * library cuts them (engine/mpi/coll/reduce_trinary.c). */
rw_status rw_b_trinary_reduce(rw_builder *b, int32_t root, double bytes, double elem_size, int64_t segment,
                              const int32_t *order, int64_t *ends)
{
    int32_t n = b->p;
    for (int32_t r = 0; ends && r < n; r++)
        ends[r] = -1;
    if (n < 2 || bytes <= 0)
        return RW_OK;
    rw_tree *t[3];
    rw_status st = rw_tree_trinary_ordered(n, root, order, t);
    if (st != RW_OK)
        return st;
    int32_t *bfs[3] = {rw_tree_bfs(t[0]), rw_tree_bfs(t[1]), rw_tree_bfs(t[2])};
    int64_t *sent = malloc((size_t)n * sizeof *sent); /* r's send of the current segment */
    /* deps: W segments of each of at most 3 children (the root's: one a tree, two in tree 2), and the parent's
     * side */
    int64_t *deps = malloc(8 * RW_TRINARY_WINDOW * sizeof *deps), first = b->s->n;
    /* hist[(k n + r) H + i % H]: r's send of segment i up tree k; H = W + 1 keeps segment i - W while
     * the siblings of r write segment i */
    enum { H = RW_TRINARY_WINDOW + 1 };
    int64_t *hist = malloc((size_t)n * 3 * H * sizeof *hist);
    if (!bfs[0] || !bfs[1] || !bfs[2] || !sent || !deps || !hist)
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
                int32_t r = bfs[k][q], up = t[k]->parent[r], nd = 0, ns;
                int32_t kids = t[k]->first_child[r + 1] - t[k]->first_child[r];
                /* folded in order: segments i - W + 1 .. i from every child (segment j's receive waited for
                 * the fold of j - W) */
                for (int32_t c = t[k]->first_child[r]; c < t[k]->first_child[r + 1]; c++) {
                    deps[nd++] = sent[t[k]->child[c]];
                    for (int64_t j = i >= RW_TRINARY_WINDOW ? i - RW_TRINARY_WINDOW + 1 : 0; j < i; j++)
                        deps[nd++] = hist[((size_t)k * n + t[k]->child[c]) * H + j % H];
                }
                ns = nd;
                /* the parent's side: it posts segment i once it has waited for segment i - W from all its
                 * children */
                if (i >= RW_TRINARY_WINDOW)
                    for (int32_t c = t[k]->first_child[up]; c < t[k]->first_child[up + 1]; c++)
                        deps[nd++] = hist[((size_t)k * n + t[k]->child[c]) * H + (i - RW_TRINARY_WINDOW) % H];
                int64_t id = -1;
                st = rw_sched_add(b->s, r, up, sz, b->opt.gamma * sz * kids, nd, nd ? deps : NULL, &id);
                if (st != RW_OK)
                    break;
                b->s->n_sdeps[id] = ns;
                b->s->detached[id] = (uint8_t)(sz < (double)b->opt.eager_threshold);
                b->s->preposted[id] = (uint8_t)(i < RW_TRINARY_WINDOW); /* later: posted when the parent's CPU is free */
                sent[r] = hist[((size_t)k * n + r) * H + i % H] = id;
            }
        }
    if (st == RW_OK && ends)
        st = mark_ends(b->s, first, n, ends);
    for (int k = 0; k < 3; k++) {
        rw_tree_free(t[k]);
        free(bfs[k]);
    }
    free(sent);
    free(deps);
    free(hist);
    return st;
}

rw_status rw_sched_trinary(const rw_pnet *net, int op, double bytes, const rw_coll_options *opt, rw_sched **out)
{
    int allreduce = op == RW_COLL_ALLREDUCE, bcast = op == RW_COLL_BCAST, reduce = op == RW_COLL_REDUCE;
    if (!rw_algo_valid(op, RW_ALGO_TRINARY)) {
        char names[96];
        return rw_fail(RW_ERR_ARG, "trinary is not an algorithm of %s (%s)", rw_op_name(op) ? rw_op_name(op) : "?",
                       rw_op_names(names, sizeof names, rw_algo_by_id(RW_ALGO_TRINARY)->ops, ", "));
    }
    int32_t n = net->n_ranks, root = opt && !allreduce ? opt->root : 0;
    if (root < 0 || root >= n)
        return rw_fail(RW_ERR_ARG, "%s: root %d of %d ranks", rw_op_name(op), (int)root, (int)n);
    int64_t seg = 0; /* the library's own segments (rw_trinary_segment) */
    int32_t *order = malloc((size_t)n * sizeof *order);
    int64_t *ends = allreduce ? malloc((size_t)n * sizeof *ends) : NULL;
    if (!order || (allreduce && !ends)) {
        free(order);
        free(ends);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)n);
    }
    rw_builder tb;
    rw_status st = rw_trinary_best_order(net, order);
    if (st == RW_OK)
        st = rw_builder_init(&tb, n, opt);
    if (st == RW_OK) {
        rw_status ts = RW_OK;
        if (!bcast) /* 4-byte elements, as the library's other schedules assume */
            ts = rw_b_trinary_reduce(&tb, root, bytes, 4.0, seg, order, ends);
        if (ts == RW_OK && !reduce) /* the allreduce's root broadcasts once its reduce is done */
            ts = rw_b_trinary_bcast(&tb, root, bytes, seg, order, ends ? &ends[root] : NULL,
                                    ends && ends[root] >= 0, ends);
        if (ts != RW_OK && tb.err == RW_OK)
            tb.err = ts;
        st = rw_builder_finish(&tb, out);
    }
    free(order);
    free(ends);
    return st;
}
