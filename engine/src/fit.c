/* Hockney (alpha-beta) fit of round-trip times. */
#include "internal.h"

#include <math.h>

/* Weighted least squares of y = a + b x with weights w; returns 0 when the
 * system is singular. */
static int wls(const double *x, const double *y, const double *w, int n, double *a, double *b)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < n; k++) {
        sw += w[k];
        sx += w[k] * x[k];
        sy += w[k] * y[k];
        sxx += w[k] * x[k] * x[k];
        sxy += w[k] * x[k] * y[k];
    }
    double det = sw * sxx - sx * sx;
    if (!(fabs(det) > 0))
        return 0;
    *a = (sxx * sy - sx * sxy) / det;
    *b = (sw * sxy - sx * sy) / det;
    return 1;
}

rw_status rw_fit_hockney(const double *size, const double *rtt, int n, double *alpha, double *beta)
{
    if (n < 1)
        return rw_fail(RW_ERR_ARG, "Hockney fit needs at least one size");
    double w[n];
    for (int k = 0; k < n; k++) {
        if (!(rtt[k] > 0) || !isfinite(rtt[k]) || size[k] < 0)
            return rw_fail(RW_ERR_ARG, "Hockney fit: invalid sample %d (size %g, time %g)",
                           k, size[k], rtt[k]);
        w[k] = 1.0 / (rtt[k] * rtt[k]); /* relative error: small sizes count */
    }
    double a = 0, b = 0;
    if (n == 1 || !wls(size, rtt, w, n, &a, &b)) {
        *alpha = rtt[0] / 2;
        *beta = 0;
        return RW_OK;
    }
    if (b < 0) { /* no measurable bandwidth term: latency only */
        double s = 0, sw = 0;
        for (int k = 0; k < n; k++) {
            s += w[k] * rtt[k];
            sw += w[k];
        }
        a = s / sw;
        b = 0;
    } else if (a < 0) { /* bandwidth only: b = sum(w x y) / sum(w x x) */
        double sxy = 0, sxx = 0;
        for (int k = 0; k < n; k++) {
            sxy += w[k] * size[k] * rtt[k];
            sxx += w[k] * size[k] * size[k];
        }
        a = 0;
        b = sxx > 0 ? sxy / sxx : 0;
    }
    *alpha = a / 2;
    *beta = b;
    return RW_OK;
}
