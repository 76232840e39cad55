/* The collectives and the library's algorithms, one table each
 * (registry.c), as Open MPI's coll/tuned keeps one table of algorithms per
 * operation. Everything that names an operation or an algorithm, or says
 * which operation may run which algorithm, derives from here: the C API's
 * names (rw_coll_alg_name, rw_coll_alg_parse), the environment and the
 * decision (engine/mpi/coll/decision), the rules reader (rules.c), the
 * tuner's candidates (select.c), the predictor's dispatch (predict/
 * collective.c, tree_sched.c, library.c), the matrix files' calls and the
 * benchmark programs' tables. The MPI side runs each algorithm from a parallel
 * table keyed by the same id (engine/mpi/coll/base/run.c). MPI-free; not
 * installed. */
#ifndef RW_COLL_REGISTRY_H
#define RW_COLL_REGISTRY_H

#include <stddef.h>

#include "rankwise.h"

/* The seven collectives are the public rw_coll_op (rankwise.h), whose
 * values are the API's (a matrix file's calls): the one enumeration of
 * the engine, the library and the predictor. */
#define RW_N_OPS (RW_COLL_ALLTOALL + 1)

#define RW_OP_BIT(op) (1u << (op))
/* The operations with a root: bcast, reduce, gather, scatter. */
#define RW_OPS_ROOTED \
    (RW_OP_BIT(RW_COLL_BCAST) | RW_OP_BIT(RW_COLL_REDUCE) | RW_OP_BIT(RW_COLL_GATHER) | RW_OP_BIT(RW_COLL_SCATTER))
#define RW_OPS_ALL ((1u << RW_N_OPS) - 1u)

/* The operation's name (rw_coll_op_name); NULL out of range. */
const char *rw_op_name(int op);
/* The operation of a name, or -1. */
int rw_op_parse(const char *name);
int rw_op_rooted(int op);
/* The predictor's tree schedules (rw_sched_tree) also take Open MPI's own
 * reduce and gather, named "<op>_ompi": that name for op, NULL for an
 * operation without one. */
const char *rw_op_ompi_name(int op);
/* The operation of a name or of its Open MPI variant's (*ompi 1), or -1. */
int rw_op_parse_variant(const char *name, int *ompi);

/* The algorithms' ids: rw_coll_alg's values (rankwise_coll.h, which
 * needs mpi.h; engine/mpi/coll/entry/api.c checks that they agree). */
enum {
    RW_ALGO_AUTO,
    RW_ALGO_PASSTHROUGH,
    RW_ALGO_BINOMIAL,
    RW_ALGO_KNOMIAL,
    RW_ALGO_FLAT,
    RW_ALGO_CHAIN,
    RW_ALGO_HIER,
    RW_ALGO_RING,
    RW_ALGO_RECURSIVE_DOUBLING,
    RW_ALGO_TRINARY,
    RW_ALGO_PAIRWISE,
    RW_ALGO_SYMMETRIC,
    RW_ALGO_MULTIRING,
    RW_N_ALGOS
};

/* What an algorithm takes from the decision (its parameters) and how the
 * tuner treats it. */
enum {
    RW_ALGO_TREE = 1 << 0,     /* a tree shape over the ranks (rw_tree_shape in .shape) */
    RW_ALGO_NODES = 1 << 1,    /* laid on the nodes: the communicator's node communicators */
    RW_ALGO_ORDER = 1 << 2,    /* laid along the network: an order of the ranks */
    RW_ALGO_SEGMENT = 1 << 3,  /* pipelined: a segment in bytes */
    RW_ALGO_CAP = 1 << 4,      /* a cap on concurrent sends */
    RW_ALGO_COMMUTES = 1 << 5, /* reductions: commutative operations only */
    RW_ALGO_LONG = 1 << 6      /* a tuner candidate from the eager limit on */
};

typedef struct rw_algo_info {
    int id;           /* rw_coll_alg */
    const char *name; /* as users write it (RANKWISE_COLL_<OP>, rules files) */
    unsigned ops;     /* RW_OP_BIT of the operations that may run it */
    unsigned tuned;   /* the operations whose tuner weighs it by name (select.c) */
    unsigned flags;   /* RW_ALGO_* */
    int shape;        /* rw_tree_shape of a tree algorithm, else -1 */
} rw_algo_info;

/* The table in the tuner's order (its candidates follow it), NULL after
 * the last. */
const rw_algo_info *rw_algo_at(int i);
/* By id (NULL out of range) and by name ("rd": recursive_doubling; NULL
 * for an unknown name). */
const rw_algo_info *rw_algo_by_id(int id);
const rw_algo_info *rw_algo_by_name(const char *name);
/* Whether op may run algorithm id (passthrough: every operation; auto:
 * none, it is no algorithm). */
int rw_algo_valid(int op, int id);

/* Names joined for messages, in id order from first_id on: "a, b, c"
 * (or "a, b or c" with last_or), only those valid for op (op < 0: all).
 * Returns buf. */
const char *rw_algo_names(char *buf, size_t size, int first_id, int op, int last_or);
/* Operation names joined the same way: those in the bit set ops. */
const char *rw_op_names(char *buf, size_t size, unsigned ops, const char *last_sep);

#endif
