/* The drift rule: what counts as a change of a measured figure beyond the
 * noise, for `rankwise diff` / `watch` (Python, through ctypes) and the live
 * model in the job (mpi/live/merge.c). Symmetric in the ratio: a pair
 * 10 % slower and one back to its speed are both changes. */
#include "internal.h"

#include <math.h>

int rw_drift_beyond(double ratio, double threshold)
{
    return isfinite(ratio) && ratio > 0 && fabs(log(ratio)) > log1p(threshold);
}

double rw_drift_strength(double before_min, double before_median, double before_max, double after_min,
                         double after_median, double after_max, double threshold)
{
    double r = after_median / before_median;
    int apart = after_min > before_max || after_max < before_min; /* the samples' ranges do not overlap */
    return apart && rw_drift_beyond(r, threshold) ? fabs(log(r)) : -1.0;
}

rw_status rw_drift_strengths(int64_t n, const double *before_min, const double *before_median,
                             const double *before_max, const double *after_min, const double *after_median,
                             const double *after_max, double threshold, double *strength)
{
    if (!(isfinite(threshold) && threshold >= 0))
        return rw_fail(RW_ERR_ARG, "the drift threshold must be >= 0, got %g", threshold);
    if (n < 0 || (n > 0 && (!before_min || !before_median || !before_max || !after_min || !after_median ||
                            !after_max || !strength)))
        return rw_fail(RW_ERR_ARG, "rw_drift_strengths: %lld figures and no arrays", (long long)n);
    for (int64_t k = 0; k < n; k++)
        strength[k] = rw_drift_strength(before_min[k], before_median[k], before_max[k], after_min[k],
                                        after_median[k], after_max[k], threshold);
    return RW_OK;
}
