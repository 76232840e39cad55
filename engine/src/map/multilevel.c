/* The scalable method for large jobs. The nodes' hierarchy comes from the
 * measured numbers (rw_network_hierarchy); the traffic graph is partitioned
 * into one part per node, parts numbered in the hierarchy's order so that
 * recursive bisection keeps neighbouring parts — and so heavy traffic — in
 * one group; exact slot capacities are then restored (a partitioner's
 * balance tolerance overfills nodes), and the swap/move refinement works
 * against the real objective on the boundary ranks.
 *
 * Partitioning is METIS's craft (recursive bisection; METIS_PartGraphRecursive,
 * which cut 3-D grids better than its k-way here: 0.267 vs 0.309 of the
 * edges of a 32^3 stencil on 64-rank nodes), used when the build found it;
 * without it a breadth-first graph growing fills the nodes in hierarchy
 * order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

#ifdef RW_HAVE_METIS
#include <metis.h>
#endif

/* The symmetric traffic graph, edge weights = traffic costed at the
 * network's mean figures, scaled into integers (at most 2^20 + 1). */
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
    double ma = 0, mb = 0;
    for (size_t p = 0; p < nn * nn; p++) ma += net->alpha[p], mb += net->beta[p];
    ma /= (double)(nn * nn), mb /= (double)(nn * nn);
    if (ma <= 0 && mb <= 0) ma = 1;
    rw_matrix *sym = NULL;
    rw_status st = rw_matrix_symmetrize(job->traffic, &sym);
    if (st) return st;
    memset(g, 0, sizeof *g);
    g->n = sym->n_ranks;
    size_t m = (size_t)(sym->nnz > 0 ? sym->nnz : 1);
    g->start = malloc(((size_t)g->n + 1) * sizeof *g->start);
    g->adj = malloc(m * sizeof *g->adj);
    g->w = malloc(m * sizeof *g->w);
    double *cost = malloc(m * sizeof *cost);
    if (!g->start || !g->adj || !g->w || !cost) {
        graph_free(g), free(cost), rw_matrix_free(sym);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the traffic graph");
    }
    double top = 0;
    for (int64_t k = 0; k < sym->nnz; k++) {
        cost[k] = (double)sym->msgs[k] * ma + (double)sym->bytes[k] * mb;
        if (cost[k] > top) top = cost[k];
    }
    /* METIS sums edge weights in 32-bit integers: keep the total below 2^30
     * (weights beyond that overflowed into nonsense partitions). */
    double scale = (double)(1 << 20);
    if (scale * (double)sym->nnz > (double)(1 << 30)) scale = (double)(1 << 30) / (double)sym->nnz;
    for (int32_t i = 0; i <= g->n; i++) g->start[i] = sym->row_start[i];
    for (int64_t k = 0; k < sym->nnz; k++) {
        g->adj[k] = sym->dst[k];
        g->w[k] = top > 0 ? 1 + (int64_t)llround(cost[k] / top * scale) : 1;
    }
    free(cost);
    rw_matrix_free(sym);
    return RW_OK;
}

/* Parts in hierarchy order: part k is node order[k]. Nodes without slots
 * take no part. */
static int32_t node_parts(const rw_network *net, const int32_t *order, int32_t *part_node)
{
    int32_t k = 0;
    for (int32_t i = 0; i < net->n_nodes; i++)
        if (net->slots[order[i]] > 0) part_node[k++] = order[i];
    return k;
}

#ifdef RW_HAVE_METIS
static rw_status partition_metis(const graph *g, const rw_network *net, const int32_t *part_node,
                                 int32_t parts, uint64_t seed, int32_t *part)
{
    idx_t nv = g->n, ncon = 1, np = parts, objval = 0;
    idx_t *xadj = malloc(((size_t)g->n + 1) * sizeof *xadj);
    idx_t *adj = malloc((size_t)(g->start[g->n] > 0 ? g->start[g->n] : 1) * sizeof *adj);
    idx_t *wgt = malloc((size_t)(g->start[g->n] > 0 ? g->start[g->n] : 1) * sizeof *wgt);
    idx_t *where = malloc((size_t)g->n * sizeof *where);
    real_t *tpw = malloc((size_t)parts * sizeof *tpw);
    if (!xadj || !adj || !wgt || !where || !tpw) {
        free(xadj), free(adj), free(wgt), free(where), free(tpw);
        return rw_fail(RW_ERR_NOMEM, "out of memory for METIS");
    }
    for (int32_t i = 0; i <= g->n; i++) xadj[i] = (idx_t)g->start[i];
    for (int64_t k = 0; k < g->start[g->n]; k++) adj[k] = g->adj[k], wgt[k] = (idx_t)g->w[k];
    double total = 0;
    for (int32_t k = 0; k < parts; k++) total += net->slots[part_node[k]];
    for (int32_t k = 0; k < parts; k++) tpw[k] = (real_t)(net->slots[part_node[k]] / total);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)(seed & 0x7fffffff);
    options[METIS_OPTION_UFACTOR] = 1; /* 0.1 %: as tight as METIS goes; repaired after */
    int rc = parts == 1 ? METIS_OK
                        : METIS_PartGraphRecursive(&nv, &ncon, xadj, adj, NULL, NULL, wgt, &np, tpw, NULL,
                                                   options, &objval, where);
    for (int32_t i = 0; i < g->n; i++) part[i] = parts == 1 ? 0 : (int32_t)where[i];
    free(xadj), free(adj), free(wgt), free(where), free(tpw);
    if (rc != METIS_OK) return rw_fail(RW_ERR_STATE, "METIS failed to partition the traffic (code %d)", rc);
    return RW_OK;
}
#endif

/* Breadth-first graph growing from rank 0's farthest rank, filling parts
 * in order to their capacities: valid, compact-ish, no library needed. */
static rw_status partition_grow(const graph *g, const rw_network *net, const int32_t *part_node,
                                int32_t parts, int32_t *part)
{
    int32_t *queue = malloc((size_t)g->n * sizeof *queue);
    char *seen = calloc((size_t)g->n, 1);
    if (!queue || !seen) {
        free(queue), free(seen);
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    }
    int32_t k = 0, room = parts ? net->slots[part_node[0]] : 0, head = 0, tail = 0;
    for (int32_t s = 0; s < g->n; s++) {
        if (seen[s]) continue;
        seen[s] = 1;
        queue[tail++] = s;
        while (head < tail) {
            int32_t r = queue[head++];
            while (room == 0 && k + 1 < parts) room = net->slots[part_node[++k]];
            part[r] = k;
            room--;
            for (int64_t e = g->start[r]; e < g->start[r + 1]; e++)
                if (!seen[g->adj[e]]) seen[g->adj[e]] = 1, queue[tail++] = g->adj[e];
        }
    }
    free(queue), free(seen);
    return RW_OK;
}

/* Exact capacities: ranks leave over-full parts for under-full ones,
 * each time the move that loses least (ties to its own part minus ties to
 * the target), preferring targets it already talks to. */
static void repair(const graph *g, const rw_network *net, const int32_t *part_node, int32_t parts,
                   int32_t *part)
{
    int32_t *load = calloc((size_t)parts, sizeof *load);
    int64_t *first = calloc((size_t)parts + 1, sizeof *first);
    int32_t *member = malloc((size_t)(g->n > 0 ? g->n : 1) * sizeof *member);
    if (!load || !first || !member) { /* the caller's rw_mapctx_check notices */
        free(load), free(first), free(member);
        return;
    }
    /* Members by part: only over-full parts are scanned, and they only lose
     * ranks (a part that receives is under-full and stays within bounds). */
    for (int32_t i = 0; i < g->n; i++) load[part[i]]++, first[part[i] + 1]++;
    for (int32_t p = 0; p < parts; p++) first[p + 1] += first[p];
    {
        int64_t *fill = malloc(((size_t)parts + 1) * sizeof *fill);
        if (!fill) {
            free(load), free(first), free(member);
            return;
        }
        memcpy(fill, first, ((size_t)parts + 1) * sizeof *fill);
        for (int32_t i = 0; i < g->n; i++) member[fill[part[i]]++] = i;
        free(fill);
    }
    for (int32_t p = 0; p < parts; p++) {
        while (load[p] > net->slots[part_node[p]]) {
            int32_t best_r = -1, best_t = -1;
            int64_t best_gain = INT64_MIN;
            for (int64_t m = first[p]; m < first[p + 1]; m++) {
                int32_t r = member[m];
                if (part[r] != p) continue;
                int64_t own = 0;
                for (int64_t e = g->start[r]; e < g->start[r + 1]; e++)
                    if (part[g->adj[e]] == p) own += g->w[e];
                /* Best under-full target among the neighbours' parts. */
                for (int64_t e = g->start[r]; e < g->start[r + 1]; e++) {
                    int32_t q = part[g->adj[e]];
                    if (q == p || load[q] >= net->slots[part_node[q]]) continue;
                    int64_t to = 0;
                    for (int64_t f = g->start[r]; f < g->start[r + 1]; f++)
                        if (part[g->adj[f]] == q) to += g->w[f];
                    if (to - own > best_gain) best_gain = to - own, best_r = r, best_t = q;
                }
                if (best_r < 0 && -own > best_gain) best_gain = -own, best_r = r, best_t = -1;
            }
            if (best_t < 0) { /* no neighbour part has room: the nearest part in order that has */
                for (int32_t d = 1; d < parts && best_t < 0; d++)
                    for (int s = -1; s <= 1 && best_t < 0; s += 2) {
                        int32_t q = p + s * d;
                        if (q >= 0 && q < parts && load[q] < net->slots[part_node[q]]) best_t = q;
                    }
            }
            if (best_r < 0 || best_t < 0) break;
            part[best_r] = best_t;
            load[p]--, load[best_t]++;
        }
    }
    free(load), free(first), free(member);
}

rw_status rw_alg_multilevel(const rw_map_job *job, int32_t *node_of)
{
    const rw_network *net = job->net;
    int32_t n = job->traffic->n_ranks, nn = net->n_nodes;
    int32_t *groups = malloc((size_t)8 * nn * sizeof *groups);
    int32_t *order = malloc((size_t)nn * sizeof *order);
    int32_t *part_node = malloc((size_t)nn * sizeof *part_node);
    int32_t *part = malloc((size_t)(n > 0 ? n : 1) * sizeof *part);
    graph g = {0};
    rw_status st = RW_OK;
    if (!groups || !order || !part_node || !part) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for multilevel mapping");
        goto done;
    }
    int64_t msgs = rw_matrix_total_msgs(job->traffic), bytes = rw_matrix_total_bytes(job->traffic);
    double mean = msgs > 0 ? (double)bytes / (double)msgs : 0;
    if (rw_network_hierarchy(net, mean, 8, groups, order) < 0) {
        st = RW_ERR_NOMEM;
        goto done;
    }
    int32_t parts = node_parts(net, order, part_node);
    if ((st = build_graph(job, &g))) goto done;
#ifdef RW_HAVE_METIS
    st = partition_metis(&g, net, part_node, parts, job->opt->seed, part);
#else
    st = partition_grow(&g, net, part_node, parts, part);
#endif
    if (st) goto done;
    (void)partition_grow; /* the fallback, also compiled with METIS */
    repair(&g, net, part_node, parts, part);
    for (int32_t r = 0; r < n; r++) node_of[r] = part_node[part[r]];
    if ((st = rw_mapctx_check(net, n, node_of))) {
        /* Repair could not fit (no room anywhere near): grow instead. */
        if ((st = partition_grow(&g, net, part_node, parts, part))) goto done;
        for (int32_t r = 0; r < n; r++) node_of[r] = part_node[part[r]];
    }
    if (rw_refine(job, node_of, 1) < 0) st = RW_ERR_NOMEM;
done:
    graph_free(&g);
    free(groups), free(order), free(part_node), free(part);
    return st;
}
