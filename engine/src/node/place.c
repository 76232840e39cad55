/* Placing one node's ranks on its cores (rankwise_node.h): split the ranks
 * as the node's tree splits its cores (packages, domains, shared caches),
 * each split a partition that keeps heavy pairs together, then refine the
 * whole by swaps and moves on the per-level cost table. */
#include "../internal.h"
#include "rankwise_node.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Units (domains of a package, or caches of a domain) one split handles;
 * a node with more is placed in core order below that split. */
#define RW_NODE_MAX_PARTS 256

rw_node_costs rw_node_costs_default(void)
{
    /* Orders of magnitude of shared-memory MPI on a two-socket server:
     * a shared cache, the same memory, the other domain of the socket,
     * the other socket (Getmansky et al. 2015 report a factor of two and
     * more between the cheapest and the dearest). */
    rw_node_costs c = {
        .alpha = {0.3e-6, 0.4e-6, 0.6e-6, 1.0e-6},
        .beta = {1.0 / 20e9, 1.0 / 12e9, 1.0 / 8e9, 1.0 / 5e9},
    };
    return c;
}

rw_status rw_node_costs_check(const rw_node_costs *c)
{
    for (int l = 0; l < RW_NODE_LEVELS; l++) {
        if (!isfinite(c->alpha[l]) || !isfinite(c->beta[l]) || c->alpha[l] < 0 || c->beta[l] < 0)
            return rw_fail(RW_ERR_ARG, "node cost of level %s is not a finite number >= 0",
                           rw_node_level_name(l));
        if (l > 0 && (c->alpha[l] < c->alpha[l - 1] || c->beta[l] < c->beta[l - 1]))
            return rw_fail(RW_ERR_ARG, "node cost of level %s is below that of level %s: costs must "
                                       "not decrease from cache to node",
                           rw_node_level_name(l), rw_node_level_name(l - 1));
    }
    return RW_OK;
}

/* The node's ranks as an undirected graph: each matrix entry i->j between
 * two of them appears in i's list and in j's (so a pair that talks both
 * ways appears twice in each: sums stay right). */
typedef struct graph {
    int32_t n;
    int64_t *start; /* n + 1 */
    int32_t *peer;
    double *msgs, *bytes;
} graph;

static void graph_free(graph *g)
{
    free(g->start);
    free(g->peer);
    free(g->msgs);
    free(g->bytes);
}

static rw_status check_ranks(const rw_matrix *traffic, int32_t n, const int32_t *ranks, int32_t *local)
{
    for (int32_t r = 0; r < traffic->n_ranks; r++)
        local[r] = -1;
    for (int32_t k = 0; k < n; k++) {
        int32_t r = ranks[k];
        if (r < 0 || r >= traffic->n_ranks)
            return rw_fail(RW_ERR_ARG, "rank %d is not a rank of the %d-rank traffic", (int)r,
                           (int)traffic->n_ranks);
        if (local[r] >= 0)
            return rw_fail(RW_ERR_ARG, "rank %d is given twice for one node", (int)r);
        local[r] = k;
    }
    return RW_OK;
}

static rw_status graph_build(const rw_matrix *traffic, int32_t n, const int32_t *ranks, graph *g)
{
    memset(g, 0, sizeof *g);
    if (!traffic || (n > 0 && !ranks))
        return rw_fail(RW_ERR_ARG, "rw_node_place: no traffic or no ranks");
    if (n < 0)
        return rw_fail(RW_ERR_ARG, "rw_node_place: a negative rank count");
    int32_t *local = malloc((size_t)traffic->n_ranks * sizeof *local);
    g->n = n;
    g->start = calloc((size_t)n + 1, sizeof *g->start);
    if (!local || !g->start) {
        free(local);
        return rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
    }
    rw_status st = check_ranks(traffic, n, ranks, local);
    for (int pass = 0; st == RW_OK && pass < 2; pass++) {
        int64_t *fill = pass ? calloc((size_t)n, sizeof *fill) : NULL;
        if (pass && !fill) {
            st = rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
            break;
        }
        for (int32_t i = 0; i < n; i++) {
            int32_t r = ranks[i];
            for (int64_t e = traffic->row_start[r]; e < traffic->row_start[r + 1]; e++) {
                int32_t j = local[traffic->dst[e]];
                if (j < 0 || j == i)
                    continue; /* another node's rank, or self traffic */
                if (!pass) {
                    g->start[i + 1]++;
                    g->start[j + 1]++;
                    continue;
                }
                int64_t a = g->start[i] + fill[i]++, b = g->start[j] + fill[j]++;
                g->peer[a] = j;
                g->peer[b] = i;
                g->msgs[a] = g->msgs[b] = (double)traffic->msgs[e];
                g->bytes[a] = g->bytes[b] = (double)traffic->bytes[e];
            }
        }
        if (!pass) {
            for (int32_t i = 0; i < n; i++)
                g->start[i + 1] += g->start[i];
            size_t m = (size_t)g->start[n] + 1;
            g->peer = malloc(m * sizeof *g->peer);
            g->msgs = malloc(m * sizeof *g->msgs);
            g->bytes = malloc(m * sizeof *g->bytes);
            if (!g->peer || !g->msgs || !g->bytes)
                st = rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
        }
        free(fill);
    }
    free(local);
    if (st != RW_OK)
        graph_free(g);
    return st;
}

static inline double edge_cost(const rw_node_costs *c, int level, double m, double b)
{
    return m * c->alpha[level] + b * c->beta[level];
}

/* ---------------------------------------------------------------------
 * One split: the ranks set[0..ns) into k parts of sizes size[0..k),
 * part_of[v] in [0, k) for v in set; cut weight w(e) = cost at `level`.
 * ------------------------------------------------------------------- */

typedef struct split {
    const graph *g;
    const rw_node_costs *c;
    int level;
    int32_t *part_of;  /* by local rank; -1 outside the set */
    double *conn_part; /* scratch, by local rank */
    double *conn_free;
    int32_t *in_set;   /* 1 for the ranks being split */
    int32_t *pos;      /* local rank -> its index in the set being split */
} split;

static double w_of(const split *s, int64_t e)
{
    return edge_cost(s->c, s->level, s->g->msgs[e], s->g->bytes[e]);
}

static double cut_weight(const split *s, const int32_t *set, int32_t ns)
{
    double cut = 0;
    for (int32_t k = 0; k < ns; k++) {
        int32_t v = set[k];
        for (int64_t e = s->g->start[v]; e < s->g->start[v + 1]; e++) {
            int32_t u = s->g->peer[e];
            if (s->in_set[u] && s->part_of[u] != s->part_of[v])
                cut += w_of(s, e);
        }
    }
    return cut / 2;
}

/* How the growth sizes its parts: FILL fills the largest parts first (as
 * few as will hold the ranks), EVEN spreads the ranks as evenly as the
 * capacities allow, STOP grows each part while that gains and stops once
 * it no longer does (when what is left still fits the parts after it):
 * groups smaller than a domain keep a domain each. The best cut of the
 * three wins. */
enum { GROW_FILL, GROW_EVEN, GROW_STOP, GROW_POLICIES };

static void target_sizes(int policy, const int32_t *cap, int k, int32_t ns, int32_t *target)
{
    for (int p = 0; p < k; p++)
        target[p] = policy == GROW_STOP ? cap[p] : 0;
    if (policy == GROW_STOP)
        return;
    int32_t left = ns;
    if (policy == GROW_EVEN) {
        while (left > 0)
            for (int p = 0; p < k && left > 0; p++)
                if (target[p] < cap[p]) {
                    target[p]++;
                    left--;
                }
        return;
    }
    while (left > 0) { /* FILL: the largest part not yet filled, lowest index on ties */
        int best = -1;
        for (int p = 0; p < k; p++)
            if (target[p] == 0 && cap[p] > 0 && (best < 0 || cap[p] > cap[best]))
                best = p;
        target[best] = cap[best] < left ? cap[best] : left;
        left -= target[best];
    }
}

/* Grow the parts one after another, the first from seed0: each takes the
 * free rank that gains most (weight to the part minus weight to the ranks
 * still free); a later part starts at the free rank with least weight to
 * the free ones (a corner of what is left). */
static void grow(split *s, const int32_t *set, int32_t ns, const int32_t *cap, int k, int policy,
                 int32_t seed0)
{
    int32_t target[RW_NODE_MAX_PARTS], later = 0, n_free = ns;
    target_sizes(policy, cap, k, ns, target);
    for (int p = 0; p < k; p++)
        later += cap[p];
    for (int32_t i = 0; i < ns; i++) {
        int32_t v = set[i];
        s->part_of[v] = -1;
        s->conn_free[v] = 0;
    }
    for (int32_t i = 0; i < ns; i++) {
        int32_t v = set[i];
        for (int64_t e = s->g->start[v]; e < s->g->start[v + 1]; e++)
            if (s->in_set[s->g->peer[e]])
                s->conn_free[v] += w_of(s, e);
    }
    int first = 1;
    for (int p = 0; p < k; p++) {
        later -= cap[p];
        for (int32_t i = 0; i < ns; i++)
            s->conn_part[set[i]] = 0;
        for (int32_t taken = 0; taken < target[p] && n_free > 0; taken++) {
            int32_t best = -1;
            double best_gain = 0;
            for (int32_t i = 0; i < ns; i++) {
                int32_t v = set[i];
                if (s->part_of[v] >= 0)
                    continue;
                double gain = taken == 0 ? -s->conn_free[v] : s->conn_part[v] - s->conn_free[v];
                if (first)
                    gain = v == seed0 ? 1 : -INFINITY;
                if (best < 0 || gain > best_gain) {
                    best = v;
                    best_gain = gain;
                }
            }
            if (policy == GROW_STOP && taken > 0 && best_gain < 0 && n_free <= later)
                break;
            first = 0;
            s->part_of[best] = p;
            n_free--;
            for (int64_t e = s->g->start[best]; e < s->g->start[best + 1]; e++) {
                int32_t u = s->g->peer[e];
                if (!s->in_set[u])
                    continue;
                s->conn_part[u] += w_of(s, e);
                s->conn_free[u] -= w_of(s, e);
            }
        }
    }
}

/* Weight between local ranks u and v at the split's level. */
static double pair_weight(const split *s, int32_t u, int32_t v)
{
    double w = 0;
    for (int64_t e = s->g->start[u]; e < s->g->start[u + 1]; e++)
        if (s->g->peer[e] == v)
            w += w_of(s, e);
    return w;
}

/* Move u from part a to part b, keeping the connection table conn[i * k + p]
 * (weight from set[i] to part p) right. */
static void move_rank(split *s, double *conn, int k, int32_t u, int a, int b)
{
    s->part_of[u] = b;
    for (int64_t e = s->g->start[u]; e < s->g->start[u + 1]; e++)
        if (s->in_set[s->g->peer[e]]) {
            size_t x = (size_t)s->pos[s->g->peer[e]] * k;
            conn[x + a] -= w_of(s, e);
            conn[x + b] += w_of(s, e);
        }
}

/* First-improvement swaps between parts, and moves into parts with room,
 * pass after pass, until a pass lowers the cut no more. */
static rw_status swap_refine(split *s, const int32_t *set, int32_t ns, const int32_t *cap, int k,
                             double eps)
{
    double *conn = calloc((size_t)ns * (size_t)k, sizeof *conn);
    int32_t count[RW_NODE_MAX_PARTS] = {0};
    if (!conn)
        return rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
    for (int32_t i = 0; i < ns; i++) {
        s->pos[set[i]] = i;
        count[s->part_of[set[i]]]++;
    }
    for (int32_t i = 0; i < ns; i++)
        for (int64_t e = s->g->start[set[i]]; e < s->g->start[set[i] + 1]; e++) {
            int32_t u = s->g->peer[e];
            if (s->in_set[u])
                conn[(size_t)i * k + s->part_of[u]] += w_of(s, e);
        }
    for (int pass = 0; pass < 64; pass++) {
        int changed = 0;
        for (int32_t i = 0; i < ns; i++)
            for (int q = 0; q < k; q++) {
                int32_t u = set[i];
                int pu = s->part_of[u];
                if (q != pu && count[q] < cap[q] &&
                    conn[(size_t)i * k + pu] - conn[(size_t)i * k + q] < -eps) {
                    move_rank(s, conn, k, u, pu, q);
                    count[pu]--;
                    count[q]++;
                    changed = 1;
                }
            }
        for (int32_t i = 0; i < ns; i++)
            for (int32_t j = i + 1; j < ns; j++) {
                int32_t u = set[i], v = set[j];
                int pu = s->part_of[u], pv = s->part_of[v];
                if (pu == pv)
                    continue;
                /* Cut change when u goes to pv and v to pu; their own edge stays cut. */
                double d = conn[(size_t)i * k + pu] - conn[(size_t)i * k + pv] +
                           conn[(size_t)j * k + pv] - conn[(size_t)j * k + pu];
                if (d >= -eps || (d += 2 * pair_weight(s, u, v)) >= -eps)
                    continue;
                move_rank(s, conn, k, u, pu, pv);
                move_rank(s, conn, k, v, pv, pu);
                changed = 1;
            }
        if (!changed)
            break;
    }
    free(conn);
    return RW_OK;
}

/* ---------------------------------------------------------------------
 * Exact split of small sets (as Getmansky et al. 2015, §2.1, search all
 * placements of a few processes): units of equal capacity are alike, so
 * the unit holding the lowest free rank can be taken to be the next one,
 * and a memo over the set of placed ranks keeps the search small.
 * ------------------------------------------------------------------- */

#define EXACT_MAX_RANKS 16
#define EXACT_MAX_PARTS 8

typedef struct exact {
    int32_t ns, cap, k;
    double w[EXACT_MAX_RANKS][EXACT_MAX_RANKS]; /* weight between set[i] and set[j], both ways */
    double *memo;                               /* (1 << ns) * (k + 1), NAN unknown */
    uint32_t *choice;
} exact;

static double inside(const exact *x, uint32_t group)
{
    double sum = 0;
    for (int i = 0; i < x->ns; i++)
        if (group >> i & 1)
            for (int j = i + 1; j < x->ns; j++)
                if (group >> j & 1)
                    sum += x->w[i][j];
    return sum;
}

/* The most weight the free ranks (not in mask) can keep inside `left` units. */
static double exact_best(exact *x, uint32_t mask, int left)
{
    uint32_t full = (1u << x->ns) - 1;
    if (mask == full)
        return 0;
    if (left == 0)
        return -INFINITY;
    size_t at = (size_t)mask * (size_t)(x->k + 1) + (size_t)left;
    if (!isnan(x->memo[at]))
        return x->memo[at];
    int32_t freev[EXACT_MAX_RANKS], nf = 0;
    for (int i = 0; i < x->ns; i++)
        if (!(mask >> i & 1))
            freev[nf++] = i;
    double best = -INFINITY;
    uint32_t best_group = 0;
    /* Subsets of the other free ranks, of at most cap - 1 members, with the
     * first: each size in turn, its subsets in order (Gosper's hack). */
    int rest = nf - 1;
    for (int size = 0; size <= rest && size < x->cap; size++) {
        uint32_t sub = size ? (1u << size) - 1 : 0;
        while (sub < (1u << rest) || (size == 0 && sub == 0)) {
            uint32_t group = 1u << freev[0];
            for (int b = 0; b < rest; b++)
                if (sub >> b & 1)
                    group |= 1u << freev[b + 1];
            double v = inside(x, group) + exact_best(x, mask | group, left - 1);
            if (v > best) {
                best = v;
                best_group = group;
            }
            if (size == 0)
                break;
            uint32_t c = sub & -sub, r = sub + c;
            sub = (((r ^ sub) >> 2) / c) | r;
        }
    }
    x->memo[at] = best;
    x->choice[at] = best_group;
    return best;
}

/* 1 when the split was done exactly (part_of set), 0 when too large for it. */
static int exact_partition(split *s, const int32_t *set, int32_t ns, const int32_t *cap, int k)
{
    if (ns > EXACT_MAX_RANKS || k > EXACT_MAX_PARTS || ns < 1)
        return 0;
    for (int p = 1; p < k; p++)
        if (cap[p] != cap[0])
            return 0;
    /* Work: about 2^ns states of the placed ranks, each trying the subsets
     * of fewer than cap of the others; beyond a few seconds, growth does. */
    double combos = 0, binom = 1;
    for (int size = 0; size < cap[0] && size < ns; size++) {
        combos += binom;
        binom = binom * (ns - 1 - size) / (size + 1);
    }
    if ((double)((size_t)1 << ns) * combos / ns > 3e7)
        return 0;
    exact x = {.ns = ns, .cap = cap[0], .k = k};
    size_t cells = ((size_t)1 << ns) * (size_t)(k + 1);
    x.memo = malloc(cells * sizeof *x.memo);
    x.choice = malloc(cells * sizeof *x.choice);
    if (!x.memo || !x.choice) {
        free(x.memo);
        free(x.choice);
        return 0; /* the heuristic needs less memory */
    }
    for (size_t i = 0; i < cells; i++)
        x.memo[i] = NAN;
    for (int32_t i = 0; i < ns; i++)
        s->pos[set[i]] = i;
    for (int32_t i = 0; i < ns; i++)
        for (int64_t e = s->g->start[set[i]]; e < s->g->start[set[i] + 1]; e++) {
            int32_t u = s->g->peer[e];
            if (s->in_set[u] && s->pos[u] != i)
                x.w[i][s->pos[u]] += w_of(s, e) / 2; /* each edge is listed at both ends */
        }
    for (int i = 0; i < ns; i++)
        for (int j = i + 1; j < ns; j++)
            x.w[i][j] = x.w[j][i] = x.w[i][j] + x.w[j][i];
    int done = isfinite(exact_best(&x, 0, k));
    uint32_t mask = 0;
    for (int p = 0; done && p < k && mask != (1u << ns) - 1; p++) {
        uint32_t group = x.choice[(size_t)mask * (size_t)(k + 1) + (size_t)(k - p)];
        for (int i = 0; i < ns; i++)
            if (group >> i & 1)
                s->part_of[set[i]] = p;
        mask |= group;
    }
    free(x.memo);
    free(x.choice);
    return done;
}

/* Partition set into k parts of at most cap[p] ranks: the best cut of
 * several starts (each growth policy from seeds spread over the set),
 * each grown then refined. */
static rw_status partition_direct(split *s, const int32_t *set, int32_t ns, const int32_t *cap, int k)
{
    int32_t *best = malloc((size_t)ns * sizeof *best);
    if (!best)
        return rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
    double best_cut = INFINITY, total = 0;
    for (int32_t i = 0; i < ns; i++)
        s->in_set[set[i]] = 1;
    for (int32_t i = 0; i < ns; i++)
        for (int64_t e = s->g->start[set[i]]; e < s->g->start[set[i] + 1]; e++)
            total += w_of(s, e);
    int32_t starts = ns < 8 ? ns : ns <= 256 ? 8 : 2;
    rw_status st = RW_OK;
    if (exact_partition(s, set, ns, cap, k)) {
        for (int32_t i = 0; i < ns; i++)
            s->in_set[set[i]] = 0;
        free(best);
        return RW_OK;
    }
    for (int policy = 0; policy < GROW_POLICIES && st == RW_OK; policy++)
        for (int32_t t = 0; t < starts && st == RW_OK; t++) {
            grow(s, set, ns, cap, k, policy, set[(int64_t)t * ns / starts]);
            st = swap_refine(s, set, ns, cap, k, 1e-12 * total);
            double cut = cut_weight(s, set, ns);
            if (st == RW_OK && cut < best_cut) {
                best_cut = cut;
                for (int32_t i = 0; i < ns; i++)
                    best[i] = s->part_of[set[i]];
            }
        }
    for (int32_t i = 0; i < ns; i++) {
        s->part_of[set[i]] = best[i];
        s->in_set[set[i]] = 0;
    }
    free(best);
    return st;
}

/* Recursive bisection: the units halved (in order, so that the first cut
 * follows the packages), the ranks split in two by partition_direct with
 * each half's capacity, each half bisected again; label[v] receives the
 * part of local rank v, counted from `first`. */
static rw_status bisect(split *s, const int32_t *set, int32_t ns, const int32_t *cap, int k, int first,
                        int32_t *label)
{
    if (k == 1 || ns == 0) {
        for (int32_t i = 0; i < ns; i++)
            label[set[i]] = first;
        return RW_OK;
    }
    int h = k / 2;
    int32_t two[2] = {0, 0};
    for (int p = 0; p < k; p++)
        two[p >= h] += cap[p];
    rw_status st = partition_direct(s, set, ns, two, 2);
    int32_t *halves = malloc((size_t)ns * sizeof *halves), n0 = 0, n1 = 0;
    if (!halves)
        return rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
    for (int32_t i = 0; st == RW_OK && i < ns; i++)
        if (s->part_of[set[i]] == 0)
            halves[n0++] = set[i];
    for (int32_t i = 0; st == RW_OK && i < ns; i++)
        if (s->part_of[set[i]] == 1)
            halves[n0 + n1++] = set[i];
    if (st == RW_OK)
        st = bisect(s, halves, n0, cap, h, first, label);
    if (st == RW_OK)
        st = bisect(s, halves + n0, n1, cap + h, k - h, first + h, label);
    free(halves);
    return st;
}

/* Partition set into k parts of at most cap[p] ranks: the better cut of
 * the direct k-way partition and of recursive bisection (grids cut best
 * in halves), the latter refined by k-way swaps. */
static rw_status partition(split *s, const int32_t *set, int32_t ns, const int32_t *cap, int k)
{
    rw_status st = partition_direct(s, set, ns, cap, k);
    if (st != RW_OK || k <= 2)
        return st;
    int32_t *direct = malloc((size_t)ns * sizeof *direct), *label = malloc((size_t)s->g->n * sizeof *label);
    if (!direct || !label) {
        free(direct);
        free(label);
        return rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
    }
    for (int32_t i = 0; i < ns; i++)
        direct[i] = s->part_of[set[i]];
    st = bisect(s, set, ns, cap, k, 0, label);
    if (st == RW_OK) {
        double total = 0;
        for (int32_t i = 0; i < ns; i++)
            s->in_set[set[i]] = 1;
        for (int32_t i = 0; i < ns; i++)
            for (int64_t e = s->g->start[set[i]]; e < s->g->start[set[i] + 1]; e++)
                total += w_of(s, e);
        for (int32_t i = 0; i < ns; i++)
            s->part_of[set[i]] = direct[i];
        double cut_direct = cut_weight(s, set, ns);
        for (int32_t i = 0; i < ns; i++)
            s->part_of[set[i]] = label[set[i]];
        st = swap_refine(s, set, ns, cap, k, 1e-12 * total);
        if (st == RW_OK && cut_weight(s, set, ns) >= cut_direct)
            for (int32_t i = 0; i < ns; i++)
                s->part_of[set[i]] = direct[i];
        for (int32_t i = 0; i < ns; i++)
            s->in_set[set[i]] = 0;
    }
    free(direct);
    free(label);
    return st;
}

/* ---------------------------------------------------------------------
 * The descent through the node's tree
 * ------------------------------------------------------------------- */

/* The node's units: a domain within a package (a domain spanning packages
 * counts once per package), then the shared caches of a unit. */
static int32_t unit_key(const rw_node_topology *t, int32_t core)
{
    return t->package_of[core] * t->n_domains + t->domain_of[core];
}

static int32_t cache_key(const rw_node_topology *t, int32_t core)
{
    return t->cache_of[core] >= 0 ? t->cache_of[core] : -2 - core;
}

/* Groups of cores[0..nc) by key: k groups, gkey[g], cap[g] cores each, in
 * order of first core. -1 when more than RW_NODE_MAX_PARTS groups. */
static int group_cores(const rw_node_topology *t, int32_t (*key)(const rw_node_topology *, int32_t),
                       const int32_t *cores, int32_t nc, int32_t *gkey, int32_t *cap)
{
    int k = 0;
    for (int32_t i = 0; i < nc; i++) {
        int32_t kk = key(t, cores[i]);
        int g = 0;
        while (g < k && gkey[g] != kk)
            g++;
        if (g == k) {
            if (k == RW_NODE_MAX_PARTS)
                return -1;
            gkey[k] = kk;
            cap[k++] = 0;
        }
        cap[g]++;
    }
    return k;
}

/* Parts p were grown for units p; swap whole parts between units of the
 * same capacity while that lowers the weight between packages. */
static void assign_packages(split *s, const rw_node_topology *t, const int32_t *set, int32_t ns,
                            const int32_t *gkey, const int32_t *cap, int k, int32_t *unit_of_part)
{
    double *w = calloc((size_t)k * k, sizeof *w);
    int32_t count[RW_NODE_MAX_PARTS] = {0};
    if (!w)
        return; /* the parts keep their units: still a valid placement */
    s->level = RW_LEVEL_NODE;
    for (int32_t i = 0; i < ns; i++) {
        int32_t v = set[i];
        count[s->part_of[v]]++;
        for (int64_t e = s->g->start[v]; e < s->g->start[v + 1]; e++)
            if (s->in_set[s->g->peer[e]])
                w[(size_t)s->part_of[v] * k + s->part_of[s->g->peer[e]]] += w_of(s, e);
    }
    for (int pass = 0, changed = 1; changed && pass < 64; pass++) {
        changed = 0;
        for (int p = 0; p < k; p++)
            for (int q = p + 1; q < k; q++) {
                int up = unit_of_part[p], uq = unit_of_part[q];
                if (count[p] > cap[uq] || count[q] > cap[up])
                    continue;
                double d = 0;
                for (int r = 0; r < k; r++) {
                    if (r == p || r == q)
                        continue;
                    int32_t pr = gkey[unit_of_part[r]] / t->n_domains;
                    int32_t pp = gkey[up] / t->n_domains, pq = gkey[uq] / t->n_domains;
                    d += (w[(size_t)p * k + r] + w[(size_t)r * k + p]) * ((pq != pr) - (pp != pr));
                    d += (w[(size_t)q * k + r] + w[(size_t)r * k + q]) * ((pp != pr) - (pq != pr));
                }
                if (d < 0) {
                    unit_of_part[p] = uq;
                    unit_of_part[q] = up;
                    changed = 1;
                }
            }
    }
    free(w);
}

/* Place set[0..ns) on cores[0..nc) (ns <= nc), cores in logical order:
 * depth 0 splits the ranks among the units, depth 1 a unit's ranks among
 * its shared caches, depth 2 gives the cores in order. */
static rw_status descend(split *s, const rw_node_topology *t, int d, int32_t *set, int32_t ns,
                         const int32_t *cores, int32_t nc, int32_t *core_of)
{
    if (ns == 0)
        return RW_OK;
    if (d == 2) {
        for (int32_t i = 0; i < ns; i++)
            core_of[set[i]] = cores[i];
        return RW_OK;
    }
    int32_t gkey[RW_NODE_MAX_PARTS], cap[RW_NODE_MAX_PARTS] = {0}, unit_of_part[RW_NODE_MAX_PARTS];
    int k = group_cores(t, d == 0 ? unit_key : cache_key, cores, nc, gkey, cap);
    if (k == 1 || k < 0 || (d == 1 && k == nc)) /* one group, too many, or no cache shared */
        return descend(s, t, d + 1, set, ns, cores, nc, core_of);
    int32_t *gset = malloc((size_t)ns * sizeof *gset), *gcores = malloc((size_t)nc * sizeof *gcores);
    rw_status st = RW_OK;
    if (!gset || !gcores) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
        goto done;
    }
    s->level = d == 0 ? RW_LEVEL_PACKAGE : RW_LEVEL_DOMAIN;
    st = partition(s, set, ns, cap, k);
    for (int p = 0; p < k; p++)
        unit_of_part[p] = p;
    if (st == RW_OK && d == 0) {
        for (int32_t i = 0; i < ns; i++)
            s->in_set[set[i]] = 1;
        assign_packages(s, t, set, ns, gkey, cap, k, unit_of_part);
        for (int32_t i = 0; i < ns; i++)
            s->in_set[set[i]] = 0;
    }
    /* The parts in order, before the deeper splits reuse part_of. */
    int32_t m = 0, size[RW_NODE_MAX_PARTS];
    for (int p = 0; st == RW_OK && p < k; p++) {
        size[p] = 0;
        for (int32_t i = 0; i < ns; i++)
            if (s->part_of[set[i]] == p)
                gset[m + size[p]++] = set[i];
        m += size[p];
    }
    m = 0;
    for (int p = 0; st == RW_OK && p < k; p++) {
        int32_t mc = 0, g = unit_of_part[p];
        for (int32_t i = 0; i < nc; i++)
            if ((d == 0 ? unit_key : cache_key)(t, cores[i]) == gkey[g])
                gcores[mc++] = cores[i];
        st = descend(s, t, d + 1, gset + m, size[p], gcores, mc, core_of);
        m += size[p];
    }
done:
    free(gset);
    free(gcores);
    return st;
}

/* ---------------------------------------------------------------------
 * Whole-node refinement on the cost table
 * ------------------------------------------------------------------- */

/* Cost of rank v's edges were it on core `at` (the edge to `skip` left out). */
static double rank_cost(const graph *g, const rw_node_topology *t, const rw_node_costs *c,
                        const int32_t *core_of, int32_t v, int32_t at, int32_t skip)
{
    double sum = 0;
    for (int64_t e = g->start[v]; e < g->start[v + 1]; e++) {
        int32_t u = g->peer[e];
        if (u != skip)
            sum += edge_cost(c, rw_node_core_level(t, at, core_of[u]), g->msgs[e], g->bytes[e]);
    }
    return sum;
}

/* First-improvement swaps (and moves to free cores) over every core pair,
 * pass after pass, until a pass changes nothing. Skipped on nodes so large
 * that a pass would cost more than the rest of the mapping. */
static void refine_node(const graph *g, const rw_node_topology *t, const rw_node_costs *c,
                        int32_t *core_of, int32_t *holder, double eps)
{
    int32_t nc = t->n_cores;
    if ((double)nc * nc * (g->n ? (double)g->start[g->n] / g->n + 1 : 1) > 5e7)
        return;
    for (int pass = 0; pass < 32; pass++) {
        int changed = 0;
        for (int32_t a = 0; a < nc; a++)
            for (int32_t b = a + 1; b < nc; b++) {
                int32_t u = holder[a], v = holder[b];
                if (u < 0 && v < 0)
                    continue;
                double d = 0;
                if (u >= 0)
                    d += rank_cost(g, t, c, core_of, u, b, v) - rank_cost(g, t, c, core_of, u, a, v);
                if (v >= 0)
                    d += rank_cost(g, t, c, core_of, v, a, u) - rank_cost(g, t, c, core_of, v, b, u);
                if (d < -eps) {
                    holder[a] = v;
                    holder[b] = u;
                    if (u >= 0)
                        core_of[u] = b;
                    if (v >= 0)
                        core_of[v] = a;
                    changed = 1;
                }
            }
        if (!changed)
            return;
    }
}

static rw_status costs_or_default(const rw_node_costs *c, rw_node_costs *use)
{
    *use = c ? *c : rw_node_costs_default();
    return rw_node_costs_check(use);
}

rw_status rw_node_place(const rw_matrix *traffic, int32_t n, const int32_t *ranks,
                        const rw_node_topology *t, const rw_node_costs *c, int32_t *core_of)
{
    rw_node_costs cost;
    rw_status st = costs_or_default(c, &cost);
    if (st != RW_OK)
        return st;
    if (!t || (n > 0 && !core_of))
        return rw_fail(RW_ERR_ARG, "rw_node_place: no topology or no output");
    if (n > t->n_cores)
        return rw_fail(RW_ERR_ARG, "%d ranks on one node of %d cores (%s)", (int)n, (int)t->n_cores,
                       t->source);
    graph g;
    if ((st = graph_build(traffic, n, ranks, &g)) != RW_OK)
        return st;
    split s = {.g = &g, .c = &cost};
    int32_t *set = malloc(((size_t)n + 1) * sizeof *set), *cores = malloc((size_t)t->n_cores * sizeof *cores);
    int32_t *holder = malloc((size_t)t->n_cores * sizeof *holder);
    int32_t *local_core = malloc(((size_t)n + 1) * sizeof *local_core);
    s.part_of = malloc(((size_t)n + 1) * sizeof *s.part_of);
    s.in_set = calloc((size_t)n + 1, sizeof *s.in_set);
    s.conn_part = malloc(((size_t)n + 1) * sizeof *s.conn_part);
    s.conn_free = malloc(((size_t)n + 1) * sizeof *s.conn_free);
    s.pos = malloc(((size_t)n + 1) * sizeof *s.pos);
    if (!s.pos || !set || !cores || !holder || !local_core || !s.part_of || !s.in_set || !s.conn_part ||
        !s.conn_free) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory placing ranks on cores");
        goto done;
    }
    for (int32_t i = 0; i < n; i++)
        set[i] = i;
    for (int32_t i = 0; i < t->n_cores; i++)
        cores[i] = i;
    st = descend(&s, t, 0, set, n, cores, t->n_cores, local_core);
    if (st == RW_OK) {
        double total = 0;
        for (int64_t e = 0; e < g.start[n]; e++)
            total += edge_cost(&cost, RW_LEVEL_NODE, g.msgs[e], g.bytes[e]);
        for (int32_t i = 0; i < t->n_cores; i++)
            holder[i] = -1;
        for (int32_t i = 0; i < n; i++)
            holder[local_core[i]] = i;
        refine_node(&g, t, &cost, local_core, holder, 1e-12 * total);
        memcpy(core_of, local_core, (size_t)n * sizeof *core_of);
    }
done:
    free(set);
    free(cores);
    free(holder);
    free(local_core);
    free(s.part_of);
    free(s.in_set);
    free(s.conn_part);
    free(s.conn_free);
    free(s.pos);
    graph_free(&g);
    return st;
}

/* The cores of a placement: in range and distinct. */
static rw_status check_cores(const rw_node_topology *t, int32_t n, const int32_t *core_of)
{
    uint8_t *seen = calloc((size_t)t->n_cores, 1);
    if (!seen)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    rw_status st = RW_OK;
    for (int32_t i = 0; i < n && st == RW_OK; i++) {
        int32_t a = core_of[i];
        if (a < 0 || a >= t->n_cores)
            st = rw_fail(RW_ERR_ARG, "core %d is not a core of the node (%d cores)", (int)a,
                         (int)t->n_cores);
        else if (seen[a]++)
            st = rw_fail(RW_ERR_ARG, "core %d holds two ranks", (int)a);
    }
    free(seen);
    return st;
}

rw_status rw_node_place_cost(const rw_matrix *traffic, int32_t n, const int32_t *ranks,
                             const rw_node_topology *t, const rw_node_costs *c,
                             const int32_t *core_of, double *cost)
{
    rw_node_costs use;
    rw_status st = costs_or_default(c, &use);
    if (st != RW_OK || (st = check_cores(t, n, core_of)) != RW_OK)
        return st;
    graph g;
    if ((st = graph_build(traffic, n, ranks, &g)) != RW_OK)
        return st;
    double sum = 0;
    for (int32_t v = 0; v < n; v++)
        sum += rank_cost(&g, t, &use, core_of, v, core_of[v], -1);
    *cost = sum / 2;
    graph_free(&g);
    return RW_OK;
}

rw_status rw_node_domain_cut(const rw_matrix *traffic, int32_t n, const int32_t *ranks,
                             const rw_node_topology *t, const int32_t *core_of, int64_t *cut,
                             int64_t *total)
{
    rw_status st = check_cores(t, n, core_of);
    graph g;
    if (st != RW_OK || (st = graph_build(traffic, n, ranks, &g)) != RW_OK)
        return st;
    double c = 0, all = 0;
    for (int32_t v = 0; v < n; v++)
        for (int64_t e = g.start[v]; e < g.start[v + 1]; e++) {
            all += g.bytes[e];
            if (t->domain_of[core_of[v]] != t->domain_of[core_of[g.peer[e]]])
                c += g.bytes[e];
        }
    *cut = (int64_t)(c / 2);
    *total = (int64_t)(all / 2);
    graph_free(&g);
    return RW_OK;
}
