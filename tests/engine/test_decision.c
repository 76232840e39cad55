/* The placement decision (rw_decision_*): rw_map, the CLI's predictor
 * decision and the job's reorder share it. */
#include "check.h"
#include "rankwise_map.h"

static void test_min_gain_and_margins(void)
{
    CHECK(rw_decision_replaces(1.0, 0.97, 0.02, 0));
    CHECK(!rw_decision_replaces(1.0, 0.985, 0.02, 0));
    CHECK(!rw_decision_replaces(1.0, 1.0, 0, 0)); /* no change for nothing */
    CHECK(rw_decision_replaces(1.0, 0.999, 0, 0));
    /* more bytes across the model's groups, which the judge cannot see: 10 % needed
     * (the job's reorder took such a placement at 2 % before; the CLI did not) */
    CHECK(!rw_decision_replaces(1.0, 0.95, 0.02, 1));
    CHECK(rw_decision_replaces(1.0, 0.89, 0.02, 1));
    CHECK(!rw_decision_replaces(1.0, 0.85, 0.2, 1)); /* a larger min_gain still rules */
    CHECK_CLOSE(rw_decision_bar(0.02, 0), 0.98, 1e-15);
    CHECK_CLOSE(rw_decision_bar(0.02, 1), 1 - RW_UNSEEN_LINK_MARGIN, 1e-15);
}

int main(void)
{
    test_min_gain_and_margins();
    CHECK_DONE();
}
