/* rankwise — the predictor: what a communication will cost on a measured
 * network (plain C11, no MPI, part of librankwise).
 *
 * Three pieces:
 *   rw_pnet   the network the predictor reasons on: per ordered node pair a
 *             latency alpha (s) and an inverse bandwidth beta (s/byte), the
 *             intra-node figures on the diagonal; optionally per-node send
 *             and receive overheads, per-node injection and ejection bandwidth caps, and
 *             shared links (a capacity and the node pairs whose route crosses
 *             it, e.g. rack uplinks); and the placement rank -> node.
 *   rw_sched  a schedule: point-to-point transfers between ranks and the
 *             transfers each one waits for (a dependency DAG). Collective
 *             algorithms are expanded into one (rw_sched_collective), an
 *             application's traffic matrix too (rw_sched_traffic).
 *   rw_simulate  an event-driven simulation of a schedule on a network: a
 *             transfer starts once every transfer it depends on has ended
 *             (plus its own compute delay), waits the sender's overhead
 *             (eager messages) and alpha, then its bytes
 *             flow at the rate max-min fair sharing gives it among every flow
 *             alive (progressive filling over the pair's own bandwidth 1/beta,
 *             the sender's injection cap, the receiver's ejection cap and the
 *             shared links of the pair); rates are recomputed whenever a flow
 *             starts or ends. This is SimGrid's flow model (CM02, no cross
 *             traffic) restricted to the resources listed.
 * Closed-form formulas (Hockney, LogGP, Luo et al. 2018 eq. 1-4) sit beside
 * it for comparison. See docs/concepts/prediction.md.
 *
 * Contract: functions return an rw_status and leave a one-line message in
 * rw_last_error(); they never exit. Objects are opaque; every array an
 * argument points to is copied, so callers may free it on return.
 */
#ifndef RANKWISE_PREDICT_H
#define RANKWISE_PREDICT_H

#include "rankwise.h"
#include "rankwise_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * The network
 * ------------------------------------------------------------------- */

typedef struct rw_pnet rw_pnet;

/* A network of n_nodes nodes. alpha and beta are n_nodes x n_nodes, row =
 * sender: alpha[i * n + j] >= 0 seconds, beta[i * n + j] >= 0 seconds per
 * byte (0: that pair alone never limits a flow). The diagonal holds the
 * intra-node figures. Placement starts as one rank per node (rank i on node
 * i). RW_ERR_ARG on n_nodes < 1, a NaN, infinite or negative figure. */
RW_API rw_status rw_pnet_create(int32_t n_nodes, const double *alpha, const double *beta,
                                rw_pnet **out);
RW_API void rw_pnet_free(rw_pnet *net);

RW_API int32_t rw_pnet_n_nodes(const rw_pnet *net);
RW_API int32_t rw_pnet_n_ranks(const rw_pnet *net);

/* Per-node send overhead o (s, >= 0): the sender's CPU time for every eager
 * message (below the eager threshold: the sends SMPI detaches) before it
 * enters the network; a rank's overheads follow one another. SMPI charges
 * smpi/os (blocking sends) or smpi/ois (nonblocking) this way; rankwise
 * sets both to o for eager messages and 0 above (docs/concepts/prediction.md,
 * "Send and receive overheads"). NULL clears it. */
RW_API rw_status rw_pnet_set_overhead(rw_pnet *net, const double *o);
/* Per-node receive overhead (s, >= 0): the receiver's CPU time for every
 * eager message once it has arrived (SMPI's smpi/or, which SMPI charges to
 * detached messages only); the message counts as received after it.
 * NULL clears it. */
RW_API rw_status rw_pnet_set_recv_overhead(rw_pnet *net, const double *o);

/* How flows share a resource (a NIC cap, a link) they all cross: in inverse
 * proportion to their route's latency, as SimGrid's CM02 model weighs them
 * (its sharing penalty is the latency; the default, since rankwise checks
 * itself against SMPI), or equally, max-min fair, as a real fabric's
 * switches do for flows of one class. */
typedef enum rw_sharing_rule { RW_SHARE_LATENCY = 0, RW_SHARE_EQUAL = 1 } rw_sharing_rule;
RW_API rw_status rw_pnet_set_sharing(rw_pnet *net, rw_sharing_rule rule);

/* The MPI library's protocol knee (rw_model's knee, bytes; 0 = none): a
 * message of at least knee bytes costs the pair's alpha_large/beta_large
 * (n x n, the fit at and above the knee) instead of alpha/beta; a pair with
 * both NaN keeps alpha/beta. NULL arrays or knee 0 clear it. RW_ERR_ARG on a
 * negative knee or a pair with one NaN, an infinite or negative figure. */
RW_API rw_status rw_pnet_set_protocol(rw_pnet *net, int64_t knee, const double *alpha_large,
                                      const double *beta_large);

/* Per-node bandwidth caps in bytes/s shared by every inter-node flow the
 * node sends (inject) or receives (eject); 0 = no cap. Either may be NULL
 * (no caps on that side). Intra-node flows do not use them. */
RW_API rw_status rw_pnet_set_node_caps(rw_pnet *net, const double *inject, const double *eject);

/* Per-node duplex caps in bytes/s shared by every inter-node flow the node
 * sends or receives, both directions together (a NIC whose directions
 * share it: SimGrid's SHARED links, partly a TCP stack's); 0 = none, the
 * directions apart. NULL clears them. */
RW_API rw_status rw_pnet_set_node_duplex(rw_pnet *net, const double *duplex);

/* A shared resource of `capacity` bytes/s (> 0) crossed by every flow from
 * node src[k] to node dst[k], k < n_pairs (src != dst). A rack uplink is one
 * link per direction: pairs leaving the rack, pairs entering it. *id (may be
 * NULL) receives the link's index (0, 1, ... in order of addition). */
RW_API rw_status rw_pnet_add_link(rw_pnet *net, double capacity, int64_t n_pairs,
                                  const int32_t *src, const int32_t *dst, int32_t *id);
/* The same where only share[k] in (0, 1] of pair k's flow crosses the
 * link (NULL: all of it): a flow spread over several routes (a direct
 * network's shortest paths) loads each link with its part. */
RW_API rw_status rw_pnet_add_link_shares(rw_pnet *net, double capacity, int64_t n_pairs, const int32_t *src,
                                         const int32_t *dst, const double *share, int32_t *id);
RW_API int32_t rw_pnet_n_links(const rw_pnet *net);

/* Rank r runs on node node_of[r], r < n_ranks. */
RW_API rw_status rw_pnet_set_placement(rw_pnet *net, int32_t n_ranks, const int32_t *node_of);

/* The network of a measured model's nodes: one rule for every reader of a
 * model (the CLI's predictions, `coll tune`, the collectives library's
 * RANKWISE_MODEL decisions). Node k is model node model_index[k] with
 * slots[k] ranks (NULL: 1 each; it matters only for a node whose own pair
 * was not measured: free with one slot, missing with more). Pairs as the
 * mapper reads them (rw_network_from_model: a model whose latencies are
 * noise gives every measured pair their median; fill_missing costs a
 * missing pair as the slowest measured one, *n_filled counting them).
 * node_caps: each node's injection (ejection) cap is the model's stress-test
 * figure, else the best bandwidth it showed as a sender (receiver) to any
 * other node, large messages included; its duplex cap the model's where
 * it has one. The model's shared links over the
 * pairs that cross them, in the model's order, a link no pair crosses left
 * out, then the model's hops (a direct network's links) over the pairs
 * whose shortest routes cross them, each with its share (rw_model_hop_share;
 * models of up to 2048 nodes): model_link (may be NULL;
 * room for the model's n_links + n_hops) receives the model link of each
 * network link, n_links + h for hop h. The protocol knee with the
 * large-message fit (intra-node keeps its one fit). Sharing: SimGrid's for
 * a model measured under SMPI, equal otherwise. overheads: per-node send
 * and receive overheads, send_overhead / recv_overhead for every node when
 * not NaN, else the model's (the median of the others where a node has
 * none), taken out of alpha (alpha[i][j] - o[i] - o_recv[j], at least 0):
 * a ping-pong's alpha holds them and the predictor charges them apart.
 * Placement: one rank per node until rw_pnet_set_placement. */
typedef struct rw_pnet_model_options {
    int fill_missing;
    int node_caps;
    int overheads;
    double send_overhead; /* s, NaN: the model's */
    double recv_overhead;
} rw_pnet_model_options;
/* No filling, node caps, no overheads (NaN overrides). */
RW_API rw_pnet_model_options rw_pnet_model_options_default(void);
RW_API rw_status rw_pnet_from_model(const rw_model *m, int32_t n_nodes, const int32_t *model_index,
                                    const int32_t *slots, const rw_pnet_model_options *options,
                                    int64_t *n_filled, int32_t *model_link, rw_pnet **out);

/* Per-node send and receive overheads o and o_recv (s, finite, >= 0) a
 * probe's ping-pong alpha holds: set as the network's overheads and taken
 * out of alpha, alpha[i][j] - o[i] - o_recv[j] (at least 0), since the
 * predictor charges them apart. */
RW_API rw_status rw_pnet_take_overheads(rw_pnet *net, const double *o, const double *o_recv);

/* A network's figures as it holds them (valid until it changes or is
 * freed; NULL where a figure is not set). */
typedef struct rw_pnet_view {
    int32_t n_nodes;
    const double *alpha, *beta;         /* n x n */
    const double *overhead, *recv_overhead, *inject, *eject; /* n */
    int64_t knee;
    const double *alpha_large, *beta_large; /* n x n, when knee > 0 */
    rw_sharing_rule sharing;
    int32_t n_links;
    const double *duplex; /* n, or NULL */
} rw_pnet_view;
RW_API rw_status rw_pnet_view_of(const rw_pnet *net, rw_pnet_view *out);
/* Link `link`'s capacity and pairs; src and dst (may be NULL) need room for
 * *n_pairs, which a first call with NULL arrays gives. */
RW_API rw_status rw_pnet_link(const rw_pnet *net, int32_t link, double *capacity, int64_t *n_pairs,
                              int32_t *src, int32_t *dst);
/* Its pairs' shares (rw_pnet_add_link_shares; 1 where a link has none),
 * into share (room for n_pairs, in rw_pnet_link's order). */
RW_API rw_status rw_pnet_link_shares(const rw_pnet *net, int32_t link, double *share);
/* Whether link `link`'s capacity is confirmed, one to act on alone: 1 for
 * a link added by rw_pnet_add_link until set otherwise; rw_pnet_from_model
 * confirms the links a model states (no capacity spreads: a ground truth, a
 * user's file), not those a stress test measured. The tuner acts on a gain
 * only if it holds without the unconfirmed links. -1 for no such link. */
RW_API int rw_pnet_link_confirmed(const rw_pnet *net, int32_t link);
RW_API rw_status rw_pnet_set_link_confirmed(rw_pnet *net, int32_t link, int confirmed);

/* ---------------------------------------------------------------------
 * Schedules
 * ------------------------------------------------------------------- */

typedef struct rw_sched rw_sched;

/* An empty schedule over ranks 0..n_ranks-1 (1 <= n_ranks <= 2^24). */
RW_API rw_status rw_sched_create(int32_t n_ranks, rw_sched **out);
RW_API void rw_sched_free(rw_sched *s);

/* Append a transfer of `bytes` (>= 0) from rank src to rank dst (src == dst:
 * a local copy through the node's intra-node figures) that may start once
 * every transfer deps[0..n_deps) has ended, plus `delay` seconds (>= 0:
 * computation such as a reduction, done by the sender before it sends).
 * Dependencies must be earlier transfers (ids are 0, 1, ... in order), so a
 * schedule is acyclic by construction. *id (may be NULL) gets the new id.
 * A transfer between two ranks below 64 KiB (the default eager threshold)
 * is an eager message: it pays the send and receive overheads, and its
 * sender does not wait for it (rank_span). */
RW_API rw_status rw_sched_add(rw_sched *s, int32_t src, int32_t dst, double bytes, double delay,
                              int32_t n_deps, const int64_t *deps, int64_t *id);
RW_API int64_t rw_sched_n_transfers(const rw_sched *s);
RW_API int32_t rw_sched_n_ranks(const rw_sched *s);
/* Transfer k's endpoints and size (any output may be NULL). */
RW_API rw_status rw_sched_transfer(const rw_sched *s, int64_t k, int32_t *src, int32_t *dst,
                                   double *bytes);

/* Options of the collective algorithms. */
typedef struct rw_coll_options {
    int32_t root;            /* bcast, reduce, gather, scatter (default 0) */
    int64_t segment;         /* pipelined bcast (chain) segment, bytes (default 8192, SMPI's NTSL) */
    int32_t radix;           /* k-nomial bcast (default 4) */
    double gamma;            /* reduction cost, s per byte reduced (default 0) */
    int64_t eager_threshold; /* a blocking send of fewer bytes returns at once (SMPI's
                                smpi/send-is-detached-thresh, default 65536) */
} rw_coll_options;

RW_API rw_coll_options rw_coll_options_default(void);

/* The transfers of one call of collective `op` with algorithm `algorithm`
 * over n_ranks ranks, `bytes` as the benchmark programs count it:
 *   alltoall   pair, ring, bruck, linear        bytes per rank pair
 *   bcast      binomial, knomial, flat, chain, scatter_allgather (ring allgather),
 *              scatter_rdb_allgather            bytes from the root
 *   reduce     binomial                         bytes per rank
 *   allreduce  rdb, ring, rabenseifner          bytes per rank
 *   allgather  ring, rdb, bruck                 bytes per rank
 *   gather     binomial, linear                 bytes per rank
 *   scatter    binomial, linear                 bytes per rank
 * Each follows the message pattern of SimGrid 3.32 SMPI's implementation of
 * the same name (docs/concepts/prediction.md lists them). RW_ERR_ARG on an unknown
 * operation or algorithm (the message lists the known ones), a rank count an
 * algorithm cannot take (rdb: a power of two), bytes < 0 or non-finite. */
RW_API rw_status rw_sched_collective(const char *op, const char *algorithm, int32_t n_ranks,
                                     double bytes, const rw_coll_options *opt, rw_sched **out);

/* Comma-separated algorithm names of op ("" for an unknown op). */
RW_API const char *rw_collective_algorithms(const char *op);

/* An application's traffic as one concurrent phase (docs/concepts/prediction.md,
 * "Application traffic"): every entry (src, dst) of the matrix becomes one
 * transfer of bytes(src,dst) / iterations bytes, started at time 0, whose
 * latency is alpha (+ the overheads when its mean message is eager-sized)
 * times its messages per iteration (the messages of
 * one pair follow each other; different pairs overlap). The phase then
 * lasts as long as node and link loads under max-min sharing make it.
 * iterations >= 1 turns the run's totals into one iteration's. A rank's
 * traffic to itself is left out (it never leaves the rank's memory). */
RW_API rw_status rw_sched_traffic(const rw_matrix *m, double iterations, rw_sched **out);

/* ---------------------------------------------------------------------
 * Simulation
 * ------------------------------------------------------------------- */

typedef enum rw_sim_mode {
    RW_SIM_SHARED = 0,     /* max-min fair sharing of every resource */
    RW_SIM_CONTENTION_FREE = 1 /* each flow alone at 1/beta (Hockney per message, on
                                  the schedule's critical path); a rank's sends
                                  still go one after another */
} rw_sim_mode;

typedef struct rw_sim_result {
    double time;          /* seconds until the last transfer ends */
    int64_t transfers;
    int64_t events;       /* times the simulation advanced */
    int64_t rate_updates; /* max-min recomputations */
    double rank_span;     /* max over ranks of (its last transfer's end - its start):
                             what a benchmark timing each rank from its own start
                             reports; equals time when every rank starts at 0 */
} rw_sim_result;

/* Simulate s on net (net's placement must hold s's ranks). finish (may be
 * NULL) receives each transfer's end time, rw_sched_n_transfers(s) values.
 * The first simulation after rw_pnet_add_link indexes the links inside net:
 * do not simulate one network from two threads before that. */
RW_API rw_status rw_simulate(const rw_pnet *net, const rw_sched *s, rw_sim_mode mode,
                             rw_sim_result *out, double *finish);

/* rw_simulate where rank r starts at rank_start[r] (s >= 0; NULL: all at
 * 0): no transfer of r begins before it. A benchmark that starts each timed
 * call after a barrier sees such skews: ranks leave a barrier at different
 * times. */
RW_API rw_status rw_simulate_from(const rw_pnet *net, const rw_sched *s, rw_sim_mode mode,
                                  const double *rank_start, rw_sim_result *out, double *finish);

/* rw_sched_collective + rw_simulate on net's placement. */
RW_API rw_status rw_predict_collective(const rw_pnet *net, const char *op, const char *algorithm,
                                       double bytes, const rw_coll_options *opt, rw_sim_mode mode,
                                       rw_sim_result *out);

/* ---------------------------------------------------------------------
 * Any tree (rankwise_tree.h): the schedule a rooted collective follows on it
 * ------------------------------------------------------------------- */

/* The library's reduce posts every child's receive at once (Irecv, then
 * waits in its fold order) when the children's messages hold at most this
 * many bytes in all; above, one receive after the other (memory). */
#define RW_REDUCE_POSTED_MAX (1 << 20)

/* The transfers of one call of op (bcast, reduce, gather, scatter) along
 * tree t (its ranks are the schedule's; opt->root is ignored: t's root is
 * the root). bytes as rw_sched_collective counts them (bcast: from the
 * root; the others: per rank, a child's message holds its subtree's blocks).
 * A rank sends to its children in t's child order and receives from them in
 * the reverse order (reduce, gather; the reduce's receives all posted at
 * once up to RW_REDUCE_POSTED_MAX bytes); reduce charges opt->gamma per byte
 * reduced. segment > 0 pipelines a bcast or a reduce_ompi in segments of
 * that many bytes (the last one shorter); 0 sends it whole (the other
 * operations ignore it). On the binomial tree (parent of relative rank v: v - lowbit(v),
 * children by decreasing relative rank) this is rw_sched_collective's
 * binomial schedule. op "reduce_ompi" is Open MPI's generic reduce (SMPI's
 * ompi_binary, ompi_binomial): the receive from the next child is posted
 * before the wait for the current one. op "gather" posts a parent's
 * receives at once (the library's gather); "gather_ompi" is Open MPI's
 * (SMPI's ompi_binomial, basic_linear): one blocking receive after the
 * other, each transfer starting at its receive. RW_ERR_ARG on an unknown op, a tree
 * rw_tree_check rejects, bytes or segment out of range. */
RW_API rw_status rw_sched_tree(const char *op, const rw_tree *t, double bytes, int64_t segment,
                               const rw_coll_options *opt, rw_sched **out);

/* rw_sched_tree + rw_simulate on net's placement (t's ranks must be placed). */
RW_API rw_status rw_predict_tree(const rw_pnet *net, const char *op, const rw_tree *t, double bytes,
                                 int64_t segment, const rw_coll_options *opt, rw_sim_mode mode, rw_sim_result *out);

/* ---------------------------------------------------------------------
 * Closed-form formulas (scalar figures; all times in seconds)
 * ------------------------------------------------------------------- */

/* Hockney: one message of n bytes, alpha + n beta. */
RW_API double rw_hockney(double alpha, double beta, double n);
/* LogGP (Alexandrov et al. 1995): one message of n bytes, o + (n - 1) G + L + o. */
RW_API double rw_loggp(double L, double o, double G, double n);
/* Luo et al. 2018 eq. 1, Bruck all-to-all of k bytes per pair over p ranks:
 * lg(p) alpha + 1/2 lg(p) (p - 1) k beta. */
RW_API double rw_luo_bruck(int64_t p, double alpha, double beta, double k);
/* Luo et al. 2018 eq. 2, the long-message (pairwise) all-to-all:
 * (p - 1)(alpha + k beta). */
RW_API double rw_luo_pairwise(int64_t p, double alpha, double beta, double k);
/* Luo et al. 2018 eq. 3: mean wait, in switch cycles, of a packet at a
 * radix x radix switch output whose inputs each receive a packet per cycle
 * with probability rho (M/G/1): (1 - 1/radix) rho / (2 (1 - rho)).
 * NaN unless 0 <= rho < 1 and radix >= 1. */
RW_API double rw_luo_wait(int32_t radix, double rho);
/* Luo et al. 2018 eq. 4: (p - 1)(alpha + k beta + k / packet x hops x wait x
 * cycle), wait from eq. 3, packet in bytes, cycle in seconds. */
RW_API double rw_luo_contention(int64_t p, double alpha, double beta, double k, double packet,
                                int32_t hops, int32_t radix, double rho, double cycle);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_PREDICT_H */
