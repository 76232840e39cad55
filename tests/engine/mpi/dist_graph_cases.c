/* MPI's distributed-graph constructors on the cases applications and test
 * suites give them, each with reorder 0, 1 and 2 (any non-zero is true):
 * weighted and MPI_UNWEIGHTED adjacency, edges given by their sources only,
 * every rank empty, NULL arrays, MPI_WEIGHTS_EMPTY. Each result is checked
 * to be a distributed graph of the communicator's size whose edges agree
 * between their two ends (an edge out of a to b is one into b from a, with
 * the same weight), and used by a barrier. Run under librankwise_coll with
 * RANKWISE_MODEL, whose reordering these calls go through
 * (tests/python/coll/test_coll_topo.py). Prints "dist_graph_cases: C checks, F
 * failures" on rank 0 of MPI_COMM_WORLD. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int checks, failures, me, n;

static void check(int ok, const char *what, int reorder)
{
    checks++;
    if (!ok && failures++ < 20)
        fprintf(stderr, "dist_graph_cases: rank %d: %s (reorder %d)\n", me, what, reorder);
}

/* Every edge a -> b seen at a (out) is seen at b (in) with the same weight. */
static void consistent(MPI_Comm c, int reorder)
{
    int in = 0, out = 0, weighted = 0, size = 0, rank = 0, topo = MPI_UNDEFINED;
    MPI_Topo_test(c, &topo);
    check(topo == MPI_DIST_GRAPH, "not a distributed graph", reorder);
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    check(size == n, "size changed", reorder);
    MPI_Dist_graph_neighbors_count(c, &in, &out, &weighted);
    int *src = malloc(sizeof(int) * (in + 1)), *sw = malloc(sizeof(int) * (in + 1));
    int *dst = malloc(sizeof(int) * (out + 1)), *dw = malloc(sizeof(int) * (out + 1));
    MPI_Dist_graph_neighbors(c, in, src, weighted ? sw : MPI_UNWEIGHTED, out, dst, weighted ? dw : MPI_UNWEIGHTED);
    /* weight[a * n + b] of edge a -> b as a says it and as b says it, summed over ranks */
    long *said_out = calloc((size_t)n * n, sizeof *said_out), *said_in = calloc((size_t)n * n, sizeof *said_in);
    long *all_out = malloc(sizeof(long) * n * n), *all_in = malloc(sizeof(long) * n * n);
    for (int k = 0; k < out; k++)
        said_out[(size_t)rank * n + dst[k]] += weighted ? dw[k] + 1 : 1;
    for (int k = 0; k < in; k++)
        said_in[(size_t)src[k] * n + rank] += weighted ? sw[k] + 1 : 1;
    MPI_Allreduce(said_out, all_out, n * n, MPI_LONG, MPI_SUM, c);
    MPI_Allreduce(said_in, all_in, n * n, MPI_LONG, MPI_SUM, c);
    int same = 1;
    for (int k = 0; k < n * n; k++)
        same &= all_out[k] == all_in[k];
    check(same, "an edge's two ends disagree", reorder);
    MPI_Barrier(c);
    free(src), free(sw), free(dst), free(dw), free(said_out), free(said_in), free(all_out), free(all_in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *in = malloc(sizeof(int) * n), *inw = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n),
        *outw = malloc(sizeof(int) * n);
    for (int graph = 0; graph < 4; graph++) {
        /* edge a -> b with weight w(a, b) > 0 where the graph has it */
        int k_in = 0, k_out = 0;
        for (int j = 0; j < n; j++) {
            int w_in = graph == 3 ? 0 : (j * 7 + me * 3 + graph) % 5, w_out = graph == 3 ? 0 : (me * 7 + j * 3 + graph) % 5;
            if (graph == 2)
                w_in = j == me, w_out = j == me; /* self edges only */
            if (w_in) {
                in[k_in] = j;
                inw[k_in++] = w_in;
            }
            if (w_out) {
                out[k_out] = j;
                outw[k_out++] = w_out;
            }
        }
        for (int reorder = 0; reorder <= 2; reorder++) {
            MPI_Comm c;
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k_in, in, inw, k_out, out, outw, MPI_INFO_NULL, reorder,
                                           &c);
            consistent(c, reorder);
            MPI_Comm_free(&c);
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k_in, in, MPI_UNWEIGHTED, k_out, out, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, reorder, &c);
            consistent(c, reorder);
            MPI_Comm_free(&c);
            int degree = k_out; /* each rank gives its outgoing edges */
            MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &degree, out, outw, MPI_INFO_NULL, reorder, &c);
            consistent(c, reorder);
            MPI_Comm_free(&c);
        }
    }
    for (int reorder = 0; reorder <= 1; reorder++) {
        MPI_Comm c;
        MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, NULL, MPI_INFO_NULL, reorder, &c);
        consistent(c, reorder);
        MPI_Comm_free(&c);
        MPI_Dist_graph_create(MPI_COMM_WORLD, 0, in, in, out, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, reorder, &c);
        consistent(c, reorder);
        MPI_Comm_free(&c);
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, reorder, &c);
        consistent(c, reorder);
        MPI_Comm_free(&c);
    }
    int totals[2] = {checks, failures}, sums[2];
    MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("dist_graph_cases: %d checks, %d failures\n", sums[0], sums[1]);
    free(in), free(inw), free(out), free(outw);
    MPI_Finalize();
    return 0;
}
