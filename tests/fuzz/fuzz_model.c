/* libFuzzer harness of the model reader (engine/src/model_io.c). */
#include "fuzz_common.h"

/* Write m into a new buffer; the writer must accept what the reader gave. */
static char *write_model(const rw_model *m, size_t *len)
{
    char *buf = NULL;
    FILE *w = open_memstream(&buf, len);
    if (!w)
        fuzz_fail("open_memstream failed");
    if (rw_model_write_stream(m, w, "out") != RW_OK)
        fuzz_fail("the writer refuses a model the reader accepted");
    fclose(w);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_open(data, size);
    rw_model *m = NULL;
    rw_status st = rw_model_read_stream(f, FUZZ_NAME, &m);
    fclose(f);
    if (st != RW_OK) {
        if (m)
            fuzz_fail("a refused model was handed out");
        fuzz_check_refusal(st);
        return 0;
    }
    size_t len1, len2;
    char *first = write_model(m, &len1);
    rw_model_free(m);
    FILE *again = fmemopen(first, len1, "r");
    if (rw_model_read_stream(again, "out", &m) != RW_OK)
        fuzz_fail("the reader refuses what the writer wrote");
    fclose(again);
    char *second = write_model(m, &len2);
    if (len1 != len2 || memcmp(first, second, len1) != 0)
        fuzz_fail("writing what was read back changes the file");
    rw_model_free(m);
    free(first);
    free(second);
    return 0;
}
