/* The scalable method for large jobs. The nodes' hierarchy comes from the
 * measured numbers (rw_network_hierarchy); the symmetrised traffic graph is
 * then bisected recursively along that tree: a range of nodes (in hierarchy
 * order) is split at the group boundary of its coarsest level that best
 * halves its slots, and the ranks are split in the same proportion, so the
 * heaviest traffic stays inside racks, then inside nodes.
 *
 * Each bisection is the best of a few trials (more at the top, where a
 * poor cut deforms every piece below it), each a METIS bisection (or,
 * without METIS, breadth-first growing) followed by our own Fiduccia-
 * Mattheyses refinement at exact balance, whose long hill-climbing
 * flattens the bumps METIS leaves. 64^3 stencil on 4,096 nodes of 64
 * slots: METIS's own recursion cuts 0.270 of the edges, this 0.240-0.242
 * (the cube optimum is 0.238). Exact targets at every split make the
 * capacities exact by construction; the swap/move refinement against the
 * real objective runs last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms.h"

#ifdef RW_HAVE_METIS
#include <metis.h>
#endif

#define MAX_LEVELS 8
#define FM_LIMIT 1000 /* moves past the best before a pass gives up */
#define FM_PASSES 10
#define FM_SLACK 4 /* ranks a pass may drift from the target balance */
/* Seconds per graph entry per trial and level, measured (Release, one
 * core): 1.6M entries take about 0.12 s a level. Trials are planned from
 * it and the time limit, so the result does not depend on the clock. */
#define SECONDS_PER_ENTRY 7.8e-8

/* Symmetric traffic graph; edge weight = the traffic costed at the
 * network's mean off-node figures, scaled to integers whose total stays
 * below 2^30 (METIS sums weights in 32-bit integers). */
typedef struct graph {
    int32_t n;
    int64_t *start;
    int32_t *adj;
    int64_t *w;
} graph;

static void graph_free(graph *g)
{
    free(g->start), free(g->adj), free(g->w);
}

static rw_status build_graph(const rw_map_job *job, graph *g)
{
    const rw_network *net = job->net;
    size_t nn = (size_t)net->n_nodes;
    double ma = 0, mb = 0, pairs = 0;
    for (size_t a = 0; a < nn; a++)
        for (size_t b = 0; b < nn; b++)
            if (a != b || nn == 1) ma += net->alpha[a * nn + b], mb += net->beta[a * nn + b], pairs++;
    ma /= pairs, mb /= pairs;
    if (ma <= 0 && mb <= 0) ma = 1; /* free network: messages decide */
    rw_matrix *sym = NULL;
    rw_status st = rw_matrix_symmetrize(job->traffic, &sym);
    if (st) return st;
    memset(g, 0, sizeof *g);
    g->n = sym->n_ranks;
    size_t m = (size_t)(sym->nnz > 0 ? sym->nnz : 1);
    g->start = malloc(((size_t)g->n + 1) * sizeof *g->start);
    g->adj = malloc(m * sizeof *g->adj);
    g->w = malloc(m * sizeof *g->w);
    if (!g->start || !g->adj || !g->w) {
        graph_free(g), rw_matrix_free(sym);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the traffic graph of %d ranks", g->n);
    }
    double top = 0;
    for (int64_t k = 0; k < sym->nnz; k++) {
        double c = (double)sym->msgs[k] * ma + (double)sym->bytes[k] * mb;
        if (c > top) top = c;
    }
    double scale = (double)(1 << 20);
    if (scale * (double)sym->nnz > (double)(1 << 30)) scale = (double)(1 << 30) / (double)sym->nnz;
    for (int32_t i = 0; i <= g->n; i++) g->start[i] = sym->row_start[i];
    for (int64_t k = 0; k < sym->nnz; k++) {
        double c = (double)sym->msgs[k] * ma + (double)sym->bytes[k] * mb;
        g->adj[k] = sym->dst[k];
        g->w[k] = top > 0 ? 1 + (int64_t)llround(c / top * scale) : 1;
    }
    rw_matrix_free(sym);
    return RW_OK;
}

/* ---------------------------------------------------------------------
 * Addressable max-heap of local vertex ids by gain; ties to the lower id
 * (determinism). pos[] is shared by the two sides' heaps (a vertex is in
 * at most one), -1 when in none.
 * ------------------------------------------------------------------- */
typedef struct heap {
    int32_t *h, *pos;
    const int64_t *key;
    const uint32_t *tie; /* random: no drift along the rank order */
    int32_t len;
} heap;

static int heap_above(const heap *q, int32_t x, int32_t y)
{
    if (q->key[x] != q->key[y]) return q->key[x] > q->key[y];
    return q->tie[x] != q->tie[y] ? q->tie[x] < q->tie[y] : x < y;
}

static void heap_place(heap *q, int32_t i, int32_t x)
{
    q->h[i] = x;
    q->pos[x] = i;
}

static void heap_up(heap *q, int32_t i)
{
    int32_t x = q->h[i];
    while (i > 0 && heap_above(q, x, q->h[(i - 1) / 2])) {
        heap_place(q, i, q->h[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_place(q, i, x);
}

static void heap_down(heap *q, int32_t i)
{
    int32_t x = q->h[i];
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= q->len) break;
        if (c + 1 < q->len && heap_above(q, q->h[c + 1], q->h[c])) c++;
        if (!heap_above(q, q->h[c], x)) break;
        heap_place(q, i, q->h[c]);
        i = c;
    }
    heap_place(q, i, x);
}

static void heap_push(heap *q, int32_t x)
{
    heap_place(q, q->len++, x);
    heap_up(q, q->len - 1);
}

static void heap_remove(heap *q, int32_t x)
{
    int32_t i = q->pos[x];
    q->pos[x] = -1;
    if (--q->len == i) return;
    int32_t y = q->h[q->len];
    heap_place(q, i, y);
    heap_up(q, i);
    heap_down(q, q->pos[y]);
}

static void heap_update(heap *q, int32_t x)
{
    heap_up(q, q->pos[x]);
    heap_down(q, q->pos[x]);
}

/* ---------------------------------------------------------------------
 * One piece of the graph (the ranks of a range of nodes) and the
 * workspace of its bisection, allocated once for the whole graph.
 * ------------------------------------------------------------------- */
typedef struct work {
    const graph *g;
    int32_t *loc;             /* global -> local id in the current piece, else -1 */
    int64_t *xs, *xw;         /* piece CSR (local ids) */
    int32_t *xa;
    char *side, *best, *locked; /* 0 = left, 1 = right */
    int64_t *gain;
    uint32_t *tie;
    int32_t *heap0, *heap1, *pos, *moved, *queue, *tmp;
#ifdef RW_HAVE_METIS
    idx_t *mx, *ma, *mw, *mwhere;
#endif
} work;

static void work_free(work *w)
{
    free(w->loc), free(w->xs), free(w->xw), free(w->xa), free(w->side), free(w->best);
    free(w->locked), free(w->gain), free(w->tie), free(w->heap0), free(w->heap1), free(w->pos);
    free(w->moved), free(w->queue), free(w->tmp);
#ifdef RW_HAVE_METIS
    free(w->mx), free(w->ma), free(w->mw), free(w->mwhere);
#endif
}

static rw_status work_init(work *w, const graph *g)
{
    memset(w, 0, sizeof *w);
    w->g = g;
    size_t n = (size_t)(g->n > 0 ? g->n : 1), m = (size_t)(g->start[g->n] > 0 ? g->start[g->n] : 1);
    w->loc = malloc(n * sizeof *w->loc);
    w->xs = malloc((n + 1) * sizeof *w->xs);
    w->xw = malloc(m * sizeof *w->xw);
    w->xa = malloc(m * sizeof *w->xa);
    w->side = malloc(n), w->best = malloc(n), w->locked = malloc(n);
    w->gain = malloc(n * sizeof *w->gain);
    w->tie = malloc(n * sizeof *w->tie);
    w->heap0 = malloc(n * sizeof(int32_t)), w->heap1 = malloc(n * sizeof(int32_t));
    w->pos = malloc(n * sizeof(int32_t)), w->moved = malloc(n * sizeof(int32_t));
    w->queue = malloc(n * sizeof(int32_t)), w->tmp = malloc(n * sizeof(int32_t));
    int ok = w->loc && w->xs && w->xw && w->xa && w->side && w->best && w->locked && w->gain && w->tie &&
             w->heap0 && w->heap1 && w->pos && w->moved && w->queue && w->tmp;
#ifdef RW_HAVE_METIS
    w->mx = malloc((n + 1) * sizeof *w->mx);
    w->ma = malloc(m * sizeof *w->ma), w->mw = malloc(m * sizeof *w->mw);
    w->mwhere = malloc(n * sizeof *w->mwhere);
    ok = ok && w->mx && w->ma && w->mw && w->mwhere;
#endif
    if (!ok) {
        work_free(w);
        return rw_fail(RW_ERR_NOMEM, "out of memory for partitioning %d ranks", g->n);
    }
    for (int32_t i = 0; i < g->n; i++) w->loc[i] = -1;
    return RW_OK;
}

/* The subgraph induced by vs[0..nv) in local ids; returns its entries. */
static int64_t extract(work *w, const int32_t *vs, int32_t nv)
{
    const graph *g = w->g;
    for (int32_t i = 0; i < nv; i++) w->loc[vs[i]] = i;
    int64_t m = 0;
    for (int32_t i = 0; i < nv; i++) {
        w->xs[i] = m;
        for (int64_t e = g->start[vs[i]]; e < g->start[vs[i] + 1]; e++) {
            int32_t u = w->loc[g->adj[e]];
            if (u >= 0) w->xa[m] = u, w->xw[m] = g->w[e], m++;
        }
    }
    w->xs[nv] = m;
    for (int32_t i = 0; i < nv; i++) w->loc[vs[i]] = -1;
    return m;
}

static int64_t cut_of(const work *w, int32_t nv)
{
    int64_t c = 0;
    for (int32_t i = 0; i < nv; i++)
        for (int64_t e = w->xs[i]; e < w->xs[i + 1]; e++)
            if (w->side[w->xa[e]] != w->side[i]) c += w->xw[e];
    return c / 2;
}

/* Gain of moving local vertex i to the other side. */
static int64_t gain_of(const work *w, int32_t i)
{
    int64_t gsum = 0;
    for (int64_t e = w->xs[i]; e < w->xs[i + 1]; e++)
        gsum += w->side[w->xa[e]] == w->side[i] ? -w->xw[e] : w->xw[e];
    return gsum;
}

/* Exactly ta vertices on the left: the surplus side gives up the vertices
 * that lose least, one at a time. */
static void balance(work *w, int32_t nv, int32_t ta)
{
    int32_t left = 0;
    for (int32_t i = 0; i < nv; i++) left += w->side[i] == 0;
    if (left == ta) return;
    char from = left > ta ? 0 : 1;
    int32_t need = left > ta ? left - ta : ta - left;
    heap q = {w->heap0, w->pos, w->gain, w->tie, 0};
    for (int32_t i = 0; i < nv; i++) {
        w->pos[i] = -1;
        if (w->side[i] != from) continue;
        w->gain[i] = gain_of(w, i);
        heap_push(&q, i);
    }
    while (need-- > 0 && q.len > 0) {
        int32_t x = q.h[0];
        heap_remove(&q, x);
        w->side[x] = (char)(1 - from);
        for (int64_t e = w->xs[x]; e < w->xs[x + 1]; e++) {
            int32_t y = w->xa[e];
            if (w->pos[y] < 0) continue;
            w->gain[y] += 2 * w->xw[e];
            heap_update(&q, y);
        }
    }
}

/* Fiduccia-Mattheyses at exact balance: each pass moves every boundary
 * vertex at most once, best gain first, drifting at most FM_SLACK from the
 * balance, and keeps the best balanced prefix; hill-climbing through
 * FM_LIMIT worse moves flattens the bumps METIS leaves. */
static void fm(work *w, int32_t nv)
{
    for (int pass = 0; pass < FM_PASSES; pass++) {
        heap q[2] = {{w->heap0, w->pos, w->gain, w->tie, 0}, {w->heap1, w->pos, w->gain, w->tie, 0}};
        for (int32_t i = 0; i < nv; i++) {
            w->locked[i] = 0;
            w->pos[i] = -1;
            int64_t ext = 0, in = 0;
            for (int64_t e = w->xs[i]; e < w->xs[i + 1]; e++)
                *(w->side[w->xa[e]] != w->side[i] ? &ext : &in) += w->xw[e];
            w->gain[i] = ext - in;
            if (ext > 0) heap_push(&q[(int)w->side[i]], i); /* weights >= 1: on the boundary */
        }
        int32_t drift = 0, n_moved = 0, best_moved = 0, since = 0;
        int64_t sum = 0, best = 0;
        while (q[0].len + q[1].len > 0) {
            int s; /* the side a vertex leaves */
            if (drift >= FM_SLACK)
                s = 0;
            else if (drift <= -FM_SLACK)
                s = 1;
            else if (!q[0].len || !q[1].len)
                s = !q[0].len;
            else {
                int64_t g0 = w->gain[q[0].h[0]], g1 = w->gain[q[1].h[0]];
                s = g0 != g1 ? g0 < g1 : drift < 0;
            }
            if (!q[s].len) break; /* the only side allowed to move has nothing left */
            int32_t x = q[s].h[0];
            heap_remove(&q[s], x);
            w->locked[x] = 1;
            sum += w->gain[x];
            w->side[x] = (char)(1 - s);
            drift += s == 0 ? -1 : 1;
            w->moved[n_moved++] = x;
            for (int64_t e = w->xs[x]; e < w->xs[x + 1]; e++) {
                int32_t y = w->xa[e];
                if (w->locked[y]) continue;
                w->gain[y] += w->side[y] == s ? 2 * w->xw[e] : -2 * w->xw[e];
                if (w->pos[y] >= 0)
                    heap_update(&q[(int)w->side[y]], y);
                else
                    heap_push(&q[(int)w->side[y]], y);
            }
            if (drift == 0 && sum > best)
                best = sum, best_moved = n_moved, since = 0;
            else if (++since > FM_LIMIT)
                break;
        }
        for (int32_t k = n_moved - 1; k >= best_moved; k--) w->side[w->moved[k]] ^= 1;
        if (best <= 0) break;
    }
}

/* Breadth-first growing from a pseudo-peripheral vertex (the last one a
 * search from `start` reaches): the first ta vertices reached go left. */
static void grow(work *w, int32_t nv, int32_t ta, int32_t start)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t i = 0; i < nv; i++) w->side[i] = 2; /* unseen */
        int32_t head = 0, tail = 0, next = 0;
        w->queue[tail++] = start, w->side[start] = 1;
        while (head < nv) {
            if (head == tail) { /* another component */
                while (w->side[next] != 2) next++;
                w->queue[tail++] = next, w->side[next] = 1;
            }
            int32_t x = w->queue[head++];
            for (int64_t e = w->xs[x]; e < w->xs[x + 1]; e++)
                if (w->side[w->xa[e]] == 2) w->side[w->xa[e]] = 1, w->queue[tail++] = w->xa[e];
        }
        start = w->queue[nv - 1];
    }
    for (int32_t k = 0; k < nv; k++) w->side[w->queue[k]] = k < ta ? 0 : 1;
}

#ifdef RW_HAVE_METIS
/* METIS's bisection with the target proportions; 0 when it failed. */
static int metis_bisect(work *w, int32_t nv, int32_t ta, uint64_t seed)
{
    int64_t m = w->xs[nv];
    if (m > (int64_t)INT32_MAX) return 0;
    for (int32_t i = 0; i <= nv; i++) w->mx[i] = (idx_t)w->xs[i];
    for (int64_t e = 0; e < m; e++) w->ma[e] = (idx_t)w->xa[e], w->mw[e] = (idx_t)w->xw[e];
    idx_t n = nv, ncon = 1, parts = 2, objval = 0, options[METIS_NOPTIONS];
    real_t tpw[2] = {(real_t)((double)ta / nv), 0};
    tpw[1] = 1 - tpw[0];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)(seed & 0x7fffffff);
    options[METIS_OPTION_UFACTOR] = 1; /* 0.1 %; balance() makes it exact */
    if (METIS_PartGraphRecursive(&n, &ncon, w->mx, w->ma, NULL, NULL, w->mw, &parts, tpw, NULL,
                                 options, &objval, w->mwhere) != METIS_OK)
        return 0;
    for (int32_t i = 0; i < nv; i++) w->side[i] = (char)(w->mwhere[i] != 0);
    return 1;
}
#endif

/* ---------------------------------------------------------------------
 * Recursive bisection along the hierarchy.
 * ------------------------------------------------------------------- */
typedef struct plan {
    work *w;
    const int32_t *part_node; /* part k = node part_node[k], hierarchy order */
    const int64_t *cap;       /* cap[k] = slots of parts 0..k-1 */
    const int32_t *groups;    /* rw_network_hierarchy's group_of */
    int32_t levels, n_nodes;
    uint64_t seed;
    int32_t trials[64]; /* per recursion depth */
    double rushed;      /* past this clock time, one trial per bisection */
    int32_t *part;      /* rank -> part */
} plan;

static int32_t group_at(const plan *p, int32_t level, int32_t k)
{
    return p->groups[(size_t)level * (size_t)p->n_nodes + (size_t)p->part_node[k]];
}

/* Where to split the parts [p0, p1): at a boundary between the groups of
 * the coarsest level that divides them, nearest to half their slots. */
static int32_t split_point(const plan *p, int32_t p0, int32_t p1)
{
    int32_t level = 0;
    for (int32_t l = p->levels - 1; l > 0; l--)
        if (group_at(p, l, p0) != group_at(p, l, p1 - 1)) {
            level = l;
            break;
        }
    int64_t total = p->cap[p1] - p->cap[p0], best_dev = -1;
    int32_t best = p0 + 1;
    for (int32_t k = p0 + 1; k < p1; k++) {
        if (level > 0 && group_at(p, level, k - 1) == group_at(p, level, k)) continue;
        int64_t dev = llabs(2 * (p->cap[k] - p->cap[p0]) - total);
        if (best_dev < 0 || dev < best_dev) best_dev = dev, best = k;
    }
    return best;
}

/* Split the nv ranks vs[] (global ids) into ta left, the rest right:
 * w->best receives the sides, by index in vs. */
static void bisect(plan *p, const int32_t *vs, int32_t nv, int32_t ta, int depth)
{
    work *w = p->w;
    int64_t best_cut = -1;
    if (extract(w, vs, nv) == 0) { /* no traffic inside: any split is as good */
        for (int32_t i = 0; i < nv; i++) w->best[i] = i < ta ? 0 : 1;
        return;
    }
    int32_t trials = p->trials[depth < 63 ? depth : 63];
    for (int32_t t = 0; t < trials; t++) {
        if (t > 0 && rw_now() > p->rushed) break;
        uint64_t seed = p->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)depth * 7919 + (uint64_t)t * 104729;
        rw_rng g;
        rw_rng_seed(&g, seed);
        for (int32_t i = 0; i < nv; i++) w->tie[i] = (uint32_t)rw_rng_next(&g);
        int done = 0;
#ifdef RW_HAVE_METIS
        done = metis_bisect(w, nv, ta, seed);
#endif
        if (!done) grow(w, nv, ta, (int32_t)((uint64_t)t * 2654435761ULL % (uint64_t)nv));
        balance(w, nv, ta);
        fm(w, nv);
        int64_t c = cut_of(w, nv);
        if (best_cut < 0 || c < best_cut) {
            best_cut = c;
            memcpy(w->best, w->side, (size_t)nv);
        }
    }
}

static void split(plan *p, int32_t *vs, int32_t nv, int32_t p0, int32_t p1, int depth)
{
    while (nv > 0 && p1 - p0 > 1) {
        int32_t k = split_point(p, p0, p1);
        int64_t cap_left = p->cap[k] - p->cap[p0], cap_right = p->cap[p1] - p->cap[k];
        /* ranks in proportion to the slots, within what each side holds */
        int64_t ta = llround((double)nv * (double)cap_left / (double)(cap_left + cap_right));
        if (ta > cap_left) ta = cap_left;
        if (nv - ta > cap_right) ta = nv - cap_right;
        if (ta == 0) {
            p0 = k;
            continue;
        }
        if (ta == nv) {
            p1 = k;
            continue;
        }
        bisect(p, vs, nv, (int32_t)ta, depth);
        /* stable: the pieces keep the (random) order of vs */
        int32_t *tmp = p->w->tmp, left = 0, right = (int32_t)ta;
        for (int32_t i = 0; i < nv; i++) tmp[p->w->best[i] ? right++ : left++] = vs[i];
        memcpy(vs, tmp, (size_t)nv * sizeof *vs);
        split(p, vs, (int32_t)ta, p0, k, depth + 1);
        vs += ta, nv -= (int32_t)ta, p0 = k, depth++; /* the right side, without recursion */
    }
    for (int32_t i = 0; i < nv; i++) p->part[vs[i]] = p0;
}

/* Trials per depth: many at the top, where a poor cut deforms every piece
 * below, fewer further down, all scaled to fit 60 % of the time limit. The
 * plan comes from the graph's size, not the clock, so the result is the
 * same on every run unless the machine is far slower than planned. */
static void plan_trials(plan *p, int64_t entries, int32_t parts, double limit)
{
    int32_t depths = 1;
    while (depths < 62 && ((int64_t)1 << depths) < parts) depths++;
    int32_t base[64];
    double sum = 0;
    for (int32_t d = 0; d < 64; d++) {
        base[d] = d < 3 ? 8 : d < 6 ? 4 : d < 9 ? 2 : 1;
        if (d < depths) sum += base[d];
    }
    double per = (double)(entries > 0 ? entries : 1) * SECONDS_PER_ENTRY;
    double budget = 0.6 * limit, factor = per * sum > budget ? budget / (per * sum) : 1.0;
    for (int32_t d = 0; d < 64; d++) {
        int32_t t = (int32_t)floor(base[d] * factor);
        p->trials[d] = t < 1 ? 1 : t;
    }
}

rw_status rw_alg_multilevel(const rw_map_job *job, int32_t *node_of)
{
    const rw_network *net = job->net;
    int32_t n = job->traffic->n_ranks, nn = net->n_nodes;
    if (n == 0) return RW_OK;
    int32_t *groups = malloc((size_t)MAX_LEVELS * (size_t)nn * sizeof *groups);
    int32_t *order = malloc((size_t)nn * sizeof *order);
    int32_t *part_node = malloc((size_t)nn * sizeof *part_node);
    int64_t *cap = malloc(((size_t)nn + 1) * sizeof *cap);
    int32_t *part = malloc((size_t)n * sizeof *part);
    int32_t *vs = malloc((size_t)n * sizeof *vs);
    graph g = {0};
    work w = {0};
    int have_work = 0;
    rw_status st = RW_OK;
    if (!groups || !order || !part_node || !cap || !part || !vs) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for multilevel mapping of %d ranks", n);
        goto done;
    }
    int64_t msgs = rw_matrix_total_msgs(job->traffic), bytes = rw_matrix_total_bytes(job->traffic);
    double mean = msgs > 0 ? (double)bytes / (double)msgs : 0;
    int levels = rw_network_hierarchy(net, mean, MAX_LEVELS, groups, order);
    if (levels < 0) {
        st = RW_ERR_NOMEM; /* its only failure on a valid network; message set */
        goto done;
    }
    /* Parts = nodes with slots, in hierarchy order. */
    int32_t parts = 0;
    cap[0] = 0;
    for (int32_t i = 0; i < nn; i++)
        if (net->slots[order[i]] > 0) {
            part_node[parts] = order[i];
            cap[parts + 1] = cap[parts] + net->slots[order[i]];
            parts++;
        }
    if (cap[parts] < n) {
        st = rw_fail(RW_ERR_ARG, "the nodes have %lld slots for %d ranks", (long long)cap[parts], n);
        goto done;
    }
    if ((st = build_graph(job, &g))) goto done;
    if ((st = work_init(&w, &g))) goto done;
    have_work = 1;

    double limit = job->opt->time_limit > 0 ? job->opt->time_limit : 10.0;
    plan p = {&w, part_node, cap, groups, levels, nn, job->opt->seed, {0}, 0, part};
    plan_trials(&p, g.start[g.n], parts, limit);
    p.rushed = job->deadline - 0.2 * limit; /* a machine far slower than planned */
    /* Ranks in a random order: METIS and the refinement break ties by
     * index, and rank order (a grid's rows) would tilt every cut into a
     * staircase (64^3 stencil in rank order: 0.26 cut instead of 0.25). */
    rw_rng rng;
    rw_rng_seed(&rng, job->opt->seed ^ 0x6d6c6576656cULL);
    for (int32_t r = 0; r < n; r++) vs[r] = r;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)rw_rng_below(&rng, (uint32_t)(i + 1)), t = vs[i];
        vs[i] = vs[j], vs[j] = t;
    }
    split(&p, vs, n, 0, parts, 0);
    for (int32_t r = 0; r < n; r++) node_of[r] = part_node[part[r]];
    if ((st = rw_mapctx_check(net, n, node_of))) goto done;
    if (rw_refine(job, node_of, 1) < 0) st = RW_ERR_NOMEM;
done:
    if (have_work) work_free(&w);
    graph_free(&g);
    free(groups), free(order), free(part_node), free(cap), free(part), free(vs);
    return st;
}
