/* The common harness of the benchmark programs: see harness.h.
 *
 * Options are parsed by hand rather than with getopt: under SMPI every
 * rank is a thread of one process and libc's getopt state (optind) would
 * be shared between them. */
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankwise.h"

#define DEFAULT_ITERATIONS 10
#define DEFAULT_WARMUP 2
#define DEFAULT_MAX_MEMORY (1LL << 30)
#define MAX_SIZE_VALUE (1LL << 50) /* 1 PiB: anything above is a typo */

/* SMPI 3.32 aborts on MPI_Pcontrol ("not yet implemented"): there the
 * profiler's own pause/resume do its job, when it is linked in (the
 * rankwise-bench-*-profiled builds); weak, so NULL without it. */
#ifdef RW_SMPI
#define RW_PROFILE_OPTIONAL
#include "rankwise_profile.h"
static void pcontrol(int level)
{
    if (level == 0 && rw_profile_pause)
        rw_profile_pause();
    else if (level != 0 && rw_profile_resume)
        rw_profile_resume();
}
#else
#define pcontrol(level) MPI_Pcontrol(level)
#endif

int rw_bench_fail(rw_bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
    return -1;
}

int rw_bench_report_error(const rw_bench *b)
{
    if (b->rank == 0) {
        fprintf(stderr, "%s: error: %s\n", b->program, b->error[0] ? b->error : "failed");
        fflush(stderr);
    }
    return 2;
}

/* ------------------------------------------------------------- values */
int rw_parse_size(const char *text, int64_t *out)
{
    const char *p = text;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (end[0] == 'i' && end[1] == 'B')
        end += 2;
    else if (end[0] == 'B')
        end++;
    if (*end || v > (unsigned long long)(MAX_SIZE_VALUE >> shift))
        return -1;
    *out = (int64_t)(v << shift);
    return 0;
}

static int add_size(rw_size_list *out, int64_t v)
{
    if (out->n == RW_BENCH_MAX_SIZES)
        return -1;
    out->v[out->n++] = v;
    return 0;
}

int rw_parse_sizes(const char *text, int64_t min, rw_size_list *out)
{
    out->n = 0;
    char *list = strdup(text), *save = NULL;
    if (!list)
        return -1;
    int bad = 0;
    for (char *tok = strtok_r(list, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        int64_t lo, hi;
        if (colon) { /* LO:HI, every power of two times LO up to HI */
            *colon = '\0';
            bad = rw_parse_size(tok, &lo) || rw_parse_size(colon + 1, &hi) || lo < 1 || hi < lo ||
                  lo < min;
            for (int64_t v = lo; !bad && v <= hi; v *= 2)
                bad = add_size(out, v);
        } else {
            bad = rw_parse_size(tok, &lo) || lo < min || add_size(out, lo);
        }
    }
    free(list);
    return !bad && out->n > 0 ? 0 : -1;
}

int rw_parse_dims(const char *text, int n, int *dims)
{
    const char *p = text;
    for (int i = 0; i < n; i++) {
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        char *end;
        long v = strtol(p, &end, 10);
        if (errno || v < 1 || v > (1L << 30))
            return -1;
        dims[i] = (int)v;
        if (i < n - 1 && *end != 'x' && *end != 'X')
            return -1;
        p = end + (i < n - 1);
    }
    return *p ? -1 : 0;
}

void rw_format_size(int64_t bytes, char *out, size_t len)
{
    static const char units[] = "TGMK";
    for (int k = 0; k < 4; k++) {
        int shift = 10 * (4 - k);
        if (bytes && bytes % (1LL << shift) == 0) {
            snprintf(out, len, "%lld%c", (long long)(bytes >> shift), units[k]);
            return;
        }
    }
    snprintf(out, len, "%lld", (long long)bytes);
}

/* ------------------------------------------------------------ options */
static const char common_help[] =
    "      --sizes LIST         message sizes: 1K,8K,1M or 1K:8M (powers of two), K = 1024\n"
    "      --iterations N       timed runs per size (default 10)\n"
    "      --warmup N           untimed runs before them (default 2)\n"
    "      --max-memory SIZE    buffers one rank may allocate; larger sizes are skipped\n"
    "                           with a note (default 1G)\n"
    "  -h, --help               this text\n";

static void print_usage(const rw_bench *b, const char *usage_line, const rw_bench_opt *opts, int n)
{
    if (b->rank != 0)
        return;
    printf("usage: %s %s\n", b->program, usage_line);
    for (int i = 0; i < n; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s", opts[i].name);
        const char *help = opts[i].help ? opts[i].help : "";
        /* help starts with the value's name ("N    ...") for options taking one */
        printf("      %-20s %s\n", left, help);
    }
    fputs(common_help, stdout);
    fflush(stdout);
}

static int set_option(rw_bench *b, const rw_bench_opt *o, const char *value)
{
    double v;
    char *end;
    switch (o->kind) {
    case RW_OPT_FLAG:
        *(int *)o->value = 1;
        return 0;
    case RW_OPT_INT:
        errno = 0;
        v = strtod(value, &end);
        if (errno || *end || end == value || v != (double)(long long)v || v < (double)o->min ||
            v > 2147483647.0)
            return rw_bench_fail(b, "--%s must be an integer >= %lld, got '%s'", o->name,
                                 (long long)o->min, value);
        *(int *)o->value = (int)v;
        return 0;
    case RW_OPT_INT64: {
        errno = 0;
        long long ll = strtoll(value, &end, 10);
        if (errno || *end || end == value || ll < o->min)
            return rw_bench_fail(b, "--%s must be an integer >= %lld, got '%s'", o->name,
                                 (long long)o->min, value);
        *(int64_t *)o->value = ll;
        return 0;
    }
    case RW_OPT_SIZE: {
        int64_t s;
        if (rw_parse_size(value, &s) || s < o->min)
            return rw_bench_fail(b, "--%s must be a size in bytes >= %lld (512, 64K, 1M), got '%s'",
                                 o->name, (long long)o->min, value);
        *(int64_t *)o->value = s;
        return 0;
    }
    case RW_OPT_SIZES:
        if (rw_parse_sizes(value, o->min, (rw_size_list *)o->value))
            return rw_bench_fail(b, "--%s must be sizes >= %lld like 1K,64K,1M or 1K:8M (at most %d), "
                                 "got '%s'", o->name, (long long)o->min, RW_BENCH_MAX_SIZES, value);
        return 0;
    case RW_OPT_TEXT:
        *(const char **)o->value = value;
        return 0;
    }
    return -1;
}

int rw_bench_init(rw_bench *b, const char *program, const char *usage_line,
                  const char *default_sizes, int argc, char **argv,
                  const rw_bench_opt *opts, int n_opts)
{
    memset(b, 0, sizeof *b);
    b->program = program;
    b->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(b->comm, &b->rank);
    MPI_Comm_size(b->comm, &b->size);
    b->iterations = DEFAULT_ITERATIONS;
    b->warmup = DEFAULT_WARMUP;
    b->max_memory = DEFAULT_MAX_MEMORY;
    if (rw_parse_sizes(default_sizes, 0, &b->sizes))
        return rw_bench_fail(b, "internal: bad default sizes '%s'", default_sizes);

    const rw_bench_opt common[] = {
        {"sizes", RW_OPT_SIZES, &b->sizes, 0, NULL},
        {"iterations", RW_OPT_INT, &b->iterations, 1, NULL},
        {"warmup", RW_OPT_INT, &b->warmup, 0, NULL},
        {"max-memory", RW_OPT_SIZE, &b->max_memory, 1, NULL},
    };
    const int n_common = (int)(sizeof common / sizeof common[0]);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            b->help = 1;
            print_usage(b, usage_line, opts, n_opts);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0 || !arg[2])
            return rw_bench_fail(b, "unexpected argument '%s' (see --help)", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const rw_bench_opt *o = NULL;
        for (int k = 0; k < n_common + n_opts && !o; k++) {
            const rw_bench_opt *c = k < n_common ? &common[k] : &opts[k - n_common];
            if (strlen(c->name) == len && !strncmp(c->name, name, len))
                o = c;
        }
        if (!o)
            return rw_bench_fail(b, "unknown option '%.*s' (see --help)", (int)len + 2, arg);
        const char *value = NULL;
        if (o->kind == RW_OPT_FLAG) {
            if (eq)
                return rw_bench_fail(b, "--%s takes no value", o->name);
        } else if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return rw_bench_fail(b, "--%s needs a value", o->name);
        }
        if (set_option(b, o, value))
            return -1;
        b->sizes_given |= o->value == (void *)&b->sizes;
    }
    return 0;
}

/* ------------------------------------------------------------ buffers */
/* Pauses nest: only the outermost pause and resume reach MPI_Pcontrol.
 * (Under SMPI each rank has its own copy of this, smpi/privatization.) */
static int paused;

void rw_bench_pcontrol(int level)
{
    if (level == 0 && paused++ == 0)
        pcontrol(0);
    else if (level != 0 && paused > 0 && --paused == 0)
        pcontrol(1);
}

int rw_bench_all_ok(const rw_bench *b, int ok)
{
    int all = ok ? 1 : 0;
    rw_bench_pcontrol(0);
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, b->comm);
    rw_bench_pcontrol(1);
    return all;
}

void *rw_bench_alloc(size_t bytes, int shared)
{
    if (bytes == 0)
        bytes = 1;
#ifdef RW_SMPI
    if (shared)
        return SMPI_SHARED_MALLOC(bytes);
#else
    (void)shared;
#endif
    void *p = malloc(bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

void rw_bench_free(void *p, int shared)
{
    if (!p)
        return;
#ifdef RW_SMPI
    if (shared) {
        SMPI_SHARED_FREE(p);
        return;
    }
#else
    (void)shared;
#endif
    free(p);
}

static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static unsigned char content(uint64_t seed, size_t k)
{
    return (unsigned char)(seed >> (8 * (k % 8))) ^ (unsigned char)(k / 8);
}

static uint64_t content_seed(int64_t from, int64_t to)
{
    return mix64(((uint64_t)from << 32) ^ (uint64_t)to ^ 0x5EEDULL);
}

void rw_bench_fill(void *buf, size_t bytes, int64_t from, int64_t to)
{
    unsigned char *p = buf;
    uint64_t seed = content_seed(from, to);
    for (size_t k = 0; k < bytes; k++)
        p[k] = content(seed, k);
}

int rw_bench_verify(const void *buf, size_t bytes, int64_t from, int64_t to)
{
    const unsigned char *p = buf;
    uint64_t seed = content_seed(from, to);
    for (size_t k = 0; k < bytes; k++)
        if (p[k] != content(seed, k))
            return -1;
    return 0;
}

void rw_bench_skip(const rw_bench *b, int64_t size, const char *fmt, ...)
{
    if (b->rank != 0)
        return;
    printf("# skipped %lld: ", (long long)size);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

int rw_bench_fits(const rw_bench *b, int64_t size, double bytes)
{
    if (bytes <= (double)b->max_memory)
        return 1;
    char need[32], max[32];
    rw_format_size((int64_t)bytes, need, sizeof need);
    rw_format_size(b->max_memory, max, sizeof max);
    rw_bench_skip(b, size, "needs %s of buffers per rank, more than --max-memory %s", need, max);
    return 0;
}

/* ------------------------------------------------------------- timing */
/* One start instant for every rank (harness.h, "Timing"). Under SMPI the
 * simulated clock is one clock for all ranks; a real MPI's clocks are
 * compared with rank 0's once, by ping-pong. */
#define SYNC_PINGPONGS 16

#ifdef RW_SMPI
#include <smpi/smpi_helpers_internal.h>
#include <time.h>
#else
#include <sched.h>
#endif

/* This rank's clock minus rank 0's, from the round trip with the smallest
 * time (its midpoint is the best estimate of rank 0's reading; its error
 * is at most half that round trip). 0 where MPI says the clock is global. */
static double clock_offset(const rw_bench *b)
{
#ifdef RW_SMPI
    (void)b;
    return 0.0;
#else
    int *global = NULL, flag = 0;
    MPI_Comm_get_attr(b->comm, MPI_WTIME_IS_GLOBAL, &global, &flag);
    if (flag && global && *global)
        return 0.0;
    double offset = 0.0;
    for (int peer = 1; peer < b->size; peer++) {
        if (b->rank != 0 && b->rank != peer)
            continue;
        double best_rtt = 1e300, best = 0.0;
        for (int k = 0; k < SYNC_PINGPONGS; k++) {
            if (b->rank == 0) {
                double t0 = MPI_Wtime(), remote;
                MPI_Send(&t0, 1, MPI_DOUBLE, peer, 0, b->comm);
                MPI_Recv(&remote, 1, MPI_DOUBLE, peer, 0, b->comm, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                double pair[2] = {t1 - t0, remote - 0.5 * (t0 + t1)};
                MPI_Send(pair, 2, MPI_DOUBLE, peer, 1, b->comm);
            } else {
                double t0, now, pair[2];
                MPI_Recv(&t0, 1, MPI_DOUBLE, 0, 0, b->comm, MPI_STATUS_IGNORE);
                now = MPI_Wtime();
                MPI_Send(&now, 1, MPI_DOUBLE, 0, 0, b->comm);
                MPI_Recv(pair, 2, MPI_DOUBLE, 0, 1, b->comm, MPI_STATUS_IGNORE);
                if (pair[0] < best_rtt) {
                    best_rtt = pair[0];
                    best = pair[1];
                }
            }
        }
        if (b->rank == peer)
            offset = best;
    }
    return offset;
#endif
}

/* Sleep (SMPI: simulated time) or spin, yielding the core to any other
 * process that wants it (ranks may outnumber cores), until local clock
 * `when` (real MPI). */
static void wait_until(double when)
{
#ifdef RW_SMPI
    double dt = when - MPI_Wtime();
    if (dt > 0) {
        struct timespec ts = {(time_t)dt, (long)((dt - (double)(time_t)dt) * 1e9)};
        if (ts.tv_nsec == 0 && ts.tv_sec == 0)
            ts.tv_nsec = 1;
        smpi_nanosleep(&ts, NULL);
    }
#else
    while (MPI_Wtime() < when)
        sched_yield();
#endif
}

/* After a barrier every rank agrees on a start instant (in rank 0's clock):
 * the latest rank's clock reading plus a margin that covers the agreement
 * itself (twice its longest duration seen in a calibration round). */
static double agree_start(rw_bench *b)
{
    MPI_Barrier(b->comm);
    double t = MPI_Wtime() - b->clock_offset, latest;
    MPI_Allreduce(&t, &latest, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    return latest + b->sync_margin;
}

/* The start at or after t on the grid of start_every, if any. */
static double on_grid(const rw_bench *b, double t)
{
    return b->start_every > 0 ? ceil(t / b->start_every) * b->start_every : t;
}

static void calibrate_start(rw_bench *b)
{
    if (b->sync_ready)
        return;
    b->clock_offset = clock_offset(b);
    b->sync_margin = 0.0;
    double latest = agree_start(b);
    double took = MPI_Wtime() - b->clock_offset - latest, most;
    MPI_Allreduce(&took, &most, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    b->sync_margin = 2.0 * most + 1e-6;
    b->sync_ready = 1;
}

int rw_bench_time(rw_bench *b, rw_bench_op op, void *ctx, int64_t size, rw_bench_times *out)
{
    double *t = malloc((size_t)b->iterations * sizeof *t);
    if (!rw_bench_all_ok(b, t != NULL)) {
        free(t);
        return rw_bench_fail(b, "out of memory for %d timings", b->iterations);
    }
    int bad = 0, late = 0;
    rw_bench_pcontrol(0);
    calibrate_start(b);
    b->timed = 0;
    for (int i = 0; i < b->warmup; i++) {
        wait_until(on_grid(b, agree_start(b)) + b->clock_offset);
        bad |= op(ctx, size, i) != 0;
    }
    b->timed = 1;
    for (int i = 0; i < b->iterations; i++) {
        double t0 = on_grid(b, agree_start(b)) + b->clock_offset;
        int me_late = MPI_Wtime() > t0, any_late;
        wait_until(t0);
        rw_bench_pcontrol(1);
        bad |= op(ctx, size, i) != 0;
        t[i] = MPI_Wtime() - t0;
        rw_bench_pcontrol(0);
        /* a rank that came late (descheduled, say) widens the margin for the next iterations */
        late += me_late;
        MPI_Allreduce(&me_late, &any_late, 1, MPI_INT, MPI_MAX, b->comm);
        if (any_late)
            b->sync_margin *= 2.0;
    }
    b->timed = 0;
    MPI_Allreduce(MPI_IN_PLACE, t, b->iterations, MPI_DOUBLE, MPI_MAX, b->comm);
    MPI_Allreduce(&bad, &out->failed, 1, MPI_INT, MPI_SUM, b->comm);
    MPI_Allreduce(&late, &out->late, 1, MPI_INT, MPI_SUM, b->comm);
    rw_bench_pcontrol(1);
    double lo = t[0], hi = t[0], sum = 0;
    for (int i = 0; i < b->iterations; i++) {
        lo = t[i] < lo ? t[i] : lo;
        hi = t[i] > hi ? t[i] : hi;
        sum += t[i];
    }
    out->min = lo;
    out->max = hi;
    out->mean = sum / b->iterations;
    out->median = rw_median(t, (size_t)b->iterations);
    free(t);
    return 0;
}

/* ------------------------------------------------------------- output */
void rw_bench_meta(const rw_bench *b, const char *key, const char *fmt, ...)
{
    if (b->rank != 0)
        return;
    printf("# %s: ", key);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

void rw_bench_header(const rw_bench *b)
{
    if (b->rank != 0)
        return;
    rw_bench_meta(b, "program", "%s %s", b->program, rw_version());
#ifdef RW_SMPI
    rw_bench_meta(b, "mpi", "SimGrid SMPI (simulated time)");
#else
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    version[strcspn(version, "\r\n")] = '\0';
    rw_bench_meta(b, "mpi", "%s", version);
#endif
    rw_bench_meta(b, "ranks", "%d", b->size);
    rw_bench_meta(b, "iterations", "%d", b->iterations);
    rw_bench_meta(b, "warmup", "%d", b->warmup);
    rw_bench_meta(b, "times", "microseconds, per iteration the slowest rank, min/median/max over iterations");
}

void rw_bench_table(const rw_bench *b, const char *name, const char *extra_columns)
{
    if (b->rank != 0)
        return;
    printf("# table %s\n# size  min_us  median_us  max_us%s%s\n", name,
           extra_columns ? "  " : "", extra_columns ? extra_columns : "");
    fflush(stdout);
}

void rw_bench_row(const rw_bench *b, int64_t size, const rw_bench_times *t, const char *extra)
{
    if (b->rank != 0)
        return;
    printf("%lld  %.3f  %.3f  %.3f%s%s\n", (long long)size, t->min * 1e6, t->median * 1e6,
           t->max * 1e6, extra ? "  " : "", extra ? extra : "");
    if (t->late)
        printf("# late %lld: %d rank-iterations reached the agreed start after it\n", (long long)size, t->late);
    fflush(stdout);
}
