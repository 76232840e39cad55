/* Schedules of rooted collectives over any rw_tree (rankwise_tree.h), so the
 * predictor costs the trees built from a model and the standard shapes
 * alike. The message pattern is that of the builder's binomial schedules
 * (bcast.c, reduce.c, gather.c, scatter.c) with the tree's own parents and
 * child order: on the binomial tree both give the same schedule. */
#include "predict_internal.h"
#include "rankwise_tree.h"
#include "../coll/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ranks in breadth-first order from the root (parents before children). */
int32_t *rw_tree_bfs(const rw_tree *t)
{
    int32_t *q = malloc((size_t)t->n_ranks * sizeof *q);
    if (!q)
        return NULL;
    int32_t head = 0, tail = 0;
    q[tail++] = t->root;
    while (head < tail) {
        int32_t r = q[head++];
        for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++)
            q[tail++] = t->child[k];
    }
    return q;
}

void rw_tree_sizes(const rw_tree *t, const int32_t *bfs, int32_t *size)
{
    for (int32_t q = t->n_ranks - 1; q >= 0; q--) {
        int32_t r = bfs[q];
        size[r] = 1;
        for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++)
            size[r] += size[t->child[k]];
    }
}

/* Rank of tree position i in the builder (map NULL: i itself). */
static inline int32_t at(const int32_t *map, int32_t i)
{
    return map ? map[i] : i;
}

/* r sends `bytes` to its child c: a blocking send, which holds r until it
 * ends at or above the eager threshold; below, r goes on at once (the
 * predictor charges r's send overheads one after the other). */
static void send_down(rw_builder *b, int32_t r, int32_t c, double bytes)
{
    int64_t id = rw_b_xfer(b, r, c, bytes, 0.0);
    rw_b_set(b, c, id);
    if (bytes >= (double)b->opt.eager_threshold)
        rw_b_set(b, r, id);
}

/* Bcast, whole message: a rank receives from its parent, then sends to its
 * children in the tree's order, each send blocking at or above the eager
 * threshold. */
void rw_b_tree_bcast(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes)
{
    for (int32_t q = 0; q < t->n_ranks; q++) {
        int32_t r = bfs[q];
        for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++)
            send_down(b, at(map, r), at(map, t->child[k]), bytes);
    }
}

/* Bcast pipelined in segments (every receive posted at the start, as
 * pipelined implementations do): segment i leaves rank r for child c once
 * it has reached r and r's previous blocking send has ended (a send below
 * the eager threshold does not hold r, and its segments share the link in
 * flight, as SMPI's NTSL chain has them). */
static void bcast_pipelined(rw_builder *b, const rw_tree *t, const int32_t *bfs, double bytes, double segment)
{
    int32_t n = t->n_ranks;
    int64_t n_seg = (int64_t)(bytes / segment);
    if ((double)n_seg * segment < bytes)
        n_seg++;
    int64_t *got = malloc((size_t)n * sizeof *got);   /* r's receive of the current segment */
    int64_t *hold = malloc((size_t)n * sizeof *hold); /* r's last blocking send */
    if (!got || !hold) {
        free(got);
        free(hold);
        b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
        return;
    }
    for (int32_t r = 0; r < n; r++)
        got[r] = hold[r] = -1;
    /* Breadth-first within a segment: r has received segment i (got[r])
     * before it forwards it. */
    for (int64_t i = 0; i < n_seg && b->err == RW_OK; i++) {
        double sz = i + 1 < n_seg ? segment : bytes - (double)(n_seg - 1) * segment;
        int detached = sz < (double)b->opt.eager_threshold;
        for (int32_t q = 0; q < n && b->err == RW_OK; q++) {
            int32_t r = bfs[q];
            for (int32_t k = t->first_child[r]; k < t->first_child[r + 1] && b->err == RW_OK; k++) {
                int32_t c = t->child[k];
                int64_t deps[2];
                int32_t nd = 0;
                if (got[r] >= 0)
                    deps[nd++] = got[r];
                if (hold[r] >= 0)
                    deps[nd++] = hold[r];
                int64_t id = -1;
                b->err = rw_sched_add(b->s, r, c, sz, 0.0, nd, deps, &id);
                if (b->err != RW_OK)
                    break;
                b->s->detached[id] = (uint8_t)detached;
                b->s->preposted[id] = 1; /* every dependency is the sender's */
                got[c] = id;
                if (!detached)
                    hold[r] = id;
            }
        }
    }
    free(got);
    free(hold);
}

/* Reduce: children first (reverse breadth-first order); a rank receives from
 * its children in reverse child order (the last child, whose subtree is
 * done first in a binomial tree, first), reducing each arrival (gamma per
 * byte, charged before its next transfer), then sends to its parent. The
 * collectives library receives in this order (engine/mpi/coll/reduce.c),
 * all its children's receives posted at once while they hold at most
 * RW_REDUCE_POSTED_MAX bytes in all, else one after the other (window 0:
 * nc or 1, rank by rank). Open MPI's generic reduce posts
 * the receive from the next child before it waits for the current one
 * (window 2): the k-th receive is posted once the (k - window)-th is done,
 * and waited for after the (k - 1)-th: a message that arrives first still
 * pays its receive overhead in that order (SMPI charges it in MPI_Wait). */
static void tree_reduce(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes,
                        int window_of)
{
    double compute = b->opt.gamma * bytes;
    int64_t *done = NULL; /* ids of a rank's receives, in order */
    int32_t cap = 0;
    for (int32_t q = t->n_ranks - 1; q >= 0 && b->err == RW_OK; q--) {
        int32_t v = bfs[q], r = at(map, v), nc = t->first_child[v + 1] - t->first_child[v];
        int window = window_of > 0 ? window_of : (double)nc * bytes <= RW_REDUCE_POSTED_MAX ? nc : 1;
        if (nc > cap) {
            int64_t *d = realloc(done, (size_t)nc * sizeof *d);
            if (!d) {
                b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
                break;
            }
            done = d;
            cap = nc;
        }
        /* r's state before its first receive: what the first `window` wait for */
        rw_idlist start = {NULL, 0, 0};
        if (window > 1 && b->front[r].n) {
            start.v = malloc((size_t)b->front[r].n * sizeof *start.v);
            if (!start.v) {
                b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
                break;
            }
            start.n = start.cap = b->front[r].n;
            memcpy(start.v, b->front[r].v, (size_t)start.n * sizeof *start.v);
        }
        for (int32_t k = 0; k < nc; k++) {
            int32_t c = at(map, t->child[t->first_child[v + 1] - 1 - k]);
            if (window > 1) { /* posted once receive k - window is done */
                b->front[r].n = 0;
                if (k >= window)
                    rw_b_front_add(b, r, done[k - window]);
                else
                    for (int32_t i = 0; i < start.n; i++)
                        rw_b_front_add(b, r, start.v[i]);
            }
            done[k] = rw_b_xfer(b, c, r, bytes, (b->front[r].n || b->front[c].n) ? compute : 0.0);
            if (window > 1 && k > 0 && done[k] >= 0)
                b->s->wait_after[done[k]] = done[k - 1]; /* waited for in posting order */
            rw_b_set(b, r, done[k]);
        }
        if (window > 1 && nc > 1) { /* r goes on once every receive is done */
            b->front[r].n = 0;
            for (int32_t k = nc - 1; k >= 0 && k >= nc - window; k--)
                rw_b_front_add(b, r, done[k]);
        }
        free(start.v);
    }
    free(done);
}

/* The library's reduce (window 0: per rank, see tree_reduce). */
void rw_b_tree_reduce(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes)
{
    tree_reduce(b, t, bfs, map, bytes, 0);
}

void rw_b_tree_reduce_ompi(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes)
{
    tree_reduce(b, t, bfs, map, bytes, 2);
}

/* Open MPI's generic reduce in segments (ompi_coll_base_reduce_generic, as
 * SMPI 3.32 runs it: its binomial reduce cuts 1 KiB segments from 2 KiB on
 * large communicators). A rank with children runs one receive per segment
 * and child, segment by segment, each child in its reduce order; receive j
 * is posted once receive j - 2 is done (two buffers) and waited for after
 * receive j - 1; once the last child's part of segment s has arrived, the
 * rank sends segment s to its parent with a blocking send (the receive of
 * segment s + 1 from the first child is already posted). A leaf sends its
 * segments one after the other. Each segment pays its overheads, which is
 * what makes the pipeline slow below a few KiB per segment. Left out: a
 * rank's own blocking send (segments at or above the eager limit) delaying
 * the receives it posts after it. */
static void reduce_ompi_segmented(rw_builder *b, const rw_tree *t, const int32_t *bfs, double bytes,
                                  double segment)
{
    int32_t n = t->n_ranks;
    int64_t n_seg = (int64_t)(bytes / segment);
    if ((double)n_seg * segment < bytes)
        n_seg++;
    double compute = b->opt.gamma * segment, eager = (double)b->opt.eager_threshold;
    /* last[r * n_seg + s]: r's last receive of segment s (-1 at a leaf) */
    int64_t *last = malloc((size_t)n * (size_t)n_seg * sizeof *last);
    int64_t *sent = malloc((size_t)n * sizeof *sent); /* r's last send to its parent */
    if (!last || !sent) {
        free(last);
        free(sent);
        b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %lld segments", (long long)n_seg);
        return;
    }
    for (int64_t i = 0; i < (int64_t)n * n_seg; i++)
        last[i] = -1;
    for (int32_t r = 0; r < n; r++)
        sent[r] = -1;
    for (int32_t q = n - 1; q >= 0 && b->err == RW_OK; q--) {
        int32_t r = bfs[q], k = t->first_child[r + 1] - t->first_child[r];
        int64_t prev = -1, prev2 = -1; /* receives j - 1 and j - 2 */
        for (int64_t sg = 0; sg < n_seg && b->err == RW_OK; sg++) {
            double sz = sg + 1 < n_seg ? segment : bytes - (double)(n_seg - 1) * segment;
            int blocking = sz >= eager;
            for (int32_t i = 0; i < k && b->err == RW_OK; i++) {
                int32_t c = t->child[t->first_child[r + 1] - 1 - i];
                int64_t deps[3];
                int32_t nd = 0, ns;
                if (last[(int64_t)c * n_seg + sg] >= 0) /* c has its own part of the segment */
                    deps[nd++] = last[(int64_t)c * n_seg + sg];
                if (blocking && sent[c] >= 0) /* c's previous blocking send */
                    deps[nd++] = sent[c];
                ns = nd;
                if (prev2 >= 0) /* r: posted once receive j - 2 is done */
                    deps[nd++] = prev2;
                int64_t id = -1;
                b->err = rw_sched_add(b->s, c, r, sz, ns > 0 ? compute : 0.0, nd, deps, &id);
                if (b->err != RW_OK)
                    break;
                b->s->n_sdeps[id] = ns;
                b->s->detached[id] = (uint8_t)!blocking;
                b->s->wait_after[id] = prev;
                sent[c] = id;
                prev2 = prev;
                prev = id;
            }
            if (k > 0)
                last[(int64_t)r * n_seg + sg] = prev;
        }
    }
    free(last);
    free(sent);
}

/* Gather: every child sending its subtree's blocks (no compute); a parent
 * posts all its children's receives at once (engine/mpi/coll/gather.c), so
 * each transfer depends only on the parent's start, and the parent waits
 * for them all. */
void rw_b_tree_gather(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *size, const int32_t *map,
                      double bytes)
{
    for (int32_t q = t->n_ranks - 1; q >= 0; q--) {
        int32_t r = at(map, bfs[q]);
        int64_t first = -1;
        for (int32_t k = t->first_child[bfs[q] + 1] - 1; k >= t->first_child[bfs[q]]; k--) {
            int32_t c = t->child[k];
            int64_t id = rw_b_xfer(b, at(map, c), r, (double)size[c] * bytes, 0.0);
            rw_b_next(b, r, id);
            if (first < 0)
                first = id;
        }
        if (first >= 0)
            rw_b_commit(b);
    }
}

/* Open MPI's gathers (binomial, linear; SMPI's gather-ompi.cpp): a parent
 * receives its children one blocking receive after the other, smallest
 * subtree first; under SMPI a transfer starts when its receive is posted,
 * so each waits for the one before. */
static void gather_ompi(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *size, double bytes)
{
    for (int32_t q = t->n_ranks - 1; q >= 0; q--) {
        int32_t r = bfs[q];
        for (int32_t k = t->first_child[r + 1] - 1; k >= t->first_child[r]; k--) {
            int32_t c = t->child[k];
            rw_b_set(b, r, rw_b_xfer(b, c, r, (double)size[c] * bytes, 0.0));
        }
    }
}

/* Scatter: as bcast, every child receiving its subtree's blocks. */
static void scatter(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *size, double bytes)
{
    for (int32_t q = 0; q < t->n_ranks; q++) {
        int32_t r = bfs[q];
        for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++)
            send_down(b, r, t->child[k], (double)size[t->child[k]] * bytes);
    }
}

/* The rooted operations and their Open MPI variants, for messages. */
static const char *tree_ops(char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int op = 0; op < RW_N_OPS; op++)
        for (int ompi = 0; rw_op_rooted(op) && ompi < 2; ompi++) {
            const char *name = ompi ? rw_op_ompi_name(op) : rw_op_name(op);
            int n = name ? snprintf(buf + len, size - len, "%s%s", len ? ", " : "", name) : 0;
            if (n > 0)
                len = len + (size_t)n < size ? len + (size_t)n : size - 1;
        }
    return buf;
}

rw_status rw_sched_tree(const char *op, const rw_tree *t, double bytes, int64_t segment,
                        const rw_coll_options *opt, rw_sched **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_sched_tree: out is NULL");
    *out = NULL;
    if (!op)
        return rw_fail(RW_ERR_ARG, "rw_sched_tree: operation is required");
    int ompi, k = rw_op_parse_variant(op, &ompi);
    int is_bcast = k == RW_COLL_BCAST, is_reduce = k == RW_COLL_REDUCE && !ompi;
    int is_reduce_ompi = k == RW_COLL_REDUCE && ompi, is_gather = k == RW_COLL_GATHER && !ompi;
    int is_gather_ompi = k == RW_COLL_GATHER && ompi; /* else scatter */
    if (!rw_op_rooted(k)) {
        char known[160];
        return rw_fail(RW_ERR_ARG, "unknown tree collective '%s' (known: %s)", op, tree_ops(known, sizeof known));
    }
    rw_status st = rw_tree_check(t);
    if (st != RW_OK)
        return st;
    if (!(bytes >= 0.0 && bytes < 9.0e15))
        return rw_fail(RW_ERR_ARG, "%s: message size %g bytes (0 to 8 PB)", op, bytes);
    if (segment < 0)
        return rw_fail(RW_ERR_ARG, "%s: segment %lld bytes (>= 0; 0 = whole message)", op, (long long)segment);
    if (opt && (opt->gamma < 0 || opt->eager_threshold < 0))
        return rw_fail(RW_ERR_ARG, "%s: gamma %g and eager threshold %lld must be >= 0", op, opt->gamma,
                       (long long)opt->eager_threshold);
    int32_t *bfs = rw_tree_bfs(t);
    int32_t *size = malloc((size_t)t->n_ranks * sizeof *size);
    if (!bfs || !size) {
        free(bfs);
        free(size);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory for a tree of %d ranks", (int)t->n_ranks);
    }
    rw_tree_sizes(t, bfs, size);
    rw_builder b;
    st = rw_builder_init(&b, t->n_ranks, opt);
    if (st == RW_OK) {
        b.opt.root = t->root;
        if (is_bcast && segment > 0 && bytes > (double)segment)
            bcast_pipelined(&b, t, bfs, bytes, (double)segment);
        else if (is_bcast)
            rw_b_tree_bcast(&b, t, bfs, NULL, bytes);
        else if (is_reduce)
            rw_b_tree_reduce(&b, t, bfs, NULL, bytes);
        else if (is_reduce_ompi && segment > 0 && bytes > (double)segment)
            reduce_ompi_segmented(&b, t, bfs, bytes, (double)segment);
        else if (is_reduce_ompi)
            rw_b_tree_reduce_ompi(&b, t, bfs, NULL, bytes);
        else if (is_gather)
            rw_b_tree_gather(&b, t, bfs, size, NULL, bytes);
        else if (is_gather_ompi)
            gather_ompi(&b, t, bfs, size, bytes);
        else
            scatter(&b, t, bfs, size, bytes);
        st = rw_builder_finish(&b, out);
    }
    free(bfs);
    free(size);
    return st;
}

rw_status rw_predict_tree(const rw_pnet *net, const char *op, const rw_tree *t, double bytes,
                          int64_t segment, const rw_coll_options *opt, rw_sim_mode mode, rw_sim_result *out)
{
    if (!net || !out || !t)
        return rw_fail(RW_ERR_ARG, "rw_predict_tree: net, tree and out are required");
    if (t->n_ranks > net->n_ranks)
        return rw_fail(RW_ERR_ARG, "rw_predict_tree: a tree of %d ranks on a placement of %d",
                       (int)t->n_ranks, (int)net->n_ranks);
    rw_sched *s = NULL;
    rw_status st = rw_sched_tree(op, t, bytes, segment, opt, &s);
    if (st == RW_OK)
        st = rw_simulate(net, s, mode, out, NULL);
    rw_sched_free(s);
    return st;
}
