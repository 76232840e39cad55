/* Groups of close nodes (racks, switches, islands) found from the measured
 * latencies alone, without any topology given as input. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

/* Two consecutive sorted distances further apart than this ratio mark a
 * level of the hierarchy; noise within one level stays well below it. */
#define LEVEL_GAP 1.5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Symmetrised latency between i and j, NaN when neither direction is known. */
static double distance(const rw_model *m, int i, int j)
{
    int n = m->n_nodes;
    double a = m->pair_state[i * n + j] == RW_PAIR_MEASURED ? m->alpha[i * n + j] : NAN;
    double b = m->pair_state[j * n + i] == RW_PAIR_MEASURED ? m->alpha[j * n + i] : NAN;
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return 0.5 * (a + b);
}

static int find(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* Each node looks at its own row: the nodes before the first large relative
 * gap of its sorted distances are its neighbours. A node whose links are
 * all slow (a degraded cable) still finds its rack this way, because the
 * gap is relative to its own row. Groups are the connected components. */
int rw_model_groups(const rw_model *m, int32_t *group_of)
{
    int n = m->n_nodes;
    int *parent = malloc((size_t)n * sizeof *parent);
    double *row = malloc((size_t)n * sizeof *row);
    if (!parent || !row) {
        free(parent);
        free(row);
        rw_fail(RW_ERR_NOMEM, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        parent[i] = i;
    int rows_with_gap = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < n; j++) {
            double d = j == i ? NAN : distance(m, i, j);
            if (!isnan(d))
                row[k++] = d;
        }
        qsort(row, (size_t)k, sizeof *row, cmp_double);
        double cut = NAN;
        for (int t = 0; t + 1 < k; t++)
            if (row[t + 1] > LEVEL_GAP * row[t]) {
                cut = row[t];
                break;
            }
        /* A node at the same distance from all others (alone in its rack)
         * names no neighbours; others may still name it. */
        if (isnan(cut))
            continue;
        rows_with_gap++;
        for (int j = 0; j < n; j++) {
            double d = j == i ? NAN : distance(m, i, j);
            if (!isnan(d) && d <= cut)
                parent[find(parent, i)] = find(parent, j);
        }
    }
    if (rows_with_gap == 0) /* no structure at all: one group */
        for (int i = 0; i < n; i++)
            parent[i] = 0;
    /* Number groups in order of their first node. */
    int groups = 0;
    int *label = (int *)row; /* row is no longer needed; same size */
    for (int i = 0; i < n; i++)
        label[i] = -1;
    for (int i = 0; i < n; i++) {
        int root = find(parent, i);
        if (label[root] < 0)
            label[root] = groups++;
        group_of[i] = label[root];
    }
    free(parent);
    free(row);
    return groups;
}
