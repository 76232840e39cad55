/* The live model's internals (rankwise_live.h; docs/concepts/live.md, "In
 * the job"). Every rank holds the same model and applies the same
 * measurements to it, so drift, the callback and the collectives'
 * decisions agree everywhere without sending the model around. */
#ifndef RW_LIVE_INTERNAL_H
#define RW_LIVE_INTERNAL_H

#include <mpi.h>

#include "rankwise_live.h"
#include "rankwise_map.h"

/* The sizes measured: the model's smallest and the one nearest (in log)
 * to LIVE_LARGE, or these two without a model. */
#define LIVE_SMALL 8
#define LIVE_LARGE 131072
#define LIVE_REPS 3   /* timed ping-pongs per size and direction, after one untimed */
#define LIVE_MAX_SIZES 2
/* What a leader reports per measured peer: the peer, then min, median,
 * max of the round trips at each size. */
#define LIVE_ENTRY (1 + 3 * LIVE_MAX_SIZES)

struct rw_live {
    MPI_Comm comm;          /* private duplicate of the application's communicator (errors return) */
    MPI_Comm node;          /* the ranks of my node */
    MPI_Errhandler app_errors; /* the application communicator's, given to remapped ones */
    MPI_Comm leaders;       /* node k's leader is rank k here; MPI_COMM_NULL elsewhere */
    int size, rank;
    int passthrough;        /* nothing to do: no covering model, or a single node */
    int broken;             /* a probe gave up: later ones return at once */
    rw_model *model;        /* every rank's copy (NULL when passing through) */
    int32_t n;              /* nodes of the context, in the model's order */
    int32_t *node_of;       /* size: the node of each rank (in the current order) */
    int32_t *model_index;   /* n: the model node of each node */
    int32_t me;             /* my node */
    int n_sizes;            /* 1 or 2 */
    int noisy_latency;      /* the model's latencies are noise (rw_model_latency_noisy): the small size tells nothing */
    int size_index[LIVE_MAX_SIZES];
    int64_t sizes[LIVE_MAX_SIZES];
    int32_t cursor;         /* the next tournament round */
    int32_t call;           /* probes made */
    double round_seconds;   /* the most a round took (slowest leader); 0 unknown */
    int32_t *pair_call;     /* n*n: the call that last measured the pair */
    int32_t *node_change_call; /* n: the last call that named a changed pair of the node */
    rw_network *start_net;  /* the start model's figures (remap.c: what the order cost before any change) */
    int32_t swept_call;     /* the call of the last re-measurement of every stale pair (remap.c) */
    int32_t cycle_calls;    /* calls that refresh every pair, at the last probe's pace */
    int complete;           /* every pair of the nodes measured: published for the collectives */
    double threshold, min_gain, timeout;
    double *placed_pair;    /* n*n: the order's predicted cost per node pair when last decided (NULL: never) */
    rw_live_drift_fn on_drift;
    void *on_drift_arg;
    rw_live_pair_change *changes;
    int32_t n_changes;
    int32_t *changed_nodes;
    int32_t n_changed_nodes;
    char *buf;              /* a leader's message buffer */
    double wall0, wtime0;   /* unix time and MPI_Wtime at init: the model's timestamps */
    double measured[2];     /* unix time: the last measurement's start and end on this rank (traces) */
};

/* One measurement a leader made: src -> dst, per size min/median/max. */
typedef struct live_sample {
    int32_t src, dst;
    rw_stat stat[LIVE_MAX_SIZES];
} live_sample;

/* merge.c (no MPI): fold the samples into ctx's model at time `when`,
 * filling ctx's drift; *figures_changed when alpha/beta moved. */
rw_status live_merge(rw_live *ctx, const live_sample *s, int32_t n_samples, double when, int *figures_changed);
/* Whether every ordered pair of ctx's nodes is measured in its model. */
int live_complete(const rw_live *ctx);

/* measure.c: this leader's ping-pongs with peer, both ways (the lower
 * node initiates first at each size); out receives this rank's direction.
 * RW_ERR_MPI on an MPI error or a timeout. */
rw_status live_measure_pair(rw_live *ctx, int peer, char *buf, rw_stat *out);

/* probe.c: measure the n_pairs node pairs (pairs[2k], pairs[2k+1]), both
 * ways, a matching per round, and merge them (the current call's). */
rw_status live_refresh(rw_live *ctx, const int *pairs, int32_t n_pairs);

/* publish.c: publish ctx's model to the collectives (raising the
 * generation) and withdraw it. */
void live_publish(const rw_live *ctx);
void live_withdraw(const rw_live *ctx);

/* RANKWISE_COLL_TRACE=1 */
int live_tracing(void);

#endif
