/* Random mapping instances for the engine's tests (seeded, reproducible). */
#ifndef RW_MAP_FIXTURES_H
#define RW_MAP_FIXTURES_H
#include <stdlib.h>

#include "rankwise.h"
#include "rankwise_map.h"

static uint64_t fx_state = 88172645463325252ULL;
static void fx_seed(uint64_t s) { fx_state = s * 2654435761ULL + 1; }
static uint64_t fx_next(void)
{
    fx_state ^= fx_state << 13;
    fx_state ^= fx_state >> 7;
    fx_state ^= fx_state << 17;
    return fx_state;
}
static int fx_below(int n) { return (int)(fx_next() % (uint64_t)n); }
static double fx_uniform(double lo, double hi) { return lo + (hi - lo) * (double)(fx_next() >> 11) * 0x1.0p-53; }

/* Directed traffic between n ranks: each ordered pair present with
 * probability density, random messages and bytes. */
static inline rw_matrix *fx_traffic(int n, double density)
{
    int64_t cap = (int64_t)n * n;
    int32_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
    int64_t *msgs = malloc(cap * sizeof *msgs), *bytes = malloc(cap * sizeof *bytes);
    int64_t k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && fx_uniform(0, 1) < density) {
                src[k] = i, dst[k] = j;
                msgs[k] = 1 + fx_below(20);
                bytes[k] = fx_below(4) == 0 ? 0 : (int64_t)fx_below(1 << 20);
                k++;
            }
    rw_matrix *m = NULL;
    rw_matrix_create(n, k, src, dst, msgs, bytes, &m);
    free(src), free(dst), free(msgs), free(bytes);
    return m;
}

/* n nodes with random slots in [lo, hi] and random asymmetric costs;
 * intra-node cheaper than any pair. */
static inline rw_network *fx_network(int n, int lo, int hi)
{
    int32_t *slots = malloc(n * sizeof *slots);
    for (int i = 0; i < n; i++) slots[i] = lo + fx_below(hi - lo + 1);
    rw_network *net = NULL;
    rw_network_create(n, slots, &net);
    free(slots);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            int same = a == b;
            net->alpha[a * n + b] = same ? 1e-7 : fx_uniform(1e-6, 5e-5);
            net->beta[a * n + b] = same ? 1e-11 : fx_uniform(1e-10, 2e-9);
        }
    return net;
}

/* A random valid placement (the network must have the slots). */
static inline void fx_placement(const rw_network *net, int n, int32_t *node_of)
{
    int32_t *load = calloc(net->n_nodes, sizeof *load);
    for (int r = 0; r < n; r++) {
        int v;
        do v = fx_below(net->n_nodes);
        while (load[v] >= net->slots[v]);
        load[v]++;
        node_of[r] = v;
    }
    free(load);
}

/* Every rank placed, no node over its slots, slots distinct and in range. */
static inline int fx_valid(const rw_network *net, int n, const int32_t *node_of, const int32_t *slot_of)
{
    int ok = 1;
    int64_t total = rw_network_total_slots(net);
    char *taken = calloc(total + 1, 1);
    int64_t *base = calloc(net->n_nodes + 1, sizeof *base);
    for (int v = 0; v < net->n_nodes; v++) base[v + 1] = base[v] + net->slots[v];
    for (int r = 0; r < n && ok; r++) {
        int v = node_of[r];
        if (v < 0 || v >= net->n_nodes) { ok = 0; break; }
        int s = slot_of ? slot_of[r] : 0;
        if (!slot_of) continue;
        if (s < 0 || s >= net->slots[v] || taken[base[v] + s]) ok = 0;
        else taken[base[v] + s] = 1;
    }
    int32_t *load = calloc(net->n_nodes, sizeof *load);
    for (int r = 0; r < n && ok; r++)
        if (++load[node_of[r]] > net->slots[node_of[r]]) ok = 0;
    free(taken), free(base), free(load);
    return ok;
}
#endif
