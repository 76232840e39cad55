/* Swap/move refinement (Getmansky et al. 2015, §2.2, MPIPP): move a rank to a free slot
 * or swap two ranks' places whenever that lowers the objective. Each
 * candidate is costed from the ranks' partners only. Small jobs try every
 * node; large ones (local) only the nodes their partners sit on, with a
 * work queue so that only ranks whose surroundings changed are revisited. */
#include <stdlib.h>

#include "algorithms.h"

/* Jobs this small also get the iterated local search below. */
#define RW_ITERATED_MAX_RANKS 64

typedef struct best_step {
    rw_score score;
    int32_t swap_with; /* -1: a move */
    int32_t to;        /* node of a move */
} best_step;

static void consider_move(rw_mapctx *c, int32_t r, int32_t b, best_step *best)
{
    if (b == c->node_of[r] || c->load[b] >= c->net->slots[b]) return;
    rw_score s = rw_mapctx_eval_move(c, r, b);
    if (rw_score_better(c->objective, s, best->score)) *best = (best_step){s, -1, b};
}

static void consider_swap(rw_mapctx *c, int32_t r, int32_t q, best_step *best)
{
    if (c->node_of[q] == c->node_of[r]) return;
    rw_score s = rw_mapctx_eval_swap(c, r, q);
    if (rw_score_better(c->objective, s, best->score)) *best = (best_step){s, q, -1};
}

static void apply(rw_mapctx *c, int32_t r, const best_step *b)
{
    if (b->swap_with >= 0)
        rw_mapctx_swap(c, r, b->swap_with);
    else
        rw_mapctx_move(c, r, b->to);
}

/* Every node and every other rank: O(n (nodes + n)) candidates a pass. */
static int64_t refine_full(rw_mapctx *c, double deadline)
{
    int64_t accepted = 0;
    for (int improved = 1; improved;) {
        improved = 0;
        for (int32_t r = 0; r < c->n_ranks; r++) {
            if ((r & 15) == 0 && rw_now() > deadline) return accepted;
            best_step best = {c->score, -1, -1};
            for (int32_t b = 0; b < c->n_nodes; b++) consider_move(c, r, b, &best);
            for (int32_t q = 0; q < c->n_ranks; q++) consider_swap(c, r, q, &best);
            if (best.swap_with >= 0 || best.to >= 0) {
                apply(c, r, &best);
                accepted++;
                improved = 1;
            }
        }
    }
    return accepted;
}

typedef struct queue {
    int32_t *item;
    char *queued;
    int64_t head, len, cap;
} queue;

static void push(queue *q, int32_t r)
{
    if (q->queued[r]) return;
    q->queued[r] = 1;
    q->item[(q->head + q->len++) % q->cap] = r;
}

static int32_t pop(queue *q)
{
    int32_t r = q->item[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    q->queued[r] = 0;
    return r;
}

static void push_with_partners(rw_mapctx *c, queue *q, int32_t r)
{
    push(q, r);
    for (int64_t k = c->part_start[r]; k < c->part_start[r + 1]; k++) push(q, c->partner[k]);
}

/* Nodes of r's partners as move targets; partners and partners' partners
 * sitting there as swap candidates (the ranks on the other side of the
 * boundary, which are the ones whose exchange can pay). */
static int64_t refine_local(rw_mapctx *c, double deadline)
{
    int32_t n = c->n_ranks;
    queue q = {malloc((size_t)n * sizeof(int32_t)), calloc((size_t)n, 1), 0, 0, n};
    uint32_t *seen = calloc((size_t)n, sizeof *seen);      /* stamp per candidate rank */
    uint32_t *seen_node = calloc((size_t)c->n_nodes, sizeof *seen_node);
    if (!q.item || !q.queued || !seen || !seen_node) {
        free(q.item), free(q.queued), free(seen), free(seen_node);
        rw_fail(RW_ERR_NOMEM, "out of memory for refinement");
        return -1;
    }
    for (int32_t r = 0; r < n; r++)
        for (int64_t k = c->part_start[r]; k < c->part_start[r + 1]; k++)
            if (c->node_of[c->partner[k]] != c->node_of[r]) {
                push(&q, r);
                break;
            }
    int64_t accepted = 0, steps = 0;
    uint32_t stamp = 0;
    while (q.len > 0) {
        if ((++steps & 63) == 0 && rw_now() > deadline) break;
        int32_t r = pop(&q), a = c->node_of[r];
        best_step best = {c->score, -1, -1};
        if (++stamp == 0) { /* wrapped: clear the stamps */
            for (int32_t i = 0; i < n; i++) seen[i] = 0;
            for (int32_t i = 0; i < c->n_nodes; i++) seen_node[i] = 0;
            stamp = 1;
        }
        seen[r] = stamp;
        for (int64_t k = c->part_start[r]; k < c->part_start[r + 1]; k++) {
            int32_t j = c->partner[k], b = c->node_of[j];
            if (b == a) continue;
            if (seen_node[b] != stamp) {
                seen_node[b] = stamp;
                consider_move(c, r, b, &best);
            }
            if (seen[j] != stamp) {
                seen[j] = stamp;
                consider_swap(c, r, j, &best);
            }
            for (int64_t l = c->part_start[j]; l < c->part_start[j + 1]; l++) {
                int32_t x = c->partner[l];
                if (seen[x] == stamp || c->node_of[x] != b) continue;
                seen[x] = stamp;
                consider_swap(c, r, x, &best);
            }
        }
        if (best.swap_with >= 0 || best.to >= 0) {
            int32_t other = best.swap_with;
            apply(c, r, &best);
            accepted++;
            push_with_partners(c, &q, r);
            if (other >= 0) push_with_partners(c, &q, other);
        }
    }
    free(q.item), free(q.queued), free(seen), free(seen_node);
    return accepted;
}

/* Iterated local search for small jobs: a swap/move local optimum is often
 * a group split over two nodes that no single step can reunite (intra-node
 * traffic is far cheaper), so kick the placement with a few random steps,
 * descend again, and keep the result when it is better. */
static int64_t iterate(rw_mapctx *c, const rw_map_job *job, int32_t *best)
{
    enum { KICKS = 60, KICK_STEPS = 3 };
    int32_t n = c->n_ranks;
    rw_rng g;
    rw_rng_seed(&g, job->opt->seed ^ 0x5eed5eedULL);
    rw_score best_score = c->score;
    int64_t accepted = 0;
    for (int32_t i = 0; i < n; i++) best[i] = c->node_of[i];
    for (int kick = 0; kick < KICKS && rw_now() <= job->deadline; kick++) {
        for (int k = 0; k < KICK_STEPS; k++) {
            int32_t r = (int32_t)rw_rng_below(&g, (uint32_t)n);
            int32_t b = (int32_t)rw_rng_below(&g, (uint32_t)c->n_nodes);
            if (c->load[b] < c->net->slots[b]) {
                rw_mapctx_move(c, r, b);
            } else {
                int32_t q = (int32_t)rw_rng_below(&g, (uint32_t)n);
                if (c->node_of[q] == b) rw_mapctx_swap(c, r, q);
            }
        }
        refine_full(c, job->deadline);
        if (rw_score_better(c->objective, c->score, best_score)) {
            best_score = c->score;
            for (int32_t i = 0; i < n; i++) best[i] = c->node_of[i];
            accepted++;
        } else { /* back to the best: rebuild the state from it */
            const rw_network *net = c->net;
            rw_objective obj = c->objective;
            rw_mapctx_free(c);
            if (rw_mapctx_init(c, job->traffic, net, obj, best)) return -1;
        }
    }
    return accepted;
}

int64_t rw_refine(const rw_map_job *job, int32_t *node_of, int local)
{
    rw_mapctx c;
    if (rw_mapctx_init(&c, job->traffic, job->net, job->opt->objective, node_of)) return -1;
    int64_t accepted = local ? refine_local(&c, job->deadline) : refine_full(&c, job->deadline);
    if (!local && c.n_ranks <= RW_ITERATED_MAX_RANKS && c.n_nodes > 1 && accepted >= 0) {
        int64_t more = iterate(&c, job, node_of);
        if (more < 0) return -1; /* c was freed by the failed rebuild */
        accepted += more;
    }
    if (accepted > 0)
        for (int32_t i = 0; i < c.n_ranks; i++) node_of[i] = c.node_of[i];
    rw_mapctx_free(&c);
    return accepted;
}
