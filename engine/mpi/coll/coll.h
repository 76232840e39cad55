/* librankwise_coll internals every layer shares: the per-communicator
 * cache (comm/), the byte views of typed buffers, the MPI beneath, the
 * environment's rules and the trace (docs/concepts/collectives.md). The layers'
 * own: base/base.h (algorithms), decision/decision.h (which algorithm and
 * its parameters), entry/entry.h (a decided call); entries call the
 * decision, the decision calls the algorithms, never back
 * (tests/python/test_coll_layering.py). */
#ifndef RW_COLL_INTERNAL_H
#define RW_COLL_INTERNAL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rankwise_coll.h"
#include "rankwise_coll_rules.h"

/* The MPI functions the library interposes, exported under its hidden
 * preset whatever mpi.h says: Open MPI marks its prototypes default,
 * MPICH's carry no visibility (an MPICH build exported none of them). */
#define RWC_INTERPOSED __attribute__((visibility("default")))
#include "rankwise_predict.h"
#include "coll/registry.h"
#include "coll/size_class.h"

/* Tags on the private duplicate: one per collective, so two collectives
 * never match each other's messages; within one, MPI's non-overtaking
 * order between a pair of ranks keeps segments and calls apart. */
enum { RWC_TAG_BCAST = 1, RWC_TAG_REDUCE, RWC_TAG_GATHER, RWC_TAG_SCATTER, RWC_TAG_ALLREDUCE,
       RWC_TAG_ALLGATHER, RWC_TAG_COPY, RWC_TAG_FORWARD, RWC_TAG_ALLTOALL };

/* Cached on a user communicator (attribute), freed with it. */
typedef struct rwc_tree_entry {
    rw_coll_alg alg;
    int root, protocol_class; /* rw_size_class_protocol */
    rw_tree *tree;
    struct rwc_tree_entry *next;
} rwc_tree_entry;

/* A decision made from the network (model or in-job probe) for one
 * (collective, root, power-of-two size class); the same on every rank. */
typedef struct rwc_decision_entry {
    int op, root, size_class;
    rw_coll_alg alg;  /* RW_COLL_PASSTHROUGH, an algorithm, or RW_COLL_AUTO with tree */
    int64_t segment;  /* bcast pipeline segment, bytes; 0 = whole */
    rw_tree *tree;    /* the chosen tree over the communicator's ranks, or NULL */
    double seconds;   /* wall time the decision took on rank 0 */
    struct rwc_decision_entry *next;
} rwc_decision_entry;

/* What runs one call: the MPI's own (alg RW_COLL_PASSTHROUGH), an
 * algorithm of the library (alg; segment > 0 pipelines a broadcast), or a
 * tree (tree != NULL, owned by the rules or the communicator's cache). */
typedef struct rwc_choice {
    rw_coll_alg alg;
    const rw_tree *tree;
    size_t segment;
    const char *source; /* "env", "rules", "model", "probe" or NULL (passthrough) */
} rwc_choice;

/* What a call's kept outcome is looked up by before any MPI call: the
 * counts and types of its arguments, the root's ([0]) and the other
 * ranks' ([1]: gather's and scatter's differ; the same pair otherwise),
 * and the reductions' type and operation (MPI_DATATYPE_NULL, MPI_OP_NULL
 * for the others). */
typedef struct rwc_key {
    int count[2];
    MPI_Datatype dtype[2];
    MPI_Datatype type;
    MPI_Op mop;
} rwc_key;

/* The outcome of the last call of one collective on a communicator, kept
 * once it is final (a decision's verdict, or a decision that is not
 * verified), with what it depends on: a later call with the same key runs
 * it after a few compares (decide.c, rwc_decide_cached). count and dtype
 * are this rank's pair of the key; a predefined dtype (named) fixes the
 * bytes, a derived one's handle may be freed and reused for another type,
 * so its bytes are compared too (one MPI_Type_size). type and mop key
 * reduce and allreduce only (whether a decision is verified depends on
 * them); bytes are exact, as rules' ranges are. */
typedef struct rwc_outcome {
    int set, pass, root; /* pass: the MPI's own runs */
    int count, named;
    MPI_Datatype dtype;
    size_t bytes;
    uint64_t generation; /* rwc_model_generation() when it was kept */
    MPI_Datatype type;
    MPI_Op mop;
    rwc_choice ch;
} rwc_outcome;

typedef struct rwc_comm {
    MPI_Comm dup;     /* private duplicate: our messages never meet the application's */
    int size, rank;
    int world_order;  /* -1 not known yet; 1: the group of MPI_COMM_WORLD in its order
                         (MPI_Comm_compare IDENT or CONGRUENT), where rules files apply; 0 not */
    int net_state;    /* 0 not tried; 1 net ready (on rank 0); -1 no network: pass through */
    rw_pnet *net;     /* the predictor's network for this communicator's placement (rank 0) */
    const char *net_source; /* "model" or "probe" */
    rwc_decision_entry *decisions;
    int32_t *trinary_order; /* the trinary trees' order of the ranks over net (every rank), or NULL */
    int32_t *node_of; /* node of each rank (its lowest rank), found on first hierarchical use */
    MPI_Comm node;    /* the ranks of my node, in rank order (from dup) */
    MPI_Comm leaders; /* the lowest rank of each node (from dup); MPI_COMM_NULL elsewhere */
    rw_tree *node_tree; /* binomial over node, rooted at its lowest rank */
    rwc_tree_entry *trees;
    uint64_t generation; /* rwc_model_generation() the network and decisions were made under */
    int32_t *ring_order; /* multiring allgather: the ranks in ring order (decision/params.c), NULL until used */
    struct rwc_verdict *verdicts; /* decisions verified in the job (verify.c) */
    int a2a_cap[64];  /* all-to-all cap from the network per size class (decision/), 0 = not made */
    rwc_outcome last[RW_N_OPS]; /* per collective; cleared with the network */
} rwc_comm;

/* The cache of comm, made on first use (collective: every rank calls it in
 * the same collective). RW_ERR_STATE for an intercommunicator. */
rw_status rwc_comm_get(MPI_Comm comm, rwc_comm **out);
/* The cache of comm when it is made already, else NULL: one attribute
 * lookup, for the calls after the first (local). */
rwc_comm *rwc_comm_cached(MPI_Comm comm);
/* The same, remembering the last communicator asked for (forgotten when
 * its cache is freed), so that repeated calls on one communicator skip
 * the attribute lookup. One thread at a time (not MPI_THREAD_MULTIPLE). */
rwc_comm *rwc_comm_fast(MPI_Comm comm);
/* Drop c's network and decisions (made under an older model); the next
 * decision sets them up again. */
void rwc_comm_forget_network(rwc_comm *c);
/* Find the nodes, their communicators and tree (once per communicator). */
rw_status rwc_nodes(rwc_comm *c);
/* The tree of a shape algorithm (binomial ... hier) rooted at root, cached;
 * radix: k of k-nomial trees. */
rw_status rwc_tree_get(rwc_comm *c, rw_coll_alg alg, int root, size_t bytes, int radix, const rw_tree **out);

/* The real collectives beneath this library (PMPI_ of the MPI; under a
 * shared build the next definition after ours, since we also define PMPI_). */
int rwc_real_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int rwc_real_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int rwc_real_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                    MPI_Comm comm);
int rwc_real_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                     MPI_Comm comm);
int rwc_real_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int rwc_real_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm);
int rwc_real_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm);
int rwc_real_cart_create(MPI_Comm comm, int ndims, const int *dims, const int *periods, int reorder, MPI_Comm *out);
int rwc_real_graph_create(MPI_Comm comm, int nnodes, const int *index, const int *edges, int reorder, MPI_Comm *out);
int rwc_real_dist_graph_create(MPI_Comm comm, int n, const int *sources, const int *degrees, const int *dest,
                               const int *weights, MPI_Info info, int reorder, MPI_Comm *out);
int rwc_real_dist_graph_create_adjacent(MPI_Comm comm, int indeg, const int *src, const int *srcw, int outdeg,
                                        const int *dst, const int *dstw, MPI_Info info, int reorder, MPI_Comm *out);

/* A typed buffer seen as its bytes in MPI_Pack order: the buffer itself
 * for a dense predefined type, else a packed copy. */
typedef struct rwc_bytes {
    char *data;
    size_t len;
    int packed; /* data is a temporary copy */
} rwc_bytes;
/* pack: copy the data in (for sending); otherwise only make room. */
rw_status rwc_bytes_open(rwc_bytes *b, const void *buf, int count, MPI_Datatype type, MPI_Comm comm, int pack);
/* unpack: copy the bytes back to buf (after receiving); frees the copy. */
rw_status rwc_bytes_close(rwc_bytes *b, void *buf, int count, MPI_Datatype type, MPI_Comm comm, int unpack);
rw_status rwc_type_bytes(int count, MPI_Datatype type, size_t *out);

/* A temporary buffer for count elements of type (as the MPI lays them
 * out); the pointer to pass to MPI is *base, free *mem. */
rw_status rwc_typed_alloc(int count, MPI_Datatype type, void **mem, char **base);
/* Typed copy src (sc x st) -> dst (rc x rt) through the MPI. */
rw_status rwc_copy(const void *src, int sc, MPI_Datatype st, void *dst, int rc, MPI_Datatype rt, MPI_Comm comm);
/* RW_OK, or RW_ERR_MPI saying which call failed and why; rwc_mpi_code()
 * then gives that call's error code (the thread's last one). */
rw_status rwc_mpi(int rc, const char *what);
int rwc_mpi_code(void);

/* RW_ERR_ARG unless op is user-defined or a predefined operation the MPI
 * standard defines on the predefined type (op_types.c): anything else
 * passes through to the MPI, which reports its own error on every rank. */
rw_status rwc_op_fits(MPI_Op op, MPI_Datatype type);

/* count x size of type (0 for a bad type); whether this rank is root. */
size_t rwc_bytes_of(int count, MPI_Datatype type);
int rwc_is_root(MPI_Comm comm, int root);

/* The live model (model_generation.c; engine/mpi/live/): its generation,
 * raised on every rank of a live context whenever it publishes new
 * figures (a model with every pair) or withdraws them, and the model
 * itself (NULL without one). Decisions made under an older generation are
 * dropped. */
uint64_t rwc_model_generation(void);
const rw_model *rwc_live_model(void);
void rwc_model_publish(const rw_model *m, const void *owner);
void rwc_model_withdraw(const void *owner);
/* Room for one rank's processor name as gathered by rank 0. */
#define RWC_NAME_LEN (MPI_MAX_PROCESSOR_NAME + 16)
/* The environment (env.c): one rule of each kind for every variable.
 * Problems are the job's: rank 0 of MPI_COMM_WORLD prints them, one line
 * "rankwise-coll: <kind>: <message>" each (rwc_say). */
int rwc_world_rank0(void);
void rwc_say(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A value as a message echoes it: its first max characters and "..."
 * when longer; max is RWC_SHOWN_VALUE for a variable's value,
 * RWC_SHOWN_PATH for a file's path (buf: RWC_SHOWN_BUF bytes). */
#define RWC_SHOWN_VALUE 64
#define RWC_SHOWN_PATH 256
#define RWC_SHOWN_BUF (RWC_SHOWN_PATH + 4)
const char *rwc_shown(const char *value, size_t max, char *buf);
/* A boolean variable: 1, true, yes, on / 0, false, no, off (any case);
 * unset or empty: 0; anything else: one warning, 0. Read it once. */
int rwc_env_bool(const char *name);
/* The caps on the files variables name (docs/concepts/collectives.md): a model of
 * the default probe's 11 sizes takes about 0.93 KB per directed node pair,
 * so 256 MiB hold about 530 nodes; a rules file about 2 x 7 bytes per rank
 * per tree rule, so 64 MiB hold a hundred tree rules over 40,000 ranks. */
#define RWC_MODEL_MAX_BYTES ((size_t)256 << 20)
#define RWC_RULES_MAX_BYTES ((size_t)64 << 20)
/* path (named by a variable or rw_live_init) as a stream over its bytes
 * in memory, or NULL with *st and rw_last_error set: it must be a regular
 * file of at most cap bytes (never blocks on a FIFO, never reads a
 * device); what names it in messages ("a model"). fclose the stream, then
 * free *mem. */
FILE *rwc_input_file(const char *path, const char *what, size_t cap, char **mem, rw_status *st);
/* The model at path through rwc_input_file (RWC_MODEL_MAX_BYTES). */
rw_status rwc_model_read(const char *path, rw_model **out);
/* RANKWISE_MODEL (NULL when unset) and the model it names, read once per
 * process at the first call; NULL when it cannot be read (then rank 0 of
 * MPI_COMM_WORLD has said why in one line). */
const char *rwc_model_path(void);
const rw_model *rwc_env_model(void);
/* Whether the MPI runs at MPI_THREAD_MULTIPLE (init.c): then the library
 * runs nothing of its own (rwc_comm_get refuses with RW_ERR_STATE, the
 * decision passes through) and has said so once. */
int rwc_thread_multiple(void);

/* Whether RANKWISE_COLL_TRACE asks for trace lines (trace.c, read once). */
int rwc_tracing(void);
/* RANKWISE_COLL_TRACE=1: one line per handled call on stderr. */
void rwc_trace(rw_coll_op op, rw_coll_alg alg, MPI_Comm comm, size_t bytes);
/* The same for a call the rules or the network decided: "tree" for a tree,
 * and " (rules)", " (model)" or " (probe)" after the bytes. */
void rwc_trace_choice(rw_coll_op op, const rwc_choice *ch, MPI_Comm comm, size_t bytes);
/* While set (entry.c, around a decided call), rwc_trace adds the source. */
void rwc_trace_source(const char *source);

/* What an algorithm takes besides the call's arguments (the registry's
 * parameters, src/coll/registry.h), given by the layer above: base/ never
 * decides. The order of the ranks along the network and the all-to-all
 * cap are collective to make, so an algorithm asks for them only once the
 * call is sure to run (after its checks, on every rank alike). */
typedef struct rwc_params {
    size_t segment; /* pipeline segment, bytes (0: none; trinary: its own) */
    int radix;      /* k of k-nomial trees */
    rw_status (*order)(rwc_comm *c, rw_coll_alg alg, const int32_t **out); /* NULL *out: rank order */
    int (*cap)(rwc_comm *c, size_t bytes); /* concurrent sends of the symmetric all-to-all */
} rwc_params;

#endif
