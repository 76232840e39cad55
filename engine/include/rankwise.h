/* rankwise — public C API of the engine.
 *
 * librankwise, plain C11, no MPI: the network model, its file format,
 * statistics, Hockney fitting, grouping, probe schedules; with
 * rankwise_tree.h, rankwise_map.h, rankwise_node.h, rankwise_predict.h,
 * rankwise_coll_rules.h and rankwise_coll_tune.h. The MPI libraries have
 * headers of their own (rankwise_coll.h, rankwise_live.h,
 * rankwise_profile.h) that declare only what they export.
 * Library functions never exit(); they return an rw_status and leave a
 * one-line message in rw_last_error() (rankwise_status.h).
 */
#ifndef RANKWISE_H
#define RANKWISE_H

#include <stddef.h>
#include <stdint.h>

#include "rankwise_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RW_MODEL_FORMAT_VERSION 7

/* Version of the binary interface: the layout of the structures below and
 * of rankwise_map.h, and the functions' signatures. Raised on any change a
 * binding (python/rankwise/engine.py) must follow; the binding refuses a
 * library whose rw_abi_version() differs from the one it was written for. */
#define RW_ABI_VERSION 9
RW_API int rw_abi_version(void);

/* rw_status: RW_OK, RW_ERR_IO, ... and rw_last_error(), the calling
 * thread's last error (rankwise_status.h). */

RW_API const char *rw_version(void);

/* Enumerations by name, for bindings that must not rely on positions:
 * *_name returns NULL for a value out of range, *_from_name -1 for an
 * unknown name. Status names: "ok", "io", "parse", "nomem", "arg", "mpi",
 * "state". */
RW_API const char *rw_status_name(int status);
RW_API int rw_status_from_name(const char *name);

/* ---------------------------------------------------------------------
 * Statistics and fitting
 * ------------------------------------------------------------------- */

/* Summary of repeated timings of one (pair, size). Times in seconds. */
typedef struct rw_stat {
    double min, median, max;
    double jitter; /* (max - min) / mean of the kept samples */
    int32_t count; /* samples kept after outlier removal */
} rw_stat;

/* Median of v[0..n) (v is reordered). n > 0. */
RW_API double rw_median(double *v, size_t n);

/* Summarise samples grouped in rounds: samples[r * per_round + k].
 * A round whose median is more than ten times above or below the median
 * of all round medians is dropped; min/median/max/jitter are taken over
 * the samples of the kept rounds. Returns the number of rounds dropped.
 * samples is reordered in place. */
RW_API int rw_stat_from_rounds(double *samples, int rounds, int per_round, rw_stat *out);

/* Hockney fit of round-trip times rtt[k] for payloads size[k]:
 *     rtt = 2 alpha + beta * size
 * (the payload travels one way, an empty acknowledgement comes back, so
 * the intercept holds both directions' latency). Least squares on relative
 * error, so that 8 B and 4 MiB weigh alike; alpha, beta >= 0. */
RW_API rw_status rw_fit_hockney(const double *size, const double *rtt, int n,
                                double *alpha, double *beta);

/* ---------------------------------------------------------------------
 * The network model: a complete directed graph of nodes
 * ------------------------------------------------------------------- */

typedef enum rw_pair_state {
    RW_PAIR_UNPROBED = 0, /* never measured (e.g. outside a partial probe) */
    RW_PAIR_MEASURED = 1,
    RW_PAIR_MISSING = 2   /* probed, but no answer within the timeout */
} rw_pair_state;

/* "unprobed", "measured", "missing" (see rw_status_name for the rules). */
RW_API const char *rw_pair_state_name(int state);
RW_API int rw_pair_state_from_name(const char *name);

typedef enum rw_probe_mode {
    RW_MODE_CONCURRENT = 0, /* all pairs of a tournament round at once */
    RW_MODE_ISOLATED = 1    /* one pair at a time */
} rw_probe_mode;

/* "concurrent", "isolated". */
RW_API const char *rw_probe_mode_name(int mode);
RW_API int rw_probe_mode_from_name(const char *name);

typedef struct rw_probe_settings {
    rw_probe_mode mode;
    int32_t repetitions; /* timed ping-pongs per pair, size and round */
    int32_t rounds;      /* times the whole schedule is repeated */
    int32_t warmup;      /* untimed ping-pongs before each timed series */
    double timeout;      /* seconds a pair may take before it is missing */
    double time_budget;  /* seconds for the whole probe, 0 = none */
} rw_probe_settings;

/* Defaults: concurrent, 5 repetitions, 3 rounds, 1 warm-up, 10 s timeout. */
RW_API rw_probe_settings rw_probe_settings_default(void);

/* What a model may hold (docs/reference/formats.md, "Bounds"). A number outside
 * its bounds is a broken clock, a unit error or a corrupt file, never a
 * measurement: the reader refuses it with "path:line: ..." and the writer
 * refuses to write it, so every file the writer makes reads back. NaN
 * means "unknown" where the rules below allow it. */
#define RW_TEXT_MAX 255                  /* bytes of a source, pattern or node name */
#define RW_MODEL_MAX_NODES (1 << 20)
#define RW_MODEL_MAX_RANKS_PER_NODE (1 << 20)
#define RW_MODEL_MAX_SIZE (1LL << 40)    /* bytes of a message size */
#define RW_MODEL_MAX_SECONDS 1e3         /* alpha and round-trip times, s */
#define RW_MODEL_MAX_BETA 1.0            /* s per byte (1 B/s) */
#define RW_MODEL_MAX_JITTER 1e9          /* (max - min) / mean */
#define RW_MODEL_MAX_DURATION 1e9        /* duration, timeout, time budget, s */
#define RW_MODEL_MAX_TIMESTAMP 32503680000.0 /* unix time of 3000-01-01 UTC */
#define RW_MODEL_MAX_BANDWIDTH 1e15      /* bytes/s of a node cap or shared link (1 PB/s) */
#define RW_MODEL_MAX_LINKS (1 << 16)
#define RW_MODEL_MAX_HOPS 64 /* a node's links in a direct network (a 3-D torus: 6) */
#define RW_MODEL_NODE_LEVELS 4 /* RW_NODE_LEVELS of rankwise_node.h */

typedef struct rw_model {
    int32_t n_nodes;
    char **node_names;      /* n_nodes strings */
    int32_t *ranks_per_node;
    int32_t n_sizes;
    int64_t *sizes;         /* message sizes in bytes, increasing */
    rw_probe_settings settings;
    char source[256];       /* where the numbers come from (free text) */
    double created;         /* unix time the model was first written */
    double duration;        /* seconds the probe took (simulated under SMPI) */

    /* Ordered pair (i, j) is index p = i * n_nodes + j; per size s the
     * statistics of round-trip times are at p * n_sizes + s. */
    rw_stat *pair_stats;    /* n_nodes^2 * n_sizes */
    double *alpha;          /* n_nodes^2, seconds (one-way latency) */
    double *beta;           /* n_nodes^2, seconds per byte i -> j */
    double *measured_at;    /* n_nodes^2, unix time of the measurement */
    uint8_t *pair_state;    /* n_nodes^2, rw_pair_state */

    /* Intra-node rank-to-rank figures, per node (state UNPROBED when the
     * node ran a single rank). */
    rw_stat *intra_stats;   /* n_nodes * n_sizes */
    double *intra_alpha, *intra_beta;
    uint8_t *intra_state;

    /* The network's structure (format 2; docs/reference/formats.md, "Structure").
     * Every figure is optional: NaN (or none) where it was not measured. */
    double *overhead;       /* n_nodes: send overhead o of one message, s */
    double *inject;         /* n_nodes: bytes/s the node sends to several peers at once */
    double *eject;          /* n_nodes: bytes/s it receives from several peers at once */
    int64_t knee;           /* first size of the large-message protocol (eager ->
                               rendezvous), bytes; 0 when none was found */
    double *alpha_large;    /* n_nodes^2: the pair's fit on sizes >= knee */
    double *beta_large;     /*   (NaN without a knee or enough sizes) */
    int32_t *group_of;      /* n_nodes: the group the links below refer to, -1 none */
    int32_t n_links;
    struct rw_link *links;  /* shared links, rw_model_add_link */

    /* Inside the node (format 3; docs/concepts/inside-node.md): rank-to-rank
     * figures by the level two cores share (cache, domain, package, node:
     * rw_node_level of rankwise_node.h), measured on one node and taken
     * for the nodes built like it. NaN where not measured. */
    double node_alpha[RW_MODEL_NODE_LEVELS];
    double node_beta[RW_MODEL_NODE_LEVELS];

    /* n_nodes: receive overhead of one eager message, s (format 4): the
     * CPU time a rank spends taking in a message that has arrived; NaN
     * where not measured. A ping-pong's alpha holds it, and the send
     * overhead, besides the wire's latency. */
    double *recv_overhead;

    /* Shared-link capacities measured at separate times (format 5,
     * rw_model_add_spread): whether a link is slow or busy at times. */
    int32_t n_spreads;
    struct rw_spread *spreads;

    /* n_nodes: bytes/s the node sends and receives in all when it does
     * both at once (format 6): its NIC's capacity when the two directions
     * share it (SimGrid's SHARED links; a TCP stack's ACKs and interrupts
     * in part), NaN where the stress test found the directions apart. */
    double *duplex;

    /* Links of a direct network (format 7, rw_model_add_hop): on a torus,
     * each node's link to a neighbour, one per direction. A flow crosses
     * those of its shortest routes (rw_model_hop_share). */
    int32_t n_hops;
    struct rw_hop *hops;
} rw_model;

/* A shared link between groups (a rack uplink, a switch's core): every
 * flow from a node of a group in `from` to a node of a different group in
 * `to` crosses it; n_from (n_to) == 0 means every group. */
typedef struct rw_link {
    char name[RW_TEXT_MAX + 1]; /* rw_name rules */
    double capacity;            /* bytes/s it carries in all */
    int32_t n_from, n_to;
    int32_t *from, *to;
} rw_link;

/* A stress-test phase (`up-3`, `down-3`: docs/concepts/model.md) read at
 * `times` separate times during the probe: the lowest, median and highest
 * of those readings (bytes/s; each reading the median of its
 * repetitions) and `noise`, the median over times of the repetitions'
 * (max - min) / median: how much one reading differs at one moment. */
typedef struct rw_spread {
    char name[RW_TEXT_MAX + 1]; /* rw_name rules */
    double low, median, high;   /* bytes/s */
    double noise;               /* relative, >= 0 */
    int32_t times;              /* >= 1 */
} rw_spread;

/* A link from node `from` to its neighbour `to` (one direction). */
typedef struct rw_hop {
    int32_t from, to;
    double capacity; /* bytes/s */
} rw_hop;

/* Append (or replace: same from and to) a hop. RW_ERR_ARG on a bad node,
 * a node with itself or a bad capacity. */
RW_API rw_status rw_model_add_hop(rw_model *m, int32_t from, int32_t to, double capacity);

/* Hop counts and numbers of shortest routes between every two nodes over
 * the model's hops: dist[i * n_nodes + j] (-1 where j is not reached from
 * i) and routes[i * n_nodes + j] (1 from a node to itself). */
RW_API rw_status rw_model_hop_paths(const rw_model *m, int32_t *dist, double *routes);
/* The part of a flow from node i to node j that crosses hop h (dist and
 * routes of rw_model_hop_paths): a direct network routes a flow over one of
 * its shortest routes, and which one the latencies do not say; the flow is
 * taken as spread evenly over them, the hop carrying the share of those
 * through it. 0 off them, for i == j or where j is not reached. */
RW_API double rw_model_hop_share(const rw_model *m, const int32_t *dist, const double *routes, int32_t h, int32_t i,
                                 int32_t j);

/* Append (or replace, by name) a spread. RW_ERR_ARG on a bad name or
 * figure (rates as link capacities, low <= median <= high). */
RW_API rw_status rw_model_add_spread(rw_model *m, const char *name, double low, double median, double high, double noise,
                                     int32_t times);

/* Append a link (the arrays are copied). RW_ERR_ARG on a bad name or
 * capacity; the group lists are checked by rw_model_check. */
RW_API rw_status rw_model_add_link(rw_model *m, const char *name, double capacity, int32_t n_from,
                                   const int32_t *from, int32_t n_to, const int32_t *to);
/* 1 when the flow from node i to node j crosses link l, else 0. */
RW_API int rw_model_link_crosses(const rw_model *m, int32_t l, int32_t i, int32_t j);

/* Allocate a model with every pair UNPROBED. Names may be NULL (then
 * "node<i>"); ranks_per_node may be NULL (then 1). */
RW_API rw_status rw_model_create(int n_nodes, const char *const *names,
                                 const int32_t *ranks_per_node, int n_sizes,
                                 const int64_t *sizes, rw_model **out);
RW_API void rw_model_free(rw_model *m);

/* Index of a node by name, -1 when absent. */
RW_API int rw_model_find_node(const rw_model *m, const char *name);

/* Refit alpha/beta of pair p (or of node i's intra figures) from the
 * stored median round-trip times. With a knee, a pair's alpha/beta come
 * from the sizes below it and alpha_large/beta_large from the sizes at and
 * above it (NaN with fewer than two such sizes): rtt = alpha + alpha_large
 * + beta_large * size, the empty acknowledgement being an eager message,
 * so alpha_large is a large message's one-way latency. */
RW_API rw_status rw_model_fit_pair(rw_model *m, int p);
RW_API rw_status rw_model_fit_intra(rw_model *m, int node);

/* The protocol knee of the measured pairs' round-trip curves: the size
 * that, as the first of a second line, best splits every curve at once,
 * when the two lines leave at most a fifth of one line's squared relative
 * error and one line misses by more than 3 % rms; 0 otherwise (a straight
 * line never gets a knee). Needs two sizes on each side. */
RW_API int64_t rw_find_knee(const rw_model *m);
/* m->knee = rw_find_knee(m), then rw_model_fit_pair on every measured pair. */
RW_API rw_status rw_model_fit_knee(rw_model *m);

/* Predicted one-way time of a message of `bytes` from node i to node j
 * (i == j uses the intra-node figures): alpha + bytes x beta, or the
 * pair's alpha_large/beta_large at and above the knee when it has them.
 * Negative when unknown. */
RW_API double rw_model_time(const rw_model *m, int i, int j, double bytes);

/* Copy every pair of `update` that is MEASURED or MISSING into `base`
 * (matched by node name; nodes new to base are an error), with the
 * structure figures update knows (overhead, node caps, large-message fit;
 * its groups and links replace base's when it has links; its knee when
 * non-zero). Used to merge a partial re-probe into an existing model.
 * Sizes must match. */
RW_API rw_status rw_model_merge(rw_model *base, const rw_model *update);


/* RW_OK when m keeps every rule: node names (rw_name rules: UTF-8, no
 * blank, '#' or control character, at most RW_TEXT_MAX bytes, distinct),
 * source (UTF-8 text without control characters or blanks at its ends), ranks per node in [1, RW_MODEL_MAX_RANKS_PER_NODE],
 * sizes in [0, RW_MODEL_MAX_SIZE] increasing, settings (repetitions and
 * rounds >= 1, warmup >= 0, timeout and time_budget in [0, MAX_DURATION]),
 * created and measured_at NaN or in [0, MAX_TIMESTAMP], duration NaN or in
 * [0, MAX_DURATION]; a measured pair or intra figure has finite alpha in
 * [0, MAX_SECONDS] and beta in [0, MAX_BETA], a missing one NaN or the same;
 * statistics with count > 0 have min/median/max in [0, MAX_SECONDS] and
 * jitter in [0, MAX_JITTER], count >= 0. Structure: overhead NaN or in
 * [0, MAX_SECONDS]; inject/eject NaN or in (0, MAX_BANDWIDTH]; knee in [0,
 * MAX_SIZE]; alpha_large/beta_large NaN or the bounds of alpha/beta, only
 * on measured pairs; group_of in [-1, n_nodes); at most MAX_LINKS links,
 * distinct names, capacity in (0, MAX_BANDWIDTH], group lists of groups
 * some node has. Otherwise RW_ERR_ARG naming the first offence. */
RW_API rw_status rw_model_check(const rw_model *m);

/* Make a NUL-terminated text keep the text rule in place, for texts taken
 * from outside (a command line, an environment variable) before they go
 * into a model or matrix: control characters become blanks, bytes that are
 * not UTF-8 (a character cut by an earlier truncation included) become
 * '?', the text is cut to RW_TEXT_MAX bytes at a character boundary, and
 * blanks at both ends are removed. */
RW_API void rw_text_clean(char *text);

/* File format (see docs/reference/formats.md). write is atomic: a temporary file in
 * the same directory is renamed over `path` once complete; it refuses
 * (RW_ERR_ARG, "path: cannot write: ...") a model rw_model_check refuses.
 * read refuses with "path:line: message" anything outside the rules; a
 * model it returns always passes rw_model_check. */
RW_API rw_status rw_model_read(const char *path, rw_model **out);
RW_API rw_status rw_model_write(const rw_model *m, const char *path);

/* Groups of nodes that are close to each other, found from the numbers
 * alone (alpha, symmetrised). Latency adds up along a route, alpha_ij ~
 * a_i + a_j + D(g_i, g_j): each node's own term a_i is estimated from row
 * differences and removed first, so that a node with a slow NIC neither
 * forms a group of its own nor looks close to everyone. Each node then
 * takes the nodes below the first gap of more than 1.5x in its corrected
 * row as neighbours; two nodes join when one names the other and their
 * neighbourhoods mostly agree. Nodes whose own term dominates their pairs
 * join the group closest to them on average (docs/concepts/model.md).
 * group_of[i] receives a group index in [0, n_groups), numbered in order
 * of first node. Returns n_groups (1 when there is no clear gap), or -1
 * on error.
 * Where the latencies show no groups, or are noise (rw_model_latency_noisy),
 * the groups the probe stored decide, else the bandwidths: nodes whose
 * pairs (the lesser direction) reach within 1.5x of the lesser of their
 * two nodes' best rates name each other, and join as above; a node whose
 * best rate is 1.5x below the typical node's (a slow NIC) joins the group
 * it reaches best. */
RW_API int rw_model_groups(const rw_model *m, int32_t *group_of);

/* 1 when the round trips of the smallest size spread so much that latency
 * levels and nodes' latency terms are noise (a loaded real stack, or a
 * smallest size whose time is all bytes): the median over pairs of
 * (median - min) above 40 % of the latency part of the min, the round trip
 * less the pair's bytes at its fitted slope. 0 when they are not or no
 * statistics are known (a simulation: 0 %); -1 out of memory. */
RW_API int rw_model_latency_noisy(const rw_model *m);

/* The drift rule (`rankwise diff`, `watch`, the live model in the job):
 * a figure changed when the ratio after / before is finite, > 0 and
 * beyond the threshold either way, |log ratio| > log(1 + threshold)
 * (rw_drift_beyond: figures measured once, without a spread). Round trips
 * changed when, besides, their ranges [min, max] do not overlap (the noise
 * each measurement showed): rw_drift_strength gives |log ratio| then, else
 * -1, so the most changed size is the strongest. rw_drift_strengths: the
 * same over n figures; RW_ERR_ARG on a threshold not >= 0. */
RW_API int rw_drift_beyond(double ratio, double threshold);
RW_API double rw_drift_strength(double before_min, double before_median, double before_max, double after_min,
                                double after_median, double after_max, double threshold);
RW_API rw_status rw_drift_strengths(int64_t n, const double *before_min, const double *before_median,
                                    const double *before_max, const double *after_min, const double *after_median,
                                    const double *after_max, double threshold, double *strength);

/* ---------------------------------------------------------------------
 * Probe schedule: round-robin tournament (circle method)
 * ------------------------------------------------------------------- */

/* Number of rounds for n participants: n - 1 when n is even, n when odd
 * (one participant sits out each round). */
RW_API int rw_tournament_rounds(int n);
/* Partner of participant `me` in `round`, or -1 for a bye. */
RW_API int rw_tournament_partner(int n, int round, int me);

/* ---------------------------------------------------------------------
 * Communication matrix: who sends how much to whom in a job of N ranks
 * ------------------------------------------------------------------- */

#define RW_MATRIX_FORMAT_VERSION 2
/* Largest job a matrix describes: guards against a mistyped rank count
 * allocating gigabytes of row offsets. */
#define RW_MATRIX_MAX_RANKS (1 << 26)

/* The collective operations: those whose calls a matrix records (names as
 * rankwise.collective_calls.COLLECTIVE_OPS; they cross by name), and the
 * engine's one numbering of them (its registry, the collectives library and
 * the predictor). */
typedef enum rw_coll_op {
    RW_COLL_BCAST = 0,
    RW_COLL_REDUCE,
    RW_COLL_ALLREDUCE,
    RW_COLL_ALLGATHER,
    RW_COLL_GATHER,
    RW_COLL_SCATTER,
    RW_COLL_ALLTOALL
} rw_coll_op;
/* "bcast", ... ; NULL beyond the last operation. */
RW_API const char *rw_coll_op_name(int op);
/* The operation of a name, -1 when unknown. */
RW_API int rw_coll_op_from_name(const char *name);
/* Whether op has a root (bcast, reduce, gather, scatter). */
RW_API int rw_coll_op_rooted(int op);

/* `calls` calls of `op` with the same size and root on one communicator:
 * bytes as rankwise-bench-collectives counts SIZE (bcast from the root,
 * alltoall per rank pair, the others per rank); root is a communicator
 * rank (0 for the operations without one); comm indexes the matrix's
 * communicators, -1 for every rank of the matrix in order (MPI_COMM_WORLD). */
typedef struct rw_coll_call {
    int32_t op;
    int32_t comm;
    int32_t root;
    int64_t bytes;
    int64_t calls;
} rw_coll_call;

/* A sparse directed matrix over ranks 0..n_ranks-1: entry (src, dst) holds
 * the messages and bytes rank src sends to rank dst over the whole run
 * (profiled, or generated from a pattern). Rows are compressed by source:
 * the entries of rank i are k in [row_start[i], row_start[i+1]), with
 * dst[k] strictly increasing inside a row. Invariants kept by every
 * function below: each stored entry has msgs > 0 or bytes > 0 (zero-byte
 * messages are traffic; an entry with neither is not stored), and the sums
 * of all msgs and of all bytes fit in int64, so no sum of entries
 * overflows. A rank sending to itself is allowed (src == dst). */
typedef struct rw_matrix {
    int32_t n_ranks;
    int64_t nnz;        /* stored entries */
    int64_t *row_start; /* n_ranks + 1 offsets into dst/msgs/bytes */
    int32_t *dst;       /* nnz destination ranks */
    int64_t *msgs;      /* nnz message counts */
    int64_t *bytes;     /* nnz byte volumes */
    char source[256];   /* where the traffic comes from (one line, may be empty) */
    char pattern[256];  /* generator spec that made it (one line, may be empty) */
    /* The collective calls (rw_matrix_set_collectives keeps them
     * canonical): communicator c's members are the world ranks
     * comm_ranks[comm_start[c] .. comm_start[c+1]), in communicator rank
     * order; calls are sorted by (comm, op, root, bytes), each group once. */
    int32_t n_comms;
    int64_t *comm_start;   /* n_comms + 1 offsets (NULL in a matrix without calls) */
    int32_t *comm_ranks;
    int64_t n_colls;
    rw_coll_call *colls;
    int64_t colls_dropped; /* calls a profiler counted but could not group (its table was full) */
} rw_matrix;

/* Build a matrix from `count` COO triplets (src[k], dst[k], msgs[k],
 * bytes[k]) in any order; duplicate (src, dst) pairs are summed and pairs
 * that sum to no message and no byte are dropped. Refused (RW_ERR_ARG):
 * n_ranks outside [1, RW_MATRIX_MAX_RANKS], a rank outside [0, n_ranks),
 * a negative count or volume, totals beyond int64. Sorting is a two-pass
 * counting sort, O(count + n_ranks); sorted input is copied as is.
 * source and pattern start empty, and so do the collective calls. */
RW_API rw_status rw_matrix_create(int32_t n_ranks, int64_t count, const int32_t *src,
                                  const int32_t *dst, const int64_t *msgs, const int64_t *bytes,
                                  rw_matrix **out);
RW_API void rw_matrix_free(rw_matrix *m);

/* Replace m's collective calls by a copy of these: n_comms communicators
 * (members of c: comm_ranks[comm_start[c] .. comm_start[c+1])), n_colls
 * calls, `dropped` calls not grouped. Kept canonical: communicators with
 * the same members become one, one whose members are 0..n_ranks-1 in order
 * becomes -1 (every rank), communicators no call names are left out, the
 * rest ordered by their member lists; calls sorted by (comm, op, root,
 * bytes) with the calls of equal groups summed. RW_ERR_ARG (m unchanged)
 * naming the first offence: a member outside [0, n_ranks) or twice in one
 * communicator, an empty communicator, an unknown op, a comm outside [-1,
 * n_comms), a root outside the communicator or not 0 for an operation
 * without one, bytes < 0, calls < 1, dropped < 0, a sum of calls beyond
 * int64. */
RW_API rw_status rw_matrix_set_collectives(rw_matrix *m, int32_t n_comms, const int64_t *comm_start,
                                           const int32_t *comm_ranks, int64_t n_colls,
                                           const rw_coll_call *colls, int64_t dropped);

/* Index k of entry (src, dst), or -1 when absent or out of range
 * (binary search in the row). */
RW_API int64_t rw_matrix_find(const rw_matrix *m, int32_t src, int32_t dst);
/* Messages and bytes src -> dst (0 and 0 when absent); RW_ERR_ARG when a
 * rank is out of range. Either output may be NULL. */
RW_API rw_status rw_matrix_get(const rw_matrix *m, int32_t src, int32_t dst, int64_t *msgs,
                               int64_t *bytes);
/* Number of distinct destinations of src (0 when out of range). */
RW_API int32_t rw_matrix_out_degree(const rw_matrix *m, int32_t src);
RW_API int64_t rw_matrix_total_msgs(const rw_matrix *m);
RW_API int64_t rw_matrix_total_bytes(const rw_matrix *m);

/* The undirected traffic graph a mapper partitions: entry (i, j), i != j,
 * holds msgs(i,j) + msgs(j,i) and bytes(i,j) + bytes(j,i), and is stored in
 * both rows i and j (symmetric CSR, the form Scotch and METIS take);
 * traffic of a rank to itself is left out. source, pattern and the
 * collective calls (the same ranks) are copied.
 * RW_ERR_ARG when the doubled totals would not fit in int64. */
RW_API rw_status rw_matrix_symmetrize(const rw_matrix *m, rw_matrix **out);

/* File format (docs/reference/formats.md, "Communication matrix"). write is atomic
 * like rw_model_write; it refuses (RW_ERR_ARG, "path: cannot write: ...")
 * a source or pattern that breaks the text rule of rw_model_check (UTF-8,
 * no control character, no blank at either end, at most RW_TEXT_MAX
 * bytes); read refuses such a text with "path:line: message", like any
 * other malformed input, so what it returns can be written back. */
RW_API rw_status rw_matrix_read(const char *path, rw_matrix **out);
RW_API rw_status rw_matrix_write(const rw_matrix *m, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_H */
