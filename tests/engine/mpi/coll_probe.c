/* The collectives library's in-job measurement (rwc_probe_pnet, probe.c)
 * run once, timed. Rank 0 prints its cost and the network it gave:
 *   coll_probe: nodes N ranks P cost S identical 1|0
 *   pair I J ALPHA BETA       (I != J: node I sending to node J)
 *   intra I ALPHA BETA
 *   o I SECONDS               (absent with one node)
 *   node R K                  (rank R on node K)
 * `identical` says whether every rank built the same figures.
 * Argument "ranks": every rank is its own node (as `rankwise probe
 * --group-by rank`), so that a single host still has pairs to measure;
 * otherwise the library's own nodes (ranks sharing memory). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "decision/decision.h"
/* The network's fields. */
#include "predict_internal.h"

/* A communicator's cache whose nodes are its ranks. */
static rwc_comm *rank_nodes(void)
{
    rwc_comm *c = calloc(1, sizeof *c);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->dup);
    MPI_Comm_size(c->dup, &c->size);
    MPI_Comm_rank(c->dup, &c->rank);
    MPI_Comm_dup(MPI_COMM_SELF, &c->node);
    MPI_Comm_dup(c->dup, &c->leaders);
    c->node_of = malloc((size_t)c->size * sizeof *c->node_of);
    for (int r = 0; r < c->size; r++)
        c->node_of[r] = r;
    return c;
}

/* Every figure of the network, in one array. */
static double *flatten(const rw_pnet *net, size_t *len)
{
    size_t n = (size_t)net->n, k = 0;
    *len = 2 * n * n + 4 * n + (size_t)net->n_ranks;
    double *v = calloc(*len, sizeof *v);
    for (size_t i = 0; i < n * n; i++) {
        v[k++] = net->alpha[i];
        v[k++] = net->beta[i];
    }
    for (size_t i = 0; i < n; i++) {
        v[k++] = net->o ? net->o[i] : -1;
        v[k++] = net->o_recv ? net->o_recv[i] : -1;
        v[k++] = net->inject ? net->inject[i] : -1;
        v[k++] = net->eject ? net->eject[i] : -1;
    }
    for (int32_t r = 0; r < net->n_ranks; r++)
        v[k++] = net->node_of[r];
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    rwc_comm *c = NULL;
    if (argc > 1 && !strcmp(argv[1], "ranks"))
        c = rank_nodes();
    else if (rwc_comm_get(MPI_COMM_WORLD, &c) != RW_OK)
        MPI_Abort(MPI_COMM_WORLD, 2);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    rw_pnet *net = NULL;
    rw_status st = rwc_probe_pnet(c, &net);
    double mine = MPI_Wtime() - t0, cost = 0;
    MPI_Reduce(&mine, &cost, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (st != RW_OK || !net) {
        fprintf(stderr, "coll_probe: rank %d: %s\n", me, rw_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    size_t len = 0;
    double *v = flatten(net, &len), *ref = malloc(len * sizeof *ref);
    memcpy(ref, v, len * sizeof *v);
    MPI_Bcast(ref, (int)len, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int same = !memcmp(ref, v, len * sizeof *v), all = 0;
    MPI_Reduce(&same, &all, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);

    if (me == 0) {
        int n = net->n;
        printf("coll_probe: nodes %d ranks %d cost %.9f identical %d\n", n, net->n_ranks, cost, all);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i == j)
                    printf("intra %d %.9g %.9g\n", i, net->alpha[(size_t)i * n + i], net->beta[(size_t)i * n + i]);
                else
                    printf("pair %d %d %.9g %.9g\n", i, j, net->alpha[(size_t)i * n + j],
                           net->beta[(size_t)i * n + j]);
        for (int i = 0; net->o && i < n; i++)
            printf("o %d %.9g\n", i, net->o[i]);
        for (int i = 0; net->o_recv && i < n; i++)
            printf("or %d %.9g\n", i, net->o_recv[i]);
        for (int r = 0; r < net->n_ranks; r++)
            printf("node %d %d\n", r, net->node_of[r]);
    }
    free(v);
    free(ref);
    rw_pnet_free(net);
    MPI_Finalize();
    return 0;
}
