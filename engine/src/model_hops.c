/* A direct network's links in the model (a torus's, one per neighbour and
 * direction) and the routes flows take over them. Kept sorted by (from,
 * to), so a node's links are one run found by bisection. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The first hop whose (from, to) is not below (from, to). */
static int32_t lower_bound(const rw_model *m, int32_t from, int32_t to)
{
    int32_t lo = 0, hi = m->n_hops;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const rw_hop *h = &m->hops[mid];
        if (h->from < from || (h->from == from && h->to < to))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

rw_status rw_model_add_hop(rw_model *m, int32_t from, int32_t to, double capacity)
{
    if (!m)
        return rw_fail(RW_ERR_ARG, "rw_model_add_hop: no model");
    if (from < 0 || to < 0 || from >= m->n_nodes || to >= m->n_nodes)
        return rw_fail(RW_ERR_ARG, "hop %d %d: a node outside [0, %d)", (int)from, (int)to, m->n_nodes);
    if (from == to)
        return rw_fail(RW_ERR_ARG, "hop %d %d: a node with itself", (int)from, (int)to);
    const char *why = rw_bandwidth_problem(capacity, 0);
    if (why)
        return rw_fail(RW_ERR_ARG, "hop %d %d: %s", (int)from, (int)to, why);
    int32_t at = lower_bound(m, from, to);
    if (at < m->n_hops && m->hops[at].from == from && m->hops[at].to == to) {
        m->hops[at].capacity = capacity;
        return RW_OK;
    }
    if ((int64_t)m->n_hops >= (int64_t)m->n_nodes * RW_MODEL_MAX_HOPS)
        return rw_fail(RW_ERR_ARG, "more than %d hops a node", RW_MODEL_MAX_HOPS);
    rw_hop *grown = realloc(m->hops, ((size_t)m->n_hops + 1) * sizeof *grown);
    if (!grown)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a hop");
    m->hops = grown;
    memmove(&m->hops[at + 1], &m->hops[at], (size_t)(m->n_hops - at) * sizeof *grown);
    m->hops[at] = (rw_hop){.from = from, .to = to, .capacity = capacity};
    m->n_hops++;
    return RW_OK;
}

rw_status rw_model_hop_paths(const rw_model *m, int32_t *dist, double *routes)
{
    if (!m || !dist || !routes)
        return rw_fail(RW_ERR_ARG, "rw_model_hop_paths: no model or no output");
    int32_t n = m->n_nodes;
    int32_t *order = malloc((size_t)n * sizeof *order), *in_start = calloc((size_t)n + 1, sizeof *in_start);
    int32_t *in_hop = malloc(((size_t)m->n_hops + 1) * sizeof *in_hop);
    if (!order || !in_start || !in_hop) {
        free(order);
        free(in_start);
        free(in_hop);
        return rw_fail(RW_ERR_NOMEM, "out of memory for hop counts");
    }
    for (int32_t h = 0; h < m->n_hops; h++) /* the links into each node */
        in_start[m->hops[h].to + 1]++;
    for (int32_t v = 0; v < n; v++)
        in_start[v + 1] += in_start[v];
    for (int32_t h = 0; h < m->n_hops; h++)
        in_hop[in_start[m->hops[h].to]++] = h;
    for (int32_t v = n; v > 0; v--)
        in_start[v] = in_start[v - 1];
    in_start[0] = 0;
    for (int32_t j = 0; j < n; j++) {
        /* Breadth first toward j over the links into each node reached,
         * a node's shortest routes those of its next hops together. */
        for (int32_t u = 0; u < n; u++) {
            dist[(size_t)u * n + j] = -1;
            routes[(size_t)u * n + j] = 0.0;
        }
        dist[(size_t)j * n + j] = 0;
        routes[(size_t)j * n + j] = 1.0;
        order[0] = j;
        for (int32_t done = 0, reached = 1; done < reached; done++) {
            int32_t v = order[done];
            size_t vj = (size_t)v * n + j;
            for (int32_t k = in_start[v]; k < in_start[v + 1]; k++) {
                size_t uj = (size_t)m->hops[in_hop[k]].from * n + j;
                if (dist[uj] < 0) {
                    dist[uj] = dist[vj] + 1;
                    order[reached++] = m->hops[in_hop[k]].from;
                }
                if (dist[uj] == dist[vj] + 1)
                    routes[uj] += routes[vj];
            }
        }
    }
    free(order);
    free(in_start);
    free(in_hop);
    return RW_OK;
}

double rw_model_hop_share(const rw_model *m, const int32_t *dist, const double *routes, int32_t h, int32_t i,
                          int32_t j)
{
    if (!m || !dist || !routes || h < 0 || h >= m->n_hops)
        return 0.0;
    int32_t n = m->n_nodes;
    if (i < 0 || j < 0 || i >= n || j >= n || i == j)
        return 0.0;
    int32_t u = m->hops[h].from, v = m->hops[h].to;
    int32_t ij = dist[(size_t)i * n + j], iu = dist[(size_t)i * n + u], vj = dist[(size_t)v * n + j];
    if (ij < 0 || iu < 0 || vj < 0 || iu + 1 + vj != ij)
        return 0.0;
    return routes[(size_t)i * n + u] * routes[(size_t)v * n + j] / routes[(size_t)i * n + j];
}
