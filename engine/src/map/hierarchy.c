/* Groups of close nodes found from the measured costs alone (no rack
 * labels): single-linkage clustering read off a minimum spanning tree.
 * Prim's algorithm on the dense distance matrix is O(n^2) without sorting
 * the n^2 pairs or copying them (4,096 nodes: 16M distance evaluations,
 * no memory beyond O(n)). Sorted, the tree's n - 1 edge weights show the
 * hierarchy as jumps: inside a rack the spanning edges are 10-12 us,
 * between racks 30-40 us, whatever the noise within each band. Every jump
 * by more than GAP x defines a level (components of the lighter edges). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "rankwise_map.h"

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
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return (e->b > f->b) - (e->b < f->b);
}

static int32_t find(int32_t *parent, int32_t x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Minimum spanning tree (Prim from node 0, ties to the lowest index), its
 * n - 1 edges sorted by weight. scratch: n doubles, 2n int32. */
static void spanning_tree(const rw_network *net, double wa, double wb, edge *tree, double *best,
                          int32_t *from, int32_t *done)
{
    int32_t n = net->n_nodes;
    for (int32_t i = 0; i < n; i++) best[i] = DBL_MAX, from[i] = -1, done[i] = 0;
    best[0] = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t u = -1;
        for (int32_t i = 0; i < n; i++)
            if (!done[i] && (u < 0 || best[i] < best[u])) u = i;
        done[u] = 1;
        if (from[u] >= 0)
            tree[k - 1] = (edge){best[u], from[u] < u ? from[u] : u, from[u] < u ? u : from[u]};
        for (int32_t i = 0; i < n; i++)
            if (!done[i]) {
                double d = distance(net, wa, wb, u, i);
                if (d < best[i]) best[i] = d, from[i] = u;
            }
    }
    qsort(tree, (size_t)(n - 1), sizeof *tree, by_weight);
}

/* A jump after sorted edge k: the next edge is more than GAP x heavier. */
static int jump_after(const edge *tree, int32_t k)
{
    double lo = tree[k].w, hi = tree[k + 1].w;
    return hi > GAP * lo && hi > lo + 1e-15;
}

static int32_t count_jumps(const edge *tree, int32_t n)
{
    int32_t c = 0;
    for (int32_t k = 0; k + 1 < n - 1; k++) c += jump_after(tree, k);
    return c;
}

/* Stable counting sort of order[] by key[node] (keys in [0, n)). */
static void sort_by(int32_t n, const int32_t *key, int32_t *order, int32_t *count, int32_t *tmp)
{
    memset(count, 0, ((size_t)n + 1) * sizeof *count);
    for (int32_t k = 0; k < n; k++) count[key[order[k]] + 1]++;
    for (int32_t v = 0; v < n; v++) count[v + 1] += count[v];
    for (int32_t k = 0; k < n; k++) tmp[count[key[order[k]]]++] = order[k];
    memcpy(order, tmp, (size_t)n * sizeof *order);
}

/* Levels from the sorted tree: level 0 alone, a level per kept jump, the
 * last all together. Returns the number of levels. */
static int build_levels(int32_t n, const edge *tree, int32_t max_levels, int32_t *group_of,
                        int32_t *order, int32_t *cut_at, int32_t *parent, int32_t *rep, int32_t *tmp)
{
    /* Jumps, the weakest dropped while there are more than the levels
     * allow (levels 0 and the last are always there). */
    int32_t n_cuts = 0;
    for (int32_t k = 0; k + 1 < n - 1; k++)
        if (jump_after(tree, k)) cut_at[n_cuts++] = k; /* edges 0..k merge */
    while (n_cuts > max_levels - 2) {
        int32_t weakest = 0;
        double weakest_ratio = DBL_MAX;
        for (int32_t c = 0; c < n_cuts; c++) {
            int32_t k = cut_at[c];
            double ratio = tree[k + 1].w / (tree[k].w > 0 ? tree[k].w : 1e-300);
            if (ratio < weakest_ratio) weakest_ratio = ratio, weakest = c;
        }
        memmove(cut_at + weakest, cut_at + weakest + 1, (size_t)(n_cuts - weakest - 1) * sizeof *cut_at);
        n_cuts--;
    }
    int32_t levels = n_cuts + 2;
    /* Level l >= 1 merges the spanning edges up to its cut (all of them on
     * the last level); a group's representative is its smallest node. */
    for (int32_t i = 0; i < n; i++) parent[i] = i, rep[i] = i;
    int32_t merged = 0;
    for (int32_t l = 1; l < levels; l++) {
        int32_t upto = l < levels - 1 ? cut_at[l - 1] : n - 2;
        for (; merged <= upto; merged++) {
            int32_t a = find(parent, tree[merged].a), b = find(parent, tree[merged].b);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b; /* root = smallest */
        }
        for (int32_t i = 0; i < n; i++) rep[(size_t)l * n + i] = find(parent, i);
    }
    /* Order: by representative at each level, coarsest most significant
     * (stable sorts from the finest up), index order within: every group
     * of every level contiguous, and no preference = index order. */
    for (int32_t i = 0; i < n; i++) order[i] = i;
    for (int32_t l = 1; l < levels; l++) sort_by(n, rep + (size_t)l * n, order, parent, tmp);
    /* Groups numbered in order of appearance, per level. */
    for (int32_t l = 0; l < levels; l++) {
        int32_t next = 0, last_rep = -1;
        for (int32_t k = 0; k < n; k++) {
            int32_t i = order[k], r = rep[(size_t)l * n + i];
            if (r != last_rep) last_rep = r, next++; /* contiguous: a new representative, a new group */
            group_of[(size_t)l * n + i] = next - 1;
        }
    }
    return levels;
}

/* The time of a `bytes` message first; when it shows no groups (a uniform
 * bandwidth term can drown the racks' latency steps: 100 us of transfer
 * against 10 vs 35 us of latency), latency alone, then bandwidth alone;
 * no groups anywhere: the first answer (index order). */
int rw_network_hierarchy(const rw_network *net, double bytes, int32_t max_levels,
                         int32_t *group_of, int32_t *order)
{
    int32_t n = net ? net->n_nodes : 0;
    if (!net || !group_of || !order || max_levels < 1 || n < 1) {
        rw_fail(RW_ERR_ARG, "a hierarchy needs a network of at least one node and one level");
        return -1;
    }
    if (n == 1 || max_levels == 1) { /* one level: every node alone */
        for (int32_t i = 0; i < n; i++) order[i] = i, group_of[i] = i;
        return 1;
    }
    if (!(bytes >= 0)) bytes = 0;
    if (max_levels > n) max_levels = n; /* n - 2 jumps at most */
    edge *tree = malloc((size_t)(n - 1) * sizeof *tree), *first = malloc((size_t)(n - 1) * sizeof *first);
    double *best = malloc((size_t)n * sizeof *best);
    int32_t *from = malloc((size_t)n * sizeof *from), *done = malloc((size_t)n * sizeof *done);
    int32_t *cut_at = malloc((size_t)n * sizeof *cut_at);
    int32_t *parent = malloc(((size_t)n + 1) * sizeof *parent);
    int32_t *rep = malloc((size_t)max_levels * (size_t)n * sizeof *rep);
    if (!tree || !first || !best || !from || !done || !cut_at || !parent || !rep) {
        free(tree), free(first), free(best), free(from), free(done), free(cut_at), free(parent), free(rep);
        rw_fail(RW_ERR_NOMEM, "out of memory for the hierarchy of %d nodes", n);
        return -1;
    }
    const double tries[3][2] = {{1.0, bytes}, {1.0, 0.0}, {0.0, 1.0}};
    const edge *use = first;
    for (int t = 0; t < 3; t++) {
        if (t == 1 && bytes == 0) continue; /* the same as the first */
        edge *e = t == 0 ? first : tree;
        spanning_tree(net, tries[t][0], tries[t][1], e, best, from, done);
        if (count_jumps(e, n) > 0) {
            use = e;
            break;
        }
    }
    int levels = build_levels(n, use, max_levels, group_of, order, cut_at, parent, rep, from);
    free(tree), free(first), free(best), free(from), free(done), free(cut_at), free(parent), free(rep);
    return levels;
}
