/* rw_network: the dense node-to-node costs an allocation offers. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "rankwise_map.h"

rw_status rw_network_create(int32_t n_nodes, const int32_t *slots, rw_network **out)
{
    *out = NULL;
    if (n_nodes < 1 || n_nodes > 65536)
        return rw_fail(RW_ERR_ARG, "a network needs 1 to 65536 nodes, got %d", n_nodes);
    rw_network *net = calloc(1, sizeof *net);
    size_t nn = (size_t)n_nodes * (size_t)n_nodes;
    if (!net) return rw_fail(RW_ERR_NOMEM, "out of memory for a network of %d nodes", n_nodes);
    net->n_nodes = n_nodes;
    net->slots = malloc((size_t)n_nodes * sizeof *net->slots);
    net->alpha = calloc(nn, sizeof *net->alpha);
    net->beta = calloc(nn, sizeof *net->beta);
    if (!net->slots || !net->alpha || !net->beta) {
        rw_network_free(net);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a network of %d nodes", n_nodes);
    }
    for (int32_t i = 0; i < n_nodes; i++) {
        if (slots && slots[i] < 0) {
            rw_network_free(net);
            return rw_fail(RW_ERR_ARG, "node %d has a negative slot count (%d)", i, slots[i]);
        }
        net->slots[i] = slots ? slots[i] : 1;
    }
    *out = net;
    return RW_OK;
}

void rw_network_free(rw_network *net)
{
    if (!net) return;
    free(net->slots);
    free(net->alpha);
    free(net->beta);
    free(net);
}

int64_t rw_network_total_slots(const rw_network *net)
{
    int64_t t = 0;
    for (int32_t i = 0; i < net->n_nodes; i++) t += net->slots[i];
    return t;
}

rw_status rw_network_from_model(const rw_model *m, int32_t n_nodes, const int32_t *model_index,
                                const int32_t *slots, int fill_missing, int64_t *n_filled,
                                rw_network **out)
{
    *out = NULL;
    if (n_filled) *n_filled = 0;
    for (int32_t k = 0; k < n_nodes; k++) {
        if (model_index[k] < 0 || model_index[k] >= m->n_nodes)
            return rw_fail(RW_ERR_ARG, "node %d refers to model node %d (the model has %d)", k,
                           model_index[k], m->n_nodes);
        for (int32_t l = 0; l < k; l++)
            if (model_index[l] == model_index[k])
                return rw_fail(RW_ERR_ARG, "node '%s' is listed twice",
                               m->node_names[model_index[k]]);
    }
    /* The slowest figures measured: what a missing pair is assumed to cost,
     * so that a mapper steers traffic away from it rather than onto it. */
    double worst_alpha = 0, worst_beta = 0;
    int any = 0;
    for (int64_t p = 0; p < (int64_t)m->n_nodes * m->n_nodes; p++) {
        if (p / m->n_nodes == p % m->n_nodes || m->pair_state[p] != RW_PAIR_MEASURED) continue;
        if (m->alpha[p] > worst_alpha) worst_alpha = m->alpha[p];
        if (m->beta[p] > worst_beta) worst_beta = m->beta[p];
        any = 1;
    }
    /* Latencies that are noise (a loaded real stack: 8-byte round trips
     * spread beyond half a level gap, rw_model_latency_noisy) say nothing of
     * the pair: each measured pair takes the median of the measured pairs'
     * latency, and the bandwidths place the ranks (on an emulated cluster,
     * alphas of 0.01-5 ms at random outweighed the 64 KiB messages' rack
     * difference and MPI_Cart_create's reorder put more neighbours across). */
    int noisy = any ? rw_model_latency_noisy(m) : 0;
    if (noisy < 0) return RW_ERR_NOMEM;
    double common = NAN;
    if (noisy) {
        double *v = malloc((size_t)m->n_nodes * m->n_nodes * sizeof *v);
        if (!v) return rw_fail(RW_ERR_NOMEM, "out of memory");
        size_t k = 0;
        for (int64_t p = 0; p < (int64_t)m->n_nodes * m->n_nodes; p++)
            if (p / m->n_nodes != p % m->n_nodes && m->pair_state[p] == RW_PAIR_MEASURED)
                v[k++] = m->alpha[p];
        common = rw_median(v, k);
        free(v);
    }
    rw_status st = rw_network_create(n_nodes, slots, out);
    if (st) return st;
    rw_network *net = *out;
    int64_t filled = 0;
    for (int32_t a = 0; a < n_nodes; a++) {
        int32_t i = model_index[a];
        for (int32_t b = 0; b < n_nodes; b++) {
            int32_t j = model_index[b];
            size_t q = (size_t)a * n_nodes + b;
            int known;
            double al, be;
            if (i == j) {
                known = m->intra_state[i] == RW_PAIR_MEASURED;
                al = m->intra_alpha[i];
                be = m->intra_beta[i];
            } else {
                size_t p = (size_t)i * m->n_nodes + j;
                known = m->pair_state[p] == RW_PAIR_MEASURED;
                al = noisy ? common : m->alpha[p];
                be = m->beta[p];
            }
            if (!known) {
                if (i == j && net->slots[a] <= 1) {
                    al = be = 0; /* one rank per node: never used */
                } else if (!fill_missing || !any) {
                    rw_network_free(net);
                    *out = NULL;
                    if (i == j)
                        return rw_fail(RW_ERR_STATE,
                                       "the model has no intra-node figures for '%s' (probe it "
                                       "with several ranks per node, or allow filling missing pairs)",
                                       m->node_names[i]);
                    return rw_fail(RW_ERR_STATE,
                                   "the model has no measurement for %s -> %s (re-probe those "
                                   "pairs, or allow filling missing pairs)",
                                   m->node_names[i], m->node_names[j]);
                } else if (i == j) {
                    /* Unmeasured intra-node: no worse than the fastest pair from the node. */
                    al = DBL_MAX;
                    be = DBL_MAX;
                    for (int32_t k = 0; k < m->n_nodes; k++) {
                        size_t p = (size_t)i * m->n_nodes + k;
                        if (k == i || m->pair_state[p] != RW_PAIR_MEASURED) continue;
                        if (m->alpha[p] < al) al = m->alpha[p];
                        if (m->beta[p] < be) be = m->beta[p];
                    }
                    if (al == DBL_MAX) al = worst_alpha, be = worst_beta;
                    filled++;
                } else {
                    al = worst_alpha;
                    be = worst_beta;
                    filled++;
                }
            }
            net->alpha[q] = al;
            net->beta[q] = be;
        }
    }
    if (n_filled) *n_filled = filled;
    return RW_OK;
}

rw_status rw_network_subset(const rw_network *net, int32_t n_keep, const int32_t *keep,
                            rw_network **out)
{
    *out = NULL;
    int32_t *slots = calloc((size_t)(n_keep > 0 ? n_keep : 1), sizeof *slots);
    if (!slots) return rw_fail(RW_ERR_NOMEM, "out of memory");
    for (int32_t k = 0; k < n_keep; k++) {
        if (keep[k] < 0 || keep[k] >= net->n_nodes) {
            free(slots);
            return rw_fail(RW_ERR_ARG, "node %d is not in the network", keep[k]);
        }
        slots[k] = net->slots[keep[k]];
    }
    rw_status st = rw_network_create(n_keep, slots, out);
    free(slots);
    if (st) return st;
    for (int32_t a = 0; a < n_keep; a++)
        for (int32_t b = 0; b < n_keep; b++) {
            size_t p = (size_t)keep[a] * net->n_nodes + keep[b];
            (*out)->alpha[(size_t)a * n_keep + b] = net->alpha[p];
            (*out)->beta[(size_t)a * n_keep + b] = net->beta[p];
        }
    return RW_OK;
}
