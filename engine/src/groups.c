/* Groups of close nodes (racks, switches, islands) found from the measured
 * latencies alone, without any topology given as input.
 *
 * Latency adds up along a route: alpha_ij ~ a_i + a_j + D(g_i, g_j), where
 * a_i is node i's own part (its NIC and cable) and D the network between
 * the two groups. A node with a slow NIC shifts its whole row by a
 * constant; grouping on the raw numbers makes it a group of its own, or
 * makes it look close to everyone. So the node terms are removed first,
 * and the groups are read from what is left (docs/concepts/model.md). */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

/* Two consecutive sorted distances further apart than this ratio mark a
 * level of the hierarchy; noise within one level stays well below it. */
#define LEVEL_GAP 1.5
/* Node terms are estimated against at most this many reference nodes, so
 * that the cost stays O(n * REFS^2) on large models. */
#define REFS 96

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

/* Median of the finite values of v[0..k) (reordered); NaN when none. */
static double finite_median(double *v, int k)
{
    int f = 0;
    for (int t = 0; t < k; t++)
        if (isfinite(v[t]))
            v[f++] = v[t];
    return f ? rw_median(v, (size_t)f) : NAN;
}

/* Midpoint of the 20th and 80th percentiles of the finite values of
 * v[0..k) (reordered); NaN when none. */
static double mid_range(double *v, int k)
{
    int f = 0;
    for (int t = 0; t < k; t++)
        if (isfinite(v[t]))
            v[f++] = v[t];
    if (f == 0)
        return NAN;
    qsort(v, (size_t)f, sizeof *v, cmp_double);
    return 0.5 * (v[(f - 1) / 5] + v[(f - 1) - (f - 1) / 5]);
}

/* Node terms up to a common constant: term[i] ~ a_i - median(a).
 * For two nodes i, k the difference of their rows, alpha_ij - alpha_kj,
 * is a_i - a_k at every column j outside their two groups (a_j and the
 * network part cancel), a_i - a_k - Delta at the columns of i's group and
 * a_i - a_k + Delta at those of k's: the middle of its range is a_i - a_k
 * whether those columns are few (many groups) or most (two groups); the
 * percentiles leave out the noisiest columns. The median over k then
 * gives a_i - median(a). */
static void node_terms(int n, const double *d, double *term, double *tmp, double *diff)
{
    int step = n > REFS ? (n + REFS - 1) / REFS : 1;
    for (int i = 0; i < n; i++) {
        int nk = 0;
        for (int k = 0; k < n; k += step) {
            if (k == i)
                continue;
            int nj = 0;
            for (int j = 0; j < n; j += step)
                if (j != i && j != k)
                    diff[nj++] = d[i * n + j] - d[k * n + j];
            tmp[nk++] = mid_range(diff, nj);
        }
        term[i] = finite_median(tmp, nk);
        if (isnan(term[i]))
            term[i] = 0;
    }
}

/* The last value before the first relative gap of LEVEL_GAP in row[0..k)
 * (sorted here): the edge of the nearest level; NaN when there is none. */
static double first_gap(double *row, int k)
{
    qsort(row, (size_t)k, sizeof *row, cmp_double);
    for (int t = 0; t + 1 < k; t++)
        if (row[t] > 0 && row[t + 1] > LEVEL_GAP * row[t])
            return row[t];
    return NAN;
}

/* A rack behind a slow uplink shifts the rows of all its nodes as a slow
 * NIC shifts one node's row: against most columns (the other racks) their
 * difference from other racks' rows is the uplink's extra latency, which
 * node_terms then gives each of them as its own. What tells the two apart
 * is the nearest nodes: a slow NIC is slow to its rack mates too, an
 * uplink is not. So a node whose nearest nodes (by raw latency, those
 * before the row's first level gap) all carry a term of the same sign as
 * its own owes the part nearest zero to what they share, not to itself: it
 * is taken off. A slow NIC's mates carry no term, so its own stays. The
 * same holds below zero: where the distances between racks differ (a
 * dragonfly, whose routers reach some routers in one hop and others in
 * three), a rack closer than most to the rest gets a negative term in
 * every one of its nodes, which would shift its rows up by a level. */
static void shared_terms_off(int n, const double *d, double *term, double *row, double *out)
{
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < n; j++)
            if (j != i && isfinite(d[i * n + j]))
                row[k++] = d[i * n + j];
        double cut = first_gap(row, k), least = term[i], most = term[i];
        for (int j = 0; !isnan(cut) && j < n; j++)
            if (j != i && isfinite(d[i * n + j]) && d[i * n + j] <= cut) {
                least = fmin(least, term[j]);
                most = fmax(most, term[j]);
            }
        out[i] = isnan(cut) ? term[i] : least > 0 ? term[i] - least : most < 0 ? term[i] - most : term[i];
    }
    for (int i = 0; i < n; i++)
        term[i] = out[i];
}

/* Each reliable node sorts its corrected row over the reliable columns and
 * names as neighbours the nodes before the first relative gap (none when
 * the row has no gap). */
static int neighbours(int n, const double *x, const unsigned char *reliable, int i, double *row,
                      unsigned char *near)
{
    int k = 0;
    for (int j = 0; j < n; j++)
        if (j != i && reliable[j] && isfinite(x[i * n + j]))
            row[k++] = x[i * n + j];
    double cut = first_gap(row, k);
    for (int j = 0; j < n; j++)
        near[i * n + j] = !isnan(cut) && j != i && reliable[j] && x[i * n + j] <= cut;
    return !isnan(cut);
}

/* Whether i and j name mostly the same nodes, each counting itself. */
static int similar(int n, const unsigned char *near, int i, int j)
{
    int both = 0, either = 0;
    for (int k = 0; k < n; k++) {
        int a = k == i || near[i * n + k], b = k == j || near[j * n + k];
        both += a && b;
        either += a || b;
    }
    return 2 * both >= either;
}

/* Nodes i, j join when one names the other and they name mostly the same
 * nodes (similar: one noisy pair cannot merge two racks); then a node left
 * alone (its row has no clear gap, or only one side names the other)
 * joins the group that most of the nodes it names, or that name it,
 * belong to. Only reliable nodes (NULL: all). parent: the union-find. */
static void join_alone(int n, const unsigned char *near, const unsigned char *reliable, int *parent, int *label)
{
    for (int i = 0; i < n; i++)
        parent[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if ((near[i * n + j] || near[j * n + i]) && similar(n, near, i, j))
                parent[find(parent, i)] = find(parent, j);
    for (int i = 0; i < n; i++) {
        if (reliable && !reliable[i])
            continue;
        int root = find(parent, i), alone = 1;
        for (int j = 0; j < n && alone; j++)
            alone = j == i || find(parent, j) != root;
        if (!alone)
            continue;
        for (int j = 0; j < n; j++)
            label[j] = 0;
        int total = 0;
        for (int j = 0; j < n; j++)
            if (j != i && (near[i * n + j] || near[j * n + i])) {
                label[find(parent, j)]++;
                total++;
            }
        int best = -1;
        for (int j = 0; j < n; j++)
            if (label[j] && (best < 0 || label[j] > label[best]))
                best = j;
        if (best >= 0 && 2 * label[best] > total)
            parent[root] = best;
    }
}

/* The group a node whose own figures are too noisy to cut its row joins:
 * the one whose columns are, on average, closer to it than the other
 * groups' by a level gap, `level` being the typical distance inside a
 * group (averaging over a whole group beats the noise of single pairs).
 * -1 when none stands out: the node is alone in its group. */
static int closest_group(int n, const double *x, const unsigned char *reliable, const int32_t *label,
                         int groups, double level, int i, double *mean, int *count, double *tmp)
{
    for (int g = 0; g < groups; g++)
        mean[g] = count[g] = 0;
    for (int j = 0; j < n; j++)
        if (j != i && reliable[j] && isfinite(x[i * n + j])) {
            mean[label[j]] += x[i * n + j];
            count[label[j]]++;
        }
    int k = 0;
    for (int g = 0; g < groups; g++)
        if (count[g])
            tmp[k++] = mean[g] /= count[g];
    if (k < 2)
        return -1;
    /* The group furthest below the typical group in units of its standard
     * error (which shrinks as 1/sqrt(count)): a small group close to the
     * node beats a large one that is close by chance. */
    double typical = rw_median(tmp, (size_t)k), score = -INFINITY;
    int which = -1;
    for (int g = 0; g < groups; g++)
        if (count[g] && (typical - mean[g]) * sqrt(count[g]) > score) {
            score = (typical - mean[g]) * sqrt(count[g]);
            which = g;
        }
    k = 0;
    for (int g = 0; g < groups; g++)
        if (count[g] && g != which)
            tmp[k++] = mean[g];
    double others = rw_median(tmp, (size_t)k);
    /* Compared as a difference: the node's own term is the least certain
     * part of its row, and it shifts the whole row. */
    return others - mean[which] > (LEVEL_GAP - 1) * level ? which : -1;
}

struct work {
    double *x;              /* n x n: latency with the node terms removed */
    double *row, *tmp;      /* n each */
    unsigned char *near;    /* n x n: i names j as a neighbour */
    unsigned char *reliable; /* n */
    int *parent, *label;    /* n each */
};

/* One grouping of the latencies d (n x n, NaN unknown) given node terms. */
static int group_once(int n, const double *d, const double *term, struct work *w, int32_t *group_of)
{
    double *x = w->x, *row = w->row, *tmp = w->tmp;
    unsigned char *near = w->near, *reliable = w->reliable;
    int *parent = w->parent, *label = w->label;
    /* What is left is the network's part plus a typical node's share: the
     * row every node would have with an ordinary NIC. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            x[i * n + j] = d[i * n + j] - term[i] - term[j];
    /* A node whose own term outweighs half the typical distance has pairs
     * whose noise (relative to what is measured) hides the network's part:
     * its row and column do not decide the cuts. */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            row[j] = x[i * n + j];
        tmp[i] = finite_median(row, n);
    }
    double typical = finite_median(tmp, n);
    int n_reliable = 0;
    for (int i = 0; i < n; i++)
        n_reliable += reliable[i] = !(term[i] > 0.5 * typical);
    if (n_reliable < 2)
        for (int i = 0; i < n; i++)
            reliable[i] = 1;

    int rows_with_gap = 0;
    for (int i = 0; i < n; i++) {
        if (reliable[i])
            rows_with_gap += neighbours(n, x, reliable, i, row, near);
        else
            for (int j = 0; j < n; j++)
                near[i * n + j] = 0;
    }
    if (rows_with_gap == 0) { /* no structure at all: one group */
        for (int i = 0; i < n; i++)
            group_of[i] = 0;
        return 1;
    }

    /* Two nodes join when one names the other and they name mostly the
     * same nodes (Jaccard index of their neighbourhoods, themselves
     * included, at least 1/2): one noisy pair cannot merge two racks. */
    join_alone(n, near, reliable, parent, label);
    /* Number the groups of reliable nodes, then place the others. */
    for (int i = 0; i < n; i++)
        label[i] = -1;
    int groups = 0;
    for (int i = 0; i < n; i++)
        if (reliable[i] && label[find(parent, i)] < 0)
            label[find(parent, i)] = groups++;
    for (int i = 0; i < n; i++)
        group_of[i] = reliable[i] ? label[find(parent, i)] : -1;
    /* The typical distance inside a group, from the reliable nodes. */
    int k = 0;
    for (int i = 0; i < n; i++) {
        double sum = 0;
        int count = 0;
        for (int j = 0; j < n; j++)
            if (j != i && reliable[i] && reliable[j] && group_of[j] == group_of[i] && isfinite(x[i * n + j])) {
                sum += x[i * n + j];
                count++;
            }
        if (count)
            row[k++] = sum / count;
    }
    double level = k ? rw_median(row, (size_t)k) : NAN;
    int reliable_groups = groups;
    for (int i = 0; i < n; i++)
        if (!reliable[i]) {
            int g = isnan(level) ? -1
                                 : closest_group(n, x, reliable, group_of, reliable_groups, level, i, tmp, parent,
                                                 row);
            group_of[i] = g >= 0 ? g : groups++;
        }
    /* Number groups in order of their first node. */
    for (int g = 0; g < n; g++)
        label[g] = -1;
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (label[group_of[i]] < 0)
            label[group_of[i]] = next++;
        group_of[i] = label[group_of[i]];
    }
    return groups;
}

/* Node terms again, now against reliable group mates only: for two nodes
 * of one group the row difference is a_i - a_k at every column, whatever
 * the sizes of the groups (the first estimate is biased when two groups
 * hold most nodes). Reliable nodes first, anchored on their mates' median;
 * then the others, on the reliable mates' new terms. A node without a
 * reliable mate keeps its first term. */
static void refine_terms(int n, const double *d, const int32_t *group_of, const unsigned char *reliable,
                         double *term, double *tmp, double *diff)
{
    int step = n > REFS ? (n + REFS - 1) / REFS : 1;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            if (reliable[i] != (pass == 0))
                continue;
            int nk = 0;
            for (int k = 0; k < n && nk < REFS; k++) {
                if (k == i || !reliable[k] || group_of[k] != group_of[i])
                    continue;
                int nj = 0;
                for (int j = 0; j < n; j += step)
                    if (j != i && j != k)
                        diff[nj++] = d[i * n + j] - d[k * n + j];
                tmp[nk++] = finite_median(diff, nj) + (pass == 0 ? 0 : term[k]);
            }
            double t = finite_median(tmp, nk);
            if (!isnan(t))
                term[i] = t;
        }
}

/* Large-message bandwidth i -> j (beta above the knee where there is one),
 * NaN when not measured. */
static double bandwidth(const rw_model *m, int i, int j)
{
    int p = i * m->n_nodes + j;
    if (m->pair_state[p] != RW_PAIR_MEASURED)
        return NAN;
    double beta = m->beta_large && isfinite(m->beta_large[p]) ? m->beta_large[p] : m->beta[p];
    return beta > 0 ? 1 / beta : NAN;
}

/* Groups from bandwidth, where the latencies show none: racks whose
 * switches add no measurable delay (an emulated cluster without injected
 * delay, one switch layer) differ only in what their shared uplinks carry
 * while the concurrent probe runs. A pair inside a rack gets its full
 * rate in every round; a pair across racks shares the uplink with the
 * round's other crossing pairs and gets it only when alone on it.
 *
 * Each pair is read as the lesser of its two directions (a pair across
 * racks reaches the full rate in both only when alone on the uplink in
 * both of its rounds), on a log scale, against the lesser of its two
 * nodes' best rates: near when within a level gap of it (LEVEL_GAP, as
 * for latencies: noise of the CPU and the stack stays within it, a shared
 * uplink takes a pair below it). Nodes then join as for latencies: when
 * one names the other and they name mostly the same nodes, so a few pairs
 * across racks that happened to be alone on the uplink, or a few rack
 * mates slowed by the CPU, do not decide. The number of groups is what
 * that agreement leaves; fewer than two groups of two nodes or more is no
 * structure: one group.
 *
 * A node whose best rate is a level gap below the typical node's (a slow
 * NIC) caps every one of its pairs: they say little of where it is, so it
 * names nobody and nobody names it; it joins the group it reaches best
 * (the highest median of its pairs), where its pairs are compared with its
 * mates' and its NIC found slow. */
static int group_by_bandwidth(const rw_model *m, struct work *w, int32_t *group_of)
{
    int n = m->n_nodes;
    double *best = w->row, *s = w->x, gap = log(LEVEL_GAP);
    unsigned char *capped = w->reliable;
    for (int i = 0; i < n; i++) {
        best[i] = -INFINITY;
        for (int j = 0; j < n; j++) {
            double b = j == i ? NAN : fmin(bandwidth(m, i, j), bandwidth(m, j, i));
            s[i * n + j] = b > 0 ? log(b) : NAN;
            if (s[i * n + j] > best[i])
                best[i] = s[i * n + j];
        }
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(best[i]))
            w->tmp[k++] = best[i];
    if (k < 4) {
        for (int i = 0; i < n; i++)
            group_of[i] = 0;
        return 1;
    }
    double typical = rw_median(w->tmp, (size_t)k);
    for (int i = 0; i < n; i++)
        capped[i] = !(best[i] >= typical - gap);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            w->near[i * n + j] = j != i && !capped[i] && !capped[j] &&
                                 s[i * n + j] >= fmin(best[i], best[j]) - gap;
    join_alone(n, w->near, NULL, w->parent, w->label);
    /* Sizes by root, over the nodes that are not capped. */
    double *size = w->tmp;
    int groups_of_two = 0;
    for (int i = 0; i < n; i++)
        size[i] = 0;
    for (int i = 0; i < n; i++)
        size[find(w->parent, i)] += !capped[i];
    for (int r = 0; r < n; r++)
        groups_of_two += size[r] >= 2;
    if (groups_of_two < 2) { /* no structure but slow NICs: one group */
        for (int i = 0; i < n; i++)
            group_of[i] = 0;
        return 1;
    }
    /* Number the groups of two or more; a node alone (it named nobody and
     * nobody named it) is then placed as a capped node is. */
    for (int i = 0; i < n; i++)
        w->label[i] = -1;
    int groups = 0;
    for (int i = 0; i < n; i++) {
        int r = find(w->parent, i);
        group_of[i] = -1;
        if (!capped[i] && size[r] >= 2) {
            if (w->label[r] < 0)
                w->label[r] = groups++;
            group_of[i] = w->label[r];
        }
    }
    int *placed = w->parent; /* the union-find is done with */
    for (int i = 0; i < n; i++) {
        placed[i] = group_of[i];
        if (group_of[i] >= 0)
            continue;
        double top = -INFINITY;
        placed[i] = 0;
        for (int g = 0; g < groups; g++) {
            int c = 0;
            for (int j = 0; j < n; j++)
                if (j != i && group_of[j] == g && isfinite(s[i * n + j]))
                    w->tmp[c++] = s[i * n + j];
            double med = c ? rw_median(w->tmp, (size_t)c) : -INFINITY;
            if (med > top) {
                top = med;
                placed[i] = g;
            }
        }
    }
    /* Numbered in order of their first node, as the latency grouping does. */
    for (int g = 0; g < groups; g++)
        w->label[g] = -1;
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (w->label[placed[i]] < 0)
            w->label[placed[i]] = next++;
        group_of[i] = w->label[placed[i]];
    }
    return groups;
}

/* The median over measured pairs of how far the smallest size's median
 * round trip sits above its min, as a share of the latency part of the
 * min (what is left once the pair's bytes at its fitted slope are taken
 * out): the noise against what the latency levels are read from. At 8
 * bytes that part is the whole min; at 64 KiB over a few hundred Mbit/s
 * it is the 2-50 us intercept of a line through milliseconds that spread
 * by one (an emulated cluster probed at 64 KiB and 1 MiB). A pair whose
 * latency part is not above zero is all noise. 0 when no statistics are
 * known (a model built from figures alone). v: room for n x n values. */
static double latency_noise(const rw_model *m, double *v)
{
    int n = m->n_nodes;
    size_t k = 0;
    if (!m->pair_stats || m->n_sizes < 1)
        return 0;
    double size = (double)m->sizes[0];
    int large = m->knee > 0 && m->sizes[0] >= m->knee && m->beta_large;
    for (int p = 0; p < n * n; p++) {
        const rw_stat *st = &m->pair_stats[(size_t)p * m->n_sizes];
        int i = p / n, j = p % n, q = j * n + i;
        if (i == j || m->pair_state[p] != RW_PAIR_MEASURED || st->count <= 0 || !(st->min > 0) ||
            !isfinite(st->median))
            continue;
        const double *beta = large ? m->beta_large : m->beta;
        double bytes = 0;
        if (beta[p] > 0 && isfinite(beta[p]))
            bytes += size * beta[p];
        if (m->pair_state[q] == RW_PAIR_MEASURED && beta[q] > 0 && isfinite(beta[q]))
            bytes += size * beta[q];
        double spread = st->median - st->min, part = st->min - bytes;
        v[k++] = spread <= 0 ? 0 : part > 0 ? spread / part : INFINITY;
    }
    return k ? rw_median(v, k) : 0;
}

/* Latency levels are read only where a pair's typical smallest round trip
 * (its median) sits near its best (its min), measured against its latency
 * part: on a loaded real stack (an emulated cluster) the 8-byte median is
 * 70-140 % above the min, the scheduler's, and the gaps are noise. Not the
 * spread (max - min): one slow sample makes it, as every round's first
 * round trip does under SMPI without warm-up (spread 40 %, median 25 %
 * above the min, latencies exact). */
#define NOISE_EXCESS 0.4
static int noisy(double excess) { return excess > NOISE_EXCESS; }

int rw_model_latency_noisy(const rw_model *m)
{
    int n = m->n_nodes;
    if (n < 2)
        return 0;
    double *v = malloc((size_t)n * n * sizeof *v);
    if (!v) {
        rw_fail(RW_ERR_NOMEM, "out of memory");
        return -1;
    }
    int r = noisy(latency_noise(m, v));
    free(v);
    return r;
}

/* The groups the probe stored (`group` lines), when every node has one and
 * there are two or more: with flat latencies the probe found them from the
 * contention of its rounds, which its reference pass then took out of the
 * pairs (engine/mpi/probe/reference.c), so the pairs no longer show them.
 * Returns their count, 0 when there are none to take. */
static int stored_groups(const rw_model *m, int32_t *group_of)
{
    int n = m->n_nodes, g = 0;
    if (!m->group_of)
        return 0;
    for (int i = 0; i < n; i++) {
        if (m->group_of[i] < 0 || m->group_of[i] >= n)
            return 0;
        g = m->group_of[i] + 1 > g ? m->group_of[i] + 1 : g;
    }
    /* Numbered densely in order of first appearance, as the grouping does. */
    int32_t map[g];
    for (int k = 0; k < g; k++)
        map[k] = -1;
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (map[m->group_of[i]] < 0)
            map[m->group_of[i]] = next++;
        group_of[i] = map[m->group_of[i]];
    }
    return next >= 2 ? next : 0;
}

int rw_model_groups(const rw_model *m, int32_t *group_of)
{
    int n = m->n_nodes;
    if (n <= 0)
        return 0;
    size_t nn = (size_t)n * n;
    double *d = malloc(nn * sizeof *d), *term = malloc((size_t)n * sizeof *term);
    struct work w = {
        .x = malloc(nn * sizeof *w.x),
        .row = malloc((size_t)n * sizeof *w.row),
        .tmp = malloc((size_t)n * sizeof *w.tmp),
        .near = malloc(nn),
        .reliable = malloc((size_t)n),
        .parent = malloc((size_t)n * sizeof *w.parent),
        .label = malloc((size_t)n * sizeof *w.label),
    };
    int groups = -1;
    if (!d || !term || !w.x || !w.row || !w.tmp || !w.near || !w.reliable || !w.parent || !w.label) {
        rw_fail(RW_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            d[i * n + j] = i == j ? NAN : distance(m, i, j);
    /* Latencies too noisy to show levels (noisy()) make no groups: then,
     * as where latencies are flat, the stored groups or the bandwidths
     * decide. */
    if (noisy(latency_noise(m, w.x))) {
        for (int i = 0; i < n; i++)
            group_of[i] = 0;
        groups = 1;
    } else {
        node_terms(n, d, term, w.tmp, w.row);
        shared_terms_off(n, d, term, w.row, w.tmp);
        groups = group_once(n, d, term, &w, group_of);
    }
    if (groups > 1) {
        refine_terms(n, d, group_of, w.reliable, term, w.tmp, w.row);
        groups = group_once(n, d, term, &w, group_of);
    } else if (groups == 1 && n >= 4) {
        groups = stored_groups(m, group_of);
        if (groups < 2)
            groups = group_by_bandwidth(m, &w, group_of);
    }
out:
    free(d);
    free(term);
    free(w.x);
    free(w.row);
    free(w.tmp);
    free(w.near);
    free(w.reliable);
    free(w.parent);
    free(w.label);
    return groups;
}

/* Pods: sets of groups closer to one another than to any other group, as
 * the racks of a three-level fat tree's pod are (their pairs climb to the
 * pod's switches; pairs across pods climb one level more and cross two
 * more links: docs/concepts/model.md, "Pods"). Per pair of groups the
 * median latency over up to POD_SAMPLE nodes of each, the groups' own
 * terms removed (a rack whose uplink adds latency to all its pairs, as a
 * slow NIC to a node's); a group's row of these, sorted, splits at its
 * first step larger than (LEVEL_GAP - 1) x the typical distance between
 * nearest groups beyond a rack's own (their NICs' part). The
 * groups before the step are its pod mates; a pod stands only where every
 * mate names the same set (an ultrametric level: a two-level tree has
 * none, a torus or a dragonfly's routers name overlapping sets), and only
 * with two such pods or more. */
#define POD_SAMPLE 16

static double group_distance(const rw_model *m, const int32_t *group_of, int g, int h, double *v)
{
    int n = m->n_nodes, a[POD_SAMPLE], b[POD_SAMPLE], na = 0, nb = 0, k = 0;
    for (int i = 0; i < n; i++) {
        if (group_of[i] == g && na < POD_SAMPLE)
            a[na++] = i;
        if (group_of[i] == h && nb < POD_SAMPLE)
            b[nb++] = i;
    }
    for (int x = 0; x < na; x++)
        for (int y = 0; y < nb; y++)
            if (a[x] != b[y])
                v[k++] = distance(m, a[x], b[y]);
    return finite_median(v, k);
}

int rw_model_pods(const rw_model *m, const int32_t *group_of, int groups, int32_t *pod_of)
{
    int G = groups;
    for (int g = 0; g < G; g++)
        pod_of[g] = g;
    if (G < 4 || !group_of)
        return G;
    double *d = malloc((size_t)G * G * sizeof *d), *row = malloc((size_t)G * sizeof *row);
    double *v = malloc(POD_SAMPLE * POD_SAMPLE * sizeof *v), *x = malloc((size_t)G * G * sizeof *x);
    double *term = malloc((size_t)G * sizeof *term), *tmp = malloc((size_t)G * sizeof *tmp);
    unsigned char *near = calloc((size_t)G * G, 1);
    int pods = -1;
    if (!d || !row || !v || !x || !term || !tmp || !near) {
        rw_fail(RW_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int g = 0; g < G; g++)
        for (int h = g; h < G; h++)
            d[g * G + h] = d[h * G + g] = group_distance(m, group_of, g, h, v);
    /* A rack's own part (its NICs): the typical distance inside a group;
     * the scale of a level: the typical nearest group beyond it. */
    int k = 0;
    for (int g = 0; g < G; g++)
        if (isfinite(d[g * G + g]))
            row[k++] = d[g * G + g];
    double inside = k ? rw_median(row, (size_t)k) : NAN;
    k = 0;
    for (int g = 0; g < G; g++) {
        double least = INFINITY;
        for (int h = 0; h < G; h++)
            if (h != g && isfinite(d[g * G + h]))
                least = fmin(least, d[g * G + h]);
        if (isfinite(least))
            row[k++] = least;
    }
    double level = k ? rw_median(row, (size_t)k) - inside : NAN;
    pods = G;
    /* Groups are racks where the nearest other group is a level gap
     * beyond a group's inside (as rw_model_groups cut them); groups of
     * routers' single nodes (a torus) have no rack above which to look. */
    if (!(level > (LEVEL_GAP - 1) * inside))
        goto out;
    /* A rack whose uplink adds latency shifts its row and column as a slow
     * NIC shifts a node's: the groups' own terms come off as the nodes'
     * do (node_terms, shared_terms_off on the groups' distances). */
    for (int g = 0; g < G; g++)
        for (int h = 0; h < G; h++)
            x[g * G + h] = g == h ? NAN : d[g * G + h];
    node_terms(G, x, term, tmp, row);
    shared_terms_off(G, x, term, row, tmp);
    for (int g = 0; g < G; g++)
        for (int h = 0; h < G; h++)
            x[g * G + h] -= term[g] + term[h];
    for (int g = 0; g < G; g++) {
        k = 0;
        for (int h = 0; h < G; h++)
            if (h != g && isfinite(x[g * G + h]))
                row[k++] = x[g * G + h];
        qsort(row, (size_t)k, sizeof *row, cmp_double);
        double cut = NAN;
        for (int t = 0; t + 1 < k && isnan(cut); t++)
            if (row[t + 1] - row[t] > (LEVEL_GAP - 1) * level)
                cut = row[t];
        for (int h = 0; h < G && !isnan(cut); h++)
            near[g * G + h] = h != g && x[g * G + h] <= cut;
    }
    /* Pods where every mate names the same mates; the others stay alone. */
    for (int g = 0; g < G; g++) {
        int same = 1, mates = 0;
        for (int h = 0; h < G && same; h++) {
            if (h == g || !near[g * G + h])
                continue;
            mates++;
            for (int f = 0; f < G && same; f++)
                same = (f == g || near[g * G + f]) == (f == h || near[h * G + f]);
        }
        if (!same || !mates)
            continue;
        for (int h = 0; h < G; h++)
            if (near[g * G + h] && h < pod_of[g])
                pod_of[g] = h; /* the pod's first group names it */
    }
    /* Numbered densely in order of first group. */
    for (int g = 0; g < G; g++)
        row[g] = -1;
    pods = 0;
    for (int g = 0; g < G; g++) {
        if (row[pod_of[g]] < 0)
            row[pod_of[g]] = pods++;
        pod_of[g] = (int32_t)row[pod_of[g]];
    }
    /* One set of close groups against groups alone is one group's own
     * distance (a rack whose uplink adds latency), not a level: pods need
     * two of two groups or more. */
    int wide = 0;
    for (int p = 0; p < pods; p++) {
        k = 0;
        for (int g = 0; g < G; g++)
            k += pod_of[g] == p;
        wide += k >= 2;
    }
    if (wide < 2)
        for (int g = 0; g < G; g++)
            pod_of[g] = g;
    pods = wide < 2 ? G : pods;
out:
    free(d);
    free(row);
    free(v);
    free(x);
    free(term);
    free(tmp);
    free(near);
    return pods;
}
