/* The predictor on cases small enough to work out by hand. */
#include "check.h"
#include "rankwise_predict.h"

#include <stdlib.h>
#include <string.h>

/* n nodes, every pair alpha a and beta b, diagonal ad / bd. */
static rw_pnet *uniform(int n, double a, double b, double ad, double bd)
{
    double *al = malloc(sizeof(double) * n * n), *be = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            al[i * n + j] = i == j ? ad : a;
            be[i * n + j] = i == j ? bd : b;
        }
    rw_pnet *net = NULL;
    CHECK(rw_pnet_create(n, al, be, &net) == RW_OK);
    free(al);
    free(be);
    return net;
}

static double run(rw_pnet *net, rw_sched *s)
{
    rw_sim_result r;
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, NULL) == RW_OK);
    return r.time;
}

static void test_single_transfer(void)
{
    rw_pnet *net = uniform(2, 1e-6, 1e-9, 0, 0);
    rw_sched *s;
    CHECK(rw_sched_create(2, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 1, 1e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK_CLOSE(run(net, s), 1e-6 + 1e-3, 1e-9);
    rw_sched_free(s);
    rw_pnet_free(net);
}

/* Two flows out of node 0 share its injection cap; a third into node 2 from
 * node 1 is alone on its resources. */
static void test_injection_sharing(void)
{
    rw_pnet *net = uniform(3, 0, 1e-10, 0, 0); /* pairs at 10 GB/s */
    double inject[3] = {4e9, 0, 0};
    CHECK(rw_pnet_set_node_caps(net, inject, NULL) == RW_OK);
    rw_sched *s;
    CHECK(rw_sched_create(3, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 1, 4e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK(rw_sched_add(s, 0, 2, 4e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK(rw_sched_add(s, 1, 2, 1e6, 0, 0, NULL, NULL) == RW_OK);
    double fin[3];
    rw_sim_result r;
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[0], 4e6 / 2e9, 1e-9); /* half of 4 GB/s each */
    CHECK_CLOSE(fin[1], 4e6 / 2e9, 1e-9);
    CHECK_CLOSE(fin[2], 1e6 / 1e10, 1e-9);
    /* Contention-free: every flow at its pair's 10 GB/s, but node 0's two
     * sends one after the other (a sender sends one message at a time). */
    CHECK(rw_simulate(net, s, RW_SIM_CONTENTION_FREE, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[0], 4e6 / 1e10, 1e-9);
    CHECK_CLOSE(fin[1], 2 * 4e6 / 1e10, 1e-9);
    CHECK_CLOSE(fin[2], 1e6 / 1e10, 1e-9);
    rw_sched_free(s);
    rw_pnet_free(net);
}

/* CM02 weighs a flow by 1 / its latency (SimGrid's sharing penalty): two
 * flows of 3 MB out of node 0's 4 GB/s, to node 1 at 1 ns and node 2 at
 * 3 ns, share it 3 GB/s : 1 GB/s; when the first ends (1 ms) the second has
 * 2 MB left at 4 GB/s. Plain max-min ended both at 1.5 ms. A pair without a
 * latency makes the sharing plain again. */
static void test_latency_weighted_sharing(void)
{
    rw_pnet *net = NULL;
    double inject[3] = {4e9, 0, 0};
    double al[9] = {0, 1e-9, 3e-9, 1e-9, 0, 1e-9, 3e-9, 1e-9, 0}, be[9]; /* pairs at 10 GB/s */
    for (int i = 0; i < 9; i++)
        be[i] = 1e-10;
    CHECK(rw_pnet_create(3, al, be, &net) == RW_OK);
    CHECK(rw_pnet_set_node_caps(net, inject, NULL) == RW_OK);
    rw_sched *s;
    CHECK(rw_sched_create(3, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 1, 3e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK(rw_sched_add(s, 0, 2, 3e6, 0, 0, NULL, NULL) == RW_OK);
    double fin[2];
    rw_sim_result r;
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[0], 1e-3, 1e-5);
    CHECK_CLOSE(fin[1], 1.5e-3, 1e-5);
    CHECK(rw_pnet_set_sharing(net, RW_SHARE_EQUAL) == RW_OK); /* a real fabric's max-min */
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[0], 1.5e-3, 1e-5);
    CHECK_CLOSE(fin[1], 1.5e-3, 1e-5);
    CHECK(rw_pnet_set_sharing(net, (rw_sharing_rule)7) == RW_ERR_ARG);
    rw_pnet_free(net);
    al[2] = al[6] = 0; /* node 0 -> 2 without latency: equal shares */
    CHECK(rw_pnet_create(3, al, be, &net) == RW_OK);
    CHECK(rw_pnet_set_node_caps(net, inject, NULL) == RW_OK);
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[0], 1.5e-3, 1e-5);
    CHECK_CLOSE(fin[1], 1.5e-3, 1e-5);
    rw_sched_free(s);
    rw_pnet_free(net);
}

/* Max-min: A crosses link L1 (10 GB/s), B crosses L1 and L2 (2 GB/s): B gets
 * 2, A the remaining 8. When B ends, A speeds up to 10. */
static void test_max_min_links(void)
{
    rw_pnet *net = uniform(4, 0, 0, 0, 0);
    int32_t s1[2] = {0, 2}, d1[2] = {1, 3}, s2[1] = {2}, d2[1] = {3};
    int32_t id = -1;
    CHECK(rw_pnet_add_link(net, 10e9, 2, s1, d1, &id) == RW_OK && id == 0);
    CHECK(rw_pnet_add_link(net, 2e9, 1, s2, d2, &id) == RW_OK && id == 1);
    CHECK(rw_pnet_n_links(net) == 2);
    rw_sched *s;
    CHECK(rw_sched_create(4, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 1, 16e6, 0, 0, NULL, NULL) == RW_OK); /* A */
    CHECK(rw_sched_add(s, 2, 3, 2e6, 0, 0, NULL, NULL) == RW_OK);  /* B: 1 ms at 2 GB/s */
    double fin[2];
    rw_sim_result r;
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[1], 1e-3, 1e-9);
    /* A: 8e6 bytes in the first ms, the other 8e6 at 10 GB/s */
    CHECK_CLOSE(fin[0], 1e-3 + 8e6 / 10e9, 1e-9);
    /* A link added after a simulation counts in the next one; a pair listed
     * twice for one link crosses it once. */
    int32_t s3[2] = {0, 0}, d3[2] = {1, 1};
    CHECK(rw_pnet_add_link(net, 4e9, 2, s3, d3, &id) == RW_OK && id == 2);
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK_CLOSE(fin[0], 16e6 / 4e9, 1e-9);
    rw_sched_free(s);
    rw_pnet_free(net);
}

/* Flows of one node pair share that pair's bandwidth; inside a node they do not. */
static void test_pair_sharing(void)
{
    rw_pnet *net = uniform(2, 0, 1e-9, 0, 1e-9);
    int32_t place[4] = {0, 0, 1, 1};
    CHECK(rw_pnet_set_placement(net, 4, place) == RW_OK);
    rw_sched *s;
    CHECK(rw_sched_create(4, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 2, 1e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK(rw_sched_add(s, 1, 3, 1e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK_CLOSE(run(net, s), 2e-3, 1e-9);
    rw_sched_free(s);
    CHECK(rw_sched_create(4, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 1, 1e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK(rw_sched_add(s, 1, 0, 1e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK_CLOSE(run(net, s), 1e-3, 1e-9);
    rw_sched_free(s);
    rw_pnet_free(net);
}

/* Dependencies, delays and the overhead o. */
static void test_dependencies(void)
{
    rw_pnet *net = uniform(3, 2e-6, 1e-9, 0, 0);
    double o[3] = {1e-6, 0, 0};
    CHECK(rw_pnet_set_overhead(net, o) == RW_OK);
    rw_sched *s;
    CHECK(rw_sched_create(3, &s) == RW_OK);
    int64_t a, b;
    CHECK(rw_sched_add(s, 0, 1, 1e3, 0, 0, NULL, &a) == RW_OK);
    CHECK(rw_sched_add(s, 1, 2, 1e3, 5e-6, 1, &a, &b) == RW_OK);
    double t0 = 1e-6 + 2e-6 + 1e-6;  /* o + alpha + 1 kB */
    double t1 = t0 + 5e-6 + 2e-6 + 1e-6;
    CHECK_CLOSE(run(net, s), t1, 1e-9);
    int64_t bad = 7;
    CHECK(rw_sched_add(s, 0, 1, 1, 0, 1, &bad, NULL) == RW_ERR_ARG);
    CHECK(rw_sched_add(s, 0, 3, 1, 0, 0, NULL, NULL) == RW_ERR_ARG);
    CHECK(rw_sched_add(s, 0, 1, -1, 0, 0, NULL, NULL) == RW_ERR_ARG);
    rw_sched_free(s);
    rw_pnet_free(net);
}

/* Pairwise all-to-all without contention: P steps of alpha + k beta (step 0
 * through the diagonal); binomial bcast of a long message: lg P steps. */
static void test_collectives_uniform(void)
{
    double a = 1e-6, b = 1e-10, k = 1 << 20;
    rw_pnet *net = uniform(8, a, b, 0.1e-6, 0.02e-9);
    rw_sim_result r;
    /* (the rank's own block is a memcpy, free under SMPI) */
    CHECK(rw_predict_collective(net, "alltoall", "pair", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 7 * (a + k * b), 1e-6);
    CHECK(r.transfers == 56);
    CHECK(rw_predict_collective(net, "alltoall", "ring", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 7 * (a + k * b), 1e-6);
    CHECK(rw_predict_collective(net, "bcast", "binomial", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 3 * (a + k * b), 1e-6);
    CHECK(r.transfers == 7);
    /* A short message is detached: the root's sends overlap. */
    CHECK(rw_predict_collective(net, "bcast", "binomial", 1024, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 3 * (a + 1024 * b), 1e-6);
    CHECK(rw_predict_collective(net, "reduce", "binomial", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 3 * (a + k * b), 1e-6);
    /* 4-nomial over 8: the root sends to 4, then 1, 2, 3 (blocking); 4 to 5, 6, 7. */
    CHECK(rw_predict_collective(net, "bcast", "knomial", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 4 * (a + k * b), 1e-6);
    rw_sched *ks;
    CHECK(rw_sched_collective("bcast", "knomial", 8, k, NULL, &ks) == RW_OK);
    int32_t ksrc, kdst;
    CHECK(rw_sched_transfer(ks, 0, &ksrc, &kdst, NULL) == RW_OK && ksrc == 0 && kdst == 4);
    CHECK(rw_sched_transfer(ks, 7, NULL, NULL, NULL) == RW_ERR_ARG);
    rw_sched_free(ks);
    rw_coll_options opt = rw_coll_options_default();
    opt.gamma = 1e-10;
    CHECK(rw_predict_collective(net, "reduce", "binomial", k, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK(r.time > 3 * (a + k * b) + k * 1e-10);
    CHECK(rw_predict_collective(net, "allgather", "rdb", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 3 * a + 7 * k * b, 1e-6);
    /* chain: rank 0 posts its 128 segments at once; they share the pair's
     * bandwidth and arrive together, and so on down the chain: 7 hops of
     * alpha + k beta. */
    CHECK(rw_predict_collective(net, "bcast", "chain", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 7 * (a + k * b), 1e-6);
    const char *ops[] = {"alltoall", "bcast", "reduce", "allreduce", "allgather", "gather", "scatter"};
    for (int i = 0; i < 7; i++) {
        char algs[256];
        strncpy(algs, rw_collective_algorithms(ops[i]), sizeof algs - 1);
        algs[sizeof algs - 1] = 0;
        for (char *alg = strtok(algs, ","); alg; alg = strtok(NULL, ",")) {
            rw_status st = rw_predict_collective(net, ops[i], alg, 65536, NULL, RW_SIM_SHARED, &r);
            if (st != RW_OK)
                fprintf(stderr, "%s %s: %s\n", ops[i], alg, rw_last_error());
            CHECK(st == RW_OK && r.time > 0);
        }
    }
    CHECK(rw_predict_collective(net, "alltoall", "nope", k, NULL, RW_SIM_SHARED, &r) == RW_ERR_ARG);
    CHECK(strstr(rw_last_error(), "pair, ring, bruck, linear") != NULL);
    CHECK(rw_predict_collective(net, "barrier", "x", k, NULL, RW_SIM_SHARED, &r) == RW_ERR_ARG);
    CHECK(rw_predict_collective(net, "alltoall", "pair", -1, NULL, RW_SIM_SHARED, &r) == RW_ERR_ARG);
    int32_t place6[6] = {0, 1, 2, 3, 4, 5};
    CHECK(rw_pnet_set_placement(net, 6, place6) == RW_OK);
    CHECK(rw_predict_collective(net, "alltoall", "pair", k, NULL, RW_SIM_SHARED, &r) == RW_ERR_ARG);
    CHECK(rw_predict_collective(net, "alltoall", "ring", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK(rw_predict_collective(net, "allreduce", "rdb", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    CHECK(rw_predict_collective(net, "allreduce", "rabenseifner", k, NULL, RW_SIM_SHARED, &r) == RW_OK);
    rw_pnet_free(net);
}

static void test_bad_network(void)
{
    double a[4] = {0, 1e-6, 1e-6, 0}, b[4] = {0, -1, 1e-9, 0};
    rw_pnet *net = NULL;
    CHECK(rw_pnet_create(2, a, b, &net) == RW_ERR_ARG && net == NULL);
    b[1] = 1e-9;
    CHECK(rw_pnet_create(2, a, b, &net) == RW_OK);
    int32_t s[1] = {0}, d[1] = {0};
    CHECK(rw_pnet_add_link(net, 1e9, 1, s, d, NULL) == RW_ERR_ARG);
    CHECK(rw_pnet_add_link(net, 0, 0, NULL, NULL, NULL) == RW_ERR_ARG);
    int32_t place[2] = {0, 2};
    CHECK(rw_pnet_set_placement(net, 2, place) == RW_ERR_ARG);
    rw_sched *sc;
    CHECK(rw_sched_create(3, &sc) == RW_OK);
    rw_sim_result r;
    CHECK(rw_simulate(net, sc, RW_SIM_SHARED, &r, NULL) == RW_ERR_ARG);
    rw_sched_free(sc);
    rw_pnet_free(net);
}

static void test_formulas(void)
{
    CHECK_CLOSE(rw_luo_pairwise(512, 2.37e-6, 1 / 6343e6, 4096), 511 * (2.37e-6 + 4096 / 6343e6), 1e-12);
    CHECK_CLOSE(rw_luo_bruck(16, 1e-6, 1e-9, 100), 4e-6 + 0.5 * 4 * 15 * 100e-9, 1e-12);
    CHECK_CLOSE(rw_luo_wait(16, 0.8), (15.0 / 16) * 0.8 / 0.4, 1e-12);
    CHECK(isnan(rw_luo_wait(16, 1.0)));
    CHECK_CLOSE(rw_luo_contention(2, 1e-6, 0, 64, 32, 3, 16, 0.5, 1e-9), 1e-6 + 2 * 3 * rw_luo_wait(16, 0.5) * 1e-9,
                1e-12);
    CHECK_CLOSE(rw_loggp(1e-6, 0.5e-6, 1e-9, 1001), 2e-6 + 1e-6, 1e-12);
    CHECK_CLOSE(rw_hockney(1e-6, 1e-9, 1000), 2e-6, 1e-12);
}

static void test_traffic(void)
{
    /* 0 -> 1 and 0 -> 2, 1 MB each, 10 messages, over 2 iterations, node 0
     * injecting at 1 GB/s: one phase of 2 x 0.5 MB sharing 1 GB/s. Rank 0's
     * traffic to itself stays in memory. */
    int32_t src[3] = {0, 0, 0}, dst[3] = {0, 1, 2};
    int64_t msgs[3] = {1000, 10, 10}, bytes[3] = {1000000000, 1000000, 1000000};
    rw_matrix *m;
    CHECK(rw_matrix_create(3, 3, src, dst, msgs, bytes, &m) == RW_OK);
    rw_sched *s;
    CHECK(rw_sched_traffic(m, 2, &s) == RW_OK);
    CHECK(rw_sched_n_transfers(s) == 2);
    rw_pnet *net = uniform(3, 1e-6, 0, 0, 0);
    double inject[3] = {1e9, 0, 0};
    CHECK(rw_pnet_set_node_caps(net, inject, NULL) == RW_OK);
    CHECK_CLOSE(run(net, s), 5 * 1e-6 + 1e6 / 1e9, 1e-9);
    rw_sched_free(s);
    CHECK(rw_sched_traffic(m, 0.5, &s) == RW_ERR_ARG && s == NULL);
    rw_matrix_free(m);
    rw_pnet_free(net);
}

/* Contention-free (Hockney) mode: a rank's sends go one after another, so a
 * chain bcast pipelines its segments instead of sending them all at once:
 * (segments + P - 2) steps of alpha + segment beta. */
static void test_contention_free_serialises_a_sender(void)
{
    double a = 2e-6, beta = 1e-10, seg = 8192;
    rw_pnet *net = uniform(3, a, beta, 0, 0);
    rw_coll_options opt = rw_coll_options_default();
    rw_sim_result r;
    CHECK(rw_predict_collective(net, "bcast", "chain", 128 * seg, &opt, RW_SIM_CONTENTION_FREE, &r) == RW_OK);
    CHECK_CLOSE(r.time, (128 + 1) * (a + seg * beta), 1e-12);
    /* Shared mode: the 128 segments share the pair's bandwidth and arrive
     * together, so rank 1 forwards them at the end: two whole hops. */
    CHECK(rw_predict_collective(net, "bcast", "chain", 128 * seg, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 2 * (a + 128 * seg * beta), 1e-9);
    rw_pnet_free(net);
}

/* Overheads as SMPI charges smpi/os, ois and or: an eager message costs its
 * sender o and its receiver o_recv, each on the rank's CPU, one after
 * another; a message of 64 KiB or more costs neither. */
static void test_overheads(void)
{
    double a = 2e-6, os = 1e-6, orv = 0.5e-6;
    rw_pnet *net = uniform(4, a, 0, 0, 0);
    double o[4] = {os, os, os, os}, o_recv[4] = {orv, orv, orv, orv};
    CHECK(rw_pnet_set_overhead(net, o) == RW_OK);
    CHECK(rw_pnet_set_recv_overhead(net, o_recv) == RW_OK);
    rw_coll_options opt = rw_coll_options_default();
    rw_sim_result r;
    /* flat: the root's three isends leave os apart; the last arrives at 3 os + alpha */
    CHECK(rw_predict_collective(net, "bcast", "flat", 1024, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 3 * os + a + orv, 1e-12);
    CHECK(rw_predict_collective(net, "bcast", "flat", 65536, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, a, 1e-12);
    /* binomial over 4: the root sends to 2 then 1 (blocking sends, detached:
     * os each), rank 2 forwards to 3 once it has received (+ or) */
    CHECK(rw_predict_collective(net, "bcast", "binomial", 1024, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 2 * (os + a + orv), 1e-12);
    /* A sendrecv posts its receive after its own send overhead: with rank
     * 1's overhead 3 us, rank 0's message to 1 begins at 3 us, not 1 us. */
    double o2[4] = {os, 3e-6, os, os};
    CHECK(rw_pnet_set_overhead(net, o2) == RW_OK);
    rw_sched *s = NULL;
    CHECK(rw_sched_collective("allgather", "ring", 2, 1024, &opt, &s) == RW_OK);
    double fin[2];
    int32_t src;
    CHECK(rw_simulate(net, s, RW_SIM_SHARED, &r, fin) == RW_OK);
    CHECK(rw_sched_transfer(s, 0, &src, NULL, NULL) == RW_OK && src == 0);
    CHECK_CLOSE(fin[0], 3e-6 + a + orv, 1e-12);
    CHECK_CLOSE(fin[1], 3e-6 + a + orv, 1e-12);
    rw_sched_free(s);
    /* gather linear of 4 ranks: the root posts each blocking receive after
     * the previous one and its receive overhead, and a message moves once
     * its receive is posted: os + 3 (alpha + or). */
    CHECK(rw_pnet_set_overhead(net, o) == RW_OK);
    CHECK(rw_predict_collective(net, "gather", "linear", 1024, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, os + 3 * (a + orv), 1e-12);
    /* linear all-to-all posts every receive first: the arrivals' receive
     * overheads follow one another on each rank: os x 3 sends, then the
     * last arrival's alpha and three receive overheads at most. */
    CHECK(rw_predict_collective(net, "alltoall", "linear", 1024, &opt, RW_SIM_SHARED, &r) == RW_OK);
    CHECK_CLOSE(r.time, 3 * os + a + orv, 1e-12);
    double bad[4] = {0, -1, 0, 0};
    CHECK(rw_pnet_set_recv_overhead(net, bad) == RW_ERR_ARG);
    CHECK(rw_pnet_set_recv_overhead(NULL, o) == RW_ERR_ARG);
    rw_pnet_free(net);
}

/* A flow spread over two routes loads each link with its share: alone, half
 * of it on a 1 GB/s link runs at 2 GB/s; with a second flow wholly on that
 * link, the link's 1 GB/s is 0.5 x r + r' and max-min gives r = r'. */
static void test_link_shares(void)
{
    rw_pnet *net = uniform(3, 0, 1e-10, 0, 0); /* pairs at 10 GB/s */
    int32_t src[2] = {0, 1}, dst[2] = {2, 2};
    double half[2] = {0.5, 1.0};
    CHECK(rw_pnet_add_link_shares(net, 1e9, 1, src, dst, half, NULL) == RW_OK);
    CHECK(rw_pnet_add_link_shares(net, 1e9, 1, src, dst, (double[]){0.0}, NULL) == RW_ERR_ARG);
    CHECK(rw_pnet_add_link_shares(net, 1e9, 1, src, dst, (double[]){1.5}, NULL) == RW_ERR_ARG);
    rw_sched *s;
    CHECK(rw_sched_create(3, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 2, 2e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK_CLOSE(run(net, s), 1e-3, 1e-9);
    rw_sched_free(s);
    rw_pnet_free(net);
    net = uniform(3, 0, 1e-10, 0, 0);
    CHECK(rw_pnet_add_link_shares(net, 1e9, 2, src, dst, half, NULL) == RW_OK);
    CHECK(rw_sched_create(3, &s) == RW_OK);
    CHECK(rw_sched_add(s, 0, 2, 1e6, 0, 0, NULL, NULL) == RW_OK);
    CHECK(rw_sched_add(s, 1, 2, 1e6, 0, 0, NULL, NULL) == RW_OK);
    /* both at 1 / 1.5 GB/s until both end together */
    CHECK_CLOSE(run(net, s), 1e6 / (1e9 / 1.5), 1e-9);
    rw_sched_free(s);
    rw_pnet_free(net);
}

int main(void)
{
    test_link_shares();
    test_single_transfer();
    test_injection_sharing();
    test_latency_weighted_sharing();
    test_max_min_links();
    test_pair_sharing();
    test_dependencies();
    test_collectives_uniform();
    test_bad_network();
    test_formulas();
    test_traffic();
    test_contention_free_serialises_a_sender();
    test_overheads();
    CHECK_DONE();
}
