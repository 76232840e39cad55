/* The in-job measurement behind RANKWISE_COLL_PROBE=1 (probe.c). */
#ifndef RW_COLL_PROBE_H
#define RW_COLL_PROBE_H

#include "coll.h"
#include "rankwise_predict.h"

/* Collective over c (every rank of c calls it): the node leaders measure
 * every pair of nodes, each node its own pair, and the send overhead; every
 * rank gets the same network (nodes in the order of their lowest rank,
 * placement of c's ranks on them). *out is NULL on failure. */
rw_status rwc_probe_pnet(rwc_comm *c, rw_pnet **out);

#endif
