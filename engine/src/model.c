/* The network model: allocation, fitting, prediction, merging. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rw_stat empty_stat(void)
{
    rw_stat s = {NAN, NAN, NAN, NAN, 0};
    return s;
}

rw_probe_settings rw_probe_settings_default(void)
{
    rw_probe_settings s = {RW_MODE_CONCURRENT, 5, 3, 1, 10.0, 0.0};
    return s;
}

rw_status rw_model_create(int n_nodes, const char *const *names, const int32_t *ranks_per_node,
                          int n_sizes, const int64_t *sizes, rw_model **out)
{
    *out = NULL;
    if (n_nodes < 1)
        return rw_fail(RW_ERR_ARG, "a model needs at least one node (got %d)", n_nodes);
    if (n_sizes < 1)
        return rw_fail(RW_ERR_ARG, "a model needs at least one message size");
    for (int s = 0; s < n_sizes; s++)
        if (sizes[s] < 0 || (s > 0 && sizes[s] <= sizes[s - 1]))
            return rw_fail(RW_ERR_ARG, "message sizes must be non-negative and increasing");

    rw_model *m = calloc(1, sizeof *m);
    if (!m)
        return rw_fail(RW_ERR_NOMEM, "out of memory for the model");
    size_t n = (size_t)n_nodes, pairs = n * n;
    m->n_nodes = n_nodes;
    m->n_sizes = n_sizes;
    m->node_names = calloc(n, sizeof *m->node_names);
    m->ranks_per_node = calloc(n, sizeof *m->ranks_per_node);
    m->sizes = calloc((size_t)n_sizes, sizeof *m->sizes);
    m->pair_stats = malloc(pairs * (size_t)n_sizes * sizeof *m->pair_stats);
    m->alpha = malloc(pairs * sizeof *m->alpha);
    m->beta = malloc(pairs * sizeof *m->beta);
    m->measured_at = malloc(pairs * sizeof *m->measured_at);
    m->pair_state = calloc(pairs, sizeof *m->pair_state);
    m->intra_stats = malloc(n * (size_t)n_sizes * sizeof *m->intra_stats);
    m->intra_alpha = malloc(n * sizeof *m->intra_alpha);
    m->intra_beta = malloc(n * sizeof *m->intra_beta);
    m->intra_state = calloc(n, sizeof *m->intra_state);
    m->overhead = malloc(n * sizeof *m->overhead);
    m->recv_overhead = malloc(n * sizeof *m->recv_overhead);
    m->inject = malloc(n * sizeof *m->inject);
    m->eject = malloc(n * sizeof *m->eject);
    m->alpha_large = malloc(pairs * sizeof *m->alpha_large);
    m->beta_large = malloc(pairs * sizeof *m->beta_large);
    m->group_of = malloc(n * sizeof *m->group_of);
    m->duplex = malloc(n * sizeof *m->duplex);
    if (!m->node_names || !m->ranks_per_node || !m->sizes || !m->pair_stats || !m->alpha ||
        !m->beta || !m->measured_at || !m->pair_state || !m->intra_stats || !m->intra_alpha ||
        !m->intra_beta || !m->intra_state || !m->overhead || !m->recv_overhead || !m->inject || !m->eject ||
        !m->alpha_large || !m->beta_large || !m->group_of || !m->duplex) {
        rw_model_free(m);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a model of %d nodes", n_nodes);
    }
    for (size_t i = 0; i < n; i++) {
        char fallback[32];
        snprintf(fallback, sizeof fallback, "node%zu", i);
        m->node_names[i] = strdup(names && names[i] ? names[i] : fallback);
        if (!m->node_names[i]) {
            rw_model_free(m);
            return rw_fail(RW_ERR_NOMEM, "out of memory for node names");
        }
        m->ranks_per_node[i] = ranks_per_node ? ranks_per_node[i] : 1;
        m->intra_alpha[i] = m->intra_beta[i] = NAN;
        m->overhead[i] = m->recv_overhead[i] = m->inject[i] = m->eject[i] = m->duplex[i] = NAN;
        m->group_of[i] = -1;
    }
    memcpy(m->sizes, sizes, (size_t)n_sizes * sizeof *sizes);
    for (size_t k = 0; k < pairs * (size_t)n_sizes; k++)
        m->pair_stats[k] = empty_stat();
    for (size_t k = 0; k < n * (size_t)n_sizes; k++)
        m->intra_stats[k] = empty_stat();
    for (size_t p = 0; p < pairs; p++)
        m->alpha[p] = m->beta[p] = m->measured_at[p] = m->alpha_large[p] = m->beta_large[p] = NAN;
    for (int l = 0; l < RW_MODEL_NODE_LEVELS; l++)
        m->node_alpha[l] = m->node_beta[l] = NAN;
    m->settings = rw_probe_settings_default();
    m->created = NAN;
    m->duration = NAN;
    *out = m;
    return RW_OK;
}

void rw_model_free(rw_model *m)
{
    if (!m)
        return;
    if (m->node_names)
        for (int i = 0; i < m->n_nodes; i++)
            free(m->node_names[i]);
    free(m->node_names);
    free(m->ranks_per_node);
    free(m->sizes);
    free(m->pair_stats);
    free(m->alpha);
    free(m->beta);
    free(m->measured_at);
    free(m->pair_state);
    free(m->intra_stats);
    free(m->intra_alpha);
    free(m->intra_beta);
    free(m->intra_state);
    free(m->overhead);
    free(m->recv_overhead);
    free(m->inject);
    free(m->eject);
    free(m->alpha_large);
    free(m->beta_large);
    free(m->group_of);
    free(m->duplex);
    for (int32_t l = 0; m->links && l < m->n_links; l++) {
        free(m->links[l].from);
        free(m->links[l].to);
    }
    free(m->links);
    free(m->spreads);
    free(m->hops);
    free(m);
}

double rw_model_rewrite_pair(rw_model *m, size_t p, double bw)
{
    int large = m->knee > 0 && m->beta_large[p] > 0;
    double *b = large ? &m->beta_large[p] : &m->beta[p], d = *b - 1.0 / bw, was = 1.0 / *b;
    int64_t from = large ? m->knee : 0;
    rw_stat *st = m->pair_stats + p * m->n_sizes;
    for (int s = 0; s < m->n_sizes; s++) {
        if (m->sizes[s] < from || st[s].count <= 0 || !(st[s].median > 0))
            continue;
        /* The spread keeps its ratio to the median where the shift would
         * take it below zero. */
        double cut = d * (double)m->sizes[s];
        double med = fmax(st[s].median - cut, 1e-3 * st[s].median);
        st[s].min = fmin(med, fmax(st[s].min - cut, med * st[s].min / st[s].median));
        st[s].max = fmax(med, st[s].max - cut);
        st[s].median = med;
    }
    *b = 1.0 / bw;
    return bw / was - 1;
}

/* The bounds of a spread's figures; NULL when they hold. */
const char *rw_spread_problem(double low, double median, double high, double noise, int32_t times)
{
    const char *why;
    if ((why = rw_bandwidth_problem(low, 0)) || (why = rw_bandwidth_problem(median, 0)) ||
        (why = rw_bandwidth_problem(high, 0)))
        return why;
    if (!(low <= median && median <= high))
        return "needs low <= median <= high";
    if (!(noise >= 0 && noise <= RW_MODEL_MAX_JITTER))
        return "noise is outside [0, 1e9]";
    if (times < 1)
        return "needs at least one time";
    return NULL;
}

rw_status rw_model_add_spread(rw_model *m, const char *name, double low, double median, double high, double noise,
                              int32_t times)
{
    const char *why = name ? rw_name_problem(name) : "is missing";
    if (why)
        return rw_fail(RW_ERR_ARG, "capacity-spread name %s", why);
    if ((why = rw_spread_problem(low, median, high, noise, times)))
        return rw_fail(RW_ERR_ARG, "capacity-spread %s: %s", name, why);
    int32_t at = 0;
    while (at < m->n_spreads && strcmp(m->spreads[at].name, name) != 0)
        at++;
    if (at == m->n_spreads) {
        if (m->n_spreads >= RW_MODEL_MAX_LINKS)
            return rw_fail(RW_ERR_ARG, "more than %d capacity spreads", RW_MODEL_MAX_LINKS);
        rw_spread *grown = realloc(m->spreads, ((size_t)m->n_spreads + 1) * sizeof *grown);
        if (!grown)
            return rw_fail(RW_ERR_NOMEM, "out of memory for a capacity spread");
        m->spreads = grown;
        m->n_spreads++;
    }
    rw_spread *sp = &m->spreads[at];
    memset(sp, 0, sizeof *sp);
    snprintf(sp->name, sizeof sp->name, "%s", name);
    sp->low = low;
    sp->median = median;
    sp->high = high;
    sp->noise = noise;
    sp->times = times;
    return RW_OK;
}

rw_status rw_model_add_link(rw_model *m, const char *name, double capacity, int32_t n_from,
                            const int32_t *from, int32_t n_to, const int32_t *to)
{
    const char *why = name ? rw_name_problem(name) : "is missing";
    if (why)
        return rw_fail(RW_ERR_ARG, "link name %s", why);
    if (!(capacity > 0 && capacity <= RW_MODEL_MAX_BANDWIDTH))
        return rw_fail(RW_ERR_ARG, "link %s: capacity %g B/s is outside (0, %g]", name, capacity,
                       RW_MODEL_MAX_BANDWIDTH);
    if (n_from < 0 || n_to < 0 || (n_from && !from) || (n_to && !to))
        return rw_fail(RW_ERR_ARG, "link %s: bad group lists", name);
    if (m->n_links >= RW_MODEL_MAX_LINKS)
        return rw_fail(RW_ERR_ARG, "more than %d links", RW_MODEL_MAX_LINKS);
    rw_link *grown = realloc(m->links, ((size_t)m->n_links + 1) * sizeof *grown);
    if (!grown)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a link");
    m->links = grown;
    rw_link *l = &m->links[m->n_links];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->capacity = capacity;
    l->from = malloc(((size_t)n_from + 1) * sizeof *l->from);
    l->to = malloc(((size_t)n_to + 1) * sizeof *l->to);
    if (!l->from || !l->to) {
        free(l->from);
        free(l->to);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a link");
    }
    if (n_from)
        memcpy(l->from, from, (size_t)n_from * sizeof *from);
    if (n_to)
        memcpy(l->to, to, (size_t)n_to * sizeof *to);
    l->n_from = n_from;
    l->n_to = n_to;
    m->n_links++;
    return RW_OK;
}

static int in_list(int32_t g, int32_t n, const int32_t *list)
{
    if (n == 0)
        return 1; /* every group */
    for (int32_t k = 0; k < n; k++)
        if (list[k] == g)
            return 1;
    return 0;
}

int rw_model_link_crosses(const rw_model *m, int32_t l, int32_t i, int32_t j)
{
    if (l < 0 || l >= m->n_links || i < 0 || j < 0 || i >= m->n_nodes || j >= m->n_nodes)
        return 0;
    int32_t gi = m->group_of[i], gj = m->group_of[j];
    if (gi < 0 || gj < 0 || gi == gj)
        return 0;
    const rw_link *k = &m->links[l];
    return in_list(gi, k->n_from, k->from) && in_list(gj, k->n_to, k->to);
}

int rw_model_link_confirmed(const rw_model *m, int32_t l)
{
    return m && l >= 0 && l < m->n_links && m->n_spreads == 0;
}

int rw_model_find_node(const rw_model *m, const char *name)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (strcmp(m->node_names[i], name) == 0)
            return i;
    return -1;
}

/* Fit alpha/beta from the median column of n_sizes statistics. */
static rw_status fit_stats(const rw_model *m, const rw_stat *st, double *alpha, double *beta)
{
    double x[m->n_sizes], y[m->n_sizes];
    int n = 0;
    for (int s = 0; s < m->n_sizes; s++) {
        if (st[s].count > 0 && st[s].median > 0) {
            x[n] = (double)m->sizes[s];
            y[n] = st[s].median;
            n++;
        }
    }
    if (n == 0) {
        *alpha = *beta = NAN;
        return rw_fail(RW_ERR_STATE, "no timings to fit");
    }
    return rw_fit_hockney(x, y, n, alpha, beta);
}

rw_status rw_model_fit_pair(rw_model *m, int p)
{
    if (p < 0 || p >= m->n_nodes * m->n_nodes)
        return rw_fail(RW_ERR_ARG, "pair index %d out of range", p);
    return rw_model_fit_sides(m, m->pair_stats + (size_t)p * m->n_sizes, &m->alpha[p], &m->beta[p],
                              &m->alpha_large[p], &m->beta_large[p]);
}

rw_status rw_model_fit_intra(rw_model *m, int node)
{
    if (node < 0 || node >= m->n_nodes)
        return rw_fail(RW_ERR_ARG, "node index %d out of range", node);
    return fit_stats(m, m->intra_stats + (size_t)node * m->n_sizes, &m->intra_alpha[node],
                     &m->intra_beta[node]);
}

double rw_model_time(const rw_model *m, int i, int j, double bytes)
{
    if (i < 0 || j < 0 || i >= m->n_nodes || j >= m->n_nodes)
        return -1.0;
    if (i == j)
        return m->intra_state[i] == RW_PAIR_MEASURED
                   ? m->intra_alpha[i] + m->intra_beta[i] * bytes
                   : -1.0;
    size_t p = (size_t)i * m->n_nodes + j;
    if (m->pair_state[p] != RW_PAIR_MEASURED)
        return -1.0;
    /* at and above the knee, the large-message protocol's own fit */
    if (m->knee > 0 && bytes >= (double)m->knee && isfinite(m->alpha_large[p]) && isfinite(m->beta_large[p]))
        return m->alpha_large[p] + m->beta_large[p] * bytes;
    return m->alpha[p] + m->beta[p] * bytes;
}

/* base takes update's groups (nodes matched by map; base's other nodes
 * lose theirs) and links. */
static rw_status replace_links(rw_model *base, const rw_model *update, const int *map)
{
    for (int32_t l = 0; l < base->n_links; l++) {
        free(base->links[l].from);
        free(base->links[l].to);
    }
    free(base->links);
    base->links = NULL;
    base->n_links = 0;
    for (int i = 0; i < base->n_nodes; i++)
        base->group_of[i] = -1;
    for (int i = 0; i < update->n_nodes; i++)
        base->group_of[map[i]] = update->group_of[i];
    for (int32_t l = 0; l < update->n_links; l++) {
        const rw_link *k = &update->links[l];
        rw_status st = rw_model_add_link(base, k->name, k->capacity, k->n_from, k->from, k->n_to, k->to);
        if (st)
            return st;
    }
    free(base->spreads); /* measured with the links: they go together */
    base->spreads = NULL;
    base->n_spreads = 0;
    for (int32_t l = 0; l < update->n_spreads; l++) {
        const rw_spread *k = &update->spreads[l];
        rw_status st = rw_model_add_spread(base, k->name, k->low, k->median, k->high, k->noise, k->times);
        if (st)
            return st;
    }
    base->settings = update->settings;
    return RW_OK;
}

rw_status rw_model_merge(rw_model *base, const rw_model *update)
{
    if (base->n_sizes != update->n_sizes ||
        memcmp(base->sizes, update->sizes, (size_t)base->n_sizes * sizeof *base->sizes) != 0)
        return rw_fail(RW_ERR_ARG, "cannot merge models probed with different message sizes");
    int map[update->n_nodes];
    for (int i = 0; i < update->n_nodes; i++) {
        map[i] = rw_model_find_node(base, update->node_names[i]);
        if (map[i] < 0)
            return rw_fail(RW_ERR_ARG, "node '%s' of the re-probe is not in the model",
                           update->node_names[i]);
    }
    int ns = base->n_sizes, nb = base->n_nodes, nu = update->n_nodes;
    for (int i = 0; i < nu; i++) {
        int bi = map[i];
        base->ranks_per_node[bi] = update->ranks_per_node[i];
        if (update->intra_state[i] != RW_PAIR_UNPROBED) {
            base->intra_state[bi] = update->intra_state[i];
            base->intra_alpha[bi] = update->intra_alpha[i];
            base->intra_beta[bi] = update->intra_beta[i];
            memcpy(base->intra_stats + (size_t)bi * ns, update->intra_stats + (size_t)i * ns,
                   (size_t)ns * sizeof(rw_stat));
        }
        if (!isnan(update->overhead[i]))
            base->overhead[bi] = update->overhead[i];
        if (!isnan(update->recv_overhead[i]))
            base->recv_overhead[bi] = update->recv_overhead[i];
        if (!isnan(update->inject[i]))
            base->inject[bi] = update->inject[i];
        if (!isnan(update->eject[i]))
            base->eject[bi] = update->eject[i];
        if (!isnan(update->duplex[i]))
            base->duplex[bi] = update->duplex[i];
        for (int j = 0; j < nu; j++) {
            size_t pu = (size_t)i * nu + j, pb = (size_t)map[i] * nb + map[j];
            if (update->pair_state[pu] == RW_PAIR_UNPROBED)
                continue;
            base->alpha_large[pb] = update->alpha_large[pu];
            base->beta_large[pb] = update->beta_large[pu];
            base->pair_state[pb] = update->pair_state[pu];
            base->alpha[pb] = update->alpha[pu];
            base->beta[pb] = update->beta[pu];
            base->measured_at[pb] = update->measured_at[pu];
            memcpy(base->pair_stats + pb * ns, update->pair_stats + pu * ns,
                   (size_t)ns * sizeof(rw_stat));
        }
    }
    if (update->knee > 0)
        base->knee = update->knee;
    for (int l = 0; l < RW_MODEL_NODE_LEVELS; l++) /* a re-probe of the node replaces its levels */
        if (!isnan(update->node_alpha[l])) {
            base->node_alpha[l] = update->node_alpha[l];
            base->node_beta[l] = update->node_beta[l];
        }
    if (update->n_hops > 0) { /* a re-probe that found the direct network's links replaces them */
        base->n_hops = 0;
        for (int32_t h = 0; h < update->n_hops; h++) {
            rw_status st = rw_model_add_hop(base, map[update->hops[h].from], map[update->hops[h].to],
                                            update->hops[h].capacity);
            if (st)
                return st;
        }
    }
    if (update->n_links > 0 || update->n_spreads > 0)
        return replace_links(base, update, map);
    base->settings = update->settings;
    return RW_OK;
}
