/* Correctness of librankwise_coll against the MPI's own collectives.
 *
 * Linked with the library (or run under LD_PRELOAD / linked into an SMPI
 * program), so MPI_Bcast etc. run the algorithm the environment forces
 * (RANKWISE_COLL_BCAST=... for each collective); the reference is the
 * MPI's own through rw_coll_<op>(..., RW_COLL_PASSTHROUGH). Receive
 * buffers start from the same pattern on both sides and are compared
 * byte for byte, holes of derived types included (nothing written where
 * it must not be). Cases: contiguous, vector, struct and resized types,
 * different send and receive types, MPI_IN_PLACE, counts 0, 1 and large
 * odd, every root, split, reversed and several communicators, predefined
 * and user operations (commutative and not), MAXLOC; floating-point sums
 * repeat bit for bit and agree on all ranks; an intercommunicator and a
 * nonblocking collective pass through.
 *
 * Usage: coll_check [large-count] — prints "coll_check: C checks, F
 * failures" on rank 0, exit status 1 when F > 0. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankwise_coll.h"

static long checks, failures;
static int world_rank;

static void check(int ok, const char *what, const char *comm_name, int root, int count)
{
    checks++;
    if (!ok) {
        failures++;
        if (failures <= 20)
            fprintf(stderr, "coll_check: rank %d: FAIL %s on %s root %d count %d\n", world_rank, what, comm_name,
                    root, count);
    }
}

static void same(const void *a, const void *b, size_t n, const char *what, const char *cn, int root, int count)
{
    check(!memcmp(a, b, n), what, cn, root, count);
}

/* ---- data ---- */
static void fill_bytes(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = buf;
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

/* ints valid for sums, products stay small */
static void fill_ints(int *v, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int)((seed * 31u + (unsigned)i * 7u) % 1000u) - 500;
}

static void fill_doubles(double *v, size_t n, unsigned seed, int exact)
{
    for (size_t i = 0; i < n; i++)
        v[i] = exact ? (double)((seed * 13u + (unsigned)i) % 4096u) : 1.0 / (3.0 + seed + (double)i * 0.7);
}

/* ---- types ---- */
typedef struct { int a; double d; } pair_t;
typedef struct { MPI_Datatype t; const char *name; int ints_per; } type_t; /* ints_per: ints in one element (0: not ints) */
static type_t T_INT, T_VEC, T_STRUCT, T_RES;

static void make_types(void)
{
    T_INT = (type_t){MPI_INT, "int", 1};
    MPI_Type_vector(2, 1, 3, MPI_INT, &T_VEC.t); /* ints 0 and 3 of 4: holes at 1, 2 */
    MPI_Type_commit(&T_VEC.t);
    T_VEC.name = "vector";
    T_VEC.ints_per = 2;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(pair_t, a), offsetof(pair_t, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, s;
    MPI_Type_create_struct(2, bl, disp, ty, &s);
    MPI_Type_create_resized(s, 0, sizeof(pair_t), &T_STRUCT.t);
    MPI_Type_free(&s);
    MPI_Type_commit(&T_STRUCT.t);
    T_STRUCT.name = "struct";
    MPI_Type_create_resized(MPI_INT, 0, 12, &T_RES.t); /* an int every 12 bytes */
    MPI_Type_commit(&T_RES.t);
    T_RES.name = "resized";
    T_RES.ints_per = 1;
}

static size_t span(MPI_Datatype t, int count)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return (size_t)(count > 0 ? count : 1) * (size_t)ext + 16;
}

/* ---- operations ---- */
/* affine maps x -> a x + b composed: (f o g); associative, not commutative */
static void affine(void *in, void *inout, int *len, MPI_Datatype *t)
{
    unsigned long long *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        unsigned long long a = x[2 * i] * y[2 * i], b = x[2 * i] * y[2 * i + 1] + x[2 * i + 1];
        y[2 * i] = a;
        y[2 * i + 1] = b;
    }
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] += x[i];
}

/* Open MPI refuses predefined operations on derived types: user ones that
 * know the layouts of T_VEC (ints 0 and 3 of every 4) and T_RES (an int
 * every 12 bytes) */
static void vec_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[4 * i] += x[4 * i], y[4 * i + 3] += x[4 * i + 3];
}

static void res_max(void *in, void *inout, int *len, MPI_Datatype *t)
{
    for (int i = 0; i < *len; i++) {
        int *x = (int *)((char *)in + 12 * i), *y = (int *)((char *)inout + 12 * i);
        if (*x > *y)
            *y = *x;
    }
}

static MPI_Op OP_AFFINE, OP_USUM, OP_VSUM, OP_RMAX;
static MPI_Datatype T_AFF; /* two unsigned long long */

/* ---- the collectives, each compared with the MPI's own ---- */
static void t_bcast(MPI_Comm comm, const char *cn, type_t ty, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t sz = span(ty.t, count);
    char *a = malloc(sz), *b = malloc(sz);
    for (int root = 0; root < n; root++) {
        memset(a, 0x5a, sz);
        memset(b, 0x5a, sz);
        if (me == root) {
            fill_bytes(a, sz, (unsigned)(root + count));
            memcpy(b, a, sz);
        }
        MPI_Bcast(a, count, ty.t, root, comm);
        rw_coll_bcast(b, count, ty.t, root, comm, RW_COLL_PASSTHROUGH);
        same(a, b, sz, ty.name[0] == 'i' ? "bcast int" : ty.name, cn, root, count);
    }
    free(a);
    free(b);
}

static void t_reduce(MPI_Comm comm, const char *cn, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t sz = span(T_RES.t, count) + span(MPI_INT, 2 * count);
    int *s = malloc(sz), *a = malloc(sz), *b = malloc(sz);
    double *ds = malloc(sizeof(double) * (count + 1)), *da = malloc(sizeof(double) * (count + 1)),
           *db = malloc(sizeof(double) * (count + 1));
    struct { double v; int i; } *ls = malloc(sizeof *ls * (count + 1)), *la = malloc(sizeof *la * (count + 1)),
                                 *lb = malloc(sizeof *lb * (count + 1));
    unsigned long long *fs = malloc(16 * (count + 1)), *fa = malloc(16 * (count + 1)), *fb = malloc(16 * (count + 1));
    for (int root = 0; root < n; root++) {
        fill_ints(s, sz / sizeof(int), (unsigned)(me + 1));
        /* int sum, user sum, vector and resized types */
        MPI_Op ops[] = {MPI_SUM, OP_USUM, MPI_MAX, MPI_BAND};
        const char *names[] = {"reduce sum", "reduce user-sum", "reduce max", "reduce band"};
        for (int o = 0; o < 4; o++) {
            memset(a, 0x11, sz);
            memset(b, 0x11, sz);
            MPI_Reduce(s, a, count, MPI_INT, ops[o], root, comm);
            rw_coll_reduce(s, b, count, MPI_INT, ops[o], root, comm, RW_COLL_PASSTHROUGH);
            same(a, b, sz, names[o], cn, root, count);
        }
        memset(a, 0x11, sz);
        memset(b, 0x11, sz);
        MPI_Reduce(s, a, count / 2, T_VEC.t, OP_VSUM, root, comm);
        rw_coll_reduce(s, b, count / 2, T_VEC.t, OP_VSUM, root, comm, RW_COLL_PASSTHROUGH);
        same(a, b, sz, "reduce vector", cn, root, count / 2);
        memset(a, 0x11, sz);
        memset(b, 0x11, sz);
        MPI_Reduce(s, a, count / 3, T_RES.t, OP_RMAX, root, comm);
        rw_coll_reduce(s, b, count / 3, T_RES.t, OP_RMAX, root, comm, RW_COLL_PASSTHROUGH);
        same(a, b, sz, "reduce resized", cn, root, count / 3);
        /* in place at the root */
        fill_ints(a, sz / sizeof(int), (unsigned)(me + 1));
        memcpy(b, a, sz);
        MPI_Reduce(me == root ? MPI_IN_PLACE : a, a, count, MPI_INT, MPI_SUM, root, comm);
        rw_coll_reduce(me == root ? MPI_IN_PLACE : b, b, count, MPI_INT, MPI_SUM, root, comm, RW_COLL_PASSTHROUGH);
        if (me == root)
            same(a, b, sz, "reduce in place", cn, root, count);
        /* exact doubles, MAXLOC */
        fill_doubles(ds, count, (unsigned)me, 1);
        MPI_Reduce(ds, da, count, MPI_DOUBLE, MPI_SUM, root, comm);
        rw_coll_reduce(ds, db, count, MPI_DOUBLE, MPI_SUM, root, comm, RW_COLL_PASSTHROUGH);
        if (me == root)
            same(da, db, sizeof(double) * count, "reduce double", cn, root, count);
        for (int i = 0; i < count; i++)
            ls[i].v = (double)((me * 7 + i * 3) % 5), ls[i].i = me;
        memset(la, 0, sizeof *la * (count + 1));
        memset(lb, 0, sizeof *lb * (count + 1));
        MPI_Reduce(ls, la, count, MPI_DOUBLE_INT, MPI_MAXLOC, root, comm);
        rw_coll_reduce(ls, lb, count, MPI_DOUBLE_INT, MPI_MAXLOC, root, comm, RW_COLL_PASSTHROUGH);
        if (me == root)
            same(la, lb, sizeof *la * count, "reduce maxloc", cn, root, count);
        /* non-commutative: rank order */
        for (int i = 0; i < count; i++)
            fs[2 * i] = 3 + 2 * (unsigned)me + (unsigned)i, fs[2 * i + 1] = (unsigned)(me * 5 + i);
        MPI_Reduce(fs, fa, count, T_AFF, OP_AFFINE, root, comm);
        rw_coll_reduce(fs, fb, count, T_AFF, OP_AFFINE, root, comm, RW_COLL_PASSTHROUGH);
        if (me == root)
            same(fa, fb, 16 * (size_t)count, "reduce non-commutative", cn, root, count);
    }
    free(s), free(a), free(b), free(ds), free(da), free(db), free(ls), free(la), free(lb), free(fs), free(fa), free(fb);
}

/* gather and scatter; blocks of `count` ints sent as ints, received as
 * ty (count / ints_per elements) */
static void t_gather_scatter(MPI_Comm comm, const char *cn, type_t ty, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int tc = count / ty.ints_per, ic = tc * ty.ints_per;
    size_t big = span(ty.t, tc * n), small = span(MPI_INT, ic) + span(ty.t, tc);
    char *s = malloc(big > small ? big : small), *a = malloc(big), *b = malloc(big);
    char *ra = malloc(small), *rb = malloc(small);
    for (int root = 0; root < n; root++) {
        fill_bytes(s, small, (unsigned)(me * 100 + root));
        fill_ints((int *)s, ic, (unsigned)(me * 100 + root));
        memset(a, 0x33, big);
        memset(b, 0x33, big);
        MPI_Gather(s, ic, MPI_INT, a, tc, ty.t, root, comm);
        rw_coll_gather(s, ic, MPI_INT, b, tc, ty.t, root, comm, RW_COLL_PASSTHROUGH);
        if (me == root)
            same(a, b, big, "gather", cn, root, count);
        /* in place at the root: its block already in recvbuf */
        MPI_Aint lb, ext;
        MPI_Type_get_extent(ty.t, &lb, &ext);
        fill_bytes(a, big, (unsigned)(root + 7));
        memcpy(b, a, big);
        MPI_Gather(me == root ? MPI_IN_PLACE : s, ic, MPI_INT, a, tc, ty.t, root, comm);
        rw_coll_gather(me == root ? MPI_IN_PLACE : s, ic, MPI_INT, b, tc, ty.t, root, comm, RW_COLL_PASSTHROUGH);
        if (me == root)
            same(a, b, big, "gather in place", cn, root, count);
        /* scatter: root sends ty blocks, ranks receive ints */
        fill_bytes(a, big, (unsigned)(root + 11));
        memset(ra, 0x44, small);
        memset(rb, 0x44, small);
        MPI_Scatter(a, tc, ty.t, ra, ic, MPI_INT, root, comm);
        rw_coll_scatter(a, tc, ty.t, rb, ic, MPI_INT, root, comm, RW_COLL_PASSTHROUGH);
        same(ra, rb, small, "scatter", cn, root, count);
        /* in place at the root: its recvbuf is MPI_IN_PLACE */
        memset(ra, 0x44, small);
        memset(rb, 0x44, small);
        memcpy(b, a, big);
        MPI_Scatter(a, tc, ty.t, me == root ? MPI_IN_PLACE : ra, ic, MPI_INT, root, comm);
        rw_coll_scatter(b, tc, ty.t, me == root ? MPI_IN_PLACE : rb, ic, MPI_INT, root, comm, RW_COLL_PASSTHROUGH);
        same(ra, rb, small, "scatter in place", cn, root, count);
        same(a, b, big, "scatter in place (root's buffer untouched)", cn, root, count);
    }
    free(s), free(a), free(b), free(ra), free(rb);
}

static void t_allreduce(MPI_Comm comm, const char *cn, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t sz = span(MPI_INT, count);
    int *s = malloc(sz), *a = malloc(sz), *b = malloc(sz);
    fill_ints(s, count, (unsigned)me + 3);
    MPI_Op ops[] = {MPI_SUM, OP_USUM, MPI_MIN};
    for (int o = 0; o < 3; o++) {
        memset(a, 0x22, sz);
        memset(b, 0x22, sz);
        MPI_Allreduce(s, a, count, MPI_INT, ops[o], comm);
        rw_coll_allreduce(s, b, count, MPI_INT, ops[o], comm, RW_COLL_PASSTHROUGH);
        same(a, b, sz, o == 0 ? "allreduce sum" : o == 1 ? "allreduce user-sum" : "allreduce min", cn, -1, count);
    }
    memcpy(a, s, sz);
    memcpy(b, s, sz);
    MPI_Allreduce(MPI_IN_PLACE, a, count, MPI_INT, MPI_SUM, comm);
    rw_coll_allreduce(MPI_IN_PLACE, b, count, MPI_INT, MPI_SUM, comm, RW_COLL_PASSTHROUGH);
    same(a, b, sz, "allreduce in place", cn, -1, count);
    /* non-commutative */
    unsigned long long *fs = malloc(16 * (count + 1)), *fa = malloc(16 * (count + 1)), *fb = malloc(16 * (count + 1));
    for (int i = 0; i < count; i++)
        fs[2 * i] = 5 + 2 * (unsigned)me + (unsigned)i, fs[2 * i + 1] = (unsigned)(me * 3 + i);
    MPI_Allreduce(fs, fa, count, T_AFF, OP_AFFINE, comm);
    rw_coll_allreduce(fs, fb, count, T_AFF, OP_AFFINE, comm, RW_COLL_PASSTHROUGH);
    same(fa, fb, 16 * (size_t)count, "allreduce non-commutative", cn, -1, count);
    /* inexact doubles: the same bits on a second call and on every rank */
    double *ds = malloc(sizeof(double) * (count + 1)), *d1 = malloc(sizeof(double) * (count + 1)),
           *d2 = malloc(sizeof(double) * (count + 1)), *d0 = malloc(sizeof(double) * (count + 1));
    fill_doubles(ds, count, (unsigned)me, 0);
    MPI_Allreduce(ds, d1, count, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(ds, d2, count, MPI_DOUBLE, MPI_SUM, comm);
    same(d1, d2, sizeof(double) * count, "allreduce doubles repeat", cn, -1, count);
    memcpy(d0, d1, sizeof(double) * count);
    rw_coll_bcast(d0, count, MPI_DOUBLE, 0, comm, RW_COLL_PASSTHROUGH);
    same(d0, d1, sizeof(double) * count, "allreduce doubles equal on all ranks", cn, -1, count);
    free(s), free(a), free(b), free(fs), free(fa), free(fb), free(ds), free(d1), free(d2), free(d0);
}

static void t_allgather(MPI_Comm comm, const char *cn, type_t ty, int count)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int tc = count / ty.ints_per, ic = tc * ty.ints_per;
    size_t big = span(ty.t, tc * n), small = span(MPI_INT, ic);
    char *s = malloc(small), *a = malloc(big), *b = malloc(big);
    fill_ints((int *)s, ic, (unsigned)me + 9);
    memset(a, 0x66, big);
    memset(b, 0x66, big);
    MPI_Allgather(s, ic, MPI_INT, a, tc, ty.t, comm);
    rw_coll_allgather(s, ic, MPI_INT, b, tc, ty.t, comm, RW_COLL_PASSTHROUGH);
    same(a, b, big, "allgather", cn, -1, count);
    fill_bytes(a, big, (unsigned)me + 5);
    memcpy(b, a, big);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, tc, ty.t, comm);
    rw_coll_allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, tc, ty.t, comm, RW_COLL_PASSTHROUGH);
    same(a, b, big, "allgather in place", cn, -1, count);
    free(s), free(a), free(b);
}

static void t_struct(MPI_Comm comm, const char *cn, int count)
{
    /* struct elements: bcast, gather, scatter, allgather as struct on both sides */
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t big = span(T_STRUCT.t, count * n);
    char *s = malloc(big), *a = malloc(big), *b = malloc(big);
    t_bcast(comm, cn, T_STRUCT, count);
    int root = n - 1;
    fill_bytes(s, big, (unsigned)me);
    memset(a, 0x77, big);
    memset(b, 0x77, big);
    MPI_Gather(s, count, T_STRUCT.t, a, count, T_STRUCT.t, root, comm);
    rw_coll_gather(s, count, T_STRUCT.t, b, count, T_STRUCT.t, root, comm, RW_COLL_PASSTHROUGH);
    if (me == root)
        same(a, b, big, "gather struct", cn, root, count);
    memset(a, 0x77, big);
    memset(b, 0x77, big);
    MPI_Allgather(s, count, T_STRUCT.t, a, count, T_STRUCT.t, comm);
    rw_coll_allgather(s, count, T_STRUCT.t, b, count, T_STRUCT.t, comm, RW_COLL_PASSTHROUGH);
    same(a, b, big, "allgather struct", cn, -1, count);
    free(s), free(a), free(b);
}

static void all_cases(MPI_Comm comm, const char *cn, int large)
{
    int counts[] = {0, 1, 7, large};
    for (int i = 0; i < 4; i++) {
        int c = counts[i];
        t_bcast(comm, cn, T_INT, c);
        t_bcast(comm, cn, T_VEC, c);
        t_bcast(comm, cn, T_RES, c);
        t_reduce(comm, cn, c);
        t_gather_scatter(comm, cn, T_INT, c);
        t_gather_scatter(comm, cn, T_VEC, c);
        t_allreduce(comm, cn, c);
        t_allgather(comm, cn, T_INT, c);
        t_allgather(comm, cn, T_RES, c);
        t_struct(comm, cn, c);
    }
}

/* The C API: explicit algorithms and caller's trees, and its refusals. */
static void t_api(MPI_Comm comm)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int a[64], b[64];
    rw_coll_alg algs[] = {RW_COLL_BINOMIAL, RW_COLL_KNOMIAL, RW_COLL_FLAT, RW_COLL_CHAIN, RW_COLL_HIER,
                          RW_COLL_TRINARY};
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < 64; k++)
            a[k] = b[k] = me == n - 1 ? k * 3 + i : -1;
        check(rw_coll_bcast(a, 64, MPI_INT, n - 1, comm, algs[i]) == RW_OK, "rw_coll_bcast", "api", n - 1, 64);
        rw_coll_bcast(b, 64, MPI_INT, n - 1, comm, RW_COLL_PASSTHROUGH);
        same(a, b, sizeof a, rw_coll_alg_name(algs[i]), "api", n - 1, 64);
    }
    /* a caller's tree: a chain in reverse rank order from the last rank, pipelined */
    int32_t *parent = malloc(sizeof(int32_t) * (size_t)n);
    for (int r = 0; r < n; r++)
        parent[r] = r == n - 1 ? -1 : r + 1;
    rw_tree *t = NULL;
    rw_tree_from_parents(n, n - 1, parent, NULL, &t);
    for (int k = 0; k < 64; k++)
        a[k] = me == n - 1 ? 1000 + k : 0;
    check(rw_coll_bcast_tree(a, 64, MPI_INT, t, comm, 20) == RW_OK && a[63] == 1063 && a[0] == 1000,
          "rw_coll_bcast_tree", "api", n - 1, 64);
    int one = me + 1, sum = 0;
    check(rw_coll_reduce_tree(&one, &sum, 1, MPI_INT, MPI_SUM, t, comm) == RW_OK &&
              (me != n - 1 || sum == n * (n + 1) / 2), "rw_coll_reduce_tree", "api", n - 1, 1);
    /* refused before anything is sent */
    unsigned long long f[2] = {1, 1}, g[2];
    if (n >= 4) { /* 2 -> 0: the subtree {0, 2} is out of rank order */
        rw_tree *u = NULL;
        for (int r = 0; r < n; r++)
            parent[r] = r == n - 1 ? -1 : r == 0 ? 2 : n - 1;
        rw_tree_from_parents(n, n - 1, parent, NULL, &u);
        check(!rw_tree_is_in_order(u) && rw_coll_reduce_tree(f, g, 1, T_AFF, OP_AFFINE, u, comm) == RW_ERR_STATE,
              "non-commutative refused", "api", n - 1, 1);
        rw_tree_free(u);
    }
    /* trinary: a long message (default segments, thirds of 50001 ints) from every root */
    enum { LONG = 50001 };
    int *la = malloc(sizeof(int) * LONG), *lb = malloc(sizeof(int) * LONG);
    for (int root = 0; root < n; root++) {
        for (int k = 0; k < LONG; k++)
            la[k] = lb[k] = me == root ? k * 7 + root : -1;
        check(rw_coll_bcast(la, LONG, MPI_INT, root, comm, RW_COLL_TRINARY) == RW_OK, "trinary long", "api", root,
              LONG);
        rw_coll_bcast(lb, LONG, MPI_INT, root, comm, RW_COLL_PASSTHROUGH);
        same(la, lb, sizeof(int) * LONG, "trinary", "api", root, LONG);
    }
    free(la);
    free(lb);
    /* trinary reduce and allreduce of a long vector (default segments) against the MPI's own */
    long *ls = malloc(sizeof(long) * LONG), *lr = malloc(sizeof(long) * LONG), *lm = malloc(sizeof(long) * LONG);
    for (int k = 0; k < LONG; k++)
        ls[k] = (long)k * (me + 3) - me;
    for (int root = 0; root < n; root += n > 3 ? n / 3 : 1) {
        for (int k = 0; k < LONG; k++)
            lr[k] = lm[k] = -7;
        check(rw_coll_reduce(ls, lr, LONG, MPI_LONG, MPI_SUM, root, comm, RW_COLL_TRINARY) == RW_OK,
              "trinary reduce long", "api", root, LONG);
        rw_coll_reduce(ls, lm, LONG, MPI_LONG, MPI_SUM, root, comm, RW_COLL_PASSTHROUGH);
        same(lr, lm, sizeof(long) * LONG, "trinary reduce", "api", root, LONG);
    }
    check(rw_coll_allreduce(ls, lr, LONG, MPI_LONG, MPI_MAX, comm, RW_COLL_TRINARY) == RW_OK,
          "trinary allreduce long", "api", -1, LONG);
    rw_coll_allreduce(ls, lm, LONG, MPI_LONG, MPI_MAX, comm, RW_COLL_PASSTHROUGH);
    same(lr, lm, sizeof(long) * LONG, "trinary allreduce", "api", -1, LONG);
    free(ls);
    free(lr);
    free(lm);
    check(rw_coll_reduce(f, g, 1, T_AFF, OP_AFFINE, 0, comm, RW_COLL_TRINARY) == RW_ERR_STATE &&
              rw_coll_allreduce(f, g, 1, T_AFF, OP_AFFINE, comm, RW_COLL_TRINARY) == RW_ERR_STATE &&
              rw_coll_allgather(&one, 1, MPI_INT, b, 1, MPI_INT, comm, RW_COLL_TRINARY) == RW_ERR_ARG,
          "trinary: commutative reduce and allreduce, no allgather", "api", 0, 1);
    check(rw_coll_alg_parse("trinary", &(rw_coll_alg){0}) == RW_OK, "parse trinary", "api", 0, 0);
    /* multiring: allgather only, refused elsewhere before anything is sent */
    int ma[64], mb[64], mine[2] = {me, -me};
    check(n > 32 || (rw_coll_allgather(mine, 2, MPI_INT, ma, 2, MPI_INT, comm, RW_COLL_MULTIRING) == RW_OK &&
                     rw_coll_allgather(mine, 2, MPI_INT, mb, 2, MPI_INT, comm, RW_COLL_PASSTHROUGH) == RW_OK &&
                     !memcmp(ma, mb, sizeof(int) * 2 * (size_t)n)),
          "multiring allgather", "api", -1, 2);
    check(rw_coll_bcast(a, 1, MPI_INT, 0, comm, RW_COLL_MULTIRING) == RW_ERR_ARG &&
              rw_coll_reduce(&one, b, 1, MPI_INT, MPI_SUM, 0, comm, RW_COLL_MULTIRING) == RW_ERR_ARG &&
              rw_coll_allreduce(&one, b, 1, MPI_INT, MPI_SUM, comm, RW_COLL_MULTIRING) == RW_ERR_ARG,
          "multiring: allgather only", "api", 0, 1);
    check(rw_coll_alg_parse("multiring", &(rw_coll_alg){0}) == RW_OK, "parse multiring", "api", 0, 0);
    /* a predefined operation the datatype does not take: refused before anything is sent */
    float fl[2] = {1.0f, 0.0f}, fr[2];
    check(rw_coll_reduce(fl, fr, 2, MPI_FLOAT, MPI_LAND, 0, comm, RW_COLL_BINOMIAL) == RW_ERR_ARG &&
              rw_coll_allreduce(fl, fr, 2, MPI_FLOAT, MPI_LXOR, comm, RW_COLL_RING) == RW_ERR_ARG &&
              rw_coll_reduce(fl, fr, 1, MPI_FLOAT, MPI_MAXLOC, 0, comm, RW_COLL_TRINARY) == RW_ERR_ARG &&
              rw_coll_reduce(&one, b, 1, MPI_INT, MPI_LAND, 0, comm, RW_COLL_TRINARY) == RW_OK,
          "an operation the datatype does not take", "api", 0, 1);
    check(rw_coll_bcast(a, 1, MPI_INT, n, comm, RW_COLL_BINOMIAL) == RW_ERR_ARG, "root out of range", "api", n, 1);
    check(rw_coll_bcast(a, 1, MPI_INT, 0, comm, RW_COLL_RING) == RW_ERR_ARG, "ring bcast refused", "api", 0, 1);
    /* an algorithm of another operation is refused, not run as a tree */
    int pa = me, pb[64];
    check(rw_coll_allreduce(&one, b, 1, MPI_INT, MPI_SUM, comm, RW_COLL_PAIRWISE) == RW_ERR_ARG &&
              strstr(rw_last_error(), "pairwise") && strstr(rw_last_error(), "allreduce") &&
              rw_coll_allreduce(&one, b, 1, MPI_INT, MPI_SUM, comm, RW_COLL_SYMMETRIC) == RW_ERR_ARG &&
              rw_coll_bcast(a, 1, MPI_INT, 0, comm, RW_COLL_PAIRWISE) == RW_ERR_ARG &&
              rw_coll_reduce(&one, b, 1, MPI_INT, MPI_SUM, 0, comm, RW_COLL_SYMMETRIC) == RW_ERR_ARG &&
              rw_coll_gather(&pa, 1, MPI_INT, pb, 1, MPI_INT, 0, comm, RW_COLL_RING) == RW_ERR_ARG &&
              rw_coll_scatter(pb, 1, MPI_INT, &pa, 1, MPI_INT, 0, comm, RW_COLL_RECURSIVE_DOUBLING) == RW_ERR_ARG &&
              rw_coll_allgather(&pa, 1, MPI_INT, pb, 1, MPI_INT, comm, RW_COLL_PAIRWISE) == RW_ERR_ARG &&
              rw_coll_alltoall(pb, 1, MPI_INT, pb + 32, 1, MPI_INT, comm, RW_COLL_RING) == RW_ERR_ARG,
          "alltoall's algorithms refused elsewhere, others' refused by alltoall", "api", 0, 1);
    check(rw_coll_bcast(a, 1, MPI_INT, 0, comm, (rw_coll_alg)99) == RW_ERR_ARG &&
              strlen(rw_last_error()) > 0, "unknown algorithm", "api", 0, 1);
    rw_coll_alg parsed;
    check(rw_coll_alg_parse("rd", &parsed) == RW_OK && parsed == RW_COLL_RECURSIVE_DOUBLING &&
              rw_coll_alg_parse("fastest", &parsed) == RW_ERR_ARG, "rw_coll_alg_parse", "api", 0, 0);
    rw_tree_free(t);
    free(parent);
}

/* an intercommunicator and a nonblocking broadcast reach the MPI */
static void pass_through(MPI_Comm world)
{
    int me, n;
    MPI_Comm_rank(world, &me);
    MPI_Comm_size(world, &n);
    int v = me == 0 ? 4242 : -1;
    MPI_Request req;
    MPI_Ibcast(&v, 1, MPI_INT, 0, world, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(v == 4242, "ibcast", "world", 0, 1);
#ifdef SMPI_H /* SimGrid 3.32 has no MPI_Intercomm_create */
    return;
#endif
    if (n < 2)
        return;
    MPI_Comm half, inter;
    int low = me < n / 2;
    MPI_Comm_split(world, low, me, &half);
    MPI_Intercomm_create(half, 0, world, low ? n / 2 : 0, 7, &inter);
    int hr;
    MPI_Comm_rank(half, &hr);
    /* the low group's rank 0 broadcasts to the high group */
    int w = low && hr == 0 ? 99 : -1;
    int root = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(&w, 1, MPI_INT, root, inter);
    if (!low)
        check(w == 99, "intercommunicator bcast", "inter", 0, 1);
    int x = me + 1, sum = 0, hsize, rsize;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter); /* the other group's sum */
    MPI_Comm_size(half, &hsize);
    MPI_Comm_remote_size(inter, &rsize);
    int lo_sum = (n / 2) * (n / 2 + 1) / 2, all = n * (n + 1) / 2;
    check(sum == (low ? all - lo_sum : lo_sum), "intercommunicator allreduce", "inter", -1, 1);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int n, large = argc > 1 ? atoi(argv[1]) : 10007;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    make_types();
    MPI_Type_contiguous(2, MPI_UNSIGNED_LONG_LONG, &T_AFF);
    MPI_Type_commit(&T_AFF);
    MPI_Op_create(affine, 0, &OP_AFFINE);
    MPI_Op_create(user_sum, 1, &OP_USUM);
    MPI_Op_create(vec_sum, 1, &OP_VSUM);
    MPI_Op_create(res_max, 1, &OP_RMAX);

    all_cases(MPI_COMM_WORLD, "world", large);
    /* split (odd and even ranks) and reversed communicators, several alive at once */
    MPI_Comm parity, reversed, dup;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &parity);
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - world_rank, &reversed);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    all_cases(parity, "split", large / 3);
    all_cases(reversed, "reversed", 33);
    t_allreduce(dup, "dup", 5);
    t_bcast(parity, "split", T_INT, 3);
    t_reduce(reversed, "reversed", 3);
    MPI_Comm_free(&parity);
    t_allreduce(reversed, "reversed (after freeing another)", 9);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&dup);
    pass_through(MPI_COMM_WORLD);
    t_api(MPI_COMM_WORLD);

    long totals[2] = {checks, failures}, sums[2];
    rw_coll_allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, RW_COLL_PASSTHROUGH);
    if (world_rank == 0)
        printf("coll_check: %ld checks, %ld failures\n", sums[0], sums[1]);
    MPI_Op_free(&OP_AFFINE);
    MPI_Op_free(&OP_USUM);
    MPI_Op_free(&OP_VSUM);
    MPI_Op_free(&OP_RMAX);
    MPI_Finalize();
    return sums[1] ? 1 : 0;
}
