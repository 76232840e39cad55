/* Decisions verified in the job (verify.h). A decision (operation, root,
 * power-of-two size class, choice) runs its first calls as trials: one of
 * the choice and one of the MPI's own, untimed (set-up: the duplicate,
 * trees, a decision on rank 0), then four blocks of calls in turn, the
 * choice's first. A block starts after a barrier on the private duplicate
 * and its calls follow each other as the application makes them; a rank
 * times each call (not the application's work between calls). A block's
 * time per call is the mean without its slowest quarter (verdict.h): a
 * call that lost the processor to another process costs a time slice,
 * milliseconds, which decided blocks of three sub-microsecond calls (under
 * load the 8 B verdicts changed from run to run). The first two blocks
 * have CAL calls; one allreduce then gives each one's slowest rank, on
 * every rank at the same call, and the last two blocks get as many calls
 * as last MIN_BLOCK seconds at that pace (CAL..MAX_CALLS: at most a
 * millisecond of trials or so for the shortest calls, CAL calls each for
 * the long ones). At the last trial a second allreduce gives every block's
 * slowest rank. The choice is kept only when each of its blocks beat each
 * of the MPI's own by MARGIN: within the trials' spread or the margin the
 * MPI's own stays, so the verdict is the same from run to run on the same
 * network, on every rank. Timing calls one at a time after a barrier, as
 * OSU's benchmarks do, kept trees that ran a back-to-back loop of 512 B
 * scatters 5x slower than the MPI's own (4 ranks of one host, Open MPI
 * 4.1); the unverified trees chosen from a probed model there ran
 * 512 B-4 KiB broadcasts 3-5x slower than the MPI's own, which the
 * predictor, knowing nothing of shared-memory collectives, put faster. */
#include "decision.h"
#include "verify.h"

#include "internal.h"

#include "coll/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { UNTIMED = 2, BLOCKS = 4, CAL = 4, MAX_CALLS = 256 };
static const double MARGIN = 0.02;
static const double MIN_BLOCK = 200e-6; /* seconds of calls in each of the last two blocks */

typedef struct rwc_verdict {
    int op, root, size_class;
    rw_coll_alg alg;
    const rw_tree *tree;
    size_t segment;
    int calls;                  /* trial calls made */
    int decided, keep;          /* decided: keep 1 the choice, 0 the MPI's own */
    int block, in_block;        /* the block in progress (even: the choice) and its calls so far */
    int length[2];              /* calls in each of the last two blocks (the choice's, the MPI's own) */
    double refused;             /* 1: the choice refused a call (the MPI's own ran): never kept */
    double t[BLOCKS];           /* each block's time per call; this rank's, then the slowest rank's */
    double call[MAX_CALLS];     /* this rank's times of the block's calls */
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

static rwc_verdict *find(rwc_comm *c, rw_coll_op op, int root, size_t bytes, const rwc_choice *ch)
{
    int cls = rw_size_class_pow2(bytes);
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

int rwc_verify_begin(rw_coll_op op, MPI_Comm comm, int root, size_t bytes, const rwc_choice *ch, int *settled)
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
    if (v->decided) {
        *settled = 1;
        return !v->keep;
    }
    now.v = v;
    now.c = c;
    /* the choice first: its set-up is paid where it is made */
    now.kind = v->calls < UNTIMED ? v->calls : v->block % 2;
    if (v->calls >= UNTIMED && v->in_block == 0)
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
            "rankwise-coll: verified %s root %d %llu+ bytes on %d ranks in %d calls (%d %s): %s %.2f us, the MPI's "
            "own %.2f us: %s\n",
            rw_op_name(v->op), v->root, 1ull << v->size_class, now.c->size, v->calls,
            UNTIMED / 2 + CAL + v->length[0], alg, alg, worst[0] * 1e6, worst[1] * 1e6, v->keep ? alg : "the MPI's own");
}

/* The slowest rank's value of each of n values, on every rank (the MPI's
 * own verdict where the ranks cannot agree: refused). Collective. */
static void slowest(rwc_verdict *v, int n)
{
    double mine[BLOCKS + 1], all[BLOCKS + 1];
    memcpy(mine, v->t, (size_t)n * sizeof *mine);
    mine[n] = v->refused;
    if (rwc_real_allreduce(mine, all, n + 1, MPI_DOUBLE, MPI_MAX, now.c->dup) != MPI_SUCCESS)
        all[n] = 1;
    memcpy(v->t, all, (size_t)n * sizeof *all);
    v->refused = all[n];
}

void rwc_verify_end(int ran_mpi)
{
    rwc_verdict *v = now.v;
    if (!v)
        return;
    now.v = NULL;
    if (ran_mpi && !now.kind) /* the choice refused the call: never faster */
        v->refused = 1;
    if (v->calls++ < UNTIMED)
        return;
    v->call[v->in_block++] = PMPI_Wtime() - now.t0;
    int length = v->block < 2 ? CAL : v->length[v->block % 2];
    if (v->in_block < length)
        return;
    v->t[v->block] = rw_verdict_block(v->call, length);
    v->in_block = 0;
    if (++v->block == 2) { /* the pace of each: the last two blocks' lengths */
        slowest(v, 2);
        for (int k = 0; k < 2; k++)
            v->length[k] = rw_verdict_block_calls(v->t[k], MIN_BLOCK, CAL, MAX_CALLS);
    }
    if (v->block < BLOCKS)
        return;
    slowest(v, BLOCKS);
    double choice[BLOCKS / 2], own[BLOCKS / 2], per_call[2] = {0, 0};
    for (int k = 0; k < BLOCKS; k++) {
        (k % 2 ? own : choice)[k / 2] = v->t[k];
        per_call[k % 2] += v->t[k] / (BLOCKS / 2);
    }
    v->keep = !v->refused && rw_verdict_keep(choice, BLOCKS / 2, own, BLOCKS / 2, MARGIN);
    v->decided = 1;
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
