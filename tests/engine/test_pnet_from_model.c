/* rw_pnet_from_model: the one rule from a measured model to the
 * predictor's network (the CLI, coll tune and the library's RANKWISE_MODEL
 * all call it), on models small enough to work out by hand. */
#include "check.h"
#include "rankwise_predict.h"

#include <math.h>
#include <stdlib.h>

/* 3 nodes, pair i -> j alpha (i + 1) us and beta 1 / ((j + 1) GB/s);
 * groups {0, 1} and {2}; a link out of group 0. */
static rw_model *three_nodes(void)
{
    int64_t sizes[2] = {8, 65536};
    rw_model *m = NULL;
    CHECK(rw_model_create(3, NULL, NULL, 2, sizes, &m) == RW_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int p = i * 3 + j;
            if (i == j)
                continue;
            m->pair_state[p] = RW_PAIR_MEASURED;
            m->alpha[p] = (i + 1) * 1e-6;
            m->beta[p] = 1.0 / ((j + 1) * 1e9);
        }
    for (int i = 0; i < 3; i++)
        m->group_of[i] = i < 2 ? 0 : 1;
    int32_t g0 = 0;
    CHECK(rw_model_add_link(m, "up-0", 5e8, 1, &g0, 0, NULL) == RW_OK);
    return m;
}

/* n nodes, every pair measured at 1 us and 10 GB/s. */
static rw_model *uniform_model(int n)
{
    int64_t sizes[1] = {8};
    rw_model *m = NULL;
    CHECK(rw_model_create(n, NULL, NULL, 1, sizes, &m) == RW_OK);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) {
                m->pair_state[i * n + j] = RW_PAIR_MEASURED;
                m->alpha[i * n + j] = 1e-6;
                m->beta[i * n + j] = 1e-10;
            }
    return m;
}

static void test_pairs_caps_links(void)
{
    rw_model *m = three_nodes();
    m->inject[1] = 7e9; /* the stress test's figure replaces the guess */
    int32_t idx[3] = {2, 0, 1}, model_link[1] = {-1};
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, NULL, NULL, model_link, &net) == RW_OK);
    rw_pnet_view v;
    CHECK(rw_pnet_view_of(net, &v) == RW_OK);
    CHECK(v.n_nodes == 3 && v.knee == 0 && !v.overhead && v.sharing == RW_SHARE_EQUAL);
    CHECK_CLOSE(v.alpha[0 * 3 + 1], 3e-6, 1e-12); /* network node 0 is model node 2 */
    CHECK_CLOSE(v.beta[1 * 3 + 2], 1.0 / 2e9, 1e-20);
    CHECK(v.alpha[0] == 0 && v.beta[0] == 0);     /* one slot, own pair unmeasured: free */
    CHECK_CLOSE(v.inject[0], 2e9, 1e-12);             /* best it sent at: to model node 1 */
    CHECK_CLOSE(v.eject[0], 3e9, 1e-12);              /* it receives at 3 GB/s */
    CHECK_CLOSE(v.inject[2], 7e9, 1e-12);
    CHECK(v.n_links == 1 && model_link[0] == 0);
    double cap = 0;
    int64_t n = 0;
    int32_t src[4], dst[4];
    CHECK(rw_pnet_link(net, 0, &cap, &n, NULL, NULL) == RW_OK && n == 2 && cap == 5e8);
    CHECK(rw_pnet_link(net, 0, NULL, NULL, src, dst) == RW_OK);
    CHECK(src[0] == 1 && dst[0] == 0 && src[1] == 2 && dst[1] == 0); /* model 0 -> 2, 1 -> 2 */
    CHECK(rw_pnet_link(net, 1, &cap, &n, NULL, NULL) == RW_ERR_ARG);
    rw_pnet_free(net);

    rw_pnet_model_options o = rw_pnet_model_options_default();
    o.node_caps = 0;
    int32_t two[2] = {0, 1};
    CHECK(rw_pnet_from_model(m, 2, two, NULL, &o, NULL, model_link, &net) == RW_OK);
    CHECK(rw_pnet_view_of(net, &v) == RW_OK && !v.inject && !v.eject && v.n_links == 0); /* no pair leaves group 0 */
    rw_pnet_free(net);
    rw_model_free(m);
}

/* A model's links are confirmed when it states them (no capacity spreads),
 * not when a stress test measured them, steady readings included. */
static void test_links_confirmed(void)
{
    rw_model *m = three_nodes();
    int32_t g1 = 1, idx[3] = {0, 1, 2};
    CHECK(rw_model_add_link(m, "down-0", 5e8, 1, &g1, 1, (int32_t[]){0}) == RW_OK);
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, NULL, NULL, NULL, &net) == RW_OK);
    CHECK(net && rw_pnet_link_confirmed(net, 0) == 1 && rw_pnet_link_confirmed(net, 1) == 1);
    CHECK(net && rw_pnet_link_confirmed(net, 2) == -1);
    rw_pnet_free(net);
    CHECK(rw_model_add_spread(m, "up-0", 5e8, 5e8, 5e8, 0, 4) == RW_OK); /* four readings alike */
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, NULL, NULL, NULL, &net) == RW_OK);
    CHECK(net && rw_pnet_link_confirmed(net, 0) == 0 && rw_pnet_link_confirmed(net, 1) == 0);
    rw_pnet_free(net);
    rw_model_free(m);
}

static void test_overheads_taken_out_of_alpha(void)
{
    rw_model *m = three_nodes();
    m->overhead[0] = 0.2e-6;
    m->overhead[1] = 0.4e-6; /* node 2: none, the median of the others (0.3 us) */
    int32_t idx[3] = {0, 1, 2};
    rw_pnet_model_options o = rw_pnet_model_options_default();
    o.overheads = 1;
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, &o, NULL, NULL, &net) == RW_OK);
    rw_pnet_view v;
    CHECK(rw_pnet_view_of(net, &v) == RW_OK && v.overhead && v.recv_overhead);
    CHECK_CLOSE(v.overhead[2], 0.3e-6, 1e-12);
    CHECK(v.recv_overhead[0] == 0);
    CHECK_CLOSE(v.alpha[2 * 3 + 0], 3e-6 - 0.3e-6, 1e-12);
    rw_pnet_free(net);
    o.send_overhead = 1e-6; /* given: every node, the model's set aside */
    o.recv_overhead = 0.5e-6;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, &o, NULL, NULL, &net) == RW_OK);
    CHECK(rw_pnet_view_of(net, &v) == RW_OK);
    CHECK_CLOSE(v.alpha[0 * 3 + 1], 0, 1e-12); /* 1 us - 1 - 0.5: at least 0 */
    CHECK_CLOSE(v.alpha[2 * 3 + 1], 1.5e-6, 1e-12);
    rw_pnet_free(net);
    o.send_overhead = -1;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, &o, NULL, NULL, &net) == RW_ERR_ARG && !net);
    rw_model_free(m);
}

static void test_missing_pairs(void)
{
    rw_model *m = three_nodes();
    m->pair_state[0 * 3 + 2] = RW_PAIR_MISSING;
    int32_t idx[3] = {0, 1, 2};
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, NULL, NULL, NULL, &net) == RW_ERR_STATE && !net);
    rw_pnet_model_options o = rw_pnet_model_options_default();
    o.fill_missing = 1;
    int64_t filled = 0;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, &o, &filled, NULL, &net) == RW_OK && filled == 1);
    rw_pnet_view v;
    CHECK(rw_pnet_view_of(net, &v) == RW_OK);
    CHECK_CLOSE(v.alpha[0 * 3 + 2], 3e-6, 1e-12); /* the slowest measured */
    rw_pnet_free(net);
    int32_t twice[2] = {1, 1};
    CHECK(rw_pnet_from_model(m, 2, twice, NULL, NULL, NULL, NULL, &net) == RW_ERR_ARG && !net);
    rw_model_free(m);
}

/* Round trips whose median sits far above their best (a loaded stack):
 * latencies are noise, every measured pair takes their median, for the
 * predictor as for the mapper (the library's RANKWISE_MODEL decisions
 * kept each pair's own noise before this rule was shared). */
static void test_noisy_latencies_take_their_median(void)
{
    rw_model *m = three_nodes();
    for (int p = 0; p < 9; p++)
        if (p / 3 != p % 3)
            m->pair_stats[(size_t)p * m->n_sizes] = (rw_stat){.count = 5, .min = 1e-6, .median = 2e-6, .max = 3e-6};
    CHECK(rw_model_latency_noisy(m) == 1);
    int32_t idx[3] = {0, 1, 2};
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, NULL, NULL, NULL, &net) == RW_OK);
    rw_pnet_view v;
    CHECK(rw_pnet_view_of(net, &v) == RW_OK);
    for (int p = 0; p < 9; p++)
        if (p / 3 != p % 3)
            CHECK_CLOSE(v.alpha[p], 2e-6, 1e-12); /* alphas 1, 1, 2, 2, 3, 3 us */
    CHECK_CLOSE(v.beta[0 * 3 + 2], 1.0 / 3e9, 1e-12); /* the bandwidths stay each pair's */
    rw_pnet_free(net);
    rw_model_free(m);
}

/* A pod's links (the stress test's pod-up-P / pod-down-P, group lists):
 * 8 nodes in 4 groups of 2, pod A = groups 0 and 1, pod B = 2 and 3. A
 * flow from pod A to pod B crosses pod-up-A and pod-down-B; a flow
 * between two racks of one pod crosses neither. */
static void test_pod_links_carry_flows_between_pods(void)
{
    enum { N = 8 };
    rw_model *m = uniform_model(N);
    for (int i = 0; i < N; i++)
        m->group_of[i] = i / 2;
    int32_t a[2] = {0, 1}, b[2] = {2, 3};
    CHECK(rw_model_add_link(m, "pod-up-0", 1e9, 2, a, 2, b) == RW_OK);
    CHECK(rw_model_add_link(m, "pod-down-1", 2e9, 2, a, 2, b) == RW_OK);
    CHECK(rw_model_add_link(m, "pod-up-1", 3e9, 2, b, 2, a) == RW_OK);
    int32_t idx[N];
    for (int i = 0; i < N; i++)
        idx[i] = i;
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, N, idx, NULL, NULL, NULL, NULL, &net) == RW_OK);
    rw_pnet_view v;
    CHECK(rw_pnet_view_of(net, &v) == RW_OK && v.n_links == 3);
    for (int l = 0; l < 3; l++) {
        double cap = 0;
        int64_t n = 0;
        int32_t src[N * N], dst[N * N];
        CHECK(rw_pnet_link(net, l, &cap, &n, src, dst) == RW_OK && n == 16);
        CHECK(cap == (l + 1) * 1e9);
        for (int64_t k = 0; k < n; k++) /* from pod A to pod B (pod-up-1: back) */
            CHECK((src[k] < 4) == (l < 2) && (dst[k] < 4) == (l == 2));
    }
    rw_pnet_free(net);
    rw_model_free(m);
}

/* A ring of 6 nodes with its links both ways (hops), and a 2 x 2 torus's
 * square: each hop a shared link over the allocation's pairs whose
 * shortest routes cross it, with the part of their flow that does (the
 * flow spread evenly over its shortest routes); a transit node outside the
 * allocation still carries its routes. */
static void test_hops_carry_the_pairs_routed_over_them(void)
{
    enum { N = 6 };
    rw_model *m = uniform_model(N);
    for (int i = 0; i < N; i++) {
        CHECK(rw_model_add_hop(m, i, (i + 1) % N, (i + 1) * 1e9) == RW_OK);
        CHECK(rw_model_add_hop(m, (i + 1) % N, i, 1e10) == RW_OK);
    }
    int32_t dist[N * N];
    double routes[N * N];
    CHECK(rw_model_hop_paths(m, dist, routes) == RW_OK);
    CHECK(dist[0 * N + 3] == 3 && dist[1 * N + 3] == 2 && dist[5 * N + 3] == 2 && dist[3 * N + 3] == 0);
    CHECK(routes[0 * N + 3] == 2 && routes[0 * N + 2] == 1 && routes[4 * N + 4] == 1);
    /* 0 -> 3: half over 0 -> 1, half over 0 -> 5; 0 -> 2: all over 0 -> 1 */
    int32_t h01 = -1, h05 = -1, h12 = -1;
    for (int32_t h = 0; h < m->n_hops; h++) {
        h01 = m->hops[h].from == 0 && m->hops[h].to == 1 ? h : h01;
        h05 = m->hops[h].from == 0 && m->hops[h].to == 5 ? h : h05;
        h12 = m->hops[h].from == 1 && m->hops[h].to == 2 ? h : h12;
    }
    CHECK(rw_model_hop_share(m, dist, routes, h01, 0, 3) == 0.5 && rw_model_hop_share(m, dist, routes, h05, 0, 3) == 0.5);
    CHECK(rw_model_hop_share(m, dist, routes, h01, 0, 2) == 1.0 && rw_model_hop_share(m, dist, routes, h05, 0, 2) == 0.0);
    CHECK(rw_model_hop_share(m, dist, routes, h12, 0, 0) == 0.0);
    int32_t idx[3] = {0, 2, 4}, model_link[2 * N];
    rw_pnet *net = NULL;
    CHECK(rw_pnet_from_model(m, 3, idx, NULL, NULL, NULL, model_link, &net) == RW_OK);
    rw_pnet_view v;
    CHECK(rw_pnet_view_of(net, &v) == RW_OK);
    /* nodes two apart: each pair over one side of the ring, every hop crossed by one pair */
    CHECK(v.n_links == 2 * N);
    for (int32_t l = 0; l < v.n_links; l++) {
        double cap = 0, part = 0;
        int64_t n = 0;
        int32_t src[9], dst[9];
        CHECK(rw_pnet_link(net, l, &cap, &n, src, dst) == RW_OK && n == 1);
        CHECK(rw_pnet_link_shares(net, l, &part) == RW_OK && part == 1.0);
        CHECK(cap == m->hops[model_link[l]].capacity);
    }
    rw_pnet_free(net);
    /* 0 -> 3 (opposite corners): two routes, each hop half the flow; a flow
     * alone at 1e10 B/s each way is limited to twice the 1 GB/s of 0 -> 1 */
    int32_t all[N] = {0, 1, 2, 3, 4, 5};
    CHECK(rw_pnet_from_model(m, N, all, NULL, NULL, NULL, model_link, &net) == RW_OK);
    int found = 0;
    for (int32_t l = 0; net && l < rw_pnet_n_links(net); l++) {
        int64_t n = 0;
        CHECK(rw_pnet_link(net, l, NULL, &n, NULL, NULL) == RW_OK);
        int32_t src[64], dst[64];
        double part[64];
        CHECK(n <= 64 && rw_pnet_link(net, l, NULL, NULL, src, dst) == RW_OK &&
              rw_pnet_link_shares(net, l, part) == RW_OK);
        for (int64_t k = 0; k < n; k++)
            if (src[k] == 0 && dst[k] == 3) {
                CHECK(part[k] == 0.5);
                found++;
            }
    }
    CHECK(found == 6); /* three hops each way around */
    rw_pnet_free(net);
    rw_model_free(m);
}

int main(void)
{
    test_hops_carry_the_pairs_routed_over_them();
    test_pod_links_carry_flows_between_pods();
    test_pairs_caps_links();
    test_links_confirmed();
    test_overheads_taken_out_of_alpha();
    test_missing_pairs();
    test_noisy_latencies_take_their_median();
    CHECK_DONE();
}
