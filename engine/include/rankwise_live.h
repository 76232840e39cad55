/* rankwise — the live model: re-probe the network from inside a running
 * application, see what changed, and remap the ranks (docs/concepts/live.md,
 * "In the job"). Part of librankwise_coll, whose collectives rebuild their
 * decisions when the live model changes.
 *
 * Every function is collective over the context's communicator (all ranks
 * call it, in the same order), returns an rw_status (the same on every
 * rank) and never exits; rw_last_error() says why on failure. The
 * model and traffic types are those of rankwise.h (librankwise), which a
 * program that builds or reads them includes and links too. */
#ifndef RANKWISE_LIVE_H
#define RANKWISE_LIVE_H

#include <mpi.h>
#include <stdint.h>

#include "rankwise_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RW_LIVE_API __attribute__((visibility("default")))
#else
#define RW_LIVE_API
#endif

typedef struct rw_live rw_live;
struct rw_model;  /* rankwise.h */
struct rw_matrix;

/* What one rw_live_probe did. */
typedef struct rw_live_report {
    double seconds;       /* time the call took (MPI_Wtime, rank 0, after the agreement) */
    int32_t call;         /* 1 for the first rw_live_probe of the context, ... */
    int32_t rounds;       /* tournament rounds measured by this call */
    int32_t rounds_total; /* rounds in a whole cycle (every ordered pair once) */
    int32_t cycle_calls;  /* k: at this pace every pair is refreshed every k calls */
    int32_t pairs;        /* ordered node pairs measured by this call */
    int32_t changed;      /* of them, changed beyond their noise */
    int32_t nodes_changed;
    uint64_t generation;  /* the model's generation after the call */
    int32_t passthrough;  /* 1: the context does nothing (model without the ranks, one node) */
} rw_live_report;

/* A pair that changed: nodes of the context (rw_live_node_name), the
 * ratio after / before of the median round trip at its most changed size. */
typedef struct rw_live_pair_change {
    int32_t src, dst;
    int64_t size;
    double ratio;
} rw_live_pair_change;

/* The drift found by the last rw_live_probe: its changed pairs and the
 * nodes most of whose measured pairs (of at least 2 partners) changed.
 * Owned by the context, valid until its next probe. */
typedef struct rw_live_drift {
    int32_t n_pairs;
    const rw_live_pair_change *pairs;
    int32_t n_nodes;
    const int32_t *nodes;
} rw_live_drift;

typedef void (*rw_live_drift_fn)(const rw_live_drift *drift, void *arg);

/* A context on comm (an intracommunicator; duplicated). model_path: a
 * model file (rankwise probe) read by every rank, whose nodes hold the
 * ranks as the collectives find them (processor name, else
 * "name:<world rank>"); NULL: no model, the nodes are the processor names
 * and every pair is unmeasured until probed. A model that does not cover
 * the communicator's nodes, or a single node: one warning on rank 0, and
 * a context that passes through (its probes measure nothing, its remaps
 * keep the order). RW_ERR_IO / RW_ERR_PARSE for a model that cannot be
 * read, RW_ERR_STATE for an intercommunicator. */
RW_LIVE_API rw_status rw_live_init(MPI_Comm comm, const char *model_path, rw_live **out);
/* Collective; *ctx becomes NULL. */
RW_LIVE_API void rw_live_free(rw_live **ctx);

/* Settings (the same on every rank). The drift threshold: a pair changed
 * when its new round trips do not overlap the model's [min, max] at a
 * size and the medians differ by more than this fraction (default 0.10,
 * as `rankwise diff`). The remap's minimum gain: a new order only when
 * predicted faster by this fraction (default 0.10). Timeout: seconds a
 * ping-pong may take before the probe gives up (default 10). */
RW_LIVE_API rw_status rw_live_set_threshold(rw_live *ctx, double fraction);
RW_LIVE_API rw_status rw_live_set_min_gain(rw_live *ctx, double fraction);
RW_LIVE_API rw_status rw_live_set_timeout(rw_live *ctx, double seconds);
/* Called on every rank at the end of a probe that found a change. */
RW_LIVE_API rw_status rw_live_on_drift(rw_live *ctx, rw_live_drift_fn fn, void *arg);

/* rw_last_error() (rankwise_status.h), under its former name: the library's
 * SONAME (0.1) still promises it to programs linked against it. */
RW_LIVE_API const char *rw_live_last_error(void) RW_DEPRECATED("use rw_last_error");

/* The default time a probe may take (seconds): the slice it measures. */
#define RW_LIVE_DEFAULT_BUDGET 0.0005

/* Re-measure a slice of the node pairs: the next tournament rounds of the
 * node leaders (all pairs of a round at once, both ways), as many as the
 * budget allows from what a round took before (at least one; 0 = the
 * default budget), rotating so that every ordered pair is refreshed every
 * report->cycle_calls calls. The measurements are merged into the
 * in-memory model with their time; pairs that changed beyond their noise
 * are the drift (rw_live_drift, the callback), and the model's generation
 * is raised, so the collectives decide again. report may be NULL. An MPI
 * error or a timeout: RW_ERR_MPI, the model unchanged, and the context
 * gives up (later probes return RW_ERR_STATE at once); the application's
 * communicators are not touched. With RANKWISE_COLL_TRACE=1 rank 0 prints
 * one line per probe. */
RW_LIVE_API rw_status rw_live_probe(rw_live *ctx, double budget_seconds, rw_live_report *report);

/* The drift of the last probe (every rank holds the same). */
RW_LIVE_API rw_status rw_live_get_drift(const rw_live *ctx, rw_live_drift *out);

/* Nodes of the context: count, and a node's name in the model. */
RW_LIVE_API int32_t rw_live_n_nodes(const rw_live *ctx);
RW_LIVE_API const char *rw_live_node_name(const rw_live *ctx, int32_t node);
/* The probe call (report.call) that last measured src -> dst; 0 never. */
RW_LIVE_API int32_t rw_live_pair_call(const rw_live *ctx, int32_t src, int32_t dst);
/* The live model (the same on every rank): read-only, valid until the
 * next probe. NULL for a context that passes through. */
RW_LIVE_API const struct rw_model *rw_live_model(const rw_live *ctx);
/* Raised whenever a live model's figures change (process-wide). */
RW_LIVE_API uint64_t rw_live_generation(void);

/* The mapper on the current model for traffic between the ranks of the
 * context's communicator (traffic->n_ranks == its size; rank 0's is the
 * one used). *gain is the predicted fraction of time saved, 1 - new /
 * current cost. When it beats the minimum gain, *newcomm is a new
 * communicator over the same processes whose rank order follows the new
 * placement (the application moves its data there, rw_live_move, as with
 * MPI's reorder) and the context follows it; otherwise *newcomm is
 * MPI_COMM_NULL. A model lacking a pair of the communicator's nodes:
 * RW_ERR_STATE, nothing changes. */
RW_LIVE_API rw_status rw_live_remap(rw_live *ctx, const struct rw_matrix *traffic, MPI_Comm *newcomm, double *gain);

/* After a remap: each process sends `count` elements of its data (that of
 * its rank in oldcomm) to the process that took that rank in newcomm, and
 * receives the data of its new rank into recvbuf (distinct buffers).
 * Collective over newcomm; oldcomm and newcomm hold the same processes. */
RW_LIVE_API rw_status rw_live_move(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Comm oldcomm,
                       MPI_Comm newcomm);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_LIVE_H */
