/* Communication trees: building one from parents, checking it. */
#include "internal.h"
#include "rankwise_tree.h"

#include <stdlib.h>
#include <string.h>

void rw_tree_free(rw_tree *t)
{
    if (!t)
        return;
    free(t->parent);
    free(t->first_child);
    free(t->child);
    free(t);
}

/* Children of one node sort by (order, rank). */
static const int32_t *sort_order;
static int by_order(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int32_t ox = sort_order ? sort_order[x] : x, oy = sort_order ? sort_order[y] : y;
    return ox != oy ? (ox < oy ? -1 : 1) : (x > y) - (x < y);
}

/* Every rank reaches the root through parents, in at most n steps. */
static rw_status check_parents(int32_t n, int32_t root, const int32_t *parent)
{
    if (n < 1)
        return rw_fail(RW_ERR_ARG, "a tree needs at least one rank (got %d)", (int)n);
    if (root < 0 || root >= n)
        return rw_fail(RW_ERR_ARG, "tree root %d is not a rank of %d", (int)root, (int)n);
    if (parent[root] != -1)
        return rw_fail(RW_ERR_ARG, "the root %d has parent %d (must be -1)", (int)root, (int)parent[root]);
    for (int32_t r = 0; r < n; r++) {
        if (r == root)
            continue;
        if (parent[r] < 0 || parent[r] >= n || parent[r] == r)
            return rw_fail(RW_ERR_ARG, "rank %d: parent %d is not another rank of %d", (int)r,
                           (int)parent[r], (int)n);
    }
    /* Walk up from each rank, marking ranks known to reach the root. */
    uint8_t *ok = calloc((size_t)n, 1);
    if (!ok)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
    ok[root] = 1;
    for (int32_t r = 0; r < n; r++) {
        int32_t v = r, steps = 0;
        while (!ok[v] && steps <= n) {
            v = parent[v];
            steps++;
        }
        if (!ok[v]) {
            free(ok);
            return rw_fail(RW_ERR_ARG, "rank %d does not reach the root %d (a cycle)", (int)r, (int)root);
        }
        for (v = r; !ok[v]; v = parent[v])
            ok[v] = 1;
    }
    free(ok);
    return RW_OK;
}

rw_status rw_tree_from_parents(int32_t n, int32_t root, const int32_t *parent, const int32_t *order,
                               rw_tree **out)
{
    *out = NULL;
    rw_status st = check_parents(n, root, parent);
    if (st)
        return st;
    rw_tree *t = calloc(1, sizeof *t);
    if (!t)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree");
    t->n_ranks = n;
    t->root = root;
    t->parent = malloc((size_t)n * sizeof *t->parent);
    t->first_child = calloc((size_t)n + 1, sizeof *t->first_child);
    t->child = malloc((size_t)(n > 1 ? n - 1 : 1) * sizeof *t->child);
    if (!t->parent || !t->first_child || !t->child) {
        rw_tree_free(t);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
    }
    memcpy(t->parent, parent, (size_t)n * sizeof *parent);
    for (int32_t r = 0; r < n; r++)
        if (r != root)
            t->first_child[parent[r] + 1]++;
    for (int32_t r = 0; r < n; r++)
        t->first_child[r + 1] += t->first_child[r];
    int32_t *fill = malloc((size_t)n * sizeof *fill);
    if (!fill) {
        rw_tree_free(t);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
    }
    memcpy(fill, t->first_child, (size_t)n * sizeof *fill);
    for (int32_t r = 0; r < n; r++)
        if (r != root)
            t->child[fill[parent[r]]++] = r;
    free(fill);
    sort_order = order; /* not thread-safe; trees are built at set-up */
    for (int32_t r = 0; r < n; r++)
        qsort(t->child + t->first_child[r], (size_t)(t->first_child[r + 1] - t->first_child[r]),
              sizeof *t->child, by_order);
    sort_order = NULL;
    *out = t;
    return RW_OK;
}

rw_status rw_tree_check(const rw_tree *t)
{
    if (!t || !t->parent || !t->first_child || !t->child)
        return rw_fail(RW_ERR_ARG, "not a tree (NULL)");
    rw_status st = check_parents(t->n_ranks, t->root, t->parent);
    if (st)
        return st;
    if (t->first_child[0] != 0 || t->first_child[t->n_ranks] != t->n_ranks - 1)
        return rw_fail(RW_ERR_ARG, "child offsets do not cover the %d non-root ranks", (int)t->n_ranks - 1);
    for (int32_t r = 0; r < t->n_ranks; r++)
        for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++) {
            int32_t c = t->child[k];
            if (c < 0 || c >= t->n_ranks || t->parent[c] != r)
                return rw_fail(RW_ERR_ARG, "rank %d lists child %d whose parent is not %d", (int)r,
                               (int)c, (int)r);
        }
    return RW_OK;
}

int32_t rw_tree_subtree_size(const rw_tree *t, int32_t r)
{
    int32_t size = 1;
    for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++)
        size += rw_tree_subtree_size(t, t->child[k]);
    return size;
}
