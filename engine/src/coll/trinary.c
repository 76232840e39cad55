/* Triple trinary trees: three spanning trees whose inner ranks are
 * disjoint, so that a broadcast sends one third of the message down each
 * at once and no rank sends more than the whole message (Ajima 2018, the
 * Tofu interconnect's "triple trinary tree" broadcast). See trinary.h. */
#include "trinary.h"

#include "internal.h"

#include <stdlib.h>

size_t rw_trinary_part(size_t bytes, int k, size_t *offset)
{
    size_t base = bytes / 3, rest = bytes % 3;
    if (offset)
        *offset = (size_t)k * base + ((size_t)k < rest ? (size_t)k : rest);
    return base + ((size_t)k < rest);
}

/* Tree k in relative numbering (v = 0 is the root): parent[v]. */
static void build_one(int32_t n, int k, int32_t *parent, int32_t *inner, int32_t *leaf, int32_t *slots)
{
    int32_t m = n - 1, n_in = 0, n_leaf = 0;
    for (int32_t v = 1; v <= m; v++) {
        if ((v - 1) % 3 == k)
            inner[n_in++] = v;
        else
            leaf[n_leaf++] = v;
    }
    parent[0] = -1;
    if (n_in == 0) { /* fewer than k + 1 other ranks: the root sends to all */
        for (int32_t i = 0; i < n_leaf; i++)
            parent[leaf[i]] = 0;
        return;
    }
    parent[inner[0]] = 0;
    for (int32_t i = 0; i < n_in; i++)
        slots[i] = 3;
    for (int32_t i = 1; i < n_in; i++) { /* ternary heap of the inner ranks */
        int32_t up = (i - 1) / 3;
        parent[inner[i]] = inner[up];
        slots[up]--;
    }
    /* leaves, in rank order, on the free places in inner order (the heap's
     * deepest inner ranks have them all); the root takes what is left */
    int32_t i = 0;
    for (int32_t j = 0; j < n_leaf; j++) {
        while (i < n_in && slots[i] == 0)
            i++;
        if (i < n_in) {
            parent[leaf[j]] = inner[i];
            slots[i]--;
        } else {
            parent[leaf[j]] = 0;
        }
    }
}

rw_status rw_tree_trinary(int32_t n_ranks, int32_t root, rw_tree *out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = NULL;
    if (n_ranks < 1 || root < 0 || root >= n_ranks)
        return rw_fail(RW_ERR_ARG, "trinary trees: root %d of %d ranks", (int)root, (int)n_ranks);
    size_t n = (size_t)n_ranks;
    int32_t *rel = malloc(n * sizeof *rel), *parent = malloc(n * sizeof *parent);
    int32_t *inner = malloc(n * sizeof *inner), *leaf = malloc(n * sizeof *leaf);
    int32_t *slots = malloc(n * sizeof *slots), *order = malloc(n * sizeof *order);
    rw_status st = rel && parent && inner && leaf && slots && order
                       ? RW_OK
                       : rw_fail(RW_ERR_NOMEM, "trinary trees: out of memory for %d ranks", (int)n_ranks);
    for (int k = 0; k < 3 && st == RW_OK; k++) {
        build_one(n_ranks, k, rel, inner, leaf, slots);
        for (int32_t v = 0; v < n_ranks; v++) {
            int32_t r = (v + root) % n_ranks;
            parent[r] = rel[v] < 0 ? -1 : (rel[v] + root) % n_ranks;
            /* inner children first (their subtrees are deeper), then by v */
            int inner_v = v > 0 && (v - 1) % 3 == k;
            order[r] = (inner_v ? 0 : n_ranks) + v;
        }
        st = rw_tree_from_parents(n_ranks, root, parent, order, &out[k]);
    }
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
    free(order);
    return st;
}

size_t rw_trinary_segment(size_t bytes)
{
    size_t part = rw_trinary_part(bytes, 0, NULL);
    if (part < 16384)
        return part > 0 ? part : 1;
    size_t seg = part / 8;
    seg = seg < 8192 ? 8192 : seg > 61440 ? 61440 : seg;
    return seg;
}
