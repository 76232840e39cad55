/* Which algorithm runs a call: kept apart from the algorithms (as Open
 * MPI's coll/tuned keeps its decision functions apart). In order:
 *   1. RANKWISE_COLL_<OP>=<algorithm> forces one (read once);
 *   2. the selection rules (coll-tune's rules file) — the hook below;
 *   3. otherwise the MPI's own collective (passthrough).
 * The decision uses only what every rank of the call agrees on (the
 * operation, the communicator, the root, the bytes), so all ranks choose
 * the same algorithm. */
#include "coll.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_env[RWC_N_OPS] = {
    "RANKWISE_COLL_BCAST", "RANKWISE_COLL_REDUCE", "RANKWISE_COLL_GATHER",
    "RANKWISE_COLL_SCATTER", "RANKWISE_COLL_ALLREDUCE", "RANKWISE_COLL_ALLGATHER"};
static const char *const op_name[RWC_N_OPS] = {"bcast", "reduce", "gather", "scatter", "allreduce", "allgather"};

static int env_read;
static rw_coll_alg forced[RWC_N_OPS];
static size_t segment;
static int knomial_k = 4, trace;

/* ring and recursive doubling exist for allreduce and allgather only */
static int valid_for(rwc_op op, rw_coll_alg alg)
{
    if (alg == RW_COLL_RING || alg == RW_COLL_RECURSIVE_DOUBLING)
        return op == RWC_ALLREDUCE || op == RWC_ALLGATHER;
    return alg != RW_COLL_AUTO;
}

static void warn(const char *fmt, const char *a, const char *b)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fprintf(stderr, "rankwise-coll: warning: ");
        fprintf(stderr, fmt, a, b);
        fprintf(stderr, "\n");
    }
}

static void read_env(void)
{
    env_read = 1;
    for (int op = 0; op < RWC_N_OPS; op++) {
        const char *v = getenv(op_env[op]);
        forced[op] = RW_COLL_AUTO;
        if (!v || !*v)
            continue;
        rw_coll_alg alg;
        if (rw_coll_alg_parse(v, &alg) || !valid_for((rwc_op)op, alg))
            warn("%s=%s is not an algorithm of this collective; the MPI's own runs", op_env[op], v);
        else
            forced[op] = alg;
    }
    const char *s = getenv("RANKWISE_COLL_SEGMENT");
    if (s && *s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (*end || v < 0)
            warn("RANKWISE_COLL_SEGMENT=%s is not a number of bytes%s; broadcasts are not segmented", s, "");
        else
            segment = (size_t)v;
    }
    const char *k = getenv("RANKWISE_COLL_KNOMIAL_K");
    if (k && *k) {
        char *end;
        long v = strtol(k, &end, 10);
        if (*end || v < 2 || v > 1024)
            warn("RANKWISE_COLL_KNOMIAL_K=%s is not an integer in 2..1024%s; k = 4", k, "");
        else
            knomial_k = (int)v;
    }
    const char *t = getenv("RANKWISE_COLL_TRACE");
    trace = t && *t && strcmp(t, "0");
}

/* ---- hook: the selection rules of coll-tune plug in here ----
 * rw_coll_rules_* (their header) will answer, for (op, communicator size,
 * ranks per node, bytes), the algorithm the predictor chose, or no rule. */
static rw_coll_alg choose_from_rules(rwc_op op, MPI_Comm comm, int root, size_t bytes)
{
    return RW_COLL_AUTO; /* no rules loaded */
}

rw_coll_alg rwc_decide(rwc_op op, MPI_Comm comm, int root, size_t bytes)
{
    if (!env_read)
        read_env();
    if (forced[op] != RW_COLL_AUTO)
        return forced[op];
    rw_coll_alg alg = choose_from_rules(op, comm, root, bytes);
    return alg != RW_COLL_AUTO ? alg : RW_COLL_PASSTHROUGH;
}

size_t rwc_segment_bytes(void)
{
    if (!env_read)
        read_env();
    return segment;
}

int rwc_knomial_k(void)
{
    if (!env_read)
        read_env();
    return knomial_k;
}

void rwc_trace(rwc_op op, rw_coll_alg alg, MPI_Comm comm, size_t bytes)
{
    if (!env_read)
        read_env();
    int rank = 0;
    if (!trace || PMPI_Comm_rank(comm, &rank) || rank != 0)
        return;
    fprintf(stderr, "rankwise-coll: %s %s %zu bytes\n", op_name[op], rw_coll_alg_name(alg), bytes);
}
