/* The standard tree shapes: binomial against SimGrid 3.32's binomial_tree
 * bcast loop restated, k-nomial by hand, flat, chain, binary, in-order
 * binomial, the same shapes by name, the two-level tree, in-order
 * detection and refusals. */
#include "check.h"
#include "rankwise_coll_tune.h"
#include "rankwise_tree.h"

#include <string.h>

static int children(const rw_tree *t, int32_t r, int32_t *out)
{
    int c = 0;
    for (int32_t i = t->first_child[r]; i < t->first_child[r + 1]; i++)
        out[c++] = t->child[i];
    return c;
}

/* SMPI's bcast__binomial_tree: whom `rank` receives from, whom it sends
 * to, in order (the loops of bcast-binomial-tree.cpp). */
static int smpi_binomial(int n, int root, int rank, int *src, int *dst)
{
    int rel = rank >= root ? rank - root : rank - root + n, mask = 1, c = 0;
    *src = -1;
    while (mask < n) {
        if (rel & mask) {
            *src = rank - mask < 0 ? rank - mask + n : rank - mask;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            dst[c++] = rank + mask >= n ? rank + mask - n : rank + mask;
    return c;
}

static int same_tree(const rw_tree *a, const rw_tree *b)
{
    if (a->n_ranks != b->n_ranks || a->root != b->root)
        return 0;
    return !memcmp(a->parent, b->parent, sizeof(int32_t) * (size_t)a->n_ranks) &&
           !memcmp(a->first_child, b->first_child, sizeof(int32_t) * (size_t)(a->n_ranks + 1)) &&
           !memcmp(a->child, b->child, sizeof(int32_t) * (size_t)(a->n_ranks - 1));
}

int main(void)
{
    int32_t got[64];
    int dst[64], src;
    rw_tree *t = NULL, *u = NULL;

    /* binomial = SMPI's binomial_tree, every size to 40 and every root */
    for (int n = 1; n <= 40; n++)
        for (int root = 0; root < n; root++) {
            CHECK(rw_tree_shape_build(RW_SHAPE_BINOMIAL, n, root, 0, &t) == RW_OK);
            CHECK(rw_tree_check(t) == RW_OK);
            for (int r = 0; r < n; r++) {
                int c = smpi_binomial(n, root, r, &src, dst);
                CHECK(t->parent[r] == src);
                CHECK(children(t, r, got) == c);
                for (int i = 0; i < c; i++)
                    CHECK(got[i] == dst[i]);
            }
            /* k = 2 is the binomial tree */
            CHECK(rw_tree_shape_build(RW_SHAPE_KNOMIAL, n, root, 2, &u) == RW_OK);
            CHECK(same_tree(t, u));
            /* binomial is in order when rooted at 0 */
            if (root == 0)
                CHECK(rw_tree_is_in_order(t));
            rw_tree_free(t);
            rw_tree_free(u);
        }

    /* 3-nomial over 10 ranks: 0 -> 9, 3, 6, 1, 2; 3 -> 4, 5; 6 -> 7, 8 */
    CHECK(rw_tree_shape_build(RW_SHAPE_KNOMIAL, 10, 0, 3, &t) == RW_OK);
    int32_t k0[] = {9, 3, 6, 1, 2};
    CHECK(children(t, 0, got) == 5 && !memcmp(got, k0, sizeof k0));
    CHECK(children(t, 3, got) == 2 && got[0] == 4 && got[1] == 5);
    CHECK(children(t, 6, got) == 2 && got[0] == 7 && got[1] == 8);
    CHECK(children(t, 9, got) == 0 && t->parent[9] == 0);
    CHECK(rw_tree_is_in_order(t));
    rw_tree_free(t);
    /* rooted at 4: the same shape shifted by 4 (mod 10) */
    CHECK(rw_tree_shape_build(RW_SHAPE_KNOMIAL, 10, 4, 3, &t) == RW_OK);
    int32_t k4[] = {3, 7, 0, 5, 6};
    CHECK(children(t, 4, got) == 5 && !memcmp(got, k4, sizeof k4));
    CHECK(t->parent[1] == 0 && t->parent[2] == 0 && t->parent[8] == 7);
    rw_tree_free(t);

    /* flat: root 2 of 5 sends to 0, 1, 3, 4 */
    CHECK(rw_tree_shape_build(RW_SHAPE_FLAT, 5, 2, 0, &t) == RW_OK);
    int32_t f2[] = {0, 1, 3, 4};
    CHECK(children(t, 2, got) == 4 && !memcmp(got, f2, sizeof f2));
    CHECK(rw_tree_is_in_order(t)); /* every subtree is one rank or all */
    rw_tree_free(t);

    /* chain: root 3 of 5: 3 -> 4 -> 0 -> 1 -> 2; in order only from 0 */
    CHECK(rw_tree_shape_build(RW_SHAPE_CHAIN, 5, 3, 0, &t) == RW_OK);
    CHECK(t->parent[4] == 3 && t->parent[0] == 4 && t->parent[1] == 0 && t->parent[2] == 1);
    CHECK(!rw_tree_is_in_order(t));
    rw_tree_free(t);
    CHECK(rw_tree_shape_build(RW_SHAPE_CHAIN, 5, 0, 0, &t) == RW_OK);
    CHECK(rw_tree_is_in_order(t));
    rw_tree_free(t);

    /* two levels: nodes {0,1} {2,3} {4,5}, root 3 leads its node; leaders
     * 0, 3, 4 in a binomial tree rooted at 3: 3 -> 0, 4 (largest first),
     * then 3 -> 2 inside; 0 -> 1, 4 -> 5 */
    int32_t nodes[6] = {7, 7, 1, 1, 5, 5};
    CHECK(rw_tree_hierarchical(6, 3, nodes, RW_SHAPE_BINOMIAL, RW_SHAPE_BINOMIAL, 0, &t) == RW_OK);
    CHECK(rw_tree_check(t) == RW_OK);
    int32_t h3[] = {0, 4, 2};
    CHECK(children(t, 3, got) == 3 && !memcmp(got, h3, sizeof h3));
    CHECK(t->parent[1] == 0 && t->parent[5] == 4 && t->parent[0] == 3);
    rw_tree_free(t);
    /* interleaved nodes {0,2,4} {1,3,5}, root 0, flat inside: 0 -> 1, 2, 4 */
    int32_t mixed[6] = {0, 1, 0, 1, 0, 1};
    CHECK(rw_tree_hierarchical(6, 0, mixed, RW_SHAPE_BINOMIAL, RW_SHAPE_FLAT, 0, &t) == RW_OK);
    int32_t m0[] = {1, 2, 4};
    CHECK(children(t, 0, got) == 3 && !memcmp(got, m0, sizeof m0));
    CHECK(children(t, 1, got) == 2 && got[0] == 3 && got[1] == 5);
    CHECK(!rw_tree_is_in_order(t));
    rw_tree_free(t);
    /* one rank per node: the between shape alone */
    int32_t own[5] = {0, 1, 2, 3, 4};
    CHECK(rw_tree_hierarchical(5, 1, own, RW_SHAPE_BINOMIAL, RW_SHAPE_FLAT, 0, &t) == RW_OK);
    CHECK(rw_tree_shape_build(RW_SHAPE_BINOMIAL, 5, 1, 0, &u) == RW_OK);
    CHECK(same_tree(t, u));
    rw_tree_free(t);
    rw_tree_free(u);

    /* binary: parent (v - 1) / 2 in relative ranks; root 2 of 7: 2 -> 3, 4; 3 -> 5, 6; 4 -> 0, 1 */
    CHECK(rw_tree_shape_build(RW_SHAPE_BINARY, 7, 2, 0, &t) == RW_OK);
    CHECK(rw_tree_check(t) == RW_OK);
    CHECK(children(t, 2, got) == 2 && got[0] == 3 && got[1] == 4);
    CHECK(children(t, 3, got) == 2 && got[0] == 5 && got[1] == 6);
    CHECK(children(t, 4, got) == 2 && got[0] == 0 && got[1] == 1);
    rw_tree_free(t);
    /* in-order binomial: the binomial tree, children smallest first */
    CHECK(rw_tree_shape_build(RW_SHAPE_INORDER_BINOMIAL, 8, 0, 0, &t) == RW_OK);
    CHECK(rw_tree_shape_build(RW_SHAPE_BINOMIAL, 8, 0, 0, &u) == RW_OK);
    for (int32_t r = 0; r < 8; r++)
        CHECK(t->parent[r] == u->parent[r]);
    int32_t i0[] = {1, 2, 4};
    CHECK(children(t, 0, got) == 3 && !memcmp(got, i0, sizeof i0));
    rw_tree_free(t);
    rw_tree_free(u);

    /* by name: the same trees as by shape; flat sends in real rank order
     * from any root (Open MPI's linear algorithms) */
    static const char *names[] = {"binomial", "knomial", "flat", "chain", "binary", "inorder_binomial"};
    for (int s = 0; s < 6; s++) {
        rw_tree_shape shape;
        CHECK(rw_tree_shape_parse(names[s], &shape) == RW_OK && (int)shape == s);
        CHECK(rw_tree_by_name(names[s], 11, 6, 3, &t) == RW_OK);
        CHECK(rw_tree_shape_build(shape, 11, 6, 3, &u) == RW_OK);
        CHECK(same_tree(t, u));
        rw_tree_free(t);
        rw_tree_free(u);
    }
    CHECK(rw_tree_by_name("flat", 5, 3, 0, &t) == RW_OK);
    int32_t f3[] = {0, 1, 2, 4};
    CHECK(children(t, 3, got) == 4 && !memcmp(got, f3, sizeof f3));
    rw_tree_free(t);

    /* refusals */
    rw_tree_shape shape;
    CHECK(rw_tree_shape_parse("trinomial", &shape) == RW_ERR_ARG && strstr(rw_last_error(), "binary"));
    CHECK(rw_tree_shape_parse(NULL, &shape) == RW_ERR_ARG);
    CHECK(rw_tree_by_name("trinomial", 4, 0, 2, &t) == RW_ERR_ARG && !t);
    CHECK(rw_tree_shape_build(RW_SHAPE_KNOMIAL, 4, 0, 1, &t) == RW_ERR_ARG && !t);
    CHECK(rw_tree_shape_build(RW_SHAPE_FLAT, 0, 0, 0, &t) == RW_ERR_ARG);
    CHECK(rw_tree_shape_build(RW_SHAPE_FLAT, 4, 4, 0, &t) == RW_ERR_ARG);
    CHECK(rw_tree_shape_build((rw_tree_shape)9, 4, 0, 0, &t) == RW_ERR_ARG);
    CHECK(rw_tree_shape_build(RW_SHAPE_CHAIN, 1, 0, 0, &t) == RW_OK && t->n_ranks == 1);
    rw_tree_free(t);
    CHECK_DONE();
}
