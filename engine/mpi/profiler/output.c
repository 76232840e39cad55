/* The collective write: every rank sends its nonzero row entries (world
 * rank, messages, bytes), its collective call groups and its counters to
 * rank 0 (MPI_Gather of the counts, MPI_Gatherv of the entries and of the
 * groups), which builds the matrix with rw_matrix_create and
 * rw_matrix_set_collectives, writes it with rw_matrix_write (atomic) and
 * writes the summary beside it (atomic too). Every rank returns rank 0's
 * status. */
#define _POSIX_C_SOURCE 200809L
#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Per-rank counters gathered to rank 0, in this order. */
enum {
    S_P2P_MSGS, S_P2P_BYTES, S_COLL_MSGS, S_COLL_BYTES,
    S_TIME, /* RWP_NCLASS times in ns */
    S_CALLS = S_TIME + RWP_NCLASS,
    S_ELAPSED = S_CALLS + RWP_NCLASS,
    S_NNZ,
    S_COLL_WORDS, /* int64 words of its collective call groups (rwp_coll_pack) */
    S_COUNT
};

/* NAME.rwc -> NAME.summary.txt; anything else gets .summary.txt added. */
static char *summary_path(const char *path)
{
    size_t len = strlen(path);
    char *out = malloc(len + 16);
    if (!out)
        return NULL;
    if (len > 4 && !strcmp(path + len - 4, ".rwc"))
        len -= 4;
    memcpy(out, path, len);
    strcpy(out + len, ".summary.txt");
    return out;
}

static double seconds(int64_t ns) { return (double)ns * 1e-9; }

static void write_row(FILE *f, const char *label, const int64_t *s, const int64_t *recv)
{
    int64_t mpi = 0;
    for (int k = 0; k < RWP_NCLASS; k++)
        mpi += s[S_TIME + k];
    fprintf(f, "%s %lld %lld %lld %lld %lld %lld %lld %lld %.9g", label,
            (long long)(s[S_P2P_MSGS] + s[S_COLL_MSGS]), (long long)(s[S_P2P_BYTES] + s[S_COLL_BYTES]),
            (long long)recv[0], (long long)recv[1], (long long)s[S_P2P_MSGS],
            (long long)s[S_P2P_BYTES], (long long)s[S_COLL_MSGS], (long long)s[S_COLL_BYTES],
            seconds(mpi));
    for (int k = 0; k < RWP_NCLASS; k++)
        fprintf(f, " %.9g", seconds(s[S_TIME + k]));
    for (int k = 0; k < RWP_NCLASS; k++)
        fprintf(f, " %lld", (long long)s[S_CALLS + k]);
    fprintf(f, " %.9g\n", seconds(s[S_ELAPSED]));
}

/* The summary (docs/reference/formats.md, "Profile summary"), atomically. */
static rw_status write_summary(const char *path, int n, const int64_t *stats, const rw_matrix *m)
{
    char *spath = summary_path(path);
    int64_t *recv = calloc(2 * (size_t)n, sizeof *recv), total[S_COUNT] = {0}, recv_total[2] = {0};
    if (!spath || !recv) {
        free(spath);
        free(recv);
        return rw_fail(RW_ERR_NOMEM, "out of memory for the profile summary");
    }
    for (int i = 0; i < n; i++)
        for (int64_t k = m->row_start[i]; k < m->row_start[i + 1]; k++) {
            recv[2 * m->dst[k]] += m->msgs[k];
            recv[2 * m->dst[k] + 1] += m->bytes[k];
        }
    size_t len = strlen(spath);
    char *tmp = malloc(len + 32);
    FILE *f = NULL;
    if (tmp) {
        snprintf(tmp, len + 32, "%s.tmp.%ld", spath, (long)getpid());
        f = fopen(tmp, "w");
    }
    rw_status st = RW_OK;
    if (!f) {
        st = rw_fail(tmp ? RW_ERR_IO : RW_ERR_NOMEM, "%s: cannot write: %s", spath, strerror(errno));
        goto done;
    }
    int64_t elapsed = 0;
    for (int i = 0; i < n; i++)
        if (stats[i * S_COUNT + S_ELAPSED] > elapsed)
            elapsed = stats[i * S_COUNT + S_ELAPSED];
    fprintf(f, "# rankwise-profile-summary 1\n");
    fprintf(f, "# source %s\n", m->source);
    fprintf(f, "# ranks %d\n", n);
    fprintf(f, "# elapsed %.9g s (longest rank, from MPI_Init or its last reset)\n", seconds(elapsed));
#ifdef RW_SMPI
    fprintf(f, "# times in simulated seconds; bytes are logical (docs/reference/formats.md, \"Profile\")\n");
#else
    fprintf(f, "# times in seconds; bytes are logical (docs/reference/formats.md, \"Profile\")\n");
#endif
    fprintf(f, "rank sent_msgs sent_bytes recv_msgs recv_bytes p2p_msgs p2p_bytes coll_msgs "
               "coll_bytes mpi_time t_p2p t_coll t_wait t_other n_p2p n_coll n_wait n_other "
               "elapsed\n");
    char label[16];
    for (int i = 0; i < n; i++) {
        const int64_t *s = stats + (size_t)i * S_COUNT;
        snprintf(label, sizeof label, "%d", i);
        write_row(f, label, s, recv + 2 * i);
        for (int k = 0; k < S_ELAPSED; k++)
            total[k] += s[k];
        recv_total[0] += recv[2 * i];
        recv_total[1] += recv[2 * i + 1];
    }
    total[S_ELAPSED] = elapsed;
    write_row(f, "all", total, recv_total);
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, spath) != 0) {
        st = rw_fail(RW_ERR_IO, "%s: cannot write: %s", spath, strerror(errno));
        unlink(tmp);
    }
done:
    free(tmp);
    free(spath);
    free(recv);
    return st;
}

/* Rank 0: the matrix from everyone's entries, then both files. */
static rw_status write_files(const char *path, int n, const int64_t *stats, const int64_t *entries,
                             const int64_t *coll_words, const int *coll_counts)
{
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += stats[i * S_COUNT + S_NNZ];
    int32_t *src = malloc((size_t)(total ? total : 1) * sizeof *src);
    int32_t *dst = malloc((size_t)(total ? total : 1) * sizeof *dst);
    int64_t *msgs = malloc((size_t)(total ? total : 1) * sizeof *msgs);
    int64_t *bytes = malloc((size_t)(total ? total : 1) * sizeof *bytes);
    rw_status st = RW_OK;
    rw_matrix *m = NULL;
    if (!src || !dst || !msgs || !bytes) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory for %lld matrix entries", (long long)total);
        goto done;
    }
    int64_t k = 0;
    for (int i = 0; i < n; i++)
        for (int64_t e = 0; e < stats[i * S_COUNT + S_NNZ]; e++, k++) {
            src[k] = i;
            dst[k] = (int32_t)entries[3 * k];
            msgs[k] = entries[3 * k + 1];
            bytes[k] = entries[3 * k + 2];
        }
    if ((st = rw_matrix_create(n, total, src, dst, msgs, bytes, &m)) ||
        (st = rwp_coll_unpack(m, n, coll_words, coll_counts)))
        goto done;
    snprintf(m->source, sizeof m->source, "%s", rwp.source);
    rw_text_clean(m->source); /* the writer refuses what would not read back */
    if (!(st = rw_matrix_write(m, path)))
        st = write_summary(path, n, stats, m);
done:
    rw_matrix_free(m);
    free(src);
    free(dst);
    free(msgs);
    free(bytes);
    return st;
}

/* Rank 0's status and message to every rank. */
static rw_status share_status(rw_status st)
{
    char msg[512];
    int code = (int)st;
    PMPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (code == RW_OK)
        return RW_OK;
    if (rwp.world_rank == 0)
        snprintf(msg, sizeof msg, "%s", rw_last_error());
    PMPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, MPI_COMM_WORLD);
    msg[sizeof msg - 1] = '\0';
    return rw_fail((rw_status)code, "%s", msg);
}

rw_status rwp_write(const char *path)
{
    MPI_Comm world = MPI_COMM_WORLD;
    int ready = rwp.ready, all_ready = 0;
    if (PMPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, world) != MPI_SUCCESS)
        return rw_fail(RW_ERR_MPI, "the profiler cannot agree on writing (MPI_Allreduce failed)");
    if (!all_ready)
        return rw_fail(RW_ERR_STATE, "the profiler did not start on every rank: no matrix written");

    int n = rwp.world_size, root = rwp.world_rank == 0;
    rwp_comm_flush_all();
    int64_t stats[S_COUNT];
    stats[S_P2P_MSGS] = rwp.kind_msgs[RWP_KIND_P2P];
    stats[S_P2P_BYTES] = rwp.kind_bytes[RWP_KIND_P2P];
    stats[S_COLL_MSGS] = rwp.kind_msgs[RWP_KIND_COLL];
    stats[S_COLL_BYTES] = rwp.kind_bytes[RWP_KIND_COLL];
    for (int k = 0; k < RWP_NCLASS; k++) {
        stats[S_TIME + k] = rwp_ticks_to_ns(rwp.time_ticks[k]);
        stats[S_CALLS + k] = rwp.calls[k];
    }
    stats[S_ELAPSED] = rwp_now_ns() - rwp.start_ns;
    int64_t nnz = 0;
    for (int j = 0; j < n; j++)
        nnz += rwp.msgs[j] || rwp.bytes[j];
    stats[S_NNZ] = nnz;
    int64_t n_words = 0;
    int64_t *words = rwp_coll_pack(&n_words);
    stats[S_COLL_WORDS] = n_words;

    /* Each rank's entries, then the counters of all at rank 0. */
    int64_t *mine = malloc(3 * (size_t)(nnz ? nnz : 1) * sizeof *mine);
    int64_t *all_stats = root ? malloc((size_t)n * S_COUNT * sizeof *all_stats) : NULL;
    int ok = mine && words && (!root || all_stats), all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
    rw_status st = RW_OK;
    if (!all_ok) {
        free(mine);
        free(words);
        free(all_stats);
        return rw_fail(RW_ERR_NOMEM, "out of memory while gathering the profile");
    }
    for (int j = 0, e = 0; j < n; j++)
        if (rwp.msgs[j] || rwp.bytes[j]) {
            mine[3 * e] = j;
            mine[3 * e + 1] = rwp.msgs[j];
            mine[3 * e + 2] = rwp.bytes[j];
            e++;
        }
    PMPI_Gather(stats, S_COUNT, MPI_INT64_T, all_stats, S_COUNT, MPI_INT64_T, 0, world);

    /* Rank 0 sizes the Gatherv; its counts are ints, so at most INT_MAX
     * values (715 million entries) can be gathered. */
    int *counts = NULL, *displs = NULL, *coll_counts = NULL, *coll_displs = NULL, go = 1;
    int64_t *entries = NULL, *coll_words = NULL;
    if (root) {
        int64_t n_all = 0;
        for (int i = 0; i < n; i++)
            n_all += all_stats[i * S_COUNT + S_COLL_WORDS];
        coll_counts = malloc((size_t)n * sizeof *coll_counts);
        coll_displs = malloc((size_t)n * sizeof *coll_displs);
        coll_words = malloc((size_t)(n_all ? n_all : 1) * sizeof *coll_words);
        if (n_all > INT_MAX) {
            st = rw_fail(RW_ERR_STATE, "the profile's collective call groups take %lld words, more "
                         "than one gather holds", (long long)n_all);
            go = 0;
        } else if (!coll_counts || !coll_displs || !coll_words) {
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %lld words of collective call groups",
                         (long long)n_all);
            go = 0;
        } else {
            int at = 0;
            for (int i = 0; i < n; i++) {
                coll_counts[i] = (int)all_stats[i * S_COUNT + S_COLL_WORDS];
                coll_displs[i] = at;
                at += coll_counts[i];
            }
        }
    }
    if (root && go) {
        int64_t total = 0;
        for (int i = 0; i < n; i++)
            total += all_stats[i * S_COUNT + S_NNZ];
        counts = malloc((size_t)n * sizeof *counts);
        displs = malloc((size_t)n * sizeof *displs);
        entries = malloc(3 * (size_t)(total ? total : 1) * sizeof *entries);
        if (3 * total > INT_MAX) {
            st = rw_fail(RW_ERR_STATE, "the profile has %lld entries, more than one gather holds",
                         (long long)total);
            go = 0;
        } else if (!counts || !displs || !entries) {
            st = rw_fail(RW_ERR_NOMEM, "out of memory for %lld profile entries", (long long)total);
            go = 0;
        } else {
            int at = 0;
            for (int i = 0; i < n; i++) {
                counts[i] = (int)(3 * all_stats[i * S_COUNT + S_NNZ]);
                displs[i] = at;
                at += counts[i];
            }
        }
    }
    PMPI_Bcast(&go, 1, MPI_INT, 0, world);
    if (go) {
        PMPI_Gatherv(mine, (int)(3 * nnz), MPI_INT64_T, entries, counts, displs, MPI_INT64_T, 0, world);
        PMPI_Gatherv(words, (int)n_words, MPI_INT64_T, coll_words, coll_counts, coll_displs, MPI_INT64_T,
                     0, world);
        if (root)
            st = write_files(path, n, all_stats, entries, coll_words, coll_counts);
    }
    free(mine);
    free(words);
    free(coll_words);
    free(coll_counts);
    free(coll_displs);
    free(all_stats);
    free(counts);
    free(displs);
    free(entries);
    return share_status(st);
}
