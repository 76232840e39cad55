/* The protocol knee: the message size where an MPI library switches from
 * its eager protocol to rendezvous (a handshake before the payload), seen
 * as a break in the round-trip curve. One knee for the model, from a joint
 * two-segment fit over every measured pair; each pair then gets a Hockney
 * fit on each side. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

/* A knee is accepted only when splitting the curves there leaves at most
 * this fraction of the single-line fit's squared relative error... */
#define KNEE_GAIN 0.2
/* ...and the single line misses by more than this relative rms: noise on a
 * straight line never invents a knee. */
#define KNEE_MIN_RMS 0.03
/* Sizes each side of a knee needs for its own line. */
#define KNEE_MIN_SIDE 2

/* Sum of squared relative residuals of rtt = 2 alpha + beta size. */
static double rel_error(const double *x, const double *y, int n, double alpha, double beta)
{
    double e = 0;
    for (int k = 0; k < n; k++) {
        double r = (2 * alpha + beta * x[k] - y[k]) / y[k];
        e += r * r;
    }
    return e;
}

/* The line's error on one side, or NaN when it cannot be fitted. */
static double side_error(const double *x, const double *y, int n)
{
    double a, b;
    if (n < 1 || rw_fit_hockney(x, y, n, &a, &b) != RW_OK)
        return NAN;
    return rel_error(x, y, n, a, b);
}

/* Median round-trip times of pair statistics, with the size index of each:
 * returns how many sizes have one. */
static int curve(const rw_model *m, const rw_stat *st, double *x, double *y, int *idx)
{
    int n = 0;
    for (int s = 0; s < m->n_sizes; s++)
        if (st[s].count > 0 && st[s].median > 0 && isfinite(st[s].median)) {
            x[n] = (double)m->sizes[s];
            y[n] = st[s].median;
            idx[n] = s;
            n++;
        }
    return n;
}

/* The errors of one pair's curve: one line (*whole) and two lines split
 * before size index b (*split, NaN when a side has too few sizes).
 * Returns the number of sizes with timings, 0 when none fits. */
static int pair_errors(const rw_model *m, int p, int b, double *whole, double *split)
{
    int ns = m->n_sizes, idx[ns];
    double x[ns], y[ns];
    int n = curve(m, m->pair_stats + (size_t)p * ns, x, y, idx);
    *whole = side_error(x, y, n);
    if (isnan(*whole))
        return 0;
    int left = 0;
    while (left < n && idx[left] < b)
        left++;
    *split = left < KNEE_MIN_SIDE || n - left < KNEE_MIN_SIDE
                 ? NAN
                 : side_error(x, y, left) + side_error(x + left, y + left, n - left);
    return n;
}

/* A split that removes most of a line's error, on a curve a line misses. */
static int breaks(double whole, double split, int points)
{
    return points > 0 && sqrt(whole / points) > KNEE_MIN_RMS && split <= KNEE_GAIN * whole;
}

int64_t rw_find_knee(const rw_model *m)
{
    int ns = m->n_sizes, np = m->n_nodes * m->n_nodes;
    /* Joint fit: the first large size b minimising the two lines' error
     * summed over pairs (NaN where some pair has too few sizes a side). */
    double whole = 0, split[ns];
    int points = 0, pairs = 0;
    for (int b = 0; b < ns; b++) {
        split[b] = 0;
        for (int p = 0; p < np; p++) {
            double w, e;
            if (m->pair_state[p] != RW_PAIR_MEASURED)
                continue;
            int n = pair_errors(m, p, b, &w, &e);
            if (n == 0)
                continue;
            split[b] += e;
            if (b == 0) {
                whole += w;
                points += n;
                pairs++;
            }
        }
    }
    int best = -1;
    for (int b = 0; b < ns; b++)
        if (!isnan(split[b]) && (best < 0 || split[b] < split[best]))
            best = b;
    if (best < 0 || !breaks(whole, split[best], points))
        return 0;
    /* The protocol is the library's: most pairs must break there, not one
     * odd pair whose curve dominates the sum. */
    int agree = 0;
    for (int p = 0; p < np; p++) {
        double w, e;
        int n = m->pair_state[p] == RW_PAIR_MEASURED ? pair_errors(m, p, best, &w, &e) : 0;
        agree += n > 0 && breaks(w, e, n);
    }
    return 2 * agree > pairs ? m->sizes[best] : 0;
}

/* Hockney fit of statistics st on the sizes in [lo, hi); *fitted says
 * whether at least `need` sizes had timings (else alpha and beta are NaN). */
static rw_status fit_range(const rw_model *m, const rw_stat *st, int64_t lo, int64_t hi, int need,
                           double *alpha, double *beta, int *fitted)
{
    double x[m->n_sizes], y[m->n_sizes];
    int n = 0;
    for (int s = 0; s < m->n_sizes; s++)
        if (m->sizes[s] >= lo && m->sizes[s] < hi && st[s].count > 0 && st[s].median > 0) {
            x[n] = (double)m->sizes[s];
            y[n] = st[s].median;
            n++;
        }
    *fitted = n >= need;
    if (!*fitted) {
        *alpha = *beta = NAN;
        return RW_OK;
    }
    return rw_fit_hockney(x, y, n, alpha, beta);
}

rw_status rw_model_fit_sides(const rw_model *m, const rw_stat *st, double *alpha, double *beta,
                             double *alpha_large, double *beta_large)
{
    int fitted = 0;
    int64_t knee = m->knee > 0 ? m->knee : INT64_MAX;
    rw_status status = fit_range(m, st, 0, knee, 1, alpha, beta, &fitted);
    if (status)
        return status;
    if (!fitted)
        return rw_fail(RW_ERR_STATE, "no timings to fit");
    /* Too few large sizes for this pair: its large fit stays unknown. */
    status = fit_range(m, st, knee, INT64_MAX, KNEE_MIN_SIDE, alpha_large, beta_large, &fitted);
    /* The acknowledgement is empty, an eager message costing alpha: the rest
     * of the intercept is the large message's own one-way latency (a
     * rendezvous handshake shows there, not halved with the ack). */
    if (!status && fitted)
        *alpha_large = fmax(0.0, 2 * *alpha_large - *alpha);
    return status;
}

rw_status rw_model_fit_knee(rw_model *m)
{
    m->knee = rw_find_knee(m);
    rw_status worst = RW_OK;
    for (int p = 0; p < m->n_nodes * m->n_nodes; p++) {
        if (m->pair_state[p] != RW_PAIR_MEASURED)
            continue;
        rw_status st = rw_model_fit_pair(m, p);
        if (st && !worst)
            worst = st;
    }
    return worst;
}
