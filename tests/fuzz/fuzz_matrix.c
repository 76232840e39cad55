/* libFuzzer harness of the communication-matrix reader (engine/src/matrix_io.c). */
#include "fuzz_common.h"

static char *write_matrix(const rw_matrix *m, size_t *len)
{
    char *buf = NULL;
    FILE *w = open_memstream(&buf, len);
    if (!w)
        fuzz_fail("open_memstream failed");
    if (rw_matrix_write_stream(m, w, "out") != RW_OK)
        fuzz_fail("the writer refuses a matrix the reader accepted");
    fclose(w);
    return buf;
}

/* Largest job the harness reads. Reading, sorting and writing a matrix are
 * linear in its rank count by design (row offsets), up to
 * RW_MATRIX_MAX_RANKS = 67,108,864: a 30-byte file may cost 0.5 GB and
 * seconds under the sanitizers. That is no finding, and it would starve
 * the search of executions, so such inputs are skipped. */
#define FUZZ_MAX_RANKS (1 << 20)

static int declares_huge_job(const uint8_t *data, size_t size)
{
    for (size_t k = 0; k + 5 < size; k++) {
        if (memcmp(data + k, "ranks", 5) != 0) /* anywhere: blanks may lead the line */
            continue;
        size_t p = k + 5;
        while (p < size && (data[p] == ' ' || data[p] == '\t' || data[p] == '\r')) /* the reader's blanks */
            p++;
        long long v = 0;
        while (p < size && data[p] >= '0' && data[p] <= '9' && v <= FUZZ_MAX_RANKS)
            v = v * 10 + (data[p++] - '0');
        if (v > FUZZ_MAX_RANKS)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (declares_huge_job(data, size))
        return 0;
    FILE *f = fuzz_open(data, size);
    rw_matrix *m = NULL;
    rw_status st = rw_matrix_read_stream(f, FUZZ_NAME, &m);
    fclose(f);
    if (st != RW_OK) {
        if (m)
            fuzz_fail("a refused matrix was handed out");
        fuzz_check_refusal(st);
        return 0;
    }
    if (rw_matrix_total_msgs(m) < 0 || rw_matrix_total_bytes(m) < 0)
        fuzz_fail("a total overflowed");
    size_t len1, len2;
    char *first = write_matrix(m, &len1);
    rw_matrix_free(m);
    FILE *again = fmemopen(first, len1, "r");
    if (rw_matrix_read_stream(again, "out", &m) != RW_OK)
        fuzz_fail("the reader refuses what the writer wrote");
    fclose(again);
    char *second = write_matrix(m, &len2);
    if (len1 != len2 || memcmp(first, second, len1) != 0)
        fuzz_fail("writing what was read back changes the file");
    rw_matrix_free(m);
    free(first);
    free(second);
    return 0;
}
