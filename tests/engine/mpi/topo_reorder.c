/* A periodic 2-D grid built by one of MPI's topology constructors; checks
 * that the result is a valid topology whose neighbours are the grid's,
 * whatever order the ranks came in (tests/python/coll/test_coll_topo.py).
 *
 *   topo_reorder KIND REORDER DX DY [BYTES ITERS]   KIND: cart, graph, dist, adjacent
 *
 * Prints "order w0 w1 ..." (the MPI_COMM_WORLD rank of each rank of the
 * new communicator, from its rank 0) and "checks N failures F" on every
 * rank of the grid. With BYTES and ITERS, the grid then exchanges halos of
 * BYTES with its four neighbours ITERS times and rank 0 prints "time S",
 * the slowest rank's seconds (simulated time under SMPI). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dx, dy;

/* The four neighbours of grid vertex v (row-major, dims {dx, dy}, periodic). */
static void neighbours(int v, int out[4])
{
    int i = v / dy, j = v % dy;
    out[0] = ((i + dx - 1) % dx) * dy + j;
    out[1] = ((i + 1) % dx) * dy + j;
    out[2] = i * dy + (j + dy - 1) % dy;
    out[3] = i * dy + (j + 1) % dy;
}

static int sorted_equal(int *a, int *b, int n)
{
    for (int x = 0; x < n; x++)
        for (int y = x + 1; y < n; y++) {
            if (a[y] < a[x]) { int t = a[x]; a[x] = a[y]; a[y] = t; }
            if (b[y] < b[x]) { int t = b[x]; b[x] = b[y]; b[y] = t; }
        }
    return !memcmp(a, b, (size_t)n * sizeof *a);
}

/* ITERS rounds of a halo exchange of `bytes` with the four neighbours. */
static void halo(MPI_Comm grid, int rank, int bytes, int iters)
{
    int nb[4];
    neighbours(rank, nb);
    char *out = calloc(4, (size_t)bytes), *in = calloc(4, (size_t)bytes);
    MPI_Request req[8];
    MPI_Barrier(grid);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 4; k++) {
            MPI_Irecv(in + (size_t)k * bytes, bytes, MPI_CHAR, nb[k], k ^ 1, grid, &req[k]);
            MPI_Isend(out + (size_t)k * bytes, bytes, MPI_CHAR, nb[k], k, grid, &req[4 + k]);
        }
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    }
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, grid);
    if (rank == 0)
        printf("time %.9f\n", slowest);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: topo_reorder cart|graph|dist|adjacent REORDER DX DY [BYTES ITERS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *kind = argv[1];
    int reorder = atoi(argv[2]), world = 0, size = 0;
    dx = atoi(argv[3]);
    dy = atoi(argv[4]);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = dx * dy, expected = MPI_CART;
    MPI_Comm grid = MPI_COMM_NULL;
    if (!strcmp(kind, "cart")) {
        int dims[2] = {dx, dy}, periods[2] = {1, 1};
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &grid);
    } else if (!strcmp(kind, "graph")) {
        int *index = malloc((size_t)n * sizeof *index), *edges = malloc(4 * (size_t)n * sizeof *edges);
        for (int v = 0; v < n; v++) {
            neighbours(v, edges + 4 * v);
            index[v] = 4 * (v + 1);
        }
        MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, reorder, &grid);
        expected = MPI_GRAPH;
        free(index);
        free(edges);
    } else if (!strcmp(kind, "dist") || !strcmp(kind, "adjacent")) {
        int nb[4];
        neighbours(world, nb);
        int weights[4] = {1, 1, 1, 1};
        if (!strcmp(kind, "dist")) {
            int degree = 4;
            MPI_Dist_graph_create(MPI_COMM_WORLD, world < n, &world, &degree, nb, weights, MPI_INFO_NULL, reorder,
                                  &grid);
        } else {
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, nb, weights, 4, nb, weights, MPI_INFO_NULL, reorder,
                                           &grid);
        }
        expected = MPI_DIST_GRAPH;
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int checks = 0, failures = 0;
#define CHECK(cond) do { checks++; if (!(cond)) { failures++; fprintf(stderr, "rank %d: failed: %s\n", world, #cond); } } while (0)
    /* n ranks in the grid; with reorder, not necessarily the first n */
    int inside = grid != MPI_COMM_NULL, members = 0;
    MPI_Allreduce(&inside, &members, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(members == n && (reorder || inside == (world < n)));
    if (grid != MPI_COMM_NULL) {
        int rank = 0, gsize = 0, status = MPI_UNDEFINED, nb[4], got[4];
        MPI_Comm_rank(grid, &rank);
        MPI_Comm_size(grid, &gsize);
        CHECK(gsize == n);
#ifdef SMPI_H /* SimGrid has no MPI_Topo_test: the constructor called says what it is */
        status = expected;
#else
        MPI_Topo_test(grid, &status);
#endif
        CHECK(status == expected);
        neighbours(rank, nb);
        if (status == MPI_CART) {
            int coords[2], back = -1;
            MPI_Cart_coords(grid, rank, 2, coords);
            MPI_Cart_rank(grid, coords, &back);
            CHECK(back == rank && coords[0] * dy + coords[1] == rank);
            for (int d = 0; d < 2; d++)
                MPI_Cart_shift(grid, d, 1, &got[2 * d], &got[2 * d + 1]);
            CHECK(sorted_equal(got, nb, 4));
        } else if (status == MPI_GRAPH) {
            int count = 0;
            MPI_Graph_neighbors_count(grid, rank, &count);
            CHECK(count == 4);
            if (count == 4) {
                MPI_Graph_neighbors(grid, rank, 4, got);
                CHECK(sorted_equal(got, nb, 4));
            }
        } else if (status == MPI_DIST_GRAPH) {
            int in = 0, out = 0, weighted = 0, src[4], sw[4], dw[4];
            MPI_Dist_graph_neighbors_count(grid, &in, &out, &weighted);
            CHECK(in == 4 && out == 4);
            if (in == 4 && out == 4) {
                MPI_Dist_graph_neighbors(grid, 4, src, sw, 4, got, dw);
                int nb2[4];
                memcpy(nb2, nb, sizeof nb);
                CHECK(sorted_equal(got, nb, 4) && sorted_equal(src, nb2, 4));
            }
        }
        /* the neighbours really talk: each sends its new rank to its +1 neighbour in each dimension */
        neighbours(rank, nb); /* the checks above sorted it */
        for (int d = 0; d < 2; d++) {
            int to = nb[2 * d + 1], from = nb[2 * d], heard = -1;
            MPI_Sendrecv(&rank, 1, MPI_INT, to, d, &heard, 1, MPI_INT, from, d, grid, MPI_STATUS_IGNORE);
            CHECK(heard == from);
        }
        if (argc == 7)
            halo(grid, rank, atoi(argv[5]), atoi(argv[6]));
        int *order = malloc((size_t)n * sizeof *order);
        MPI_Gather(&world, 1, MPI_INT, order, 1, MPI_INT, 0, grid);
        if (rank == 0) {
            printf("order");
            for (int v = 0; v < n; v++)
                printf(" %d", order[v]);
            printf("\n");
        }
        free(order);
        MPI_Comm_free(&grid);
    }
    printf("checks %d failures %d\n", checks, failures);
    MPI_Finalize();
    return failures != 0;
}
