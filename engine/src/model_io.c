/* Model file reader and writer (format: docs/reference/formats.md, "Model file").
 * Line oriented text: a keyword, then whitespace-separated fields. The
 * header (sizes, nodes) comes before the per-pair lines. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 64

/* ------------------------------------------------------------------ write */

static const char *state_name(uint8_t s)
{
    return s == RW_PAIR_MEASURED ? "measured" : s == RW_PAIR_MISSING ? "missing" : "unprobed";
}

static void write_stat_line(FILE *f, const char *kw, const char *who, int64_t size, const rw_stat *st)
{
    fprintf(f, "%s %s %lld %.10g %.10g %.10g %.10g %d\n", kw, who, (long long)size, st->min,
            st->median, st->max, st->jitter, st->count);
}

/* Per-node overheads, NIC caps and groups: a line each when known. */
static void write_node_structure(const rw_model *m, FILE *f)
{
    int n = m->n_nodes, header = 0;
    for (int i = 0; i < n; i++) {
        int has_o = !isnan(m->overhead[i]), has_nic = !isnan(m->inject[i]) || !isnan(m->eject[i]);
        int has_or = !isnan(m->recv_overhead[i]), has_dx = !isnan(m->duplex[i]);
        if ((has_o || has_or || has_nic || has_dx || m->group_of[i] >= 0) && !header++)
            fprintf(f, "# overhead <node> <send_overhead_s>\n"
                       "# recv-overhead <node> <receive_overhead_s>\n"
                       "# nic <node> <inject_B_per_s> <eject_B_per_s>\n"
                       "# duplex <node> <send_plus_receive_B_per_s>\n"
                       "# group <node> <group>\n");
        if (has_o)
            fprintf(f, "overhead %d %.10g\n", i, m->overhead[i]);
        if (has_or)
            fprintf(f, "recv-overhead %d %.10g\n", i, m->recv_overhead[i]);
        if (has_nic)
            fprintf(f, "nic %d %.10g %.10g\n", i, m->inject[i], m->eject[i]);
        if (has_dx)
            fprintf(f, "duplex %d %.10g\n", i, m->duplex[i]);
        if (m->group_of[i] >= 0)
            fprintf(f, "group %d %d\n", i, (int)m->group_of[i]);
    }
}

static void write_groups(FILE *f, int32_t n, const int32_t *list)
{
    if (n == 0) {
        fprintf(f, " *");
        return;
    }
    for (int32_t k = 0; k < n; k++)
        fprintf(f, "%c%d", k ? ',' : ' ', (int)list[k]);
}

static void write_links(const rw_model *m, FILE *f)
{
    if (m->n_links)
        fprintf(f, "# link <name> <capacity_B_per_s> <from_groups> <to_groups> (* = every group)\n");
    for (int32_t l = 0; l < m->n_links; l++) {
        const rw_link *k = &m->links[l];
        fprintf(f, "link %s %.10g", k->name, k->capacity);
        write_groups(f, k->n_from, k->from);
        write_groups(f, k->n_to, k->to);
        fprintf(f, "\n");
    }
}

static void write_spreads(const rw_model *m, FILE *f)
{
    if (m->n_spreads)
        fprintf(f, "# capacity-spread <name> <low_B_per_s> <median_B_per_s> <high_B_per_s> <noise> <times>\n");
    for (int32_t l = 0; l < m->n_spreads; l++) {
        const rw_spread *k = &m->spreads[l];
        fprintf(f, "capacity-spread %s %.10g %.10g %.10g %.10g %d\n", k->name, k->low, k->median, k->high, k->noise,
                (int)k->times);
    }
}

static void write_hops(const rw_model *m, FILE *f)
{
    if (m->n_hops)
        fprintf(f, "# hop <from_node> <to_node> <capacity_B_per_s> (a direct network's link, one direction)\n");
    for (int32_t h = 0; h < m->n_hops; h++)
        fprintf(f, "hop %d %d %.10g\n", (int)m->hops[h].from, (int)m->hops[h].to, m->hops[h].capacity);
}

static int write_body(const rw_model *m, FILE *f)
{
    int n = m->n_nodes, ns = m->n_sizes;
    /* The oldest version that holds what the model has: files without
     * figures inside the node stay readable by rankwise before format 3,
     * files without receive overheads by rankwise before format 4,
     * files without capacity spreads by rankwise before format 5,
     * files without duplex caps by rankwise before format 6,
     * files without hops by rankwise before format 7. */
    int node_costs = 0, recv_overheads = 0, duplex = 0;
    for (int l = 0; l < RW_MODEL_NODE_LEVELS; l++)
        node_costs |= !isnan(m->node_alpha[l]);
    for (int i = 0; i < n; i++) {
        recv_overheads |= !isnan(m->recv_overhead[i]);
        duplex |= !isnan(m->duplex[i]);
    }
    fprintf(f, "rankwise-model %d\n", m->n_hops ? 7 : duplex ? 6 : m->n_spreads ? 5 : recv_overheads ? 4 : node_costs ? 3 : 2);
    fprintf(f, "created %.3f\n", m->created);
    if (m->source[0]) /* no line for no source */
        fprintf(f, "source %s\n", m->source);
    fprintf(f, "duration %.10g\n", m->duration);
    fprintf(f, "settings mode=%s repetitions=%d rounds=%d warmup=%d timeout=%.10g time_budget=%.10g\n",
            m->settings.mode == RW_MODE_ISOLATED ? "isolated" : "concurrent",
            m->settings.repetitions, m->settings.rounds, m->settings.warmup, m->settings.timeout,
            m->settings.time_budget);
    fprintf(f, "sizes");
    for (int s = 0; s < ns; s++)
        fprintf(f, " %lld", (long long)m->sizes[s]);
    fprintf(f, "\n");
    if (m->knee > 0)
        fprintf(f, "knee %lld\n", (long long)m->knee);
    if (node_costs)
        fprintf(f, "# node-cost <level> <alpha_s> <beta_s_per_byte> (inside the node, docs/concepts/inside-node.md)\n");
    for (int l = 0; l < RW_MODEL_NODE_LEVELS; l++)
        if (!isnan(m->node_alpha[l]))
            fprintf(f, "node-cost %s %.10g %.10g\n", rw_model_node_levels[l], m->node_alpha[l],
                    m->node_beta[l]);
    fprintf(f, "nodes %d\n", n);
    fprintf(f, "# node <index> <name> <ranks>\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "node %d %s %d\n", i, m->node_names[i], m->ranks_per_node[i]);

    fprintf(f, "# intra <node> <state> <alpha_s> <beta_s_per_byte>\n"
               "# intra-rtt <node> <size_B> <min_s> <median_s> <max_s> <jitter> <samples>\n");
    for (int i = 0; i < n; i++) {
        if (m->intra_state[i] == RW_PAIR_UNPROBED)
            continue;
        fprintf(f, "intra %d %s %.10g %.10g\n", i, state_name(m->intra_state[i]),
                m->intra_alpha[i], m->intra_beta[i]);
        char who[16];
        snprintf(who, sizeof who, "%d", i);
        for (int s = 0; s < ns; s++)
            if (m->intra_stats[(size_t)i * ns + s].count > 0)
                write_stat_line(f, "intra-rtt", who, m->sizes[s], &m->intra_stats[(size_t)i * ns + s]);
    }

    write_node_structure(m, f);

    fprintf(f, "# pair <src> <dst> <state> <alpha_s> <beta_s_per_byte> <measured_at>\n"
               "# pair-large <src> <dst> <alpha_s> <beta_s_per_byte> (sizes >= knee)\n"
               "# rtt <src> <dst> <size_B> <min_s> <median_s> <max_s> <jitter> <samples>\n");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            size_t p = (size_t)i * n + j;
            if (i == j || m->pair_state[p] == RW_PAIR_UNPROBED)
                continue;
            fprintf(f, "pair %d %d %s %.10g %.10g %.3f\n", i, j, state_name(m->pair_state[p]),
                    m->alpha[p], m->beta[p], m->measured_at[p]);
            if (!isnan(m->alpha_large[p]))
                fprintf(f, "pair-large %d %d %.10g %.10g\n", i, j, m->alpha_large[p], m->beta_large[p]);
            char who[32];
            snprintf(who, sizeof who, "%d %d", i, j);
            for (int s = 0; s < ns; s++)
                if (m->pair_stats[p * ns + s].count > 0)
                    write_stat_line(f, "rtt", who, m->sizes[s], &m->pair_stats[p * ns + s]);
        }
    write_links(m, f);
    write_spreads(m, f);
    write_hops(m, f);
    return ferror(f) ? -1 : 0;
}

static int write_model_body(const void *m, FILE *f) { return write_body(m, f); }

/* Never write what the reader refuses: RW_ERR_ARG naming path and why. */
static rw_status check_writable(const rw_model *m, const char *path)
{
    if (rw_model_check(m) == RW_OK)
        return RW_OK;
    char why[512];
    snprintf(why, sizeof why, "%s", rw_last_error());
    return rw_fail(RW_ERR_ARG, "%s: cannot write: %s", path, why);
}

rw_status rw_model_write_stream(const rw_model *m, FILE *f, const char *path)
{
    rw_status st = check_writable(m, path);
    if (st)
        return st;
    return write_body(m, f) ? rw_fail(RW_ERR_IO, "%s: cannot write", path) : RW_OK;
}

rw_status rw_model_write(const rw_model *m, const char *path)
{
    rw_status st = check_writable(m, path);
    return st ? st : rw_write_atomic(path, write_model_body, m);
}

/* ------------------------------------------------------------------- read */

typedef struct reader {
    const char *path;
    int line;
    int version; /* of the file, from its first line */
    char *fields[MAX_FIELDS];
    int nfields;
} reader;

#define PARSE_ERROR(r, ...) rw_parse_fail((r)->path, (r)->line, __VA_ARGS__)


static int split(char *line, char **fields)
{
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_FIELDS)
            return -1;
        fields[n++] = tok;
    }
    return n;
}

static rw_status get_long(const reader *r, int k, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(r->fields[k], &end, 10);
    if (errno || *end || end == r->fields[k] || v < lo || v > hi)
        return PARSE_ERROR(r, "'%s': field %d ('%s') must be an integer in [%lld, %lld]",
                           r->fields[0], k, r->fields[k], lo, hi);
    *out = v;
    return RW_OK;
}

/* A double, or NaN written as "nan" / "-". */
static rw_status get_double(const reader *r, int k, double *out)
{
    const char *s = r->fields[k];
    if (strcmp(s, "-") == 0 || strcmp(s, "nan") == 0 || strcmp(s, "-nan") == 0) {
        *out = NAN;
        return RW_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on underflow still gives the nearest subnormal or zero: the
     * writer's %.10g of a tiny number must read back. */
    if ((errno == ERANGE && fabs(v) > 1) || *end || end == s || isinf(v))
        return PARSE_ERROR(r, "'%s': field %d ('%s') is not a number", r->fields[0], k, s);
    *out = isnan(v) ? NAN : v; /* "-nan(1)" is the same unknown as "nan" */
    return RW_OK;
}

/* A double within b (NaN only when unknown_ok). */
static rw_status get_bounded(const reader *r, int k, const rw_bound *b, int unknown_ok, double *out)
{
    rw_status st = get_double(r, k, out);
    if (st)
        return st;
    const char *why = rw_bound_problem(b, *out, unknown_ok);
    return why ? PARSE_ERROR(r, "'%s': field %d: %s", r->fields[0], k, why) : RW_OK;
}

static rw_status want_fields(const reader *r, int n)
{
    if (r->nfields != n)
        return PARSE_ERROR(r, "'%s' takes %d fields, found %d", r->fields[0], n - 1, r->nfields - 1);
    return RW_OK;
}

/* Keywords a format version introduced are refused in older files. */
static rw_status need_version(const reader *r, int version)
{
    if (r->version < version)
        return PARSE_ERROR(r, "'%s' needs model format version %d (the file says %d)", r->fields[0],
                           version, r->version);
    return RW_OK;
}

static rw_status get_state(const reader *r, int k, uint8_t *out)
{
    const char *s = r->fields[k];
    if (strcmp(s, "measured") == 0)
        *out = RW_PAIR_MEASURED;
    else if (strcmp(s, "missing") == 0)
        *out = RW_PAIR_MISSING;
    else
        return PARSE_ERROR(r, "unknown state '%s' (expected measured or missing)", s);
    return RW_OK;
}

/* Everything read before the per-pair lines. */
typedef struct header {
    int version;
    double created;
    double duration;
    char source[256];
    rw_probe_settings settings;
    int n_sizes;
    int64_t sizes[MAX_FIELDS];
    int n_nodes; /* -1 until "nodes" */
    char **names;
    int32_t *ranks;
    int names_seen;
    int64_t knee;
    double node_alpha[RW_MODEL_NODE_LEVELS], node_beta[RW_MODEL_NODE_LEVELS];
} header;

static rw_status parse_settings(const reader *r, rw_probe_settings *st)
{
    for (int k = 1; k < r->nfields; k++) {
        char *eq = strchr(r->fields[k], '=');
        if (!eq)
            return PARSE_ERROR(r, "settings: expected key=value, found '%s'", r->fields[k]);
        *eq = '\0';
        const char *key = r->fields[k], *val = eq + 1;
        int32_t *count = !strcmp(key, "repetitions") ? &st->repetitions
                         : !strcmp(key, "rounds")    ? &st->rounds
                         : !strcmp(key, "warmup")    ? &st->warmup
                                                     : NULL;
        double *seconds = !strcmp(key, "timeout")       ? &st->timeout
                          : !strcmp(key, "time_budget") ? &st->time_budget
                                                        : NULL;
        if (strcmp(key, "mode") == 0) {
            if (strcmp(val, "concurrent") == 0)
                st->mode = RW_MODE_CONCURRENT;
            else if (strcmp(val, "isolated") == 0)
                st->mode = RW_MODE_ISOLATED;
            else
                return PARSE_ERROR(r, "settings: unknown mode '%s'", val);
        } else if (count) {
            /* Digits only, range checked before any conversion (3e9 is no int32). */
            long long lo = count == &st->warmup ? 0 : 1, v;
            char *end;
            errno = 0;
            v = strtoll(val, &end, 10);
            if (errno || *end || end == val || *val == '+' || v < lo || v > INT32_MAX)
                return PARSE_ERROR(r, "settings: %s must be an integer in [%lld, %d], found '%s'",
                                   key, lo, INT32_MAX, val);
            *count = (int32_t)v;
        } else if (seconds) {
            char *end;
            errno = 0;
            double v = strtod(val, &end);
            /* ERANGE on underflow: a subnormal is still the number written. */
            if ((errno == ERANGE && fabs(v) > 1) || *end || end == val || !isfinite(v) ||
                rw_bound_problem(&rw_bound_duration, v, 0))
                return PARSE_ERROR(r, "settings: %s must be a number of seconds in [0, %g], found '%s'",
                                   key, RW_MODEL_MAX_DURATION, val);
            *seconds = v;
        } else {
            return PARSE_ERROR(r, "settings: unknown key '%s'", key);
        }
    }
    return RW_OK;
}

static rw_status parse_header_line(reader *r, header *h)
{
    const char *kw = r->fields[0];
    rw_status st;
    long long v = 0;
    if (strcmp(kw, "created") == 0) {
        if ((st = want_fields(r, 2)) || (st = get_bounded(r, 1, &rw_bound_timestamp, 1, &h->created)))
            return st;
    } else if (strcmp(kw, "duration") == 0) {
        if ((st = want_fields(r, 2)) || (st = get_bounded(r, 1, &rw_bound_duration, 1, &h->duration)))
            return st;
    } else if (strcmp(kw, "settings") == 0) {
        return parse_settings(r, &h->settings);
    } else if (strcmp(kw, "sizes") == 0) {
        if (r->nfields < 2)
            return PARSE_ERROR(r, "'sizes' needs at least one size");
        h->n_sizes = r->nfields - 1;
        for (int k = 1; k < r->nfields; k++) {
            if ((st = get_long(r, k, 0, RW_MODEL_MAX_SIZE, &v)))
                return st;
            h->sizes[k - 1] = v;
            if (k > 1 && h->sizes[k - 1] <= h->sizes[k - 2])
                return PARSE_ERROR(r, "'sizes' must be increasing");
        }
    } else if (strcmp(kw, "knee") == 0) {
        if ((st = need_version(r, 2)) || (st = want_fields(r, 2)) ||
            (st = get_long(r, 1, 0, RW_MODEL_MAX_SIZE, &v)))
            return st;
        h->knee = v;
    } else if (strcmp(kw, "node-cost") == 0) {
        int l = 0;
        while (l < RW_MODEL_NODE_LEVELS && strcmp(r->fields[1 < r->nfields ? 1 : 0], rw_model_node_levels[l]))
            l++;
        if ((st = need_version(r, 3)) || (st = want_fields(r, 4)))
            return st;
        if (l == RW_MODEL_NODE_LEVELS)
            return PARSE_ERROR(r, "node-cost: unknown level '%s' (expected cache, domain, package or node)",
                               r->fields[1]);
        if (!isnan(h->node_alpha[l]))
            return PARSE_ERROR(r, "node-cost %s given twice", rw_model_node_levels[l]);
        if ((st = get_bounded(r, 2, &rw_bound_alpha, 0, &h->node_alpha[l])) ||
            (st = get_bounded(r, 3, &rw_bound_beta, 0, &h->node_beta[l])))
            return st;
    } else if (strcmp(kw, "nodes") == 0) {
        if (h->n_nodes >= 0)
            return PARSE_ERROR(r, "'nodes' given twice");
        if ((st = want_fields(r, 2)) || (st = get_long(r, 1, 1, RW_MODEL_MAX_NODES, &v)))
            return st;
        h->n_nodes = (int)v;
        h->names = calloc((size_t)v, sizeof *h->names);
        h->ranks = calloc((size_t)v, sizeof *h->ranks);
        if (!h->names || !h->ranks)
            return rw_fail(RW_ERR_NOMEM, "out of memory");
    } else if (strcmp(kw, "node") == 0) {
        if (h->n_nodes < 0)
            return PARSE_ERROR(r, "'node' before 'nodes'");
        if ((st = want_fields(r, 4)) || (st = get_long(r, 1, 0, h->n_nodes - 1, &v)))
            return st;
        int i = (int)v;
        if (h->names[i])
            return PARSE_ERROR(r, "node %d declared twice", i);
        const char *why = rw_name_problem(r->fields[2]);
        if (why)
            return PARSE_ERROR(r, "node %d: the name %s", i, why);
        for (int k = 0; k < h->n_nodes; k++)
            if (h->names[k] && strcmp(h->names[k], r->fields[2]) == 0)
                return PARSE_ERROR(r, "duplicate node name '%s'", r->fields[2]);
        if ((st = get_long(r, 3, 1, RW_MODEL_MAX_RANKS_PER_NODE, &v)))
            return st;
        if (!(h->names[i] = strdup(r->fields[2])))
            return rw_fail(RW_ERR_NOMEM, "out of memory");
        h->ranks[i] = (int32_t)v;
        h->names_seen++;
    } else {
        return PARSE_ERROR(r, "unknown keyword '%s'", kw);
    }
    return RW_OK;
}

static rw_status make_model(reader *r, header *h, rw_model **out)
{
    if (h->n_sizes == 0)
        return PARSE_ERROR(r, "per-pair data before 'sizes'");
    if (h->n_nodes < 0)
        return PARSE_ERROR(r, "per-pair data before 'nodes'");
    if (h->names_seen != h->n_nodes)
        return PARSE_ERROR(r, "'nodes %d' but %d 'node' lines before the per-pair data",
                           h->n_nodes, h->names_seen);
    rw_status st = rw_model_create(h->n_nodes, (const char *const *)h->names, h->ranks,
                                   h->n_sizes, h->sizes, out);
    if (st)
        return st;
    (*out)->created = h->created;
    (*out)->duration = h->duration;
    (*out)->settings = h->settings;
    (*out)->knee = h->knee;
    memcpy((*out)->node_alpha, h->node_alpha, sizeof h->node_alpha);
    memcpy((*out)->node_beta, h->node_beta, sizeof h->node_beta);
    memcpy((*out)->source, h->source, sizeof h->source);
    return RW_OK;
}

static rw_status find_size(const reader *r, const rw_model *m, int k, int *s_out)
{
    long long v = 0;
    rw_status st = get_long(r, k, 0, RW_MODEL_MAX_SIZE, &v);
    if (st)
        return st;
    for (int s = 0; s < m->n_sizes; s++)
        if (m->sizes[s] == v) {
            *s_out = s;
            return RW_OK;
        }
    return PARSE_ERROR(r, "size %lld is not in 'sizes'", v);
}

static rw_status get_stat(const reader *r, int k, rw_stat *s)
{
    rw_status st;
    long long c;
    /* The writer leaves statistics without samples out: a line has some. */
    if ((st = get_bounded(r, k, &rw_bound_rtt, 0, &s->min)) ||
        (st = get_bounded(r, k + 1, &rw_bound_rtt, 0, &s->median)) ||
        (st = get_bounded(r, k + 2, &rw_bound_rtt, 0, &s->max)) ||
        (st = get_bounded(r, k + 3, &rw_bound_jitter, 0, &s->jitter)) ||
        (st = get_long(r, k + 4, 1, INT32_MAX, &c)))
        return st;
    s->count = (int32_t)c;
    return RW_OK;
}

static int is_structure_keyword(const char *kw)
{
    return !strcmp(kw, "overhead") || !strcmp(kw, "recv-overhead") || !strcmp(kw, "nic") || !strcmp(kw, "group") ||
           !strcmp(kw, "duplex") || !strcmp(kw, "pair-large") || !strcmp(kw, "link") || !strcmp(kw, "capacity-spread") ||
           !strcmp(kw, "hop");
}

/* A group list: '*' (every group) or comma-separated group indices. */
static rw_status get_groups(const reader *r, int k, int n_nodes, int32_t *list, int32_t *n)
{
    const char *s = r->fields[k];
    *n = 0;
    if (strcmp(s, "*") == 0)
        return RW_OK;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v < 0 || v >= n_nodes || (*end && *end != ',') || *n >= n_nodes)
            return PARSE_ERROR(r, "'%s': field %d ('%s') must be '*' or groups in [0, %d) joined by ','",
                               r->fields[0], k, r->fields[k], n_nodes);
        list[(*n)++] = (int32_t)v;
        s = *end ? end + 1 : end;
        if (*end == ',' && !*s)
            return PARSE_ERROR(r, "'%s': field %d ends with ','", r->fields[0], k);
    }
    return RW_OK;
}

static rw_status parse_link(reader *r, rw_model *m)
{
    rw_status st;
    double cap;
    const char *why = rw_name_problem(r->fields[1]);
    if (why)
        return PARSE_ERROR(r, "link: the name %s", why);
    for (int32_t l = 0; l < m->n_links; l++)
        if (strcmp(m->links[l].name, r->fields[1]) == 0)
            return PARSE_ERROR(r, "link '%s' given twice", r->fields[1]);
    if ((st = get_double(r, 2, &cap)))
        return st;
    if ((why = rw_bandwidth_problem(cap, 0)))
        return PARSE_ERROR(r, "link %s: %s", r->fields[1], why);
    int32_t *from = malloc((size_t)m->n_nodes * sizeof *from), *to = malloc((size_t)m->n_nodes * sizeof *to);
    int32_t n_from = 0, n_to = 0;
    if (!from || !to)
        st = rw_fail(RW_ERR_NOMEM, "out of memory");
    if (!st && !(st = get_groups(r, 3, m->n_nodes, from, &n_from)) &&
        !(st = get_groups(r, 4, m->n_nodes, to, &n_to)))
        st = rw_model_add_link(m, r->fields[1], cap, n_from, from, n_to, to);
    free(from);
    free(to);
    return st;
}

static rw_status parse_spread(reader *r, rw_model *m)
{
    rw_status st;
    double v[4];
    long long times = 0;
    const char *why = rw_name_problem(r->fields[1]);
    if (why)
        return PARSE_ERROR(r, "capacity-spread: the name %s", why);
    for (int32_t l = 0; l < m->n_spreads; l++)
        if (strcmp(m->spreads[l].name, r->fields[1]) == 0)
            return PARSE_ERROR(r, "capacity-spread '%s' given twice", r->fields[1]);
    for (int k = 0; k < 4; k++)
        if ((st = get_double(r, 2 + k, &v[k])))
            return st;
    if ((st = get_long(r, 6, 1, INT32_MAX, &times)))
        return st;
    if ((why = rw_spread_problem(v[0], v[1], v[2], v[3], (int32_t)times)))
        return PARSE_ERROR(r, "capacity-spread %s: %s", r->fields[1], why);
    return rw_model_add_spread(m, r->fields[1], v[0], v[1], v[2], v[3], (int32_t)times);
}

/* overhead, nic, group, pair-large, link (format 2), recv-overhead (4),
 * capacity-spread (5), duplex (6), hop (7). */
static rw_status parse_structure_line(reader *r, rw_model *m)
{
    const char *kw = r->fields[0];
    int n = m->n_nodes;
    long long i = 0, j = 0;
    rw_status st;
    if (strcmp(kw, "link") == 0)
        return (st = want_fields(r, 5)) ? st : parse_link(r, m);
    if (strcmp(kw, "capacity-spread") == 0)
        return (st = need_version(r, 5)) || (st = want_fields(r, 7)) ? st : parse_spread(r, m);
    if (strcmp(kw, "hop") == 0) {
        double cap = 0;
        const char *why;
        if ((st = need_version(r, 7)) || (st = want_fields(r, 4)) || (st = get_long(r, 1, 0, n - 1, &i)) ||
            (st = get_long(r, 2, 0, n - 1, &j)) || (st = get_double(r, 3, &cap)))
            return st;
        if (i == j)
            return PARSE_ERROR(r, "hop %lld %lld: a node with itself", i, j);
        if ((why = rw_bandwidth_problem(cap, 0)))
            return PARSE_ERROR(r, "hop %lld %lld: %s", i, j, why);
        int32_t before = m->n_hops; /* rw_model_add_hop replaces a hop given again */
        if (rw_model_add_hop(m, (int32_t)i, (int32_t)j, cap))
            return PARSE_ERROR(r, "%s", rw_last_error());
        return m->n_hops > before ? RW_OK : PARSE_ERROR(r, "hop %lld %lld: given twice", i, j);
    }
    if (strcmp(kw, "pair-large") == 0) {
        if ((st = want_fields(r, 5)) || (st = get_long(r, 1, 0, n - 1, &i)) ||
            (st = get_long(r, 2, 0, n - 1, &j)))
            return st;
        size_t p = (size_t)i * n + j;
        if (m->pair_state[p] != RW_PAIR_MEASURED)
            return PARSE_ERROR(r, "pair-large %lld %lld: after a 'pair' line of a measured pair only", i, j);
        return (st = get_bounded(r, 3, &rw_bound_alpha, 0, &m->alpha_large[p])) ? st
               : get_bounded(r, 4, &rw_bound_beta, 0, &m->beta_large[p]);
    }
    int fields = strcmp(kw, "nic") == 0 ? 4 : 3;
    if ((st = want_fields(r, fields)) || (st = get_long(r, 1, 0, n - 1, &i)))
        return st;
    if (strcmp(kw, "overhead") == 0)
        return get_bounded(r, 2, &rw_bound_overhead, 0, &m->overhead[i]);
    if (strcmp(kw, "recv-overhead") == 0)
        return (st = need_version(r, 4)) ? st : get_bounded(r, 2, &rw_bound_overhead, 0, &m->recv_overhead[i]);
    const char *why;
    if (strcmp(kw, "duplex") == 0) {
        if ((st = need_version(r, 6)) || (st = get_double(r, 2, &m->duplex[i])))
            return st;
        return (why = rw_bandwidth_problem(m->duplex[i], 1)) ? PARSE_ERROR(r, "duplex %lld: %s", i, why) : RW_OK;
    }
    if (strcmp(kw, "group") == 0) {
        long long g = 0;
        if ((st = get_long(r, 2, -1, n - 1, &g)))
            return st;
        m->group_of[i] = (int32_t)g;
        return RW_OK;
    }
    if ((st = get_double(r, 2, &m->inject[i])) || (st = get_double(r, 3, &m->eject[i])))
        return st;
    if ((why = rw_bandwidth_problem(m->inject[i], 1)) || (why = rw_bandwidth_problem(m->eject[i], 1)))
        return PARSE_ERROR(r, "nic %lld: %s", i, why);
    return RW_OK;
}

static rw_status parse_data_line(reader *r, rw_model *m)
{
    const char *kw = r->fields[0];
    int n = m->n_nodes;
    long long i = 0, j = 0;
    int s = 0;
    rw_status st;
    if (strcmp(kw, "pair") == 0) {
        uint8_t state = RW_PAIR_UNPROBED;
        size_t p;
        if ((st = want_fields(r, 7)) || (st = get_long(r, 1, 0, n - 1, &i)) ||
            (st = get_long(r, 2, 0, n - 1, &j)) || (st = get_state(r, 3, &state)))
            return st;
        if (i == j)
            return PARSE_ERROR(r, "pair %lld %lld: a node with itself is an 'intra' line", i, j);
        p = (size_t)i * n + j;
        m->pair_state[p] = state;
        int unknown_ok = state == RW_PAIR_MISSING; /* a measured pair has its fit */
        if ((st = get_bounded(r, 4, &rw_bound_alpha, unknown_ok, &m->alpha[p])) ||
            (st = get_bounded(r, 5, &rw_bound_beta, unknown_ok, &m->beta[p])) ||
            (st = get_bounded(r, 6, &rw_bound_timestamp, 1, &m->measured_at[p])))
            return st;
    } else if (strcmp(kw, "rtt") == 0) {
        if ((st = want_fields(r, 9)) || (st = get_long(r, 1, 0, n - 1, &i)) ||
            (st = get_long(r, 2, 0, n - 1, &j)) || (st = find_size(r, m, 3, &s)))
            return st;
        size_t p = (size_t)i * n + j;
        if (m->pair_state[p] == RW_PAIR_UNPROBED)
            return PARSE_ERROR(r, "rtt %lld %lld before its 'pair' line", i, j);
        return get_stat(r, 4, &m->pair_stats[p * m->n_sizes + s]);
    } else if (strcmp(kw, "intra") == 0) {
        if ((st = want_fields(r, 5)) || (st = get_long(r, 1, 0, n - 1, &i)) ||
            (st = get_state(r, 2, &m->intra_state[i])))
            return st;
        int unknown_ok = m->intra_state[i] == RW_PAIR_MISSING;
        if ((st = get_bounded(r, 3, &rw_bound_alpha, unknown_ok, &m->intra_alpha[i])) ||
            (st = get_bounded(r, 4, &rw_bound_beta, unknown_ok, &m->intra_beta[i])))
            return st;
    } else if (strcmp(kw, "intra-rtt") == 0) {
        if ((st = want_fields(r, 8)) || (st = get_long(r, 1, 0, n - 1, &i)) ||
            (st = find_size(r, m, 2, &s)))
            return st;
        if (m->intra_state[i] == RW_PAIR_UNPROBED)
            return PARSE_ERROR(r, "intra-rtt %lld before its 'intra' line", i);
        return get_stat(r, 3, &m->intra_stats[(size_t)i * m->n_sizes + s]);
    } else if (is_structure_keyword(kw)) {
        if ((st = need_version(r, 2)))
            return st;
        return parse_structure_line(r, m);
    } else {
        return PARSE_ERROR(r, "unknown or misplaced keyword '%s'", kw);
    }
    return RW_OK;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int is_source_line(const char *line)
{
    while (is_blank(*line))
        line++;
    return strncmp(line, "source", 6) == 0 && (is_blank(line[6]) || line[6] == '\0');
}

/* source: the rest of the line, '#' included, blanks at its ends trimmed.
 * (Before format checks, the writer put "source -" for none: it reads as
 * the text "-", which reports show as no source.) */
static rw_status parse_source(const reader *r, char *line, char *out)
{
    while (is_blank(*line))
        line++;
    char *text = line + 6;
    while (is_blank(*text))
        text++;
    size_t len = strlen(text);
    while (len && is_blank(text[len - 1]))
        len--;
    if (len == 0)
        return PARSE_ERROR(r, "'source' needs a text");
    const char *why = rw_text_problem(text, len);
    if (why)
        return PARSE_ERROR(r, "'source' text %s", why);
    memcpy(out, text, len);
    out[len] = '\0';
    return RW_OK;
}

static int is_data_keyword(const char *kw)
{
    return !strcmp(kw, "pair") || !strcmp(kw, "rtt") || !strcmp(kw, "intra") || !strcmp(kw, "intra-rtt") ||
           is_structure_keyword(kw);
}

static rw_status read_stream(FILE *f, reader *r, header *h, rw_model **out)
{
    char *line = NULL;
    size_t cap = 0;
    rw_status st = RW_OK;
    rw_model *m = NULL;
    int seen_magic = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) != -1) {
        r->line++;
        if (memchr(line, '\0', (size_t)got)) {
            st = PARSE_ERROR(r, "a NUL byte (not a text file)");
            break;
        }
        if (seen_magic && !m && is_source_line(line)) {
            if ((st = parse_source(r, line, h->source)))
                break;
            continue;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        r->nfields = split(line, r->fields);
        if (r->nfields < 0) {
            st = PARSE_ERROR(r, "too many fields");
            break;
        }
        if (r->nfields == 0)
            continue;
        if (!seen_magic) {
            long long v = 0;
            if (strcmp(r->fields[0], "rankwise-model") != 0 || r->nfields != 2) {
                st = PARSE_ERROR(r, "not a rankwise model (expected 'rankwise-model %d')",
                                 RW_MODEL_FORMAT_VERSION);
                break;
            }
            if ((st = get_long(r, 1, 1, 1000, &v)))
                break;
            if (v > RW_MODEL_FORMAT_VERSION) {
                st = PARSE_ERROR(r, "model format version %lld is newer than this rankwise (%d)",
                                 v, RW_MODEL_FORMAT_VERSION);
                break;
            }
            r->version = (int)v;
            seen_magic = 1;
            continue;
        }
        if (!m && is_data_keyword(r->fields[0]) && (st = make_model(r, h, &m)))
            break;
        if ((st = m ? parse_data_line(r, m) : parse_header_line(r, h)))
            break;
    }
    free(line);
    if (!st && ferror(f))
        st = rw_fail(RW_ERR_IO, "%s: cannot read: %s", r->path, strerror(errno));
    if (!st && !seen_magic)
        st = rw_fail(RW_ERR_PARSE, "%s:%d: empty file, not a rankwise model", r->path, r->line);
    if (!st && !m) {
        r->line++;
        st = make_model(r, h, &m); /* a model with no pair measured yet */
    }
    /* Every rule was checked line by line; this keeps the promise that
     * what the reader returns, the writer writes, should a rule be added
     * to one and not the other. */
    if (!st && rw_model_check(m) != RW_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", rw_last_error());
        st = rw_fail(RW_ERR_PARSE, "%s: %s", r->path, why);
    }
    if (st) {
        rw_model_free(m);
        return st;
    }
    *out = m;
    return RW_OK;
}

rw_status rw_model_read_stream(FILE *f, const char *path, rw_model **out)
{
    *out = NULL;
    reader r = {.path = path};
    header h = {.n_nodes = -1, .created = NAN, .duration = NAN};
    for (int l = 0; l < RW_MODEL_NODE_LEVELS; l++)
        h.node_alpha[l] = h.node_beta[l] = NAN;
    h.settings = rw_probe_settings_default();
    rw_status st = read_stream(f, &r, &h, out);
    if (h.names)
        for (int i = 0; i < h.n_nodes; i++)
            free(h.names[i]);
    free(h.names);
    free(h.ranks);
    return st;
}

rw_status rw_model_read(const char *path, rw_model **out)
{
    *out = NULL;
    rw_status st;
    FILE *f = rw_open_text(path, &st);
    if (!f)
        return st;
    st = rw_model_read_stream(f, path, out);
    fclose(f);
    return st;
}
