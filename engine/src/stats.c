/* Robust summaries of repeated timings. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rw_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A round is an outlier when it is an order of magnitude away from the
 * others: noise from a neighbour's burst, not the link's quality. */
static int is_outlier(double round_median, double typical)
{
    return typical > 0 && (round_median > 10.0 * typical || round_median < typical / 10.0);
}

int rw_stat_from_rounds(double *samples, int rounds, int per_round, rw_stat *out)
{
    out->min = out->median = out->max = out->jitter = NAN;
    out->count = 0;
    if (rounds <= 0 || per_round <= 0)
        return 0;

    double *medians = malloc(2 * (size_t)rounds * sizeof *medians);
    if (!medians)
        return 0; /* count stays 0: no statistics rather than wrong ones */
    double *sorted = medians + rounds;
    for (int r = 0; r < rounds; r++)
        medians[r] = rw_median(samples + (size_t)r * per_round, (size_t)per_round);
    for (int r = 0; r < rounds; r++)
        sorted[r] = medians[r];
    double typical = rw_median(sorted, (size_t)rounds);

    /* Compact the kept rounds to the front of samples. */
    int kept = 0, dropped = 0;
    for (int r = 0; r < rounds; r++) {
        if (is_outlier(medians[r], typical)) {
            dropped++;
            continue;
        }
        if (kept != r)
            for (int k = 0; k < per_round; k++)
                samples[(size_t)kept * per_round + k] = samples[(size_t)r * per_round + k];
        kept++;
    }
    free(medians);
    size_t n = (size_t)kept * per_round;
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += samples[k];
    out->median = rw_median(samples, n); /* sorts: min and max are the ends */
    out->min = samples[0];
    out->max = samples[n - 1];
    double mean = sum / (double)n;
    out->jitter = mean > 0 ? (out->max - out->min) / mean : 0.0;
    out->count = (int32_t)n;
    return dropped;
}
