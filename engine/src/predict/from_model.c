/* The predictor's network from a measured model: the one rule behind
 * `rankwise predict`, `coll tune` (Python, through ctypes) and the
 * collectives library's RANKWISE_MODEL decisions (mpi/coll/model_net.c).
 *
 * Pairs: the mapper's network from the model (rw_network_from_model: its
 * noisy-latency rule and its filling of missing pairs), so the predictor
 * and the mapper read a model alike. Node caps: the stress test's figure,
 * else the best bandwidth the node showed to any other node, large
 * messages included. Shared links: the model's, over the pairs that cross
 * them. Protocol knee: the large-message fit, intra-node keeping its one
 * fit. Overheads, when asked: the model's (the median of the others where a
 * node has none), taken out of the eager alpha, which a ping-pong's alpha
 * holds. */
#include "predict_internal.h"
#include "rankwise_map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rw_pnet_model_options rw_pnet_model_options_default(void)
{
    return (rw_pnet_model_options){.fill_missing = 0, .node_caps = 1, .overheads = 0, .send_overhead = NAN,
                                   .recv_overhead = NAN};
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A per-node figure for each node k (model node idx[k]): `given` when
 * finite, else the node's own, else the median of the others'. 0 when
 * nothing is known (then every out[k] is 0). */
static int per_node(double given, const double *fig, int32_t k_n, const int32_t *idx, double *out, double *tmp)
{
    if (isfinite(given)) {
        for (int32_t k = 0; k < k_n; k++)
            out[k] = given;
        return 1;
    }
    int32_t n_known = 0;
    for (int32_t k = 0; fig && k < k_n; k++)
        if (isfinite(fig[idx[k]]))
            tmp[n_known++] = fig[idx[k]];
    if (n_known == 0) {
        for (int32_t k = 0; k < k_n; k++)
            out[k] = 0;
        return 0;
    }
    qsort(tmp, (size_t)n_known, sizeof *tmp, by_value);
    double median = n_known % 2 ? tmp[n_known / 2] : 0.5 * (tmp[n_known / 2 - 1] + tmp[n_known / 2]);
    for (int32_t k = 0; k < k_n; k++)
        out[k] = isfinite(fig[idx[k]]) ? fig[idx[k]] : median;
    return 1;
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
    for (int32_t a = 0; a < k_n; a++) { /* what the stress test measured replaces the guess */
        if (m->inject && isfinite(m->inject[idx[a]]) && m->inject[idx[a]] > 0)
            inject[a] = m->inject[idx[a]];
        if (m->eject && isfinite(m->eject[idx[a]]) && m->eject[idx[a]] > 0)
            eject[a] = m->eject[idx[a]];
    }
    rw_status st = rw_pnet_set_node_caps(net, inject, eject);
    int any = 0;
    for (int32_t a = 0; a < k_n && m->duplex; a++) { /* inject: free scratch now */
        inject[a] = isfinite(m->duplex[idx[a]]) && m->duplex[idx[a]] > 0 ? m->duplex[idx[a]] : 0;
        any |= inject[a] > 0;
    }
    return st || !any ? st : rw_pnet_set_node_duplex(net, inject);
}

static rw_status add_links(rw_pnet *net, const rw_model *m, int32_t k_n, const int32_t *idx, int32_t *model_link)
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
        int32_t id = 0;
        if (n) /* a link no pair of these nodes crosses is left out */
            st = rw_pnet_add_link(net, m->links[l].capacity, n, src, dst, &id);
        if (n && !st && model_link)
            model_link[id] = l;
        if (n && !st)
            st = rw_pnet_set_link_confirmed(net, id, rw_model_link_confirmed(m, l));
    }
    free(src);
    free(dst);
    return st;
}

/* Routes over hops are worked out between every two model nodes: a model
 * of more nodes is predicted without its hops. */
#define HOP_ROUTE_MAX_NODES 2048

/* A direct network's links (the model's hops): each a shared link over the
 * allocation's pairs whose shortest routes cross it, with the part of
 * their flow that does (rw_model_hop_share). model_link gets n_links + h. */
static rw_status add_hops(rw_pnet *net, const rw_model *m, int32_t k_n, const int32_t *idx, int32_t *model_link)
{
    if (!m->n_hops || k_n < 2 || m->n_nodes > HOP_ROUTE_MAX_NODES)
        return RW_OK;
    size_t nn = (size_t)m->n_nodes * (size_t)m->n_nodes, kk = (size_t)k_n * (size_t)k_n;
    int32_t *dist = malloc(nn * sizeof *dist), *src = malloc(kk * sizeof *src), *dst = malloc(kk * sizeof *dst);
    double *routes = malloc(nn * sizeof *routes), *share = malloc(kk * sizeof *share);
    rw_status st = dist && src && dst && routes && share ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for routes");
    if (!st)
        st = rw_model_hop_paths(m, dist, routes);
    for (int32_t h = 0, id = 0; !st && h < m->n_hops; h++) {
        int64_t n = 0;
        for (int32_t a = 0; a < k_n; a++)
            for (int32_t b = 0; b < k_n; b++) {
                double part = idx[a] == idx[b] ? 0.0 : rw_model_hop_share(m, dist, routes, h, idx[a], idx[b]);
                if (part > 0.0) {
                    src[n] = a;
                    dst[n] = b;
                    share[n++] = part < 1.0 ? part : 1.0;
                }
            }
        if (!n) /* a link no pair of these nodes crosses is left out */
            continue;
        st = rw_pnet_add_link_shares(net, m->hops[h].capacity, n, src, dst, share, &id);
        if (!st && model_link)
            model_link[id] = m->n_links + h;
    }
    free(dist);
    free(routes);
    free(src);
    free(dst);
    free(share);
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

rw_status rw_pnet_from_model(const rw_model *m, int32_t n_nodes, const int32_t *model_index, const int32_t *slots,
                             const rw_pnet_model_options *options, int64_t *n_filled, int32_t *model_link,
                             rw_pnet **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_pnet_from_model: out is NULL");
    *out = NULL;
    if (!m || !model_index)
        return rw_fail(RW_ERR_ARG, "rw_pnet_from_model: no model or no nodes");
    rw_pnet_model_options o = options ? *options : rw_pnet_model_options_default();
    for (int k = 0; k < 2; k++) {
        double v = k ? o.recv_overhead : o.send_overhead;
        if (!isnan(v) && !(isfinite(v) && v >= 0))
            return rw_fail(RW_ERR_ARG, "overheads must be finite and >= 0 seconds, got %g", v);
    }
    rw_network *pairs = NULL;
    rw_status st = rw_network_from_model(m, n_nodes, model_index, slots, o.fill_missing, n_filled, &pairs);
    if (st)
        return st;
    int32_t k_n = n_nodes;
    size_t kk = (size_t)k_n * (size_t)k_n;
    double *al = malloc(kk * sizeof *al), *bl = malloc(kk * sizeof *bl);
    double *v1 = malloc((size_t)k_n * sizeof *v1), *v2 = malloc((size_t)k_n * sizeof *v2);
    double *v3 = malloc((size_t)k_n * sizeof *v3);
    st = al && bl && v1 && v2 && v3 ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory for %d nodes", (int)k_n);
    rw_pnet *net = NULL;
    if (!st && o.overheads) {
        int has_o = per_node(o.send_overhead, m->overhead, k_n, model_index, v1, v3);
        int has_or = per_node(o.recv_overhead, m->recv_overhead, k_n, model_index, v2, v3);
        o.overheads = has_o || has_or;
    }
    if (!st)
        st = rw_pnet_create(k_n, pairs->alpha, pairs->beta, &net);
    if (!st) /* a model measured under SMPI shares as SimGrid does; one from a real MPI equally */
        st = rw_pnet_set_sharing(net, strncmp(m->source, "smpi", 4) ? RW_SHARE_EQUAL : RW_SHARE_LATENCY);
    if (!st && o.overheads)
        st = rw_pnet_take_overheads(net, v1, v2);
    if (!st && o.node_caps)
        st = set_caps(net, m, k_n, model_index, pairs->beta, v1, v2);
    if (!st)
        st = add_links(net, m, k_n, model_index, model_link);
    if (!st)
        st = add_hops(net, m, k_n, model_index, model_link);
    if (!st)
        st = set_protocol(net, m, k_n, model_index, al, bl);
    rw_network_free(pairs);
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

rw_status rw_pnet_take_overheads(rw_pnet *net, const double *o, const double *o_recv)
{
    if (!net || !o || !o_recv)
        return rw_fail(RW_ERR_ARG, "rw_pnet_take_overheads: no network or no overheads");
    for (int32_t a = 0; a < net->n; a++)
        if (!(isfinite(o[a]) && o[a] >= 0 && isfinite(o_recv[a]) && o_recv[a] >= 0))
            return rw_fail(RW_ERR_ARG, "overheads must be finite and >= 0 seconds");
    rw_status st = rw_pnet_set_overhead(net, o);
    if (!st)
        st = rw_pnet_set_recv_overhead(net, o_recv);
    for (int32_t a = 0; !st && a < net->n; a++)
        for (int32_t b = 0; b < net->n; b++) {
            double *x = &net->alpha[(size_t)a * net->n + b];
            *x = fmax(0.0, *x - o[a] - o_recv[b]);
        }
    return st;
}

rw_status rw_pnet_view_of(const rw_pnet *net, rw_pnet_view *out)
{
    if (!net || !out)
        return rw_fail(RW_ERR_ARG, "rw_pnet_view_of: net or out is NULL");
    *out = (rw_pnet_view){.n_nodes = net->n,
                          .alpha = net->alpha,
                          .beta = net->beta,
                          .overhead = net->o,
                          .recv_overhead = net->o_recv,
                          .inject = net->inject,
                          .eject = net->eject,
                          .knee = net->knee,
                          .alpha_large = net->knee > 0 ? net->alpha_large : NULL,
                          .beta_large = net->knee > 0 ? net->beta_large : NULL,
                          .sharing = net->equal_sharing ? RW_SHARE_EQUAL : RW_SHARE_LATENCY,
                          .n_links = net->n_links,
                          .duplex = net->duplex};
    return RW_OK;
}

rw_status rw_pnet_link(const rw_pnet *net, int32_t link, double *capacity, int64_t *n_pairs, int32_t *src,
                       int32_t *dst)
{
    if (!net || link < 0 || link >= net->n_links)
        return rw_fail(RW_ERR_ARG, "rw_pnet_link: no link %d (the network has %d)", (int)link,
                       net ? (int)net->n_links : 0);
    int64_t n = 0;
    for (int64_t k = 0; k < net->n_pend; k++)
        if (net->pend_link[k] == link) {
            if (src)
                src[n] = net->pend_src[k];
            if (dst)
                dst[n] = net->pend_dst[k];
            n++;
        }
    if (capacity)
        *capacity = net->link_cap[link];
    if (n_pairs)
        *n_pairs = n;
    return RW_OK;
}

rw_status rw_pnet_link_shares(const rw_pnet *net, int32_t link, double *share)
{
    if (!net || !share || link < 0 || link >= net->n_links)
        return rw_fail(RW_ERR_ARG, "rw_pnet_link_shares: no link %d (the network has %d) or no output", (int)link,
                       net ? (int)net->n_links : 0);
    for (int64_t k = 0, n = 0; k < net->n_pend; k++)
        if (net->pend_link[k] == link)
            share[n++] = net->pend_share ? net->pend_share[k] : 1.0;
    return RW_OK;
}
