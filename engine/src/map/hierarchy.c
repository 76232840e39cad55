/* Groups of close nodes found from the measured costs alone (no rack
 * labels): single-linkage clustering read off a minimum spanning tree.
 * Prim's algorithm on the dense distance matrix is O(n^2) without sorting
 * the n^2 pairs (4,096 nodes: 16M distance evaluations). Sorted, the tree's
 * n - 1 edge weights show the hierarchy as jumps: inside a rack the
 * spanning edges are 10-12 us, between racks 30-40 us. Every jump by more
 * than GAP x defines a level (components of the lighter edges). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

#define GAP 1.5

/* wa x latency + wb x inverse bandwidth, both directions. */
static double distance(const rw_network *net, double wa, double wb, int32_t a, int32_t b)
{
    size_t n = (size_t)net->n_nodes, p = (size_t)a * n + b, q = (size_t)b * n + a;
    return wa * (net->alpha[p] + net->alpha[q]) + wb * (net->beta[p] + net->beta[q]);
}

typedef struct edge {
    double w;
    int32_t a, b;
} edge;

static int by_weight(const void *x, const void *y)
{
    const edge *e = x, *f = y;
    if (e->w != f->w) return e->w < f->w ? -1 : 1;
    if (e->a != f->a) return e->a - f->a;
    return e->b - f->b;
}

static int32_t find(int32_t *parent, int32_t x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* order: nodes sorted by their groups' smallest members, coarsest level
 * first, so every group of every level is contiguous. */
typedef struct sort_ctx {
    const int32_t *rep; /* levels x n: smallest node of each node's group */
    int32_t levels, n;
} sort_ctx;

static sort_ctx g_sort; /* qsort has no context argument in C11 */

static int by_groups(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    for (int32_t l = g_sort.levels - 1; l >= 1; l--) {
        int32_t ra = g_sort.rep[(size_t)l * g_sort.n + a], rb = g_sort.rep[(size_t)l * g_sort.n + b];
        if (ra != rb) return ra < rb ? -1 : 1;
    }
    return a < b ? -1 : a > b;
}

static int hierarchy(const rw_network *net, double wa, double wb, int32_t max_levels,
                     int32_t *group_of, int32_t *order);

/* The time of a `bytes` message first; when it shows no groups (a uniform
 * bandwidth term can drown the racks' latency steps: 100 us of transfer
 * against 10 vs 35 us of latency), latency alone, then bandwidth alone. */
int rw_network_hierarchy(const rw_network *net, double bytes, int32_t max_levels,
                         int32_t *group_of, int32_t *order)
{
    const double tries[3][2] = {{1.0, bytes}, {1.0, 0.0}, {0.0, 1.0}};
    int levels = -1;
    for (int t = 0; t < 3; t++) {
        if (t > 0 && tries[t][1] == tries[0][1] && tries[t][0] == tries[0][0]) continue;
        levels = hierarchy(net, tries[t][0], tries[t][1], max_levels, group_of, order);
        if (levels != 2) break; /* found groups, or an error, or nothing to group */
    }
    if (levels == 2) /* no groups anywhere: the first answer (index order) */
        levels = hierarchy(net, 1.0, bytes, max_levels, group_of, order);
    return levels;
}

static int hierarchy(const rw_network *net, double wa, double wb, int32_t max_levels,
                     int32_t *group_of, int32_t *order)
{
    int32_t n = net->n_nodes;
    if (max_levels < 1 || n < 1) {
        rw_fail(RW_ERR_ARG, "a hierarchy needs at least one level and one node");
        return -1;
    }
    if (n == 1 || max_levels == 1) {
        for (int32_t i = 0; i < n; i++) order[i] = i, group_of[i] = i;
        if (max_levels > 1 && n == 1) return 1;
        return 1;
    }
    edge *tree = malloc((size_t)(n - 1) * sizeof *tree);
    double *best = malloc((size_t)n * sizeof *best);
    int32_t *from = malloc((size_t)n * sizeof *from);
    char *in = calloc((size_t)n, 1);
    int32_t *parent = malloc((size_t)n * sizeof *parent);
    int32_t *rep = malloc((size_t)max_levels * n * sizeof *rep);
    double *cut_at = malloc((size_t)n * sizeof *cut_at);
    if (!tree || !best || !from || !in || !parent || !rep || !cut_at) {
        free(tree), free(best), free(from), free(in), free(parent), free(rep), free(cut_at);
        rw_fail(RW_ERR_NOMEM, "out of memory for the hierarchy of %d nodes", n);
        return -1;
    }
    /* Prim from node 0; ties go to the lowest index (deterministic). */
    for (int32_t i = 0; i < n; i++) best[i] = DBL_MAX, from[i] = -1;
    best[0] = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t u = -1;
        for (int32_t i = 0; i < n; i++)
            if (!in[i] && (u < 0 || best[i] < best[u])) u = i;
        in[u] = 1;
        if (from[u] >= 0) tree[k - 1] = (edge){best[u], from[u] < u ? from[u] : u, from[u] < u ? u : from[u]};
        for (int32_t i = 0; i < n; i++)
            if (!in[i]) {
                double d = distance(net, wa, wb, u, i);
                if (d < best[i]) best[i] = d, from[i] = u;
            }
    }
    qsort(tree, (size_t)(n - 1), sizeof *tree, by_weight);

    /* Jumps between consecutive spanning-edge weights, largest kept when
     * there are more than the levels allow (levels 0 and the last, all
     * nodes, are always there). */
    int32_t n_cuts = 0;
    for (int32_t k = 0; k + 1 < n - 1; k++) {
        double lo = tree[k].w, hi = tree[k + 1].w;
        if (hi > GAP * lo && hi > lo + 1e-15) cut_at[n_cuts++] = (double)k; /* edges 0..k merge */
    }
    while (n_cuts > max_levels - 2) { /* drop the smallest jump */
        int32_t worst = 0;
        double worst_ratio = DBL_MAX;
        for (int32_t c = 0; c < n_cuts; c++) {
            int32_t k = (int32_t)cut_at[c];
            double ratio = tree[k + 1].w / (tree[k].w > 0 ? tree[k].w : 1e-300);
            if (ratio < worst_ratio) worst_ratio = ratio, worst = c;
        }
        memmove(cut_at + worst, cut_at + worst + 1, (size_t)(n_cuts - worst - 1) * sizeof *cut_at);
        n_cuts--;
    }
    int32_t levels = n_cuts + 2;
    /* Level l >= 1 merges the spanning edges up to its cut (all of them
     * for the last level); a group's representative is its smallest node. */
    for (int32_t i = 0; i < n; i++) parent[i] = i, rep[i] = i;
    int32_t merged = 0;
    for (int32_t l = 1; l < levels; l++) {
        int32_t upto = l < levels - 1 ? (int32_t)cut_at[l - 1] : n - 2;
        for (; merged <= upto; merged++) {
            int32_t a = find(parent, tree[merged].a), b = find(parent, tree[merged].b);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b; /* root = smallest */
        }
        for (int32_t i = 0; i < n; i++) rep[(size_t)l * n + i] = find(parent, i);
    }
    for (int32_t i = 0; i < n; i++) order[i] = i;
    g_sort = (sort_ctx){rep, levels, n};
    qsort(order, (size_t)n, sizeof *order, by_groups);
    /* Groups numbered in order of appearance, per level. */
    for (int32_t l = 0; l < levels; l++) {
        int32_t next = 0, last_rep = -1;
        for (int32_t k = 0; k < n; k++) {
            int32_t i = order[k], r = rep[(size_t)l * n + i];
            if (r != last_rep) {
                /* contiguity makes a new representative a new group */
                last_rep = r;
                next++;
            }
            group_of[(size_t)l * n + i] = next - 1;
        }
    }
    free(tree), free(best), free(from), free(in), free(parent), free(rep), free(cut_at);
    return levels;
}
