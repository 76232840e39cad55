/* The search state's partner-only deltas agree with full re-costing. */
#include <math.h>
#include <stdlib.h>

#include "../../engine/src/map/context.h"
#include "check.h"
#include "map_fixtures.h"

static double full(const rw_matrix *t, const rw_network *net, rw_objective o, const int32_t *node_of)
{
    double c = -1;
    CHECK(rw_map_cost(t, net, o, node_of, &c) == RW_OK);
    return c;
}

static void random_walk(rw_objective obj, uint64_t seed)
{
    fx_seed(seed);
    int n = 5 + fx_below(30), nn = 2 + fx_below(6);
    rw_network *net = fx_network(nn, 1, 8);
    while (rw_network_total_slots(net) < n) net->slots[fx_below(nn)]++;
    rw_matrix *t = fx_traffic(n, fx_uniform(0.05, 0.6));
    int32_t *node_of = malloc(n * sizeof *node_of);
    fx_placement(net, n, node_of);
    rw_mapctx c;
    CHECK(rw_mapctx_init(&c, t, net, obj, node_of) == RW_OK);
    CHECK_CLOSE(rw_score_value(obj, c.score), full(t, net, obj, node_of), 1e-9);
    for (int step = 0; step < 300; step++) {
        int r = fx_below(n);
        if (fx_below(2)) {
            int b = fx_below(nn);
            if (c.load[b] >= net->slots[b]) continue;
            rw_score e = rw_mapctx_eval_move(&c, r, b);
            node_of[r] = b;
            CHECK_CLOSE(rw_score_value(obj, e), full(t, net, obj, node_of), 1e-9);
            rw_mapctx_move(&c, r, b);
        } else {
            int s = fx_below(n);
            rw_score e = rw_mapctx_eval_swap(&c, r, s);
            int32_t tmp = node_of[r];
            node_of[r] = node_of[s], node_of[s] = tmp;
            CHECK_CLOSE(rw_score_value(obj, e), full(t, net, obj, node_of), 1e-9);
            rw_mapctx_swap(&c, r, s);
        }
        CHECK_CLOSE(rw_score_value(obj, c.score), full(t, net, obj, node_of), 1e-9);
        for (int i = 0; i < n; i++) CHECK(c.node_of[i] == node_of[i]);
    }
    CHECK(rw_mapctx_check(net, n, c.node_of) == RW_OK);
    rw_mapctx_free(&c);
    free(node_of);
    rw_matrix_free(t);
    rw_network_free(net);
}

static void test_self_traffic_is_free(void)
{
    int32_t src[] = {0, 0, 1}, dst[] = {0, 1, 1};
    int64_t msgs[] = {5, 1, 7}, bytes[] = {100, 10, 1000};
    rw_matrix *t = NULL;
    CHECK(rw_matrix_create(2, 3, src, dst, msgs, bytes, &t) == RW_OK);
    rw_network *net = NULL;
    CHECK(rw_network_create(2, NULL, &net) == RW_OK);
    net->alpha[1] = 2, net->beta[1] = 3, net->alpha[0] = net->alpha[3] = 1000;
    int32_t node_of[] = {0, 1};
    double c;
    CHECK(rw_map_cost(t, net, RW_OBJ_TIME, node_of, &c) == RW_OK);
    CHECK_CLOSE(c, 1 * 2 + 10 * 3, 1e-12);
    CHECK(rw_map_cost(t, net, RW_OBJ_BOTTLENECK, node_of, &c) == RW_OK);
    CHECK_CLOSE(c, 32, 1e-12);
    int64_t cut, total;
    CHECK(rw_map_cut(t, node_of, 1, &cut, &total) == RW_OK);
    CHECK(cut == 1 && total == 1);
    node_of[1] = 5;
    CHECK(rw_map_cost(t, net, RW_OBJ_TIME, node_of, &c) == RW_ERR_ARG);
    rw_matrix_free(t);
    rw_network_free(net);
}

static void test_over_capacity_refused(void)
{
    rw_matrix *t = fx_traffic(4, 0.5);
    rw_network *net = NULL;
    int32_t slots[] = {1, 3};
    CHECK(rw_network_create(2, slots, &net) == RW_OK);
    int32_t node_of[] = {0, 0, 1, 1};
    rw_mapctx c;
    CHECK(rw_mapctx_init(&c, t, net, RW_OBJ_TIME, node_of) == RW_ERR_ARG);
    CHECK(rw_mapctx_check(net, 4, node_of) != RW_OK);
    rw_matrix_free(t);
    rw_network_free(net);
}

int main(void)
{
    for (uint64_t s = 1; s <= 40; s++) {
        random_walk(RW_OBJ_TIME, s);
        random_walk(RW_OBJ_BOTTLENECK, 1000 + s);
    }
    test_self_traffic_is_free();
    test_over_capacity_refused();
    CHECK_DONE();
}
