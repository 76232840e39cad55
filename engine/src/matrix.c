/* The communication matrix in memory: compressed rows by source rank,
 * messages and bytes per (src, dst). Built from COO triplets, which is how
 * both a profiler (one record per peer) and a pattern generator produce it. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static rw_matrix *alloc_matrix(int32_t n_ranks, int64_t capacity)
{
    rw_matrix *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    size_t cap = capacity > 0 ? (size_t)capacity : 1;
    m->n_ranks = n_ranks;
    m->row_start = calloc((size_t)n_ranks + 1, sizeof *m->row_start);
    m->dst = malloc(cap * sizeof *m->dst);
    m->msgs = malloc(cap * sizeof *m->msgs);
    m->bytes = malloc(cap * sizeof *m->bytes);
    if (!m->row_start || !m->dst || !m->msgs || !m->bytes) {
        rw_matrix_free(m);
        return NULL;
    }
    return m;
}

void rw_matrix_free(rw_matrix *m)
{
    if (!m)
        return;
    free(m->row_start);
    free(m->dst);
    free(m->msgs);
    free(m->bytes);
    free(m->comm_start);
    free(m->comm_ranks);
    free(m->colls);
    free(m);
}

/* Check every triplet before touching memory, so a refused input costs
 * nothing and the message names the first bad entry. */
static rw_status validate(int32_t n, int64_t count, const int32_t *src, const int32_t *dst,
                          const int64_t *msgs, const int64_t *bytes, int *sorted)
{
    int64_t total_msgs = 0, total_bytes = 0;
    *sorted = 1;
    for (int64_t k = 0; k < count; k++) {
        if (src[k] < 0 || src[k] >= n)
            return rw_fail(RW_ERR_ARG, "entry %lld: source rank %d is not in [0, %d)",
                           (long long)k, src[k], n);
        if (dst[k] < 0 || dst[k] >= n)
            return rw_fail(RW_ERR_ARG, "entry %lld: destination rank %d is not in [0, %d)",
                           (long long)k, dst[k], n);
        if (msgs[k] < 0 || bytes[k] < 0)
            return rw_fail(RW_ERR_ARG, "entry %lld (%d -> %d): negative %s %lld", (long long)k,
                           src[k], dst[k], msgs[k] < 0 ? "message count" : "byte volume",
                           (long long)(msgs[k] < 0 ? msgs[k] : bytes[k]));
        if (msgs[k] > INT64_MAX - total_msgs || bytes[k] > INT64_MAX - total_bytes)
            return rw_fail(RW_ERR_ARG, "entry %lld: total %s exceed 64 bits", (long long)k,
                           msgs[k] > INT64_MAX - total_msgs ? "messages" : "bytes");
        total_msgs += msgs[k];
        total_bytes += bytes[k];
        if (k > 0 && (src[k] < src[k - 1] || (src[k] == src[k - 1] && dst[k] < dst[k - 1])))
            *sorted = 0;
    }
    return RW_OK;
}

/* order[t] = index of the t-th triplet in (src, dst) order: a stable
 * counting sort by dst, then a stable one by src (LSD radix with two
 * digits), O(count + n) time, no comparison sort. */
static int64_t *sort_order(int32_t n, int64_t count, const int32_t *src, const int32_t *dst)
{
    int64_t *order = malloc((size_t)count * sizeof *order);
    int64_t *by_dst = malloc((size_t)count * sizeof *by_dst);
    int64_t *start = malloc(((size_t)n + 1) * sizeof *start);
    if (!order || !by_dst || !start) {
        free(order);
        free(by_dst);
        free(start);
        return NULL;
    }
    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    for (int64_t k = 0; k < count; k++)
        start[dst[k] + 1]++;
    for (int32_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    for (int64_t k = 0; k < count; k++)
        by_dst[start[dst[k]]++] = k;

    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    for (int64_t k = 0; k < count; k++)
        start[src[k] + 1]++;
    for (int32_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    for (int64_t t = 0; t < count; t++) {
        int64_t k = by_dst[t];
        order[start[src[k]]++] = k;
    }
    free(by_dst);
    free(start);
    return order;
}

rw_status rw_matrix_create(int32_t n_ranks, int64_t count, const int32_t *src,
                           const int32_t *dst, const int64_t *msgs, const int64_t *bytes,
                           rw_matrix **out)
{
    *out = NULL;
    if (n_ranks < 1 || n_ranks > RW_MATRIX_MAX_RANKS)
        return rw_fail(RW_ERR_ARG, "a communication matrix needs 1 to %d ranks (got %d)",
                       RW_MATRIX_MAX_RANKS, n_ranks);
    if (count < 0)
        return rw_fail(RW_ERR_ARG, "negative number of entries (%lld)", (long long)count);
    if (count > 0 && (!src || !dst || !msgs || !bytes))
        return rw_fail(RW_ERR_ARG, "missing src, dst, msgs or bytes array");
    int sorted;
    rw_status st = validate(n_ranks, count, src, dst, msgs, bytes, &sorted);
    if (st)
        return st;

    rw_matrix *m = alloc_matrix(n_ranks, count);
    int64_t *order = NULL;
    if (!m || (!sorted && !(order = sort_order(n_ranks, count, src, dst)))) {
        rw_matrix_free(m);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a matrix of %lld entries", (long long)count);
    }

    /* Merge runs of equal (src, dst); an entry that sums to nothing is
     * overwritten by the next one. row_start[i + 1] counts row i for now. */
    int64_t nnz = 0;
    int32_t cur_src = -1, cur_dst = -1;
    for (int64_t t = 0; t < count; t++) {
        int64_t k = order ? order[t] : t;
        if (src[k] == cur_src && dst[k] == cur_dst) {
            m->msgs[nnz - 1] += msgs[k];
            m->bytes[nnz - 1] += bytes[k];
            continue;
        }
        if (nnz > 0 && m->msgs[nnz - 1] == 0 && m->bytes[nnz - 1] == 0) {
            nnz--;
            m->row_start[cur_src + 1]--;
        }
        cur_src = src[k];
        cur_dst = dst[k];
        m->dst[nnz] = cur_dst;
        m->msgs[nnz] = msgs[k];
        m->bytes[nnz] = bytes[k];
        nnz++;
        m->row_start[cur_src + 1]++;
    }
    if (nnz > 0 && m->msgs[nnz - 1] == 0 && m->bytes[nnz - 1] == 0) {
        nnz--;
        m->row_start[cur_src + 1]--;
    }
    free(order);
    for (int32_t i = 0; i < n_ranks; i++)
        m->row_start[i + 1] += m->row_start[i];
    m->nnz = nnz;

    /* Give back what merging saved (shrinking cannot fail in practice;
     * keep the larger block if it does). */
    if (nnz < count && nnz > 0) {
        void *p;
        if ((p = realloc(m->dst, (size_t)nnz * sizeof *m->dst)))
            m->dst = p;
        if ((p = realloc(m->msgs, (size_t)nnz * sizeof *m->msgs)))
            m->msgs = p;
        if ((p = realloc(m->bytes, (size_t)nnz * sizeof *m->bytes)))
            m->bytes = p;
    }
    *out = m;
    return RW_OK;
}

int64_t rw_matrix_find(const rw_matrix *m, int32_t src, int32_t dst)
{
    if (src < 0 || src >= m->n_ranks || dst < 0 || dst >= m->n_ranks)
        return -1;
    int64_t lo = m->row_start[src], hi = m->row_start[src + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (m->dst[mid] < dst)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->row_start[src + 1] && m->dst[lo] == dst ? lo : -1;
}

rw_status rw_matrix_get(const rw_matrix *m, int32_t src, int32_t dst, int64_t *msgs,
                        int64_t *bytes)
{
    if (src < 0 || src >= m->n_ranks || dst < 0 || dst >= m->n_ranks)
        return rw_fail(RW_ERR_ARG, "rank pair %d -> %d is not in a matrix of %d ranks", src, dst,
                       m->n_ranks);
    int64_t k = rw_matrix_find(m, src, dst);
    if (msgs)
        *msgs = k < 0 ? 0 : m->msgs[k];
    if (bytes)
        *bytes = k < 0 ? 0 : m->bytes[k];
    return RW_OK;
}

int32_t rw_matrix_out_degree(const rw_matrix *m, int32_t src)
{
    if (src < 0 || src >= m->n_ranks)
        return 0;
    return (int32_t)(m->row_start[src + 1] - m->row_start[src]);
}

/* Cannot overflow: every constructor checks the totals. */
int64_t rw_matrix_total_msgs(const rw_matrix *m)
{
    int64_t total = 0;
    for (int64_t k = 0; k < m->nnz; k++)
        total += m->msgs[k];
    return total;
}

int64_t rw_matrix_total_bytes(const rw_matrix *m)
{
    int64_t total = 0;
    for (int64_t k = 0; k < m->nnz; k++)
        total += m->bytes[k];
    return total;
}

rw_status rw_matrix_symmetrize(const rw_matrix *m, rw_matrix **out)
{
    *out = NULL;
    if (rw_matrix_total_msgs(m) > INT64_MAX / 2 || rw_matrix_total_bytes(m) > INT64_MAX / 2)
        return rw_fail(RW_ERR_ARG, "matrix too large to symmetrise: totals would exceed 64 bits");
    /* Every off-diagonal entry twice, once per direction; rw_matrix_create
     * then sums (i, j) with (j, i). */
    size_t cap = 2 * (size_t)(m->nnz > 0 ? m->nnz : 1);
    int32_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
    int64_t *msgs = malloc(cap * sizeof *msgs), *bytes = malloc(cap * sizeof *bytes);
    rw_status st = RW_OK;
    if (!src || !dst || !msgs || !bytes) {
        st = rw_fail(RW_ERR_NOMEM, "out of memory to symmetrise %lld entries", (long long)m->nnz);
        goto done;
    }
    int64_t n = 0;
    for (int32_t i = 0; i < m->n_ranks; i++)
        for (int64_t k = m->row_start[i]; k < m->row_start[i + 1]; k++) {
            int32_t j = m->dst[k];
            if (i == j)
                continue;
            src[n] = i, dst[n] = j, msgs[n] = m->msgs[k], bytes[n] = m->bytes[k], n++;
            src[n] = j, dst[n] = i, msgs[n] = m->msgs[k], bytes[n] = m->bytes[k], n++;
        }
    if ((st = rw_matrix_create(m->n_ranks, n, src, dst, msgs, bytes, out)) == RW_OK) {
        memcpy((*out)->source, m->source, sizeof m->source);
        memcpy((*out)->pattern, m->pattern, sizeof m->pattern);
        if ((st = rw_matrix_set_collectives(*out, m->n_comms, m->comm_start, m->comm_ranks,
                                            m->n_colls, m->colls, m->colls_dropped))) {
            rw_matrix_free(*out);
            *out = NULL;
        }
    }
done:
    free(src);
    free(dst);
    free(msgs);
    free(bytes);
    return st;
}
