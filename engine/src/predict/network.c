/* The predictor's network: pair figures, node overheads and caps, shared
 * links, placement. */
#include "predict_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int finite_nonneg(double x) { return isfinite(x) && x >= 0.0; }

rw_status rw_pnet_create(int32_t n_nodes, const double *alpha, const double *beta, rw_pnet **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_pnet_create: out is NULL");
    *out = NULL;
    if (n_nodes < 1 || n_nodes > (1 << 16))
        return rw_fail(RW_ERR_ARG, "network: %d nodes (1 to 65536)", (int)n_nodes);
    if (!alpha || !beta)
        return rw_fail(RW_ERR_ARG, "network: alpha and beta are required");
    size_t nn = (size_t)n_nodes * (size_t)n_nodes;
    for (size_t p = 0; p < nn; p++) {
        if (!finite_nonneg(alpha[p]) || !finite_nonneg(beta[p]))
            return rw_fail(RW_ERR_ARG, "network: pair %zu -> %zu has alpha %g, beta %g (finite, >= 0 needed)",
                           p / (size_t)n_nodes, p % (size_t)n_nodes, alpha[p], beta[p]);
    }
    rw_pnet *net = calloc(1, sizeof *net);
    if (!net)
        return rw_fail(RW_ERR_NOMEM, "network: out of memory");
    net->n = n_nodes;
    net->alpha = malloc(nn * sizeof(double));
    net->beta = malloc(nn * sizeof(double));
    net->node_of = malloc((size_t)n_nodes * sizeof(int32_t));
    if (!net->alpha || !net->beta || !net->node_of) {
        rw_pnet_free(net);
        return rw_fail(RW_ERR_NOMEM, "network: out of memory for %d nodes", (int)n_nodes);
    }
    memcpy(net->alpha, alpha, nn * sizeof(double));
    memcpy(net->beta, beta, nn * sizeof(double));
    net->n_ranks = n_nodes;
    for (int32_t i = 0; i < n_nodes; i++)
        net->node_of[i] = i;
    *out = net;
    return RW_OK;
}

void rw_pnet_free(rw_pnet *net)
{
    if (!net)
        return;
    free(net->alpha);
    free(net->beta);
    free(net->o);
    free(net->o_recv);
    free(net->inject);
    free(net->eject);
    free(net->duplex);
    free(net->link_cap);
    free(net->link_unsure);
    free(net->pair_start);
    free(net->link_of);
    free(net->pend_src);
    free(net->pend_dst);
    free(net->pend_link);
    free(net->pend_share);
    free(net->share_of);
    free(net->node_of);
    free(net->alpha_large);
    free(net->beta_large);
    free(net);
}

int32_t rw_pnet_n_nodes(const rw_pnet *net) { return net ? net->n : 0; }
int32_t rw_pnet_n_ranks(const rw_pnet *net) { return net ? net->n_ranks : 0; }
int32_t rw_pnet_n_links(const rw_pnet *net) { return net ? net->n_links : 0; }

/* Copy n values >= 0 (finite unless allow_inf) into *dst; NULL src clears. */
static rw_status set_vector(double **dst, const double *src, int32_t n, const char *what)
{
    if (!src) {
        free(*dst);
        *dst = NULL;
        return RW_OK;
    }
    for (int32_t i = 0; i < n; i++)
        if (!finite_nonneg(src[i]))
            return rw_fail(RW_ERR_ARG, "network: %s of node %d is %g (finite, >= 0 needed)", what, (int)i, src[i]);
    double *v = malloc((size_t)n * sizeof(double));
    if (!v)
        return rw_fail(RW_ERR_NOMEM, "network: out of memory");
    memcpy(v, src, (size_t)n * sizeof(double));
    free(*dst);
    *dst = v;
    return RW_OK;
}

rw_status rw_pnet_set_overhead(rw_pnet *net, const double *o)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_overhead: net is NULL");
    return set_vector(&net->o, o, net->n, "send overhead");
}

rw_status rw_pnet_set_recv_overhead(rw_pnet *net, const double *o)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_recv_overhead: net is NULL");
    return set_vector(&net->o_recv, o, net->n, "receive overhead");
}

rw_status rw_pnet_set_sharing(rw_pnet *net, rw_sharing_rule rule)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_sharing: net is NULL");
    if (rule != RW_SHARE_LATENCY && rule != RW_SHARE_EQUAL)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_sharing: unknown rule %d", (int)rule);
    net->equal_sharing = rule == RW_SHARE_EQUAL;
    return RW_OK;
}

rw_status rw_pnet_set_node_caps(rw_pnet *net, const double *inject, const double *eject)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_node_caps: net is NULL");
    double *in = NULL, *ej = NULL;
    rw_status st = set_vector(&in, inject, net->n, "injection cap");
    if (st == RW_OK)
        st = set_vector(&ej, eject, net->n, "ejection cap");
    if (st != RW_OK) {
        free(in);
        free(ej);
        return st;
    }
    free(net->inject);
    free(net->eject);
    net->inject = in;
    net->eject = ej;
    return RW_OK;
}

rw_status rw_pnet_set_node_duplex(rw_pnet *net, const double *duplex)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_node_duplex: net is NULL");
    return set_vector(&net->duplex, duplex, net->n, "duplex cap");
}

rw_status rw_pnet_add_link(rw_pnet *net, double capacity, int64_t n_pairs, const int32_t *src,
                           const int32_t *dst, int32_t *id)
{
    return rw_pnet_add_link_shares(net, capacity, n_pairs, src, dst, NULL, id);
}

/* Room for n more pairs in the pending lists (and their shares once a
 * link has some). */
static rw_status grow_pending(rw_pnet *net, int64_t n_pairs, int with_shares)
{
    if (with_shares && !net->pend_share) {
        net->pend_share = malloc((size_t)(net->pend_cap > 0 ? net->pend_cap : 1) * sizeof(double));
        if (!net->pend_share)
            return rw_fail(RW_ERR_NOMEM, "network: out of memory for link shares");
        for (int64_t k = 0; k < net->n_pend; k++)
            net->pend_share[k] = 1.0;
    }
    if (net->n_pend + n_pairs <= net->pend_cap)
        return RW_OK;
    int64_t cap = net->pend_cap ? net->pend_cap : 1024;
    while (cap < net->n_pend + n_pairs)
        cap *= 2;
    int32_t *ps = realloc(net->pend_src, (size_t)cap * sizeof(int32_t));
    if (ps)
        net->pend_src = ps;
    int32_t *pd = realloc(net->pend_dst, (size_t)cap * sizeof(int32_t));
    if (pd)
        net->pend_dst = pd;
    int32_t *pl = realloc(net->pend_link, (size_t)cap * sizeof(int32_t));
    if (pl)
        net->pend_link = pl;
    double *sh = net->pend_share ? realloc(net->pend_share, (size_t)cap * sizeof(double)) : NULL;
    if (sh)
        net->pend_share = sh;
    if (!ps || !pd || !pl || (net->pend_share && !sh))
        return rw_fail(RW_ERR_NOMEM, "network: out of memory for link %d", (int)net->n_links);
    net->pend_cap = cap;
    return RW_OK;
}

rw_status rw_pnet_add_link_shares(rw_pnet *net, double capacity, int64_t n_pairs, const int32_t *src,
                                  const int32_t *dst, const double *share, int32_t *id)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_add_link: net is NULL");
    if (!(isfinite(capacity) && capacity > 0.0))
        return rw_fail(RW_ERR_ARG, "network: link capacity %g (finite, > 0 needed)", capacity);
    if (n_pairs < 0 || (n_pairs > 0 && (!src || !dst)))
        return rw_fail(RW_ERR_ARG, "network: link with %lld pairs and no pair arrays", (long long)n_pairs);
    for (int64_t k = 0; k < n_pairs; k++) {
        if (src[k] < 0 || src[k] >= net->n || dst[k] < 0 || dst[k] >= net->n || src[k] == dst[k])
            return rw_fail(RW_ERR_ARG, "network: link pair %lld is %d -> %d (distinct nodes below %d needed)",
                           (long long)k, (int)src[k], (int)dst[k], (int)net->n);
        if (share && !(share[k] > 0.0 && share[k] <= 1.0))
            return rw_fail(RW_ERR_ARG, "network: link pair %lld's share %g is outside (0, 1]", (long long)k, share[k]);
    }
    rw_status st = grow_pending(net, n_pairs, share != NULL);
    if (st)
        return st;
    double *lc = realloc(net->link_cap, (size_t)(net->n_links + 1) * sizeof(double));
    if (!lc)
        return rw_fail(RW_ERR_NOMEM, "network: out of memory for link %d", (int)net->n_links);
    net->link_cap = lc;
    uint8_t *lu = realloc(net->link_unsure, (size_t)(net->n_links + 1));
    if (!lu)
        return rw_fail(RW_ERR_NOMEM, "network: out of memory for link %d", (int)net->n_links);
    net->link_unsure = lu;
    int32_t lid = net->n_links;
    lu[lid] = 0;
    for (int64_t k = 0; k < n_pairs; k++) {
        if (net->pend_share)
            net->pend_share[net->n_pend] = share ? share[k] : 1.0;
        net->pend_src[net->n_pend] = src[k];
        net->pend_dst[net->n_pend] = dst[k];
        net->pend_link[net->n_pend++] = lid;
    }
    net->link_cap[lid] = capacity;
    net->n_links = lid + 1;
    /* the index is rebuilt on the next simulation */
    free(net->pair_start);
    free(net->link_of);
    free(net->share_of);
    net->pair_start = NULL;
    net->link_of = NULL;
    net->share_of = NULL;
    if (id)
        *id = lid;
    return RW_OK;
}

int rw_pnet_link_confirmed(const rw_pnet *net, int32_t link)
{
    if (!net || link < 0 || link >= net->n_links)
        return -1;
    return !net->link_unsure || !net->link_unsure[link];
}

rw_status rw_pnet_set_link_confirmed(rw_pnet *net, int32_t link, int confirmed)
{
    if (!net || link < 0 || link >= net->n_links)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_link_confirmed: no link %d (the network has %d)", (int)link,
                       net ? (int)net->n_links : 0);
    if (!net->link_unsure)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_link_confirmed: a view's links are fixed");
    net->link_unsure[link] = !confirmed;
    return RW_OK;
}

int rw_pnet_has_unsure(const rw_pnet *net)
{
    for (int32_t l = 0; net && net->link_unsure && l < net->n_links; l++)
        if (net->link_unsure[l])
            return 1;
    return 0;
}

rw_status rw_pnet_confirmed_view(const rw_pnet *net, rw_pnet *view)
{
    *view = *net;
    view->pend_src = view->pend_dst = view->pend_link = NULL;
    view->pend_share = NULL;
    view->pair_start = NULL;
    view->link_of = NULL;
    view->share_of = NULL;
    view->link_unsure = NULL;
    view->n_pend = view->pend_cap = 0;
    size_t most = (size_t)(net->n_pend > 0 ? net->n_pend : 1);
    view->pend_src = malloc(most * sizeof(int32_t));
    view->pend_dst = malloc(most * sizeof(int32_t));
    view->pend_link = malloc(most * sizeof(int32_t));
    view->pend_share = net->pend_share ? malloc(most * sizeof(double)) : NULL;
    if (!view->pend_src || !view->pend_dst || !view->pend_link || (net->pend_share && !view->pend_share)) {
        rw_pnet_view_release(view);
        return rw_fail(RW_ERR_NOMEM, "network: out of memory for the confirmed links");
    }
    /* every link keeps its id (and capacity); an unsure one is crossed by no
     * pair, and the view's links count as confirmed (link_unsure NULL) */
    for (int64_t k = 0; k < net->n_pend; k++)
        if (!net->link_unsure || !net->link_unsure[net->pend_link[k]]) {
            if (view->pend_share)
                view->pend_share[view->n_pend] = net->pend_share[k];
            view->pend_src[view->n_pend] = net->pend_src[k];
            view->pend_dst[view->n_pend] = net->pend_dst[k];
            view->pend_link[view->n_pend++] = net->pend_link[k];
        }
    view->pend_cap = (int64_t)most;
    return RW_OK;
}

void rw_pnet_view_release(rw_pnet *view)
{
    free(view->pend_src);
    free(view->pend_dst);
    free(view->pend_link);
    free(view->pend_share);
    free(view->pair_start);
    free(view->link_of);
    free(view->share_of);
    view->pend_src = view->pend_dst = view->pend_link = NULL;
    view->pend_share = NULL;
    view->pair_start = NULL;
    view->link_of = NULL;
    view->share_of = NULL;
}

rw_status rw_pnet_index_links(rw_pnet *net)
{
    if (net->n_links == 0 || net->pair_start)
        return RW_OK;
    int64_t nn = (int64_t)net->n * net->n;
    int64_t *start = calloc((size_t)nn + 1, sizeof(int64_t));
    int32_t *of = malloc((size_t)(net->n_pend > 0 ? net->n_pend : 1) * sizeof(int32_t));
    double *sh = net->pend_share ? malloc((size_t)(net->n_pend > 0 ? net->n_pend : 1) * sizeof(double)) : NULL;
    if (!start || !of || (net->pend_share && !sh)) {
        free(start);
        free(of);
        free(sh);
        return rw_fail(RW_ERR_NOMEM, "network: out of memory indexing %d links", (int)net->n_links);
    }
    /* Counting sort of the pairs by node pair; links were added in order, so
     * each pair's links come out in increasing order and a pair listed twice
     * for one link is dropped when it repeats the previous entry. */
    for (int64_t k = 0; k < net->n_pend; k++)
        start[(int64_t)net->pend_src[k] * net->n + net->pend_dst[k] + 1]++;
    for (int64_t p = 0; p < nn; p++)
        start[p + 1] += start[p];
    for (int64_t k = 0; k < net->n_pend; k++) {
        int64_t p = (int64_t)net->pend_src[k] * net->n + net->pend_dst[k];
        if (sh)
            sh[start[p]] = net->pend_share[k];
        of[start[p]++] = net->pend_link[k];
    }
    /* start[p] now holds the end of p's run; compact duplicates in place. */
    int64_t w = 0, b = 0;
    for (int64_t p = 0; p < nn; p++) {
        int64_t e = start[p];
        start[p] = w;
        for (int64_t q = b; q < e; q++)
            if (w == start[p] || of[w - 1] != of[q]) {
                if (sh)
                    sh[w] = sh[q];
                of[w++] = of[q];
            }
        b = e;
    }
    start[nn] = w;
    net->pair_start = start;
    net->link_of = of;
    net->share_of = sh;
    return RW_OK;
}

rw_status rw_pnet_set_placement(rw_pnet *net, int32_t n_ranks, const int32_t *node_of)
{
    if (!net)
        return rw_fail(RW_ERR_ARG, "rw_pnet_set_placement: net is NULL");
    if (n_ranks < 1 || n_ranks > (1 << 24) || !node_of)
        return rw_fail(RW_ERR_ARG, "placement: %d ranks (1 to 2^24, with a node each)", (int)n_ranks);
    for (int32_t r = 0; r < n_ranks; r++)
        if (node_of[r] < 0 || node_of[r] >= net->n)
            return rw_fail(RW_ERR_ARG, "placement: rank %d on node %d (the network has %d)", (int)r,
                           (int)node_of[r], (int)net->n);
    int32_t *v = malloc((size_t)n_ranks * sizeof(int32_t));
    if (!v)
        return rw_fail(RW_ERR_NOMEM, "placement: out of memory");
    memcpy(v, node_of, (size_t)n_ranks * sizeof(int32_t));
    free(net->node_of);
    net->node_of = v;
    net->n_ranks = n_ranks;
    return RW_OK;
}
