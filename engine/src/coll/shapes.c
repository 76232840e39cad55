/* The standard tree shapes (binomial, k-nomial, flat, chain, binary,
 * in-order binomial) and the two-level tree made of them; rankwise_tree.h
 * defines each shape. One definition serves the library's trees, the MPI
 * algorithms the tuner models and the tuner's trees over node leaders. */
#include "shapes.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    rw_tree_shape shape;
} NAMES[] = {{"binomial", RW_SHAPE_BINOMIAL}, {"knomial", RW_SHAPE_KNOMIAL}, {"flat", RW_SHAPE_FLAT},
             {"chain", RW_SHAPE_CHAIN},       {"binary", RW_SHAPE_BINARY},   {"inorder_binomial", RW_SHAPE_INORDER_BINOMIAL}};

rw_status rw_tree_shape_parse(const char *name, rw_tree_shape *out)
{
    for (size_t i = 0; name && i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!strcmp(name, NAMES[i].name)) {
            *out = NAMES[i].shape;
            return RW_OK;
        }
    return rw_fail(RW_ERR_ARG, "unknown tree shape '%s' (known: binomial, inorder_binomial, knomial, binary, chain, flat)",
                   name ? name : "(null)");
}

void rw_shape_position(rw_tree_shape shape, int32_t k, int32_t v, int32_t *pv, int32_t *pos)
{
    switch (shape) {
    case RW_SHAPE_FLAT:
        *pv = 0;
        *pos = v;
        return;
    case RW_SHAPE_CHAIN:
        *pv = v - 1;
        *pos = 0;
        return;
    case RW_SHAPE_BINARY:
        *pv = (v - 1) / 2;
        *pos = v;
        return;
    case RW_SHAPE_INORDER_BINOMIAL:
        *pv = v & (v - 1);
        *pos = v;
        return;
    case RW_SHAPE_BINOMIAL:
    case RW_SHAPE_KNOMIAL: {
        int32_t base = shape == RW_SHAPE_BINOMIAL ? 2 : k;
        /* v's lowest non-zero digit in base `base`: place, digit d */
        int64_t place = 1;
        while ((v / place) % base == 0)
            place *= base;
        int32_t d = (int32_t)((v / place) % base);
        *pv = v - d * (int32_t)place;
        /* The parent sends largest place first; within a place by d.
         * Its places run from below its own lowest digit (or above m
         * for the root) down to 1: a larger place sorts first. */
        *pos = (int32_t)(-(place * base) + d); /* negative: only the relative order matters */
        return;
    }
    }
    /* Callers check the shape first; an unknown one reads as flat rather
     * than leaving the outputs undefined (GCC sees this path once inlined). */
    *pv = 0;
    *pos = v;
}

/* Parents and send positions of a shape over m ranks rooted at index
 * root (indices 0..m-1): parent[i] is an index, order[i] is i's position
 * in its parent's send list. */
static void shape_parents(rw_tree_shape shape, int32_t m, int32_t root, int32_t k, int32_t *parent,
                          int32_t *order)
{
    for (int32_t v = 0; v < m; v++) {
        int32_t r = (v + root) % m;
        if (v == 0) {
            parent[r] = -1;
            order[r] = 0;
            continue;
        }
        int32_t pv, pos;
        rw_shape_position(shape, k, v, &pv, &pos);
        if (shape == RW_SHAPE_FLAT)
            pos = r; /* increasing real rank, as SMPI's flattree and Open MPI's linear */
        parent[r] = (pv + root) % m;
        order[r] = pos;
    }
}

static rw_status check_shape(rw_tree_shape shape, int32_t n, int32_t root, int32_t k)
{
    if (n < 1)
        return rw_fail(RW_ERR_ARG, "a tree needs at least one rank (got %d)", (int)n);
    if (root < 0 || root >= n)
        return rw_fail(RW_ERR_ARG, "tree root %d is not a rank of %d", (int)root, (int)n);
    if ((int)shape < RW_SHAPE_BINOMIAL || (int)shape > RW_SHAPE_INORDER_BINOMIAL)
        return rw_fail(RW_ERR_ARG, "unknown tree shape %d", (int)shape);
    if (shape == RW_SHAPE_KNOMIAL && k < 2)
        return rw_fail(RW_ERR_ARG, "a k-nomial tree needs k >= 2 (got %d)", (int)k);
    return RW_OK;
}

rw_status rw_tree_shape_build(rw_tree_shape shape, int32_t n, int32_t root, int32_t k, rw_tree **out)
{
    *out = NULL;
    rw_status st = check_shape(shape, n, root, k);
    if (st)
        return st;
    int32_t *parent = malloc((size_t)n * sizeof *parent), *order = malloc((size_t)n * sizeof *order);
    if (!parent || !order) {
        free(parent);
        free(order);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
    }
    shape_parents(shape, n, root, k, parent, order);
    st = rw_tree_from_parents(n, root, parent, order, out);
    free(parent);
    free(order);
    return st;
}

rw_status rw_tree_by_name(const char *shape, int32_t n, int32_t root, int32_t radix, rw_tree **out)
{
    rw_tree_shape s;
    *out = NULL;
    rw_status st = rw_tree_shape_parse(shape, &s);
    return st ? st : rw_tree_shape_build(s, n, root, radix, out);
}

rw_status rw_tree_hierarchical(int32_t n, int32_t root, const int32_t *node_of, rw_tree_shape between,
                               rw_tree_shape inside, int32_t k, rw_tree **out)
{
    *out = NULL;
    rw_status st = check_shape(between, n, root, k);
    if (!st)
        st = check_shape(inside, n, root, k);
    if (st)
        return st;
    /* leader_of[r]: the rank leading r's node (the root leads its own). */
    int32_t *leader_of = malloc((size_t)n * sizeof(int32_t)), *parent = malloc((size_t)n * sizeof(int32_t));
    int32_t *order = malloc((size_t)n * sizeof(int32_t)), *members = malloc((size_t)n * sizeof(int32_t));
    int32_t *sub_parent = malloc((size_t)n * sizeof(int32_t)), *sub_order = malloc((size_t)n * sizeof(int32_t));
    if (!leader_of || !parent || !order || !members || !sub_parent || !sub_order) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
        goto done;
    }
    for (int32_t r = 0; r < n; r++) {
        leader_of[r] = -1;
        for (int32_t q = 0; q < r && leader_of[r] < 0; q++)
            if (node_of[q] == node_of[r])
                leader_of[r] = leader_of[q];
        if (leader_of[r] < 0)
            leader_of[r] = r;
    }
    for (int32_t r = 0; r < n; r++)
        if (node_of[r] == node_of[root])
            leader_of[r] = root;
    /* Between leaders: members = leaders by rank. Leaders' sends to other
     * leaders come before their sends inside the node (order offset). */
    int32_t m = 0, root_index = 0;
    for (int32_t r = 0; r < n; r++)
        if (leader_of[r] == r) {
            if (r == root)
                root_index = m;
            members[m++] = r;
        }
    shape_parents(between, m, root_index, k, sub_parent, sub_order);
    for (int32_t i = 0; i < m; i++) {
        parent[members[i]] = sub_parent[i] < 0 ? -1 : members[sub_parent[i]];
        order[members[i]] = sub_order[i];
    }
    int32_t after = INT32_MIN / 2; /* every leader-level order is above this... */
    for (int32_t i = 0; i < m; i++)
        if (sub_order[i] > after)
            after = sub_order[i];
    after += 1; /* ...and every inside-node order is at least this */
    for (int32_t l = 0; l < n; l++) {
        if (leader_of[l] != l)
            continue;
        int32_t c = 0, lead_index = 0;
        for (int32_t r = 0; r < n; r++)
            if (leader_of[r] == l) {
                if (r == l)
                    lead_index = c;
                members[c++] = r;
            }
        shape_parents(inside, c, lead_index, k, sub_parent, sub_order);
        int32_t lowest = 0;
        for (int32_t i = 0; i < c; i++)
            if (sub_order[i] < lowest)
                lowest = sub_order[i];
        for (int32_t i = 0; i < c; i++)
            if (members[i] != l) {
                parent[members[i]] = members[sub_parent[i]];
                order[members[i]] = after + (sub_order[i] - lowest);
            }
    }
    st = rw_tree_from_parents(n, root, parent, order, out);
done:
    free(leader_of);
    free(parent);
    free(order);
    free(members);
    free(sub_parent);
    free(sub_order);
    return st;
}

/* Lowest and highest rank of r's subtree; -1 in *ok when not contiguous. */
static int32_t interval(const rw_tree *t, int32_t r, int32_t *lo, int32_t *hi, int *ok)
{
    int32_t count = 1;
    *lo = *hi = r;
    for (int32_t i = t->first_child[r]; i < t->first_child[r + 1]; i++) {
        int32_t clo, chi;
        count += interval(t, t->child[i], &clo, &chi, ok);
        if (clo < *lo)
            *lo = clo;
        if (chi > *hi)
            *hi = chi;
    }
    if (*hi - *lo + 1 != count)
        *ok = 0;
    return count;
}

int rw_tree_is_in_order(const rw_tree *t)
{
    int ok = 1;
    int32_t lo, hi;
    interval(t, t->root, &lo, &hi, &ok);
    return ok;
}
