/* Multilevel mapping: valid placements on random instances (slack, nodes
 * without slots, no traffic), a stencil cut near the cube optimum, heavy
 * groups kept inside noisy unlabelled racks, deterministic, better than a
 * random start. */
#include <stdlib.h>
#include <string.h>

#include "../../engine/src/map/algorithms.h"
#include "check.h"
#include "map_fixtures.h"

static rw_status run(const rw_matrix *t, const rw_network *net, rw_objective o, uint64_t seed,
                     int32_t *node_of)
{
    rw_map_options opt = rw_map_options_default();
    opt.algorithm = RW_ALG_MULTILEVEL;
    opt.objective = o;
    opt.seed = seed;
    rw_map_job job = {t, net, &opt, rw_now() + 60};
    return rw_alg_multilevel(&job, node_of);
}

static double cost_of(const rw_matrix *t, const rw_network *net, rw_objective o, const int32_t *node_of)
{
    double c = -1;
    CHECK(rw_map_cost(t, net, o, node_of, &c) == RW_OK);
    return c;
}

/* One message (and `bytes`) each way between grid neighbours, ranks
 * numbered x fastest, or through perm (NULL: identity). */
static rw_matrix *stencil(int L, int64_t bytes, const int32_t *perm)
{
    int n = L * L * L;
    int32_t *src = malloc(6 * (size_t)n * sizeof *src), *dst = malloc(6 * (size_t)n * sizeof *dst);
    int64_t *msgs = malloc(6 * (size_t)n * sizeof *msgs), *vol = malloc(6 * (size_t)n * sizeof *vol);
    int64_t k = 0;
    for (int z = 0; z < L; z++)
        for (int y = 0; y < L; y++)
            for (int x = 0; x < L; x++) {
                int r = x + L * (y + L * z);
                int nb[6][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z}, {x, y + 1, z}, {x, y, z - 1}, {x, y, z + 1}};
                for (int q = 0; q < 6; q++) {
                    int a = nb[q][0], b = nb[q][1], c = nb[q][2];
                    if (a < 0 || b < 0 || c < 0 || a >= L || b >= L || c >= L) continue;
                    int s = a + L * (b + L * c);
                    src[k] = perm ? perm[r] : r, dst[k] = perm ? perm[s] : s;
                    msgs[k] = 1, vol[k] = bytes, k++;
                }
            }
    rw_matrix *m = NULL;
    CHECK(rw_matrix_create(n, k, src, dst, msgs, vol, &m) == RW_OK);
    free(src), free(dst), free(msgs), free(vol);
    return m;
}

/* nn nodes of `slots` each, every pair the same (two-level network). */
static rw_network *uniform(int nn, int slots)
{
    int32_t *s = malloc(nn * sizeof *s);
    for (int i = 0; i < nn; i++) s[i] = slots;
    rw_network *net = NULL;
    CHECK(rw_network_create(nn, s, &net) == RW_OK);
    free(s);
    for (int a = 0; a < nn; a++)
        for (int b = 0; b < nn; b++) {
            net->alpha[(size_t)a * nn + b] = a == b ? 2e-7 : 2e-6;
            net->beta[(size_t)a * nn + b] = a == b ? 1e-11 : 1e-10;
        }
    return net;
}

static double cut_fraction(const rw_matrix *t, const int32_t *node_of)
{
    int64_t cut = 0, total = 0;
    CHECK(rw_map_cut(t, node_of, 1, &cut, &total) == RW_OK);
    return total > 0 ? (double)cut / (double)total : 0;
}

static void test_random_instances(void)
{
    int worse = 0, cases = 0;
    for (int seed = 1; seed <= 40; seed++) {
        fx_seed((uint64_t)seed);
        int n = 2 + fx_below(150), nn = 2 + fx_below(24);
        rw_matrix *t = fx_traffic(n, fx_uniform(0.005, 0.05));
        rw_network *net = fx_network(nn, 0, 1);
        /* random slots with slack; some nodes without any */
        int64_t total = 0;
        for (int v = 0; v < nn; v++) {
            net->slots[v] = fx_below(5) == 0 ? 0 : 1 + fx_below(2 * (n / nn) + 2);
            total += net->slots[v];
        }
        for (int v = 0; total < n; v = (v + 1) % nn) net->slots[v]++, total++;
        if (seed % 5 == 0) /* no slack at all */
            for (int v = 0; total > n; v = (v + 1) % nn)
                if (net->slots[v] > 0) net->slots[v]--, total--;
        rw_objective o = seed % 3 == 0 ? RW_OBJ_BOTTLENECK : RW_OBJ_TIME;
        int32_t *start = malloc(n * sizeof *start), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        fx_placement(net, n, start);
        memcpy(a, start, n * sizeof *a);
        CHECK(run(t, net, o, 7, a) == RW_OK);
        CHECK(fx_valid(net, n, a, NULL));
        memcpy(b, start, n * sizeof *b);
        CHECK(run(t, net, o, 7, b) == RW_OK);
        CHECK(memcmp(a, b, n * sizeof *a) == 0); /* deterministic */
        if (o == RW_OBJ_TIME) { /* partitioning minimises traffic across nodes, not the bottleneck */
            cases++;
            if (cost_of(t, net, o, a) > cost_of(t, net, o, start)) worse++;
        }
        free(start), free(a), free(b);
        rw_matrix_free(t);
        rw_network_free(net);
    }
    CHECK(worse == 0);
    CHECK(cases > 20);
}

static void test_edge_cases(void)
{
    /* no traffic at all; one rank; messages without bytes */
    rw_network *net = uniform(3, 2);
    rw_matrix *empty = NULL;
    CHECK(rw_matrix_create(5, 0, NULL, NULL, NULL, NULL, &empty) == RW_OK);
    int32_t node_of[6] = {0, 0, 1, 1, 2, 2};
    CHECK(run(empty, net, RW_OBJ_TIME, 1, node_of) == RW_OK);
    CHECK(fx_valid(net, 5, node_of, NULL));
    rw_matrix *one = NULL;
    CHECK(rw_matrix_create(1, 0, NULL, NULL, NULL, NULL, &one) == RW_OK);
    CHECK(run(one, net, RW_OBJ_TIME, 1, node_of) == RW_OK);
    CHECK(node_of[0] >= 0 && node_of[0] < 3);
    /* two pairs that talk, msgs only: each pair on one node */
    int32_t src[4] = {0, 1, 2, 3}, dst[4] = {1, 0, 3, 2};
    int64_t msgs[4] = {5, 5, 5, 5}, bytes[4] = {0, 0, 0, 0};
    rw_matrix *pairs = NULL;
    CHECK(rw_matrix_create(4, 4, src, dst, msgs, bytes, &pairs) == RW_OK);
    int32_t p[4] = {0, 1, 2, 0};
    CHECK(run(pairs, net, RW_OBJ_TIME, 1, p) == RW_OK);
    CHECK(fx_valid(net, 4, p, NULL));
    CHECK(p[0] == p[1] && p[2] == p[3]);
    rw_matrix_free(empty), rw_matrix_free(one), rw_matrix_free(pairs);
    rw_network_free(net);
}

static void test_stencil(void)
{
    enum { L = 16, N = L * L * L };
    rw_network *net = uniform(64, 64);
    int32_t *perm = malloc(N * sizeof *perm), *start = malloc(N * sizeof *start);
    int32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    for (int i = 0; i < N; i++) perm[i] = i;
    fx_seed(3);
    for (int i = N - 1; i > 0; i--) {
        int j = fx_below(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        rw_matrix *t = stencil(L, 4096, shuffled ? perm : NULL);
        fx_placement(net, N, start);
        memcpy(a, start, N * sizeof *a);
        CHECK(run(t, net, RW_OBJ_TIME, 1, a) == RW_OK);
        CHECK(fx_valid(net, N, a, NULL));
        double cut = cut_fraction(t, a);
        CHECK(cut <= 0.25); /* the 4x4x4 cube optimum is 0.2000 */
        CHECK(cost_of(t, net, RW_OBJ_TIME, a) < 0.5 * cost_of(t, net, RW_OBJ_TIME, start));
        memcpy(b, start, N * sizeof *b);
        CHECK(run(t, net, RW_OBJ_TIME, 1, b) == RW_OK);
        CHECK(memcmp(a, b, N * sizeof *a) == 0);
        /* through rw_map too, on 65 nodes (one left empty) */
        rw_network *more = uniform(65, 64);
        rw_map_options opt = rw_map_options_default();
        opt.algorithm = RW_ALG_MULTILEVEL;
        rw_map_result res;
        CHECK(rw_map(t, more, &opt, &res) == RW_OK);
        CHECK(fx_valid(more, N, res.node_of, res.slot_of));
        CHECK(cut_fraction(t, res.node_of) <= 0.25);
        rw_map_result_free(&res);
        rw_network_free(more);
        rw_matrix_free(t);
    }
    free(perm), free(start), free(a), free(b);
    rw_network_free(net);
}

/* 64 nodes in 8 racks of 8, noisy latencies, racks shuffled over the node
 * numbers; 8 slots each. Traffic: 8 groups of 64 ranks, all-to-all inside
 * (1 MiB), scattered over the rank numbers, and a light chain through all
 * ranks. Each group fits a rack exactly: none of its bytes need leave it. */
static void test_racks(void)
{
    enum { NN = 64, PER = 8, N = 512, G = 64 };
    int rack[NN], perm[NN];
    fx_seed(11);
    for (int i = 0; i < NN; i++) perm[i] = i;
    for (int i = NN - 1; i > 0; i--) {
        int j = fx_below(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int i = 0; i < NN; i++) rack[perm[i]] = i / PER;
    int32_t slots[NN];
    for (int i = 0; i < NN; i++) slots[i] = 8;
    rw_network *net = NULL;
    CHECK(rw_network_create(NN, slots, &net) == RW_OK);
    for (int a = 0; a < NN; a++)
        for (int b = 0; b < NN; b++) {
            double lat = a == b ? 0.5e-6 : rack[a] == rack[b] ? fx_uniform(10e-6, 12e-6) : fx_uniform(30e-6, 40e-6);
            net->alpha[a * NN + b] = lat;
            net->beta[a * NN + b] = a == b ? 1e-11 : 1e-10;
        }
    int group[N], rperm[N];
    for (int r = 0; r < N; r++) rperm[r] = r;
    for (int r = N - 1; r > 0; r--) {
        int j = fx_below(r + 1), t = rperm[r];
        rperm[r] = rperm[j], rperm[j] = t;
    }
    for (int r = 0; r < N; r++) group[rperm[r]] = r / G;
    int64_t cap = (int64_t)N * G + 2 * N;
    int32_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
    int64_t *msgs = malloc(cap * sizeof *msgs), *bytes = malloc(cap * sizeof *bytes), k = 0;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            if (a != b && group[a] == group[b])
                src[k] = a, dst[k] = b, msgs[k] = 1, bytes[k] = 1 << 20, k++;
    for (int r = 0; r + 1 < N; r++)
        if (group[r] != group[r + 1]) src[k] = r, dst[k] = r + 1, msgs[k] = 1, bytes[k] = 1 << 16, k++;
    rw_matrix *t = NULL;
    CHECK(rw_matrix_create(N, k, src, dst, msgs, bytes, &t) == RW_OK);
    int32_t start[N], node_of[N];
    fx_placement(net, N, start);
    memcpy(node_of, start, sizeof node_of);
    CHECK(run(t, net, RW_OBJ_TIME, 1, node_of) == RW_OK);
    CHECK(fx_valid(net, N, node_of, NULL));
    int64_t cross = 0;
    for (int i = 0; i < k; i++)
        if (group[src[i]] == group[dst[i]] && rack[node_of[src[i]]] != rack[node_of[dst[i]]]) cross += bytes[i];
    CHECK(cross == 0);
    CHECK(cost_of(t, net, RW_OBJ_TIME, node_of) < cost_of(t, net, RW_OBJ_TIME, start));
    free(src), free(dst), free(msgs), free(bytes);
    rw_matrix_free(t);
    rw_network_free(net);
}

int main(void)
{
    test_random_instances();
    test_edge_cases();
    test_stencil();
    test_racks();
    CHECK_DONE();
}
