/* The triple trinary tree broadcast and reduce (bcast_trinary.c,
 * reduce_trinary.c). */
#ifndef RW_COLL_COLL_TRINARY_H
#define RW_COLL_COLL_TRINARY_H

#include "coll.h"

/* Tags of the three trees on the private duplicate, above coll.h's. */
enum { RWC_TAG_TRINARY = 32 };

/* Broadcast from root over the three trinary trees on the private
 * duplicate dup, ranks laid in `order` (NULL: rank order), in segments of
 * `segment` bytes (0: rw_trinary_segment). */
rw_status rwc_bcast_trinary(void *buf, int count, MPI_Datatype type, int root, MPI_Comm dup, const int32_t *order,
                            size_t segment);

/* Reduce to root over the same trees reversed: element range k of the
 * vector (rw_trinary_part of count) up tree k, in segments of about
 * `segment` bytes (0: rw_trinary_segment), the three at once. A rank
 * combines its children's segments in the tree's child order (the same
 * order on every run). Commutative operations only: RW_ERR_STATE before
 * anything is sent otherwise. */
rw_status rwc_reduce_trinary(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                             MPI_Comm dup, const int32_t *order, size_t segment);

#endif
