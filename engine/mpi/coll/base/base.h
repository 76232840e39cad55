/* The algorithms (base/): each takes its tree, order, cap and segment as
 * arguments and never decides (coll.h). */
#ifndef RW_COLL_BASE_H
#define RW_COLL_BASE_H

#include "coll.h"

/* The algorithms, on the private duplicate. */
rw_status rwc_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *t, MPI_Comm dup,
                         size_t segment, int fan_out_nonblocking);
rw_status rwc_reduce_tree(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                          const rw_tree *t, MPI_Comm dup);
rw_status rwc_gather_tree(const void *sendbuf, int sc, MPI_Datatype st, void *recvbuf, int rc,
                          MPI_Datatype rt, const rw_tree *t, MPI_Comm dup);
rw_status rwc_scatter_tree(const void *sendbuf, int sc, MPI_Datatype st, void *recvbuf, int rc,
                           MPI_Datatype rt, const rw_tree *t, MPI_Comm dup);
rw_status rwc_allreduce_ring(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm dup);
rw_status rwc_allreduce_rd(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm dup);
/* Two levels: reduce inside each node to its lowest rank, recursive
 * doubling between those, broadcast inside each node. Commutative ops. */
rw_status rwc_allreduce_hier(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             rwc_comm *c);
rw_status rwc_allgather_ring(const void *sendbuf, int sc, MPI_Datatype st, void *recvbuf, int rc,
                             MPI_Datatype rt, MPI_Comm dup);
rw_status rwc_allgather_rd(const void *sendbuf, int sc, MPI_Datatype st, void *recvbuf, int rc,
                           MPI_Datatype rt, MPI_Comm dup);
/* The multi-ring allgather (Ajima 2018): each block in RW_MULTIRING_PARTS
 * parts, part k around ring k (forward, backward) through the ranks in the
 * network's order (order, from the decision; NULL: rank order), all parts at once. Moves MPI_Pack bytes. */
rw_status rwc_allgather_multiring(const void *sendbuf, int sc, MPI_Datatype st, void *recvbuf, int rc,
                                  MPI_Datatype rt, rwc_comm *c, const int32_t *order);

/* The checks and algorithms behind each collective (run.c): the run
 * table keyed by the registry's ids. RW_ERR_ARG or RW_ERR_STATE when the
 * case is refused, before anything is sent. */
rw_status rwc_run_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                         rw_coll_alg alg, const rwc_params *prm);
rw_status rwc_run_reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                         rw_coll_alg alg, const rwc_params *prm);
rw_status rwc_run_gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                         MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm);
rw_status rwc_run_scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
                          MPI_Comm comm, rw_coll_alg alg, const rwc_params *prm);
rw_status rwc_run_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            rw_coll_alg alg, const rwc_params *prm);
rw_status rwc_run_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                            rw_coll_alg alg, const rwc_params *prm);
/* alltoall (alltoall.c): pairwise or symmetric (the cap on concurrent
 * sends from prm->cap). */
rw_status rwc_run_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                           rw_coll_alg alg, const rwc_params *prm);
/* Over a caller's tree (rw_coll_<op>_tree, a decided tree): the checks,
 * then the tree's algorithm on the private duplicate. */
rw_status rwc_run_bcast_tree(void *buf, int count, MPI_Datatype type, const rw_tree *tree, MPI_Comm comm,
                             size_t segment_bytes);
rw_status rwc_run_reduce_tree(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, const rw_tree *tree,
                              MPI_Comm comm);
rw_status rwc_run_gather_tree(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                              const rw_tree *tree, MPI_Comm comm);
rw_status rwc_run_scatter_tree(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                               const rw_tree *tree, MPI_Comm comm);

#endif
