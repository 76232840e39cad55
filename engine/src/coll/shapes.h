/* The standard tree shapes, position by position (shapes.c). */
#ifndef RW_COLL_SHAPES_H
#define RW_COLL_SHAPES_H

#include "rankwise_coll_tune.h"
#include "rankwise_tree.h"

/* Parent *pv of relative rank v (1 <= v) in a shape rooted at 0, and v's
 * position *pos in its parent's send list (only the order of positions
 * among siblings matters). k: the knomial radix. Flat orders by v. */
void rw_shape_position(rw_tree_shape shape, int32_t k, int32_t v, int32_t *pv, int32_t *pos);

#endif
