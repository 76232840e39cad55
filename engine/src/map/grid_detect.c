/* Is the traffic a stencil on a Cartesian grid, in rank order? Most codes
 * number their grid's ranks row-major (MPI_Cart_create without reordering),
 * so a profiled or imported matrix often is one without saying so. Every
 * factorisation of the rank count into up to three dimensions is tried; it
 * fits when every edge joins ranks whose coordinates differ by at most one
 * in each dimension (or wrap around, periodic). A wrong factorisation fails
 * on its first few edges, so the search costs little. */
#include <stdlib.h>

#include "algorithms.h"

/* Does every edge fit grid g (x fastest)? *wraps counts the coordinate
 * steps that need the wrap-around, *steps all coordinate steps: the true
 * grid needs the fewest (a wrong one with a dimension of 2 turns straight
 * steps into diagonal ones). */
static int fits(const rw_matrix *t, const int32_t g[3], int64_t *wraps, int64_t *steps)
{
    *wraps = *steps = 0;
    for (int32_t i = 0; i < t->n_ranks; i++) {
        int32_t ci[3] = {i % g[0], (i / g[0]) % g[1], i / (g[0] * g[1])};
        for (int64_t k = t->row_start[i]; k < t->row_start[i + 1]; k++) {
            int32_t j = t->dst[k];
            if (j == i) continue;
            int32_t cj[3] = {j % g[0], (j / g[0]) % g[1], j / (g[0] * g[1])};
            for (int a = 0; a < 3; a++) {
                int32_t d = abs(ci[a] - cj[a]);
                *steps += d != 0;
                if (d <= 1) continue;
                if (d == g[a] - 1 && g[a] > 2) {
                    ++*wraps;
                    continue;
                }
                return 0;
            }
        }
    }
    return 1;
}

int rw_detect_grid(const rw_matrix *t, int32_t grid[3], int32_t *periodic)
{
    int32_t n = t->n_ranks;
    /* Small or dense traffic is no stencil worth the name (a 2x2x2 grid
     * with 26 neighbours is an all-to-all). */
    if (n < 27 || t->nnz > 26 * (int64_t)n) return 0;
    int best_dims = 0;
    int64_t best_wraps = INT64_MAX, best_steps = INT64_MAX;
    for (int32_t a = 2; a <= n; a++) {
        if (n % a) continue;
        int32_t rest = n / a;
        for (int32_t b = 1; b <= rest; b++) {
            if (rest % b) continue;
            int32_t g[3] = {a, b, rest / b};
            int64_t wraps, steps;
            int dims = (g[0] > 1) + (g[1] > 1) + (g[2] > 1);
            if (g[1] == 1 && g[2] > 1) continue; /* the same as (a, c, 1) */
            if (!fits(t, g, &wraps, &steps)) continue;
            /* Fewest wrap-arounds first (a wrong factorisation fits only
             * by wrapping rows into the next ones: far more than a true
             * torus's borders), then fewest steps, then more dimensions. */
            if (wraps < best_wraps || (wraps == best_wraps && steps < best_steps) ||
                (wraps == best_wraps && steps == best_steps && dims > best_dims)) {
                best_dims = dims;
                best_wraps = wraps;
                best_steps = steps;
                grid[0] = g[0], grid[1] = g[1], grid[2] = g[2];
                *periodic = wraps > 0;
            }
        }
    }
    return best_dims > 0;
}
