/* rankwise — collective rules: what `rankwise coll tune` decided for an
 * allocation, read by the collectives library at MPI_Init
 * (RANKWISE_COLL_RULES). Plain C11, no MPI; part of librankwise and
 * compiled into librankwise_coll. The file format is in
 * docs/concepts/collectives.md ("The rules file").
 *
 * Contract as in rankwise.h (hwloc-like): functions return an rw_status and
 * leave one line in rw_last_error() (a bad file: "path:line: what is
 * wrong"); they never exit and never print. The rules own everything a
 * lookup returns; it stays valid until rw_coll_rules_free.
 */
#ifndef RANKWISE_COLL_RULES_H
#define RANKWISE_COLL_RULES_H

#include "rankwise.h"
#include "rankwise_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rw_coll_rules rw_coll_rules;

/* What to run for one call. */
typedef struct rw_coll_choice {
    const char *algorithm; /* "passthrough" (the MPI's own), "tree" (run `tree`), or an
                              algorithm of the library: "binomial", "knomial", "flat",
                              "chain", "hier", and for allreduce and allgather "ring",
                              "recursive_doubling" (rankwise_coll.h's names) */
    int64_t segment;       /* bcast pipeline segment in bytes; 0 = the whole message */
    const rw_tree *tree;   /* for "tree": over the communicator's ranks, rooted at the
                              call's root; NULL otherwise */
} rw_coll_choice;

/* Read a rules file. RW_ERR_IO when it cannot be opened, RW_ERR_PARSE
 * naming path:line on anything malformed (unknown key, operation or
 * algorithm, a number out of range, a parent list that is not a tree over
 * comm-size ranks rooted at the rule's root, an order list of another
 * length, a trinary-order that is not a permutation of the ranks). */
RW_API rw_status rw_coll_rules_read(const char *path, rw_coll_rules **out);
RW_API void rw_coll_rules_free(rw_coll_rules *r);

/* Communicator size the rules were made for (MPI_COMM_WORLD of the
 * allocation) and the number of rules. */
RW_API int32_t rw_coll_rules_comm_size(const rw_coll_rules *r);
RW_API int32_t rw_coll_rules_count(const rw_coll_rules *r);

/* The ranks in the order the triple trinary trees lay them (the
 * trinary-order line: rw_coll_trinary_order over the allocation the rules
 * were tuned for), comm-size entries owned by r; NULL when the file has no
 * such line (the library then lays them in rank order, or along its own
 * network when it has one). */
RW_API const int32_t *rw_coll_rules_trinary_order(const rw_coll_rules *r);

/* The ranks in the order the multi-ring allgather's rings run through them
 * (the ring-order line: rw_coll_multiring_order over the allocation the
 * rules were tuned for, the order the tuner costed the multi-ring in);
 * NULL without one. */
RW_API const int32_t *rw_coll_rules_ring_order(const rw_coll_rules *r);

/* The choice for op ("bcast", "reduce", "gather", "scatter", "allreduce",
 * "allgather"; the last two are written for any root, root=*) on a
 * communicator of comm_size ranks, from root, `bytes` per call (bcast: the
 * message; the others: per rank): the first rule of the file that matches
 * op, comm_size, root (or any root) and a byte range holding bytes. No
 * match (another communicator size, an operation without rules):
 * "passthrough". RW_ERR_ARG on NULL arguments or bytes < 0. */
RW_API rw_status rw_coll_rules_lookup(const rw_coll_rules *r, const char *op, int32_t comm_size, int32_t root,
                                      int64_t bytes, rw_coll_choice *choice);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_COLL_RULES_H */
