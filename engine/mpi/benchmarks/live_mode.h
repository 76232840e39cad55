/* The --live K mode of the stencil and all-to-all programs
 * (docs/reference/benchmark-programs.md, docs/concepts/live.md): one size, its
 * iterations timed one by one; every K iterations the network is
 * re-probed in the job (rw_live_probe) and, when the model changed, the
 * ranks are remapped if the mapper predicts a gain (rw_live_remap). The
 * program moves its data to the new order, as with MPI's reorder. */
#ifndef RW_BENCH_LIVE_MODE_H
#define RW_BENCH_LIVE_MODE_H

#include "harness.h"
#include "rankwise.h"

/* The options, as the programs declare them. */
typedef struct rw_live_opts {
    int every;          /* K: 0 = not in live mode */
    const char *budget; /* seconds per probe (text), NULL = the default */
    const char *model;  /* model file, NULL = none (the nodes' names, every pair probed first) */
    int keep;           /* re-probe but never remap: the kept placement, to compare with */
    const char *min_gain; /* a remap's minimum predicted gain (text), NULL = the library's */
} rw_live_opts;

#define RW_LIVE_OPTIONS(o)                                                                              \
    {"live", RW_OPT_INT, &(o).every, 1, "K: re-probe the network every K iterations, remap when worth it"}, \
    {"live-budget", RW_OPT_TEXT, &(o).budget, 0, "S: seconds a re-probe may take (default 0.0005)"},       \
    {"live-model", RW_OPT_TEXT, &(o).model, 0, "FILE: the model to start from (default: none)"},         \
    {"live-keep", RW_OPT_FLAG, &(o).keep, 0, "re-probe as --live does but never remap (the kept placement)"}, \
    {"live-min-gain", RW_OPT_TEXT, &(o).min_gain, 0, "F: remap when predicted F faster, 0 <= F < 1 (default 0.10)"}

/* What the program does around a remap. */
typedef struct rw_live_app {
    rw_bench_op op;  /* one iteration */
    void *ctx;
    /* Move this rank's data from its rank in oldcomm to the process now
     * holding that rank in newcomm (b->comm and b->rank are already the
     * new ones); 0, or non-zero when out of memory. */
    int (*moved)(void *ctx, MPI_Comm oldcomm, MPI_Comm newcomm);
    /* The traffic of one iteration between b->size ranks, NULL when out of memory. */
    rw_matrix *(*traffic)(void *ctx, int64_t size);
} rw_live_app;

/* Programs built without the collectives library (RW_BENCH_NO_LIVE: the
 * SMPI programs linked with the profiler) refuse --live. */

/* Check the options (size: exactly one); 0 or -1 with b->error. */
int rw_live_check(rw_bench *b, const rw_live_opts *o);
/* Run the live mode for `size`: warm-up, then b->iterations timed
 * iterations, and a table "live" of one row per iteration. */
int rw_live_run(rw_bench *b, const rw_live_opts *o, const rw_live_app *app, int64_t size);
/* rw_live_move of `bytes` bytes; 0, or -1 on failure. */
int rw_live_mode_move(const void *sendbuf, void *recvbuf, size_t bytes, MPI_Comm oldcomm, MPI_Comm newcomm);

#endif
