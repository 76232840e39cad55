/* Max-min fair sharing of bandwidth among the flows alive at one instant
 * (progressive filling), used by simulate.c. */
#ifndef RW_PREDICT_SHARING_H
#define RW_PREDICT_SHARING_H

#include "predict_internal.h"

typedef struct rw_sharing {
    const rw_pnet *net;
    int32_t n_res;   /* 3 n + links: injection 0..n-1, ejection n..2n-1, duplex 2n..3n-1, links */
    double *res_cap; /* n_res, 0 = no cap */
    double *rem;     /* n_res scratch */
    int32_t *cnt;    /* n_res scratch */
    double *wsum;    /* n_res scratch: weights of the unfixed flows */
    uint8_t *sat;    /* n_res scratch */
    int32_t *touched;
    /* Flows between the same two nodes share that pair's bandwidth 1/beta:
     * one resource per distinct pair alive, numbered after the fixed ones. */
    int64_t slots_cap;
    int32_t *slot_of;  /* per flow: pair resource index or -1 */
    int64_t *hkey;     /* open addressing: node pair + 1, 0 = empty */
    int32_t *hval;
    int64_t hsize;
} rw_sharing;

rw_status rw_sharing_init(rw_sharing *sh, const rw_pnet *net);
void rw_sharing_free(rw_sharing *sh);

/* Rates of n flows: flow f runs from node sn[f] to node dn[f]; cap[f] is
 * its pair's bandwidth 1/beta (inf: none), shared by the flows of the same
 * inter-node pair and a per-flow cap inside a node (SimGrid's loopback is a
 * fat pipe). weight[f] (> 0; NULL or any flow without one: all equal) is
 * its share of a saturated resource relative to the others' (CM02: the
 * inverse of its latency). rate[f] receives its weighted max-min fair
 * share. fixed is n bytes of scratch. Returns the rounds of filling. */
int32_t rw_sharing_rates(rw_sharing *sh, int64_t n, const int32_t *sn, const int32_t *dn,
                         const double *cap, const double *weight, double *rate, uint8_t *fixed);

#endif
