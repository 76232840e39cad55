/* Triple trinary trees: three spanning trees whose inner ranks are
 * disjoint, so that a broadcast sends one third of the message down each
 * at once and no rank sends more than the whole message (Ajima 2018, the
 * Tofu interconnect's "triple trinary tree" broadcast). See trinary.h. */
#include "trinary.h"

#include "../predict/predict_internal.h"
#include "internal.h"
#include "rankwise_coll_tune.h"

#include <math.h>
#include <stdlib.h>

size_t rw_trinary_part(size_t bytes, int k, size_t *offset)
{
    size_t base = bytes / 3, rest = bytes % 3;
    if (offset)
        *offset = (size_t)k * base + ((size_t)k < rest ? (size_t)k : rest);
    return base + ((size_t)k < rest);
}

/* Tree k in relative numbering (v = 0 is the root): parent[v]. The shape
 * first, over abstract places: inner places 0..n_in-1 (a ternary heap),
 * leaf places on the inner ones' free slots (the heap's deepest inner
 * places have them all), the root taking what is left. Then ranks go onto
 * the places in depth-first order, inner places taking the inner ranks
 * (v = 1 + k, 4 + k, ...) in increasing v and leaf places the others in
 * increasing v: a subtree holds ranks of about one stretch of v, so where
 * rank order follows the network (block placement on racks, a torus
 * numbered along its axes) most of a tree's edges stay near. */
static void build_one(int32_t n, int k, int32_t *parent, int32_t *inner, int32_t *leaf, int32_t *slots,
                      int32_t *leaf_parent, int32_t *stack)
{
    int32_t m = n - 1, n_in = 0, n_leaf = 0;
    for (int32_t v = 1; v <= m; v++) {
        if ((v - 1) % 3 == k)
            inner[n_in++] = v;
        else
            leaf[n_leaf++] = v;
    }
    parent[0] = -1;
    for (int32_t i = 0; i < n_in; i++) {
        slots[i] = 3;
        if (i > 0)
            slots[(i - 1) / 3]--;
    }
    int32_t i = 0;
    for (int32_t j = 0; j < n_leaf; j++) {
        while (i < n_in && slots[i] == 0)
            i++;
        leaf_parent[j] = i < n_in ? i : -1;
        if (i < n_in)
            slots[i]--;
    }
    /* depth-first over the places: children of inner place p are inner
     * places 3p+1..3p+3, then the leaf places on p (a contiguous run, since
     * leaves fill slots in place order); the stack holds (place, parent's
     * v) pairs, inner place p as p, leaf place j as -2 - j */
    int32_t *first_leaf = slots; /* reused: first leaf place of each inner place, n_leaf if none */
    for (int32_t p = 0; p < n_in; p++)
        first_leaf[p] = n_leaf;
    for (int32_t j = n_leaf - 1; j >= 0; j--)
        if (leaf_parent[j] >= 0)
            first_leaf[leaf_parent[j]] = j;
    /* Inner ranks split into two streams spread evenly over v: the upper
     * places (with inner children) take one, the bottom places (leaves
     * only) the other. A bottom place and its three leaves then take ranks
     * of about the same v, as do the upper places and the subtrees under
     * them. */
    int32_t n_up = 0;
    while (n_up < n_in && 3 * n_up + 1 < n_in)
        n_up++;
    int32_t *up_rank = stack + 2 * (size_t)n, n_u = 0, n_b = 0; /* past the walk's 2 n */
    int32_t *bottom_rank = inner;
    for (int32_t j = 0; j < n_in; j++) {
        if ((int64_t)j * n_up % n_in < n_up) /* the first inner rank among them: place 0 */
            up_rank[n_u++] = inner[j];
        else
            bottom_rank[n_b++] = inner[j]; /* in place: n_b <= j */
    }
    int32_t next_up = 0, next_bottom = 0, next_leaf = 0, top = 0;
    /* the root's own leaves (tree 2's extra child, or every rank when no inner place) */
    for (int32_t j = n_leaf - 1; j >= 0; j--)
        if (leaf_parent[j] < 0) {
            stack[top++] = -2 - j;
            stack[top++] = 0;
        }
    if (n_in > 0) {
        stack[top++] = 0;
        stack[top++] = 0;
    }
    while (top > 0) {
        int32_t up = stack[--top], place = stack[--top], v;
        if (place < 0) {
            v = leaf[next_leaf++];
            parent[v] = up;
            continue;
        }
        v = place < n_up ? up_rank[next_up++] : bottom_rank[next_bottom++];
        parent[v] = up;
        /* pushed in reverse so that they pop in order: leaves, then inner children */
        for (int32_t c = 3 * place + 3; c >= 3 * place + 1; c--)
            if (c < n_in) {
                stack[top++] = c;
                stack[top++] = v;
            }
        int32_t last = first_leaf[place];
        while (last < n_leaf && leaf_parent[last] == place)
            last++;
        for (int32_t j = last - 1; j >= first_leaf[place]; j--) {
            stack[top++] = -2 - j;
            stack[top++] = v;
        }
    }
}

rw_status rw_tree_trinary(int32_t n_ranks, int32_t root, rw_tree *out[3])
{
    return rw_tree_trinary_ordered(n_ranks, root, NULL, out);
}

/* Whether order holds each of 0..n-1 once; pos gets each rank's position. */
static int is_permutation(int32_t n, const int32_t *order, int32_t *pos)
{
    for (int32_t r = 0; r < n; r++)
        pos[r] = -1;
    for (int32_t j = 0; j < n; j++) {
        if (order[j] < 0 || order[j] >= n || pos[order[j]] >= 0)
            return 0;
        pos[order[j]] = j;
    }
    return 1;
}

rw_status rw_tree_trinary_ordered(int32_t n_ranks, int32_t root, const int32_t *order, rw_tree *out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = NULL;
    if (n_ranks < 1 || root < 0 || root >= n_ranks)
        return rw_fail(RW_ERR_ARG, "trinary trees: root %d of %d ranks", (int)root, (int)n_ranks);
    size_t n = (size_t)n_ranks;
    int32_t *rel = malloc(n * sizeof *rel), *parent = malloc(n * sizeof *parent);
    int32_t *inner = malloc(n * sizeof *inner), *leaf = malloc(n * sizeof *leaf);
    int32_t *slots = malloc(n * sizeof *slots);
    int32_t *leaf_parent = malloc(n * sizeof *leaf_parent);
    int32_t *stack = malloc(3 * n * sizeof *stack); /* 2 n for the walk, n for the upper ranks */
    int32_t *sib = malloc(n * sizeof *sib);
    rw_status st = rel && parent && inner && leaf && slots && sib && leaf_parent && stack
                       ? RW_OK
                       : rw_fail(RW_ERR_NOMEM, "trinary trees: out of memory for %d ranks", (int)n_ranks);
    /* position of the root in the order; rank at relative number v */
    int32_t at_root = root;
    if (st == RW_OK && order) {
        if (!is_permutation(n_ranks, order, slots))
            st = rw_fail(RW_ERR_ARG, "trinary trees: the order of %d ranks is not a permutation", (int)n_ranks);
        else
            at_root = slots[root];
    }
#define RANK_AT(v) (order ? order[((v) + at_root) % n_ranks] : ((v) + root) % n_ranks)
    for (int k = 0; k < 3 && st == RW_OK; k++) {
        build_one(n_ranks, k, rel, inner, leaf, slots, leaf_parent, stack);
        for (int32_t v = 0; v < n_ranks; v++) {
            int32_t r = RANK_AT(v);
            parent[r] = rel[v] < 0 ? -1 : RANK_AT(rel[v]);
            /* inner children first (their subtrees are deeper), then by v */
            int inner_v = v > 0 && (v - 1) % 3 == k;
            sib[r] = (inner_v ? 0 : n_ranks) + v;
        }
        st = rw_tree_from_parents(n_ranks, root, parent, sib, &out[k]);
    }
#undef RANK_AT
    if (st != RW_OK)
        for (int k = 0; k < 3; k++) {
            rw_tree_free(out[k]);
            out[k] = NULL;
        }
    free(rel);
    free(parent);
    free(inner);
    free(leaf);
    free(slots);
    free(sib);
    free(leaf_parent);
    free(stack);
    return st;
}

size_t rw_trinary_segment(size_t bytes)
{
    size_t part = rw_trinary_part(bytes, 0, NULL);
    if (part < 16384)
        return part > 0 ? part : 1;
    size_t seg = part / 16;
    seg = seg < 8192 ? 8192 : seg > 24576 ? 24576 : seg;
    return seg;
}

/* Cost of a segment-sized message from rank a to rank b and back. */
enum { ORDER_BYTES = 16384 };

static double both_ways(const rw_pnet *net, int32_t a, int32_t b)
{
    double al, be, total = 0;
    int32_t na = net->node_of[a], nb = net->node_of[b];
    rw_pnet_message_cost(net, na, nb, ORDER_BYTES, &al, &be);
    total += al + be * ORDER_BYTES;
    rw_pnet_message_cost(net, nb, na, ORDER_BYTES, &al, &be);
    total += al + be * ORDER_BYTES;
    return isfinite(total) ? total : INFINITY;
}

/* x below y beyond rounding (route latencies summed in another order) */
static int below(double x, double y)
{
    return x < y - 1e-9 * fabs(y);
}

rw_status rw_trinary_order(const rw_pnet *net, int32_t *order)
{
    if (!net || !order)
        return rw_fail(RW_ERR_ARG, "trinary order: a placed network and room for the order are required");
    int32_t n = net->n_ranks;
    if (n < 1)
        return RW_OK;
    double *near = malloc((size_t)n * sizeof *near); /* sum of costs to the placed ranks */
    char *placed = calloc((size_t)n, 1);
    if (!near || !placed) {
        free(near);
        free(placed);
        return rw_fail(RW_ERR_NOMEM, "trinary order: out of memory for %d ranks", (int)n);
    }
    int32_t last = 0;
    order[0] = 0;
    placed[0] = 1;
    for (int32_t u = 0; u < n; u++)
        near[u] = both_ways(net, 0, u);
    for (int32_t j = 1; j < n; j++) {
        int32_t best = -1;
        double best_d = INFINITY, best_near = INFINITY;
        for (int32_t u = 0; u < n; u++) {
            if (placed[u])
                continue;
            double d = both_ways(net, last, u);
            if (best < 0 || below(d, best_d) || (!below(best_d, d) && below(near[u], best_near))) {
                best = u;
                best_d = d;
                best_near = near[u];
            }
        }
        order[j] = last = best;
        placed[best] = 1;
        for (int32_t u = 0; u < n; u++)
            if (!placed[u])
                near[u] += both_ways(net, best, u);
    }
    free(near);
    free(placed);
    return RW_OK;
}

/* Sum of the costs between consecutive ranks of order (NULL: rank order). */
static double path_cost(const rw_pnet *net, const int32_t *order)
{
    double sum = 0;
    for (int32_t j = 0; j + 1 < net->n_ranks; j++)
        sum += order ? both_ways(net, order[j], order[j + 1]) : both_ways(net, j, j + 1);
    return sum;
}

rw_status rw_trinary_best_order(const rw_pnet *net, int32_t *order)
{
    rw_status st = rw_trinary_order(net, order);
    if (st != RW_OK)
        return st;
    if (!(path_cost(net, NULL) > RW_TRINARY_FOLLOWS * path_cost(net, order))) /* NaN: keep rank order too */
        for (int32_t r = 0; r < net->n_ranks; r++)
            order[r] = r;
    return RW_OK;
}

rw_status rw_coll_trinary_order(const rw_pnet *net, int32_t *order)
{
    if (!net || !order || net->n_ranks < 1)
        return rw_fail(RW_ERR_ARG, "rw_coll_trinary_order: a network with a placement and an order are required");
    return rw_trinary_best_order(net, order);
}
