/* Which algorithm runs a call: kept apart from the algorithms (as Open
 * MPI's coll/tuned keeps its decision functions apart). In order:
 *   1. RANKWISE_COLL_<OP>=<algorithm> forces one (read once);
 *   2. the rules file of `rankwise coll tune` (RANKWISE_COLL_RULES,
 *      rules_load.c), on communicators with MPI_COMM_WORLD's ranks in order;
 *   3. a decision from the network (net_decide.c): RANKWISE_MODEL, else
 *      the in-job measurement with RANKWISE_COLL_PROBE=1;
 *   4. otherwise the MPI's own collective (passthrough).
 * The decision uses only what every rank of the call agrees on (the
 * operation, the communicator, the root, the bytes; a network decision is
 * made on rank 0 and broadcast), so all ranks choose the same algorithm.
 * With none of 2-3 configured, no communicator state is made: the
 * passthrough costs a few nanoseconds. */
#include "decision.h"
#include "internal.h"
#include "rankwise_coll_tune.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RANKWISE_COLL_<OP>, the operation's name in capitals, in buf (local:
 * rwc_env_asks runs in any thread). */
static const char *op_env(int op, char buf[32])
{
    int n = snprintf(buf, 32, "RANKWISE_COLL_%s", rw_op_name(op));
    for (int i = (int)strlen("RANKWISE_COLL_"); i < n && i < 32; i++)
        buf[i] = (char)toupper((unsigned char)buf[i]);
    return buf;
}

static int env_read;
static rw_coll_alg forced[RW_N_OPS];
static size_t segment;
static int knomial_k = 4;
static int32_t max_evals;

/* A variable whose value is refused: one line (rank 0 of MPI_COMM_WORLD),
 * the value cut to RWC_SHOWN_VALUE characters. */
static void refuse(const char *name, const char *value, const char *why)
{
    char shown[RWC_SHOWN_BUF];
    rwc_say("warning", "%s=%s %s", name, rwc_shown(value, RWC_SHOWN_VALUE, shown), why);
}

/* An integer variable in lo..hi; 0 when set and valid (then *out). */
static int env_int(const char *name, long long lo, long long hi, long long *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*end || end == v || errno || x < lo || x > hi)
        return 1;
    *out = x;
    return 0;
}

static void read_env(void)
{
    for (int op = 0; op < RW_N_OPS; op++) {
        char name[32];
        const char *v = getenv(op_env(op, name));
        forced[op] = RW_COLL_AUTO;
        if (!v || !*v)
            continue;
        rw_coll_alg alg;
        if (rw_coll_alg_parse(v, &alg) || !rw_algo_valid(op, alg))
            refuse(name, v, "is not an algorithm of this collective; the MPI's own runs");
        else
            forced[op] = alg;
    }
    long long x;
    int sg = env_int("RANKWISE_COLL_SEGMENT", 0, INT64_MAX, &x);
    if (sg > 0)
        refuse("RANKWISE_COLL_SEGMENT", getenv("RANKWISE_COLL_SEGMENT"),
               "is not a number of bytes; broadcasts are not segmented");
    else if (!sg)
        segment = (size_t)x;
    int k = env_int("RANKWISE_COLL_KNOMIAL_K", 2, 1024, &x);
    if (k > 0)
        refuse("RANKWISE_COLL_KNOMIAL_K", getenv("RANKWISE_COLL_KNOMIAL_K"), "is not an integer in 2..1024; k = 4");
    else if (!k)
        knomial_k = (int)x;
    max_evals = rw_tune_options_default().max_evals;
    int e = env_int("RANKWISE_COLL_MAX_EVALS", 0, 1000000, &x);
    if (e > 0) {
        char why[96];
        snprintf(why, sizeof why, "is not an integer in 0..1000000; %d runs", (int)max_evals);
        refuse("RANKWISE_COLL_MAX_EVALS", getenv("RANKWISE_COLL_MAX_EVALS"), why);
    } else if (!e) {
        max_evals = (int32_t)x;
    }
    (void)rwc_tracing(); /* its warning in the same order as before */
    env_read = 1; /* last: the values above are complete */
}

int32_t rwc_max_evals(void)
{
    if (!env_read)
        read_env();
    return max_evals;
}

int rwc_env_asks(void)
{
    static const char *const more[] = {"RANKWISE_COLL_RULES", "RANKWISE_MODEL", "RANKWISE_COLL_PROBE",
                                       "RANKWISE_COLL_TRACE"};
    for (int i = 0; i < RW_N_OPS + (int)(sizeof more / sizeof *more); i++) {
        char name[32];
        const char *v = getenv(i < RW_N_OPS ? op_env(i, name) : more[i - RW_N_OPS]);
        if (v && *v)
            return 1;
    }
    return 0;
}

/* The communicator's cache when this call may be decided from rules or a
 * network: a valid intracommunicator and root (else the MPI's own runs and
 * reports the error; no collective set-up for it). */
static rwc_comm *usable(rw_coll_op op, MPI_Comm comm, int root, const rw_coll_rules *with)
{
    int inter = 1, size = 0;
    rwc_comm *c = rwc_comm_cached(comm); /* made: an intracommunicator, its size known */
    if (c && !rwc_thread_multiple()) {
        if (rw_op_rooted(op) && (root < 0 || root >= c->size))
            return NULL;
        return rwc_net_configured() || c->size == rw_coll_rules_comm_size(with) ? c : NULL;
    }
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return NULL;
    if (rw_op_rooted(op) && (root < 0 || root >= size))
        return NULL;
    /* rules of another size, an operation they do not hold, no network: no set-up */
    if (!rwc_net_configured() && size != rw_coll_rules_comm_size(with))
        return NULL;
    return rwc_comm_get(comm, &c) == RW_OK ? c : NULL;
}

static int configured = -1; /* rules or a network to decide from */
static const rw_coll_rules *rules;

rwc_choice rwc_decide_call(rw_coll_op op, MPI_Comm comm, int root, size_t bytes)
{
    rwc_choice ch = {RW_COLL_PASSTHROUGH, NULL, 0, NULL};
    if (rwc_thread_multiple()) /* before any state: init.c */
        return ch;
    if (!env_read)
        read_env();
    if (forced[op] != RW_COLL_AUTO) {
        ch.alg = forced[op];
        ch.source = "env";
        return ch;
    }
    if (configured < 0) { /* once: the passthrough stays a few nanoseconds */
        int broken = 0;
        rules = rwc_rules(&broken);
        configured = !broken && (rules || rwc_net_configured());
    }
    if (!configured)
        return ch;
    rwc_comm *c = usable(op, comm, root, rules);
    if (c && rules && rwc_rules_choice(c, op, root, bytes, &ch))
        return ch;
    if (c && rwc_net_choice(c, op, root, bytes, &ch))
        return ch;
    return (rwc_choice){RW_COLL_PASSTHROUGH, NULL, 0, NULL};
}

/* The per-communicator outcomes (coll.h, rwc_outcome), as Open MPI's
 * coll/han keeps its choice on the communicator: after a verdict a call
 * with the same key costs a few compares, not the decision's lookups
 * (the rules, the decisions' and verdicts' lists, two attribute lookups).
 * Nothing is kept under MPI_THREAD_MULTIPLE, for a forced algorithm
 * (decided in a few compares already) nor before a decision is final. */
int rwc_decide_cached(rw_coll_op op, MPI_Comm comm, int root, const rwc_key *key, rwc_choice *ch)
{
    if (configured == 0 && forced[op] == RW_COLL_AUTO)
        return 1; /* nothing to decide from (configured is set after the environment is read) */
    if (configured < 0 || forced[op] != RW_COLL_AUTO || rwc_thread_multiple())
        return -1;
    const rwc_comm *c = rwc_comm_fast(comm);
    if (!c)
        return -1;
    const rwc_outcome *o = &c->last[op];
    int k = c->rank != root;
    if (!o->set || o->count != key->count[k] || o->dtype != key->dtype[k] || o->root != root ||
        o->type != key->type || o->mop != key->mop || o->generation != rwc_model_generation())
        return -1;
    size_t bytes;
    if (!o->named && (rwc_type_bytes(o->count, o->dtype, &bytes) || bytes != o->bytes))
        return -1;
    *ch = o->ch;
    return o->pass;
}

void rwc_decide_remember(rw_coll_op op, MPI_Comm comm, int root, size_t bytes, const rwc_key *key,
                         const rwc_choice *ch, int pass)
{
    if (!ch->source || !strcmp(ch->source, "env") || rwc_thread_multiple())
        return;
    rwc_comm *c = rwc_comm_fast(comm);
    if (!c)
        return;
    int k = c->rank != root, ni, na, nt, combiner;
    int named = PMPI_Type_get_envelope(key->dtype[k], &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
                combiner == MPI_COMBINER_NAMED;
    c->last[op] = (rwc_outcome){1, pass, root, key->count[k], named, key->dtype[k], bytes, rwc_model_generation(),
                                key->type, key->mop, *ch};
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
