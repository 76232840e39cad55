/* Correctness of librankwise_coll's MPI_Alltoall against the MPI's own.
 *
 * Linked with the library (or linked into an SMPI program), so
 * MPI_Alltoall runs the algorithm RANKWISE_COLL_ALLTOALL forces; the
 * reference is the MPI's own MPI_Alltoallv with every count equal (which
 * the library does not intercept; not in place), checked in turn against the values
 * each rank computes it must receive. Receive buffers start from the same
 * pattern on both sides and are compared byte for byte, holes of derived
 * types included. Cases: contiguous, vector and resized struct types,
 * different send and receive types of one signature, MPI_IN_PLACE, counts
 * 0, 1, 7 and a large odd one, on the world, a split, a reversed and a
 * duplicated communicator.
 *
 * Usage: alltoall_check [large-count] — prints "alltoall_check: C checks,
 * F failures" on rank 0, exit status 1 when F > 0. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long checks, failures;
static int world_rank;

static void check(int ok, const char *what, const char *comm_name, int count)
{
    checks++;
    if (!ok && ++failures <= 20)
        fprintf(stderr, "alltoall_check: rank %d: FAIL %s on %s count %d\n", world_rank, what, comm_name, count);
}

/* the int a rank sends as element i of its block for rank `to` */
static int value(int from, int to, int i)
{
    return from * 1000003 + to * 1009 + i;
}

static void fill_pattern(char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (char)(x >> 16);
    }
}

/* A datatype of `per` ints per element, laid out with holes, and the
 * offsets (in ints from the element's start) of its ints. */
typedef struct layout {
    const char *name;
    MPI_Datatype type;
    int per;       /* ints per element */
    int off[4];    /* where they are */
    MPI_Aint ext;  /* bytes per element */
} layout;

static layout make(int kind)
{
    layout l = {0};
    if (kind == 0) {
        l = (layout){"int", MPI_INT, 1, {0}, sizeof(int)};
    } else if (kind == 1) { /* two blocks of one int, stride 3: ints 0 and 3, extent 4 ints */
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 3, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 5 * sizeof(int), &l.type);
        MPI_Type_free(&v);
        MPI_Type_commit(&l.type);
        l.name = "vector";
        l.per = 2;
        l.off[0] = 0;
        l.off[1] = 3;
        l.ext = 5 * sizeof(int);
    } else if (kind == 2) { /* struct of ints 1 and 2 in a 4-int extent */
        int len[2] = {1, 1};
        MPI_Aint disp[2] = {sizeof(int), 2 * sizeof(int)};
        MPI_Datatype types[2] = {MPI_INT, MPI_INT}, s;
        MPI_Type_create_struct(2, len, disp, types, &s);
        MPI_Type_create_resized(s, 0, 4 * sizeof(int), &l.type);
        MPI_Type_free(&s);
        MPI_Type_commit(&l.type);
        l.name = "struct";
        l.per = 2;
        l.off[0] = 1;
        l.off[1] = 2;
        l.ext = 4 * sizeof(int);
    } else { /* three contiguous ints as one element */
        MPI_Type_contiguous(3, MPI_INT, &l.type);
        MPI_Type_commit(&l.type);
        l.name = "contiguous3";
        l.per = 3;
        l.off[0] = 0;
        l.off[1] = 1;
        l.off[2] = 2;
        l.ext = 3 * sizeof(int);
    }
    return l;
}

static void unmake(layout *l)
{
    if (l->type != MPI_INT)
        MPI_Type_free(&l->type);
}

/* Write the ints rank `me` sends to each rank into buf laid out as l. */
static void fill_send(char *buf, const layout *l, int count, int me, int n)
{
    for (int to = 0; to < n; to++)
        for (int e = 0; e < count; e++)
            for (int k = 0; k < l->per; k++) {
                int v = value(me, to, e * l->per + k);
                memcpy(buf + ((size_t)to * count + e) * l->ext + l->off[k] * sizeof(int), &v, sizeof v);
            }
}

/* Whether buf (laid out as l) holds, from every rank, what it sent to me. */
static int received_right(const char *buf, const layout *l, int count, int me, int n)
{
    for (int from = 0; from < n; from++)
        for (int e = 0; e < count; e++)
            for (int k = 0; k < l->per; k++) {
                int v;
                memcpy(&v, buf + ((size_t)from * count + e) * l->ext + l->off[k] * sizeof(int), sizeof v);
                if (v != value(from, me, e * l->per + k))
                    return 0;
            }
    return 1;
}

/* One case: send as ls (scount elements), receive as lr (rcount); in place
 * when in_place (then the data starts in the receive buffer). */
static void one(MPI_Comm comm, const char *cn, const layout *ls, int scount, const layout *lr, int rcount,
                int in_place)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t sbytes = (size_t)n * scount * ls->ext + 16, rbytes = (size_t)n * rcount * lr->ext + 16;
    char *s = malloc(sbytes), *r = malloc(rbytes), *ref = malloc(rbytes), *refs = malloc(sbytes);
    int *counts = malloc(n * sizeof(int)), *sdisp = malloc(n * sizeof(int)), *rdisp = malloc(n * sizeof(int));
    fill_pattern(s, sbytes, 7u + me);
    fill_pattern(r, rbytes, 99u + me);
    if (in_place)
        fill_send(r, lr, rcount, me, n);
    else
        fill_send(s, ls, scount, me, n);
    memcpy(ref, r, rbytes);
    memcpy(refs, s, sbytes);
    /* In place, the reference sends from a copy of the receive buffer: the
     * same result by MPI's definition (SMPI 3.32's MPI_Alltoallv in place
     * mixes derived types' blocks up). */
    char *ins = in_place ? malloc(rbytes) : NULL;
    if (ins)
        memcpy(ins, r, rbytes);
    char what[160];
    snprintf(what, sizeof what, "alltoall %s x%d -> %s x%d%s", ls->name, scount, lr->name, rcount,
             in_place ? " in place" : "");
    int rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : s, scount, ls->type, r, rcount, lr->type, comm);
    check(rc == MPI_SUCCESS, what, cn, rcount);
    for (int i = 0; i < n; i++) {
        counts[i] = in_place ? rcount : scount;
        sdisp[i] = i * counts[i];
        rdisp[i] = i * rcount;
    }
    int *rcounts = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        rcounts[i] = rcount;
    rc = MPI_Alltoallv(in_place ? ins : refs, counts, sdisp, in_place ? lr->type : ls->type, ref, rcounts, rdisp,
                       lr->type, comm);
    check(rc == MPI_SUCCESS, "MPI_Alltoallv (reference)", cn, rcount);
    check(received_right(r, lr, rcount, me, n), what, cn, rcount);
    /* the reference must be right too, else the comparison says nothing */
    check(received_right(ref, lr, rcount, me, n), "MPI_Alltoallv (reference) values", cn, rcount);
    check(!memcmp(r, ref, rbytes), "bytes as MPI_Alltoallv's", cn, rcount);
    check(in_place || !memcmp(s, refs, sbytes), "send buffer unchanged", cn, rcount);
    free(s);
    free(r);
    free(ref);
    free(refs);
    free(ins);
    free(counts);
    free(rcounts);
    free(sdisp);
    free(rdisp);
}

static void on(MPI_Comm comm, const char *cn, int large)
{
    int counts[] = {0, 1, 7, large};
    layout l[4];
    for (int k = 0; k < 4; k++)
        l[k] = make(k);
    for (int c = 0; c < 4; c++) {
        int count = counts[c];
        for (int k = 0; k < 3; k++) {
            one(comm, cn, &l[k], count, &l[k], count, 0);
            one(comm, cn, &l[k], count, &l[k], count, 1);
        }
        /* one signature, two layouts: 3 ints as one element or as three, vector (2 ints) as struct */
        one(comm, cn, &l[3], count, &l[0], 3 * count, 0);
        one(comm, cn, &l[0], 3 * count, &l[3], count, 0);
        one(comm, cn, &l[1], count, &l[2], count, 0);
    }
    for (int k = 0; k < 4; k++)
        unmake(&l[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int large = argc > 1 ? atoi(argv[1]) : 1001;
    on(MPI_COMM_WORLD, "world", large);
    MPI_Comm half, reversed, dup;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - world_rank, &reversed);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    on(half, "split", large);
    on(reversed, "reversed", large);
    on(dup, "dup", 3);
    MPI_Comm_free(&half);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&dup);
    long all[2] = {checks, failures}, sum[2];
    MPI_Reduce(all, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("alltoall_check: %ld checks, %ld failures\n", sum[0], sum[1]);
    MPI_Finalize();
    return world_rank == 0 && sum[1] > 0;
}
