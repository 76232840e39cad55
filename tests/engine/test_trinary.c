/* The triple trinary trees (engine/src/coll/trinary.c) and their broadcast
 * schedule: spanning trees from every root, inner ranks disjoint, no
 * directed edge shared from 4 ranks on, at most three children per inner
 * rank, logarithmic depth, parts and segments; the predictor's schedule
 * moves every byte to every rank and beats the binomial tree on long
 * messages where bandwidth rules. */
#include "../../engine/src/coll/trinary.h"
#include "check.h"
#include "rankwise_coll_tune.h"
#include "rankwise_predict.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int depth_of(const rw_tree *t, int32_t r)
{
    int d = 0;
    for (; t->parent[r] >= 0; r = t->parent[r])
        d++;
    return d;
}

static void trees_in(int32_t n, int32_t root, const int32_t *order)
{
    rw_tree *t[3];
    CHECK(rw_tree_trinary_ordered(n, root, order, t) == RW_OK);
    if (!t[0])
        return;
    int *sent = calloc((size_t)n, sizeof *sent), *inner_in = calloc((size_t)n, sizeof *inner_in);
    char *edge = calloc((size_t)n * (size_t)n, 1);
    int shared = 0, max_depth = 0;
    for (int k = 0; k < 3; k++) {
        CHECK(rw_tree_check(t[k]) == RW_OK && t[k]->root == root && t[k]->n_ranks == n);
        for (int32_t r = 0; r < n; r++) {
            int nc = t[k]->first_child[r + 1] - t[k]->first_child[r];
            sent[r] += nc;
            if (nc > 0 && r != root)
                inner_in[r]++;
            CHECK(r == root ? nc <= 2 : nc <= 3);
            for (int32_t i = t[k]->first_child[r]; i < t[k]->first_child[r + 1]; i++) {
                size_t e = (size_t)r * (size_t)n + (size_t)t[k]->child[i];
                shared += edge[e];
                edge[e] = 1;
            }
            int d = depth_of(t[k], r);
            max_depth = d > max_depth ? d : max_depth;
        }
    }
    if (n >= 4)
        CHECK(shared == 0);
    for (int32_t r = 0; r < n; r++)
        if (r != root) { /* inner in one tree at most: sends at most the message */
            CHECK(inner_in[r] <= 1);
            CHECK(sent[r] <= 3);
        }
    /* ternary heap of n/3 inner ranks, one level of leaves, the root above */
    int bound = 2;
    for (int32_t m = 1; m < n / 3 + 1; m *= 3)
        bound++;
    CHECK(max_depth <= bound);
    if (max_depth > bound)
        fprintf(stderr, "n %d root %d depth %d > %d\n", (int)n, (int)root, max_depth, bound);
    for (int k = 0; k < 3; k++)
        rw_tree_free(t[k]);
    free(sent);
    free(inner_in);
    free(edge);
}

static void trees(int32_t n, int32_t root)
{
    trees_in(n, root, NULL);
}

/* A 4x4x2 torus (rankwise's torus numbering: x fastest), latency 2 us +
 * 2 us per router hop, with rank r on node node_of[r]. */
enum { TX = 4, TY = 4, TZ = 2, TN = TX * TY * TZ };

static int ring_hops(int a, int b, int m)
{
    int d = abs(a - b);
    return d < m - d ? d : m - d;
}

static int hops(int i, int j)
{
    return ring_hops(i % TX, j % TX, TX) + ring_hops(i / TX % TY, j / TX % TY, TY) +
           ring_hops(i / (TX * TY), j / (TX * TY), TZ);
}

static rw_pnet *torus(const int32_t *node_of)
{
    double *a = malloc(sizeof(double) * TN * TN), *b = malloc(sizeof(double) * TN * TN);
    for (int i = 0; i < TN; i++)
        for (int j = 0; j < TN; j++) {
            a[i * TN + j] = i == j ? 0 : 2e-6 + 2e-6 * hops(i, j);
            b[i * TN + j] = 1 / 12.5e9;
        }
    rw_pnet *net = NULL;
    CHECK(rw_pnet_create(TN, a, b, &net) == RW_OK);
    CHECK(rw_pnet_set_placement(net, TN, node_of) == RW_OK);
    free(a);
    free(b);
    return net;
}

/* Router hops of the three trees' edges, ranks on node_of. */
static int tree_hops(const int32_t *node_of, const int32_t *order, int32_t root)
{
    rw_tree *t[3];
    int sum = 0;
    CHECK(rw_tree_trinary_ordered(TN, root, order, t) == RW_OK);
    for (int k = 0; k < 3 && t[k]; k++) {
        for (int32_t r = 0; r < TN; r++)
            if (t[k]->parent[r] >= 0)
                sum += hops(node_of[r], node_of[t[k]->parent[r]]);
        rw_tree_free(t[k]);
    }
    return sum;
}

/* The trees laid along the network: on a torus whose ranks are shuffled
 * the walk brings the trees' edges back to about torus order's hops, the
 * trees keep their properties over any order, and rw_trinary_best_order
 * keeps rank order where it follows the torus and walks where it does not. */
static void along_the_network(void)
{
    int32_t in_order[TN], shuffled[TN], order[TN], seen[TN];
    for (int i = 0; i < TN; i++)
        in_order[i] = shuffled[i] = i;
    uint64_t x = 12345;
    for (int i = TN - 1; i > 0; i--) { /* a fixed shuffle (Fisher-Yates, xorshift) */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = (int)(x % (uint64_t)(i + 1)), tmp = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = tmp;
    }
    rw_pnet *net = torus(shuffled);
    CHECK(rw_trinary_order(net, order) == RW_OK);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < TN; i++)
        seen[order[i]]++;
    for (int i = 0; i < TN; i++)
        CHECK(seen[i] == 1);
    CHECK(order[0] == 0);
    int walked = tree_hops(shuffled, order, 0), ranked = tree_hops(shuffled, NULL, 0),
        torus_order = tree_hops(in_order, NULL, 0);
    CHECK(walked < ranked);                   /* 159 against 244 */
    CHECK(walked <= torus_order);             /* 175 in torus order */
    for (int32_t root = 0; root < TN; root += 7) /* every property, from other roots too */
        trees_in(TN, root, order);
    CHECK(rw_trinary_best_order(net, seen) == RW_OK);
    CHECK(memcmp(seen, order, sizeof order) == 0); /* shuffled: the walk */
    rw_pnet_free(net);
    net = torus(in_order);
    CHECK(rw_trinary_best_order(net, order) == RW_OK);
    for (int i = 0; i < TN; i++)
        CHECK(order[i] == i); /* torus order: kept */
    rw_pnet_free(net);
    /* not a permutation */
    rw_tree *t[3];
    int32_t bad[4] = {0, 1, 1, 3};
    CHECK(rw_tree_trinary_ordered(4, 0, bad, t) == RW_ERR_ARG && !t[0]);
    CHECK(rw_trinary_order(NULL, order) == RW_ERR_ARG);
}

static void parts(void)
{
    for (size_t bytes = 0; bytes < 40; bytes++) {
        size_t off, total = 0, next = 0;
        for (int k = 0; k < 3; k++) {
            size_t len = rw_trinary_part(bytes, k, &off);
            CHECK(off == next);
            CHECK(len == bytes / 3 || len == bytes / 3 + 1);
            next = off + len;
            total += len;
        }
        CHECK(total == bytes);
    }
    CHECK(rw_trinary_segment(3 << 22) == 24576);           /* 4 MiB thirds: capped */
    CHECK(rw_trinary_segment(3 * 300000) == 300000 / 16); /* about sixteen segments */
    CHECK(rw_trinary_segment(30000) == 10000);             /* a small third: whole */
    CHECK(rw_trinary_segment(3 * 20000) == 8192);
}

/* A uniform network of n nodes, 1 us and 1 GB/s between every pair. */
static rw_pnet *uniform(int32_t n)
{
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n), *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    for (int32_t i = 0; i < n * n; i++) {
        a[i] = 1e-6;
        b[i] = 1e-9;
    }
    rw_pnet *net = NULL;
    CHECK(rw_pnet_create(n, a, b, &net) == RW_OK);
    free(a);
    free(b);
    return net;
}

static void schedule(void)
{
    rw_pnet *net = uniform(27);
    rw_coll_options opt = rw_coll_options_default();
    for (int32_t root = 0; root < 27; root += 13) {
        opt.root = root;
        rw_sched *s = NULL;
        double bytes = 1 << 20;
        CHECK(rw_sched_library(net, "bcast", "trinary", bytes, &opt, &s) == RW_OK);
        if (!s)
            continue;
        /* every rank but the root receives the whole message, the root nothing */
        double *in = calloc(27, sizeof *in);
        for (int64_t i = 0; i < rw_sched_n_transfers(s); i++) {
            int32_t src, dst;
            double sz;
            rw_sched_transfer(s, i, &src, &dst, &sz);
            in[dst] += sz;
        }
        for (int32_t r = 0; r < 27; r++)
            CHECK(in[r] == (r == root ? 0.0 : bytes));
        free(in);
        rw_sim_result tri, bin;
        CHECK(rw_simulate(net, s, RW_SIM_SHARED, &tri, NULL) == RW_OK);
        CHECK(rw_predict_collective(net, "bcast", "binomial", bytes, &opt, RW_SIM_SHARED, &bin) == RW_OK);
        /* binomial: 5 rounds of the whole message; trinary: a third down each tree at once (every edge its
         * own 1 GB/s pair, no node cap here) and a pipeline's fill: the window's segments share an edge, so
         * each of at most 5 levels adds about WINDOW segments' time. With every segment in flight at once
         * (no window) none was in before the end, nothing was forwarded early, and the depth multiplied the
         * time (over 1.05 ms, three times a third's 0.35 ms) */
        double seg = (double)rw_trinary_segment((size_t)bytes);
        CHECK(tri.time < 0.5 * bin.time);
        CHECK(tri.time > bytes / 3 * 1e-9 && tri.time < (bytes / 3 + 5.0 * (RW_TRINARY_WINDOW + 1) * seg) * 1e-9);
        rw_sched_free(s);
    }
    /* reduce: every non-root rank sends each element once (its thirds up three trees), the root
     * nothing; allreduce: that and the broadcast, the broadcast after the root has everything */
    opt.root = 5;
    double bytes = 1 << 20, red_time = 0, all_time = 0, bc_time = 0;
    const char *ops[3] = {"reduce", "allreduce", "bcast"};
    for (int o = 0; o < 3; o++) {
        rw_sched *s = NULL;
        CHECK(rw_sched_library(net, ops[o], "trinary", bytes, &opt, &s) == RW_OK);
        if (!s)
            continue;
        double *out = calloc(27, sizeof *out);
        for (int64_t i = 0; i < rw_sched_n_transfers(s); i++) {
            int32_t src, dst;
            double sz;
            rw_sched_transfer(s, i, &src, &dst, &sz);
            out[src] += sz;
        }
        if (o == 0)
            for (int32_t r = 0; r < 27; r++)
                CHECK(out[r] == (r == 5 ? 0.0 : bytes));
        free(out);
        rw_sim_result res;
        CHECK(rw_simulate(net, s, RW_SIM_SHARED, &res, NULL) == RW_OK);
        *(o == 0 ? &red_time : o == 1 ? &all_time : &bc_time) = res.time;
        rw_sched_free(s);
    }
    CHECK(all_time > red_time && all_time > bc_time && all_time <= 1.05 * (red_time + bc_time));
    opt.root = 0;
    rw_sched *s = NULL;
    CHECK(rw_sched_library(net, "bcast", "fastest", 1024, &opt, &s) == RW_ERR_ARG && !s);
    CHECK(rw_sched_library(net, "allgather", "trinary", 1024, &opt, &s) == RW_ERR_ARG && !s);
    opt.root = 27;
    CHECK(rw_sched_library(net, "bcast", "trinary", 1024, &opt, &s) == RW_ERR_ARG && !s);
    rw_pnet_free(net);
}

/* In the allreduce a rank's broadcast segments arrive only once all its
 * reduce's segments are in (the library runs the reduce to its end, then
 * the broadcast): the schedule whose broadcast waited for the reduce's last
 * segments only (short, in before the others) predicted 0.296 ms where
 * SMPI took 0.426 ms. */
static void allreduce_after_reduce(void)
{
    rw_pnet *net = uniform(13);
    rw_coll_options opt = rw_coll_options_default();
    rw_sched *s = NULL, *red = NULL;
    double bytes = 3 << 20; /* thirds of 1 MiB: 43 segments of 24 KiB, more than the window */

    /* allreduce: the reduce's transfers first (as many as the reduce alone has), then the broadcast's */
    CHECK(rw_sched_library(net, "reduce", "trinary", bytes, &opt, &red) == RW_OK);
    CHECK(rw_sched_library(net, "allreduce", "trinary", bytes, &opt, &s) == RW_OK);
    int64_t n_red = red ? rw_sched_n_transfers(red) : 0;
    int64_t n = s ? rw_sched_n_transfers(s) : 0;
    double *finish = calloc((size_t)n + 1, sizeof *finish);
    rw_sim_result res;
    CHECK(s && rw_simulate(net, s, RW_SIM_SHARED, &res, finish) == RW_OK);
    double *reduced = calloc(13, sizeof *reduced), *first_in = malloc(13 * sizeof *first_in);
    for (int r = 0; r < 13; r++)
        first_in[r] = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        int32_t src, dst;
        double sz;
        rw_sched_transfer(s, i, &src, &dst, &sz);
        if (src == dst) /* the allreduce's marks of where a rank's reduce is done */
            continue;
        if (i < n_red)
            reduced[dst] = finish[i] > reduced[dst] ? finish[i] : reduced[dst];
        else
            first_in[dst] = finish[i] < first_in[dst] ? finish[i] : first_in[dst];
    }
    for (int r = 1; r < 13; r++)
        CHECK(first_in[r] > reduced[r]);
    free(reduced);
    free(first_in);
    free(finish);
    rw_sched_free(red);
    rw_sched_free(s);
    rw_pnet_free(net);
}

int main(void)
{
    for (int32_t n = 1; n <= 40; n++)
        for (int32_t root = 0; root < n; root++)
            trees(n, root);
    trees(1000, 17);
    rw_tree *t[3];
    CHECK(rw_tree_trinary(0, 0, t) == RW_ERR_ARG && !t[0]);
    CHECK(rw_tree_trinary(4, 4, t) == RW_ERR_ARG);
    parts();
    along_the_network();
    schedule();
    allreduce_after_reduce();
    if (check_failures)
        fprintf(stderr, "%d failures\n", check_failures);
    return check_failures != 0;
}
