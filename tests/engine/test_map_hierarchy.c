/* rw_network_hierarchy: racks (and pods) found from noisy numbers alone,
 * whatever the node numbering; uniform networks flat and in index order;
 * every group of every level contiguous in the order. */
#include <stdlib.h>
#include <string.h>

#include "rankwise_map.h"
#include "check.h"
#include "map_fixtures.h"

/* n nodes whose hidden label is rack[i] (and pod[i], may be NULL); latency
 * uniformly in [10, 12] us inside a rack, [30, 40] between racks of a pod,
 * [100, 130] between pods; the same bandwidth everywhere. */
static rw_network *noisy(int n, const int *rack, const int *pod)
{
    rw_network *net = NULL;
    CHECK(rw_network_create(n, NULL, &net) == RW_OK);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            size_t p = (size_t)a * n + b;
            double lat;
            if (a == b)
                lat = 0.5e-6;
            else if (rack[a] == rack[b])
                lat = fx_uniform(10e-6, 12e-6);
            else if (!pod || pod[a] == pod[b])
                lat = fx_uniform(30e-6, 40e-6);
            else
                lat = fx_uniform(100e-6, 130e-6);
            net->alpha[p] = lat;
            net->beta[p] = a == b ? 1e-11 : 1e-10; /* 10 GB/s */
        }
    return net;
}

/* Labels shuffled over the node indices: no help from the numbering. */
static void shuffled_labels(int n, int per_rack, int racks_per_pod, int *rack, int *pod)
{
    int *perm = malloc(n * sizeof *perm);
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = fx_below(i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int i = 0; i < n; i++) {
        rack[perm[i]] = i / per_rack;
        if (pod) pod[perm[i]] = i / (per_rack * racks_per_pod);
    }
    free(perm);
}

/* Same group at `level` exactly when the same label. */
static int level_is(const int32_t *group_of, int n, int level, const int *label)
{
    const int32_t *g = group_of + (size_t)level * n;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if ((g[a] == g[b]) != (label[a] == label[b])) return 0;
    return 1;
}

/* order is a permutation; level 0 alone, the last all together; groups
 * numbered 0.. in order of appearance and contiguous at every level; each
 * level refines the next. */
static int well_formed(const int32_t *group_of, const int32_t *order, int n, int levels)
{
    char *seen = calloc(n, 1);
    int ok = 1;
    for (int k = 0; k < n && ok; k++) {
        ok = order[k] >= 0 && order[k] < n && !seen[order[k]];
        if (ok) seen[order[k]] = 1;
    }
    free(seen);
    for (int k = 0; k < n && ok; k++) ok = group_of[order[k]] == k; /* level 0: alone */
    for (int i = 0; i < n && ok; i++) ok = group_of[(size_t)(levels - 1) * n + i] == 0;
    for (int l = 0; l < levels && ok; l++) {
        const int32_t *g = group_of + (size_t)l * n;
        int expect = 0;
        for (int k = 0; k < n && ok; k++) {
            int32_t x = g[order[k]];
            if (k > 0 && x == g[order[k - 1]]) continue;
            ok = x == expect++; /* a new group starts: the next number, never a return */
        }
        if (l + 1 < levels)
            for (int k = 1; k < n && ok; k++) /* same group at l => same group at l + 1 */
                if (g[order[k]] == g[order[k - 1]])
                    ok = group_of[(size_t)(l + 1) * n + order[k]] == group_of[(size_t)(l + 1) * n + order[k - 1]];
    }
    return ok;
}

static void test_racks(void)
{
    enum { N = 512, PER = 32 };
    int rack[N];
    int32_t *groups = malloc(8 * N * sizeof *groups), order[N];
    for (int seed = 1; seed <= 3; seed++) {
        fx_seed(100 + seed);
        shuffled_labels(N, PER, 0, rack, NULL);
        rw_network *net = noisy(N, rack, NULL);
        /* 0 bytes: latency decides; 1 MiB: a uniform 105 us transfer term
         * drowns the steps, and latency alone is tried next */
        double sizes[2] = {0, 1 << 20};
        for (int s = 0; s < 2; s++) {
            int levels = rw_network_hierarchy(net, sizes[s], 8, groups, order);
            CHECK(levels == 3);
            if (levels < 2) continue;
            CHECK(well_formed(groups, order, N, levels));
            CHECK(level_is(groups, N, 1, rack));
            int n_groups = 0;
            for (int i = 0; i < N; i++)
                if (groups[N + i] + 1 > n_groups) n_groups = groups[N + i] + 1;
            CHECK(n_groups == N / PER);
        }
        /* deterministic */
        int32_t *again = malloc(8 * N * sizeof *again), order2[N];
        int l1 = rw_network_hierarchy(net, 0, 8, groups, order);
        int l2 = rw_network_hierarchy(net, 0, 8, again, order2);
        CHECK(l1 == l2 && memcmp(groups, again, (size_t)l1 * N * sizeof *groups) == 0);
        CHECK(memcmp(order, order2, sizeof order) == 0);
        free(again);
        rw_network_free(net);
    }
    free(groups);
}

static void test_pods(void)
{
    enum { N = 128 }; /* 4 pods of 4 racks of 8 */
    int rack[N], pod[N];
    int32_t groups[8 * N], order[N];
    fx_seed(7);
    shuffled_labels(N, 8, 4, rack, pod);
    rw_network *net = noisy(N, rack, pod);
    int levels = rw_network_hierarchy(net, 4096, 8, groups, order);
    CHECK(levels == 4);
    if (levels == 4) {
        CHECK(well_formed(groups, order, N, levels));
        CHECK(level_is(groups, N, 1, rack));
        CHECK(level_is(groups, N, 2, pod));
    }
    /* Room for one middle level: the stronger jump stays. Pods 3x further
     * apart: their jump (80 -> 600 us round trip) beats the racks' (24 ->
     * 60 us). */
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            if (pod[a] != pod[b]) net->alpha[(size_t)a * N + b] *= 3;
    levels = rw_network_hierarchy(net, 4096, 3, groups, order);
    CHECK(levels == 3);
    if (levels == 3) {
        CHECK(well_formed(groups, order, N, levels));
        CHECK(level_is(groups, N, 1, pod));
    }
    rw_network_free(net);
}

static void test_uniform(void)
{
    enum { N = 40 };
    rw_network *net = NULL;
    CHECK(rw_network_create(N, NULL, &net) == RW_OK);
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            net->alpha[a * N + b] = a == b ? 1e-7 : 5e-6;
            net->beta[a * N + b] = a == b ? 1e-11 : 1e-10;
        }
    int32_t groups[8 * N], order[N];
    double sizes[3] = {0, 8, 1 << 20};
    for (int s = 0; s < 3; s++) {
        CHECK(rw_network_hierarchy(net, sizes[s], 8, groups, order) == 2);
        for (int i = 0; i < N; i++) {
            CHECK(order[i] == i);
            CHECK(groups[i] == i);
            CHECK(groups[N + i] == 0);
        }
    }
    /* all costs zero (a fresh network): flat too */
    rw_network *zero = NULL;
    CHECK(rw_network_create(N, NULL, &zero) == RW_OK);
    CHECK(rw_network_hierarchy(zero, 64, 8, groups, order) == 2);
    for (int i = 0; i < N; i++) CHECK(order[i] == i);
    rw_network_free(zero);
    /* tiny: one node is one level; two nodes are two */
    rw_network *one = NULL, *two = NULL;
    CHECK(rw_network_create(1, NULL, &one) == RW_OK && rw_network_create(2, NULL, &two) == RW_OK);
    CHECK(rw_network_hierarchy(one, 0, 8, groups, order) == 1 && order[0] == 0 && groups[0] == 0);
    CHECK(rw_network_hierarchy(two, 0, 8, groups, order) == 2);
    CHECK(order[0] == 0 && order[1] == 1 && groups[2] == 0 && groups[3] == 0);
    /* bad arguments */
    CHECK(rw_network_hierarchy(net, 0, 0, groups, order) == -1);
    CHECK(strlen(rw_last_error()) > 0);
    CHECK(rw_network_hierarchy(NULL, 0, 8, groups, order) == -1);
    rw_network_free(one), rw_network_free(two), rw_network_free(net);
}

/* Hop counts of a static topology (alpha 0, beta = hops): the bandwidth
 * term alone shows the groups when a message's time is asked at 0 bytes. */
static void test_hops(void)
{
    enum { N = 24, PER = 6 };
    rw_network *net = NULL;
    CHECK(rw_network_create(N, NULL, &net) == RW_OK);
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            net->beta[a * N + b] = a == b ? 0 : a / PER == b / PER ? 2 : 4;
    int32_t groups[8 * N], order[N];
    int rack[N];
    for (int i = 0; i < N; i++) rack[i] = i / PER;
    CHECK(rw_network_hierarchy(net, 0, 8, groups, order) == 3);
    CHECK(level_is(groups, N, 1, rack));
    for (int i = 0; i < N; i++) CHECK(order[i] == i); /* racks already contiguous */
    rw_network_free(net);
}

int main(void)
{
    test_racks();
    test_pods();
    test_uniform();
    test_hops();
    CHECK_DONE();
}
