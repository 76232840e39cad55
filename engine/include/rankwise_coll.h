/* rankwise — network-aware collectives (librankwise_coll), the C API.
 *
 * The library defines MPI_Bcast, MPI_Reduce, MPI_Gather, MPI_Scatter,
 * MPI_Allreduce and MPI_Allgather (LD_PRELOAD under a real MPI, linked in
 * with --whole-archive under SMPI) and chooses an algorithm per call
 * (docs/concepts/collectives.md). Programs that want a given algorithm call the
 * functions below instead; they run it over the same point-to-point code.
 *
 * Contract (as rankwise.h): every function returns an rw_status and never
 * exits. RW_OK on success; RW_ERR_ARG for an argument the algorithm cannot
 * take (unknown algorithm, root out of range, a tree of another size, a
 * predefined operation the MPI standard does not define on the datatype,
 * such as MPI_LAND on MPI_FLOAT); RW_ERR_STATE when the case is not one the
 * algorithm handles (an intercommunicator, a non-commutative operation on a
 * tree that is not in rank order, an MPI running at MPI_THREAD_MULTIPLE) —
 * nothing was sent, call MPI instead; RW_ERR_MPI when an MPI
 * call failed; RW_ERR_NOMEM. rw_last_error() holds one line saying why.
 * Like the MPI call they replace, these are collective: every rank of comm
 * calls them with the same algorithm (and tree). Buffers, counts, types,
 * MPI_IN_PLACE and roots follow the MPI standard's rules for the call.
 * Assumes a homogeneous job (MPI_Pack bytes are the data's bytes). */
#ifndef RANKWISE_COLL_H
#define RANKWISE_COLL_H

#include <mpi.h>
#include <stddef.h>

#include "rankwise_status.h"
#include "rankwise_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from librankwise_coll.so, whose other symbols stay private. */
#if defined(__GNUC__)
#define RW_COLL_API __attribute__((visibility("default")))
#else
#define RW_COLL_API
#endif

typedef enum rw_coll_alg {
    RW_COLL_AUTO = 0,        /* the library's choice (environment, rules), as MPI_Bcast etc. */
    RW_COLL_PASSTHROUGH = 1, /* the MPI's own collective (PMPI) */
    RW_COLL_BINOMIAL = 2,    /* tree shapes (rankwise_tree.h); allreduce: reduce + bcast over */
    RW_COLL_KNOMIAL = 3,     /*   the tree rooted at 0, allgather: gather + bcast over it */
    RW_COLL_FLAT = 4,
    RW_COLL_CHAIN = 5,
    RW_COLL_HIER = 6,        /* two levels: binomial between node leaders, binomial inside */
    RW_COLL_RING = 7,        /* allreduce (reduce-scatter + allgather) and allgather only */
    RW_COLL_RECURSIVE_DOUBLING = 8, /* allreduce and allgather only */
    RW_COLL_TRINARY = 9,     /* bcast, reduce (commutative), allreduce = reduce + bcast: three
                                thirds along three trees at once (Ajima 2018) */
    RW_COLL_PAIRWISE = 10,   /* alltoall only: step s sends to rank + s, receives from rank - s */
    RW_COLL_SYMMETRIC = 11,  /* alltoall only: symmetric phases, sub-phases capped by the shared
                                links (Ajima, Tofu's uniformly overlaid symmetrical pattern) */
    RW_COLL_MULTIRING = 12   /* allgather only: each block in parts along rings in opposite
                                directions at once, ranks in the network's order (Ajima 2018) */
} rw_coll_alg;

/* rw_last_error() (rankwise_status.h), under its former name: the library's
 * SONAME (0.1) still promises it to programs linked against it. */
RW_COLL_API const char *rw_coll_last_error(void) RW_DEPRECATED("use rw_last_error");
/* "binomial", "knomial", ..., "recursive_doubling"; NULL for no algorithm. */
RW_COLL_API const char *rw_coll_alg_name(rw_coll_alg alg);
/* The algorithm called `name` (also "rd" for recursive_doubling); RW_ERR_ARG otherwise. */
RW_COLL_API rw_status rw_coll_alg_parse(const char *name, rw_coll_alg *out);

RW_COLL_API rw_status rw_coll_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                        rw_coll_alg alg);
RW_COLL_API rw_status rw_coll_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                         int root, MPI_Comm comm, rw_coll_alg alg);
RW_COLL_API rw_status rw_coll_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, rw_coll_alg alg);
RW_COLL_API rw_status rw_coll_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, rw_coll_alg alg);
RW_COLL_API rw_status rw_coll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, rw_coll_alg alg);
RW_COLL_API rw_status rw_coll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, rw_coll_alg alg);
/* pairwise or symmetric (the cap from the model, RANKWISE_COLL_ALLTOALL_CAP) */
RW_COLL_API rw_status rw_coll_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, rw_coll_alg alg);

/* The same over a tree given by the caller (e.g. built from a model): the
 * root is tree->root, tree->n_ranks must be comm's size, every rank passes
 * the same tree. segment_bytes > 0 pipelines the broadcast in segments of
 * that many bytes. A reduce over a tree that is not in rank order
 * (rw_tree_is_in_order) takes commutative operations only. */
RW_COLL_API rw_status rw_coll_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *tree, MPI_Comm comm,
                             size_t segment_bytes);
RW_COLL_API rw_status rw_coll_reduce_tree(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                              MPI_Op op, const rw_tree *tree, MPI_Comm comm);
RW_COLL_API rw_status rw_coll_gather_tree(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype, const rw_tree *tree, MPI_Comm comm);
RW_COLL_API rw_status rw_coll_scatter_tree(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, const rw_tree *tree, MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif /* RANKWISE_COLL_H */
