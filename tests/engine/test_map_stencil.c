/* Stencil blocks and the virtual torus, called directly: valid placements,
 * the cube-block optimum of Cui et al. 2020's figure (16^3 ranks, 64 slots a
 * node: 0.200 of the edges cross nodes), 2-D and 1-D grids, uneven slots,
 * racks kept whole, a ring folded onto a line of nodes. */
#include <stdlib.h>
#include <string.h>

#include "../../engine/src/map/algorithms.h"
#include "check.h"
#include "map_fixtures.h"

/* 7-point stencil (4-point in 2-D, ring in 1-D): one message of `bytes`
 * per directed neighbour pair; rank = x + gx (y + gy z). */
static rw_matrix *stencil(const int32_t dim[3], int periodic, int64_t bytes)
{
    int64_t n = (int64_t)dim[0] * dim[1] * dim[2], cap = 6 * n, k = 0;
    int32_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
    int64_t *msgs = malloc(cap * sizeof *msgs), *vol = malloc(cap * sizeof *vol);
    for (int64_t r = 0; r < n; r++) {
        int32_t c[3] = {r % dim[0], (r / dim[0]) % dim[1], r / ((int64_t)dim[0] * dim[1])};
        for (int d = 0; d < 3; d++)
            for (int s = -1; s <= 1; s += 2) {
                if (dim[d] == 1) continue;
                int32_t e[3] = {c[0], c[1], c[2]};
                e[d] += s;
                if (e[d] < 0 || e[d] >= dim[d]) {
                    if (!periodic) continue;
                    e[d] = (e[d] + dim[d]) % dim[d];
                }
                src[k] = (int32_t)r;
                dst[k] = e[0] + dim[0] * (e[1] + dim[1] * e[2]);
                msgs[k] = 1, vol[k] = bytes;
                k++;
            }
    }
    rw_matrix *m = NULL;
    rw_matrix_create((int32_t)n, k, src, dst, msgs, vol, &m);
    free(src), free(dst), free(msgs), free(vol);
    return m;
}

/* Every pair of distinct nodes costs 1, a node with itself 0. */
static rw_network *uniform(int nodes, int slots)
{
    rw_network *net = NULL;
    rw_network_create(nodes, NULL, &net);
    for (int a = 0; a < nodes; a++) {
        net->slots[a] = slots;
        for (int b = 0; b < nodes; b++) {
            net->alpha[(size_t)a * nodes + b] = a != b;
            net->beta[(size_t)a * nodes + b] = a != b;
        }
    }
    return net;
}

typedef rw_status (*grid_alg)(const rw_map_job *, int32_t *, int32_t *);

/* Run alg from the block placement; node_of/slot_of receive the result. */
static rw_status run(grid_alg alg, const rw_matrix *t, const rw_network *net, int gx, int gy,
                     int gz, int periodic, int32_t *node_of, int32_t *slot_of)
{
    rw_map_options o = rw_map_options_default();
    o.grid[0] = gx, o.grid[1] = gy, o.grid[2] = gz;
    o.periodic = periodic;
    rw_map_job job = {t, net, &o, rw_now() + 10};
    int32_t r = 0;
    for (int v = 0; v < net->n_nodes; v++)
        for (int s = 0; s < net->slots[v] && r < t->n_ranks; s++) node_of[r++] = v;
    for (r = 0; r < t->n_ranks; r++) slot_of[r] = -1;
    return alg(&job, node_of, slot_of);
}

/* Fraction of the messages that cross nodes. */
static double cut_fraction(const rw_matrix *t, const int32_t *node_of)
{
    int64_t cut = 0, total = 0;
    rw_map_cut(t, node_of, 1, &cut, &total);
    return total ? (double)cut / (double)total : 0;
}

static int64_t cut_msgs(const rw_matrix *t, const int32_t *node_of)
{
    int64_t cut = 0, total = 0;
    rw_map_cut(t, node_of, 1, &cut, &total);
    return cut;
}

static void test_cube_optimum(void)
{
    int32_t dim[3] = {16, 16, 16};
    rw_matrix *t = stencil(dim, 0, 1 << 20);
    rw_network *net = uniform(64, 64);
    int32_t *node_of = malloc(4096 * sizeof *node_of), *slot_of = malloc(4096 * sizeof *slot_of);
    double t0 = rw_now();
    CHECK(run(rw_alg_stencil, t, net, 16, 16, 16, 0, node_of, slot_of) == RW_OK);
    double secs = rw_now() - t0;
    CHECK(fx_valid(net, 4096, node_of, slot_of));
    /* 3 planes of 256 edges per dimension out of 3 * 16 * 16 * 15. */
    CHECK(cut_msgs(t, node_of) == 2 * 2304);
    CHECK_CLOSE(cut_fraction(t, node_of), 0.2, 1e-12);
    printf("stencil 16^3 on 64 x 64 slots: cut %.4f in %.3f s\n", cut_fraction(t, node_of), secs);

    /* Every node a 4x4x4 cube; its cores 0..7 a 2x2x2 cube, 8..15 the next. */
    for (int v = 0; v < 64; v++) {
        int lo[2][3], hi[2][3];
        for (int g = 0; g < 2; g++)
            for (int d = 0; d < 3; d++) lo[g][d] = 99, hi[g][d] = -1;
        for (int r = 0; r < 4096; r++) {
            if (node_of[r] != v) continue;
            int c[3] = {r % 16, (r / 16) % 16, r / 256};
            int g = slot_of[r] < 8 ? 1 : 0;
            for (int k = 0; k <= g; k++)
                for (int d = 0; d < 3; d++) {
                    if (c[d] < lo[k][d]) lo[k][d] = c[d];
                    if (c[d] > hi[k][d]) hi[k][d] = c[d];
                }
        }
        for (int d = 0; d < 3; d++) {
            CHECK(hi[0][d] - lo[0][d] == 3);
            CHECK(hi[1][d] - lo[1][d] == 1);
        }
    }

    /* Deterministic. */
    int32_t *again = malloc(4096 * sizeof *again), *again_slot = malloc(4096 * sizeof *again);
    CHECK(run(rw_alg_stencil, t, net, 16, 16, 16, 0, again, again_slot) == RW_OK);
    CHECK(memcmp(again, node_of, 4096 * sizeof *again) == 0);
    CHECK(memcmp(again_slot, slot_of, 4096 * sizeof *again) == 0);
    free(again), free(again_slot);

    /* One node more than needed: still cubes, one node left empty. */
    rw_network *slack = uniform(65, 64);
    CHECK(run(rw_alg_stencil, t, slack, 16, 16, 16, 0, node_of, slot_of) == RW_OK);
    CHECK(fx_valid(slack, 4096, node_of, slot_of));
    CHECK_CLOSE(cut_fraction(t, node_of), 0.2, 1e-12);

    /* Through rw_map (refinement after it cannot undo the optimum). */
    rw_map_options o = rw_map_options_default();
    o.algorithm = RW_ALG_AUTO;
    o.selection = RW_SELECT_ALL;
    o.grid[0] = o.grid[1] = o.grid[2] = 16;
    rw_map_result res;
    t0 = rw_now();
    CHECK(rw_map(t, net, &o, &res) == RW_OK);
    secs = rw_now() - t0;
    CHECK(res.algorithm == RW_ALG_STENCIL);
    CHECK(fx_valid(net, 4096, res.node_of, res.slot_of));
    CHECK(cut_fraction(t, res.node_of) <= 0.2 + 1e-12);
    printf("rw_map auto 16^3: cut %.4f in %.3f s\n", cut_fraction(t, res.node_of), secs);
    rw_map_result_free(&res);

    rw_network_free(slack);
    rw_network_free(net);
    rw_matrix_free(t);
    free(node_of), free(slot_of);
}

static void test_2d_1d(void)
{
    int32_t node_of[512], slot_of[512];
    /* 32x16 on 8 nodes of 64: boxes 8x8, 3 cuts of 16 edges across x and
     * 1 of 32 across y = 80 of the 976 edges. */
    int32_t d2[3] = {32, 16, 1};
    rw_matrix *t = stencil(d2, 0, 1000);
    rw_network *net = uniform(8, 64);
    CHECK(run(rw_alg_stencil, t, net, 32, 16, 0, 0, node_of, slot_of) == RW_OK);
    CHECK(fx_valid(net, 512, node_of, slot_of));
    CHECK(cut_msgs(t, node_of) == 2 * 80);
    rw_matrix_free(t);
    rw_network_free(net);

    /* A line of 100 ranks on 10 nodes of 10: 9 cut edges. */
    int32_t d1[3] = {100, 1, 1};
    t = stencil(d1, 0, 1000);
    net = uniform(10, 10);
    CHECK(run(rw_alg_stencil, t, net, 100, 0, 0, 0, node_of, slot_of) == RW_OK);
    CHECK(fx_valid(net, 100, node_of, slot_of));
    CHECK(cut_msgs(t, node_of) == 2 * 9);
    rw_matrix_free(t);
    rw_network_free(net);
}

static void test_uneven(void)
{
    int32_t dim[3] = {6, 6, 6};
    rw_matrix *t = stencil(dim, 0, 4096);
    int32_t node_of[216], slot_of[216], block[216];
    int32_t shapes[3][5] = {{50, 30, 70, 20, 46}, {60, 60, 60, 60, 0}, {1, 100, 15, 0, 100}};
    for (int s = 0; s < 3; s++) {
        rw_network *net = uniform(5, 1);
        memcpy(net->slots, shapes[s], sizeof shapes[s]);
        CHECK(run(rw_alg_stencil, t, net, 6, 6, 6, 0, node_of, slot_of) == RW_OK);
        CHECK(fx_valid(net, 216, node_of, slot_of));
        CHECK(run(rw_alg_torus, t, net, 6, 6, 6, 0, block, slot_of) == RW_OK);
        CHECK(fx_valid(net, 216, block, slot_of));
        /* No worse than filling the nodes in order. */
        int32_t r = 0;
        for (int v = 0; v < 5; v++)
            for (int k = 0; k < net->slots[v] && r < 216; k++) block[r++] = v;
        CHECK(cut_msgs(t, node_of) <= cut_msgs(t, block));
        printf("6^3 on slots %d,%d,%d,%d,%d: cut %.3f (block %.3f)\n", shapes[s][0],
               shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4], cut_fraction(t, node_of),
               cut_fraction(t, block));
        rw_network_free(net);
    }
    rw_matrix_free(t);

    /* 17^3 on 77 nodes of 64: no box tiles it, the ranks are bisected. */
    int32_t d17[3] = {17, 17, 17};
    t = stencil(d17, 0, 4096);
    rw_network *net = uniform(77, 64);
    int32_t *no = malloc(4913 * sizeof *no), *so = malloc(4913 * sizeof *so);
    CHECK(run(rw_alg_stencil, t, net, 17, 17, 17, 0, no, so) == RW_OK);
    CHECK(fx_valid(net, 4913, no, so));
    printf("17^3 on 77 x 64 slots: cut %.4f\n", cut_fraction(t, no));
    CHECK(cut_fraction(t, no) < 0.25);
    free(no), free(so);
    rw_network_free(net);
    rw_matrix_free(t);
}

static void test_errors(void)
{
    int32_t dim[3] = {4, 4, 4};
    rw_matrix *t = stencil(dim, 0, 8);
    rw_network *net = uniform(8, 8);
    int32_t node_of[64], slot_of[64];
    CHECK(run(rw_alg_stencil, t, net, 4, 4, 3, 0, node_of, slot_of) == RW_ERR_ARG);
    CHECK(strstr(rw_last_error(), "grid") != NULL);
    CHECK(run(rw_alg_torus, t, net, 0, 0, 0, 1, node_of, slot_of) == RW_ERR_ARG);
    CHECK(run(rw_alg_stencil, t, net, 64, 0, 0, 0, node_of, slot_of) == RW_OK); /* a line */
    CHECK(fx_valid(net, 64, node_of, slot_of));
    net->slots[0] = 7; /* 63 slots for 64 ranks */
    CHECK(run(rw_alg_stencil, t, net, 4, 4, 4, 0, node_of, slot_of) == RW_ERR_ARG);
    rw_network_free(net);
    rw_matrix_free(t);
}

/* Two racks of four nodes, interleaved in the node numbering: a rack's
 * nodes cost 1 to each other, 10 to the other rack's. The racks split the
 * 4x4x4 grid along one plane (16 edges), each node a 2x2x2 box. */
static void test_racks(void)
{
    int32_t dim[3] = {4, 4, 4};
    rw_matrix *t = stencil(dim, 0, 1 << 16);
    rw_network *net = uniform(8, 8);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            double c = a == b ? 0 : (a % 2 == b % 2 ? 1 : 10);
            net->alpha[a * 8 + b] = c;
            net->beta[a * 8 + b] = c * 1e-6;
        }
    int32_t node_of[64], slot_of[64];
    grid_alg algs[2] = {rw_alg_stencil, rw_alg_torus};
    for (int k = 0; k < 2; k++) {
        CHECK(run(algs[k], t, net, 4, 4, 4, 0, node_of, slot_of) == RW_OK);
        CHECK(fx_valid(net, 64, node_of, slot_of));
        CHECK(cut_msgs(t, node_of) == 2 * 48);
        int32_t rack[64];
        for (int r = 0; r < 64; r++) rack[r] = node_of[r] % 2;
        CHECK(cut_msgs(t, rack) == 2 * 16);
    }
    rw_network_free(net);
    rw_matrix_free(t);
}

/* A periodic ring of 16 ranks on 8 nodes of 2 slots along a line (cost
 * |a - b|): folded, every neighbour pair, the wrap-around one included,
 * sits on nodes at most 2 apart (unfolded, the wrap would span 7). */
static void test_torus(void)
{
    int32_t ring[3] = {16, 1, 1};
    rw_matrix *t = stencil(ring, 1, 1 << 10);
    rw_network *net = uniform(8, 2);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            net->alpha[a * 8 + b] = abs(a - b);
            net->beta[a * 8 + b] = 1e-6 * abs(a - b);
        }
    int32_t node_of[64], slot_of[64];
    CHECK(run(rw_alg_torus, t, net, 16, 1, 1, 1, node_of, slot_of) == RW_OK);
    CHECK(fx_valid(net, 16, node_of, slot_of));
    for (int r = 0; r < 16; r++) {
        int d = abs(node_of[r] - node_of[(r + 1) % 16]);
        CHECK(d <= 2);
    }
    CHECK(cut_msgs(t, node_of) == 2 * 8); /* pairs of neighbours per node */

    /* The same line with the nodes numbered out of order: node k sits at
     * place at[k]. The node order follows the line all the same. */
    static const int at[8] = {3, 6, 0, 5, 1, 7, 2, 4};
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            net->alpha[a * 8 + b] = abs(at[a] - at[b]);
            net->beta[a * 8 + b] = 1e-6 * abs(at[a] - at[b]);
        }
    CHECK(run(rw_alg_torus, t, net, 16, 1, 1, 1, node_of, slot_of) == RW_OK);
    CHECK(fx_valid(net, 16, node_of, slot_of));
    for (int r = 0; r < 16; r++) CHECK(abs(at[node_of[r]] - at[node_of[(r + 1) % 16]]) <= 2);
    rw_network_free(net);
    rw_matrix_free(t);

    /* 8x8 periodic on 16 uniform nodes of 4: 2x2 boxes, 4 cut planes of 8
     * edges per dimension = half of the 128 edges. */
    int32_t sq[3] = {8, 8, 1};
    t = stencil(sq, 1, 1 << 10);
    net = uniform(16, 4);
    CHECK(run(rw_alg_torus, t, net, 8, 8, 1, 1, node_of, slot_of) == RW_OK);
    CHECK(fx_valid(net, 64, node_of, slot_of));
    CHECK_CLOSE(cut_fraction(t, node_of), 0.5, 1e-12);

    /* auto picks the torus for a periodic grid. */
    rw_map_options o = rw_map_options_default();
    o.selection = RW_SELECT_ALL;
    o.grid[0] = o.grid[1] = 8;
    o.periodic = 1;
    rw_map_result res;
    CHECK(rw_map(t, net, &o, &res) == RW_OK);
    CHECK(res.algorithm == RW_ALG_TORUS);
    CHECK(fx_valid(net, 64, res.node_of, res.slot_of));
    CHECK(cut_fraction(t, res.node_of) <= 0.5 + 1e-12);
    rw_map_result_free(&res);
    rw_network_free(net);
    rw_matrix_free(t);
}

/* Random grids, slot counts and costs: always a valid placement. */
static void test_random_valid(void)
{
    fx_seed(4242);
    for (int inst = 0; inst < 300; inst++) {
        int32_t dim[3] = {1 + fx_below(9), 1 + fx_below(6), 1 + fx_below(4)};
        if (inst % 3 == 0) dim[2] = 1;
        if (inst % 5 == 0) dim[1] = dim[2] = 1;
        int n = dim[0] * dim[1] * dim[2], periodic = fx_below(2);
        rw_matrix *t = stencil(dim, periodic, fx_below(2) ? 0 : 1 + fx_below(1 << 20));
        rw_network *net = fx_network(1 + fx_below(12), 0, 1 + fx_below(16));
        while (rw_network_total_slots(net) < n) net->slots[fx_below(net->n_nodes)]++;
        int32_t node_of[216], slot_of[216];
        CHECK(run(inst % 2 ? rw_alg_torus : rw_alg_stencil, t, net, dim[0], dim[1], dim[2],
                  periodic, node_of, slot_of) == RW_OK);
        CHECK(fx_valid(net, n, node_of, slot_of));
        rw_network_free(net);
        rw_matrix_free(t);
    }
}

int main(void)
{
    test_cube_optimum();
    test_2d_1d();
    test_uneven();
    test_errors();
    test_racks();
    test_torus();
    test_random_valid();
    CHECK_DONE();
}
