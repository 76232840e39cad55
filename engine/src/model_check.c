/* What a model may hold (rankwise.h, rw_model_check; docs/reference/formats.md,
 * "Bounds"): the one definition the writer and the reader both apply. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const rw_model_node_levels[RW_MODEL_NODE_LEVELS] = {"cache", "domain", "package", "node"};

const rw_bound rw_bound_alpha = {"alpha", "s", 0, RW_MODEL_MAX_SECONDS};
const rw_bound rw_bound_beta = {"beta", "s/B", 0, RW_MODEL_MAX_BETA};
const rw_bound rw_bound_rtt = {"round-trip time", "s", 0, RW_MODEL_MAX_SECONDS};
const rw_bound rw_bound_jitter = {"jitter", "", 0, RW_MODEL_MAX_JITTER};
const rw_bound rw_bound_timestamp = {"timestamp", "(unix time)", 0, RW_MODEL_MAX_TIMESTAMP};
const rw_bound rw_bound_duration = {"duration", "s", 0, RW_MODEL_MAX_DURATION};
const rw_bound rw_bound_overhead = {"overhead", "s", 0, RW_MODEL_MAX_SECONDS};
/* A bandwidth of 0 would be a link that carries nothing: the bound's low
 * end is checked apart (rw_bandwidth_problem). */
const rw_bound rw_bound_bandwidth = {"bandwidth", "B/s", 0, RW_MODEL_MAX_BANDWIDTH};

const char *rw_bandwidth_problem(double v, int unknown_ok)
{
    const char *why = rw_bound_problem(&rw_bound_bandwidth, v, unknown_ok);
    if (why || isnan(v) || v > 0)
        return why;
    return "bandwidth 0 B/s carries nothing (must be > 0)";
}

const char *rw_bound_problem(const rw_bound *b, double v, int unknown_ok)
{
    static _Thread_local char why[160];
    if (isnan(v)) {
        if (unknown_ok)
            return NULL;
        snprintf(why, sizeof why, "%s is nan, a number in [%.15g, %.15g] %s is needed", b->what, b->lo,
                 b->hi, b->unit);
        return why;
    }
    if (v >= b->lo && v <= b->hi)
        return NULL;
    snprintf(why, sizeof why, "%s %.15g %s is outside [%.15g, %.15g]", b->what, v, b->unit, b->lo, b->hi);
    return why;
}

const char *rw_stat_problem(const rw_stat *s)
{
    const char *why;
    if (s->count < 0)
        return "a negative sample count";
    if (s->count == 0)
        return NULL; /* no statistics: the numbers are not written */
    if ((why = rw_bound_problem(&rw_bound_rtt, s->min, 0)) ||
        (why = rw_bound_problem(&rw_bound_rtt, s->median, 0)) ||
        (why = rw_bound_problem(&rw_bound_rtt, s->max, 0)) ||
        (why = rw_bound_problem(&rw_bound_jitter, s->jitter, 0)))
        return why;
    return NULL;
}

/* Alpha and beta of a pair or intra figure in `state`. */
static const char *fit_problem(uint8_t state, double alpha, double beta)
{
    if (state > RW_PAIR_MISSING)
        return "an unknown state";
    if (state == RW_PAIR_UNPROBED)
        return NULL; /* not written */
    int unknown_ok = state == RW_PAIR_MISSING;
    const char *why = rw_bound_problem(&rw_bound_alpha, alpha, unknown_ok);
    return why ? why : rw_bound_problem(&rw_bound_beta, beta, unknown_ok);
}

#define FAIL(...) rw_fail(RW_ERR_ARG, __VA_ARGS__)

static rw_status check_header(const rw_model *m)
{
    const char *why;
    if (m->n_nodes < 1 || m->n_nodes > RW_MODEL_MAX_NODES)
        return FAIL("%d nodes is outside [1, %d]", m->n_nodes, RW_MODEL_MAX_NODES);
    if (m->n_sizes < 1)
        return FAIL("no message size");
    for (int s = 0; s < m->n_sizes; s++)
        if (m->sizes[s] < 0 || m->sizes[s] > RW_MODEL_MAX_SIZE || (s && m->sizes[s] <= m->sizes[s - 1]))
            return FAIL("message sizes must be increasing, in [0, %lld] (size %d is %lld)",
                        RW_MODEL_MAX_SIZE, s, (long long)m->sizes[s]);
    if (!memchr(m->source, '\0', sizeof m->source))
        return FAIL("source is not terminated");
    if ((why = rw_text_problem(m->source, strlen(m->source))))
        return FAIL("source %s", why); /* not echoed: it may hold a line break */
    if ((why = rw_bound_problem(&rw_bound_timestamp, m->created, 1)))
        return FAIL("created: %s", why);
    if ((why = rw_bound_problem(&rw_bound_duration, m->duration, 1)))
        return FAIL("duration: %s", why);
    const rw_probe_settings *st = &m->settings;
    if (st->mode != RW_MODE_CONCURRENT && st->mode != RW_MODE_ISOLATED)
        return FAIL("settings: unknown mode %d", (int)st->mode);
    if (st->repetitions < 1 || st->rounds < 1 || st->warmup < 0)
        return FAIL("settings: repetitions and rounds must be >= 1, warmup >= 0 (got %d, %d, %d)",
                    st->repetitions, st->rounds, st->warmup);
    static const rw_bound timeout = {"timeout", "s", 0, RW_MODEL_MAX_DURATION},
                          budget = {"time_budget", "s", 0, RW_MODEL_MAX_DURATION};
    if ((why = rw_bound_problem(&timeout, st->timeout, 0)) ||
        (why = rw_bound_problem(&budget, st->time_budget, 0)))
        return FAIL("settings: %s", why);
    return RW_OK;
}

static rw_status check_nodes(const rw_model *m)
{
    const char *why;
    for (int i = 0; i < m->n_nodes; i++) {
        const char *name = m->node_names[i];
        if (!name)
            return FAIL("node %d has no name", i);
        if ((why = rw_name_problem(name)))
            return FAIL("node %d: the name %s", i, why);
        if (m->ranks_per_node[i] < 1 || m->ranks_per_node[i] > RW_MODEL_MAX_RANKS_PER_NODE)
            return FAIL("node %d (%s): %d ranks is outside [1, %d]", i, name,
                        m->ranks_per_node[i], RW_MODEL_MAX_RANKS_PER_NODE);
    }
    /* Distinct names: a sorted copy would cost memory; n^2 compares are
     * dwarfed by the n^2 pairs checked below. */
    for (int i = 0; i < m->n_nodes; i++)
        for (int j = i + 1; j < m->n_nodes; j++)
            if (strcmp(m->node_names[i], m->node_names[j]) == 0)
                return FAIL("nodes %d and %d are both named '%s'", i, j, m->node_names[i]);
    return RW_OK;
}

static rw_status check_groups(const int32_t *list, int32_t n, int32_t max_group, const char *link,
                              const char *side)
{
    for (int32_t k = 0; k < n; k++)
        if (list[k] < 0 || list[k] > max_group)
            return FAIL("link %s: %s group %d is no node's group", link, side, (int)list[k]);
    return RW_OK;
}

/* Per-node structure figures, groups and links (format 2). */
static rw_status check_structure(const rw_model *m)
{
    const char *why;
    int n = m->n_nodes;
    int32_t max_group = -1;
    for (int i = 0; i < n; i++) {
        if ((why = rw_bound_problem(&rw_bound_overhead, m->overhead[i], 1)))
            return FAIL("overhead %d (%s): %s", i, m->node_names[i], why);
        if ((why = rw_bound_problem(&rw_bound_overhead, m->recv_overhead[i], 1)))
            return FAIL("recv-overhead %d (%s): %s", i, m->node_names[i], why);
        if ((why = rw_bandwidth_problem(m->inject[i], 1)) || (why = rw_bandwidth_problem(m->eject[i], 1)))
            return FAIL("nic %d (%s): %s", i, m->node_names[i], why);
        if ((why = rw_bandwidth_problem(m->duplex[i], 1)))
            return FAIL("duplex %d (%s): %s", i, m->node_names[i], why);
        if (m->group_of[i] < -1 || m->group_of[i] >= n)
            return FAIL("group %d (%s): %d is outside [-1, %d)", i, m->node_names[i], (int)m->group_of[i], n);
        if (m->group_of[i] > max_group)
            max_group = m->group_of[i];
    }
    for (int l = 0; l < RW_MODEL_NODE_LEVELS; l++) {
        if (isnan(m->node_alpha[l]) != isnan(m->node_beta[l]))
            return FAIL("node-cost %s: alpha and beta are both known or both unknown", rw_model_node_levels[l]);
        if ((why = rw_bound_problem(&rw_bound_alpha, m->node_alpha[l], 1)) ||
            (why = rw_bound_problem(&rw_bound_beta, m->node_beta[l], 1)))
            return FAIL("node-cost %s: %s", rw_model_node_levels[l], why);
    }
    if (m->knee < 0 || m->knee > RW_MODEL_MAX_SIZE)
        return FAIL("knee %lld is outside [0, %lld]", (long long)m->knee, RW_MODEL_MAX_SIZE);
    for (size_t p = 0; p < (size_t)n * n; p++) {
        if (isnan(m->alpha_large[p]) && isnan(m->beta_large[p]))
            continue;
        int i = (int)(p / n), j = (int)(p % n);
        if (m->pair_state[p] != RW_PAIR_MEASURED)
            return FAIL("pair-large %d %d: a large-message fit of a pair that is not measured", i, j);
        if ((why = rw_bound_problem(&rw_bound_alpha, m->alpha_large[p], 0)) ||
            (why = rw_bound_problem(&rw_bound_beta, m->beta_large[p], 0)))
            return FAIL("pair-large %d %d (%s -> %s): %s", i, j, m->node_names[i], m->node_names[j], why);
    }
    if (m->n_links < 0 || m->n_links > RW_MODEL_MAX_LINKS || (m->n_links && !m->links))
        return FAIL("%d links is outside [0, %d]", (int)m->n_links, RW_MODEL_MAX_LINKS);
    rw_status st;
    for (int32_t l = 0; l < m->n_links; l++) {
        const rw_link *k = &m->links[l];
        if (!memchr(k->name, '\0', sizeof k->name) || (why = rw_name_problem(k->name)))
            return FAIL("link %d: the name %s", (int)l, why ? why : "is not terminated");
        for (int32_t e = 0; e < l; e++)
            if (strcmp(m->links[e].name, k->name) == 0)
                return FAIL("links %d and %d are both named '%s'", (int)e, (int)l, k->name);
        if ((why = rw_bandwidth_problem(k->capacity, 0)))
            return FAIL("link %s: %s", k->name, why);
        if (k->n_from < 0 || k->n_to < 0 || k->n_from > n || k->n_to > n)
            return FAIL("link %s: group lists of %d and %d groups", k->name, (int)k->n_from, (int)k->n_to);
        if ((st = check_groups(k->from, k->n_from, max_group, k->name, "source")) ||
            (st = check_groups(k->to, k->n_to, max_group, k->name, "destination")))
            return st;
    }
    if (m->n_spreads < 0 || m->n_spreads > RW_MODEL_MAX_LINKS || (m->n_spreads && !m->spreads))
        return FAIL("%d capacity spreads is outside [0, %d]", (int)m->n_spreads, RW_MODEL_MAX_LINKS);
    for (int32_t l = 0; l < m->n_spreads; l++) {
        const rw_spread *k = &m->spreads[l];
        if (!memchr(k->name, '\0', sizeof k->name) || (why = rw_name_problem(k->name)))
            return FAIL("capacity spread %d: the name %s", (int)l, why ? why : "is not terminated");
        for (int32_t e = 0; e < l; e++)
            if (strcmp(m->spreads[e].name, k->name) == 0)
                return FAIL("capacity spreads %d and %d are both named '%s'", (int)e, (int)l, k->name);
        if ((why = rw_spread_problem(k->low, k->median, k->high, k->noise, k->times)))
            return FAIL("capacity-spread %s: %s", k->name, why);
    }
    if (m->n_hops < 0 || (int64_t)m->n_hops > (int64_t)n * RW_MODEL_MAX_HOPS || (m->n_hops && !m->hops))
        return FAIL("%d hops is outside [0, %d a node]", (int)m->n_hops, RW_MODEL_MAX_HOPS);
    for (int32_t h = 0; h < m->n_hops; h++) {
        const rw_hop *k = &m->hops[h];
        if (k->from < 0 || k->to < 0 || k->from >= n || k->to >= n || k->from == k->to)
            return FAIL("hop %d: nodes %d and %d (of %d)", (int)h, (int)k->from, (int)k->to, n);
        if (h && (k->from < k[-1].from || (k->from == k[-1].from && k->to <= k[-1].to)))
            return FAIL("hop %d: not after hop %d in (from, to) order, or the same", (int)h, (int)h - 1);
        if ((why = rw_bandwidth_problem(k->capacity, 0)))
            return FAIL("hop %d %d: %s", (int)k->from, (int)k->to, why);
    }
    return RW_OK;
}

rw_status rw_model_check(const rw_model *m)
{
    rw_status st;
    if ((st = check_header(m)) || (st = check_nodes(m)) || (st = check_structure(m)))
        return st;
    int n = m->n_nodes, ns = m->n_sizes;
    const char *why;
    for (int i = 0; i < n; i++) {
        if ((why = fit_problem(m->intra_state[i], m->intra_alpha[i], m->intra_beta[i])))
            return FAIL("intra %d (%s): %s", i, m->node_names[i], why);
        for (int s = 0; m->intra_state[i] != RW_PAIR_UNPROBED && s < ns; s++)
            if ((why = rw_stat_problem(&m->intra_stats[(size_t)i * ns + s])))
                return FAIL("intra-rtt %d (%s), size %lld: %s", i, m->node_names[i],
                            (long long)m->sizes[s], why);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            size_t p = (size_t)i * n + j;
            uint8_t state = m->pair_state[p];
            if (i == j && state != RW_PAIR_UNPROBED)
                return FAIL("pair %d %d: a node with itself has intra figures, not a pair state", i, j);
            if (state == RW_PAIR_UNPROBED)
                continue;
            if ((why = fit_problem(state, m->alpha[p], m->beta[p])) ||
                (why = rw_bound_problem(&rw_bound_timestamp, m->measured_at[p], 1)))
                return FAIL("pair %d %d (%s -> %s): %s", i, j, m->node_names[i], m->node_names[j], why);
            for (int s = 0; s < ns; s++)
                if ((why = rw_stat_problem(&m->pair_stats[p * ns + s])))
                    return FAIL("rtt %d %d (%s -> %s), size %lld: %s", i, j, m->node_names[i],
                                m->node_names[j], (long long)m->sizes[s], why);
        }
    return RW_OK;
}
