/* Stencil blocks (Cui et al. 2020, fig. 10). A node takes a box of the process
 * grid shaped to cut the fewest stencil edges (64 slots on a 64^3 grid:
 * 4x4x4), and the grid of boxes is cut by recursive bisection along the
 * network's hierarchy of close nodes: the nodes of a rack, contiguous in the
 * hierarchy order, receive a compact sub-block of the grid, the two halves
 * of it the two halves of the rack, and so on (2x2x2 blocks of boxes, then
 * 4x4x4, ... on a uniform network). When no box tiles the grid on the
 * allocation's slots, the ranks themselves are bisected onto the nodes,
 * each node filled to its capacity. Inside a node, cores take cube-shaped
 * groups of ranks in turn. Work is O(n log n) in ranks plus one hierarchy
 * of the nodes; every candidate is costed once and the cheapest kept. */
#include <stdlib.h>
#include <string.h>

#include "grid.h"

/* ---------------------------------------------------------------------
 * Recursive coordinate bisection of grid cells
 * ------------------------------------------------------------------- */

typedef struct bisect {
    int32_t dim[3];
    int fold[3];  /* coordinate laid out folded (torus) */
    int32_t *tmp; /* scratch, one per cell */
    int32_t *cnt; /* scratch, one per coordinate value */
} bisect;

static inline int32_t bcoord(const bisect *b, int32_t p, int d)
{
    int32_t c = rw_grid_coord(b->dim, p, d);
    return b->fold[d] ? rw_grid_fold(c, b->dim[d]) : c;
}

/* Dimensions of the cells' bounding box, longest first (ties: x first). */
static void dims_by_extent(const bisect *b, const int32_t *pt, int64_t len, int ord[3])
{
    int32_t lo[3] = {INT32_MAX, INT32_MAX, INT32_MAX}, hi[3] = {-1, -1, -1};
    for (int64_t i = 0; i < len; i++)
        for (int d = 0; d < 3; d++) {
            int32_t c = bcoord(b, pt[i], d);
            if (c < lo[d]) lo[d] = c;
            if (c > hi[d]) hi[d] = c;
        }
    ord[0] = 0, ord[1] = 1, ord[2] = 2;
    for (int i = 1; i < 3; i++) /* stable insertion sort, longest first */
        for (int j = i; j > 0 && hi[ord[j]] - lo[ord[j]] > hi[ord[j - 1]] - lo[ord[j - 1]]; j--) {
            int t = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = t;
        }
}

/* Reorder pt[0..len) so that its first k cells are the k smallest in the
 * lexicographic order of coordinates (ord[0], ord[1], ord[2]): a cut across
 * the longest extent, a partial plane (then row) finishing it. Counting
 * passes, O(len + extent) per coordinate, no sort. */
static void select_first(bisect *b, int32_t *pt, int64_t len, int64_t k, const int ord[3])
{
    for (int lev = 0; lev < 3 && k > 0 && k < len; lev++) {
        int d = ord[lev];
        int32_t lo = INT32_MAX, hi = -1;
        for (int64_t i = 0; i < len; i++) {
            int32_t c = bcoord(b, pt[i], d);
            if (c < lo) lo = c;
            if (c > hi) hi = c;
        }
        if (hi <= lo) continue; /* a plane already: decide on the next coordinate */
        int32_t *cnt = b->cnt;
        memset(cnt, 0, (size_t)(hi - lo + 1) * sizeof *cnt);
        for (int64_t i = 0; i < len; i++) cnt[bcoord(b, pt[i], d) - lo]++;
        int64_t below = 0;
        int32_t t = 0;
        while (below + cnt[t] < k) below += cnt[t++];
        int64_t eq = cnt[t], a = 0, m = below, z = below + eq;
        for (int64_t i = 0; i < len; i++) {
            int32_t c = bcoord(b, pt[i], d) - lo;
            b->tmp[c < t ? a++ : c == t ? m++ : z++] = pt[i];
        }
        memcpy(pt, b->tmp, (size_t)len * sizeof *pt);
        if (below + eq == k) return;
        pt += below, len = eq, k -= below; /* finish inside the plane c == t */
    }
}

/* Order cells so that runs of 2, 4, 8, ... are compact blocks: consecutive
 * cores get cube-shaped groups of ranks (a Morton order on powers of 2). */
static void bisect_order(bisect *b, int32_t *pt, int64_t len)
{
    if (len <= 1) return;
    int ord[3];
    dims_by_extent(b, pt, len, ord);
    int64_t k = len - len / 2;
    select_first(b, pt, len, k, ord);
    bisect_order(b, pt, k);
    bisect_order(b, pt + k, len - k);
}

/* The nodes in hierarchy order: cap[i] cells fit on positions [0, i);
 * blev[i] is the coarsest level whose groups part at the boundary before
 * position i (0: only the nodes themselves differ). */
typedef struct line {
    const int32_t *order;
    const int64_t *cap;
    const int32_t *blev;
} line;

/* Place cells pt[0..len) on positions [lo, hi): fill-first on the shortest
 * run of positions that holds them, split where the coarsest groups part
 * (closest to half the capacity), the cells split by bisection in the same
 * proportion. A leaf node orders its cells for its cores. */
static void place(bisect *b, const line *ln, int32_t *pt, int64_t len, int32_t lo, int32_t hi,
                  int32_t *owner, int32_t *pos)
{
    while (len > 0) {
        int64_t base = ln->cap[lo];
        int32_t a = lo + 1, z = hi; /* smallest end with room for len cells */
        while (a < z) {
            int32_t m = a + (z - a) / 2;
            if (ln->cap[m] - base >= len) z = m;
            else a = m + 1;
        }
        hi = a;
        if (hi - lo == 1) {
            bisect_order(b, pt, len);
            for (int64_t j = 0; j < len; j++) {
                owner[pt[j]] = ln->order[lo];
                pos[pt[j]] = (int32_t)j;
            }
            return;
        }
        int64_t whole = ln->cap[hi] - base, best_gap = -1;
        int32_t top = 0, split = lo + 1;
        for (int32_t i = lo + 1; i < hi; i++)
            if (ln->blev[i] > top) top = ln->blev[i];
        for (int32_t i = lo + 1; i < hi; i++) {
            if (ln->blev[i] != top) continue;
            int64_t gap = 2 * (ln->cap[i] - base) - whole;
            if (gap < 0) gap = -gap;
            if (best_gap < 0 || gap < best_gap) best_gap = gap, split = i;
        }
        int64_t left = ln->cap[split] - base; /* < len: the run is the shortest */
        if (left > 0) {
            int ord[3];
            dims_by_extent(b, pt, len, ord);
            select_first(b, pt, len, left, ord);
            place(b, ln, pt, left, lo, split, owner, pos);
        }
        pt += left, len -= left, lo = split; /* the right part, without recursion */
    }
}

/* ---------------------------------------------------------------------
 * The node order: hierarchy, then a shorter path inside its finest groups
 * ------------------------------------------------------------------- */

static double link_cost(const rw_network *net, int32_t a, int32_t b, double bytes)
{
    size_t p = (size_t)a * (size_t)net->n_nodes + (size_t)b;
    return net->alpha[p] + bytes * net->beta[p];
}

/* Inside a group of the finest level the hierarchy says nothing of order;
 * when the nodes still lie along something (a line of switches, a torus
 * dimension), a nearest-neighbour path through them, from the end away
 * from the next group (or nearest the previous one), keeps bisection
 * halves close. Taken only when shorter than the given order, links to the
 * neighbouring groups included, so equal costs keep it. O(g^2) per group
 * of g nodes, within a budget of 2^27 pairs in all. */
static rw_status chain_groups(const rw_network *net, double bytes, int levels,
                              const int32_t *group_of, int32_t *order)
{
    int32_t n = net->n_nodes;
    if (levels < 2 || n < 3) return RW_OK;
    int32_t *path = malloc((size_t)n * sizeof *path);
    char *taken = calloc((size_t)n, 1);
    if (!path || !taken) {
        free(path), free(taken);
        return rw_fail(RW_ERR_NOMEM, "out of memory ordering %d nodes", n);
    }
    const int32_t *g1 = group_of + n; /* level 1 */
    int64_t budget = (int64_t)1 << 27;
    for (int32_t s = 0, e; s < n; s = e) {
        for (e = s + 1; e < n && g1[order[e]] == g1[order[s]];) e++;
        int32_t g = e - s;
        if (g < 2 || (int64_t)g * g > budget) continue;
        budget -= (int64_t)g * g;
        int32_t prev = s > 0 ? order[s - 1] : -1, next = e < n ? order[e] : -1, start = s;
        int32_t from = prev >= 0 ? prev : next >= 0 ? next : order[s];
        double pick = 0;
        for (int32_t i = s; i < e; i++) { /* the node nearest prev, else the far end */
            double c = link_cost(net, from, order[i], bytes);
            if (i == s || (prev >= 0 ? c < pick : c > pick)) pick = c, start = i;
        }
        double old_len = 0, new_len = 0;
        for (int32_t i = s > 0 ? s : 1; i <= e && i < n; i++)
            old_len += link_cost(net, order[i - 1], order[i], bytes);
        path[0] = order[start];
        taken[start - s] = 1;
        if (prev >= 0) new_len += link_cost(net, prev, path[0], bytes);
        for (int32_t j = 1; j < g; j++) {
            int32_t at = -1;
            double best = 0;
            for (int32_t i = s; i < e; i++) {
                if (taken[i - s]) continue;
                double c = link_cost(net, path[j - 1], order[i], bytes);
                if (at < 0 || c < best) best = c, at = i;
            }
            taken[at - s] = 1;
            path[j] = order[at];
            new_len += best;
        }
        if (next >= 0) new_len += link_cost(net, path[g - 1], next, bytes);
        memset(taken, 0, (size_t)g);
        if (new_len < old_len * (1 - 1e-9)) memcpy(order + s, path, (size_t)g * sizeof *path);
    }
    free(path), free(taken);
    return RW_OK;
}

/* ---------------------------------------------------------------------
 * Box shapes
 * ------------------------------------------------------------------- */

/* Divisors of g in increasing order (an int32 has at most 1,600). */
static int divisors(int32_t g, int32_t *out)
{
    int k = 0, m = 0;
    int32_t big[1600];
    for (int32_t d = 1; (int64_t)d * d <= g; d++)
        if (g % d == 0) {
            out[k++] = d;
            if (d != g / d) big[m++] = g / d;
        }
    while (m > 0) out[k++] = big[--m];
    return k;
}

/* Traffic a box shape cuts: the planes between boxes along each dimension
 * (a periodic one also wraps), each plane n / dim[d] edges weighing
 * axis[d], the mean bytes an edge carries along that dimension: a 3-D
 * stencil exchanged axis by axis ("2-2-2") sends 9x more along the last
 * axis than along the first, and the box should follow. */
static double box_cut(const int32_t dim[3], const int32_t bx[3], int periodic, int64_t n,
                      const double axis[3])
{
    double cut = 0;
    for (int d = 0; d < 3; d++) {
        int64_t m = dim[d] / bx[d], planes = periodic ? (m > 1 ? m : 0) : m - 1;
        cut += (double)(planes * (n / dim[d])) * axis[d];
    }
    return cut;
}

/* Mean bytes (+1, so that bytes-less traffic still counts its edges) per
 * neighbour pair along each dimension; an edge or corner neighbour counts
 * on every dimension it steps along. Equal weights when nothing is seen. */
static void axis_weights(const rw_matrix *t, const int32_t dim[3], double axis[3])
{
    double w[3] = {0, 0, 0}, e[3] = {0, 0, 0};
    for (int32_t i = 0; i < t->n_ranks; i++) {
        int32_t ci[3] = {i % dim[0], (i / dim[0]) % dim[1], i / (dim[0] * dim[1])};
        for (int64_t k = t->row_start[i]; k < t->row_start[i + 1]; k++) {
            int32_t j = t->dst[k];
            int32_t cj[3] = {j % dim[0], (j / dim[0]) % dim[1], j / (dim[0] * dim[1])};
            for (int d = 0; d < 3; d++)
                if (ci[d] != cj[d]) w[d] += (double)t->bytes[k] + 1.0, e[d] += 1.0;
        }
    }
    for (int d = 0; d < 3; d++) axis[d] = e[d] > 0 ? w[d] / e[d] : 1.0;
}

typedef struct slot_count {
    int32_t value, count;
} slot_count;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The box dividing the grid that cuts the least traffic among those whose
 * n / volume boxes fit on the nodes (each node floor(slots / volume)
 * boxes); ties to the larger, then the more cubic box. Volume 1 only when
 * allow_unit. Returns 0 when none. */
static int choose_box(const int32_t dim[3], int64_t n, int periodic, const rw_network *net,
                      int allow_unit, const double axis[3], int32_t box[3])
{
    int32_t *sorted = malloc((size_t)net->n_nodes * sizeof *sorted);
    slot_count *sc = malloc((size_t)net->n_nodes * sizeof *sc);
    static const int max_div = 1600;
    int32_t *div = malloc(3 * (size_t)max_div * sizeof *div);
    int found = 0;
    if (!sorted || !sc || !div) goto done; /* the ranks' bisection remains */
    memcpy(sorted, net->slots, (size_t)net->n_nodes * sizeof *sorted);
    qsort(sorted, (size_t)net->n_nodes, sizeof *sorted, cmp_i32);
    int n_sc = 0;
    for (int32_t i = 0; i < net->n_nodes; i++) {
        if (n_sc > 0 && sc[n_sc - 1].value == sorted[i]) sc[n_sc - 1].count++;
        else sc[n_sc].value = sorted[i], sc[n_sc++].count = 1;
    }
    int64_t max_slots = sorted[net->n_nodes - 1];
    int nd[3];
    for (int d = 0; d < 3; d++) nd[d] = divisors(dim[d], div + d * max_div);
    double best_cut = 0;
    int64_t best_v = 0, best_sum = 0;
    for (int i = 0; i < nd[0]; i++)
        for (int j = 0; j < nd[1]; j++) {
            int64_t vxy = (int64_t)div[i] * div[max_div + j];
            if (vxy > max_slots) break;
            for (int k = 0; k < nd[2]; k++) {
                int32_t b[3] = {div[i], div[max_div + j], div[2 * max_div + k]};
                int64_t v = vxy * b[2];
                if (v > max_slots) break;
                if (v == 1 && !allow_unit) continue;
                int64_t fit = 0;
                for (int s = 0; s < n_sc; s++) fit += (int64_t)sc[s].count * (sc[s].value / v);
                if (fit < n / v) continue;
                double cut = box_cut(dim, b, periodic, n, axis);
                int64_t sum = (int64_t)b[0] + b[1] + b[2];
                int less = cut < best_cut * (1 - 1e-12), same = !less && cut <= best_cut * (1 + 1e-12);
                if (!found || less || (same && v > best_v) || (same && v == best_v && sum < best_sum)) {
                    found = 1, best_cut = cut, best_v = v, best_sum = sum;
                    memcpy(box, b, sizeof b);
                }
            }
        }
done:
    free(sorted), free(sc), free(div);
    return found;
}

/* ---------------------------------------------------------------------
 * The placement
 * ------------------------------------------------------------------- */

typedef struct gridjob {
    const rw_map_job *job;
    int32_t n, dim[3];
    int32_t n_nodes;
    int32_t *order, *blev; /* the nodes in hierarchy order */
    int64_t *cap;
    int32_t *pt, *owner, *pos, *tmp, *intra; /* bisection work, one per rank */
    int32_t *cnt;                            /* one per coordinate value */
} gridjob;

/* Bisect the cells of a grid (cell_dim) onto the nodes, each node taking
 * floor(slots / per_cell) cells. */
static void place_cells(gridjob *g, const int32_t cell_dim[3], const int fold[3], int64_t per_cell)
{
    const rw_network *net = g->job->net;
    int64_t cells = (int64_t)cell_dim[0] * cell_dim[1] * cell_dim[2];
    g->cap[0] = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        g->cap[i + 1] = g->cap[i] + net->slots[g->order[i]] / per_cell;
    bisect b = {{cell_dim[0], cell_dim[1], cell_dim[2]}, {fold[0], fold[1], fold[2]}, g->tmp, g->cnt};
    for (int64_t p = 0; p < cells; p++) g->pt[p] = (int32_t)p;
    line ln = {g->order, g->cap, g->blev};
    place(&b, &ln, g->pt, cells, 0, g->n_nodes, g->owner, g->pos);
}

/* The cores' order inside a box (g->intra), once for all boxes; uses pt. */
static void box_intra(gridjob *g, const int32_t box[3])
{
    int32_t v = box[0] * box[1] * box[2], *ipt = g->pt;
    bisect b = {{box[0], box[1], box[2]}, {0, 0, 0}, g->tmp, g->cnt};
    for (int32_t p = 0; p < v; p++) ipt[p] = p;
    bisect_order(&b, ipt, v);
    for (int32_t j = 0; j < v; j++) g->intra[ipt[j]] = j;
}

/* Candidate: node boxes of shape box, one per node, the box grid embedded
 * on the network's neighbour graph (embed.c). 1 made, 0 no embedding
 * found, -1 out of memory. */
static int embed_candidate(gridjob *g, const int32_t box[3], int periodic, int32_t *node_of,
                           int32_t *slot_of)
{
    const rw_network *net = g->job->net;
    int32_t bd[3], v = box[0] * box[1] * box[2];
    for (int d = 0; d < 3; d++) bd[d] = g->dim[d] / box[d];
    uint8_t *usable = malloc((size_t)net->n_nodes);
    if (!usable) return -1;
    for (int32_t i = 0; i < net->n_nodes; i++) usable[i] = net->slots[i] >= v;
    int found = rw_grid_embed(net, bd, periodic, usable, g->owner);
    free(usable);
    if (found != 1) return found;
    box_intra(g, box);
    for (int32_t r = 0; r < g->n; r++) {
        int32_t x = rw_grid_coord(g->dim, r, 0), y = rw_grid_coord(g->dim, r, 1),
                z = rw_grid_coord(g->dim, r, 2);
        int64_t bi = x / box[0] + (int64_t)bd[0] * (y / box[1] + (int64_t)bd[1] * (z / box[2]));
        node_of[r] = g->owner[bi];
        slot_of[r] = g->intra[x % box[0] + box[0] * (y % box[1] + box[1] * (z % box[2]))];
    }
    return 1;
}

/* Candidate: node boxes of shape box, the box grid folded where asked. */
static void box_candidate(gridjob *g, const int32_t box[3], const int fold[3], int32_t *node_of,
                          int32_t *slot_of)
{
    int32_t bd[3], v = box[0] * box[1] * box[2];
    for (int d = 0; d < 3; d++) bd[d] = g->dim[d] / box[d];
    place_cells(g, bd, fold, v);
    box_intra(g, box); /* the boxes' cells in pt are no longer needed */
    const int32_t *intra = g->intra;
    for (int32_t r = 0; r < g->n; r++) {
        int32_t x = rw_grid_coord(g->dim, r, 0), y = rw_grid_coord(g->dim, r, 1),
                z = rw_grid_coord(g->dim, r, 2);
        int64_t bi = x / box[0] + (int64_t)bd[0] * (y / box[1] + (int64_t)bd[1] * (z / box[2]));
        int32_t li = x % box[0] + box[0] * (y % box[1] + box[1] * (z % box[2]));
        node_of[r] = g->owner[bi];
        slot_of[r] = g->pos[bi] * v + intra[li];
    }
}

/* Candidate: the ranks themselves bisected onto the nodes' slots. */
static void rank_candidate(gridjob *g, int32_t *node_of, int32_t *slot_of)
{
    static const int flat[3] = {0, 0, 0};
    place_cells(g, g->dim, flat, 1);
    memcpy(node_of, g->owner, (size_t)g->n * sizeof *node_of);
    memcpy(slot_of, g->pos, (size_t)g->n * sizeof *slot_of);
}

/* Keep the candidate in (cn, cs) when strictly cheaper than the best so
 * far in (node_of, slot_of); *have says whether there is one yet. */
static rw_status keep_cheaper(const rw_map_job *job, int32_t n, const int32_t *cn,
                              const int32_t *cs, int32_t *node_of, int32_t *slot_of, double *best,
                              int *have)
{
    double c;
    rw_status st = rw_map_cost(job->traffic, job->net, job->opt->objective, cn, &c);
    if (st) return st;
    if (!*have || c < *best - 1e-12 * (c > 0 ? c : -c)) {
        memcpy(node_of, cn, (size_t)n * sizeof *cn);
        memcpy(slot_of, cs, (size_t)n * sizeof *cs);
        *best = c, *have = 1;
    }
    return RW_OK;
}

rw_status rw_grid_map(const rw_map_job *job, int32_t *node_of, int32_t *slot_of, int torus)
{
    const rw_network *net = job->net;
    gridjob g = {.job = job, .n = job->traffic->n_ranks, .n_nodes = net->n_nodes};
    rw_status st = rw_grid_dims(job->opt, g.n, g.dim);
    if (st) return st;
    if (rw_network_total_slots(net) < g.n)
        return rw_fail(RW_ERR_ARG, "the network has %lld slots for %d ranks",
                       (long long)rw_network_total_slots(net), g.n);
    int32_t n = g.n, nn = g.n_nodes, max_levels = 16;
    int32_t longest = g.dim[0] > g.dim[1] ? g.dim[0] : g.dim[1];
    if (g.dim[2] > longest) longest = g.dim[2];
    int32_t *group_of = malloc((size_t)nn * max_levels * sizeof *group_of);
    g.order = malloc((size_t)nn * sizeof *g.order);
    g.blev = calloc((size_t)nn, sizeof *g.blev);
    g.cap = malloc(((size_t)nn + 1) * sizeof *g.cap);
    g.pt = malloc((size_t)n * sizeof *g.pt);
    g.owner = malloc((size_t)n * sizeof *g.owner);
    g.pos = malloc((size_t)n * sizeof *g.pos);
    g.tmp = malloc((size_t)n * sizeof *g.tmp);
    g.intra = malloc((size_t)n * sizeof *g.intra);
    g.cnt = malloc(((size_t)longest + 1) * sizeof *g.cnt);
    int32_t *cn = malloc((size_t)n * sizeof *cn), *cs = malloc((size_t)n * sizeof *cs);
    int32_t *best_slot = malloc((size_t)n * sizeof *best_slot);
    if (!group_of || !g.order || !g.blev || !g.cap || !g.pt || !g.owner || !g.pos || !g.tmp ||
        !g.intra || !g.cnt || !cn || !cs || !best_slot) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for the grid mapping of %d ranks", n);
        goto done;
    }

    /* The nodes in hierarchy order, at the job's mean message size. */
    int64_t msgs = rw_matrix_total_msgs(job->traffic);
    double bytes = msgs > 0 ? (double)rw_matrix_total_bytes(job->traffic) / (double)msgs : 0;
    int levels = rw_network_hierarchy(net, bytes, max_levels, group_of, g.order);
    if (levels < 1) {
        char why[256];
        snprintf(why, sizeof why, "%s", rw_last_error());
        st = rw_fail(RW_ERR_STATE, "no hierarchy of the %d nodes: %s", nn, why);
        goto done;
    }
    { /* the order is used as indices: check it is a permutation */
        char *seen = calloc((size_t)nn, 1);
        if (!seen) {
            st = rw_fail(RW_ERR_NOMEM, "out of memory for the grid mapping of %d ranks", n);
            goto done;
        }
        int ok = 1;
        for (int32_t i = 0; ok && i < nn; i++) {
            int32_t v = g.order[i];
            ok = v >= 0 && v < nn && !seen[v];
            if (ok) seen[v] = 1;
        }
        free(seen);
        if (!ok) {
            st = rw_fail(RW_ERR_STATE, "the hierarchy of the %d nodes gave no node order", nn);
            goto done;
        }
    }
    if ((st = chain_groups(net, bytes, levels, group_of, g.order))) goto done;
    for (int32_t i = 1; i < nn; i++)
        for (int l = levels - 1; l >= 1; l--)
            if (group_of[(size_t)l * nn + g.order[i - 1]] != group_of[(size_t)l * nn + g.order[i]]) {
                g.blev[i] = l;
                break;
            }

    /* Candidates, in order of preference on equal cost. */
    double best = 0;
    int have = 0, periodic = job->opt->periodic != 0;
    int32_t box[3];
    static const int flat[3] = {0, 0, 0};
    double axis[3];
    axis_weights(job->traffic, g.dim, axis);
    if (choose_box(g.dim, n, periodic, net, torus, axis, box)) {
        int fold[3] = {0, 0, 0}, folds = 0;
        for (int d = 0; d < 3; d++) {
            fold[d] = torus && periodic && g.dim[d] / box[d] > 2;
            folds |= fold[d];
        }
        if (folds) {
            box_candidate(&g, box, fold, cn, cs);
            if ((st = keep_cheaper(job, n, cn, cs, node_of, best_slot, &best, &have))) goto done;
        }
        if (box[0] * box[1] * box[2] > 1) {
            box_candidate(&g, box, flat, cn, cs);
            if ((st = keep_cheaper(job, n, cn, cs, node_of, best_slot, &best, &have))) goto done;
        }
        /* A torus network has no hierarchy to cut along: the grid laid on
         * its neighbour graph instead (kept only when cheaper). */
        int made = torus ? embed_candidate(&g, box, periodic, cn, cs) : 0;
        if (made < 0) {
            st = rw_fail(RW_ERR_NOMEM, "out of memory for the grid mapping of %d ranks", n);
            goto done;
        }
        if (made && (st = keep_cheaper(job, n, cn, cs, node_of, best_slot, &best, &have))) goto done;
    }
    rank_candidate(&g, cn, cs);
    if ((st = keep_cheaper(job, n, cn, cs, node_of, best_slot, &best, &have))) goto done;
    if (slot_of) memcpy(slot_of, best_slot, (size_t)n * sizeof *slot_of);

done:
    free(group_of), free(g.order), free(g.blev), free(g.cap), free(g.pt), free(g.owner);
    free(g.pos), free(g.tmp), free(g.intra), free(g.cnt), free(cn), free(cs), free(best_slot);
    return st;
}

rw_status rw_alg_stencil(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    return rw_grid_map(job, node_of, slot_of, 0);
}
