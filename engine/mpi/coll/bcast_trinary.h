/* The triple trinary tree broadcast (bcast_trinary.c). */
#ifndef RW_COLL_BCAST_TRINARY_H
#define RW_COLL_BCAST_TRINARY_H

#include "coll.h"

/* Tags of the three trees on the private duplicate, above coll.h's. */
enum { RWC_TAG_TRINARY = 32 };

/* Broadcast from root over the three trinary trees on the private
 * duplicate dup, in segments of `segment` bytes (0: rw_trinary_segment). */
rw_status rwc_bcast_trinary(void *buf, int count, MPI_Datatype type, int root, MPI_Comm dup, size_t segment);

#endif
