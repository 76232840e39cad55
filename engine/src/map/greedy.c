/* Greedy construction (MPIPP / Getmansky et al. 2015, §2.2): the rank most attached to
 * the ranks already placed opens a node, the one where its traffic to
 * them costs least; that node is then filled with the ranks most tied to
 * it. Nodes come in the order the selection chose them, so a rank with no
 * placed partner opens the next closest node. */
#include <stdlib.h>

#include "algorithms.h"

typedef struct heap_item {
    double key;
    int32_t rank;
} heap_item;

typedef struct heap {
    heap_item *a;
    int64_t len, cap;
} heap;

static int heap_push(heap *h, double key, int32_t rank)
{
    if (h->len == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 1024;
        heap_item *a = realloc(h->a, (size_t)cap * sizeof *a);
        if (!a) return -1;
        h->a = a;
        h->cap = cap;
    }
    int64_t i = h->len++;
    /* Ties go to the lower rank so the order is reproducible. */
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (h->a[p].key > key || (h->a[p].key == key && h->a[p].rank < rank)) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = (heap_item){key, rank};
    return 0;
}

static heap_item heap_pop(heap *h)
{
    heap_item top = h->a[0], last = h->a[--h->len];
    int64_t i = 0;
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        heap_item best = last;
#define BETTER(x, y) ((x).key > (y).key || ((x).key == (y).key && (x).rank < (y).rank))
        if (l < h->len && BETTER(h->a[l], best)) m = l, best = h->a[l];
        if (r < h->len && BETTER(h->a[r], best)) m = r;
#undef BETTER
        if (m == i) break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (h->len > 0) h->a[i] = last;
    return top;
}

/* Cost of r's traffic to the ranks already placed, r sitting on v. */
static double placed_cost(const rw_mapctx *c, const char *placed, int32_t r, int32_t v)
{
    double t = 0;
    for (int64_t k = c->out_start[r]; k < c->out_start[r + 1]; k++)
        if (placed[c->out_peer[k]])
            t += rw_edge_cost(c->net, v, c->node_of[c->out_peer[k]], c->out_msgs[k], c->out_bytes[k]);
    for (int64_t k = c->in_start[r]; k < c->in_start[r + 1]; k++)
        if (placed[c->in_peer[k]])
            t += rw_edge_cost(c->net, c->node_of[c->in_peer[k]], v, c->in_msgs[k], c->in_bytes[k]);
    return t;
}

rw_status rw_alg_greedy(const rw_map_job *job, int32_t *node_of)
{
    const rw_network *net = job->net;
    int32_t n = job->traffic->n_ranks, nn = net->n_nodes;
    rw_mapctx c;
    rw_status st = rw_mapctx_init(&c, job->traffic, net, job->opt->objective, node_of);
    if (st) return st;

    /* Attachment weights: traffic costed at the network's mean figures. */
    double ma = 0, mb = 0;
    for (size_t p = 0; p < (size_t)nn * nn; p++) ma += net->alpha[p], mb += net->beta[p];
    ma /= (double)nn * nn;
    mb /= (double)nn * nn;
    if (ma <= 0 && mb <= 0) ma = 1; /* a free network: count messages */

    double *attach = calloc((size_t)n, sizeof *attach); /* to all placed ranks */
    double *local = calloc((size_t)n, sizeof *local);   /* to the node being filled */
    double *weight = calloc((size_t)n, sizeof *weight);
    char *placed = calloc((size_t)n, 1);
    int32_t *free_slots = malloc((size_t)nn * sizeof *free_slots);
    heap seeds = {0}, grow = {0};
    if (!attach || !local || !weight || !placed || !free_slots) goto nomem;
    for (int32_t v = 0; v < nn; v++) free_slots[v] = net->slots[v];
    for (int32_t r = 0; r < n; r++)
        for (int64_t k = c.out_start[r]; k < c.out_start[r + 1]; k++) {
            double w = c.out_msgs[k] * ma + c.out_bytes[k] * mb;
            weight[r] += w;
            weight[c.out_peer[k]] += w;
        }
    /* Seeds without placed partners: heaviest first (negative keys, below
     * any attached rank). */
    double heaviest = 0;
    for (int32_t r = 0; r < n; r++)
        if (weight[r] > heaviest) heaviest = weight[r];
    for (int32_t r = 0; r < n; r++)
        if (heap_push(&seeds, -1.0 - (heaviest - weight[r]), r)) goto nomem;

    /* Nodes are filled one at a time, each grown from a seed like a
     * partition, so that a node holds a compact group rather than a shell
     * around its predecessors. Next goes the rank whose joining cuts the
     * least: ties to the node count twice, its total traffic once (plain
     * "most tied" grows lines along the lowest rank numbers). */
    int32_t done = 0;
    while (done < n) {
        heap_item it = heap_pop(&seeds);
        int32_t r = it.rank;
        if (placed[r] || (it.key >= 0 && it.key != attach[r])) continue;
        /* The seed's node: among those with room, where its traffic to the
         * placed ranks costs least; on ties the roomiest (a group kept
         * together cuts less), then the first in selection order. */
        int32_t v = -1;
        double best_t = 0;
        for (int32_t u = 0; u < nn; u++) {
            if (free_slots[u] == 0) continue;
            double t = placed_cost(&c, placed, r, u);
            if (v < 0 || t < best_t || (t == best_t && free_slots[u] > free_slots[v])) v = u, best_t = t;
        }
        grow.len = 0;
        for (int32_t x = r; x >= 0;) {
            c.node_of[x] = v;
            placed[x] = 1;
            free_slots[v]--;
            done++;
            for (int pass = 0; pass < 2; pass++) {
                int64_t b = pass ? c.in_start[x] : c.out_start[x], e = pass ? c.in_start[x + 1] : c.out_start[x + 1];
                for (int64_t k = b; k < e; k++) {
                    int32_t j = pass ? c.in_peer[k] : c.out_peer[k];
                    if (placed[j]) continue;
                    double w = pass ? c.in_msgs[k] * ma + c.in_bytes[k] * mb : c.out_msgs[k] * ma + c.out_bytes[k] * mb;
                    attach[j] += w;
                    local[j] += w;
                    if (heap_push(&seeds, attach[j], j) || heap_push(&grow, 2 * local[j] - weight[j], j)) goto nomem;
                }
            }
            x = -1;
            if (free_slots[v] == 0) break;
            while (grow.len > 0) {
                heap_item g = heap_pop(&grow);
                if (!placed[g.rank] && g.key == 2 * local[g.rank] - weight[g.rank]) {
                    x = g.rank;
                    break;
                }
            }
        }
        /* The ties to this node no longer count for the next one. */
        for (int64_t i = 0; i < grow.len; i++) local[grow.a[i].rank] = 0;
    }
    for (int32_t r = 0; r < n; r++) node_of[r] = c.node_of[r];
    st = RW_OK;
    goto done;
nomem:
    st = rw_fail(RW_ERR_NOMEM, "out of memory for greedy mapping");
done:
    free(attach), free(local), free(weight), free(placed), free(free_slots), free(seeds.a), free(grow.a);
    rw_mapctx_free(&c);
    return st;
}
