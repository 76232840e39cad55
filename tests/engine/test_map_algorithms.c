/* The mapping algorithms through rw_map: valid, never worse than the
 * start, deterministic; exhaustive search equal to brute force. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/src/map/algorithms.h"
#include "check.h"
#include "map_fixtures.h"

/* Brute force over every assignment of n ranks to nodes within slots. */
static void brute(const rw_matrix *t, const rw_network *net, rw_objective o, int n, int r,
                  int32_t *node_of, int32_t *load, double *best)
{
    if (r == n) {
        double c;
        rw_map_cost(t, net, o, node_of, &c);
        if (c < *best) *best = c;
        return;
    }
    for (int v = 0; v < net->n_nodes; v++) {
        if (load[v] >= net->slots[v]) continue;
        load[v]++;
        node_of[r] = v;
        brute(t, net, o, n, r + 1, node_of, load, best);
        load[v]--;
    }
}

static rw_map_options opts(rw_algorithm a, rw_objective o)
{
    rw_map_options op = rw_map_options_default();
    op.algorithm = a;
    op.objective = o;
    op.selection = RW_SELECT_ALL;
    op.seed = 7;
    op.min_gain = 0; /* compare the algorithms themselves */
    return op;
}

static void test_exhaustive_is_optimal(void)
{
    for (int inst = 0; inst < 60; inst++) {
        fx_seed(500 + inst);
        int n = 2 + fx_below(6), nn = 2 + fx_below(3);
        rw_network *net = fx_network(nn, 1, 3);
        while (rw_network_total_slots(net) < n) net->slots[fx_below(nn)]++;
        rw_matrix *t = fx_traffic(n, 0.5);
        rw_objective o = inst % 2 ? RW_OBJ_BOTTLENECK : RW_OBJ_TIME;
        int32_t node_of[16], load[8] = {0};
        double best = INFINITY;
        brute(t, net, o, n, 0, node_of, load, &best);
        rw_map_options op = opts(RW_ALG_EXHAUSTIVE, o);
        rw_map_result res;
        CHECK(rw_map(t, net, &op, &res) == RW_OK);
        CHECK_CLOSE(res.cost, best, 1e-9);
        CHECK(fx_valid(net, n, res.node_of, res.slot_of));
        double again;
        rw_map_cost(t, net, o, res.node_of, &again);
        CHECK_CLOSE(again, res.cost, 1e-9);
        rw_map_result_free(&res);
        rw_matrix_free(t);
        rw_network_free(net);
    }
}

static void test_heuristics_valid_monotone_deterministic(void)
{
    rw_algorithm algs[] = {RW_ALG_BLOCK, RW_ALG_GREEDY, RW_ALG_REFINE, RW_ALG_ANNEAL, RW_ALG_AUTO};
    for (int inst = 0; inst < 40; inst++) {
        fx_seed(900 + inst);
        int n = 3 + fx_below(30), nn = 2 + fx_below(8);
        rw_network *net = fx_network(nn, 1, 8);
        while (rw_network_total_slots(net) < n) net->slots[fx_below(nn)]++;
        rw_matrix *t = fx_traffic(n, fx_uniform(0.02, 0.5));
        for (size_t k = 0; k < sizeof algs / sizeof *algs; k++) {
            rw_objective o = (inst + k) % 3 == 0 ? RW_OBJ_BOTTLENECK : RW_OBJ_TIME;
            rw_map_options op = opts(algs[k], o);
            op.selection = inst % 2 ? RW_SELECT_ALL : RW_SELECT_WEIGHTED;
            rw_map_result a, b;
            CHECK(rw_map(t, net, &op, &a) == RW_OK);
            CHECK(rw_map(t, net, &op, &b) == RW_OK);
            CHECK(fx_valid(net, n, a.node_of, a.slot_of));
            CHECK(a.cost <= a.block_cost * (1 + 1e-12));
            CHECK(a.cost <= a.start_cost * (1 + 1e-12));
            CHECK(memcmp(a.node_of, b.node_of, n * sizeof *a.node_of) == 0);
            CHECK(memcmp(a.slot_of, b.slot_of, n * sizeof *a.slot_of) == 0);
            double c;
            rw_map_cost(t, net, o, a.node_of, &c);
            CHECK_CLOSE(c, a.cost, 1e-9);
            if (algs[k] == RW_ALG_BLOCK) CHECK_CLOSE(a.cost, a.block_cost, 1e-12);
            rw_map_result_free(&a);
            rw_map_result_free(&b);
        }
        rw_matrix_free(t);
        rw_network_free(net);
    }
}

/* Two racks, the second four times slower inside and across: a job that
 * fits in one rack lands in the first; the slow node is avoided. */
static void test_selection(void)
{
    int nn = 8;
    rw_network *net = NULL;
    int32_t slots[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    CHECK(rw_network_create(nn, slots, &net) == RW_OK);
    for (int a = 0; a < nn; a++)
        for (int b = 0; b < nn; b++) {
            double al = a == b ? 1e-7 : (a / 4 == b / 4 ? 2e-6 : 1e-5);
            if ((a == 1 || b == 1) && a != b) al *= 10; /* a degraded node */
            net->alpha[a * nn + b] = al;
            net->beta[a * nn + b] = al * 1e-4;
        }
    rw_matrix *t = fx_traffic(6, 1.0);
    int32_t keep[8], n_keep;
    CHECK(rw_map_select_nodes(net, t, 6, RW_SELECT_GREEDY, keep, &n_keep) == RW_OK);
    CHECK(n_keep == 3);
    for (int k = 0; k < n_keep; k++) CHECK(keep[k] != 1 && keep[k] < 4);
    CHECK(rw_map_select_nodes(net, t, 6, RW_SELECT_FIRST, keep, &n_keep) == RW_OK);
    CHECK(n_keep == 3 && keep[0] == 0 && keep[1] == 1 && keep[2] == 2);
    CHECK(rw_map_select_nodes(net, t, 17, RW_SELECT_GREEDY, keep, &n_keep) == RW_ERR_ARG);

    rw_map_options op = rw_map_options_default();
    rw_map_result res;
    CHECK(rw_map(t, net, &op, &res) == RW_OK);
    CHECK(res.n_selected == 3);
    for (int r = 0; r < 6; r++) CHECK(res.node_of[r] != 1 && res.node_of[r] < 4);
    CHECK(res.cost < res.block_cost);
    rw_map_result_free(&res);
    rw_matrix_free(t);
    rw_network_free(net);
}

static void test_errors(void)
{
    fx_seed(3);
    rw_network *net = fx_network(2, 2, 2);
    rw_matrix *t = fx_traffic(5, 0.5);
    rw_map_options op = rw_map_options_default();
    rw_map_result res;
    CHECK(rw_map(t, net, &op, &res) == RW_ERR_ARG); /* 4 slots, 5 ranks */
    CHECK(strstr(rw_last_error(), "4 slots for 5 ranks") != NULL);
    net->slots[0] = 20;
    rw_matrix_free(t);
    t = fx_traffic(12, 0.3);
    op.algorithm = RW_ALG_EXHAUSTIVE;
    CHECK(rw_map(t, net, &op, &res) == RW_ERR_ARG);
    CHECK(strstr(rw_last_error(), "the exhaustive algorithm is for at most 10 ranks (the job has 12)") != NULL);
    op.algorithm = RW_ALG_STENCIL;
    CHECK(rw_map(t, net, &op, &res) == RW_ERR_ARG);
    CHECK(strstr(rw_last_error(), "process grid") != NULL);
    op.algorithm = (rw_algorithm)99;
    CHECK(rw_map(t, net, &op, &res) == RW_ERR_ARG);
    CHECK(rw_algorithm_from_name("anneal") == RW_ALG_ANNEAL);
    CHECK(rw_algorithm_from_name("nope") == -1);
    CHECK(strcmp(rw_algorithm_name(RW_ALG_MULTILEVEL), "multilevel") == 0);
    /* Every enumeration by name, both ways, for the bindings. */
    for (int a = 0; a < RW_ALG_COUNT; a++)
        CHECK(rw_algorithm_from_name(rw_algorithm_name((rw_algorithm)a)) == a);
    CHECK(rw_algorithm_name(RW_ALG_COUNT) == NULL && rw_algorithm_name((rw_algorithm)-1) == NULL);
    CHECK(rw_objective_from_name("bottleneck") == RW_OBJ_BOTTLENECK && rw_objective_from_name("hop-bytes") == -1);
    CHECK(strcmp(rw_objective_name(RW_OBJ_TIME), "time") == 0 && rw_objective_name(2) == NULL);
    CHECK(rw_node_selection_from_name("weighted") == RW_SELECT_WEIGHTED);
    CHECK(strcmp(rw_node_selection_name(RW_SELECT_ALL), "all") == 0 && rw_node_selection_name(4) == NULL);
    CHECK(rw_status_from_name("parse") == RW_ERR_PARSE && strcmp(rw_status_name(RW_OK), "ok") == 0);
    CHECK(rw_status_name(7) == NULL && rw_status_from_name(NULL) == -1);
    CHECK(rw_pair_state_from_name("missing") == RW_PAIR_MISSING && rw_probe_mode_from_name("isolated") == RW_MODE_ISOLATED);
    CHECK(rw_abi_version() == RW_ABI_VERSION);
    rw_matrix_free(t);
    rw_network_free(net);
}

static void test_network_from_model(void)
{
    rw_model *m = NULL;
    int32_t rpn[3] = {2, 2, 1};
    int64_t sizes[1] = {8};
    CHECK(rw_model_create(3, NULL, rpn, 1, sizes, &m) == RW_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (i != j && !(i == 0 && j == 2)) {
                m->pair_state[i * 3 + j] = RW_PAIR_MEASURED;
                m->alpha[i * 3 + j] = 1e-6 * (1 + i + j);
                m->beta[i * 3 + j] = 1e-9;
            }
    m->intra_state[0] = m->intra_state[1] = RW_PAIR_MEASURED;
    m->intra_alpha[0] = m->intra_alpha[1] = 1e-7;
    int32_t idx[3] = {2, 0, 1}, slots[3] = {1, 2, 2};
    rw_network *net = NULL;
    CHECK(rw_network_from_model(m, 3, idx, slots, 0, NULL, &net) == RW_ERR_STATE);
    CHECK(strstr(rw_last_error(), "node0 -> node2") != NULL);
    int64_t filled = -1;
    CHECK(rw_network_from_model(m, 3, idx, slots, 1, &filled, &net) == RW_OK);
    CHECK(filled == 1);
    /* network node 1 is model node 0; the missing 0 -> 2 gets the slowest alpha */
    CHECK_CLOSE(net->alpha[1 * 3 + 0], 4e-6, 1e-12);
    CHECK_CLOSE(net->alpha[0 * 3 + 1], m->alpha[2 * 3 + 0], 1e-12);
    CHECK_CLOSE(net->alpha[1 * 3 + 1], 1e-7, 1e-12);
    rw_network_free(net);
    int32_t dup[2] = {1, 1};
    CHECK(rw_network_from_model(m, 2, dup, slots, 1, NULL, &net) == RW_ERR_ARG);
    rw_network *sub = NULL;
    CHECK(rw_network_from_model(m, 3, idx, slots, 1, NULL, &net) == RW_OK);
    int32_t keep[2] = {2, 0};
    CHECK(rw_network_subset(net, 2, keep, &sub) == RW_OK);
    CHECK(sub->slots[0] == 2 && sub->slots[1] == 1);
    CHECK_CLOSE(sub->alpha[0 * 2 + 1], net->alpha[2 * 3 + 0], 1e-12);
    rw_network_free(sub);
    rw_network_free(net);
    rw_model_free(m);
}

/* A 7-point stencil on gx x gy x gz (x fastest), optionally periodic,
 * ranks renamed through perm (NULL: rank order). */
static rw_matrix *stencil7(int gx, int gy, int gz, int periodic, const int32_t *perm)
{
    int n = gx * gy * gz;
    int32_t *s = malloc(6 * n * sizeof *s), *d = malloc(6 * n * sizeof *d);
    int64_t *m = malloc(6 * n * sizeof *m), *b = malloc(6 * n * sizeof *b), k = 0;
    int dims[3] = {gx, gy, gz};
    for (int r = 0; r < n; r++) {
        int c[3] = {r % gx, (r / gx) % gy, r / (gx * gy)};
        for (int a = 0; a < 3; a++)
            for (int step = -1; step <= 1; step += 2) {
                int e[3] = {c[0], c[1], c[2]};
                e[a] += step;
                if (e[a] < 0 || e[a] >= dims[a]) {
                    if (!periodic || dims[a] < 3) continue;
                    e[a] = (e[a] + dims[a]) % dims[a];
                }
                int q = e[0] + gx * (e[1] + gy * e[2]);
                s[k] = perm ? perm[r] : r, d[k] = perm ? perm[q] : q, m[k] = 1, b[k] = 1000, k++;
            }
    }
    rw_matrix *out = NULL;
    rw_matrix_create(n, k, s, d, m, b, &out);
    free(s), free(d), free(m), free(b);
    return out;
}

static void test_grid_detection(void)
{
    int32_t g[3], periodic;
    rw_matrix *t = stencil7(6, 5, 4, 0, NULL);
    CHECK(rw_detect_grid(t, g, &periodic) == 1);
    CHECK(g[0] == 6 && g[1] == 5 && g[2] == 4 && periodic == 0);
    rw_matrix_free(t);
    t = stencil7(8, 4, 4, 1, NULL);
    CHECK(rw_detect_grid(t, g, &periodic) == 1);
    CHECK(g[0] == 8 && g[1] == 4 && g[2] == 4 && periodic == 1);
    rw_matrix_free(t);
    t = stencil7(16, 12, 1, 0, NULL);
    CHECK(rw_detect_grid(t, g, &periodic) == 1 && g[0] == 16 && g[1] == 12 && g[2] == 1);
    rw_matrix_free(t);
    int32_t perm[120];
    fx_seed(77);
    for (int i = 0; i < 120; i++) perm[i] = i;
    for (int i = 119; i > 0; i--) {
        int j = fx_below(i + 1), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    t = stencil7(6, 5, 4, 0, perm); /* shuffled: not a grid in rank order */
    CHECK(rw_detect_grid(t, g, &periodic) == 0);
    rw_matrix_free(t);
    t = fx_traffic(64, 1.0); /* all-to-all */
    CHECK(rw_detect_grid(t, g, &periodic) == 0);
    rw_matrix_free(t);
    /* auto on the bare matrix: detected, stencil blocks, the cube optimum */
    t = stencil7(8, 8, 8, 0, NULL);
    rw_network *net = NULL;
    int32_t slots[8] = {64, 64, 64, 64, 64, 64, 64, 64};
    CHECK(rw_network_create(8, slots, &net) == RW_OK);
    for (int a = 0; a < 8; a++)
        for (int c = 0; c < 8; c++) net->beta[a * 8 + c] = a != c;
    rw_map_options op = rw_map_options_default();
    rw_map_result res;
    CHECK(rw_map(t, net, &op, &res) == RW_OK);
    CHECK(res.grid_detected == 1 && res.algorithm == RW_ALG_STENCIL);
    int64_t cut, total;
    rw_map_cut(t, res.node_of, 1, &cut, &total);
    CHECK(cut * 7 == total); /* 4x4x4 boxes: one cut plane of 64 edges per axis, of 3 x 448 */
    rw_map_result_free(&res);
    rw_network_free(net);
    rw_matrix_free(t);
}

int main(void)
{
    test_grid_detection();
    test_exhaustive_is_optimal();
    test_heuristics_valid_monotone_deterministic();
    test_selection();
    test_errors();
    test_network_from_model();
    CHECK_DONE();
}
