/* The common harness of the rankwise benchmark programs
 * (rankwise-bench-*): options, buffers, timing, output.
 *
 * Every program takes --sizes, --iterations, --warmup and --max-memory
 * (plus its own options, declared in a table of rw_bench_opt), times
 * `warmup + iterations` runs of one operation per size, and prints
 * OSU-style tables on rank 0 (docs/reference/benchmark-programs.md):
 *
 *   # program: rankwise-bench-alltoall        <- "# key: value" header lines
 *   # ranks: 4
 *   # table alltoall                          <- one or more tables
 *   # size  min_us  median_us  max_us
 *   1024  12.345  12.500  13.001
 *
 * A row's times are taken over the timed iterations of the slowest rank of
 * each iteration: iteration k lasts max over ranks of (end - start), and
 * min/median/max are over k.
 *
 * Timing: every rank starts an iteration at one instant, not at its own
 * exit of a barrier (ranks leave a barrier at different times, which
 * skews small-message times: under SMPI a 6 us broadcast measured 12 us).
 * After a barrier the ranks agree on a start time, the latest rank's clock
 * plus a margin calibrated once (twice the longest agreement seen), wait
 * until it, and time from it. Under SMPI the simulated clock is global, so
 * the start is exact. A real MPI's clocks are compared with rank 0's by
 * ping-pong (the round trip of least time, unless MPI_WTIME_IS_GLOBAL):
 * the start is then exact to half that round trip; a rank that reaches
 * the start late counts in rw_bench_times.late (and doubles the margin for
 * the next iterations). Waiting ranks yield their core. With start_every
 * set, the start is rounded up to a multiple of it: under SMPI every run of
 * the same sequence of calls then makes each call at the same simulated
 * instant, whatever the calls before it took (a platform whose links vary
 * over time gives every run the same link state at each call).
 *
 * The harness's own communication (barriers, gathering the times) and the
 * warm-up runs happen under MPI_Pcontrol(0), the timed runs under
 * MPI_Pcontrol(1): a profiler that honours MPI_Pcontrol records the timed
 * traffic only.
 *
 * Nothing here exits: errors are returned (with a message in the
 * rw_bench's error text) and main() returns non-zero. */
#ifndef RW_BENCH_HARNESS_H
#define RW_BENCH_HARNESS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define RW_BENCH_MAX_SIZES 64
#define RW_BENCH_ERR_LEN 512

/* A list of byte counts: "1K,8K,1M" or "1K:8M" (powers of two). */
typedef struct rw_size_list {
    int n;
    int64_t v[RW_BENCH_MAX_SIZES];
} rw_size_list;

typedef enum rw_opt_kind {
    RW_OPT_FLAG,  /* int*: set to 1 */
    RW_OPT_INT,   /* int*: an integer >= min */
    RW_OPT_INT64, /* int64_t*: an integer >= min */
    RW_OPT_SIZE,  /* int64_t*: one size in bytes >= min */
    RW_OPT_SIZES, /* rw_size_list*: a list of sizes, each >= min */
    RW_OPT_TEXT   /* const char**: any text (the program checks it) */
} rw_opt_kind;

/* One long option of a program: --name VALUE (or --name for flags). */
typedef struct rw_bench_opt {
    const char *name;
    rw_opt_kind kind;
    void *value;
    int64_t min;
    const char *help; /* "N    what it does (default ...)" for --help */
} rw_bench_opt;

/* What every program shares. */
typedef struct rw_bench {
    const char *program;   /* "rankwise-bench-alltoall" */
    MPI_Comm comm;         /* MPI_COMM_WORLD */
    int rank, size;
    rw_size_list sizes;
    int sizes_given;       /* --sizes was on the command line */
    int iterations;        /* timed runs per size (>= 1) */
    int warmup;            /* untimed runs before them (>= 0) */
    int64_t max_memory;    /* buffer bytes one rank may allocate per size */
    int help;              /* --help was given: usage printed, nothing to run */
    int timed;             /* set by rw_bench_time: 0 in the warm-up, 1 in timed runs */
    int sync_ready;        /* clock_offset and sync_margin are measured */
    double clock_offset;   /* this rank's MPI_Wtime minus rank 0's, s */
    double sync_margin;    /* start = latest clock after the barrier + this, s */
    double start_every;    /* > 0: each call starts at a multiple of this (s) of rank 0's clock */
    char error[RW_BENCH_ERR_LEN];
} rw_bench;

/* One timed operation. `iteration` counts from 0 in the warm-up and again
 * from 0 in the timed runs (programs whose traffic depends on it, like
 * the groups test, repeat their schedule). Returns 0, or non-zero when
 * this rank found something wrong (a --check mismatch): the harness then
 * reports failure on every rank after the last iteration. */
typedef int (*rw_bench_op)(void *ctx, int64_t size, int iteration);

/* min/median/max over iterations of the per-iteration max over ranks, s. */
typedef struct rw_bench_times {
    double min, median, max, mean;
    int failed; /* ranks whose operation reported a problem */
    int late;   /* (rank, iteration) pairs that reached the agreed start after it */
} rw_bench_times;

/* Fill in the defaults (sizes from default_sizes, 10 iterations, 2
 * warm-up runs, 1 GiB max memory) and parse argv: the common options and
 * the program's `opts`. usage_line is printed by --help before the option
 * list. Returns 0 (check b->help), or -1 with b->error set. */
int rw_bench_init(rw_bench *b, const char *program, const char *usage_line,
                  const char *default_sizes, int argc, char **argv,
                  const rw_bench_opt *opts, int n_opts);

/* Parse "1K,8K,64K" or "1K:8M" (every power of two from 1K to 8M) into
 * out, each >= min. K/M/G (powers of 1024), optional B or iB. 0 or -1. */
int rw_parse_sizes(const char *text, int64_t min, rw_size_list *out);
/* One size ("64K"); 0 or -1. */
int rw_parse_size(const char *text, int64_t *out);
/* "4x4x2" -> dims[0..n) all >= 1; 0 or -1. */
int rw_parse_dims(const char *text, int n, int *dims);

/* Set b->error (printf-style); returns -1 for `return rw_bench_fail(...)`. */
int rw_bench_fail(rw_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* On rank 0: "PROGRAM: error: MESSAGE" on stderr. Returns the exit code. */
int rw_bench_report_error(const rw_bench *b);

/* MPI_Pcontrol around the programs' own bookkeeping communication: 0
 * before, 1 after; pauses nest (only the outermost pair reaches MPI).
 * Nothing reaches MPI under SMPI, whose MPI_Pcontrol aborts. */
void rw_bench_pcontrol(int level);

/* Every rank says ok or not; 1 when all are ok (a collective). */
int rw_bench_all_ok(const rw_bench *b, int ok);

/* Buffers for messages. shared: the content never matters, so under SMPI
 * every rank maps the same memory (SMPI_SHARED_MALLOC) and the simulator
 * copies nothing; with a real MPI (or shared = 0) plain memory, touched
 * once so that page faults stay out of the timings. NULL when out of
 * memory. */
void *rw_bench_alloc(size_t bytes, int shared);
void rw_bench_free(void *p, int shared);

/* --check: a message's content is a function of (from, to, byte index);
 * verify returns 0 when buf holds exactly what fill wrote for (from, to). */
void rw_bench_fill(void *buf, size_t bytes, int64_t from, int64_t to);
int rw_bench_verify(const void *buf, size_t bytes, int64_t from, int64_t to);

/* On rank 0: "# skipped SIZE: REASON" (the size is left out of the table). */
void rw_bench_skip(const rw_bench *b, int64_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether `bytes` of buffers per rank fit --max-memory; when not, rank 0
 * prints a "# skipped SIZE: ..." note and the size is left out. */
int rw_bench_fits(const rw_bench *b, int64_t size, double bytes);

/* Run op `warmup` times, then `iterations` times timed (see above). A
 * collective over b->comm. Returns 0, or -1 when out of memory. */
int rw_bench_time(rw_bench *b, rw_bench_op op, void *ctx, int64_t size, rw_bench_times *out);

/* Output, rank 0 only (the others print nothing): the common header
 * lines, then "# key: value" lines, table headings and rows. Flushed. */
void rw_bench_header(const rw_bench *b);
void rw_bench_meta(const rw_bench *b, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "# table NAME" then "# size  min_us  median_us  max_us[  EXTRA]". */
void rw_bench_table(const rw_bench *b, const char *name, const char *extra_columns);
/* "SIZE  MIN  MEDIAN  MAX[  EXTRA]" in microseconds. */
void rw_bench_row(const rw_bench *b, int64_t size, const rw_bench_times *t, const char *extra);

/* Text for --sizes-like values in messages and headers: "1M", "1536". */
void rw_format_size(int64_t bytes, char *out, size_t len);

#endif /* RW_BENCH_HARNESS_H */
