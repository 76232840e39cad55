/* The multi-ring allgather's rings (multiring.c): the order the rings run
 * through the ranks and the parts each block is cut into (Ajima 2018, the
 * Tofu interconnect's "three-phase quad rings": the data in parts moving
 * along several rings at once). */
#ifndef RW_COLL_MULTIRING_H
#define RW_COLL_MULTIRING_H

#include "rankwise_predict.h"

#include <stddef.h>

/* Parts, hence rings: part 0 goes forward along the order, part 1 backward
 * (the two directions of every link, and of every NIC pair, at once). */
enum { RW_MULTIRING_PARTS = 2 };

/* Bytes of part k (0..parts-1) of a block of `bytes`, and where it starts:
 * the first bytes % parts parts take one more byte. */
size_t rw_multiring_part(size_t bytes, int parts, int k, size_t *offset);

/* The ranks of net's placement in ring order, order[0] = 0: a closed tour
 * that keeps ring neighbours close in the network. Built greedily (from each
 * rank to the nearest rank not yet in the tour by the pair's latency both
 * ways, ties within 1 % to the nearest in rank order), then shortened with
 * 2-opt moves. On a network where every pair costs the same it is rank
 * order; net NULL: rank order over n_ranks ranks. */
rw_status rw_multiring_order(const rw_pnet *net, int32_t n_ranks, int32_t *order);

/* Ring k's neighbours of position p (0..n-1) in an order of n ranks:
 * part k travels forward (k even) or backward (k odd). */
int32_t rw_multiring_next(int32_t n, int k, int32_t p);
int32_t rw_multiring_prev(int32_t n, int k, int32_t p);

#endif
