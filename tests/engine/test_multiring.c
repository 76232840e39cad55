/* The multi-ring allgather's rings (engine/src/coll/multiring.c) and its
 * schedule: parts that cover a block, the ring order keeping neighbours
 * one hop apart on a torus and each rack in one stretch on a fat tree
 * whose racks are dealt out of rank order, rank order where every pair
 * costs the same; the schedule moves every block to every rank and, on a
 * network whose NICs run both ways at once, beats the ring. */
#include "../../engine/src/coll/multiring.h"
#include "check.h"
#include "rankwise_coll_rules.h"
#include "rankwise_coll_tune.h"
#include "rankwise_predict.h"

#include <stdlib.h>
#include <string.h>

static void parts(void)
{
    for (size_t bytes = 0; bytes < 40; bytes++)
        for (int k = 1; k <= 4; k++) {
            size_t off, total = 0, next = 0;
            for (int j = 0; j < k; j++) {
                size_t len = rw_multiring_part(bytes, k, j, &off);
                CHECK(off == next);
                CHECK(len == bytes / (size_t)k || len == bytes / (size_t)k + 1);
                next = off + len;
                total += len;
            }
            CHECK(total == bytes);
        }
    /* rings 0 and 1 run opposite ways and are each other's inverse */
    for (int32_t p = 0; p < 5; p++) {
        CHECK(rw_multiring_next(5, 0, p) == (p + 1) % 5);
        CHECK(rw_multiring_next(5, 1, p) == (p + 4) % 5);
        for (int k = 0; k < 2; k++)
            CHECK(rw_multiring_prev(5, k, rw_multiring_next(5, k, p)) == p);
    }
}

/* Hops between nodes a and b of an X x Y x Z torus numbered x fastest. */
static int hops(const int *d, int32_t a, int32_t b)
{
    int h = 0;
    for (int k = 0; k < 3; k++) {
        int ca = a % d[k], cb = b % d[k], diff = abs(ca - cb);
        h += diff < d[k] - diff ? diff : d[k] - diff;
        a /= d[k];
        b /= d[k];
    }
    return h;
}

/* n nodes, alpha = lat(i, j), 10 GB/s everywhere. */
static rw_pnet *network(int32_t n, double (*lat)(int32_t, int32_t, const void *), const void *arg)
{
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n), *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            a[i * n + j] = i == j ? 0.2e-6 : lat(i, j, arg);
            b[i * n + j] = 1e-10;
        }
    rw_pnet *net = NULL;
    CHECK(rw_pnet_create(n, a, b, &net) == RW_OK);
    free(a);
    free(b);
    return net;
}

static double torus_lat(int32_t i, int32_t j, const void *arg)
{
    return 2e-6 + 1e-6 * hops(arg, i, j);
}

static double uniform_lat(int32_t i, int32_t j, const void *arg)
{
    (void)i, (void)j, (void)arg;
    return 3e-6;
}

static double rack_lat(int32_t i, int32_t j, const void *arg)
{
    const int32_t *rack = arg;
    return rack[i] == rack[j] ? 2e-6 : 6e-6;
}

static int is_permutation(const int32_t *order, int32_t n)
{
    char *seen = calloc((size_t)n, 1);
    int ok = order[0] == 0;
    for (int32_t p = 0; p < n; p++) {
        ok = ok && order[p] >= 0 && order[p] < n && !seen[order[p]];
        if (order[p] >= 0 && order[p] < n)
            seen[order[p]] = 1;
    }
    free(seen);
    return ok;
}

static void orders(void)
{
    int32_t order[64];
    /* no network, or one where every pair costs the same: rank order */
    CHECK(rw_multiring_order(NULL, 7, order) == RW_OK);
    for (int32_t p = 0; p < 7; p++)
        CHECK(order[p] == p);
    rw_pnet *flat = network(9, uniform_lat, NULL);
    CHECK(rw_multiring_order(flat, 9, order) == RW_OK);
    for (int32_t p = 0; p < 9; p++)
        CHECK(order[p] == p);
    CHECK(rw_multiring_order(flat, 8, order) == RW_ERR_ARG); /* not the network's rank count */
    rw_pnet_free(flat);
    /* a 4x4x4 torus: every ring edge one hop (rank order has 16 edges of 2 and 3 hops) */
    int d[3] = {4, 4, 4};
    rw_pnet *torus = network(64, torus_lat, d);
    CHECK(rw_multiring_order(torus, 64, order) == RW_OK);
    CHECK(is_permutation(order, 64));
    int worst = 0;
    for (int32_t p = 0; p < 64; p++) {
        int h = hops(d, order[p], order[(p + 1) % 64]);
        worst = h > worst ? h : worst;
    }
    CHECK(worst == 1);
    rw_pnet_free(torus);
    /* a fat tree of 8 racks of 8 dealt to the ranks out of order: the ring
     * enters and leaves each rack once */
    int32_t rack[64];
    for (int32_t r = 0; r < 64; r++)
        rack[r] = (r * 5 + r / 8) % 8; /* 8 per rack, neighbours in rank order in other racks */
    int count[8] = {0};
    for (int32_t r = 0; r < 64; r++)
        count[rack[r]]++;
    for (int k = 0; k < 8; k++)
        CHECK(count[k] == 8);
    rw_pnet *tree = network(64, rack_lat, rack);
    CHECK(rw_multiring_order(tree, 64, order) == RW_OK);
    CHECK(is_permutation(order, 64));
    int crossings = 0, rank_order_crossings = 0;
    for (int32_t p = 0; p < 64; p++) {
        crossings += rack[order[p]] != rack[order[(p + 1) % 64]];
        rank_order_crossings += rack[p] != rack[(p + 1) % 64];
    }
    CHECK(crossings == 8);
    CHECK(rank_order_crossings > 32);
    /* the public order (what coll tune writes as ring-order) is the same tour */
    int32_t pub[64];
    CHECK(rw_coll_multiring_order(tree, pub) == RW_OK);
    CHECK(memcmp(pub, order, sizeof pub) == 0);
    CHECK(rw_coll_multiring_order(NULL, pub) == RW_ERR_ARG);
    rw_pnet_free(tree);
}

/* A rules file's ring-order line: read as given, refused when not a permutation. */
static void rules_ring_order(void)
{
    const char *path = "rules_ring.rwr";
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("rankwise-coll-rules 1\ncomm-size 4\nring-order 2,0,3,1\n"
          "rule op=allgather root=* bytes=0:10 alg=multiring segment=0\n", f);
    fclose(f);
    rw_coll_rules *r = NULL;
    CHECK(rw_coll_rules_read(path, &r) == RW_OK);
    const int32_t *o = rw_coll_rules_ring_order(r);
    CHECK(o && o[0] == 2 && o[1] == 0 && o[2] == 3 && o[3] == 1);
    CHECK(rw_coll_rules_trinary_order(r) == NULL);
    rw_coll_rules_free(r);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("rankwise-coll-rules 1\ncomm-size 4\nring-order 2,0,2,1\n", f);
    fclose(f);
    r = NULL;
    CHECK(rw_coll_rules_read(path, &r) == RW_ERR_PARSE && r == NULL);
    remove(path);
}

static void schedule(void)
{
    int d[3] = {4, 4, 2};
    rw_pnet *net = network(32, torus_lat, d);
    double caps[32];
    for (int i = 0; i < 32; i++)
        caps[i] = 1e10; /* one NIC per node, each way: two rings share it */
    CHECK(rw_pnet_set_node_caps(net, caps, caps) == RW_OK);
    rw_coll_options opt = rw_coll_options_default();
    double bytes = 1 << 20;
    rw_sched *s = NULL;
    CHECK(rw_sched_library(net, "allgather", "multiring", bytes, &opt, &s) == RW_OK);
    if (s) {
        /* every rank receives the other 31 blocks, in two parts each */
        double in[32] = {0}, out[32] = {0};
        CHECK(rw_sched_n_transfers(s) == 31 * 32 * 2);
        for (int64_t i = 0; i < rw_sched_n_transfers(s); i++) {
            int32_t src, dst;
            double sz;
            rw_sched_transfer(s, i, &src, &dst, &sz);
            CHECK(sz == bytes / 2);
            CHECK(hops(d, src, dst) == 1);
            in[dst] += sz;
            out[src] += sz;
        }
        for (int32_t r = 0; r < 32; r++)
            CHECK(in[r] == 31 * bytes && out[r] == 31 * bytes);
        rw_sched_free(s);
    }
    /* one NIC each way: the two rings share it, as fast as the ring (within the latencies) */
    rw_sim_result multi, ring;
    CHECK(rw_predict_library(net, "allgather", "multiring", bytes, &opt, RW_SIM_SHARED, &multi) == RW_OK);
    CHECK(rw_predict_library(net, "allgather", "ring", bytes, &opt, RW_SIM_SHARED, &ring) == RW_OK);
    CHECK(multi.time > 31 * bytes / 1e10);
    CHECK(multi.time < 1.05 * ring.time && ring.time < 1.1 * multi.time);
    /* without the NIC caps each pair has its own 10 GB/s: two parts at once, twice as fast */
    CHECK(rw_pnet_set_node_caps(net, NULL, NULL) == RW_OK);
    CHECK(rw_predict_library(net, "allgather", "multiring", bytes, &opt, RW_SIM_SHARED, &multi) == RW_OK);
    CHECK(rw_predict_library(net, "allgather", "ring", bytes, &opt, RW_SIM_SHARED, &ring) == RW_OK);
    CHECK(ring.time > 1.8 * multi.time);
    CHECK(rw_sched_library(net, "bcast", "multiring", bytes, &opt, &s) == RW_ERR_ARG);
    CHECK(rw_sched_library(net, "allreduce", "multiring", bytes, &opt, &s) == RW_ERR_ARG);
    rw_pnet_free(net);
}

int main(void)
{
    parts();
    orders();
    rules_ring_order();
    schedule();
    CHECK_DONE();
}
