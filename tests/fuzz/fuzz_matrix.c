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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
