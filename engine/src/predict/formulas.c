/* Closed-form cost formulas, for comparison with the simulation. */
#include "predict_internal.h"

#include <math.h>

double rw_hockney(double alpha, double beta, double n) { return alpha + n * beta; }

double rw_loggp(double L, double o, double G, double n)
{
    return o + (n > 1 ? (n - 1) * G : 0.0) + L + o;
}

double rw_luo_bruck(int64_t p, double alpha, double beta, double k)
{
    double lg = log2((double)p);
    return lg * alpha + 0.5 * lg * (double)(p - 1) * k * beta;
}

double rw_luo_pairwise(int64_t p, double alpha, double beta, double k)
{
    return (double)(p - 1) * (alpha + k * beta);
}

double rw_luo_wait(int32_t radix, double rho)
{
    if (radix < 1 || !(rho >= 0.0 && rho < 1.0))
        return NAN;
    return (1.0 - 1.0 / radix) * rho / (2.0 * (1.0 - rho));
}

double rw_luo_contention(int64_t p, double alpha, double beta, double k, double packet, int32_t hops,
                         int32_t radix, double rho, double cycle)
{
    double w = rw_luo_wait(radix, rho);
    if (isnan(w) || !(packet > 0))
        return NAN;
    return (double)(p - 1) * (alpha + k * beta + k / packet * hops * w * cycle);
}
