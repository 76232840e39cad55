/* Predictor internals shared by the files of engine/src/predict (not installed). */
#ifndef RW_PREDICT_INTERNAL_H
#define RW_PREDICT_INTERNAL_H

#include "../internal.h"
#include "rankwise_predict.h"
#include "rankwise_tree.h"

struct rw_pnet {
    int32_t n;        /* nodes */
    double *alpha;    /* n x n */
    double *beta;     /* n x n */
    double *o;        /* n send overheads (eager messages), or NULL */
    double *o_recv;   /* n receive overheads (eager messages), or NULL */
    double *inject;   /* n bytes/s (0 = none), or NULL */
    double *eject;    /* n, or NULL */
    double *duplex;   /* n bytes/s for both directions together (0 = none), or NULL */
    int32_t n_links;
    double *link_cap; /* n_links */
    uint8_t *link_unsure; /* n_links: 1 = a capacity the model does not confirm; NULL: all confirmed */
    /* The pairs of every link as added: pairs k < n_pend cross link pend_link[k]. */
    int64_t n_pend, pend_cap;
    int32_t *pend_src, *pend_dst, *pend_link;
    double *pend_share; /* the part of pair k's flow on its link, (0, 1]; NULL: all of every flow */
    /* Index built from them on first use (rw_pnet_index_links): links crossed
     * by node pair p = i * n + j are link_of[pair_start[p] .. pair_start[p + 1]);
     * NULL while there is no link or the index is stale. */
    int64_t *pair_start;
    int32_t *link_of;
    double *share_of; /* beside link_of, or NULL: all of the flow */
    int32_t n_ranks;
    int32_t *node_of; /* n_ranks */
    int equal_sharing; /* RW_SHARE_EQUAL: flows share resources equally, not by 1 / latency */
    /* Protocol knee (protocol.c): messages of >= knee bytes (0 = none) cost
     * alpha_large/beta_large (n x n; NaN = the pair's alpha/beta). */
    int64_t knee;
    double *alpha_large, *beta_large;
};

/* alpha and beta of one message of message_bytes from node a to node b:
 * the large-message figures at and above the knee (protocol.c). */
void rw_pnet_message_cost(const rw_pnet *net, int32_t a, int32_t b, double message_bytes,
                          double *alpha, double *beta);

/* 1 when some link of net is not confirmed (rw_pnet_link_confirmed). */
int rw_pnet_has_unsure(const rw_pnet *net);

/* *view: net without its unsure links (their pairs cross the confirmed links
 * only); it shares net's other arrays. Free with rw_pnet_view_release. */
rw_status rw_pnet_confirmed_view(const rw_pnet *net, rw_pnet *view);
void rw_pnet_view_release(rw_pnet *view);

/* Build the pair -> links index if links were added since the last one. */
rw_status rw_pnet_index_links(rw_pnet *net);

struct rw_sched {
    int32_t n_ranks;
    int64_t n, cap;      /* transfers */
    int32_t *src, *dst;
    double *bytes;
    double *delay;
    int32_t *n_lat;      /* latencies charged (messages), >= 1 */
    uint8_t *detached;   /* 1: the sender does not wait for the end (SMPI's
                            detached sends below the eager threshold) */
    uint8_t *preposted;  /* 1: the receiver posted this receive in advance (before
                            overheads it pays meanwhile), as linear all-to-all
                            and the chain bcast do */
    int64_t *wait_after; /* -1, or a transfer of the same receiver whose receive its
                            receiver waits for first: this one's receive overhead
                            starts once that one is complete (MPI_Wait in program
                            order, whatever order the messages arrive in) */
    int32_t *n_sdeps;    /* how many of a transfer's first dependencies are its
                            sender's (the rest: its receiver's); the sender's
                            overhead waits for those only */
    int64_t *dep_start;  /* n + 1 offsets into deps */
    int64_t *deps;
    int64_t n_deps, deps_cap;
};

/* rw_sched_add with a latency count (messages the transfer stands for). */
rw_status rw_sched_add_msgs(rw_sched *s, int32_t src, int32_t dst, double bytes, double delay,
                            int32_t n_lat, int32_t n_deps, const int64_t *deps, int64_t *id);

/* ---- building collective schedules rank by rank ----
 * front[r]: the transfers rank r waits for before its next operation
 * (what it has just received, and its last blocking send). A transfer
 * src -> dst depends on front[src] (the sender reached its send) and
 * front[dst] (the receiver posted its receive: SimGrid starts a transfer
 * once both sides are matched). */
typedef struct rw_idlist {
    int64_t *v;
    int32_t n, cap;
} rw_idlist;

typedef struct rw_builder {
    rw_sched *s;
    int32_t p;
    rw_idlist *front; /* p */
    rw_idlist *next;  /* p: the front each rank gets at the end of a step */
    rw_coll_options opt;
    rw_status err;    /* first failure; later calls do nothing */
} rw_builder;

rw_status rw_builder_init(rw_builder *b, int32_t p, const rw_coll_options *opt);
/* Frees the builder; hands the schedule to *out when no error occurred. */
rw_status rw_builder_finish(rw_builder *b, rw_sched **out);

/* A transfer depending on the current fronts of src and dst; returns its id
 * (-1 after an error). delay: computation before sending. */
int64_t rw_b_xfer(rw_builder *b, int32_t src, int32_t dst, double bytes, double delay);
/* Add id to rank r's front at the end of the step. */
void rw_b_next(rw_builder *b, int32_t r, int64_t id);
/* A blocking send of `bytes`: it holds the sender only at or above the eager
 * threshold (below, SMPI detaches it). */
void rw_b_send_done(rw_builder *b, int32_t r, int64_t id, double bytes);
/* A blocking send and its receive: the receiver's front becomes the
 * transfer, the sender's too at or above the eager threshold. */
int64_t rw_b_send(rw_builder *b, int32_t src, int32_t dst, double bytes);
/* End of a step: every rank with a pending next front takes it. */
void rw_b_commit(rw_builder *b);
/* Immediate: rank r's front becomes {id} (a blocking receive or send inside
 * a rank's sequential program). */
void rw_b_set(rw_builder *b, int32_t r, int64_t id);
/* Add id to rank r's front now (r also waits for it). */
void rw_b_front_add(rw_builder *b, int32_t r, int64_t id);

/* One sendrecv step of every rank: rank r sends `bytes` to its peer, r XOR
 * offset or (r + offset) mod P, after `delay` (computation), and receives
 * from the rank whose peer it is; a rank that is its own peer copies
 * locally (free). Each rank's step ends with its receive and, unless
 * detached, its send (MPI_Sendrecv waits for both). */
typedef enum rw_peer { RW_PEER_XOR, RW_PEER_SHIFT } rw_peer;
void rw_b_peer_step(rw_builder *b, rw_peer peer, int32_t offset, double bytes, double delay);

/* Rooted collectives of opt.root, one block of `bytes` per rank, toward the
 * root (gather) or away from it (scatter): Open MPI's in-order binomial
 * tree, whose messages carry a subtree's blocks, and the linear one (the
 * root receives from, or sends to, ranks 0, 1, ... in turn, blocking). */
void rw_b_binomial_blocks(rw_builder *b, double bytes, int toward_root);
void rw_b_linear_rooted(rw_builder *b, double bytes, int toward_root);

/* Collective algorithms, one file per operation. rwp_sched_: the predictor's
 * own names (rw_coll_<op> is the collectives library's C API). */
rw_status rwp_sched_alltoall(rw_builder *b, const char *alg, double bytes);
rw_status rwp_sched_bcast(rw_builder *b, const char *alg, double bytes);
rw_status rwp_sched_reduce(rw_builder *b, const char *alg, double bytes);
rw_status rwp_sched_allreduce(rw_builder *b, const char *alg, double bytes);
rw_status rwp_sched_allgather(rw_builder *b, const char *alg, double bytes);
rw_status rwp_sched_gather(rw_builder *b, const char *alg, double bytes);
rw_status rwp_sched_scatter(rw_builder *b, const char *alg, double bytes);

/* Pieces shared between operations. */
void rw_b_binomial_bcast(rw_builder *b, int32_t root, double bytes);
void rw_b_binomial_scatter_blocks(rw_builder *b, int32_t root, double total, double *have);
void rw_b_ring_allgather(rw_builder *b, const double *block);
/* Phases along a tree (tree_sched.c), tree position i being builder rank
 * map[i] (map NULL: i): bcast from the root, reduce and gather toward it
 * (gather: size[i] blocks under i). bfs: rw_tree_bfs(t). */

int32_t *rw_tree_bfs(const rw_tree *t); /* malloc'd, NULL when out of memory */
void rw_tree_sizes(const rw_tree *t, const int32_t *bfs, int32_t *size);
void rw_b_tree_bcast(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes);
void rw_b_tree_reduce(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes);
/* As rw_b_tree_reduce, the receive from the next child posted before the
 * wait for the current one (Open MPI's generic reduce). */
void rw_b_tree_reduce_ompi(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *map, double bytes);
void rw_b_tree_gather(rw_builder *b, const rw_tree *t, const int32_t *bfs, const int32_t *size, const int32_t *map,
                      double bytes);
/* Recursive doubling allreduce (SMPI's rdb and the collectives library's)
 * among the m ranks ranks[0..m) (NULL: all), in that order. */
rw_status rw_b_allreduce_rdb(rw_builder *b, const int32_t *ranks, int32_t m, double bytes);

/* A rank copying its own data (a sendrecv to itself) is left out of every
 * schedule: SMPI does it with memcpy, which costs no simulated time. */

static inline int rw_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

#endif
