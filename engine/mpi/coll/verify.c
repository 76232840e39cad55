/* Decisions verified in the job (verify.h). A decision (operation, root,
 * power-of-two size class, choice) runs its first TRIALS x 2 calls in
 * turn as the choice and as the MPI's own, the first of each untimed
 * (set-up: duplicates, trees, a decision on rank 0). A timed call starts
 * after a barrier on the private duplicate, as OSU's benchmarks time a
 * collective, so a rank's time is the call's latency and not its wait for
 * late ranks; at the last trial one allreduce gives each call's slowest
 * rank (on every rank, at the same call: every rank counts the same
 * calls). The choice is kept only when its median is at least MARGIN
 * below the MPI's own and it was that much faster in all but one of the
 * pairs of neighbouring calls: within the noise the MPI's own stays, so
 * the verdict is the same from run to run on the same network.
 * Measured on 4 ranks of one host (Open MPI 4.1, shared memory): trees
 * chosen from a probed model ran 512 B-4 KiB broadcasts 3-5x slower than
 * the MPI's own, which the predictor, knowing nothing of shared-memory
 * collectives, put faster. */
#include "verify.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TRIALS = 7 };            /* calls of each kind; the first untimed */
static const double MARGIN = 0.02;

typedef struct rwc_verdict {
    int op, root, size_class;
    rw_coll_alg alg;
    const rw_tree *tree;
    size_t segment;
    int calls;                  /* trial calls made; 2 TRIALS: decided */
    int keep;                   /* decided: 1 the choice, 0 the MPI's own */
    double t[2 * TRIALS];       /* this rank's time of each trial call (odd: the MPI's own) */
    struct rwc_verdict *next;
} rwc_verdict;

static int enabled = -1;

int rwc_verify_enabled(void)
{
    if (enabled < 0) {
#ifdef RW_SMPI
        enabled = 0;
#else
        enabled = 1;
#endif
        const char *v = getenv("RANKWISE_COLL_VERIFY");
        if (v && *v)
            enabled = rwc_env_bool("RANKWISE_COLL_VERIFY");
    }
    return enabled;
}

static int size_class(size_t bytes)
{
    int k = 0;
    while (bytes >>= 1)
        k++;
    return k;
}

/* The trial in progress between begin and end (the library is entered by
 * one thread at a time). */
static struct {
    rwc_verdict *v;
    rwc_comm *c;
    double t0;
    int kind;                   /* 0 the choice, 1 the MPI's own */
} now;

static rwc_verdict *find(rwc_comm *c, rwc_op op, int root, size_t bytes, const rwc_choice *ch)
{
    int cls = size_class(bytes);
    rwc_verdict *v = c->verdicts;
    while (v && !(v->op == (int)op && v->root == root && v->size_class == cls && v->alg == ch->alg &&
                  v->tree == ch->tree && v->segment == ch->segment))
        v = v->next;
    if (v || !(v = calloc(1, sizeof *v)))
        return v;
    *v = (rwc_verdict){.op = op, .root = root, .size_class = cls, .alg = ch->alg, .tree = ch->tree,
                       .segment = ch->segment, .next = c->verdicts};
    c->verdicts = v;
    return v;
}

int rwc_verify_begin(rwc_op op, MPI_Comm comm, int root, size_t bytes, const rwc_choice *ch)
{
    now.v = NULL;
    rwc_comm *c;
    if (!rwc_verify_enabled() || !ch->source || !strcmp(ch->source, "env") || rwc_comm_get(comm, &c))
        return 0;
    rwc_verdict *v = find(c, op, root, bytes, ch);
    if (!v)
        return 0; /* out of memory: the choice, unverified */
    if (v->calls == 2 * TRIALS)
        return !v->keep;
    now.v = v;
    now.c = c;
    now.kind = v->calls % 2; /* the choice first: its set-up is paid where it is made */
    if (v->calls >= 2)
        PMPI_Barrier(c->dup);
    now.t0 = PMPI_Wtime();
    return now.kind;
}

int rwc_verify_order_free(MPI_Op op, MPI_Datatype type)
{
    static const MPI_Op any_type[] = {MPI_MAX,  MPI_MIN, MPI_LAND, MPI_LOR,    MPI_LXOR,
                                      MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    for (size_t i = 0; i < sizeof any_type / sizeof *any_type; i++)
        if (op == any_type[i])
            return 1;
    if (op != MPI_SUM && op != MPI_PROD)
        return 0;
    const MPI_Datatype integers[] = {MPI_INT,       MPI_LONG,          MPI_SHORT,          MPI_UNSIGNED,
                                     MPI_UNSIGNED_LONG, MPI_UNSIGNED_SHORT, MPI_LONG_LONG,   MPI_UNSIGNED_LONG_LONG,
                                     MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T,        MPI_INT16_T,
                                     MPI_INT32_T,   MPI_INT64_T,       MPI_UINT8_T,        MPI_UINT16_T,
                                     MPI_UINT32_T,  MPI_UINT64_T};
    for (size_t i = 0; i < sizeof integers / sizeof *integers; i++)
        if (type == integers[i])
            return 1;
    return 0;
}

static void trace_verdict(const rwc_verdict *v, const double *worst)
{
    if (!rwc_tracing() || now.c->rank != 0)
        return;
    const char *alg = v->tree ? "tree" : rw_coll_alg_name(v->alg);
    fprintf(stderr,
            "rankwise-coll: verified %s root %d %llu+ bytes on %d ranks: %s %.2f us, the MPI's own %.2f us: %s\n",
            rwc_op_name((rwc_op)v->op), v->root, 1ull << v->size_class, now.c->size, alg, worst[0] * 1e6,
            worst[1] * 1e6, v->keep ? alg : "the MPI's own");
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the timed calls of one kind (odd: the MPI's own) of the
 * slowest ranks' times. */
static double median(const double *worst, int odd)
{
    double x[TRIALS - 1];
    for (int i = 1; i < TRIALS; i++)
        x[i - 1] = worst[2 * i + odd];
    qsort(x, TRIALS - 1, sizeof *x, by_value);
    int m = (TRIALS - 1) / 2;
    return (TRIALS - 1) % 2 ? x[m] : (x[m - 1] + x[m]) / 2;
}

void rwc_verify_end(int ran_mpi)
{
    rwc_verdict *v = now.v;
    if (!v)
        return;
    now.v = NULL;
    /* the choice refused the call and the MPI's own ran: time it as never faster */
    v->t[v->calls] = ran_mpi && !now.kind ? 1e300 : PMPI_Wtime() - now.t0;
    if (++v->calls < 2 * TRIALS)
        return;
    double worst[2 * TRIALS], times[2] = {1e300, 0};
    int wins = 0;
    if (rwc_real_allreduce(v->t, worst, 2 * TRIALS, MPI_DOUBLE, MPI_MAX, now.c->dup) == MPI_SUCCESS) {
        times[0] = median(worst, 0), times[1] = median(worst, 1);
        for (int i = 1; i < TRIALS; i++) /* each pair of neighbouring calls: drift cancels */
            wins += worst[2 * i] < (1 - MARGIN) * worst[2 * i + 1];
    }
    v->keep = times[0] < (1 - MARGIN) * times[1] && wins >= TRIALS - 2;
    trace_verdict(v, times);
}

void rwc_verify_forget(rwc_comm *c)
{
    while (c->verdicts) {
        rwc_verdict *v = c->verdicts;
        c->verdicts = v->next;
        if (now.v == v)
            now.v = NULL;
        free(v);
    }
}
