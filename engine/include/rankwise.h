/* rankwise — public C API of the engine.
 *
 * The engine is split in two libraries:
 *   librankwise      plain C11, no MPI: the network model, its file format,
 *                    statistics, Hockney fitting, grouping, probe schedules.
 *   librankwise_mpi  MPI code (the probe), built twice: against a real MPI
 *                    and against SimGrid SMPI.
 * Library functions never exit(); they return an rw_status and leave a
 * one-line message in rw_last_error().
 */
#ifndef RANKWISE_H
#define RANKWISE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RW_MODEL_FORMAT_VERSION 1

typedef enum rw_status {
    RW_OK = 0,
    RW_ERR_IO = 1,      /* file could not be opened, read or written */
    RW_ERR_PARSE = 2,   /* malformed input file */
    RW_ERR_NOMEM = 3,
    RW_ERR_ARG = 4,     /* invalid argument or option */
    RW_ERR_MPI = 5,     /* an MPI call failed */
    RW_ERR_STATE = 6    /* the operation does not apply (e.g. one node only) */
} rw_status;

/* Last error of the calling thread, one line, never NULL. */
const char *rw_last_error(void);
const char *rw_version(void);

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
double rw_median(double *v, size_t n);

/* Summarise samples grouped in rounds: samples[r * per_round + k].
 * A round whose median is more than ten times above or below the median
 * of all round medians is dropped; min/median/max/jitter are taken over
 * the samples of the kept rounds. Returns the number of rounds dropped.
 * samples is reordered in place. */
int rw_stat_from_rounds(double *samples, int rounds, int per_round, rw_stat *out);

/* Hockney fit of round-trip times rtt[k] for payloads size[k]:
 *     rtt = 2 alpha + beta * size
 * (the payload travels one way, an empty acknowledgement comes back, so
 * the intercept holds both directions' latency). Least squares on relative
 * error, so that 8 B and 4 MiB weigh alike; alpha, beta >= 0. */
rw_status rw_fit_hockney(const double *size, const double *rtt, int n,
                         double *alpha, double *beta);

/* ---------------------------------------------------------------------
 * The network model: a complete directed graph of nodes
 * ------------------------------------------------------------------- */

typedef enum rw_pair_state {
    RW_PAIR_UNPROBED = 0, /* never measured (e.g. outside a partial probe) */
    RW_PAIR_MEASURED = 1,
    RW_PAIR_MISSING = 2   /* probed, but no answer within the timeout */
} rw_pair_state;

typedef enum rw_probe_mode {
    RW_MODE_CONCURRENT = 0, /* all pairs of a tournament round at once */
    RW_MODE_ISOLATED = 1    /* one pair at a time */
} rw_probe_mode;

typedef struct rw_probe_settings {
    rw_probe_mode mode;
    int32_t repetitions; /* timed ping-pongs per pair, size and round */
    int32_t rounds;      /* times the whole schedule is repeated */
    int32_t warmup;      /* untimed ping-pongs before each timed series */
    double timeout;      /* seconds a pair may take before it is missing */
    double time_budget;  /* seconds for the whole probe, 0 = none */
} rw_probe_settings;

/* Defaults: concurrent, 5 repetitions, 3 rounds, 1 warm-up, 10 s timeout. */
rw_probe_settings rw_probe_settings_default(void);

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
} rw_model;

/* Allocate a model with every pair UNPROBED. Names may be NULL (then
 * "node<i>"); ranks_per_node may be NULL (then 1). */
rw_status rw_model_create(int n_nodes, const char *const *names,
                          const int32_t *ranks_per_node, int n_sizes,
                          const int64_t *sizes, rw_model **out);
void rw_model_free(rw_model *m);

/* Index of a node by name, -1 when absent. */
int rw_model_find_node(const rw_model *m, const char *name);

/* Refit alpha/beta of pair p (or of node i's intra figures) from the
 * stored median round-trip times. */
rw_status rw_model_fit_pair(rw_model *m, int p);
rw_status rw_model_fit_intra(rw_model *m, int node);

/* Predicted one-way time of a message of `bytes` from node i to node j
 * (i == j uses the intra-node figures). Negative when unknown. */
double rw_model_time(const rw_model *m, int i, int j, double bytes);

/* Copy every pair of `update` that is MEASURED or MISSING into `base`
 * (matched by node name; nodes new to base are an error). Used to merge
 * a partial re-probe into an existing model. Sizes must match. */
rw_status rw_model_merge(rw_model *base, const rw_model *update);

/* File format (see docs/formats.md). write is atomic: a temporary file in
 * the same directory is renamed over `path` once complete. */
rw_status rw_model_read(const char *path, rw_model **out);
rw_status rw_model_write(const rw_model *m, const char *path);

/* Groups of nodes that are close to each other, found from the numbers
 * alone: each node sorts its latencies (alpha, symmetrised) to the others
 * and takes those below the first gap of more than 1.5x as neighbours;
 * groups are the connected components of that neighbourhood.
 * group_of[i] receives a group index in [0, n_groups). Returns n_groups
 * (1 when there is no clear gap), or -1 on error. */
int rw_model_groups(const rw_model *m, int32_t *group_of);

/* ---------------------------------------------------------------------
 * Probe schedule: round-robin tournament (circle method)
 * ------------------------------------------------------------------- */

/* Number of rounds for n participants: n - 1 when n is even, n when odd
 * (one participant sits out each round). */
int rw_tournament_rounds(int n);
/* Partner of participant `me` in `round`, or -1 for a bye. */
int rw_tournament_partner(int n, int round, int me);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_H */
