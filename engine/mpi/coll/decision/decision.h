/* The decision (decision/): which algorithm runs a call and with which
 * parameters. Precedence: environment > rules > network > passthrough,
 * the all-to-all cap included. Calls base/ (never the entries). */
#ifndef RW_COLL_DECISION_H
#define RW_COLL_DECISION_H

#include "coll.h"

/* The decision (decide.c): which algorithm runs this call. Precedence:
 * RANKWISE_COLL_<OP> > rules file (communicators with MPI_COMM_WORLD's group
 * in its order) > model > in-job probe > the MPI's own. bytes is the call's
 * data per rank, the same on every rank; the answer is the same on every
 * rank. Collective when rules or a model are in use (the communicator's
 * cache, a decision made on rank 0 and broadcast). */
rwc_choice rwc_decide_call(rw_coll_op op, MPI_Comm comm, int root, size_t bytes);
/* The outcome kept for this call's key on comm (rwc_outcome), before any
 * MPI call: 1 the MPI's own (also for every call when neither rules nor a
 * network are configured and nothing is forced), 0 run *ch, -1 none
 * (decide as usual). Local. A rank may find none where another finds one
 * (their keys differ: gather's root counts what it receives); its decision
 * then finds the same final outcome locally, since every rank decided the
 * same bytes at the same calls. */
int rwc_decide_cached(rw_coll_op op, MPI_Comm comm, int root, const rwc_key *key, rwc_choice *ch);
/* Keep a final outcome (ch decided from rules or a network, settled by
 * its verification or not verified) for later calls with the same key. */
void rwc_decide_remember(rw_coll_op op, MPI_Comm comm, int root, size_t bytes, const rwc_key *key,
                         const rwc_choice *ch, int pass);

/* The rules file (rules_load.c): RANKWISE_COLL_RULES read once, at MPI_Init
 * (or at the first decision when MPI_Init was not seen). NULL when unset;
 * *broken = 1 when it was set but could not be read (then rank 0 of
 * MPI_COMM_WORLD has printed one line and everything passes through). */
void rwc_rules_load(void);
const rw_coll_rules *rwc_rules(int *broken);
/* The rules' choice for this call on c (rooted collectives, c with the
 * world's group in order); 0 when the rules do not apply to c or op. */
int rwc_rules_choice(rwc_comm *c, rw_coll_op op, int root, size_t bytes, rwc_choice *out);
/* The rules' trinary-order when the rules apply to c (its size, the world's
 * group in order), else NULL. Local. */
const int32_t *rwc_rules_trinary_order(rwc_comm *c);
/* The rules file's ring-order when its rules apply to c (as above), else NULL. */
const int32_t *rwc_rules_ring_order(rwc_comm *c);

/* The network path (net_decide.c): RANKWISE_MODEL, else with
 * RANKWISE_COLL_PROBE=1 the in-job measurement; a decision per (op, root,
 * size class) made lazily on rank 0 with rw_coll_decide and broadcast,
 * cached on c. 0 when no network is configured or available for c. */
int rwc_net_choice(rwc_comm *c, rw_coll_op op, int root, size_t bytes, rwc_choice *out);
/* Collective on c: set up c's network (RANKWISE_MODEL, in-job probe) if
 * one is configured and not set up yet; whether it is ready (then rank 0
 * holds c->net). For algorithms that lay themselves on the network. */
int rwc_net_ready(rwc_comm *c);
/* Whether RANKWISE_MODEL or RANKWISE_COLL_PROBE=1 is set. */
int rwc_net_configured(void);
/* The pnet of an in-job measurement over c's ranks (probe.c; collective). */
rw_status rwc_probe_pnet(rwc_comm *c, rw_pnet **out);
/* Rank 0: the node of m of each of n ranks, from their processor names
 * (RWC_NAME_LEN apart) as "name" or, as `rankwise probe --group-by rank`
 * names ranks, "name:world rank"; RW_ERR_STATE naming the rank and path
 * for one that is not in m. */
rw_status rwc_model_nodes(const rw_model *m, const char *path, const char *names, const int *world, int n,
                          int32_t *node_of);
/* The predictor's network for ranks on model nodes model_node_of[r]
 * (model_net.c, MPI-free): the model's figures as `rankwise coll tune
 * --model` uses them. */
rw_status rwc_pnet_from_model(const rw_model *m, int32_t n_ranks, const int32_t *model_node_of,
                              rw_pnet **out);
/* Pipelining segment for broadcasts (RANKWISE_COLL_SEGMENT, bytes; 0 = none). */
size_t rwc_segment_bytes(void);
/* k of k-nomial trees (RANKWISE_COLL_KNOMIAL_K, default 4). */
int rwc_knomial_k(void);
/* Whether a variable asks the library for anything (an algorithm, rules,
 * a model, the in-job measurement, tracing); getenv only, any thread. */
int rwc_env_asks(void);
/* RANKWISE_COLL_MAX_EVALS (decide.c, with the other variables). */
int32_t rwc_max_evals(void);

/* The parameters of the algorithms (params.c): the segment and radix of
 * the environment, the order of the ranks along the network and the
 * all-to-all cap (made when an algorithm asks for them). */
rwc_params rwc_decision_params(void);
/* The order the trinary trees of c lay its ranks in (rw_tree_trinary_ordered):
 * the rules' trinary-order where they apply, else with a network
 * (RANKWISE_MODEL, or RANKWISE_COLL_PROBE=1; net_decide.c)
 * rw_trinary_best_order of it, made on rank 0 once per network and
 * broadcast on c's duplicate; *order = NULL (rank order) without one, or
 * when rank 0 could not make it. Collective on c (trinary_order.c). */
rw_status rwc_trinary_order(rwc_comm *c, const int32_t **order);

#endif
