/* rankwise — choosing how a rooted collective runs on a measured network:
 * trees built from the model and the selection among them and the MPI's
 * own algorithm, scored by the predictor (plain C11, no MPI, part of
 * librankwise; docs/concepts/collectives.md).
 *
 * Every function takes a predictor network (rankwise_predict.h) whose
 * placement gives the communicator's ranks their nodes. Trees are
 * hierarchical: on every node the lowest rank leads (on the root's node the
 * root), the model's construction links the node leaders, and the ranks of
 * a node hang below their leader in a binomial tree, sent to after the
 * leader's remote children.
 *
 * Contract as in rankwise.h: an rw_status, one line in rw_last_error(),
 * never exits; trees and decisions belong to the caller.
 */
#ifndef RANKWISE_COLL_TUNE_H
#define RANKWISE_COLL_TUNE_H

#include "rankwise_predict.h"
#include "rankwise_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the trees are built and scored. */
typedef struct rw_tune_options {
    int64_t eager_limit; /* first size sent with the rendezvous protocol (the model's
                            knee; default 65536, SMPI's smpi/send-is-detached-thresh) */
    double gamma;        /* reduce: s per byte reduced (default 0) */
    double min_gain;     /* rankwise runs only when predicted this much faster than
                            the passthrough (default 0.05) */
    int32_t max_evals;   /* predictor runs a local search may spend per tree (default 1000) */
    const rw_tree *start_tree; /* NULL, or a tree over the ranks from the call's root that
                                  the eager search starts from as well (e.g. the one chosen
                                  for the next smaller size); borrowed (default NULL) */
} rw_tune_options;

RW_API rw_tune_options rw_tune_options_default(void);

/* The eager, latency-bound tree (Wang et al. 2024): the earliest-completion
 * greedy among node leaders from alpha, beta and the send overhead o (each
 * next rank is the one whose message can arrive first; a sender is busy o
 * per eager message and until the end of a rendezvous one, so slow
 * forwarders end as leaves), then improved by local moves (move a leader's
 * subtree under another leader, swap two leaders) that the predictor scores
 * for op (bcast, reduce, gather, scatter) at `bytes`. The search also
 * starts from the binomial tree and keeps the better; with several ranks
 * per node, or a start tree in opt, it searches over ranks as well (from
 * the leaders' tree and the start tree), and the rank-order binomial wins
 * if it is still faster: the result is never predicted slower than
 * binomial or the start tree. RW_ERR_ARG when the start tree does not span
 * the ranks from root. */
RW_API rw_status rw_model_tree_eager(const rw_pnet *net, const char *op, int32_t root, double bytes,
                                     const rw_tune_options *opt, rw_tree **out);

/* The rendezvous, bandwidth-bound trees: a chain (each next leader the one
 * with the widest link from the last) or a binary tree grown along the
 * widest paths from the root (the leader reached with the largest
 * bottleneck bandwidth joins next, under a leader with fewer than two
 * children). */
RW_API rw_status rw_model_tree_chain(const rw_pnet *net, int32_t root, rw_tree **out);
RW_API rw_status rw_model_tree_binary(const rw_pnet *net, int32_t root, rw_tree **out);

/* Gather and scatter: a binomial shape whose positions are filled from the
 * root down, largest subtree volume first, each with the free leader whose
 * link to its parent costs least for that volume (alpha + volume x beta):
 * the fastest links carry the largest volumes, near the root. Then local
 * moves scored by the predictor, as rw_model_tree_eager. */
RW_API rw_status rw_model_tree_volume(const rw_pnet *net, const char *op, int32_t root, double bytes,
                                      const rw_tune_options *opt, rw_tree **out);

/* Segment size for a pipelined bcast of `bytes` along t: the classic
 * optimum sqrt(bytes alpha / ((depth - 1) beta)) with the slowest edge's
 * alpha and beta, refined by the predictor among half, that and double
 * (a multiple of 1024, at least 1024; 0 when one segment is best). */
RW_API int64_t rw_model_segment(const rw_pnet *net, const rw_tree *t, double bytes, const rw_tune_options *opt);

/* The collectives library's own allreduce and allgather (rankwise_coll.h)
 * as predictor schedules on net's placement: alg is the library's name,
 * ring, recursive_doubling, hier, or a tree (binomial, knomial radix 4,
 * chain: reduce or gather to rank 0 over it, then bcast over it); bytes:
 * allreduce the vector (4-byte elements assumed for the ring's blocks),
 * allgather one rank's block. Message for message what the library sends
 * (docs/concepts/collectives.md, "Allreduce and allgather"). */
RW_API rw_status rw_sched_library(const rw_pnet *net, const char *op, const char *alg, double bytes,
                                  const rw_coll_options *opt, rw_sched **out);
RW_API rw_status rw_predict_library(const rw_pnet *net, const char *op, const char *alg, double bytes,
                                    const rw_coll_options *opt, rw_sim_mode mode, rw_sim_result *out);

/* The order in which the library lays its triple trinary trees over net's
 * placement (rank order where it already follows the network, else a walk
 * along it; docs/concepts/collectives.md, "Long messages"): order[j] is the rank at
 * position j, net->n_ranks entries. The predictor costs the trinary
 * candidates in this order, so a rules file choosing them carries it
 * (trinary-order) for the library to run what was costed. */
RW_API rw_status rw_coll_trinary_order(const rw_pnet *net, int32_t *order);

/* The ranks in the order the multi-ring allgather's rings run through them
 * over net's placement (net->n_ranks entries): what the predictor costs
 * the multi-ring in, and what the library runs when given the same network. */
RW_API rw_status rw_coll_multiring_order(const rw_pnet *net, int32_t *order);

/* ---------------------------------------------------------------------
 * Selection
 * ------------------------------------------------------------------- */

#define RW_COLL_NAME_MAX 40

typedef struct rw_coll_candidate {
    char algorithm[RW_COLL_NAME_MAX]; /* "tree", the passthrough's name, or (allreduce,
                                         allgather) the library's algorithm */
    char source[RW_COLL_NAME_MAX];    /* how the tree was made: eager, chain, binary, volume,
                                         binomial; "passthrough" for the MPI's own */
    int64_t segment;                  /* bcast pipeline segment, bytes; 0 = whole */
    double time;                      /* predicted, s */
    rw_tree *tree;                    /* the tree over the communicator's ranks (NULL for
                                         an algorithm that is not a tree) */
} rw_coll_candidate;

typedef struct rw_coll_decision {
    int32_t n_candidates;
    rw_coll_candidate *candidates; /* [0] is the passthrough, [1] rankwise's binomial */
    int32_t chosen;                /* index into candidates: 0 = pass through */
    double gain;                   /* 1 - chosen's time / passthrough's time */
} rw_coll_decision;

/* Open MPI's tuned decision for op at comm_size ranks and `bytes` (total
 * per rank as its selector counts them: allreduce the vector, allgather one
 * rank's block), as SimGrid 3.32 SMPI's `ompi` selector makes it
 * (src/smpi/colls/smpi_openmpi_selector.cpp): the name of the algorithm it
 * runs, e.g. "binomial", "knomial", "binary", "chain", "pipeline",
 * "split_binary", "scatter_rdb_allgather", "linear"; allreduce
 * "recursive_doubling", "ring", "segmented_ring", "rabenseifner",
 * "basic_linear", "nonoverlapping"; allgather "recursive_doubling", "bruck",
 * "ring", "neighbor", "two_proc", "linear". NULL for an unknown op.
 * Commutative reductions. */
RW_API const char *rw_coll_ompi_algorithm(const char *op, int32_t comm_size, double bytes);

/* Score the passthrough (rw_coll_ompi_algorithm, modelled as a tree or the
 * predictor's schedule of the same pattern), rankwise's binomial and the
 * model's trees for op at `bytes` from `root`, and choose: the fastest
 * rankwise candidate when predicted at least opt->min_gain faster than the
 * passthrough, else the passthrough. The eager search starts from the
 * passthrough's tree too (and opt->start_tree), so its tree is never predicted
 * slower than the MPI's own when that is a tree. allreduce and allgather (root
 * ignored) score the library's own algorithms instead of trees
 * (rw_predict_library): candidates binomial, knomial, ring,
 * recursive_doubling, hier, each with `algorithm` and `source` the
 * library's name and no tree. */
RW_API rw_status rw_coll_decide(const rw_pnet *net, const char *op, int32_t root, double bytes,
                                const rw_tune_options *opt, rw_coll_decision **out);
RW_API void rw_coll_decision_free(rw_coll_decision *d);

/* ---------------------------------------------------------------------
 * The symmetric all-to-all (Ajima: the uniformly overlaid symmetrical
 * pattern): its sub-phases and its cap on sends in flight
 * ------------------------------------------------------------------- */

/* The n - 1 shifts of n ranks in phases of symmetric relative positions
 * (+d and -d; n/2 alone for even n), a near phase beside a far one (d = 1,
 * n/2, 2, n/2 - 1, ...), packed in that order into sub-phases of
 * at most max(cap, 2) shifts without splitting a phase: shift[0..n-1)
 * receives the shifts (in 1..n-1: rank r sends to r + shift), start[0..k]
 * the sub-phases' first index (start[k] = n - 1). Returns k (0 for n < 2).
 * shift and start need room for n - 1 and n entries. */
RW_API int32_t rw_a2a_subphases(int32_t n, int32_t cap, int32_t *shift, int32_t *start);

/* The cap on concurrent sends per rank for net's placement and `bytes` per
 * pair (injection-rate control): the narrowest sub-phases, among 2, 4, 8,
 * ... and n - 1 sends in flight, whose predicted time (rw_simulate, flows
 * sharing the node caps and shared links max-min) is within RW_A2A_SLACK
 * of the fastest width's: more sends in flight only where the shared links
 * leave room for them. At least 2, at most n - 1; RW_A2A_DEFAULT_CAP
 * (clamped) when net has neither node caps nor shared links. */
RW_API int32_t rw_a2a_cap(const rw_pnet *net, double bytes);

/* ---------------------------------------------------------------------
 * Open MPI's own algorithms, for its coll/tuned dynamic rules file
 * ------------------------------------------------------------------- */

#define RW_COLL_OMPI_MAX 8

typedef struct rw_coll_ompi_alg {
    char name[RW_COLL_NAME_MAX]; /* rw_coll_ompi_algorithm's name of it */
    int32_t id;                  /* Open MPI 4.1 coll/tuned number; 0: its fixed decision */
    int64_t segment;             /* bytes it runs in; 0 = whole message */
    double time;                 /* predicted, s */
} rw_coll_ompi_alg;

typedef struct rw_coll_ompi_choice {
    int32_t n;                              /* entries of alg */
    rw_coll_ompi_alg alg[RW_COLL_OMPI_MAX]; /* [0]: the fixed decision (id 0, named by
                                               the algorithm it runs) */
    int32_t chosen;                         /* index into alg: 0 keeps the fixed decision */
    double gain;                            /* 1 - chosen's time / fixed decision's time */
} rw_coll_ompi_choice;

/* Score Open MPI's fixed decision and each of its own algorithms that a
 * rules file can name safely for op at `bytes` (as rw_coll_decide counts
 * them; rooted operations from rank 0: its rules cannot depend on the
 * root), and choose the fastest when predicted at least opt->min_gain
 * faster than the fixed decision. */
RW_API rw_status rw_coll_ompi_choose(const rw_pnet *net, const char *op, double bytes,
                                     const rw_tune_options *opt, rw_coll_ompi_choice *out);

/* Open MPI's number of the collective op in its rules file; -1 if unknown. */
RW_API int32_t rw_coll_ompi_collective_id(const char *op);

/* 1 when a choice is faster than the MPI's own beyond the spread of their
 * trials: each of its n_choice times is below (1 - margin) times each of
 * the MPI's own n_own times; 0 when they overlap, differ by less than
 * margin, or a time is not a positive finite number (then the MPI's own
 * stays). The library's verdict in the job and `coll tune --verify` both
 * decide by it. */
RW_API int rw_verdict_keep(const double *choice, int n_choice, const double *own, int n_own, double margin);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_COLL_TUNE_H */
