/* The predictor's network (rw_pnet) for a communicator's ranks from a
 * measured model, with the figures `rankwise coll tune --model` takes
 * (rankwise.predict.PredictNetwork.from_model and the CLI's _allocation):
 * per pair alpha and beta (a node's own pair: its intra-node fit, free when
 * not measured), each node's injection and ejection cap (the model's
 * stress-test figure, else the best bandwidth it showed to any other node,
 * large messages included), the shared links of the model's groups, the
 * protocol knee with the large-message fit, and the send and receive
 * overheads (the model's, the median of the others where a node has none),
 * taken out of the eager alpha. So the library
 * decides as the rules `coll tune` would write for the same placement.
 * No MPI here. */
#include "decision.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A per-node figure of the model for each used node k (model node idx[k]):
 * the node's own, the median of the others' where it has none. 0 when no
 * used node has one. Every per-node array is per used node. */
static int per_node(const double *fig, int32_t k_n, const int32_t *idx, double *out, double *tmp)
{
    int32_t n_known = 0;
    for (int32_t k = 0; fig && k < k_n; k++)
        if (isfinite(fig[idx[k]]))
            tmp[n_known++] = fig[idx[k]];
    if (n_known == 0)
        return 0;
    qsort(tmp, (size_t)n_known, sizeof *tmp, by_value);
    double median = n_known % 2 ? tmp[n_known / 2] : 0.5 * (tmp[n_known / 2 - 1] + tmp[n_known / 2]);
    for (int32_t k = 0; k < k_n; k++)
        out[k] = isfinite(fig[idx[k]]) ? fig[idx[k]] : median;
    return 1;
}

/* The send and receive overheads (o, o_recv: per used node, 0 where the
 * model has none), taken out of the eager alpha: a probe's ping-pong alpha
 * holds both, which the predictor charges apart (as
 * rankwise.predict.PredictNetwork.with_measured_overheads). 1 when the
 * model has either. */
static int take_overheads(const rw_model *m, int32_t k_n, const int32_t *idx, double *alpha, double *o,
                          double *o_recv, double *tmp)
{
    int has_o = per_node(m->overhead, k_n, idx, o, tmp), has_or = per_node(m->recv_overhead, k_n, idx, o_recv, tmp);
    for (int32_t k = 0; k < k_n; k++) {
        if (!has_o)
            o[k] = 0;
        if (!has_or)
            o_recv[k] = 0;
    }
    for (int32_t a = 0; a < k_n; a++)
        for (int32_t b = 0; b < k_n; b++)
            alpha[(size_t)a * k_n + b] = fmax(0.0, alpha[(size_t)a * k_n + b] - o[a] - o_recv[b]);
    return has_o || has_or;
}

static double rate(double beta)
{
    return beta > 0 ? 1.0 / beta : 0.0; /* NaN > 0 is false */
}

static rw_status set_caps(rw_pnet *net, const rw_model *m, int32_t k_n, const int32_t *idx, const double *beta,
                          double *inject, double *eject)
{
    if (k_n < 2)
        return RW_OK;
    for (int32_t a = 0; a < k_n; a++)
        inject[a] = eject[a] = 0;
    for (int32_t a = 0; a < k_n; a++)
        for (int32_t b = 0; b < k_n; b++) {
            if (a == b)
                continue;
            double bw = rate(beta[(size_t)a * k_n + b]);
            if (m->knee > 0 && m->beta_large) {
                double big = rate(m->beta_large[(size_t)idx[a] * m->n_nodes + idx[b]]);
                bw = big > bw ? big : bw;
            }
            inject[a] = bw > inject[a] ? bw : inject[a];
            eject[b] = bw > eject[b] ? bw : eject[b];
        }
    for (int32_t a = 0; a < k_n; a++) {
        if (m->inject && isfinite(m->inject[idx[a]]) && m->inject[idx[a]] > 0)
            inject[a] = m->inject[idx[a]];
        if (m->eject && isfinite(m->eject[idx[a]]) && m->eject[idx[a]] > 0)
            eject[a] = m->eject[idx[a]];
    }
    return rw_pnet_set_node_caps(net, inject, eject);
}

static rw_status add_links(rw_pnet *net, const rw_model *m, int32_t k_n, const int32_t *idx)
{
    if (!m->n_links || !m->group_of)
        return RW_OK;
    size_t most = (size_t)k_n * (size_t)k_n;
    int32_t *src = malloc(most * sizeof *src), *dst = malloc(most * sizeof *dst);
    rw_status st = src && dst ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for the model's links");
    for (int32_t l = 0; !st && l < m->n_links; l++) {
        int64_t n = 0;
        for (int32_t a = 0; a < k_n; a++)
            for (int32_t b = 0; b < k_n; b++)
                if (rw_model_link_crosses(m, l, idx[a], idx[b])) {
                    src[n] = a;
                    dst[n++] = b;
                }
        if (n)
            st = rw_pnet_add_link(net, m->links[l].capacity, n, src, dst, NULL);
    }
    free(src);
    free(dst);
    return st;
}

static rw_status set_protocol(rw_pnet *net, const rw_model *m, int32_t k_n, const int32_t *idx, double *al,
                              double *bl)
{
    if (m->knee <= 0 || !m->alpha_large || !m->beta_large)
        return RW_OK;
    for (int32_t a = 0; a < k_n; a++)
        for (int32_t b = 0; b < k_n; b++) {
            size_t p = (size_t)idx[a] * m->n_nodes + idx[b], q = (size_t)a * k_n + b;
            int keep = a != b && isfinite(m->alpha_large[p]) && isfinite(m->beta_large[p]);
            al[q] = keep ? m->alpha_large[p] : NAN; /* intra-node keeps its one fit */
            bl[q] = keep ? m->beta_large[p] : NAN;
        }
    return rw_pnet_set_protocol(net, m->knee, al, bl);
}

rw_status rwc_pnet_from_model(const rw_model *m, int32_t n_ranks, const int32_t *model_node_of, rw_pnet **out)
{
    *out = NULL;
    /* the nodes used, in order of first rank; rank r on node node_of[r] */
    int32_t *idx = malloc((size_t)n_ranks * sizeof *idx), *node_of = malloc((size_t)n_ranks * sizeof *node_of);
    int32_t k_n = 0;
    if (!idx || !node_of) {
        free(idx);
        free(node_of);
        return rw_fail(RW_ERR_NOMEM, "out of memory for %d ranks", (int)n_ranks);
    }
    for (int32_t r = 0; r < n_ranks; r++) {
        int32_t k = 0;
        while (k < k_n && idx[k] != model_node_of[r])
            k++;
        if (k == k_n)
            idx[k_n++] = model_node_of[r];
        node_of[r] = k;
    }
    size_t kk = (size_t)k_n * (size_t)k_n;
    double *alpha = malloc(kk * sizeof *alpha), *beta = malloc(kk * sizeof *beta);
    double *al = malloc(kk * sizeof *al), *bl = malloc(kk * sizeof *bl);
    double *v1 = malloc((size_t)k_n * sizeof *v1), *v2 = malloc((size_t)k_n * sizeof *v2);
    double *v3 = malloc((size_t)k_n * sizeof *v3);
    rw_status st = alpha && beta && al && bl && v1 && v2 && v3 ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d nodes",
                                                                           (int)k_n);
    for (int32_t a = 0; !st && a < k_n; a++)
        for (int32_t b = 0; !st && b < k_n; b++) {
            int32_t i = idx[a], j = idx[b];
            size_t q = (size_t)a * k_n + b, p = (size_t)i * m->n_nodes + j;
            if (i == j) { /* as coll tune: one slot per node, an unprobed node's own pair is free */
                int known = m->intra_state[i] == RW_PAIR_MEASURED;
                alpha[q] = known ? m->intra_alpha[i] : 0;
                beta[q] = known ? m->intra_beta[i] : 0;
            } else if (m->pair_state[p] == RW_PAIR_MEASURED) {
                alpha[q] = m->alpha[p];
                beta[q] = m->beta[p];
            } else {
                st = rw_fail(RW_ERR_STATE, "the model has no measurement for %s -> %s", m->node_names[i],
                             m->node_names[j]);
            }
        }
    rw_pnet *net = NULL;
    int overheads = !st && take_overheads(m, k_n, idx, alpha, v1, v2, v3);
    if (!st)
        st = rw_pnet_create(k_n, alpha, beta, &net);
    if (!st) /* a model measured under SMPI shares as SimGrid does; one from a real MPI equally */
        st = rw_pnet_set_sharing(net, strncmp(m->source, "smpi", 4) ? RW_SHARE_EQUAL : RW_SHARE_LATENCY);
    if (!st && overheads && !(st = rw_pnet_set_overhead(net, v1)))
        st = rw_pnet_set_recv_overhead(net, v2);
    if (!st)
        st = set_caps(net, m, k_n, idx, beta, v1, v2);
    if (!st)
        st = add_links(net, m, k_n, idx);
    if (!st)
        st = set_protocol(net, m, k_n, idx, al, bl);
    if (!st)
        st = rw_pnet_set_placement(net, n_ranks, node_of);
    free(idx);
    free(node_of);
    free(alpha);
    free(beta);
    free(al);
    free(bl);
    free(v1);
    free(v2);
    free(v3);
    if (st)
        rw_pnet_free(net);
    else
        *out = net;
    return st;
}
