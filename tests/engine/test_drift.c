/* The drift rule (rw_drift_*), shared by `rankwise diff` and the live model. */
#include "check.h"
#include "rankwise.h"

#include <math.h>

static void test_symmetric_in_the_ratio(void)
{
    CHECK(rw_drift_beyond(1.105, 0.10) && rw_drift_beyond(1 / 1.105, 0.10));
    CHECK(!rw_drift_beyond(1.09, 0.10) && !rw_drift_beyond(1 / 1.09, 0.10));
    /* 9.5 % faster is 1 / 0.905 = 10.5 % slower read back: a change both ways
     * (the live merge's former |r - 1| > threshold missed it) */
    CHECK(rw_drift_beyond(0.905, 0.10));
    CHECK(!rw_drift_beyond(NAN, 0.10) && !rw_drift_beyond(0, 0.10) && !rw_drift_beyond(-2, 0.10));
    CHECK(!rw_drift_beyond(1, 0) && rw_drift_beyond(1.001, 0));
}

static void test_ranges_must_not_overlap(void)
{
    /* before [9, 11] median 10 */
    CHECK_CLOSE(rw_drift_strength(9, 10, 11, 19, 20, 21, 0.10), log(2), 1e-12);
    CHECK_CLOSE(rw_drift_strength(9, 10, 11, 8.0, 8.5, 8.9, 0.10), fabs(log(0.85)), 1e-12);
    CHECK(rw_drift_strength(9, 10, 11, 10.5, 20, 21, 0.10) == -1); /* overlapping: noise */
    CHECK(rw_drift_strength(9, 10, 11, 11.5, 10.5, 11.5, 0.10) == -1); /* apart, within the threshold */
    CHECK(rw_drift_strength(NAN, NAN, NAN, 19, 20, 21, 0.10) == -1);
    double lo[2] = {9, 9}, med[2] = {10, 10}, hi[2] = {11, 11}, lo2[2] = {19, 10}, med2[2] = {20, 10.5},
           hi2[2] = {21, 11}, out[2];
    CHECK(rw_drift_strengths(2, lo, med, hi, lo2, med2, hi2, 0.10, out) == RW_OK);
    CHECK_CLOSE(out[0], log(2), 1e-12);
    CHECK(out[1] == -1);
    CHECK(rw_drift_strengths(2, lo, med, hi, lo2, med2, hi2, -0.1, out) == RW_ERR_ARG);
    CHECK(rw_drift_strengths(2, lo, med, hi, lo2, med2, hi2, NAN, out) == RW_ERR_ARG);
}

int main(void)
{
    test_symmetric_in_the_ratio();
    test_ranges_must_not_overlap();
    CHECK_DONE();
}
