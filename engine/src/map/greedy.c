/* Greedy construction (MPIPP / seed 004 §2.2): the rank most attached to
 * the ranks already placed goes next, onto the node where its traffic to
 * them costs least. Nodes come in the order the selection chose them, so a
 * rank with no placed partner opens the next closest node. */
#include <stdlib.h>

#include "map_internal.h"

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

    double *attach = calloc((size_t)n, sizeof *attach);
    double *weight = calloc((size_t)n, sizeof *weight);
    char *placed = calloc((size_t)n, 1);
    int32_t *free_slots = malloc((size_t)nn * sizeof *free_slots);
    int32_t *cand = malloc((size_t)nn * sizeof *cand);
    char *is_cand = calloc((size_t)nn, 1);
    heap h = {0};
    if (!attach || !weight || !placed || !free_slots || !cand || !is_cand) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for greedy mapping");
        goto done;
    }
    for (int32_t v = 0; v < nn; v++) free_slots[v] = net->slots[v];
    for (int32_t r = 0; r < n; r++) {
        for (int64_t k = c.out_start[r]; k < c.out_start[r + 1]; k++) {
            double w = c.out_msgs[k] * ma + c.out_bytes[k] * mb;
            weight[r] += w;
            weight[c.out_peer[k]] += w;
        }
    }
    /* Seeds: the heaviest rank first; attached ranks overtake the rest. */
    double heaviest = 0;
    for (int32_t r = 0; r < n; r++)
        if (weight[r] > heaviest) heaviest = weight[r];
    for (int32_t r = 0; r < n; r++)
        if (heap_push(&h, -1.0 - (heaviest - weight[r]), r)) goto nomem;

    for (int32_t done_count = 0; done_count < n;) {
        heap_item it = heap_pop(&h);
        int32_t r = it.rank;
        if (placed[r]) continue;
        if (it.key >= 0 && it.key != attach[r]) continue; /* stale */
        /* Candidate nodes: where its placed partners are, plus the first
         * node (in selection order) with room. */
        int32_t nc = 0;
        for (int64_t k = c.part_start[r]; k < c.part_start[r + 1]; k++) {
            int32_t j = c.partner[k];
            if (!placed[j]) continue;
            int32_t v = c.node_of[j];
            if (free_slots[v] > 0 && !is_cand[v]) is_cand[v] = 1, cand[nc++] = v;
        }
        for (int32_t v = 0; v < nn; v++)
            if (free_slots[v] > 0) {
                if (!is_cand[v]) is_cand[v] = 1, cand[nc++] = v;
                break;
            }
        int32_t best = -1;
        double best_t = 0;
        for (int32_t i = 0; i < nc; i++) {
            int32_t v = cand[i];
            is_cand[v] = 0;
            double t = 0;
            for (int64_t k = c.out_start[r]; k < c.out_start[r + 1]; k++)
                if (placed[c.out_peer[k]])
                    t += rw_edge_cost(net, v, c.node_of[c.out_peer[k]], c.out_msgs[k], c.out_bytes[k]);
            for (int64_t k = c.in_start[r]; k < c.in_start[r + 1]; k++)
                if (placed[c.in_peer[k]])
                    t += rw_edge_cost(net, c.node_of[c.in_peer[k]], v, c.in_msgs[k], c.in_bytes[k]);
            if (best < 0 || t < best_t) best = v, best_t = t;
        }
        c.node_of[r] = best;
        free_slots[best]--;
        placed[r] = 1;
        done_count++;
        for (int64_t k = c.out_start[r]; k < c.out_start[r + 1]; k++) {
            int32_t j = c.out_peer[k];
            if (placed[j]) continue;
            attach[j] += c.out_msgs[k] * ma + c.out_bytes[k] * mb;
            if (heap_push(&h, attach[j], j)) goto nomem;
        }
        for (int64_t k = c.in_start[r]; k < c.in_start[r + 1]; k++) {
            int32_t j = c.in_peer[k];
            if (placed[j]) continue;
            attach[j] += c.in_msgs[k] * ma + c.in_bytes[k] * mb;
            if (heap_push(&h, attach[j], j)) goto nomem;
        }
    }
    for (int32_t r = 0; r < n; r++) node_of[r] = c.node_of[r];
    st = RW_OK;
    goto done;
nomem:
    st = rw_fail(RW_ERR_NOMEM, "out of memory for greedy mapping");
done:
    free(attach), free(weight), free(placed), free(free_slots), free(cand), free(is_cand), free(h.a);
    rw_mapctx_free(&c);
    return st;
}
