/* Trials' statistics (verdict.h). */
#include "verdict.h"

#include <math.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rw_verdict_block(double *calls, int n)
{
    qsort(calls, (size_t)n, sizeof *calls, by_value);
    int kept = n - (n + 3) / 4;
    if (kept < 1)
        kept = 1;
    double sum = 0;
    for (int i = 0; i < kept; i++)
        sum += calls[i];
    return sum / kept;
}

int rw_verdict_block_calls(double per_call, double min_seconds, int lo, int hi)
{
    if (!(per_call > 0) || !isfinite(per_call))
        return lo;
    double n = ceil(min_seconds / per_call);
    return n < lo ? lo : n > hi ? hi : (int)n;
}

int rw_verdict_keep(const double *choice, int n_choice, const double *own, int n_own, double margin)
{
    if (n_choice < 1 || n_own < 1)
        return 0;
    double slowest = 0, fastest = INFINITY;
    for (int i = 0; i < n_choice; i++) {
        if (!(choice[i] > 0) || !isfinite(choice[i]))
            return 0;
        slowest = fmax(slowest, choice[i]);
    }
    for (int i = 0; i < n_own; i++) {
        if (!(own[i] > 0) || !isfinite(own[i]))
            return 0;
        fastest = fmin(fastest, own[i]);
    }
    return slowest < (1 - margin) * fastest;
}
