/* rankwise-node-probe: rank-to-rank ping-pong inside one node (the node of
 * rank 0; nodes of an allocation are taken to be built alike), every pair
 * of its ranks, by size. Each rank reports the cpu it runs on, so the
 * figures are attributed to the cores where the launcher really bound the
 * ranks (python/rankwise/node_probe.py fits them by level).
 *
 * Usage: rankwise-node-probe SIZE[,SIZE...] ROUNDS [--world]
 * --world: every rank of the job is taken to be on the one node measured
 * (a simulated node made of one host per NUMA domain, where MPI's shared
 * memory split would give a node per domain host).
 * Output on rank 0:  "cpu LOCAL CPU" and "host LOCAL NAME" lines (the
 * processor name: under SMPI the simulated host, whose domain the
 * platform states, sched_getcpu telling nothing there), then
 * "pp A B BYTES SECONDS" (A, B local ranks; median one-way time over
 * ROUNDS round trips), then "bw A B BYTES SECONDS": the pairs (0,1),
 * (2,3)... all at once, which share the node's memory bandwidth as a real
 * job's pairs do, and last "time SECONDS", the measurement's span by
 * MPI_Wtime (simulated seconds under SMPI). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_sizes(const char *text, long *sizes)
{
    int n = 0;
    const char *p = text;
    while (*p && n < MAX_SIZES) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || (*end && *end != ','))
            return -1;
        sizes[n++] = v;
        p = *end ? end + 1 : end;
    }
    return *p ? -1 : n;
}

/* Median one-way seconds between local ranks a and b (valid on a). */
static double pingpong(MPI_Comm c, int me, int a, int b, char *buf, long size, int rounds, double *t)
{
    for (int r = 0; r <= rounds; r++) { /* round 0 warms up */
        double t0 = MPI_Wtime();
        if (me == a) {
            MPI_Send(buf, (int)size, MPI_BYTE, b, 0, c);
            MPI_Recv(buf, (int)size, MPI_BYTE, b, 0, c, MPI_STATUS_IGNORE);
        } else if (me == b) {
            MPI_Recv(buf, (int)size, MPI_BYTE, a, 0, c, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, a, 0, c);
        }
        if (r > 0)
            t[r - 1] = (MPI_Wtime() - t0) / 2;
    }
    qsort(t, (size_t)rounds, sizeof *t, cmp_double);
    return t[rounds / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int world, n_world;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &n_world);
    long sizes[MAX_SIZES];
    int whole = argc == 4 && !strcmp(argv[3], "--world");
    int n_sizes = argc == 3 || whole ? parse_sizes(argv[1], sizes) : -1;
    int rounds = n_sizes > 0 ? atoi(argv[2]) : 0;
    if (n_sizes <= 0 || rounds < 1 || rounds > 100000) {
        if (world == 0)
            fprintf(stderr, "usage: rankwise-node-probe SIZE[,SIZE...] ROUNDS [--world]\n");
        MPI_Finalize();
        return 2;
    }
    long biggest = 0;
    for (int s = 0; s < n_sizes; s++)
        biggest = sizes[s] > biggest ? sizes[s] : biggest;

    /* The node of world rank 0 measures; the others wait at the barrier. */
    MPI_Comm node;
    if (whole)
        MPI_Comm_dup(MPI_COMM_WORLD, &node);
    else
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int on_first = world == 0, me, k;
    MPI_Bcast(&on_first, 1, MPI_INT, 0, node); /* rank 0 is local rank 0 of its node */
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &k);
    char *buf = calloc((size_t)biggest + 1, 1);
    double *t = malloc((size_t)rounds * sizeof *t);
    int status = buf && t ? 0 : 1;
    if (on_first && status == 0) {
        MPI_Barrier(node);
        double start = MPI_Wtime();
        int cpu = sched_getcpu();
        int *cpus = me == 0 ? malloc((size_t)k * sizeof *cpus) : NULL;
        MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, node);
        for (int i = 0; me == 0 && cpus && i < k; i++)
            printf("cpu %d %d\n", i, cpus[i]);
        free(cpus);
        char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
        int len = 0;
        MPI_Get_processor_name(name, &len);
        char *names = me == 0 ? calloc((size_t)k, sizeof name) : NULL;
        MPI_Gather(name, (int)sizeof name, MPI_CHAR, names, (int)sizeof name, MPI_CHAR, 0, node);
        for (int i = 0; me == 0 && names && i < k; i++)
            printf("host %d %s\n", i, names + (size_t)i * sizeof name);
        free(names);
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++)
                for (int s = 0; s < n_sizes; s++) {
                    /* One pair at a time: without it the next pair of free ranks starts
                     * while this one runs, and both share the links they are to measure. */
                    MPI_Barrier(node);
                    double v = pingpong(node, me, a, b, buf, sizes[s], rounds, t);
                    if (me == a && a != 0)
                        MPI_Send(&v, 1, MPI_DOUBLE, 0, 1, node);
                    if (me == 0 && a != 0)
                        MPI_Recv(&v, 1, MPI_DOUBLE, a, 1, node, MPI_STATUS_IGNORE);
                    if (me == 0)
                        printf("pp %d %d %ld %.9e\n", a, b, sizes[s], v);
                }
        for (int s = 0; s < n_sizes && k >= 2; s++) {
            int partner = me ^ 1, a = me & ~1;
            double v = 0;
            MPI_Barrier(node);
            if (partner < k)
                v = pingpong(node, me, a, a + 1, buf, sizes[s], rounds, t);
            double *all = me == 0 ? malloc((size_t)k * sizeof *all) : NULL;
            MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, node);
            for (int i = 0; me == 0 && all && i + 1 < k; i += 2)
                printf("bw %d %d %ld %.9e\n", i, i + 1, sizes[s], all[i]);
            free(all);
        }
        MPI_Barrier(node);
        if (me == 0)
            printf("time %.9e\n", MPI_Wtime() - start);
        fflush(stdout);
    }
    free(buf);
    free(t);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return status;
}
