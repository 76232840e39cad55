/* The placement decision: when a proposed placement replaces the default
 * (the launchers' block placement for `rankwise map`, the identity for
 * MPI's reorder flag and the live remap). One rule for rw_map, the CLI's
 * predictor decision (rankwise.decision) and the job (mpi/coll/placement.c):
 * no change for nothing, and a larger margin where the judge is blind to
 * what the change adds. */
#include "../internal.h"
#include "rankwise_map.h"

/* Below this a gain is rounding: a placement the judge cannot tell from
 * the default stays the default. */
#define NO_GAIN 1e-9

double rw_decision_bar(double min_gain, int loads_unseen_links)
{
    double margin = min_gain > NO_GAIN ? min_gain : NO_GAIN;
    if (loads_unseen_links && RW_UNSEEN_LINK_MARGIN > margin)
        margin = RW_UNSEEN_LINK_MARGIN;
    return 1 - margin;
}

int rw_decision_replaces(double default_cost, double cost, double min_gain, int loads_unseen_links)
{
    return cost < default_cost * rw_decision_bar(min_gain, loads_unseen_links);
}
