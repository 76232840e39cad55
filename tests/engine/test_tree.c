/* Communication trees: building from parents, child order, refusals. */
#include "check.h"
#include "rankwise.h"
#include "rankwise_tree.h"

#include <string.h>

int main(void)
{
    /* 0 -> {2, 1}, 1 -> {3}; children ordered by `order`, not by rank. */
    int32_t parent[4] = {-1, 0, 0, 1}, order[4] = {0, 5, 1, 0};
    rw_tree *t = NULL;
    CHECK(rw_tree_from_parents(4, 0, parent, order, &t) == RW_OK);
    CHECK(rw_tree_check(t) == RW_OK);
    CHECK(t->first_child[1] - t->first_child[0] == 2);
    CHECK(t->child[t->first_child[0]] == 2 && t->child[t->first_child[0] + 1] == 1);
    CHECK(t->child[t->first_child[1]] == 3);
    CHECK(rw_tree_subtree_size(t, 0) == 4 && rw_tree_subtree_size(t, 1) == 2);
    t->parent[3] = 2; /* children lists no longer agree */
    CHECK(rw_tree_check(t) == RW_ERR_ARG);
    rw_tree_free(t);

    /* A single rank is a tree. */
    int32_t alone[1] = {-1};
    CHECK(rw_tree_from_parents(1, 0, alone, NULL, &t) == RW_OK && t->n_ranks == 1);
    rw_tree_free(t);

    /* Refusals: a cycle, a second root, a parent out of range, a bad root. */
    int32_t cycle[4] = {-1, 2, 3, 1}, two_roots[3] = {-1, -1, 0}, outside[3] = {-1, 7, 0};
    CHECK(rw_tree_from_parents(4, 0, cycle, NULL, &t) == RW_ERR_ARG && !t);
    CHECK(strstr(rw_last_error(), "cycle") != NULL);
    CHECK(rw_tree_from_parents(3, 0, two_roots, NULL, &t) == RW_ERR_ARG);
    CHECK(rw_tree_from_parents(3, 0, outside, NULL, &t) == RW_ERR_ARG);
    CHECK(rw_tree_from_parents(3, 3, outside, NULL, &t) == RW_ERR_ARG);
    CHECK_DONE();
}
