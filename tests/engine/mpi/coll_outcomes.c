/* A sequence of collectives whose decisions differ by root, bytes and the
 * reduction's type, for the per-communicator outcomes (engine/mpi/coll,
 * rwc_outcome; tests/python/coll/test_coll_verify.py). Each argument is a call,
 * "bcast:ROOT:BYTES" or "reduce:ROOT:BYTES:int|double" (MPI_SUM); rank 0
 * writes "call I" to stderr before call I, so that the library's trace
 * lines that follow it are that call's. Every result is checked against
 * what MPI defines; the last line, on stdout: "outcomes: N calls, F failures". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 1; i < argc; i++) {
        char op[16] = "", type[16] = "int";
        int root = 0, bytes = 0;
        if (sscanf(argv[i], "%15[a-z]:%d:%d:%15s", op, &root, &bytes, type) < 3 || root < 0 || root >= n ||
            bytes <= 0) {
            if (me == 0)
                fprintf(stderr, "coll_outcomes: bad call '%s'\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (me == 0) {
            fprintf(stderr, "call %d\n", i - 1);
            fflush(stderr);
        }
        int bad = 0;
        if (!strcmp(op, "bcast")) {
            unsigned char *v = malloc((size_t)bytes);
            for (int k = 0; k < bytes; k++)
                v[k] = me == root ? (unsigned char)(k * 7 + i) : 0xff;
            MPI_Bcast(v, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
            for (int k = 0; k < bytes; k++)
                bad += v[k] != (unsigned char)(k * 7 + i);
            free(v);
        } else if (!strcmp(type, "double")) {
            int count = bytes / (int)sizeof(double);
            double *s = malloc((size_t)count * sizeof *s), *r = malloc((size_t)count * sizeof *r);
            for (int k = 0; k < count; k++)
                s[k] = me + 1 + k + i; /* small integers: exact in any order */
            MPI_Reduce(s, r, count, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
            for (int k = 0; me == root && k < count; k++)
                bad += r[k] != n * (n + 1) / 2.0 + (double)n * (k + i);
            free(s);
            free(r);
        } else {
            int count = bytes / (int)sizeof(int);
            int *s = malloc((size_t)count * sizeof *s), *r = malloc((size_t)count * sizeof *r);
            for (int k = 0; k < count; k++)
                s[k] = me + 1 + k + i;
            MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            for (int k = 0; me == root && k < count; k++)
                bad += r[k] != n * (n + 1) / 2 + n * (k + i);
            free(s);
            free(r);
        }
        if (bad)
            fprintf(stderr, "coll_outcomes: rank %d: call %d (%s): %d wrong\n", me, i - 1, argv[i], bad);
        failures += bad != 0;
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* no rule for it */
    if (me == 0)
        printf("outcomes: %d calls, %d failures\n", argc - 1, all);
    MPI_Finalize();
    return 0;
}
