/* Exact embedding of a process grid on the network's neighbour graph.
 *
 * On a torus network the nodes have coordinates that a model does not
 * state, and the hierarchy finds no racks to cut along: folding the node
 * order it gives leaves some grid neighbours 2-4 hops apart although the
 * shapes allow one (a ring of 32 on a 4x4x2 torus, an 8x4 grid on it).
 * Here the neighbour graph is read from the measured latencies (each
 * node's nearest nodes: one hop on a torus, a whole rack on a fat tree) and the
 * grid's cells are placed one per node by depth-first search so that every
 * pair of grid neighbours, the wrap-around pairs included, sits on
 * neighbouring nodes (Ajima, "Topology Awareness in the Tofu Interconnect
 * Series": neighbours one hop apart). The search is a subgraph isomorphism,
 * exponential at worst: it runs in row-major order (a cell's placed
 * neighbours leave a handful of candidates), tries the candidates with the
 * fewest free neighbours first (Warnsdorff), and gives up after a budget
 * of steps; the caller then keeps the other candidates. */
#include <stdlib.h>
#include <string.h>

#include "grid.h"

/* Within this factor of a node's nearest latency: the same distance. A
 * hop adds 10 % or more to a torus's latency (Tofu: about 0.1 us on 1 us;
 * the simulated tori: 2 us on 4 us), more than a probe's noise. Latency,
 * not time at a size: at 1 MiB the bandwidth hides the hops. */
#define NEAR 1.05
#define STEP_BUDGET 400000L
#define MAX_STARTS 8

typedef struct embed {
    int32_t nn, cells, dim[3];
    int periodic;
    const uint8_t *usable; /* nodes that can take a cell */
    uint8_t *adj;          /* nn x nn neighbour graph */
    int32_t *nbr, maxd;    /* neighbour lists, maxd per node */
    int32_t *deg;          /* free neighbours per node (Warnsdorff) */
    int32_t *owner;        /* cell -> node */
    uint8_t *used;
    int32_t *cand;         /* scratch: candidates per depth, maxd each */
    long steps;
} embed;

static double latency(const rw_network *net, int32_t i, int32_t j)
{
    double x = net->alpha[(size_t)i * net->n_nodes + j], y = net->alpha[(size_t)j * net->n_nodes + i];
    return x > y ? x : y;
}

static int neighbour_graph(embed *e, const rw_network *net)
{
    int32_t nn = e->nn;
    double *nearest = malloc((size_t)nn * sizeof *nearest);
    if (!nearest) return -1;
    for (int32_t i = 0; i < nn; i++) {
        nearest[i] = -1;
        for (int32_t j = 0; j < nn; j++) {
            double c = j == i ? -1 : latency(net, i, j);
            if (j != i && (nearest[i] < 0 || c < nearest[i])) nearest[i] = c;
        }
    }
    e->maxd = 0;
    for (int32_t i = 0; i < nn; i++) {
        int32_t d = 0;
        for (int32_t j = 0; j < nn; j++) {
            double c = latency(net, i, j);
            uint8_t a = i != j && e->usable[i] && e->usable[j] && c <= NEAR * nearest[i] && c <= NEAR * nearest[j];
            e->adj[(size_t)i * nn + j] = a;
            d += a;
        }
        e->maxd = d > e->maxd ? d : e->maxd;
    }
    free(nearest);
    e->nbr = malloc((size_t)nn * (e->maxd ? e->maxd : 1) * sizeof *e->nbr);
    if (!e->nbr) return -1;
    for (int32_t i = 0; i < nn; i++) {
        int32_t d = 0;
        for (int32_t j = 0; j < nn; j++)
            if (e->adj[(size_t)i * nn + j]) e->nbr[(size_t)i * e->maxd + d++] = j;
        for (; d < e->maxd; d++) e->nbr[(size_t)i * e->maxd + d] = -1;
    }
    return 0;
}

static void count_degrees(embed *e)
{
    for (int32_t i = 0; i < e->nn; i++) {
        e->deg[i] = 0;
        for (int32_t t = 0; t < e->maxd; t++) e->deg[i] += e->nbr[(size_t)i * e->maxd + t] >= 0;
    }
}

/* The grid neighbours of cell p placed before it (row-major order): the
 * previous cell along each dimension and, at a dimension's last
 * coordinate of a periodic grid, the wrap-around partner. */
static int placed_neighbours(const embed *e, int64_t p, int64_t out[6])
{
    int k = 0;
    int64_t stride = 1;
    for (int d = 0; d < 3; d++) {
        int32_t g = e->dim[d], c = rw_grid_coord(e->dim, p, d);
        if (g > 1 && c > 0) out[k++] = p - stride;
        if (g > 2 && e->periodic && c == g - 1) out[k++] = p - (int64_t)(g - 1) * stride;
        stride *= g;
    }
    return k;
}

static int fits(const embed *e, int32_t node, const int64_t *nb, int k)
{
    for (int i = 0; i < k; i++)
        if (!e->adj[(size_t)node * e->nn + e->owner[nb[i]]]) return 0;
    return 1;
}

static void take(embed *e, int32_t node, int sign)
{
    e->used[node] = sign > 0;
    for (int32_t t = 0; t < e->maxd; t++) {
        int32_t j = e->nbr[(size_t)node * e->maxd + t];
        if (j >= 0) e->deg[j] -= sign;
    }
}

/* 1 placed, 0 not possible from here, -1 budget spent. */
static int place_from(embed *e, int64_t p)
{
    if (p == e->cells) return 1;
    if (++e->steps > STEP_BUDGET) return -1;
    int64_t nb[6];
    int k = placed_neighbours(e, p, nb);
    if (k == 0) return 0; /* row-major order: only cell 0 has none */
    /* Candidates: the free neighbours of one placed neighbour that are
     * neighbours of all the others. */
    int32_t *cand = e->cand + (size_t)p * e->maxd, nc = 0;
    const int32_t *around = e->nbr + (size_t)e->owner[nb[0]] * e->maxd;
    for (int32_t t = 0; t < e->maxd; t++) {
        int32_t j = around[t];
        if (j >= 0 && !e->used[j] && fits(e, j, nb, k)) cand[nc++] = j;
    }
    /* Fewest free neighbours first (insertion sort: a handful). */
    for (int32_t a = 1; a < nc; a++)
        for (int32_t b = a; b > 0 && e->deg[cand[b]] < e->deg[cand[b - 1]]; b--) {
            int32_t t = cand[b];
            cand[b] = cand[b - 1], cand[b - 1] = t;
        }
    for (int32_t i = 0; i < nc; i++) {
        int32_t v = cand[i];
        e->owner[p] = v;
        take(e, v, +1);
        int r = place_from(e, p + 1);
        if (r != 0) return r;
        take(e, v, -1);
    }
    return 0;
}

int rw_grid_embed(const rw_network *net, const int32_t cell_dim[3], int periodic,
                  const uint8_t *usable, int32_t *owner)
{
    embed e = {.nn = net->n_nodes, .periodic = periodic, .usable = usable, .owner = owner};
    memcpy(e.dim, cell_dim, sizeof e.dim);
    e.cells = cell_dim[0] * cell_dim[1] * cell_dim[2];
    int32_t free_nodes = 0;
    for (int32_t i = 0; i < e.nn; i++) free_nodes += usable[i] != 0;
    if (e.cells < 2 || e.cells > free_nodes) return 0;
    e.adj = malloc((size_t)e.nn * e.nn);
    e.deg = malloc((size_t)e.nn * sizeof *e.deg);
    e.used = calloc((size_t)e.nn, 1);
    int found = -1;
    if (e.adj && e.deg && e.used && neighbour_graph(&e, net) == 0 &&
        (e.cand = malloc((size_t)e.cells * (e.maxd ? e.maxd : 1) * sizeof *e.cand))) {
        found = 0;
        /* Starts: one is enough on a vertex-transitive torus; not always elsewhere. */
        for (int32_t s = 0, tried = 0; e.maxd > 0 && s < e.nn && tried < MAX_STARTS && !found; s++) {
            count_degrees(&e);
            memset(e.used, 0, (size_t)e.nn);
            if (!usable[s] || e.deg[s] == 0) continue;
            tried++;
            e.steps = 0;
            owner[0] = s;
            take(&e, s, +1);
            found = place_from(&e, 1) == 1;
        }
    }
    free(e.adj), free(e.deg), free(e.used), free(e.nbr), free(e.cand);
    return found;
}
