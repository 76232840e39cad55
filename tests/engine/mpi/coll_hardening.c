/* A plain MPI program (mpicc alone, for LD_PRELOAD of librankwise_coll)
 * for the library's error path and threads (tests/python/coll/test_coll_hardening.py).
 *
 *   coll_hardening ops      MPI_ERRORS_RETURN on MPI_COMM_WORLD; MPI_LAND,
 *                           MPI_LOR and MPI_LXOR on MPI_FLOAT through MPI_Reduce
 *                           (every root) and MPI_Allreduce, each followed by a
 *                           valid reduction whose result is checked (a failed
 *                           call must leave no message behind). Prints the
 *                           error class every rank got per call, gathered on
 *                           rank 0: "ops: reduce MPI_LAND root 0: 3 3 3 3".
 *   coll_hardening threads  MPI_Init_thread(MPI_THREAD_MULTIPLE); two threads
 *                           make the first collectives on two duplicates of
 *                           MPI_COMM_WORLD at once (bcast, reduce, allreduce,
 *                           checked), a few rounds on fresh duplicates.
 * Rank 0 prints "coll_hardening: ok" (exit 0) or what went wrong (exit 1). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, n;

/* MPI_Gather of ints is valid and checked: the library may run it. */
static void show_classes(const char *what, int cls, int *bad, int want)
{
    int *all = malloc(sizeof(int) * (size_t)n);
    MPI_Gather(&cls, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("ops: %s:", what);
        for (int r = 0; r < n; r++) {
            printf(" %d", all[r]);
            *bad |= all[r] != want;
        }
        printf("\n");
    }
    free(all);
}

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* A valid reduction right after the failed one: its result must be right. */
static void valid_after(int root, int *bad)
{
    int one = me + 1, sum = -1, all = -1;
    MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if ((me == root && sum != n * (n + 1) / 2) || all != n * (n + 1) / 2) {
        fprintf(stderr, "coll_hardening: rank %d: wrong sum after a failed call (%d, %d)\n", me, sum, all);
        *bad = 1;
    }
}

static int ops(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op op[] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    const char *name[] = {"MPI_LAND", "MPI_LOR", "MPI_LXOR"};
    int bad = 0;
    float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(me + i);
    for (int o = 0; o < 3; o++) {
        char what[96];
        for (int root = 0; root < n; root++) {
            snprintf(what, sizeof what, "reduce %s root %d", name[o], root);
            show_classes(what, error_class(MPI_Reduce(x, y, 64, MPI_FLOAT, op[o], root, MPI_COMM_WORLD)), &bad,
                         MPI_ERR_OP);
            valid_after(root, &bad);
        }
        snprintf(what, sizeof what, "allreduce %s", name[o]);
        show_classes(what, error_class(MPI_Allreduce(x, y, 64, MPI_FLOAT, op[o], MPI_COMM_WORLD)), &bad, MPI_ERR_OP);
        valid_after(0, &bad);
    }
    return bad;
}

#define ROUNDS 3
#define COUNT 4096

typedef struct {
    MPI_Comm comm;
    int salt, bad;
} job;

static pthread_barrier_t start; /* both threads enter their first call together */

static void *work(void *arg)
{
    job *j = arg;
    static const int count = COUNT;
    int *v = malloc(sizeof(int) * count), *w = malloc(sizeof(int) * count);
    for (int i = 0; i < count; i++)
        v[i] = me == 0 ? i * j->salt : -1;
    pthread_barrier_wait(&start);
    MPI_Bcast(v, count, MPI_INT, 0, j->comm);
    for (int i = 0; i < count; i++)
        j->bad |= v[i] != i * j->salt;
    for (int i = 0; i < count; i++)
        v[i] = me + j->salt;
    MPI_Reduce(v, w, count, MPI_INT, MPI_SUM, n - 1, j->comm);
    if (me == n - 1)
        for (int i = 0; i < count; i++)
            j->bad |= w[i] != n * (n - 1) / 2 + n * j->salt;
    MPI_Allreduce(v, w, count, MPI_INT, MPI_MAX, j->comm);
    for (int i = 0; i < count; i++)
        j->bad |= w[i] != n - 1 + j->salt;
    free(v);
    free(w);
    return NULL;
}

static int threads(int provided)
{
    if (provided < MPI_THREAD_MULTIPLE) {
        if (me == 0)
            printf("coll_hardening: no MPI_THREAD_MULTIPLE (provided %d)\n", provided);
        return 1;
    }
    int bad = 0;
    pthread_barrier_init(&start, NULL, 2);
    for (int round = 0; round < ROUNDS; round++) {
        job jobs[2];
        pthread_t t[2];
        for (int k = 0; k < 2; k++) {
            jobs[k] = (job){MPI_COMM_NULL, 3 + 7 * k + round, 0};
            MPI_Comm_dup(MPI_COMM_WORLD, &jobs[k].comm);
        }
        for (int k = 0; k < 2; k++)
            pthread_create(&t[k], NULL, work, &jobs[k]);
        for (int k = 0; k < 2; k++) {
            pthread_join(t[k], NULL);
            bad |= jobs[k].bad;
            MPI_Comm_free(&jobs[k].comm);
        }
    }
    pthread_barrier_destroy(&start);
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int provided = MPI_THREAD_SINGLE;
    if (!strcmp(mode, "threads"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int bad = !strcmp(mode, "ops") ? ops() : !strcmp(mode, "threads") ? threads(provided) : 1;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(any ? "coll_hardening: FAILED\n" : "coll_hardening: ok\n");
    MPI_Finalize();
    return any;
}
