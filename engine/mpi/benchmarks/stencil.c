/* rankwise-bench-stencil: the 26-neighbour halo exchange of a 3-D stencil
 * on a PX x PY x PZ process grid, in the three ways of Cui et al. 2020 (§3.2).
 *
 * Ranks are placed as MPI_Cart_create places them: rank (x, y, z) =
 * (x PY + y) PZ + z, the last coordinate varying fastest, as
 * rankwise.patterns.stencil3d numbers them; in MPI_COMM_WORLD's order, or
 * with --reorder in the order MPI_Cart_create(reorder = 1) returns (the
 * MPI's own, or rankwise's mapper under librankwise_coll with
 * RANKWISE_MODEL: docs/concepts/collectives.md, "Topology reordering"), or with
 * --reorder-graph in the order of MPI_Dist_graph_create_adjacent
 * (reorder = 1) given each neighbour weighted by the blocks the first mode
 * asked sends it: a Cartesian grid tells the MPI no volumes, a weighted
 * graph does. Every rank owns one block of
 * SIZE bytes that each of its neighbours (faces, edges and corners alike)
 * must receive; a neighbour beyond a face of a non-periodic grid is absent.
 *
 *   1d      all 26 neighbours at once: 26 Isend/Irecv of SIZE bytes
 *           (the traffic of patterns.stencil3d with neighbours=26);
 *   2d      the 8 neighbours of the xy plane at once (SIZE each), then
 *           z-1 and z+1 with 9 x SIZE: the whole 3x3 plane just gathered,
 *           which forwards the blocks meant for the z-edge and corner
 *           neighbours;
 *   3d      (also "2-2-2") x-1/x+1 with SIZE, then y-1/y+1 with 3 x SIZE
 *           (the row of three blocks), then z-1/z+1 with 9 x SIZE.
 *
 * Every mode moves 26 x SIZE bytes per rank and leaves the same 27 blocks
 * in the same places; the forwarding modes send 2 (or 6) messages per
 * phase instead of 26. The block of the neighbour at offset (dx, dy, dz)
 * lands in slot (dz+1) 9 + (dy+1) 3 + (dx+1) of a 27-block buffer (slot 13
 * is the rank's own), which makes a row of three blocks and a plane of
 * nine contiguous. --check fills each rank's block with rank-derived
 * bytes and verifies every slot after every exchange. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "live_mode.h"

#define SLOTS 27
#define SELF 13

enum mode { MODE_1D, MODE_2D, MODE_3D, N_MODES };
static const char *const mode_names[N_MODES] = {"1d", "2d", "3d"};

typedef struct stencil {
    rw_bench *b;
    int dims[3], periodic, check, reorder, reorder_graph;
    enum mode mode;
    int nbr[SLOTS];     /* rank at each offset, MPI_PROC_NULL when absent */
    char *buf;          /* SLOTS blocks */
    int n_neighbours;   /* present ones, self excluded */
} stencil;

static int slot_of(int dx, int dy, int dz) { return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1); }

/* The rank at each offset of rank r; returns how many are present. */
static int neighbours_of(const stencil *s, int r, int *nbr)
{
    int py = s->dims[1], pz = s->dims[2], present = 0;
    int c[3] = {r / (py * pz), (r / pz) % py, r % pz};
    for (int k = 0; k < SLOTS; k++) {
        int d[3] = {k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1}, n[3], inside = 1;
        for (int a = 0; a < 3; a++) {
            n[a] = c[a] + d[a];
            if (s->periodic)
                n[a] = (n[a] + s->dims[a]) % s->dims[a];
            else if (n[a] < 0 || n[a] >= s->dims[a])
                inside = 0;
        }
        nbr[k] = inside ? (n[0] * py + n[1]) * pz + n[2] : MPI_PROC_NULL;
        present += inside && k != SELF;
    }
    return present;
}

static void find_neighbours(stencil *s)
{
    s->n_neighbours = neighbours_of(s, s->b->rank, s->nbr);
}

/* Exchange with the neighbours at the given slots: to slot k's rank send
 * `blocks` blocks starting at slot `send_from`; from it receive as many
 * into the slots ending where slot k's own data belongs (recv_at[i]).
 * The tag is the slot seen from the sender, so a rank reached through two
 * offsets (periodic grids of 1 or 2) still matches each message. */
static void exchange(stencil *s, const int *slots, const int *recv_at, int n, int send_from,
                     int blocks, size_t m)
{
    MPI_Request req[2 * 26];
    int count = (int)(m * (size_t)blocks);
    for (int i = 0; i < n; i++) {
        int k = slots[i];
        MPI_Irecv(s->buf + (size_t)recv_at[i] * m, count, MPI_BYTE, s->nbr[k], SLOTS - 1 - k,
                  s->b->comm, &req[2 * i]);
        MPI_Isend(s->buf + (size_t)send_from * m, count, MPI_BYTE, s->nbr[k], k, s->b->comm,
                  &req[2 * i + 1]);
    }
    MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE);
}

static void exchange_1d(stencil *s, size_t m)
{
    int slots[26], n = 0;
    for (int k = 0; k < SLOTS; k++)
        if (k != SELF)
            slots[n++] = k;
    exchange(s, slots, slots, n, SELF, 1, m);
}

/* z-1 and z+1: the plane of 9 blocks (slots 9..17) into slots 0..8 / 18..26. */
static void exchange_z_planes(stencil *s, size_t m)
{
    const int slots[2] = {slot_of(0, 0, -1), slot_of(0, 0, 1)}, at[2] = {0, 18};
    exchange(s, slots, at, 2, 9, 9, m);
}

static void exchange_2d(stencil *s, size_t m)
{
    int slots[8], n = 0;
    for (int k = 9; k < 18; k++)
        if (k != SELF)
            slots[n++] = k;
    exchange(s, slots, slots, n, SELF, 1, m);
    exchange_z_planes(s, m);
}

static void exchange_3d(stencil *s, size_t m)
{
    const int x[2] = {slot_of(-1, 0, 0), slot_of(1, 0, 0)};
    exchange(s, x, x, 2, SELF, 1, m);
    /* y-1 and y+1: the row of 3 blocks (slots 12..14) into 9..11 / 15..17 */
    const int y[2] = {slot_of(0, -1, 0), slot_of(0, 1, 0)}, y_at[2] = {9, 15};
    exchange(s, y, y_at, 2, 12, 3, m);
    exchange_z_planes(s, m);
}

static int run(void *ctx, int64_t size, int iteration)
{
    stencil *s = ctx;
    size_t m = (size_t)size;
    (void)iteration;
    if (s->check) /* everything but the rank's own block */
        for (int k = 0; k < SLOTS; k++)
            if (k != SELF)
                memset(s->buf + (size_t)k * m, 0, m);
    switch (s->mode) {
    case MODE_1D: exchange_1d(s, m); break;
    case MODE_2D: exchange_2d(s, m); break;
    default: exchange_3d(s, m); break;
    }
    if (!s->check)
        return 0;
    int bad = 0;
    for (int k = 0; k < SLOTS; k++)
        if (k != SELF && s->nbr[k] != MPI_PROC_NULL)
            bad |= rw_bench_verify(s->buf + (size_t)k * m, m, s->nbr[k], 0) != 0;
    return bad;
}

static int parse_modes(rw_bench *b, const char *text, int *want)
{
    for (int i = 0; i < N_MODES; i++)
        want[i] = 0;
    if (!strcmp(text, "all")) {
        for (int i = 0; i < N_MODES; i++)
            want[i] = 1;
        return 0;
    }
    char copy[64];
    snprintf(copy, sizeof copy, "%s", text);
    char *save = NULL;
    int any = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < N_MODES; i++)
            if (!strcmp(tok, mode_names[i]))
                found = i;
        if (!strcmp(tok, "2-2-2"))
            found = MODE_3D;
        if (found < 0)
            return rw_bench_fail(b, "--mode must be 1d, 2d, 3d (or 2-2-2), a list of them or all, "
                                 "got '%s'", text);
        want[found] = any = 1;
    }
    return any ? 0 : rw_bench_fail(b, "--mode is empty");
}

/* --live: the traffic of one exchange, each neighbour's block (the
 * forwarding modes move the same blocks in fewer messages). */
static rw_matrix *stencil_traffic(void *ctx, int64_t size)
{
    stencil *s = ctx;
    int n = s->b->size, nbr[SLOTS];
    int64_t count = 0, most = (int64_t)n * (SLOTS - 1);
    int32_t *src = malloc((size_t)most * sizeof *src), *dst = malloc((size_t)most * sizeof *dst);
    int64_t *msgs = malloc((size_t)most * sizeof *msgs), *bytes = malloc((size_t)most * sizeof *bytes);
    rw_matrix *m = NULL;
    for (int r = 0; src && dst && msgs && bytes && r < n; r++) {
        neighbours_of(s, r, nbr);
        for (int k = 0; k < SLOTS; k++)
            if (k != SELF && nbr[k] != MPI_PROC_NULL && nbr[k] != r) {
                src[count] = r;
                dst[count] = nbr[k];
                msgs[count] = 1;
                bytes[count++] = size;
            }
    }
    if (src && dst && msgs && bytes && rw_matrix_create(n, count, src, dst, msgs, bytes, &m) != RW_OK)
        m = NULL;
    free(src);
    free(dst);
    free(msgs);
    free(bytes);
    return m;
}

/* --live: this rank's own block goes with its old rank; the neighbours
 * are those of the new one. */
static int stencil_moved(void *ctx, MPI_Comm oldcomm, MPI_Comm newcomm)
{
    stencil *s = ctx;
    size_t m = (size_t)s->b->sizes.v[0];
    char *tmp = malloc(m);
    if (!tmp)
        return -1;
    int rc = rw_live_mode_move(s->buf + SELF * m, tmp, m, oldcomm, newcomm);
    if (!rc)
        memcpy(s->buf + SELF * m, tmp, m);
    free(tmp);
    find_neighbours(s);
    return rc;
}

/* The 27 blocks of one size on every rank (collective), the rank's own
 * block filled when checking; non-zero (and freed) when any rank lacks it. */
static int alloc_blocks(rw_bench *b, stencil *s, int64_t size)
{
    s->buf = rw_bench_alloc((size_t)SLOTS * (size_t)size, !s->check);
    if (!rw_bench_all_ok(b, s->buf != NULL)) {
        rw_bench_free(s->buf, !s->check);
        return rw_bench_fail(b, "out of memory for 27 blocks of %lld bytes", (long long)size);
    }
    if (s->check)
        rw_bench_fill(s->buf + (size_t)SELF * (size_t)size, (size_t)size, b->rank, 0);
    return 0;
}

static int bench_live(rw_bench *b, stencil *s, const int *want, const rw_live_opts *live)
{
    int64_t size = b->sizes.v[0];
    for (int md = N_MODES - 1; md >= 0; md--) /* the first mode asked for */
        if (want[md])
            s->mode = (enum mode)md;
    rw_bench_meta(b, "mode", "%s", mode_names[s->mode]);
    int rc = alloc_blocks(b, s, size);
    if (rc)
        return rc;
    const rw_live_app app = {run, s, stencil_moved, stencil_traffic};
    rc = rw_live_run(b, live, &app, size);
    rw_bench_free(s->buf, !s->check);
    return rc;
}

static int bench(rw_bench *b, stencil *s, const int *want, const rw_live_opts *live)
{
    find_neighbours(s);
    int most = 0, sum = 0;
    rw_bench_pcontrol(0);
    MPI_Allreduce(&s->n_neighbours, &most, 1, MPI_INT, MPI_MAX, b->comm);
    MPI_Allreduce(&s->n_neighbours, &sum, 1, MPI_INT, MPI_SUM, b->comm);
    rw_bench_pcontrol(1);
    rw_bench_header(b);
    rw_bench_meta(b, "operation", "3-D stencil halo exchange, 26 neighbours");
    rw_bench_meta(b, "grid", "%dx%dx%d", s->dims[0], s->dims[1], s->dims[2]);
    rw_bench_meta(b, "periodic", "%d", s->periodic);
    if (s->reorder || s->reorder_graph) {
        int world, moved = 0;
        rw_bench_pcontrol(0);
        MPI_Comm_rank(MPI_COMM_WORLD, &world);
        int mine = world != b->rank;
        MPI_Allreduce(&mine, &moved, 1, MPI_INT, MPI_SUM, b->comm);
        rw_bench_pcontrol(1);
        rw_bench_meta(b, "order", "%s: %d of %d ranks renumbered",
                      s->reorder ? "MPI_Cart_create(reorder=1)"
                                 : "MPI_Dist_graph_create_adjacent(reorder=1), weighted by the first mode",
                      moved, b->size);
    } else {
        rw_bench_meta(b, "order", "MPI_COMM_WORLD's");
    }
    rw_bench_meta(b, "neighbours", "%d at most, %.2f on average", most, (double)sum / b->size);
    rw_bench_meta(b, "size", "bytes of the block each rank sends to each neighbour");
    rw_bench_meta(b, "modes", "1d: 26 at once; 2d: 8 in the xy plane, then z with 9 blocks; "
                              "3d: x, then y with 3 blocks, then z with 9 blocks");
    rw_bench_meta(b, "check", s->check ? "on (received blocks verified; times include it)" : "off");
    if (live->every)
        return bench_live(b, s, want, live);
    int failed = 0;
    for (int md = 0; md < N_MODES; md++) {
        if (!want[md])
            continue;
        s->mode = (enum mode)md;
        rw_bench_table(b, mode_names[md], NULL);
        for (int i = 0; i < b->sizes.n; i++) {
            int64_t size = b->sizes.v[i];
            if (!rw_bench_fits(b, size, (double)SLOTS * (double)size))
                continue;
            int rc = alloc_blocks(b, s, size);
            if (rc)
                return rc;
            rw_bench_times t;
            rc = rw_bench_time(b, run, s, size, &t);
            rw_bench_free(s->buf, !s->check);
            if (rc)
                return rc;
            rw_bench_row(b, size, &t, NULL);
            failed += t.failed;
        }
    }
    if (failed)
        return rw_bench_fail(b, "--check: %d ranks received wrong blocks", failed);
    return 0;
}

/* Blocks the mode sends the neighbour at slot k (0: none). */
static int blocks_to(enum mode md, int k)
{
    int dx = k % 3 - 1, dy = (k / 3) % 3 - 1, dz = k / 9 - 1;
    if (k == SELF)
        return 0;
    if (md == MODE_1D)
        return 1;
    if (md == MODE_2D)
        return dz == 0 ? 1 : (dx == 0 && dy == 0 ? 9 : 0);
    int face = (dx != 0) + (dy != 0) + (dz != 0) == 1;
    return !face ? 0 : dx ? 1 : dy ? 3 : 9;
}

/* This rank's neighbours in MPI_COMM_WORLD's grid, weighted by what the
 * first mode asked sends them, as a distributed graph with reorder = 1;
 * MPI_COMM_NULL on failure. */
static MPI_Comm weighted_graph(stencil *s, const int *want)
{
    enum mode md = MODE_1D;
    while (md < MODE_3D && !want[md])
        md++;
    find_neighbours(s);
    int nbr[SLOTS], w[SLOTS], n = 0;
    for (int k = 0; k < SLOTS; k++)
        if (s->nbr[k] != MPI_PROC_NULL && blocks_to(md, k) > 0)
            nbr[n] = s->nbr[k], w[n++] = blocks_to(md, k);
    MPI_Comm graph = MPI_COMM_NULL;
    if (MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, nbr, w, n, nbr, w, MPI_INFO_NULL, 1, &graph) !=
        MPI_SUCCESS)
        return MPI_COMM_NULL;
    return graph;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rw_bench b;
    stencil s = {.b = &b};
    const char *grid = NULL, *modes = "all";
    rw_live_opts live = {0};
    const rw_bench_opt opts[] = {
        {"grid", RW_OPT_TEXT, &grid, 0, "PXxPYxPZ process grid (default: MPI_Dims_create)"},
        {"mode", RW_OPT_TEXT, &modes, 0, "1d|2d|3d|2-2-2|all, or a list: 1d,3d (default all)"},
        {"periodic", RW_OPT_FLAG, &s.periodic, 0, "wrap around the grid's faces"},
        {"check", RW_OPT_FLAG, &s.check, 0, "verify every received block (plain buffers)"},
        {"reorder", RW_OPT_FLAG, &s.reorder, 0, "ranks in the order of MPI_Cart_create(reorder=1)"},
        {"reorder-graph", RW_OPT_FLAG, &s.reorder_graph, 0,
         "ranks in the order of MPI_Dist_graph_create_adjacent(reorder=1), neighbours weighted by "
         "the blocks the first mode sends them"},
        RW_LIVE_OPTIONS(live),
    };
    int want[N_MODES];
    int rc = rw_bench_init(&b, "rankwise-bench-stencil",
                           "[options]\n  26-neighbour 3-D halo exchange; a size is the block "
                           "each rank sends to each neighbour",
                           "64:1M", argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    if (rc == 0 && !b.help)
        rc = parse_modes(&b, modes, want);
    if (rc == 0 && !b.help)
        rc = rw_live_check(&b, &live);
    if (rc == 0 && !b.help) {
        if (grid) {
            if (rw_parse_dims(grid, 3, s.dims))
                rc = rw_bench_fail(&b, "--grid must be PXxPYxPZ (e.g. 4x4x2), got '%s'", grid);
            else if ((long long)s.dims[0] * s.dims[1] * s.dims[2] != b.size)
                rc = rw_bench_fail(&b, "--grid %s holds %lld ranks, the job has %d", grid,
                                   (long long)s.dims[0] * s.dims[1] * s.dims[2], b.size);
        } else {
            s.dims[0] = s.dims[1] = s.dims[2] = 0;
            MPI_Dims_create(b.size, 3, s.dims);
        }
        for (int i = 0; i < b.sizes.n && rc == 0; i++)
            if (b.sizes.v[i] < 1 || b.sizes.v[i] > INT_MAX / 9)
                rc = rw_bench_fail(&b, "--sizes: a block must be 1 to %d bytes (9 go in one message)",
                                   INT_MAX / 9);
        MPI_Comm cart = MPI_COMM_NULL;
        if (rc == 0 && s.reorder && s.reorder_graph)
            rc = rw_bench_fail(&b, "--reorder and --reorder-graph: choose one");
        if (rc == 0 && s.reorder_graph) {
            if ((cart = weighted_graph(&s, want)) == MPI_COMM_NULL)
                rc = rw_bench_fail(&b, "--reorder-graph: MPI_Dist_graph_create_adjacent failed");
            else {
                b.comm = cart;
                MPI_Comm_rank(cart, &b.rank);
            }
        }
        if (rc == 0 && s.reorder) {
            int periods[3] = {s.periodic, s.periodic, s.periodic};
            if (MPI_Cart_create(MPI_COMM_WORLD, 3, s.dims, periods, 1, &cart) != MPI_SUCCESS ||
                cart == MPI_COMM_NULL)
                rc = rw_bench_fail(&b, "--reorder: MPI_Cart_create failed");
            else {
                b.comm = cart; /* the grid holds every rank: all of them run in it */
                MPI_Comm_rank(cart, &b.rank);
            }
        }
        if (rc == 0)
            rc = bench(&b, &s, want, &live);
        if (cart != MPI_COMM_NULL && rc == 0) {
            b.comm = MPI_COMM_WORLD;
            MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
            MPI_Comm_free(&cart);
        }
    }
    int code = rc ? rw_bench_report_error(&b) : 0;
    MPI_Finalize();
    return code;
}
