/* Trees built from the measured network (Wang et al. 2024): an eager,
 * latency-bound greedy tree; rendezvous chains and binary trees along the
 * widest paths; gather/scatter trees whose largest volumes take the fastest
 * links; local moves scored by the predictor. Hierarchical: the
 * constructions link node leaders (rankwise_coll_tune.h). */
#include "registry.h"
#include "tune_internal.h"

#include "shapes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rw_tune_options rw_tune_options_default(void)
{
    rw_tune_options o = {.eager_limit = 65536, .gamma = 0.0, .min_gain = 0.05, .max_evals = 1000, .start_tree = NULL};
    return o;
}

rw_coll_options rw_tune_coll_options(const rw_tune_options *opt)
{
    rw_coll_options c = rw_coll_options_default();
    c.eager_threshold = opt->eager_limit;
    c.gamma = opt->gamma;
    return c;
}

double rw_tune_score(const rw_pnet *net, const char *op, const rw_tree *t, double bytes, int64_t segment,
                     const rw_tune_options *opt)
{
    rw_coll_options c = rw_tune_coll_options(opt);
    rw_sim_result r;
    if (rw_predict_tree(net, op, t, bytes, segment, &c, RW_SIM_SHARED, &r) != RW_OK)
        return INFINITY;
    return r.time;
}

/* ------------------------------------------------------------------ leaders */

void rw_leaders_free(rw_leaders *L)
{
    free(L->rank);
    free(L->node);
    free(L->first);
    free(L->member);
    memset(L, 0, sizeof *L);
}

rw_status rw_leaders_init(const rw_pnet *net, int32_t root, rw_leaders *L)
{
    memset(L, 0, sizeof *L);
    int32_t n = net->n_ranks, nn = net->n;
    if (root < 0 || root >= n)
        return rw_fail(RW_ERR_ARG, "root %d is not a rank of %d", (int)root, (int)n);
    int32_t *lead_of = malloc((size_t)nn * sizeof *lead_of); /* node -> leader index */
    L->rank = malloc((size_t)n * sizeof *L->rank);
    L->node = malloc((size_t)n * sizeof *L->node);
    L->first = calloc((size_t)n + 2, sizeof *L->first);
    L->member = malloc((size_t)(n > 1 ? n : 1) * sizeof *L->member);
    if (!lead_of || !L->rank || !L->node || !L->first || !L->member) {
        free(lead_of);
        rw_leaders_free(L);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks' leaders", (int)n);
    }
    for (int32_t i = 0; i < nn; i++)
        lead_of[i] = -1;
    L->n = n;
    L->rank[0] = root;
    L->node[0] = net->node_of[root];
    lead_of[L->node[0]] = 0;
    L->m = 1;
    for (int32_t k = 0; k < n; k++) { /* relative rank order: rank-order shapes over one
                                          rank per node are the same trees */
        int32_t r = (root + k) % n;
        int32_t d = net->node_of[r];
        if (lead_of[d] < 0) {
            lead_of[d] = L->m;
            L->rank[L->m] = r;
            L->node[L->m] = d;
            L->m++;
        }
    }
    /* Members: count, offsets, fill in rank order. */
    for (int32_t r = 0; r < n; r++) {
        int32_t i = lead_of[net->node_of[r]];
        if (L->rank[i] != r)
            L->first[i + 1]++;
    }
    for (int32_t i = 0; i < L->m; i++)
        L->first[i + 1] += L->first[i];
    int32_t *fill = malloc((size_t)L->m * sizeof *fill);
    if (!fill) {
        free(lead_of);
        rw_leaders_free(L);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks' leaders", (int)n);
    }
    memcpy(fill, L->first, (size_t)L->m * sizeof *fill);
    for (int32_t r = 0; r < n; r++) {
        int32_t i = lead_of[net->node_of[r]];
        if (L->rank[i] != r)
            L->member[fill[i]++] = r;
    }
    free(fill);
    free(lead_of);
    return RW_OK;
}

rw_status rw_leaders_init_ranks(const rw_pnet *net, int32_t root, rw_leaders *L)
{
    memset(L, 0, sizeof *L);
    int32_t n = net->n_ranks;
    if (root < 0 || root >= n)
        return rw_fail(RW_ERR_ARG, "root %d is not a rank of %d", (int)root, (int)n);
    L->rank = malloc((size_t)n * sizeof *L->rank);
    L->node = malloc((size_t)n * sizeof *L->node);
    L->first = calloc((size_t)n + 2, sizeof *L->first);
    L->member = malloc(sizeof *L->member);
    if (!L->rank || !L->node || !L->first || !L->member) {
        rw_leaders_free(L);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", (int)n);
    }
    L->n = L->m = n;
    for (int32_t k = 0; k < n; k++) {
        L->rank[k] = (root + k) % n;
        L->node[k] = net->node_of[L->rank[k]];
    }
    return RW_OK;
}

#define INTRA_ORDER (1 << 30)

rw_status rw_leaders_expand(const rw_leaders *L, const int32_t *lp, const int32_t *lo, rw_tree **out)
{
    int32_t n = L->n;
    int32_t *parent = malloc((size_t)n * sizeof *parent);
    int32_t *order = malloc((size_t)n * sizeof *order);
    if (!parent || !order) {
        free(parent);
        free(order);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
    }
    for (int32_t i = 0; i < L->m; i++) {
        int32_t r = L->rank[i];
        parent[r] = i == 0 ? -1 : L->rank[lp[i]];
        order[r] = lo[i];
        /* The node's ranks: a binomial tree over (leader, members...). */
        int32_t k = L->first[i + 1] - L->first[i];
        for (int32_t j = 1; j <= k; j++) {
            int32_t pj = j & (j - 1); /* j - lowbit(j) */
            int32_t rj = L->member[L->first[i] + j - 1];
            parent[rj] = pj == 0 ? r : L->member[L->first[i] + pj - 1];
            order[rj] = INTRA_ORDER + (k - j); /* larger subtrees (smaller j) first */
        }
    }
    rw_status st = rw_tree_from_parents(n, L->rank[0], parent, order, out);
    free(parent);
    free(order);
    return st;
}

/* ------------------------------------------------------------ leader trees */

typedef struct ltree {
    int32_t *lp, *lo;
} ltree;

static int ltree_alloc(ltree *t, int32_t m)
{
    t->lp = malloc((size_t)m * sizeof *t->lp);
    t->lo = malloc((size_t)m * sizeof *t->lo);
    return t->lp && t->lo;
}

static void ltree_free(ltree *t)
{
    free(t->lp);
    free(t->lo);
    t->lp = t->lo = NULL;
}

/* A shape over the leaders, leader i at relative position i. */
static void ltree_shape(ltree *t, int32_t m, rw_tree_shape shape, int32_t radix)
{
    t->lp[0] = -1;
    t->lo[0] = 0;
    for (int32_t v = 1; v < m; v++)
        rw_shape_position(shape, radix, v, &t->lp[v], &t->lo[v]);
}

static double ltree_score(const rw_pnet *net, const rw_leaders *L, const ltree *t, const char *op,
                          double bytes, int64_t segment, const rw_tune_options *opt)
{
    rw_tree *full = NULL;
    if (rw_leaders_expand(L, t->lp, t->lo, &full) != RW_OK)
        return INFINITY;
    double s = rw_tune_score(net, op, full, bytes, segment, opt);
    rw_tree_free(full);
    return s;
}

/* ltree_score and the sum of the transfers' end times: the local search's
 * second criterion. The makespan alone is flat over most moves (only the
 * last rank reached counts), so a search on it stalls where many trees
 * tie; among trees of one makespan it prefers the one that reaches ranks
 * earlier, which leaves room to move the last ones forward. */
static double ltree_score_sum(const rw_pnet *net, const rw_leaders *L, const ltree *t, const char *op,
                              double bytes, const rw_tune_options *opt, double *sum)
{
    *sum = INFINITY;
    rw_tree *full = NULL;
    if (rw_leaders_expand(L, t->lp, t->lo, &full) != RW_OK)
        return INFINITY;
    rw_coll_options c = rw_tune_coll_options(opt);
    rw_sched *s = NULL;
    double *finish = NULL, time = INFINITY;
    rw_sim_result r;
    if (rw_sched_tree(op, full, bytes, 0, &c, &s) == RW_OK &&
        (finish = malloc((size_t)(rw_sched_n_transfers(s) > 0 ? rw_sched_n_transfers(s) : 1) * sizeof *finish)) &&
        rw_simulate(net, s, RW_SIM_SHARED, &r, finish) == RW_OK) {
        time = r.time;
        double total = 0.0;
        for (int64_t k = 0; k < rw_sched_n_transfers(s); k++)
            total += finish[k];
        *sum = total;
    }
    free(finish);
    rw_sched_free(s);
    rw_tree_free(full);
    return time;
}

/* Is a in the subtree of v? */
static int below(const ltree *t, int32_t a, int32_t v)
{
    for (; a >= 0; a = t->lp[a])
        if (a == v)
            return 1;
    return 0;
}

/* A small deterministic generator for the local search (xorshift64*). */
static uint32_t next_u32(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 2685821657736338717ULL) >> 32);
}

/* Local search: random moves (move leader v's subtree under u, first or
 * last among u's children; or exchange the places of two leaders), each
 * kept when the predictor says it is faster; at most opt->max_evals
 * predictor runs. *best holds the score of t on entry and on return. */
static rw_status improve(const rw_pnet *net, const rw_leaders *L, ltree *t, const char *op, double bytes,
                         const rw_tune_options *opt, double *best)
{
    int32_t m = L->m;
    if (m < 3 || opt->max_evals <= 0)
        return RW_OK;
    ltree c;
    if (!ltree_alloc(&c, m)) {
        ltree_free(&c);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the local search");
    }
    double best_sum;
    *best = ltree_score_sum(net, L, t, op, bytes, opt, &best_sum);
    uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)m;
    for (int32_t e = 0; e < opt->max_evals; e++) {
        memcpy(c.lp, t->lp, (size_t)m * sizeof *c.lp);
        memcpy(c.lo, t->lo, (size_t)m * sizeof *c.lo);
        uint32_t kind = next_u32(&seed) % 3;
        int32_t v = 1 + (int32_t)(next_u32(&seed) % (uint32_t)(m - 1));
        int32_t u = (int32_t)(next_u32(&seed) % (uint32_t)m);
        if (kind < 2) {
            if (u == t->lp[v] || below(t, u, v))
                continue;
            int32_t lo_min = 0, lo_max = 0;
            for (int32_t x = 1; x < m; x++)
                if (t->lp[x] == u) {
                    lo_min = lo_min < t->lo[x] ? lo_min : t->lo[x];
                    lo_max = lo_max > t->lo[x] ? lo_max : t->lo[x];
                }
            c.lp[v] = u;
            c.lo[v] = kind == 0 ? lo_min - 1 : lo_max + 1;
        } else {
            if (u == 0 || u == v)
                continue;
            /* Relabel: v takes u's place and u takes v's. */
            for (int32_t x = 0; x < m; x++) {
                int32_t fx = x == u ? v : x == v ? u : x;
                int32_t px = t->lp[x];
                c.lp[fx] = px < 0 ? -1 : px == u ? v : px == v ? u : px;
                c.lo[fx] = t->lo[x];
            }
        }
        double sum, s = ltree_score_sum(net, L, &c, op, bytes, opt, &sum);
        if (s < *best * (1.0 - 1e-9) || (s <= *best * (1.0 + 1e-12) && sum < best_sum * (1.0 - 1e-9))) {
            *best = s;
            best_sum = sum;
            memcpy(t->lp, c.lp, (size_t)m * sizeof *c.lp);
            memcpy(t->lo, c.lo, (size_t)m * sizeof *c.lo);
        }
    }
    ltree_free(&c);
    return RW_OK;
}

/* Earliest-completion greedy among the leaders. Upward operations (reduce,
 * gather) are a bcast on the reversed network. */
static void greedy(const rw_pnet *net, const rw_leaders *L, int up, double bytes, int eager, ltree *t,
                   double *ready, uint8_t *in)
{
    int32_t m = L->m;
    for (int32_t i = 0; i < m; i++) {
        ready[i] = 0.0;
        in[i] = 0;
    }
    int32_t *n_children = calloc((size_t)m, sizeof *n_children);
    in[0] = 1;
    t->lp[0] = -1;
    t->lo[0] = 0;
    for (int32_t step = 1; step < m; step++) {
        int32_t bu = -1, bv = -1;
        double best = INFINITY, bocc = 0.0;
        for (int32_t u = 0; u < m; u++) {
            if (!in[u])
                continue;
            double leave = ready[u] + rw_l_o(net, L, u);
            for (int32_t v = 0; v < m; v++) {
                if (in[v])
                    continue;
                int32_t a = up ? v : u, b = up ? u : v;
                double wire = bytes * rw_l_beta(net, L, a, b);
                double arrive = leave + rw_l_alpha(net, L, a, b) + wire;
                if (arrive < best) {
                    best = arrive;
                    bu = u;
                    bv = v;
                    bocc = wire;
                }
            }
        }
        in[bv] = 1;
        t->lp[bv] = bu;
        t->lo[bv] = n_children ? n_children[bu]++ : step;
        ready[bv] = best;
        /* An eager send occupies the sender for its overhead and its bytes on
         * the wire (LogGP's gap); a rendezvous one until it arrives. */
        ready[bu] = eager ? ready[bu] + rw_l_o(net, L, bu) + bocc : best;
    }
    free(n_children);
}

static int is_up(const char *op)
{
    int k = rw_op_parse(op);
    return k == RW_COLL_REDUCE || k == RW_COLL_GATHER;
}

static rw_status check_op(const char *op)
{
    char known[64];
    if (!rw_op_rooted(rw_op_parse(op)))
        return rw_fail(RW_ERR_ARG, "unknown rooted collective '%s' (known: %s)", op ? op : "(null)",
                       rw_op_names(known, sizeof known, RW_OPS_ROOTED, ", "));
    return RW_OK;
}

/* Allocate leaders and two leader trees; every construction starts so. */
typedef struct work {
    rw_leaders L;
    ltree a, b;
    double *ready;
    uint8_t *in;
} work;

static void work_free(work *w)
{
    rw_leaders_free(&w->L);
    ltree_free(&w->a);
    ltree_free(&w->b);
    free(w->ready);
    free(w->in);
}

/* per_rank: every rank its own "leader" (trees over ranks, not nodes). */
static rw_status work_init_over(const rw_pnet *net, int32_t root, int per_rank, work *w)
{
    memset(w, 0, sizeof *w);
    if (!net)
        return rw_fail(RW_ERR_ARG, "model tree: no network");
    if (net->n_ranks < 1 || !net->node_of)
        return rw_fail(RW_ERR_ARG, "model tree: the network has no placement");
    rw_status st = per_rank ? rw_leaders_init_ranks(net, root, &w->L) : rw_leaders_init(net, root, &w->L);
    if (st != RW_OK)
        return st;
    int32_t m = w->L.m;
    int ok = ltree_alloc(&w->a, m) & ltree_alloc(&w->b, m);
    w->ready = malloc((size_t)m * sizeof *w->ready);
    w->in = malloc((size_t)m);
    if (!ok || !w->ready || !w->in) {
        work_free(w);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d leaders", (int)m);
    }
    return RW_OK;
}

static rw_status work_init(const rw_pnet *net, int32_t root, work *w)
{
    return work_init_over(net, root, 0, w);
}

static rw_status finish(work *w, const ltree *t, rw_tree **out)
{
    rw_status st = rw_leaders_expand(&w->L, t->lp, t->lo, out);
    work_free(w);
    return st;
}

/* The eager construction over node leaders (per_rank 0) or over every
 * rank: the earliest-completion greedy and the binomial shape, the better
 * one improved by local moves; its tree and predicted time. */
/* A tree over ranks as a per-rank leader tree (rw_leaders_init_ranks:
 * leader k is rank (root + k) mod n). */
static void ltree_of_tree(const rw_tree *t, int32_t root, ltree *lt)
{
    int32_t n = t->n_ranks;
    for (int32_t r = 0; r < n; r++) {
        int32_t k = (r - root + n) % n;
        lt->lp[k] = t->parent[r] < 0 ? -1 : (t->parent[r] - root + n) % n;
        lt->lo[k] = 0;
    }
    for (int32_t r = 0; r < n; r++)
        for (int32_t c = t->first_child[r]; c < t->first_child[r + 1]; c++)
            lt->lo[(t->child[c] - root + n) % n] = c - t->first_child[r];
}

/* starts (per_rank only): trees over the ranks, from root, each searched
 * from with half the budget; from_greedy 0: the greedy and binomial starts
 * are kept as they are, only the given trees are searched from. */
static rw_status eager_over(const rw_pnet *net, const char *op, int32_t root, double bytes, const rw_tune_options *o,
                            int per_rank, int from_greedy, const rw_tree *const *starts, int n_starts, rw_tree **out,
                            double *score)
{
    work w;
    rw_status st = work_init_over(net, root, per_rank, &w);
    if (st != RW_OK)
        return st;
    int32_t m = w.L.m;
    /* Upward, a parent takes its children's messages one receive after the
     * other, each for its whole latency (the transfer starts once the receive
     * is posted): the reversed sender is busy until each arrival, as with
     * rendezvous sends. */
    int up = is_up(op);
    greedy(net, &w.L, up, bytes, !up && bytes < (double)o->eager_limit, &w.a, w.ready, w.in);
    ltree_shape(&w.b, m, RW_SHAPE_BINOMIAL, 2);
    double sa = ltree_score(net, &w.L, &w.a, op, bytes, 0, o);
    double sb = ltree_score(net, &w.L, &w.b, op, bytes, 0, o);
    /* Search from the better start, then from each given tree on its own: a
     * local search ends where its start leads, and a known tree's optimum can
     * beat the greedy's (the search can only better it). */
    ltree *t = sa <= sb ? &w.a : &w.b;
    *score = sa <= sb ? sa : sb;
    if (from_greedy)
        st = improve(net, &w.L, t, op, bytes, o, score);
    for (int k = 0; st == RW_OK && per_rank && k < n_starts; k++) {
        ltree *other = t == &w.a ? &w.b : &w.a;
        ltree_of_tree(starts[k], root, other);
        double ss = ltree_score(net, &w.L, other, op, bytes, 0, o);
        rw_tune_options half = *o;
        half.max_evals = o->max_evals / 2;
        st = improve(net, &w.L, other, op, bytes, &half, &ss);
        if (ss < *score) {
            *score = ss;
            t = other;
        }
    }
    if (st != RW_OK) {
        work_free(&w);
        return st;
    }
    return finish(&w, t, out);
}

/* 1 when two ranks share a node. */
static int shares_a_node(const rw_pnet *net)
{
    uint8_t *seen = calloc((size_t)net->n, 1);
    int shared = 0;
    for (int32_t r = 0; seen && r < net->n_ranks && !shared; r++)
        shared = seen[net->node_of[r]]++ > 0;
    free(seen);
    return shared;
}

rw_status rw_model_tree_eager(const rw_pnet *net, const char *op, int32_t root, double bytes,
                              const rw_tune_options *opt, rw_tree **out)
{
    rw_tune_options o = opt ? *opt : rw_tune_options_default();
    return rw_tree_eager_from(net, op, root, bytes, &o, &o.start_tree, o.start_tree ? 1 : 0, out);
}

rw_status rw_tree_eager_from(const rw_pnet *net, const char *op, int32_t root, double bytes,
                               const rw_tune_options *opt, const rw_tree *const *starts, int n_starts, rw_tree **out)
{
    *out = NULL;
    const rw_tune_options o = *opt;
    rw_status st = check_op(op);
    if (st != RW_OK)
        return st;
    if (!net || net->n_ranks < 1)
        return rw_fail(RW_ERR_ARG, "model tree: a network with a placement is required");
    if (n_starts > RW_EAGER_STARTS_MAX)
        return rw_fail(RW_ERR_ARG, "model tree: %d start trees (at most %d)", n_starts, RW_EAGER_STARTS_MAX);
    for (int k = 0; k < n_starts; k++)
        if (!starts[k] || starts[k]->n_ranks != net->n_ranks || starts[k]->root != root)
            return rw_fail(RW_ERR_ARG, "model tree: a start tree must span the %d ranks from root %d",
                           (int)net->n_ranks, (int)root);
    double best;
    if ((st = eager_over(net, op, root, bytes, &o, 0, 1, NULL, 0, out, &best)) != RW_OK)
        return st;
    /* With several ranks per node, a tree over ranks may beat every tree of
     * node leaders: a rank sends straight to ranks of other nodes besides
     * their leader, so a node's ranks are reached in parallel rather than
     * forwarded one after the other inside it (16 ranks on 4 alike nodes,
     * 1 us overheads: 9.0 us at best against 10.4 us for the leaders').
     * Known trees (the MPI's own, the next smaller size's) are searched from
     * over ranks too: the greedy can end in a worse local optimum than a
     * tree already known (docs/concepts/collectives.md). */
    rw_tree *alt = NULL;
    double s_alt = INFINITY;
    int shared = shares_a_node(net);
    if ((shared || n_starts > 0) && net->n_ranks > 2) {
        /* One rank per node: the leaders' search was the search over ranks;
         * only the given trees remain to be searched from. */
        const rw_tree *from[RW_EAGER_STARTS_MAX + 1];
        int n_from = 0;
        if (shared)
            from[n_from++] = *out;
        for (int k = 0; k < n_starts; k++)
            from[n_from++] = starts[k];
        if ((st = eager_over(net, op, root, bytes, &o, 1, shared, from, n_from, &alt, &s_alt)) != RW_OK) {
            rw_tree_free(*out);
            *out = NULL;
            return st;
        }
        if (s_alt < best) {
            rw_tree_free(*out);
            *out = alt;
            best = s_alt;
        } else {
            rw_tree_free(alt);
        }
    }
    /* With several ranks per node the rank-order binomial is no leader tree:
     * keep it when it is still predicted faster. */
    rw_tree *b = NULL;
    if ((st = rw_tree_by_name("binomial", net->n_ranks, root, 2, &b)) != RW_OK) {
        rw_tree_free(*out);
        *out = NULL;
        return st;
    }
    if (rw_tune_score(net, op, b, bytes, 0, &o) < best) {
        rw_tree_free(*out);
        *out = b;
    } else {
        rw_tree_free(b);
    }
    return RW_OK;
}

/* Bandwidth of a leader pair (bytes/s; +inf when beta is 0). */
static double bw(const rw_pnet *net, const rw_leaders *L, int32_t i, int32_t j)
{
    double b = rw_l_beta(net, L, i, j);
    return b > 0 ? 1.0 / b : INFINITY;
}

/* Is (w, a) better than (bw0, a0): wider, then lower latency. */
static int wider(double w, double a, double w0, double a0) { return w > w0 || (w == w0 && a < a0); }

rw_status rw_model_tree_chain(const rw_pnet *net, int32_t root, rw_tree **out)
{
    *out = NULL;
    work w;
    rw_status st = work_init(net, root, &w);
    if (st != RW_OK)
        return st;
    int32_t m = w.L.m, tail = 0;
    memset(w.in, 0, (size_t)m);
    w.in[0] = 1;
    w.a.lp[0] = -1;
    w.a.lo[0] = 0;
    for (int32_t step = 1; step < m; step++) {
        int32_t nv = -1;
        double bw0 = -1, a0 = INFINITY;
        for (int32_t v = 0; v < m; v++) {
            if (w.in[v])
                continue;
            double b = bw(net, &w.L, tail, v), a = rw_l_alpha(net, &w.L, tail, v);
            if (nv < 0 || wider(b, a, bw0, a0)) {
                nv = v;
                bw0 = b;
                a0 = a;
            }
        }
        w.in[nv] = 1;
        w.a.lp[nv] = tail;
        w.a.lo[nv] = 0;
        tail = nv;
    }
    return finish(&w, &w.a, out);
}

rw_status rw_model_tree_binary(const rw_pnet *net, int32_t root, rw_tree **out)
{
    *out = NULL;
    work w;
    rw_status st = work_init(net, root, &w);
    if (st != RW_OK)
        return st;
    int32_t m = w.L.m;
    int32_t *kids = calloc((size_t)m, sizeof *kids);
    if (!kids) {
        work_free(&w);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d leaders", (int)m);
    }
    double *width = w.ready; /* bottleneck bandwidth from the root */
    memset(w.in, 0, (size_t)m);
    w.in[0] = 1;
    width[0] = INFINITY;
    w.a.lp[0] = -1;
    w.a.lo[0] = 0;
    for (int32_t step = 1; step < m; step++) {
        int32_t bu = -1, bv = -1;
        double bw0 = -1, a0 = INFINITY;
        for (int32_t u = 0; u < m; u++) {
            if (!w.in[u] || kids[u] >= 2)
                continue;
            for (int32_t v = 0; v < m; v++) {
                if (w.in[v])
                    continue;
                double b = bw(net, &w.L, u, v), a = rw_l_alpha(net, &w.L, u, v);
                b = b < width[u] ? b : width[u];
                if (bu < 0 || wider(b, a, bw0, a0)) {
                    bu = u;
                    bv = v;
                    bw0 = b;
                    a0 = a;
                }
            }
        }
        w.in[bv] = 1;
        width[bv] = bw0;
        w.a.lp[bv] = bu;
        w.a.lo[bv] = kids[bu]++;
    }
    free(kids);
    return finish(&w, &w.a, out);
}

rw_status rw_model_tree_volume(const rw_pnet *net, const char *op, int32_t root, double bytes,
                               const rw_tune_options *opt, rw_tree **out)
{
    *out = NULL;
    rw_tune_options o = opt ? *opt : rw_tune_options_default();
    rw_status st = check_op(op);
    if (st != RW_OK)
        return st;
    work w;
    if ((st = work_init(net, root, &w)) != RW_OK)
        return st;
    int32_t m = w.L.m, up = is_up(op);
    if (m < 1) { /* work_init makes at least one leader */
        work_free(&w);
        return rw_fail(RW_ERR_STATE, "a tree needs at least one leader");
    }
    /* The binomial shape over positions; pos_size: positions in a subtree. */
    ltree_shape(&w.b, m, RW_SHAPE_BINOMIAL, 2);
    int32_t *size = malloc((size_t)m * sizeof *size), *leader_at = malloc((size_t)m * sizeof *leader_at);
    if (!size || !leader_at) {
        free(size);
        free(leader_at);
        work_free(&w);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d leaders", (int)m);
    }
    for (int32_t v = 0; v < m; v++)
        size[v] = 1;
    for (int32_t v = m - 1; v > 0; v--)
        size[w.b.lp[v]] += size[v];
    double per_leader = (double)w.L.n / (double)m * bytes; /* bytes a node contributes */
    memset(w.in, 0, (size_t)m);
    w.in[0] = 1;
    leader_at[0] = 0;
    /* Binomial positions: a parent precedes its children, and a position's
     * children (v + 1, v + 2, v + 4, ...) have growing subtrees; fill in
     * order of decreasing subtree, parents first: by size, then position. */
    int32_t *pos = malloc((size_t)m * sizeof *pos);
    if (!pos) {
        free(size);
        free(leader_at);
        work_free(&w);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d leaders", (int)m);
    }
    int32_t np = 0;
    for (int32_t s = m; s >= 1; s--)
        for (int32_t v = 1; v < m; v++)
            if (size[v] == s)
                pos[np++] = v;
    for (int32_t q = 0; q < np; q++) {
        int32_t v = pos[q], par = leader_at[w.b.lp[v]], pick = -1;
        double vol = size[v] * per_leader, best = INFINITY;
        for (int32_t c = 1; c < m; c++) {
            if (w.in[c])
                continue;
            int32_t a = up ? c : par, b = up ? par : c;
            double cost = rw_l_alpha(net, &w.L, a, b) + vol * rw_l_beta(net, &w.L, a, b);
            if (cost < best) {
                best = cost;
                pick = c;
            }
        }
        w.in[pick] = 1;
        leader_at[v] = pick;
    }
    w.a.lp[0] = -1;
    w.a.lo[0] = 0;
    for (int32_t v = 1; v < m; v++) {
        w.a.lp[leader_at[v]] = leader_at[w.b.lp[v]];
        w.a.lo[leader_at[v]] = w.b.lo[v];
    }
    free(size);
    free(leader_at);
    free(pos);
    double best = ltree_score(net, &w.L, &w.a, op, bytes, 0, &o);
    st = improve(net, &w.L, &w.a, op, bytes, &o, &best);
    if (st != RW_OK) {
        work_free(&w);
        return st;
    }
    return finish(&w, &w.a, out);
}

/* ---------------------------------------------------------------- segments */

int64_t rw_model_segment(const rw_pnet *net, const rw_tree *t, double bytes, const rw_tune_options *opt)
{
    rw_tune_options o = opt ? *opt : rw_tune_options_default();
    if (!net || !t || rw_tree_check(t) != RW_OK || t->n_ranks < 3 || bytes <= 2048)
        return 0;
    int32_t depth = 0;
    double amax = 0, bmax = 0;
    for (int32_t r = 0; r < t->n_ranks; r++) {
        int32_t d = 0;
        for (int32_t x = r; t->parent[x] >= 0; x = t->parent[x])
            d++;
        depth = d > depth ? d : depth;
        if (t->parent[r] >= 0) {
            int64_t k = (int64_t)net->node_of[t->parent[r]] * net->n + net->node_of[r];
            amax = net->alpha[k] > amax ? net->alpha[k] : amax;
            bmax = net->beta[k] > bmax ? net->beta[k] : bmax;
        }
    }
    if (depth < 2 || bmax <= 0)
        return 0;
    double s = sqrt(bytes * amax / ((double)(depth - 1) * bmax));
    int64_t seg = ((int64_t)s / 1024) * 1024;
    seg = seg < 1024 ? 1024 : seg;
    int64_t cand[4] = {0, seg / 2 >= 1024 ? (seg / 2) / 1024 * 1024 : 1024, seg, 2 * seg};
    int64_t best_seg = 0;
    double best = INFINITY;
    for (int k = 0; k < 4; k++) {
        if (cand[k] >= bytes)
            continue;
        double tm = rw_tune_score(net, rw_op_name(RW_COLL_BCAST), t, bytes, cand[k], &o);
        if (tm < best) {
            best = tm;
            best_seg = cand[k];
        }
    }
    return best_seg;
}
