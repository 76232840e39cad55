/* Simulated annealing over moves and swaps (as Fujitsu's RMATT maps a
 * src/dst/bytes list onto a torus). The target of a step is a partner's
 * node half of the time, any node otherwise; the temperature starts at the
 * mean uphill step of a random sample and cools geometrically. The best
 * placement seen is returned, so the result is never worse than the start. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms.h"

rw_status rw_alg_anneal(const rw_map_job *job, int32_t *node_of)
{
    const rw_network *net = job->net;
    int32_t n = job->traffic->n_ranks, nn = net->n_nodes;
    if (n < 2 || nn < 2) return RW_OK;
    rw_mapctx c;
    rw_status st = rw_mapctx_init(&c, job->traffic, net, job->opt->objective, node_of);
    if (st) return st;

    /* Ranks of each node, to pick a swap partner on a target node. */
    int32_t *first = malloc(((size_t)nn + 1) * sizeof *first);
    int32_t *member = malloc((size_t)rw_network_total_slots(net) * sizeof *member + 1);
    int32_t *pos = malloc((size_t)n * sizeof *pos);
    int32_t *best = malloc((size_t)n * sizeof *best);
    if (!first || !member || !pos || !best) {
        free(first), free(member), free(pos), free(best);
        rw_mapctx_free(&c);
        return rw_fail(RW_ERR_NOMEM, "out of memory for annealing");
    }
    first[0] = 0;
    for (int32_t v = 0; v < nn; v++) first[v + 1] = first[v] + net->slots[v];
    {
        int32_t *fill = calloc((size_t)nn, sizeof *fill);
        if (!fill) {
            free(first), free(member), free(pos), free(best);
            rw_mapctx_free(&c);
            return rw_fail(RW_ERR_NOMEM, "out of memory for annealing");
        }
        for (int32_t r = 0; r < n; r++) {
            int32_t v = c.node_of[r];
            pos[r] = first[v] + fill[v]++;
            member[pos[r]] = r;
        }
        free(fill);
    }
    memcpy(best, c.node_of, (size_t)n * sizeof *best);
    rw_score best_score = c.score;

    rw_rng g;
    rw_rng_seed(&g, job->opt->seed);

    /* One step proposal: (rank, other rank or -1, target node). */
#define PROPOSE(r_, q_, b_)                                                              \
    do {                                                                                 \
        r_ = (int32_t)rw_rng_below(&g, (uint32_t)n);                                     \
        int64_t deg_ = c.part_start[r_ + 1] - c.part_start[r_];                          \
        if (deg_ > 0 && (rw_rng_next(&g) & 1))                                           \
            b_ = c.node_of[c.partner[c.part_start[r_] + rw_rng_below(&g, (uint32_t)deg_)]]; \
        else                                                                             \
            b_ = (int32_t)rw_rng_below(&g, (uint32_t)nn);                                \
        q_ = -1;                                                                         \
        if (c.load[b_] >= net->slots[b_] && c.load[b_] > 0)                              \
            q_ = member[first[b_] + rw_rng_below(&g, (uint32_t)c.load[b_])];             \
    } while (0)

    /* Starting temperature: the mean uphill step of a sample. */
    double up = 0;
    int ups = 0;
    for (int i = 0; i < 200; i++) {
        int32_t r, q, b;
        PROPOSE(r, q, b);
        if (b == c.node_of[r] || net->slots[b] == 0) continue;
        rw_score s = q >= 0 ? rw_mapctx_eval_swap(&c, r, q) : rw_mapctx_eval_move(&c, r, b);
        double d = rw_score_energy(&c, s) - rw_score_energy(&c, c.score);
        if (d > 0) up += d, ups++;
    }
    double temp = ups ? up / ups : 0;
    int64_t steps_per_temp = 20 * (int64_t)n, total_steps = 0;
    int64_t max_steps = 300 * (int64_t)n + 10000;
    for (; temp > 0 && total_steps < max_steps; temp *= 0.93) {
        if (rw_now() > job->deadline) break;
        for (int64_t k = 0; k < steps_per_temp; k++, total_steps++) {
            int32_t r, q, b;
            PROPOSE(r, q, b);
            int32_t a = c.node_of[r];
            if (b == a || net->slots[b] == 0) continue;
            rw_score s = q >= 0 ? rw_mapctx_eval_swap(&c, r, q) : rw_mapctx_eval_move(&c, r, b);
            double d = rw_score_energy(&c, s) - rw_score_energy(&c, c.score);
            if (d > 0 && rw_rng_uniform(&g) >= exp(-d / temp)) continue;
            if (q >= 0) {
                rw_mapctx_swap(&c, r, q);
                int32_t t = pos[r];
                pos[r] = pos[q], pos[q] = t;
                member[pos[r]] = r, member[pos[q]] = q;
            } else {
                /* r leaves a's list (the last member fills its place) and joins b's. */
                int32_t last = member[first[a] + c.load[a] - 1];
                member[pos[r]] = last;
                pos[last] = pos[r];
                pos[r] = first[b] + c.load[b];
                member[pos[r]] = r;
                rw_mapctx_move(&c, r, b);
            }
            if (rw_score_better(c.objective, c.score, best_score)) {
                best_score = c.score;
                memcpy(best, c.node_of, (size_t)n * sizeof *best);
            }
        }
        if (temp < 1e-9 * (rw_score_energy(&c, best_score) + 1e-300)) break;
    }
#undef PROPOSE
    memcpy(node_of, best, (size_t)n * sizeof *best);
    free(first), free(member), free(pos), free(best);
    rw_mapctx_free(&c);
    return RW_OK;
}
