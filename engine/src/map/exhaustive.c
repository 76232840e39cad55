/* Exhaustive branch and bound (Getmansky et al. 2015, §2.1): the optimum for tiny jobs,
 * the reference the heuristics are tested against. Ranks are placed one by
 * one, heaviest first; a partial placement is abandoned once its cost so
 * far plus a lower bound of what is left reaches the best complete one.
 * Empty nodes with identical costs to everything are interchangeable, so
 * only the first of them is tried. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms.h"

typedef struct bnb {
    rw_mapctx *c;
    int32_t n, nn;
    int32_t *order;      /* ranks in placing order */
    int32_t *pos_in_order;
    double *rest_bound;  /* lower bound of the edges not yet both placed, per depth */
    int32_t *node_of;    /* partial placement, -1 = unplaced */
    int32_t *free_slots;
    int32_t *twin_of;    /* first node with the same costs and slots, or itself */
    int32_t *best;
    double best_cost;
    double deadline;
    int64_t visited;
    int timed_out;
} bnb;

/* Time of r's edges to ranks already placed, r sitting on v. For the
 * bottleneck objective the search uses the total as bound and costs only
 * complete placements exactly (ranks <= 10 keeps that cheap). */
static double added_cost(const bnb *s, int32_t r, int32_t v)
{
    const rw_mapctx *c = s->c;
    double t = 0;
    for (int64_t k = c->out_start[r]; k < c->out_start[r + 1]; k++) {
        int32_t j = c->out_peer[k];
        if (s->node_of[j] >= 0)
            t += rw_edge_cost(c->net, v, s->node_of[j], c->out_msgs[k], c->out_bytes[k]);
    }
    for (int64_t k = c->in_start[r]; k < c->in_start[r + 1]; k++) {
        int32_t j = c->in_peer[k];
        if (s->node_of[j] >= 0)
            t += rw_edge_cost(c->net, s->node_of[j], v, c->in_msgs[k], c->in_bytes[k]);
    }
    return t;
}

static double complete_cost(bnb *s)
{
    if (s->c->objective == RW_OBJ_TIME) return -1;
    double worst = 0;
    for (int32_t r = 0; r < s->n; r++) {
        double t = 0;
        const rw_mapctx *c = s->c;
        for (int64_t k = c->out_start[r]; k < c->out_start[r + 1]; k++)
            t += rw_edge_cost(c->net, s->node_of[r], s->node_of[c->out_peer[k]], c->out_msgs[k],
                              c->out_bytes[k]);
        for (int64_t k = c->in_start[r]; k < c->in_start[r + 1]; k++)
            t += rw_edge_cost(c->net, s->node_of[c->in_peer[k]], s->node_of[r], c->in_msgs[k],
                              c->in_bytes[k]);
        if (t > worst) worst = t;
    }
    return worst;
}

static void search(bnb *s, int32_t depth, double so_far)
{
    if ((++s->visited & 4095) == 0 && rw_now() > s->deadline) s->timed_out = 1;
    if (s->timed_out) return;
    int bottleneck = s->c->objective == RW_OBJ_BOTTLENECK;
    if (depth == s->n) {
        double cost = bottleneck ? complete_cost(s) : so_far;
        if (cost < s->best_cost) {
            s->best_cost = cost;
            memcpy(s->best, s->node_of, (size_t)s->n * sizeof *s->best);
        }
        return;
    }
    /* Total time bounds the bottleneck from below only loosely (the worst
     * rank carries at least 2 total / n); prune on what is safe. */
    double bound = so_far + s->rest_bound[depth];
    if (bottleneck) bound = 2.0 * bound / s->n;
    if (bound >= s->best_cost * (1 - 1e-12)) return;
    int32_t r = s->order[depth];
    for (int32_t v = 0; v < s->nn; v++) {
        if (s->free_slots[v] == 0) continue;
        /* An empty node identical to an earlier empty one leads to the same costs. */
        int32_t t = s->twin_of[v];
        if (t != v && s->free_slots[t] == s->c->net->slots[t] &&
            s->free_slots[v] == s->c->net->slots[v])
            continue;
        double add = added_cost(s, r, v);
        s->node_of[r] = v;
        s->free_slots[v]--;
        search(s, depth + 1, so_far + add);
        s->free_slots[v]++;
        s->node_of[r] = -1;
    }
}

static int same_node(const rw_network *net, int32_t a, int32_t b)
{
    int32_t n = net->n_nodes;
    if (net->slots[a] != net->slots[b]) return 0;
    if (net->alpha[(size_t)a * n + a] != net->alpha[(size_t)b * n + b] ||
        net->beta[(size_t)a * n + a] != net->beta[(size_t)b * n + b])
        return 0;
    for (int32_t x = 0; x < n; x++) {
        if (x == a || x == b) continue;
        if (net->alpha[(size_t)a * n + x] != net->alpha[(size_t)b * n + x] ||
            net->alpha[(size_t)x * n + a] != net->alpha[(size_t)x * n + b] ||
            net->beta[(size_t)a * n + x] != net->beta[(size_t)b * n + x] ||
            net->beta[(size_t)x * n + a] != net->beta[(size_t)x * n + b])
            return 0;
    }
    return net->alpha[(size_t)a * n + b] == net->alpha[(size_t)b * n + a] &&
           net->beta[(size_t)a * n + b] == net->beta[(size_t)b * n + a];
}

rw_status rw_alg_exhaustive(const rw_map_job *job, int32_t *node_of)
{
    int32_t n = job->traffic->n_ranks, nn = job->net->n_nodes;
    if (n > RW_EXHAUSTIVE_MAX_RANKS)
        return rw_fail(RW_ERR_ARG, "exhaustive search is for at most %d ranks (the job has %d)",
                       RW_EXHAUSTIVE_MAX_RANKS, n);
    rw_mapctx c;
    rw_status st = rw_mapctx_init(&c, job->traffic, job->net, job->opt->objective, node_of);
    if (st) return st;
    bnb s = {.c = &c, .n = n, .nn = nn, .deadline = job->deadline};
    s.order = malloc((size_t)n * sizeof(int32_t));
    s.pos_in_order = malloc((size_t)n * sizeof(int32_t));
    s.rest_bound = calloc((size_t)n + 1, sizeof(double));
    s.node_of = malloc((size_t)n * sizeof(int32_t));
    s.best = malloc((size_t)n * sizeof(int32_t));
    s.free_slots = malloc((size_t)nn * sizeof(int32_t));
    s.twin_of = malloc((size_t)nn * sizeof(int32_t));
    double *weight = calloc((size_t)n, sizeof(double));
    if (!s.order || !s.pos_in_order || !s.rest_bound || !s.node_of || !s.best || !s.free_slots ||
        !s.twin_of || !weight) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* Heaviest ranks first: their placement decides most of the cost. */
    for (int32_t r = 0; r < n; r++) {
        s.order[r] = r;
        for (int64_t k = c.out_start[r]; k < c.out_start[r + 1]; k++)
            weight[r] += c.out_bytes[k] + c.out_msgs[k], weight[c.out_peer[k]] += c.out_bytes[k] + c.out_msgs[k];
    }
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0 && weight[s.order[j]] > weight[s.order[j - 1]]; j--) {
            int32_t t = s.order[j];
            s.order[j] = s.order[j - 1], s.order[j - 1] = t;
        }
    for (int32_t i = 0; i < n; i++) s.pos_in_order[s.order[i]] = i;
    /* Bound for the edges whose later end is placed at depth >= d: each
     * costs at least its messages and bytes at the cheapest figures. */
    double min_a = DBL_MAX, min_b = DBL_MAX;
    for (size_t p = 0; p < (size_t)nn * nn; p++) {
        if (job->net->slots[p / nn] == 0 || job->net->slots[p % nn] == 0) continue;
        if (p / nn == p % nn && job->net->slots[p / nn] < 2) continue;
        if (job->net->alpha[p] < min_a) min_a = job->net->alpha[p];
        if (job->net->beta[p] < min_b) min_b = job->net->beta[p];
    }
    if (min_a == DBL_MAX) min_a = min_b = 0;
    for (int32_t r = 0; r < n; r++)
        for (int64_t k = c.out_start[r]; k < c.out_start[r + 1]; k++) {
            int32_t j = c.out_peer[k];
            int32_t d = s.pos_in_order[r] > s.pos_in_order[j] ? s.pos_in_order[r] : s.pos_in_order[j];
            double lb = c.out_msgs[k] * min_a + c.out_bytes[k] * min_b;
            for (int32_t x = 0; x <= d; x++) s.rest_bound[x] += lb;
        }
    for (int32_t v = 0; v < nn; v++) {
        s.free_slots[v] = job->net->slots[v];
        s.twin_of[v] = v;
        for (int32_t u = 0; u < v; u++)
            if (s.twin_of[u] == u && same_node(job->net, u, v)) {
                s.twin_of[v] = u;
                break;
            }
    }
    for (int32_t r = 0; r < n; r++) s.node_of[r] = -1;
    /* The start placement is the first incumbent. */
    memcpy(s.best, node_of, (size_t)n * sizeof(int32_t));
    {
        double start;
        rw_map_cost(job->traffic, job->net, job->opt->objective, node_of, &start);
        s.best_cost = start;
    }
    search(&s, 0, 0.0);
    memcpy(node_of, s.best, (size_t)n * sizeof(int32_t));
    st = RW_OK;
done:
    free(s.order), free(s.pos_in_order), free(s.rest_bound), free(s.node_of), free(s.best);
    free(s.free_slots), free(s.twin_of), free(weight);
    rw_mapctx_free(&c);
    return st;
}
