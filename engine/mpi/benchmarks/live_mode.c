/* The --live K mode: see live_mode.h.
 *
 * Output (rank 0): "# table live", then per iteration
 *   ITERATION  START_S  OP_US  PROBE_US  REMAP_US  PAIRS  CHANGED  REMAPPED  GAIN
 * START_S the iteration's start, the latest rank's clock (simulated time
 * under SMPI, where a platform may change at a given time); OP_US the slowest
 * rank's time of the operation; PROBE_US the slowest rank's time of the
 * re-probe after it (0 between re-probes), REMAP_US of the remap and the
 * data's move (0 when the model did not change); PAIRS the pairs the
 * probe measured, CHANGED those that changed beyond their noise; REMAPPED
 * 1 when the ranks moved, GAIN the predicted fraction saved. With
 * --live-keep the re-probes run and merge as usual but no remap is tried
 * (REMAP_US, REMAPPED and GAIN stay 0): the kept placement, timed with the
 * same probes, to compare a remapped run with. A probe that
 * gives up (an MPI error, a timeout) is reported once, and the iterations
 * go on without probes. */
#include "live_mode.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RW_BENCH_NO_LIVE
#include "rankwise_live.h"
#endif

/* Three builds (CMakeLists.txt): with a real MPI the programs are not
 * linked with librankwise_coll, which is preloaded (LD_PRELOAD) as for the
 * collectives; its rw_live_ functions are looked up when --live is given
 * (RW_BENCH_LIVE_DLSYM); their errors are read with the program's own
 * rw_last_error, which is the process's (engine/src/error.c). Under SMPI
 * the -coll programs are linked with it;
 * the plain and -profiled ones refuse --live (RW_BENCH_NO_LIVE). */
#ifdef RW_BENCH_LIVE_DLSYM
#include <dlfcn.h>

static struct {
    rw_status (*init)(MPI_Comm, const char *, rw_live **);
    void (*free)(rw_live **);
    rw_status (*probe)(rw_live *, double, rw_live_report *);
    rw_status (*remap)(rw_live *, const rw_matrix *, MPI_Comm *, double *);
    rw_status (*move)(const void *, void *, int, MPI_Datatype, MPI_Comm, MPI_Comm);
    rw_status (*set_min_gain)(rw_live *, double);
    uint64_t (*generation)(void);
} api;

/* Each function of the preloaded library; 0, or -1 when one is missing. */
static int find_api(void)
{
    *(void **)&api.init = dlsym(RTLD_DEFAULT, "rw_live_init");
    *(void **)&api.free = dlsym(RTLD_DEFAULT, "rw_live_free");
    *(void **)&api.probe = dlsym(RTLD_DEFAULT, "rw_live_probe");
    *(void **)&api.remap = dlsym(RTLD_DEFAULT, "rw_live_remap");
    *(void **)&api.move = dlsym(RTLD_DEFAULT, "rw_live_move");
    *(void **)&api.set_min_gain = dlsym(RTLD_DEFAULT, "rw_live_set_min_gain");
    *(void **)&api.generation = dlsym(RTLD_DEFAULT, "rw_live_generation");
    return api.init && api.free && api.probe && api.remap && api.move && api.set_min_gain && api.generation ? 0 : -1;
}
#define rw_live_init api.init
#define rw_live_free api.free
#define rw_live_probe api.probe
#define rw_live_remap api.remap
#define rw_live_move api.move
#define rw_live_set_min_gain api.set_min_gain
#define rw_live_generation api.generation
#endif

enum { C_START, C_OP, C_PROBE, C_REMAP, C_PAIRS, C_CHANGED, C_REMAPPED, C_GAIN, C_N };

int rw_live_check(rw_bench *b, const rw_live_opts *o)
{
    if (!o->every)
        return o->keep ? rw_bench_fail(b, "--live-keep needs --live K") : 0;
#ifdef RW_BENCH_NO_LIVE
    return rw_bench_fail(b, "--live: this program is built without the live model (under SMPI: %s-coll)",
                         b->program);
#endif
#ifdef RW_BENCH_LIVE_DLSYM
    if (find_api())
        return rw_bench_fail(b, "--live needs librankwise_coll.so preloaded (LD_PRELOAD), which holds the live "
                                "model");
#endif
    if (b->sizes.n != 1)
        return rw_bench_fail(b, "--live takes one size (--sizes S), got %d", b->sizes.n);
    if (o->budget) {
        char *end = NULL;
        double x = strtod(o->budget, &end);
        if (end == o->budget || *end || !(x >= 0) || !isfinite(x))
            return rw_bench_fail(b, "--live-budget must be seconds >= 0, got '%s'", o->budget);
    }
    if (o->min_gain) {
        char *end = NULL;
        double x = strtod(o->min_gain, &end);
        if (end == o->min_gain || *end || !(x >= 0 && x < 1))
            return rw_bench_fail(b, "--live-min-gain must be in [0, 1), got '%s'", o->min_gain);
    }
    return 0;
}

#ifdef RW_BENCH_NO_LIVE
int rw_live_run(rw_bench *b, const rw_live_opts *o, const rw_live_app *app, int64_t size)
{
    (void)o, (void)app, (void)size;
    return rw_bench_fail(b, "--live: built without the live model");
}

int rw_live_mode_move(const void *sendbuf, void *recvbuf, size_t bytes, MPI_Comm oldcomm, MPI_Comm newcomm)
{
    (void)sendbuf, (void)recvbuf, (void)bytes, (void)oldcomm, (void)newcomm;
    return -1;
}
#else
int rw_live_mode_move(const void *sendbuf, void *recvbuf, size_t bytes, MPI_Comm oldcomm, MPI_Comm newcomm)
{
    return bytes > INT_MAX || rw_live_move(sendbuf, recvbuf, (int)bytes, MPI_BYTE, oldcomm, newcomm) != RW_OK ? -1 : 0;
}

/* Probe, and remap when the model changed since the last try. */
static int live_step(rw_bench *b, rw_live *live, const rw_live_app *app, const rw_matrix *traffic, double budget,
                     int iteration, MPI_Comm given, int keep, uint64_t *tried, int *gave_up, double *row)
{
    rw_live_report rep;
    double t0 = MPI_Wtime();
    rw_status st = rw_live_probe(live, budget, &rep);
    row[C_PROBE] = MPI_Wtime() - t0;
    if (st) {
        if (!*gave_up && b->rank == 0)
            printf("# live: the re-probe gave up, the run goes on without: %s\n", rw_last_error());
        *gave_up = 1;
        return 0;
    }
    row[C_PAIRS] = rep.pairs;
    row[C_CHANGED] = rep.changed;
    if (rep.generation == *tried || rep.passthrough || keep)
        return 0;
    *tried = rep.generation;
    double t1 = MPI_Wtime();
    MPI_Comm newcomm = MPI_COMM_NULL;
    double gain = 0;
    st = rw_live_remap(live, traffic, &newcomm, &gain);
    row[C_REMAP] = MPI_Wtime() - t1;
    if (st) { /* e.g. not every pair measured yet: the order stays */
        if (b->rank == 0 && rep.call > 1)
            printf("# live: no remap: %s\n", rw_last_error());
        return 0;
    }
    row[C_GAIN] = gain;
    if (newcomm == MPI_COMM_NULL)
        return 0;
    MPI_Comm old = b->comm;
    int old_rank = b->rank;
    b->comm = newcomm;
    MPI_Comm_rank(newcomm, &b->rank);
    row[C_REMAPPED] = 1;
    int *order = b->rank == 0 ? malloc((size_t)b->size * sizeof *order) : NULL;
    MPI_Gather(&old_rank, 1, MPI_INT, order, 1, MPI_INT, 0, newcomm);
    if (order) { /* where each new rank was: the placement's change, for the record */
        printf("# live: remapped after iteration %d, the new ranks' old ones:", iteration);
        for (int r = 0; r < b->size; r++)
            printf(" %d", order[r]);
        printf("\n");
    }
    free(order);
    int rc = app->moved(app->ctx, old, newcomm);
    if (old != given) /* ours, from an earlier remap; the program's own stays */
        MPI_Comm_free(&old);
    row[C_REMAP] = MPI_Wtime() - t1;
    return rc;
}

int rw_live_run(rw_bench *b, const rw_live_opts *o, const rw_live_app *app, int64_t size)
{
    double budget = o->budget ? strtod(o->budget, NULL) : 0;
    double *rows = calloc((size_t)b->iterations * C_N, sizeof *rows);
    /* on every rank: after a remap, rank 0 may be another process */
    rw_matrix *traffic = app->traffic(app->ctx, size);
    if (!rw_bench_all_ok(b, rows && traffic)) {
        free(rows);
        rw_matrix_free(traffic);
        return rw_bench_fail(b, "out of memory for %d iterations of the live mode", b->iterations);
    }
    rw_live *live = NULL;
    rw_bench_pcontrol(0);
    rw_status st = rw_live_init(b->comm, o->model, &live);
    if (st) {
        free(rows);
        rw_matrix_free(traffic);
        return rw_bench_fail(b, "--live: %s", rw_last_error());
    }
    if (o->min_gain && rw_live_set_min_gain(live, strtod(o->min_gain, NULL)) != RW_OK) {
        rw_live_free(&live);
        free(rows);
        rw_matrix_free(traffic);
        return rw_bench_fail(b, "--live-min-gain: %s", rw_last_error());
    }
    rw_bench_meta(b, "live", "re-probe every %d iterations, budget %g s, min gain %s, model %s%s", o->every,
                  budget > 0 ? budget : RW_LIVE_DEFAULT_BUDGET, o->min_gain ? o->min_gain : "the library's",
                  o->model ? o->model : "none",
                  o->keep ? ", never remapped (--live-keep)" : "");
    if (b->rank == 0)
        printf("# table live\n# iteration  start_s  op_us  probe_us  remap_us  pairs  changed  remapped  gain\n");
    int bad = 0, gave_up = 0, rc = 0;
    MPI_Comm given = b->comm;
    uint64_t tried = rw_live_generation();
    for (int i = 0; i < b->warmup; i++)
        bad |= app->op(app->ctx, size, i) != 0;
    b->timed = 1;
    for (int i = 0; i < b->iterations && !rc; i++) {
        double *row = rows + (size_t)i * C_N;
        MPI_Barrier(b->comm);
        double t0 = MPI_Wtime();
        row[C_START] = t0;
        bad |= app->op(app->ctx, size, i) != 0;
        row[C_OP] = MPI_Wtime() - t0;
        if (!gave_up && (i + 1) % o->every == 0)
            rc = live_step(b, live, app, traffic, budget, i, given, o->keep, &tried, &gave_up, row);
    }
    b->timed = 0;
    if (!rw_bench_all_ok(b, rc == 0)) {
        rw_live_free(&live);
        free(rows);
        rw_matrix_free(traffic);
        return rw_bench_fail(b, "--live: out of memory moving the data to the new order");
    }
    MPI_Allreduce(MPI_IN_PLACE, rows, b->iterations * C_N, MPI_DOUBLE, MPI_MAX, b->comm);
    int failed = 0;
    MPI_Allreduce(&bad, &failed, 1, MPI_INT, MPI_SUM, b->comm);
    rw_bench_pcontrol(1);
    for (int i = 0; b->rank == 0 && i < b->iterations; i++) {
        const double *r = rows + (size_t)i * C_N;
        printf("%d  %.9f  %.3f  %.3f  %.3f  %d  %d  %d  %.4f\n", i, r[C_START], 1e6 * r[C_OP], 1e6 * r[C_PROBE],
               1e6 * r[C_REMAP], (int)r[C_PAIRS], (int)r[C_CHANGED], (int)r[C_REMAPPED], r[C_GAIN]);
    }
    if (b->rank == 0)
        fflush(stdout);
    if (b->comm != given) { /* the program gets its communicator back (its data stays in the new order) */
        MPI_Comm_free(&b->comm);
        b->comm = given;
        MPI_Comm_rank(given, &b->rank);
    }
    rw_live_free(&live);
    free(rows);
    rw_matrix_free(traffic);
    if (failed)
        return rw_bench_fail(b, "--check: %d ranks received wrong data", failed);
    return 0;
}
#endif
