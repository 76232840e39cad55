/* rw_node_place on synthetic two-package, four-domain nodes: the domain cut
 * of stencils and groups equals the best of every placement (brute force
 * over all of them on 8 cores, the known optimum on 16), the cost never
 * exceeds the launchers' rank-order placement, and bad calls are refused;
 * rw_map with a topology returns each rank's core. */
#include <stdlib.h>
#include <string.h>

#include "rankwise_map.h"
#include "rankwise_node.h"
#include "check.h"

#define MAXE 4096

typedef struct edges {
    int n;
    int32_t src[MAXE], dst[MAXE];
    int64_t msgs[MAXE], bytes[MAXE];
} edges;

static void add(edges *e, int a, int b, int64_t bytes)
{
    e->src[e->n] = a;
    e->dst[e->n] = b;
    e->msgs[e->n] = 1;
    e->bytes[e->n] = bytes;
    e->n++;
}

/* A 2-D stencil on an nx x ny grid, x fastest, both directions. */
static rw_matrix *stencil2d(int nx, int ny)
{
    static edges e;
    e.n = 0;
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            int r = y * nx + x;
            if (x + 1 < nx) add(&e, r, r + 1, 1000), add(&e, r + 1, r, 1000);
            if (y + 1 < ny) add(&e, r, r + nx, 1000), add(&e, r + nx, r, 1000);
        }
    rw_matrix *m = NULL;
    CHECK(rw_matrix_create(nx * ny, e.n, e.src, e.dst, e.msgs, e.bytes, &m) == RW_OK);
    return m;
}

/* Groups of g ranks talking all-to-all heavily, light traffic between
 * groups; members spread (rank r is in group r % n_groups) so that rank
 * order is the worst placement. */
static rw_matrix *groups(int n, int n_groups)
{
    static edges e;
    e.n = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b)
                add(&e, a, b, a % n_groups == b % n_groups ? 100000 : 10);
    rw_matrix *m = NULL;
    CHECK(rw_matrix_create(n, e.n, e.src, e.dst, e.msgs, e.bytes, &m) == RW_OK);
    return m;
}

static int64_t cut_of(const rw_matrix *m, const rw_node_topology *t, const int32_t *ranks,
                      const int32_t *core_of)
{
    int64_t cut = -1, total = 0;
    CHECK(rw_node_domain_cut(m, m->n_ranks, ranks, t, core_of, &cut, &total) == RW_OK);
    return cut;
}

static int64_t total_bytes(const rw_matrix *m)
{
    int64_t t = 0;
    for (int64_t k = 0; k < m->nnz; k++)
        t += m->bytes[k];
    return t;
}

static int64_t cut_of_n(const rw_matrix *m, const rw_node_topology *t, int32_t n, const int32_t *ranks,
                        const int32_t *core_of)
{
    int64_t cut = -1, total = 0;
    CHECK(rw_node_domain_cut(m, n, ranks, t, core_of, &cut, &total) == RW_OK);
    return cut;
}

/* The smallest domain cut of all n! placements of n ranks on n cores. */
static int64_t brute_force(const rw_matrix *m, const rw_node_topology *t, const int32_t *ranks)
{
    int n = m->n_ranks, c[16] = {0};
    int32_t p[16];
    for (int i = 0; i < n; i++) p[i] = i;
    int64_t best = cut_of(m, t, ranks, p);
    for (int i = 1; i < n;) { /* Heap's algorithm */
        if (c[i] < i) {
            int j = i % 2 ? c[i] : 0;
            int32_t x = p[j]; p[j] = p[i]; p[i] = x;
            int64_t k = cut_of(m, t, ranks, p);
            if (k < best) best = k;
            c[i]++;
            i = 1;
        } else {
            c[i++] = 0;
        }
    }
    return best;
}

static void exact_on_eight_cores(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 core:2 pu:1", NULL, &t) == RW_OK);
    int32_t ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7}, core_of[8];
    rw_matrix *cases[3] = {stencil2d(4, 2), stencil2d(2, 4), groups(8, 4)};
    for (int k = 0; k < 3; k++) {
        CHECK(rw_node_place(cases[k], 8, ranks, t, NULL, core_of) == RW_OK);
        int64_t got = cut_of(cases[k], t, ranks, core_of), best = brute_force(cases[k], t, ranks);
        if (got != best)
            fprintf(stderr, "case %d: domain cut %lld, best %lld\n", k, (long long)got, (long long)best);
        CHECK(got == best);
        rw_matrix_free(cases[k]);
    }
    rw_node_topology_free(t);
}

static void known_optimum_on_sixteen_cores(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 core:4 pu:1", NULL, &t) == RW_OK);
    int32_t ranks[16], core_of[16];
    for (int i = 0; i < 16; i++) ranks[i] = 15 - i; /* any order of the node's ranks */
    /* A 4x4 grid in four domains of four: 2x2 blocks cut 8 edges, both ways. */
    rw_matrix *m = stencil2d(4, 4);
    CHECK(rw_node_place(m, 16, ranks, t, NULL, core_of) == RW_OK);
    CHECK(cut_of(m, t, ranks, core_of) == 8 * 2 * 1000);
    double cost = 0, rank_order = 0;
    int32_t identity[16];
    for (int i = 0; i < 16; i++) identity[i] = i;
    CHECK(rw_node_place_cost(m, 16, ranks, t, NULL, core_of, &cost) == RW_OK);
    CHECK(rw_node_place_cost(m, 16, ranks, t, NULL, identity, &rank_order) == RW_OK);
    CHECK(cost <= rank_order);
    rw_matrix_free(m);
    /* Four groups of four spread over the ranks: each group in a domain, only light traffic cut. */
    m = groups(16, 4);
    for (int i = 0; i < 16; i++) ranks[i] = i;
    CHECK(rw_node_place(m, 16, ranks, t, NULL, core_of) == RW_OK);
    CHECK(cut_of(m, t, ranks, core_of) == 16 * 12 * 10);
    for (int i = 0; i < 16; i++)
        CHECK(t->domain_of[core_of[i]] == t->domain_of[core_of[i % 4]]);
    rw_matrix_free(m);
    rw_node_topology_free(t);
}

static void fewer_ranks_than_cores(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 core:4 pu:1", NULL, &t) == RW_OK);
    /* 8 ranks of a 16-rank job on this node: one package holds them all. */
    rw_matrix *m = groups(16, 2);
    int32_t ranks[8] = {0, 2, 4, 6, 1, 3, 5, 7}, core_of[8];
    CHECK(rw_node_place(m, 8, ranks, t, NULL, core_of) == RW_OK);
    for (int i = 0; i < 8; i++) {
        CHECK(t->package_of[core_of[i]] == t->package_of[core_of[0]]);
        for (int j = 0; j < i; j++) CHECK(core_of[i] != core_of[j]);
        /* the even ranks share a domain, the odd ones the other */
        CHECK(t->domain_of[core_of[i]] == t->domain_of[core_of[i < 4 ? 0 : 4]]);
    }
    rw_matrix_free(m);
    rw_node_topology_free(t);
}

static void refused(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:1 core:2 pu:1", NULL, &t) == RW_OK);
    rw_matrix *m = groups(4, 2);
    int32_t ranks[4] = {0, 1, 2, 3}, core_of[4];
    CHECK(rw_node_place(m, 3, ranks, t, NULL, core_of) == RW_ERR_ARG);
    CHECK(strstr(rw_last_error(), "3 ranks on one node of 2 cores") != NULL);
    int32_t twice[2] = {1, 1}, beyond[2] = {0, 9};
    CHECK(rw_node_place(m, 2, twice, t, NULL, core_of) == RW_ERR_ARG);
    CHECK(rw_node_place(m, 2, beyond, t, NULL, core_of) == RW_ERR_ARG);
    rw_node_costs c = rw_node_costs_default();
    c.beta[RW_LEVEL_NODE] = c.beta[RW_LEVEL_CACHE] / 2;
    CHECK(rw_node_place(m, 2, ranks, t, &c, core_of) == RW_ERR_ARG);
    CHECK(strstr(rw_last_error(), "node") != NULL);
    int32_t same[2] = {0, 0};
    double cost;
    CHECK(rw_node_place_cost(m, 2, ranks, t, NULL, same, &cost) == RW_ERR_ARG);
    rw_matrix_free(m);
    rw_node_topology_free(t);
}

/* rw_map with the node's topology: 32 ranks in groups of 4 spread over
 * rank order, two nodes of 16 cores (pack:2 numa:2 core:4): slot_of is a
 * core, each node's cores distinct, and each node's domain cut what
 * rw_node_place gives for its ranks (under 1 % of the bytes: the groups'
 * heavy traffic stays inside domains). */
static void map_returns_cores(void)
{
    rw_node_topology *t = NULL;
    CHECK(rw_node_topology_load("pack:2 numa:2 core:4 pu:1", NULL, &t) == RW_OK);
    rw_matrix *m = groups(32, 8);
    int32_t slots[2] = {16, 16};
    rw_network *net = NULL;
    CHECK(rw_network_create(2, slots, &net) == RW_OK);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            net->alpha[i * 2 + j] = i == j ? 1e-7 : 2e-6;
            net->beta[i * 2 + j] = i == j ? 1e-10 : 1e-9;
        }
    rw_map_options o = rw_map_options_default();
    o.node = t;
    rw_map_result r;
    CHECK(rw_map(m, net, &o, &r) == RW_OK);
    for (int k = 0; k < 2; k++) {
        int32_t ranks[32], cores[32], n = 0;
        uint8_t seen[16] = {0};
        for (int32_t x = 0; x < 32; x++)
            if (r.node_of[x] == k) {
                CHECK(r.slot_of[x] >= 0 && r.slot_of[x] < 16 && !seen[r.slot_of[x]]);
                seen[r.slot_of[x] & 15] = 1;
                ranks[n] = x;
                cores[n++] = r.slot_of[x];
            }
        CHECK(n == 16);
        int32_t own[32];
        CHECK(rw_node_place(m, n, ranks, t, NULL, own) == RW_OK);
        CHECK(cut_of_n(m, t, n, ranks, cores) == cut_of_n(m, t, n, ranks, own));
        CHECK(cut_of_n(m, t, n, ranks, cores) < total_bytes(m) / 100); /* groups kept within domains */
    }
    rw_map_result_free(&r);
    /* more ranks on a node than the topology has cores: refused */
    rw_node_topology *small = NULL;
    CHECK(rw_node_topology_load("pack:1 core:4 pu:1", NULL, &small) == RW_OK);
    o.node = small;
    CHECK(rw_map(m, net, &o, &r) == RW_ERR_ARG);
    rw_node_topology_free(small);
    rw_network_free(net);
    rw_matrix_free(m);
    rw_node_topology_free(t);
}

int main(void)
{
    exact_on_eight_cores();
    known_optimum_on_sixteen_cores();
    fewer_ranks_than_cores();
    refused();
    map_returns_cores();
    CHECK_DONE();
}
