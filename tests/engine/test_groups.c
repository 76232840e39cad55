#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "rankwise.h"
#include "../../engine/src/internal.h"

static double uniform(void)
{
    return rand() / (double)RAND_MAX;
}

/* Latency a_i + a_j + D(rack_i, rack_j), times a little noise. */
static void fill(rw_model *m, const int *rack, const double *a, double inside, double across, double noise)
{
    int n = m->n_nodes;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int p = i * n + j;
            if (i == j) {
                m->pair_state[p] = RW_PAIR_UNPROBED;
                continue;
            }
            double net = rack[i] == rack[j] ? inside : across;
            m->alpha[p] = (a[i] + a[j] + net) * (1 + noise * (2 * uniform() - 1));
            m->beta[p] = 1e-10;
            m->pair_state[p] = RW_PAIR_MEASURED;
        }
}

/* Groups equal racks up to their numbering. */
static int same_partition(int n, const int32_t *g, const int *rack)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if ((g[i] == g[j]) != (rack[i] == rack[j]))
                return 0;
    return 1;
}

/* 4 racks of 8 nodes, noisy latencies (intra 10-12, inter 30-40), one node
 * whose own cable is slow (all its latencies x3): the racks come out of the
 * numbers alone and the slow node stays with its rack. */
static void slow_cable_stays_in_its_rack(void)
{
    int n = 32, slow = 13;
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(n, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(7);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int p = i * n + j;
            m->alpha[p] = (i / 8 == j / 8 ? 10 + 2 * uniform() : 30 + 10 * uniform()) * 1e-6;
            if (i == slow || j == slow)
                m->alpha[p] *= 3;
            m->beta[p] = 1e-10;
            m->pair_state[p] = RW_PAIR_MEASURED;
        }
    int32_t g[32];
    CHECK(rw_model_groups(m, g) == 4);
    for (int i = 0; i < n; i++)
        CHECK(g[i] == g[(i / 8) * 8]);
    CHECK(g[0] != g[8] && g[8] != g[16] && g[16] != g[24]);

    /* Uniform numbers: a single group. */
    for (int p = 0; p < n * n; p++)
        m->alpha[p] = 5e-6;
    CHECK(rw_model_groups(m, g) == 1);
    rw_model_free(m);
}

/* 6 racks of 8 dealt to hosts in shuffled order, node links 1 us, uplinks
 * adding 4 us, and 5 nodes whose NIC adds 19 us (20x): two of them share a
 * rack, so their pair is the slowest of all. On the raw rows these nodes
 * see no gap (21 vs 25 us) or one that names everybody (25 vs 40 us) and
 * merged racks; with the node terms removed they stay in their racks. */
static void degraded_nodes_keep_the_racks(void)
{
    enum { N = 48 };
    int rack[N];
    double a[N];
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(11);
    for (int i = 0; i < N; i++)
        rack[i] = i % 6;
    for (int i = N - 1; i > 0; i--) { /* shuffle */
        int j = rand() % (i + 1), t = rack[i];
        rack[i] = rack[j];
        rack[j] = t;
    }
    /* Slow NICs: two in rack 0, one in each of racks 1, 2 and 3. */
    int quota[6] = {2, 1, 1, 1, 0, 0};
    for (int i = 0; i < N; i++) {
        a[i] = quota[rack[i]] ? 20e-6 : 1e-6;
        quota[rack[i]] -= quota[rack[i]] > 0;
    }
    for (int rep = 0; rep < 3; rep++) {
        fill(m, rack, a, 0, 4e-6, 0.02);
        int32_t g[N];
        CHECK(rw_model_groups(m, g) == 6);
        CHECK(same_partition(N, g, rack));
    }
    rw_model_free(m);
}

/* Two racks of unequal size (20 and 12), one slow NIC in each: the node
 * terms are not biased by which rack holds most nodes. */
static void two_unequal_racks(void)
{
    enum { N = 32 };
    int rack[N];
    double a[N];
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(5);
    for (int i = 0; i < N; i++) {
        rack[i] = (i * 7) % N < 20 ? 0 : 1;
        a[i] = 1e-6;
    }
    for (int i = 0, done0 = 0, done1 = 0; i < N; i++)
        if ((rack[i] == 0 && !done0++) || (rack[i] == 1 && !done1++))
            a[i] = 20e-6;
    fill(m, rack, a, 0, 4e-6, 0.02);
    int32_t g[N];
    CHECK(rw_model_groups(m, g) == 2);
    CHECK(same_partition(N, g, rack));
    rw_model_free(m);
}

/* 8 racks of 4, two of them behind uplinks with 3x the latency, and one
 * slow NIC: the nodes behind the slow uplinks keep their racks (their rows
 * differ from most others' by the uplink's latency, as a slow NIC's row
 * does; they used to be slow nodes in groups of one) and the slow NIC
 * stays in its rack. */
static void slow_uplinks_keep_their_racks(void)
{
    enum { N = 32 };
    int rack[N];
    double a[N];
    for (int i = 0; i < N; i++) {
        rack[i] = (i * 5) % 8; /* racks dealt out of order */
        a[i] = i == 9 ? 4e-6 : 1e-6;
    }
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(11);
    fill(m, rack, a, 0, 4e-6, 0.02);
    for (int p = 0; p < N * N; p++) {
        int i = p / N, j = p % N, slow = rack[i] == 2 || rack[j] == 2 || rack[i] == 5 || rack[j] == 5;
        if (i != j && rack[i] != rack[j] && slow)
            m->alpha[p] += 8e-6; /* through a slow uplink: 3x its 4 us */
    }
    int32_t g[N];
    CHECK(rw_model_groups(m, g) == 8 && same_partition(N, g, rack));
    rw_model_free(m);
}

/* Router links (0 local, 1 global) between nodes i and j of a dragonfly
 * of G groups of R routers of P nodes (Kim et al. 2008), minimal routing
 * as in python/rankwise/sim/dragonfly.py; *slow: whether it crosses the
 * global link between groups 1 and 2 or 2 and 3. */
static int dragonfly_hops(int G, int R, int P, int i, int j, int *slow)
{
    int gi = i / (R * P), ri = (i / P) % R, gj = j / (R * P), rj = (j / P) % R;
    *slow = 0;
    if (gi == gj)
        return ri != rj;
    int a = (((gj - gi + G) % G) - 1 + R) % R, b = (((gi - gj + G) % G) - 1 + R) % R;
    int lo = gi < gj ? gi : gj, hi = gi < gj ? gj : gi;
    *slow = (lo == 1 && hi == 2) || (lo == 2 && hi == 3);
    return (ri != a) + 1 + (rj != b);
}

/* A dragonfly 4,2,4: NICs 1 us, router links 2 us, two global links at 3x
 * and one slow NIC. The group that does not touch the slow links reaches
 * the others in fewer steps than they reach each other, so the first node
 * terms give each of its nodes the same negative part, which shifted its
 * rows up by a level: its routers came out as nodes alone. A part all of a
 * node's nearest nodes share is where they sit, not their NICs: the groups
 * are the routers. */
static void dragonfly_routers_are_the_racks(void)
{
    enum { G = 4, R = 2, P = 4, N = G * R * P };
    int rack[N];
    double a[N];
    for (int i = 0; i < N; i++) {
        rack[i] = i / P;
        a[i] = i == 15 ? 3e-6 : 1e-6;
    }
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(20);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int p = i * N + j, slow;
            if (i == j) {
                m->pair_state[p] = RW_PAIR_UNPROBED;
                continue;
            }
            double net = 2e-6 * dragonfly_hops(G, R, P, i, j, &slow) + (slow ? 4e-6 : 0);
            m->alpha[p] = (a[i] + a[j] + net) * (1 + 0.02 * (2 * uniform() - 1));
            m->beta[p] = 1e-10;
            m->pair_state[p] = RW_PAIR_MEASURED;
        }
    int32_t g[N], pod[N];
    CHECK(rw_model_groups(m, g) == G * R && same_partition(N, g, rack));
    /* Routers nearest to a router (its group's, its global link's) are
     * not the same set for each of them: no pods. */
    CHECK(rw_model_pods(m, g, G * R, pod) == G * R);
    rw_model_free(m);
}

/* Latencies without structure (switches that add no delay: an emulated
 * cluster), 4 racks of 5 behind oversubscribed uplinks: pairs inside a rack
 * at the full rate, pairs across at a half to a quarter (the uplink shared
 * in their round) and one in four at the full rate (alone on it). The
 * racks come from the bandwidths; a node with a slow NIC (every pair at a
 * third, in its rack too: nothing says where it is) joins a group of
 * others (alone, its NIC could not be found slow); with the same rate
 * everywhere, with or without a slow NIC, one group. */
static void racks_from_bandwidth_when_latency_is_flat(void)
{
    enum { N = 20, SLOW = 7 };
    int rack[N];
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 1, sizes, &m) == RW_OK);
    srand(3);
    for (int i = 0; i < N; i++)
        rack[i] = (i * 3) % 4;
    /* variant 0: racks and a slow NIC; 1: the same rate everywhere; 2: that and a slow NIC */
    for (int variant = 0; variant < 3; variant++) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                int p = i * N + j;
                m->pair_state[p] = i == j ? RW_PAIR_UNPROBED : RW_PAIR_MEASURED;
                m->alpha[p] = 2e-6 * (1 + 0.02 * (2 * uniform() - 1));
                double rate = 12.5e9 * (1 + 0.01 * (2 * uniform() - 1));
                if (variant == 0 && rack[i] != rack[j] && rand() % 4)
                    rate /= 2 + 2 * uniform();
                if (variant != 1 && (i == SLOW || j == SLOW))
                    rate = 12.5e9 / 3;
                m->beta[p] = 1 / rate;
            }
        int32_t g[N];
        int groups = rw_model_groups(m, g);
        if (variant > 0) { /* no structure (the slow NIC is none): one group, where the NIC is found slow */
            CHECK(groups == 1);
            continue;
        }
        CHECK(groups == 4);
        int with_mates = 0, same = 1;
        for (int i = 0; i < N; i++) {
            with_mates |= i != SLOW && g[i] == g[SLOW];
            for (int j = 0; j < N; j++)
                if (i != SLOW && j != SLOW)
                    same &= (g[i] == g[j]) == (rack[i] == rack[j]);
        }
        CHECK(with_mates && same);
    }
    rw_model_free(m);
}

/* A model of n nodes whose every pair between two nodes is measured. */
static rw_model *all_measured(int n, int n_sizes, const int64_t *sizes)
{
    rw_model *m;
    CHECK(rw_model_create(n, NULL, NULL, n_sizes, sizes, &m) == RW_OK);
    for (int p = 0; p < n * n; p++)
        m->pair_state[p] = p / n == p % n ? RW_PAIR_UNPROBED : RW_PAIR_MEASURED;
    return m;
}

/* Flat latencies and every pair at the same rate, as the reference pass
 * leaves them (engine/mpi/probe/reference.c: the contention that showed the
 * racks taken out of the pairs): the groups the probe stored come back,
 * numbered in order of first appearance. Without stored groups, or with
 * only one, one group. Latencies with structure decide over stored groups. */
static void stored_groups_when_latency_is_flat(void)
{
    enum { N = 12 };
    int64_t sizes[1] = {8};
    rw_model *m = all_measured(N, 1, sizes);
    srand(5);
    for (int p = 0; p < N * N; p++) {
        m->alpha[p] = 2e-6 * (1 + 0.02 * (2 * uniform() - 1));
        m->beta[p] = 1 / (12.5e9 * (1 + 0.01 * (2 * uniform() - 1)));
    }
    int32_t g[N];
    CHECK(rw_model_groups(m, g) == 1);
    for (int i = 0; i < N; i++)
        m->group_of[i] = 5 + (i % 3); /* not dense: 5, 6, 7 */
    CHECK(rw_model_groups(m, g) == 3);
    for (int i = 0; i < N; i++)
        CHECK(g[i] == i % 3);
    for (int i = 0; i < N; i++)
        m->group_of[i] = 2;
    CHECK(rw_model_groups(m, g) == 1);
    m->group_of[3] = -1;
    CHECK(rw_model_groups(m, g) == 1);
    /* Two racks by latency (i < 6), stored groups otherwise. */
    int rack[N];
    double a[N];
    for (int i = 0; i < N; i++) {
        rack[i] = i >= 6;
        a[i] = 1e-6;
        m->group_of[i] = i % 3;
    }
    fill(m, rack, a, 10e-6, 30e-6, 0.02);
    CHECK(rw_model_groups(m, g) == 2 && same_partition(N, g, rack));
    rw_model_free(m);
}

/* An emulated cluster probed at 64 KiB and 1 MiB only (8 nodes, 2 racks,
 * NICs 25 MB/s, uplink 6.25 MB/s): the smallest round trip is 5 ms of
 * bytes and 2 x 20 us of latency, and it spreads by 1 ms (20 % of it, 25x
 * its latency part). The fitted intercepts are that noise: latency makes
 * no groups, the bandwidths find the racks. The same round trips spread by
 * 2 us are latencies that can be read. */
static void bandwidth_bound_smallest_size_is_latency_noise(void)
{
    enum { N = 8 };
    int64_t sizes[2] = {1 << 16, 1 << 20};
    rw_model *m = all_measured(N, 2, sizes);
    srand(7);
    for (int p = 0; p < N * N; p++) {
        m->alpha[p] = 20e-6 * (0.2 + 3 * uniform()); /* intercepts of a line through noise */
        m->beta[p] = 1 / (p / N / 4 == p % N / 4 ? 25e6 * (0.95 + 0.05 * uniform()) : 6.25e6);
    }
    for (int spread = 0; spread < 2; spread++) {
        for (int p = 0; p < N * N; p++)
            for (int s = 0; s < 2; s++) {
                int q = (p % N) * N + p / N;
                rw_stat *st = &m->pair_stats[p * 2 + s];
                st->min = m->alpha[p] + m->alpha[q] + (m->beta[p] + m->beta[q]) * (double)sizes[s];
                st->median = st->min + (spread ? 2e-6 : 1e-3 * (0.8 + 0.4 * uniform()));
                st->max = st->median + (st->median - st->min);
                st->jitter = 2 * (st->median - st->min) / st->median;
                st->count = 6;
            }
        int32_t g[N];
        if (spread == 0) {
            CHECK(rw_model_latency_noisy(m) == 1);
            CHECK(rw_model_groups(m, g) == 2);
            for (int i = 0; i < N; i++)
                CHECK((g[i] == g[0]) == (i < 4));
        } else {
            CHECK(rw_model_latency_noisy(m) == 0);
        }
    }
    rw_model_free(m);
}

/* A loaded real stack (an emulated cluster on a busy machine): 8-byte round
 * trips spread 150 % and latencies are the scheduler's (0.05-5 ms, no
 * structure), rack mates read 0.65-1.2 x the NIC's rate, pairs across two
 * racks of 4 behind a shared uplink 0.11-0.52 of it (log-uniform), one in five
 * directions the full rate (alone on the uplink), and one NIC at a quarter
 * (its pairs across racks slower still when the uplink is shared more).
 * Latency makes no groups of the noise; the racks come from the bandwidths
 * and the slow NIC joins its rack. With round trips that repeat (no
 * jitter), the same latencies are read as they are. */
static void noisy_stack_groups_by_bandwidth(void)
{
    enum { N = 8, SLOW = 2 };
    int64_t sizes[2] = {8, 1 << 20};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 2, sizes, &m) == RW_OK);
    for (int trial = 0; trial < 20; trial++) {
        srand(100 + trial);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                int p = i * N + j;
                m->pair_state[p] = i == j ? RW_PAIR_UNPROBED : RW_PAIR_MEASURED;
                if (i == j)
                    continue;
                m->alpha[p] = 50e-6 * exp(4.6 * uniform());
                double rate = 25e6;
                if (i / 4 == j / 4)
                    rate *= 0.65 + 0.55 * uniform();
                else if (rand() % 5)
                    rate *= 0.11 * pow(4.7, uniform());
                if (i == SLOW || j == SLOW)
                    rate = fmin(rate, 25e6 / 4 * (0.9 + 0.1 * uniform()));
                m->beta[p] = 1 / rate;
                for (int s = 0; s < 2; s++) {
                    rw_stat *st = &m->pair_stats[p * 2 + s];
                    st->median = 2 * m->alpha[p] + m->beta[p] * (double)sizes[s];
                    st->min = 0.5 * st->median;
                    st->max = 2 * st->median;
                    st->jitter = 1.5;
                    st->count = 6;
                }
            }
        int32_t g[N];
        CHECK(rw_model_latency_noisy(m) == 1);
        CHECK(rw_model_groups(m, g) == 2);
        for (int i = 0; i < N; i++)
            CHECK((g[i] == g[0]) == (i < 4));
    }
    /* The same latencies from round trips that repeat: read as they are (noise groups). */
    for (int p = 0; p < N * N; p++) {
        rw_stat *st = &m->pair_stats[p * 2];
        st->min = 0.99 * st->median;
        st->max = 1.01 * st->median;
        st->jitter = 0.02;
    }
    CHECK(rw_model_latency_noisy(m) == 0);
    int32_t g[N];
    CHECK(rw_model_groups(m, g) != 2 || g[0] != g[1] || g[4] != g[5] || g[0] == g[4]);
    rw_model_free(m);
}

/* A three-level fat tree 4,2,4 (Leiserson 1985): NICs 1 us, rack and pod
 * uplinks 2 us each, nodes dealt to hosts in shuffled order; rack 6's
 * uplink adds 4 us to all its pairs (its pod mate then reaches it as far
 * as the other pods: its own term is taken off) and pod 2's link 5 us to
 * its pairs across pods. The racks' pods come out of the latencies: a
 * rack's pairs in its pod climb two links, across pods four. A two-level tree has no
 * pods, nor with one rack whose uplink adds latency (a set of close racks
 * against one alone is no level). */
static void pods_of_a_three_level_tree(void)
{
    enum { P = 4, R = 2, K = 4, N = P * R * K };
    int rack[N], perm[N];
    for (int i = 0; i < N; i++)
        perm[i] = i;
    srand(11);
    for (int i = N - 1; i > 0; i--) {
        int j = rand() % (i + 1), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (int i = 0; i < N; i++)
        rack[i] = perm[i] / K;
    int64_t sizes[1] = {8};
    rw_model *m;
    CHECK(rw_model_create(N, NULL, NULL, 1, sizes, &m) == RW_OK);
    for (int three = 1; three >= 0; three--) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                int p = i * N + j, ri = rack[i], rj = rack[j], pi = ri / R, pj = rj / R;
                if (i == j) {
                    m->pair_state[p] = RW_PAIR_UNPROBED;
                    continue;
                }
                double net = ri == rj ? 0 : !three || pi == pj ? 4e-6 : 8e-6;
                net += ri != rj && (ri == 6 || rj == 6) ? 4e-6 : 0;
                net += three && pi != pj && (pi == 2 || pj == 2) ? 5e-6 : 0;
                m->alpha[p] = (2e-6 + net) * (1 + 0.02 * (2 * uniform() - 1));
                m->beta[p] = 1e-10;
                m->pair_state[p] = RW_PAIR_MEASURED;
            }
        int32_t g[N], pod[N];
        int groups = rw_model_groups(m, g);
        CHECK(groups == P * R && same_partition(N, g, rack));
        int pods = rw_model_pods(m, g, groups, pod);
        if (!three) {
            CHECK(pods == groups);
            for (int x = 0; x < groups; x++)
                CHECK(pod[x] == x);
            continue;
        }
        CHECK(pods == P);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                CHECK((pod[g[i]] == pod[g[j]]) == (rack[i] / R == rack[j] / R));
    }
    rw_model_free(m);
}

int main(void)
{
    pods_of_a_three_level_tree();
    stored_groups_when_latency_is_flat();
    slow_cable_stays_in_its_rack();
    degraded_nodes_keep_the_racks();
    two_unequal_racks();
    slow_uplinks_keep_their_racks();
    dragonfly_routers_are_the_racks();
    racks_from_bandwidth_when_latency_is_flat();
    noisy_stack_groups_by_bandwidth();
    bandwidth_bound_smallest_size_is_latency_noise();
    CHECK_DONE();
}
