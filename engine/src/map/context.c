/* The search state: traffic in both directions, the placement, node loads,
 * and (for the bottleneck objective) every rank's time in a max tree.
 * Moves are evaluated from a rank's partners only, never by re-costing the
 * whole placement. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"

double rw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void rw_mapctx_free(rw_mapctx *c)
{
    free(c->out_start);
    free(c->in_start);
    free(c->out_peer);
    free(c->in_peer);
    free(c->out_msgs);
    free(c->out_bytes);
    free(c->in_msgs);
    free(c->in_bytes);
    free(c->part_start);
    free(c->partner);
    free(c->node_of);
    free(c->load);
    free(c->rank_time);
    free(c->tree);
    free(c->undo);
    memset(c, 0, sizeof *c);
}

static void tree_set(rw_mapctx *c, int32_t r, double v)
{
    size_t i = (size_t)c->tree_leaves + (size_t)r;
    c->tree[i] = v;
    for (i >>= 1; i >= 1; i >>= 1) {
        double l = c->tree[2 * i], rr = c->tree[2 * i + 1];
        c->tree[i] = l > rr ? l : rr;
    }
}

double rw_mapctx_rank_time(const rw_mapctx *c, int32_t r, int32_t at)
{
    const rw_network *net = c->net;
    double t = 0;
    for (int64_t k = c->out_start[r]; k < c->out_start[r + 1]; k++)
        t += rw_edge_cost(net, at, c->node_of[c->out_peer[k]], c->out_msgs[k], c->out_bytes[k]);
    for (int64_t k = c->in_start[r]; k < c->in_start[r + 1]; k++)
        t += rw_edge_cost(net, c->node_of[c->in_peer[k]], at, c->in_msgs[k], c->in_bytes[k]);
    return t;
}

rw_status rw_mapctx_init(rw_mapctx *c, const rw_matrix *traffic, const rw_network *net,
                         rw_objective objective, const int32_t *node_of)
{
    memset(c, 0, sizeof *c);
    int32_t n = traffic->n_ranks, nn = net->n_nodes;
    c->net = net;
    c->objective = objective;
    c->n_ranks = n;
    c->n_nodes = nn;

    int64_t m = 0; /* entries without self traffic */
    for (int32_t i = 0; i < n; i++)
        for (int64_t k = traffic->row_start[i]; k < traffic->row_start[i + 1]; k++)
            m += traffic->dst[k] != i;
    size_t ms = (size_t)(m > 0 ? m : 1);
    c->out_start = calloc((size_t)n + 1, sizeof *c->out_start);
    c->in_start = calloc((size_t)n + 1, sizeof *c->in_start);
    c->out_peer = malloc(ms * sizeof *c->out_peer);
    c->in_peer = malloc(ms * sizeof *c->in_peer);
    c->out_msgs = malloc(ms * sizeof(double));
    c->out_bytes = malloc(ms * sizeof(double));
    c->in_msgs = malloc(ms * sizeof(double));
    c->in_bytes = malloc(ms * sizeof(double));
    c->node_of = malloc((size_t)n * sizeof *c->node_of);
    c->load = calloc((size_t)nn, sizeof *c->load);
    if (!c->out_start || !c->in_start || !c->out_peer || !c->in_peer || !c->out_msgs ||
        !c->out_bytes || !c->in_msgs || !c->in_bytes || !c->node_of || !c->load)
        goto nomem;

    for (int32_t i = 0; i < n; i++) {
        int32_t v = node_of[i];
        if (v < 0 || v >= nn) {
            rw_mapctx_free(c);
            return rw_fail(RW_ERR_ARG, "rank %d is placed on node %d (the network has %d)", i, v, nn);
        }
        c->node_of[i] = v;
        c->load[v]++;
    }
    for (int32_t v = 0; v < nn; v++)
        if (c->load[v] > net->slots[v]) {
            int32_t held = c->load[v];
            rw_mapctx_free(c);
            return rw_fail(RW_ERR_ARG, "node %d holds %d ranks but has %d slots", v, held,
                           net->slots[v]);
        }

    /* Out-edges as given, in-edges by a counting transpose. */
    int64_t e = 0;
    for (int32_t i = 0; i < n; i++) {
        c->out_start[i] = e;
        for (int64_t k = traffic->row_start[i]; k < traffic->row_start[i + 1]; k++) {
            int32_t j = traffic->dst[k];
            if (j == i) continue;
            c->out_peer[e] = j;
            c->out_msgs[e] = (double)traffic->msgs[k];
            c->out_bytes[e] = (double)traffic->bytes[k];
            c->in_start[j + 1]++;
            e++;
        }
    }
    c->out_start[n] = e;
    for (int32_t i = 0; i < n; i++) c->in_start[i + 1] += c->in_start[i];
    {
        int64_t *fill = malloc((size_t)(n > 0 ? n : 1) * sizeof *fill);
        if (!fill) goto nomem;
        memcpy(fill, c->in_start, (size_t)n * sizeof *fill);
        for (int32_t i = 0; i < n; i++)
            for (int64_t k = c->out_start[i]; k < c->out_start[i + 1]; k++) {
                int64_t q = fill[c->out_peer[k]]++;
                c->in_peer[q] = i;
                c->in_msgs[q] = c->out_msgs[k];
                c->in_bytes[q] = c->out_bytes[k];
            }
        free(fill);
    }

    /* Undirected partners: the merge of both sorted lists (sources are
     * visited in increasing order, so in-lists are sorted too). */
    c->part_start = malloc(((size_t)n + 1) * sizeof *c->part_start);
    c->partner = malloc(2 * ms * sizeof *c->partner);
    if (!c->part_start || !c->partner) goto nomem;
    int64_t q = 0, max_deg = 0;
    for (int32_t i = 0; i < n; i++) {
        c->part_start[i] = q;
        int64_t a = c->out_start[i], ae = c->out_start[i + 1];
        int64_t b = c->in_start[i], be = c->in_start[i + 1];
        while (a < ae || b < be) {
            int32_t x = a < ae ? c->out_peer[a] : INT32_MAX;
            int32_t y = b < be ? c->in_peer[b] : INT32_MAX;
            int32_t z = x < y ? x : y;
            c->partner[q++] = z;
            if (x == z) a++;
            if (y == z) b++;
        }
        int64_t deg = (ae - c->out_start[i]) + (be - c->in_start[i]);
        if (deg > max_deg) max_deg = deg;
    }
    c->part_start[n] = q;

    /* Every edge once: the sum over ranks of their sends. */
    double total = 0;
    for (int32_t i = 0; i < n; i++)
        for (int64_t k = c->out_start[i]; k < c->out_start[i + 1]; k++)
            total += rw_edge_cost(net, c->node_of[i], c->node_of[c->out_peer[k]], c->out_msgs[k],
                                  c->out_bytes[k]);
    c->score.total = total;
    c->score.max = 0;

    if (objective == RW_OBJ_BOTTLENECK) {
        c->tree_leaves = 1;
        while (c->tree_leaves < n) c->tree_leaves <<= 1;
        c->rank_time = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->rank_time);
        c->tree = calloc(2 * (size_t)c->tree_leaves, sizeof *c->tree);
        /* A swap logs each partner of both ranks plus both ranks. */
        c->undo_cap = 2 * (max_deg + 1) + 2;
        c->undo = malloc((size_t)c->undo_cap * sizeof *c->undo);
        if (!c->rank_time || !c->tree || !c->undo) goto nomem;
        for (int32_t i = 0; i < n; i++) {
            c->rank_time[i] = rw_mapctx_rank_time(c, i, c->node_of[i]);
            c->tree[(size_t)c->tree_leaves + i] = c->rank_time[i];
        }
        for (size_t i = (size_t)c->tree_leaves - 1; i >= 1; i--)
            c->tree[i] = fmax(c->tree[2 * i], c->tree[2 * i + 1]);
        c->score.max = c->tree[1];
    }
    return RW_OK;

nomem:
    rw_mapctx_free(c);
    return rw_fail(RW_ERR_NOMEM, "out of memory for the mapping of %d ranks", n);
}

/* Bottleneck bookkeeping of moving r to b: every partner's time changes by
 * the difference of the edges it shares with r. Old values go to the undo
 * log when `log` is set. */
static void bn_move(rw_mapctx *c, int32_t r, int32_t b, int log)
{
    const rw_network *net = c->net;
    int32_t a = c->node_of[r];
    double new_r = rw_mapctx_rank_time(c, r, b);
    for (int64_t k = c->out_start[r]; k < c->out_start[r + 1]; k++) {
        int32_t j = c->out_peer[k], v = c->node_of[j];
        double d = rw_edge_cost(net, b, v, c->out_msgs[k], c->out_bytes[k]) -
                   rw_edge_cost(net, a, v, c->out_msgs[k], c->out_bytes[k]);
        if (log) c->undo[c->undo_len++] = (rw_undo){j, c->rank_time[j]};
        c->rank_time[j] += d;
        tree_set(c, j, c->rank_time[j]);
    }
    for (int64_t k = c->in_start[r]; k < c->in_start[r + 1]; k++) {
        int32_t j = c->in_peer[k], v = c->node_of[j];
        double d = rw_edge_cost(net, v, b, c->in_msgs[k], c->in_bytes[k]) -
                   rw_edge_cost(net, v, a, c->in_msgs[k], c->in_bytes[k]);
        if (log) c->undo[c->undo_len++] = (rw_undo){j, c->rank_time[j]};
        c->rank_time[j] += d;
        tree_set(c, j, c->rank_time[j]);
    }
    if (log) c->undo[c->undo_len++] = (rw_undo){r, c->rank_time[r]};
    c->rank_time[r] = new_r;
    tree_set(c, r, new_r);
    c->node_of[r] = b;
}

static void bn_undo(rw_mapctx *c)
{
    while (c->undo_len > 0) {
        rw_undo u = c->undo[--c->undo_len];
        c->rank_time[u.rank] = u.time;
        tree_set(c, u.rank, u.time);
    }
}

static double time_delta(const rw_mapctx *c, int32_t r, int32_t b)
{
    return rw_mapctx_rank_time(c, r, b) - rw_mapctx_rank_time(c, r, c->node_of[r]);
}

rw_score rw_mapctx_eval_move(rw_mapctx *c, int32_t r, int32_t b)
{
    rw_score s = c->score;
    int32_t a = c->node_of[r];
    if (a == b) return s;
    s.total += time_delta(c, r, b);
    if (c->objective == RW_OBJ_BOTTLENECK) {
        c->undo_len = 0;
        bn_move(c, r, b, 1);
        s.max = c->tree[1];
        bn_undo(c);
        c->node_of[r] = a;
    }
    return s;
}

rw_score rw_mapctx_eval_swap(rw_mapctx *c, int32_t r, int32_t s_)
{
    rw_score s = c->score;
    int32_t a = c->node_of[r], b = c->node_of[s_];
    if (a == b) return s;
    /* Two moves in sequence are exact: the second sees r already at b. */
    s.total += time_delta(c, r, b);
    if (c->objective == RW_OBJ_BOTTLENECK) {
        c->undo_len = 0;
        bn_move(c, r, b, 1);
        s.total += time_delta(c, s_, a);
        bn_move(c, s_, a, 1);
        s.max = c->tree[1];
        bn_undo(c);
        c->node_of[s_] = b;
    } else {
        c->node_of[r] = b;
        s.total += time_delta(c, s_, a);
    }
    c->node_of[r] = a;
    return s;
}

void rw_mapctx_move(rw_mapctx *c, int32_t r, int32_t b)
{
    int32_t a = c->node_of[r];
    if (a == b) return;
    c->score.total += time_delta(c, r, b);
    if (c->objective == RW_OBJ_BOTTLENECK) {
        bn_move(c, r, b, 0);
        c->score.max = c->tree[1];
    }
    c->node_of[r] = b;
    c->load[a]--;
    c->load[b]++;
}

void rw_mapctx_swap(rw_mapctx *c, int32_t r, int32_t s)
{
    int32_t a = c->node_of[r], b = c->node_of[s];
    if (a == b) return;
    c->score.total += time_delta(c, r, b);
    if (c->objective == RW_OBJ_BOTTLENECK) bn_move(c, r, b, 0);
    c->node_of[r] = b;
    c->score.total += time_delta(c, s, a);
    if (c->objective == RW_OBJ_BOTTLENECK) {
        bn_move(c, s, a, 0);
        c->score.max = c->tree[1];
    }
    c->node_of[s] = a;
}

static int less_tol(double x, double y) { return x < y - 1e-12 * fabs(y); }

int rw_score_better(rw_objective objective, rw_score a, rw_score b)
{
    if (objective == RW_OBJ_BOTTLENECK) {
        if (less_tol(a.max, b.max)) return 1;
        if (less_tol(b.max, a.max)) return 0;
    }
    return less_tol(a.total, b.total);
}

double rw_score_energy(const rw_mapctx *c, rw_score s)
{
    if (c->objective == RW_OBJ_BOTTLENECK) return s.max + s.total / (c->n_ranks > 0 ? c->n_ranks : 1);
    return s.total;
}

double rw_score_value(rw_objective objective, rw_score s)
{
    return objective == RW_OBJ_BOTTLENECK ? s.max : s.total;
}

rw_status rw_mapctx_check(const rw_network *net, int32_t n, const int32_t *node_of)
{
    int32_t *load = calloc((size_t)net->n_nodes, sizeof *load);
    if (!load) return rw_fail(RW_ERR_NOMEM, "out of memory");
    rw_status st = RW_OK;
    for (int32_t r = 0; r < n && !st; r++) {
        int32_t v = node_of[r];
        if (v < 0 || v >= net->n_nodes)
            st = rw_fail(RW_ERR_STATE, "internal: rank %d placed on node %d of %d", r, v, net->n_nodes);
        else if (++load[v] > net->slots[v])
            st = rw_fail(RW_ERR_STATE, "internal: node %d over its %d slots", v, net->slots[v]);
    }
    free(load);
    return st;
}
