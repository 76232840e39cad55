/* rw_map: select nodes, run the chosen algorithm on them, refine, assign
 * slots, and never hand back anything costlier than the launchers' default
 * block placement or the algorithm's own start. */
#include <stdlib.h>
#include <string.h>

#include "algorithms.h"
#include "rankwise_node.h"

/* Every algorithm in one place: its name, what runs, whether the swap/move
 * refinement follows, whether it needs a process grid, and the sizes it
 * takes. auto picks, for a job without a grid, the algorithm with the
 * smallest auto_max_ranks (and auto_max_nodes) that holds the job. */
typedef rw_status (*alg_run)(const rw_map_job *job, int32_t *node_of, int32_t *slot_of);

typedef struct alg_entry {
    rw_algorithm id;
    const char *name;
    alg_run run;            /* NULL: the start placement stays (block, refine) */
    int refine_after;       /* constructions end with the refinement; multilevel
                             * refines itself, exhaustive is already optimal */
    int needs_grid;         /* a process grid matching the rank count */
    int32_t max_ranks;      /* refused beyond (0: no limit) */
    int32_t auto_max_ranks; /* auto's choice up to this many ranks (0: never) */
    int32_t auto_max_nodes; /* ... on at most this many nodes (0: any) */
} alg_entry;

static rw_status run_greedy(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    return rw_alg_greedy(job, node_of);
}

static rw_status run_anneal(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    rw_status st = rw_alg_greedy(job, node_of); /* annealing starts from greedy */
    return st ? st : rw_alg_anneal(job, node_of);
}

static rw_status run_exhaustive(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    return rw_alg_exhaustive(job, node_of);
}

static rw_status run_multilevel(const rw_map_job *job, int32_t *node_of, int32_t *slot_of)
{
    return rw_alg_multilevel(job, node_of);
}

static const alg_entry algorithms[RW_ALG_COUNT] = {
    /* id                name          run             refine grid max_ranks  auto ranks, nodes */
    {RW_ALG_AUTO,       "auto",       NULL,           0,     0,   0,                       0,         0},
    {RW_ALG_BLOCK,      "block",      NULL,           0,     0,   0,                       0,         0},
    {RW_ALG_GREEDY,     "greedy",     run_greedy,     1,     0,   0,                       2048,      0},
    {RW_ALG_REFINE,     "refine",     NULL,           1,     0,   0,                       0,         0},
    {RW_ALG_ANNEAL,     "anneal",     run_anneal,     1,     0,   0,                       256,       0},
    {RW_ALG_EXHAUSTIVE, "exhaustive", run_exhaustive, 0,     0,   RW_EXHAUSTIVE_MAX_RANKS, 8,         8},
    {RW_ALG_STENCIL,    "stencil",    rw_alg_stencil, 1,     1,   0,                       0,         0},
    {RW_ALG_TORUS,      "torus",      rw_alg_torus,   1,     1,   0,                       0,         0},
    {RW_ALG_MULTILEVEL, "multilevel", run_multilevel, 0,     0,   0,                       INT32_MAX, 0},
};

const char *rw_algorithm_name(rw_algorithm a)
{
    return (a >= 0 && a < RW_ALG_COUNT) ? algorithms[a].name : NULL;
}

int rw_algorithm_from_name(const char *name)
{
    for (int a = 0; a < RW_ALG_COUNT; a++)
        if (name && strcmp(name, algorithms[a].name) == 0) return a;
    return -1;
}

static const char *const objective_names[] = {"time", "bottleneck"};
static const char *const selection_names[] = {"first", "greedy", "weighted", "all"};
_Static_assert(RW_OBJ_BOTTLENECK == 1 && RW_SELECT_ALL == 3, "name tables out of step with rankwise_map.h");

const char *rw_objective_name(int o) { return o >= 0 && o <= RW_OBJ_BOTTLENECK ? objective_names[o] : NULL; }

int rw_objective_from_name(const char *name)
{
    for (int o = 0; name && o <= RW_OBJ_BOTTLENECK; o++)
        if (strcmp(name, objective_names[o]) == 0) return o;
    return -1;
}

const char *rw_node_selection_name(int s) { return s >= 0 && s <= RW_SELECT_ALL ? selection_names[s] : NULL; }

int rw_node_selection_from_name(const char *name)
{
    for (int s = 0; name && s <= RW_SELECT_ALL; s++)
        if (strcmp(name, selection_names[s]) == 0) return s;
    return -1;
}

rw_map_options rw_map_options_default(void)
{
    rw_map_options o;
    memset(&o, 0, sizeof o);
    o.algorithm = RW_ALG_AUTO;
    o.objective = RW_OBJ_TIME;
    o.selection = RW_SELECT_WEIGHTED;
    o.seed = 1;
    o.min_gain = 0.02;
    return o;
}

void rw_map_result_free(rw_map_result *r)
{
    if (!r) return;
    free(r->node_of);
    free(r->slot_of);
    r->node_of = r->slot_of = NULL;
}

/* Fill the nodes keep[0..] in order, each to its slots. */
static void block_fill(const rw_network *net, int32_t n_keep, const int32_t *keep, int32_t n,
                       int32_t *node_of)
{
    int32_t r = 0;
    for (int32_t k = 0; k < n_keep && r < n; k++) {
        int32_t v = keep ? keep[k] : k;
        for (int32_t s = 0; s < net->slots[v] && r < n; s++) node_of[r++] = v;
    }
}

/* Slots: a rank keeps the slot its algorithm gave when still free on its
 * node; the others take the lowest free slots in rank order. */
static rw_status assign_slots(const rw_network *net, int32_t n, const int32_t *node_of,
                              const int32_t *hint, int32_t *slot_of)
{
    int64_t total = rw_network_total_slots(net);
    int64_t *base = malloc(((size_t)net->n_nodes + 1) * sizeof *base);
    char *taken = calloc((size_t)(total > 0 ? total : 1), 1);
    int32_t *next = calloc((size_t)net->n_nodes, sizeof *next);
    if (!base || !taken || !next) {
        free(base), free(taken), free(next);
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    }
    base[0] = 0;
    for (int32_t v = 0; v < net->n_nodes; v++) base[v + 1] = base[v] + net->slots[v];
    for (int32_t r = 0; r < n; r++) {
        slot_of[r] = -1;
        int32_t v = node_of[r], s = hint ? hint[r] : -1;
        if (s >= 0 && s < net->slots[v] && !taken[base[v] + s]) {
            taken[base[v] + s] = 1;
            slot_of[r] = s;
        }
    }
    for (int32_t r = 0; r < n; r++) {
        if (slot_of[r] >= 0) continue;
        int32_t v = node_of[r];
        while (taken[base[v] + next[v]]) next[v]++;
        taken[base[v] + next[v]] = 1;
        slot_of[r] = next[v];
    }
    free(base), free(taken), free(next);
    return RW_OK;
}

static int grid_matches(const rw_map_options *o, int32_t n)
{
    if (o->grid[0] <= 0) return 0;
    int64_t p = (int64_t)o->grid[0] * (o->grid[1] > 0 ? o->grid[1] : 1) * (o->grid[2] > 0 ? o->grid[2] : 1);
    return p == n;
}

static rw_algorithm resolve_auto(const rw_map_options *o, int32_t n, const rw_network *sub)
{
    if (grid_matches(o, n)) return o->periodic ? RW_ALG_TORUS : RW_ALG_STENCIL;
    /* The most thorough algorithm the job is small enough for: exhaustive,
     * then annealing (affordable, and the closest to optimal), greedy,
     * multilevel. */
    const alg_entry *best = NULL;
    for (int a = 0; a < RW_ALG_COUNT; a++) {
        const alg_entry *e = &algorithms[a];
        if (e->auto_max_ranks <= 0 || n > e->auto_max_ranks ||
            (e->auto_max_nodes > 0 && sub->n_nodes > e->auto_max_nodes))
            continue;
        if (!best || e->auto_max_ranks < best->auto_max_ranks) best = e;
    }
    return best ? best->id : RW_ALG_MULTILEVEL;
}

/* Each node's ranks on its cores (rw_node_place): slot_of becomes the core. */
static rw_status place_on_cores(const rw_matrix *traffic, int32_t n_nodes, int32_t n, const rw_map_options *o,
                                rw_map_result *out)
{
    int32_t *ranks = malloc((size_t)n * sizeof *ranks), *cores = malloc((size_t)n * sizeof *cores);
    rw_status st = ranks && cores ? RW_OK : rw_fail(RW_ERR_NOMEM, "out of memory placing %d ranks on cores", n);
    for (int32_t k = 0; !st && k < n_nodes; k++) {
        int32_t m = 0;
        for (int32_t r = 0; r < n; r++)
            if (out->node_of[r] == k)
                ranks[m++] = r;
        if (m == 0)
            continue;
        if ((st = rw_node_place(traffic, m, ranks, o->node, o->node_costs, cores)) != RW_OK)
            break;
        for (int32_t i = 0; i < m; i++)
            out->slot_of[ranks[i]] = cores[i];
    }
    free(ranks);
    free(cores);
    return st;
}

rw_status rw_map(const rw_matrix *traffic, const rw_network *net, const rw_map_options *opt,
                 rw_map_result *out)
{
    memset(out, 0, sizeof *out);
    double t0 = rw_now();
    int32_t n = traffic->n_ranks;
    rw_map_options o = opt ? *opt : rw_map_options_default();
    if (o.algorithm < 0 || o.algorithm >= RW_ALG_COUNT)
        return rw_fail(RW_ERR_ARG, "unknown mapping algorithm %d", (int)o.algorithm);
    if (!(o.min_gain >= 0 && o.min_gain < 1))
        return rw_fail(RW_ERR_ARG, "min_gain must be in [0, 1), got %g", o.min_gain);
    if (o.objective != RW_OBJ_TIME && o.objective != RW_OBJ_BOTTLENECK)
        return rw_fail(RW_ERR_ARG, "unknown objective %d", (int)o.objective);
    if (rw_network_total_slots(net) < n)
        return rw_fail(RW_ERR_ARG, "the allocation has %lld slots for %d ranks",
                       (long long)rw_network_total_slots(net), n);
    /* auto on a bare matrix: a grid in rank order is still a grid. */
    if (o.algorithm == RW_ALG_AUTO && o.grid[0] <= 0 && rw_detect_grid(traffic, o.grid, &o.periodic))
        out->grid_detected = 1;
    const alg_entry *chosen = &algorithms[o.algorithm];
    if (chosen->needs_grid && !grid_matches(&o, n))
        return rw_fail(RW_ERR_ARG,
                       "the %s algorithm needs a process grid of %d ranks (given %dx%dx%d)",
                       chosen->name, n, o.grid[0], o.grid[1], o.grid[2]);
    if (chosen->max_ranks > 0 && n > chosen->max_ranks)
        return rw_fail(RW_ERR_ARG, "the %s algorithm is for at most %d ranks (the job has %d)",
                       chosen->name, chosen->max_ranks, n);
    double limit = o.time_limit > 0 ? o.time_limit : 10.0;

    rw_status st;
    int32_t *block = malloc((size_t)n * sizeof *block);
    int32_t *keep = malloc((size_t)net->n_nodes * sizeof *keep);
    int32_t *sub_node = malloc((size_t)n * sizeof *sub_node);
    int32_t *start = malloc((size_t)n * sizeof *start);
    int32_t *hint = malloc((size_t)n * sizeof *hint);
    out->node_of = malloc((size_t)n * sizeof *out->node_of);
    out->slot_of = malloc((size_t)n * sizeof *out->slot_of);
    rw_network *sub = NULL;
    if (!block || !keep || !sub_node || !start || !hint || !out->node_of || !out->slot_of) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for the mapping of %d ranks", n);
        goto fail;
    }
    out->n_ranks = n;
    block_fill(net, net->n_nodes, NULL, n, block);
    if ((st = rw_map_cost(traffic, net, o.objective, block, &out->block_cost))) goto fail;

    rw_algorithm alg = o.algorithm;
    int32_t n_keep = 0;
    rw_node_selection how = alg == RW_ALG_BLOCK ? RW_SELECT_FIRST : o.selection;
    if ((st = rw_map_select_nodes(net, traffic, n, how, keep, &n_keep))) goto fail;
    /* Every node kept in its own order: no copy (n^2 doubles on big allocations). */
    int identity = n_keep == net->n_nodes;
    for (int32_t k = 0; identity && k < n_keep; k++) identity = keep[k] == k;
    if (!identity && (st = rw_network_subset(net, n_keep, keep, &sub))) goto fail;
    const rw_network *use = identity ? net : sub;
    if (alg == RW_ALG_AUTO) alg = resolve_auto(&o, n, use);
    out->algorithm = alg;

    rw_map_job job = {traffic, use, &o, t0 + limit};
    block_fill(use, n_keep, NULL, n, start);
    memcpy(sub_node, start, (size_t)n * sizeof *sub_node);
    for (int32_t r = 0; r < n; r++) hint[r] = -1;
    int64_t refined = 0;
    const alg_entry *run = &algorithms[alg];
    if (run->run && (st = run->run(&job, sub_node, hint))) goto fail;
    if (run->refine_after) {
        refined = rw_refine(&job, sub_node, n > 1024);
        if (refined < 0) {
            st = RW_ERR_NOMEM;
            goto fail;
        }
    }
    if ((st = rw_mapctx_check(use, n, sub_node))) goto fail;

    double cost, start_cost;
    if ((st = rw_map_cost(traffic, use, o.objective, sub_node, &cost))) goto fail;
    if ((st = rw_map_cost(traffic, use, o.objective, start, &start_cost))) goto fail;
    out->start_cost = start_cost;
    if (start_cost < cost) { /* never worse than where the search began */
        memcpy(sub_node, start, (size_t)n * sizeof *sub_node);
        for (int32_t r = 0; r < n; r++) hint[r] = -1;
        cost = start_cost;
    }
    if ((st = assign_slots(use, n, sub_node, hint, out->slot_of))) goto fail;
    for (int32_t r = 0; r < n; r++) out->node_of[r] = keep[sub_node[r]];
    /* Nor worse than the launchers' default, and no change for nothing: a
     * placement the model cannot tell from the default stays the default
     * (what the model leaves out, e.g. a collective's step order, is then
     * left as users know it). */
    if (!rw_decision_replaces(out->block_cost, cost, o.min_gain, 0)) {
        memcpy(out->node_of, block, (size_t)n * sizeof *block);
        if ((st = assign_slots(net, n, block, NULL, out->slot_of))) goto fail;
        cost = out->block_cost;
    }
    out->cost = cost;
    if (o.node && (st = place_on_cores(traffic, net->n_nodes, n, &o, out))) goto fail;
    {
        char *used = calloc((size_t)net->n_nodes, 1);
        if (!used) {
            st = rw_fail(RW_ERR_NOMEM, "out of memory");
            goto fail;
        }
        for (int32_t r = 0; r < n; r++)
            if (!used[out->node_of[r]]) used[out->node_of[r]] = 1, out->n_selected++;
        free(used);
    }
    out->seconds = rw_now() - t0;
    free(block), free(keep), free(sub_node), free(start), free(hint);
    rw_network_free(sub);
    return RW_OK;

fail:
    free(block), free(keep), free(sub_node), free(start), free(hint);
    rw_network_free(sub);
    rw_map_result_free(out);
    return st;
}
