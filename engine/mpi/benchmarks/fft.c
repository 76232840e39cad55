/* rankwise-bench-fft: the transposes of a distributed 3-D FFT (Cui et al. 2020,
 * §3.1) on a grid of NX x NY x NZ complex doubles, one forward transform
 * per iteration. No butterflies are computed; the local transposes
 * (packing and unpacking the blocks) are done with memcpy, which costs no
 * simulated time under SMPI (smpi/simulate-computation:no).
 *
 * Volumes are those of rankwise.patterns.fft; blocks follow the usual
 * block distribution (n items over p parts: the first n mod p parts hold
 * one more). Arrays are stored [z][y][x], x fastest.
 *
 *   slab    1-D decomposition over P ranks (P <= NY, NZ): rank i holds the
 *           z-planes Z_i; one all-to-all of the whole job turns them into
 *           y-slabs Y_j, i sending NX |Y_j| |Z_i| points to j.
 *   pencil  2-D decomposition over a P1 x P2 grid, rank r P2 + c (--pgrid,
 *           default MPI_Dims_create: the most square): X-pencils (Y_c of
 *           NY over P2, Z_r of NZ over P1) become Y-pencils by an
 *           all-to-all in each row communicator ((r, c) sends |X_c'| |Y_c|
 *           |Z_r| points to (r, c')), then Z-pencils by one in each column
 *           communicator ((r, c) sends |X_c| |Y'_r'| |Z_r| points to
 *           (r', c), Y' being NY over P1).
 *
 * MPI_Alltoall when all blocks of a transpose are equal, MPI_Alltoallv
 * otherwise (as FFT libraries do). --check fills every point with a value
 * derived from its global coordinates and verifies the final layout. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MAX_GRIDS 16
#define POINT 16 /* bytes of a complex double */

typedef struct cplx {
    double re, im;
} cplx;

/* One all-to-all of a transpose: who gets what. */
typedef struct transpose {
    MPI_Comm comm;
    int size, equal;
    int *count, *displ; /* points per peer, offsets into the packed buffer */
} transpose;

typedef struct fft {
    rw_bench *b;
    int decomp;          /* 0 slab, 1 pencil */
    int check;
    int n[3];            /* NX, NY, NZ */
    int p1, p2, r, c;    /* pencil grid and coordinates (slab: p1 = 1, p2 = P) */
    MPI_Datatype point;
    transpose t[2];
    cplx *data, *send, *recv;
    size_t elems;        /* points of the largest local array */
} fft;

static int block_size(int n, int p, int i) { return n / p + (i < n % p); }
static int block_start(int n, int p, int i) { return i * (n / p) + (i < n % p ? i : n % p); }

static cplx value_at(const fft *f, int x, int y, int z)
{
    return (cplx){(double)x + (double)f->n[0] * ((double)y + (double)f->n[1] * z), -1.0 - z};
}

/* ------------------------------------------------------------ layouts */
/* slab: [z in Z_i][y][x] -> [y in Y_i][z][x] */
static void slab_pack(fft *f)
{
    int P = f->b->size, i = f->b->rank, nx = f->n[0], ny = f->n[1], nz = f->n[2];
    int zs = block_size(nz, P, i);
    cplx *out = f->send;
    for (int j = 0; j < P; j++) {
        int y0 = block_start(ny, P, j), ys = block_size(ny, P, j);
        for (int z = 0; z < zs; z++)
            for (int y = y0; y < y0 + ys; y++, out += nx)
                memcpy(out, f->data + ((size_t)z * ny + y) * nx, (size_t)nx * POINT);
    }
}

static void slab_unpack(fft *f)
{
    int P = f->b->size, i = f->b->rank, nx = f->n[0], ny = f->n[1], nz = f->n[2];
    int ys = block_size(ny, P, i);
    const cplx *in = f->recv;
    for (int j = 0; j < P; j++) {
        int z0 = block_start(nz, P, j), zs = block_size(nz, P, j);
        for (int z = z0; z < z0 + zs; z++)
            for (int y = 0; y < ys; y++, in += nx)
                memcpy(f->data + ((size_t)y * nz + z) * nx, in, (size_t)nx * POINT);
    }
}

/* pencil, rows: [z in Z_r][y in Y_c][x] -> [z in Z_r][y][x in X_c] */
static void row_pack(fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    int zs = block_size(nz, f->p1, f->r), ys = block_size(ny, f->p2, f->c);
    cplx *out = f->send;
    for (int c2 = 0; c2 < f->p2; c2++) {
        int x0 = block_start(nx, f->p2, c2), xs = block_size(nx, f->p2, c2);
        for (int z = 0; z < zs; z++)
            for (int y = 0; y < ys; y++, out += xs)
                memcpy(out, f->data + ((size_t)z * ys + y) * nx + x0, (size_t)xs * POINT);
    }
}

static void row_unpack(fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    int zs = block_size(nz, f->p1, f->r), xs = block_size(nx, f->p2, f->c);
    const cplx *in = f->recv;
    for (int c2 = 0; c2 < f->p2; c2++) {
        int y0 = block_start(ny, f->p2, c2), ys = block_size(ny, f->p2, c2);
        for (int z = 0; z < zs; z++)
            for (int y = y0; y < y0 + ys; y++, in += xs)
                memcpy(f->data + ((size_t)z * ny + y) * xs, in, (size_t)xs * POINT);
    }
}

/* pencil, columns: [z in Z_r][y][x in X_c] -> [z][y in Y'_r][x in X_c] */
static void col_pack(fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    int zs = block_size(nz, f->p1, f->r), xs = block_size(nx, f->p2, f->c);
    cplx *out = f->send;
    for (int r2 = 0; r2 < f->p1; r2++) {
        int y0 = block_start(ny, f->p1, r2), ys = block_size(ny, f->p1, r2);
        for (int z = 0; z < zs; z++)
            for (int y = y0; y < y0 + ys; y++, out += xs)
                memcpy(out, f->data + ((size_t)z * ny + y) * xs, (size_t)xs * POINT);
    }
}

static void col_unpack(fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    int ys = block_size(ny, f->p1, f->r), xs = block_size(nx, f->p2, f->c);
    const cplx *in = f->recv;
    for (int r2 = 0; r2 < f->p1; r2++) {
        int z0 = block_start(nz, f->p1, r2), zs = block_size(nz, f->p1, r2);
        for (int z = z0; z < z0 + zs; z++)
            for (int y = 0; y < ys; y++, in += xs)
                memcpy(f->data + ((size_t)z * ys + y) * xs, in, (size_t)xs * POINT);
    }
}

/* ---------------------------------------------------------- transposes */
static void all_to_all(fft *f, const transpose *t)
{
    if (t->equal)
        MPI_Alltoall(f->send, t->count[0], f->point, f->recv, t->count[0], f->point, t->comm);
    else
        MPI_Alltoallv(f->send, t->count, t->displ, f->point, f->recv, t->count + t->size,
                      t->displ + t->size, f->point, t->comm);
}

/* Points this rank sends to peer k (first half) and gets from it (second
 * half) in transpose `which`. */
static void transpose_counts(fft *f, int which)
{
    transpose *t = &f->t[which];
    int nx = f->n[0], ny = f->n[1], nz = f->n[2], P = f->b->size;
    for (int k = 0; k < t->size; k++) {
        long long out, in;
        if (f->decomp == 0) { /* slab */
            int i = f->b->rank;
            out = (long long)nx * block_size(ny, P, k) * block_size(nz, P, i);
            in = (long long)nx * block_size(ny, P, i) * block_size(nz, P, k);
        } else if (which == 0) { /* rows: peer k is (r, k) */
            long long zs = block_size(nz, f->p1, f->r);
            out = block_size(nx, f->p2, k) * (long long)block_size(ny, f->p2, f->c) * zs;
            in = block_size(nx, f->p2, f->c) * (long long)block_size(ny, f->p2, k) * zs;
        } else { /* columns: peer k is (k, c) */
            long long xs = block_size(nx, f->p2, f->c);
            out = xs * block_size(ny, f->p1, k) * block_size(nz, f->p1, f->r);
            in = xs * block_size(ny, f->p1, f->r) * block_size(nz, f->p1, k);
        }
        t->count[k] = (int)out;
        t->count[t->size + k] = (int)in;
    }
    t->equal = 1;
    for (int k = 0, so = 0, si = 0; k < t->size; k++) {
        t->displ[k] = so;
        t->displ[t->size + k] = si;
        so += t->count[k];
        si += t->count[t->size + k];
        t->equal &= t->count[k] == t->count[0] && t->count[t->size + k] == t->count[0];
    }
}

/* The initial layout: slab [z in Z_i][y][x]; pencil [z in Z_r][y in Y_c][x]. */
static void fill(fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2], P = f->b->size, i = f->b->rank;
    int z0, zs, y0, ys;
    if (f->decomp == 0) {
        z0 = block_start(nz, P, i), zs = block_size(nz, P, i), y0 = 0, ys = ny;
    } else {
        z0 = block_start(nz, f->p1, f->r), zs = block_size(nz, f->p1, f->r);
        y0 = block_start(ny, f->p2, f->c), ys = block_size(ny, f->p2, f->c);
    }
    cplx *p = f->data;
    for (int z = z0; z < z0 + zs; z++)
        for (int y = y0; y < y0 + ys; y++)
            for (int x = 0; x < nx; x++)
                *p++ = value_at(f, x, y, z);
}

static int same(cplx a, cplx b) { return a.re == b.re && a.im == b.im; }

/* The final layout: slab [y in Y_i][z][x]; pencil [z][y in Y'_r][x in X_c]. */
static int verify(const fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    const cplx *p = f->data;
    if (f->decomp == 0) {
        int P = f->b->size, i = f->b->rank;
        int y0 = block_start(ny, P, i), ys = block_size(ny, P, i);
        for (int y = y0; y < y0 + ys; y++)
            for (int z = 0; z < nz; z++)
                for (int x = 0; x < nx; x++)
                    if (!same(*p++, value_at(f, x, y, z)))
                        return 1;
        return 0;
    }
    int y0 = block_start(ny, f->p1, f->r), ys = block_size(ny, f->p1, f->r);
    int x0 = block_start(nx, f->p2, f->c), xs = block_size(nx, f->p2, f->c);
    for (int z = 0; z < nz; z++)
        for (int y = y0; y < y0 + ys; y++)
            for (int x = x0; x < x0 + xs; x++)
                if (!same(*p++, value_at(f, x, y, z)))
                    return 1;
    return 0;
}

static int run(void *ctx, int64_t size, int iteration)
{
    fft *f = ctx;
    (void)size, (void)iteration;
    if (f->check)
        fill(f);
    if (f->decomp == 0) {
        slab_pack(f);
        all_to_all(f, &f->t[0]);
        slab_unpack(f);
    } else {
        row_pack(f);
        all_to_all(f, &f->t[0]);
        row_unpack(f);
        col_pack(f);
        all_to_all(f, &f->t[1]);
        col_unpack(f);
    }
    return f->check ? verify(f) : 0;
}

/* ---------------------------------------------------------------- run */
/* Why this decomposition cannot take this grid, or NULL. */
static const char *unfit(const fft *f, char *why, size_t len)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    if (f->decomp == 0 && (f->b->size > ny || f->b->size > nz))
        snprintf(why, len, "slab over %d ranks needs NY and NZ >= %d", f->b->size, f->b->size);
    else if (f->decomp == 1 && (f->p2 > nx || f->p2 > ny || f->p1 > ny || f->p1 > nz))
        snprintf(why, len, "pencil grid %dx%d needs NX >= %d, NY >= %d, NZ >= %d", f->p1, f->p2,
                 f->p2, f->p1 > f->p2 ? f->p1 : f->p2, f->p1);
    else
        return NULL;
    return why;
}

static size_t local_points(const fft *f)
{
    int nx = f->n[0], ny = f->n[1], nz = f->n[2];
    size_t a, b, c;
    if (f->decomp == 0) {
        a = (size_t)nx * ny * block_size(nz, f->b->size, f->b->rank);
        b = (size_t)nx * block_size(ny, f->b->size, f->b->rank) * nz;
        c = 0;
    } else {
        a = (size_t)nx * block_size(ny, f->p2, f->c) * block_size(nz, f->p1, f->r);
        b = (size_t)block_size(nx, f->p2, f->c) * ny * block_size(nz, f->p1, f->r);
        c = (size_t)block_size(nx, f->p2, f->c) * block_size(ny, f->p1, f->r) * nz;
    }
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

static int bench_grid(rw_bench *b, fft *f, const int *grid, int *failed)
{
    memcpy(f->n, grid, sizeof f->n);
    int64_t bytes = (int64_t)grid[0] * grid[1] * grid[2] * POINT;
    char why[160];
    if (unfit(f, why, sizeof why)) {
        rw_bench_skip(b, bytes, "grid %dx%dx%d: %s", grid[0], grid[1], grid[2], why);
        return 0;
    }
    /* the largest local array, the same on every rank or not: agree on it */
    unsigned long long most = local_points(f);
    rw_bench_pcontrol(0);
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, b->comm);
    rw_bench_pcontrol(1);
    if (!rw_bench_fits(b, bytes, 3.0 * (double)most * POINT))
        return 0;
    if (most > INT_MAX) {
        rw_bench_skip(b, bytes, "grid %dx%dx%d: a rank's share exceeds an MPI count", grid[0],
                      grid[1], grid[2]);
        return 0;
    }
    for (int w = 0; w < 1 + f->decomp; w++)
        transpose_counts(f, w);
    size_t size = (size_t)most * POINT;
    f->data = rw_bench_alloc(size, !f->check);
    f->send = rw_bench_alloc(size, !f->check);
    f->recv = rw_bench_alloc(size, !f->check);
    int rc = 0;
    if (!rw_bench_all_ok(b, f->data && f->send && f->recv))
        rc = rw_bench_fail(b, "out of memory for grid %dx%dx%d", grid[0], grid[1], grid[2]);
    rw_bench_times t;
    if (!rc)
        rc = rw_bench_time(b, run, f, bytes, &t);
    rw_bench_free(f->data, !f->check), rw_bench_free(f->send, !f->check),
        rw_bench_free(f->recv, !f->check);
    if (rc)
        return rc;
    char extra[64];
    snprintf(extra, sizeof extra, "%d  %d  %d", grid[0], grid[1], grid[2]);
    rw_bench_row(b, bytes, &t, extra);
    *failed += t.failed;
    return 0;
}

static int bench(rw_bench *b, fft *f, int want[2], int grids[][3], int n_grids, const int *pgrid)
{
    int P = b->size, rc = 0, failed = 0;
    int dims[2] = {0, 0};
    if (pgrid) {
        dims[0] = pgrid[0], dims[1] = pgrid[1];
    } else {
        MPI_Dims_create(P, 2, dims);
    }
    rw_bench_header(b);
    rw_bench_meta(b, "operation", "3-D FFT transposes, one forward transform per iteration");
    rw_bench_meta(b, "pgrid", "%dx%d", dims[0], dims[1]);
    rw_bench_meta(b, "size", "bytes of the whole grid (NX NY NZ x 16); nx ny nz its points");
    rw_bench_meta(b, "check", f->check ? "on (final layout verified; times include it)" : "off");
    MPI_Type_contiguous(2, MPI_DOUBLE, &f->point);
    MPI_Type_commit(&f->point);
    for (int d = 0; d < 2 && !rc; d++) {
        if (!want[d])
            continue;
        f->decomp = d;
        if (d == 0) { /* slab: one row of P ranks */
            f->p1 = 1, f->p2 = P, f->r = 0, f->c = b->rank;
            f->t[0] = (transpose){.comm = b->comm, .size = P};
        } else {
            f->p1 = dims[0], f->p2 = dims[1], f->r = b->rank / dims[1], f->c = b->rank % dims[1];
            MPI_Comm_split(b->comm, f->r, f->c, &f->t[0].comm);
            MPI_Comm_split(b->comm, f->c, f->r, &f->t[1].comm);
            f->t[0].size = f->p2, f->t[1].size = f->p1;
        }
        for (int w = 0; w < 1 + d; w++) {
            f->t[w].count = malloc(2 * (size_t)f->t[w].size * sizeof(int));
            f->t[w].displ = malloc(2 * (size_t)f->t[w].size * sizeof(int));
        }
        int ok = f->t[0].count && f->t[0].displ && (d == 0 || (f->t[1].count && f->t[1].displ));
        if (!rw_bench_all_ok(b, ok))
            rc = rw_bench_fail(b, "out of memory for the transposes");
        rw_bench_table(b, d == 0 ? "slab" : "pencil", "nx  ny  nz");
        for (int g = 0; g < n_grids && !rc; g++)
            rc = bench_grid(b, f, grids[g], &failed);
        for (int w = 0; w < 1 + d; w++) {
            free(f->t[w].count), free(f->t[w].displ);
            if (d == 1)
                MPI_Comm_free(&f->t[w].comm);
        }
    }
    MPI_Type_free(&f->point);
    if (!rc && failed)
        rc = rw_bench_fail(b, "--check: %d ranks ended with wrong data", failed);
    return rc;
}

static int parse_grids(rw_bench *b, const char *text, int grids[][3], int *n)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", text);
    char *save = NULL;
    *n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_GRIDS || rw_parse_dims(tok, 3, grids[*n]))
            return rw_bench_fail(b, "--grid must be NXxNYxNZ or a list of them (at most %d), got '%s'",
                                 MAX_GRIDS, text);
        if ((double)grids[*n][0] * grids[*n][1] * grids[*n][2] * POINT > 9e18)
            return rw_bench_fail(b, "--grid %s is too large", tok);
        (*n)++;
    }
    return *n ? 0 : rw_bench_fail(b, "--grid is empty");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rw_bench b;
    fft f = {.b = &b};
    const char *grid = "64x64x64", *decomp = "both", *pgrid_text = NULL;
    const rw_bench_opt opts[] = {
        {"grid", RW_OPT_TEXT, &grid, 0, "NXxNYxNZ[,...]  grids of complex doubles (default 64x64x64)"},
        {"decomp", RW_OPT_TEXT, &decomp, 0, "slab|pencil|both (default both)"},
        {"pgrid", RW_OPT_TEXT, &pgrid_text, 0, "P1xP2  pencil process grid (default MPI_Dims_create)"},
        {"check", RW_OPT_FLAG, &f.check, 0, "verify the transposed data (plain buffers)"},
    };
    int grids[MAX_GRIDS][3], n_grids = 0, want[2] = {1, 1}, pgrid[2];
    int rc = rw_bench_init(&b, "rankwise-bench-fft",
                           "[options]\n  3-D FFT transposes (slab: one all-to-all; pencil: rows then "
                           "columns); --sizes does not apply, --grid does",
                           "1", argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    if (rc == 0 && !b.help) {
        if (b.sizes_given)
            rc = rw_bench_fail(&b, "--sizes does not apply: give --grid NXxNYxNZ[,...]");
        else if (!strcmp(decomp, "slab"))
            want[1] = 0;
        else if (!strcmp(decomp, "pencil"))
            want[0] = 0;
        else if (strcmp(decomp, "both"))
            rc = rw_bench_fail(&b, "--decomp must be slab, pencil or both, got '%s'", decomp);
        if (rc == 0)
            rc = parse_grids(&b, grid, grids, &n_grids);
        if (rc == 0 && pgrid_text) {
            if (rw_parse_dims(pgrid_text, 2, pgrid))
                rc = rw_bench_fail(&b, "--pgrid must be P1xP2, got '%s'", pgrid_text);
            else if ((long long)pgrid[0] * pgrid[1] != b.size)
                rc = rw_bench_fail(&b, "--pgrid %s holds %lld ranks, the job has %d", pgrid_text,
                                   (long long)pgrid[0] * pgrid[1], b.size);
        }
        if (rc == 0)
            rc = bench(&b, &f, want, grids, n_grids, pgrid_text ? pgrid : NULL);
    }
    int code = rc ? rw_bench_report_error(&b) : 0;
    MPI_Finalize();
    return code;
}
