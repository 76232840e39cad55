/* Decisions verified in the job (verify.h). A decision (operation, root,
 * power-of-two size class, choice) runs its first CALLS calls as trials:
 * one of the choice and one of the MPI's own, untimed (set-up: the
 * duplicate, trees, a decision on rank 0), then BLOCKS blocks of BLOCK
 * calls in turn, the choice's first. A block starts after a barrier on
 * the private duplicate and its calls follow each other as the
 * application makes them; a rank counts the time it spends inside them
 * (not the application's work between calls). At the last trial one
 * allreduce gives every block's slowest rank, on every rank at the same
 * call (every rank counts the same calls). The choice is kept only when
 * each of its blocks beat each of the MPI's own by MARGIN: within the
 * noise the MPI's own stays, so the verdict is the same from run to run on
 * the same network. Timing calls one at a time after a barrier, as OSU's
 * benchmarks do, kept trees that ran a back-to-back loop of 512 B scatters
 * 5x slower than the MPI's own (4 ranks of one host, Open MPI 4.1); the
 * unverified trees chosen from a probed model there ran 512 B-4 KiB
 * broadcasts 3-5x slower than the MPI's own, which the predictor, knowing
 * nothing of shared-memory collectives, put faster. */
#include "verify.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 3, BLOCKS = 4, CALLS = 2 + BLOCK * BLOCKS };
static const double MARGIN = 0.02;

typedef struct rwc_verdict {
    int op, root, size_class;
    rw_coll_alg alg;
    const rw_tree *tree;
    size_t segment;
    int calls;                  /* trial calls made; CALLS: decided */
    int keep;                   /* decided: 1 the choice, 0 the MPI's own */
    double t[BLOCKS];           /* this rank's seconds inside each block's calls (odd: the MPI's own) */
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
    int cls = rwc_size_class(bytes);
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

int rwc_verify_begin(rwc_op op, MPI_Comm comm, int root, size_t bytes, const rwc_choice *ch, int *settled)
{
    now.v = NULL;
    *settled = 0;
    rwc_comm *c; /* made by the decision */
    if (!rwc_verify_enabled() || !ch->source || !strcmp(ch->source, "env")) {
        *settled = 1;
        return 0;
    }
    if (!(c = rwc_comm_fast(comm)))
        return 0;
    rwc_verdict *v = find(c, op, root, bytes, ch);
    if (!v)
        return 0; /* out of memory: the choice, unverified */
    if (v->calls == CALLS) {
        *settled = 1;
        return !v->keep;
    }
    now.v = v;
    now.c = c;
    /* the choice first: its set-up is paid where it is made */
    now.kind = v->calls < 2 ? v->calls : (v->calls - 2) / BLOCK % 2;
    if (v->calls >= 2 && (v->calls - 2) % BLOCK == 0)
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

void rwc_verify_end(int ran_mpi)
{
    rwc_verdict *v = now.v;
    if (!v)
        return;
    now.v = NULL;
    if (v->calls >= 2) /* the choice refused the call and the MPI's own ran: never faster */
        v->t[(v->calls - 2) / BLOCK] += ran_mpi && !now.kind ? 1e300 : PMPI_Wtime() - now.t0;
    if (++v->calls < CALLS)
        return;
    double worst[BLOCKS], per_call[2] = {0, 0};
    if (rwc_real_allreduce(v->t, worst, BLOCKS, MPI_DOUBLE, MPI_MAX, now.c->dup) != MPI_SUCCESS)
        for (int k = 0; k < BLOCKS; k++)
            worst[k] = k % 2 ? 0 : 1e300; /* no agreement: the MPI's own */
    v->keep = 1;
    for (int a = 0; a < BLOCKS; a += 2)
        for (int b = 1; b < BLOCKS; b += 2)
            v->keep &= worst[a] < (1 - MARGIN) * worst[b];
    for (int k = 0; k < BLOCKS; k++)
        per_call[k % 2] += worst[k] / (BLOCK * BLOCKS / 2);
    trace_verdict(v, per_call);
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
