/* A program linked with librankwise and librankwise_coll, in the order the
 * test gives, built against an installed prefix by
 * tests/python/test_install.py: a failure in either library is read with
 * rw_last_error, whichever library the name resolves to. Prints "ok". */
#include <stdio.h>
#include <string.h>

#include <rankwise.h>
#include <rankwise_coll.h>

static int check(rw_status st, const char *what, const char *expect)
{
    if (st != RW_OK && strstr(rw_last_error(), expect))
        return 0;
    fprintf(stderr, "errors_user: %s: status %d, rw_last_error: %s\n", what, (int)st, rw_last_error());
    return 1;
}

int main(void)
{
    rw_model *m = NULL;
    rw_coll_alg alg;
    int bad = check(rw_model_read("/nonexistent/errors_user.rwm", &m), "librankwise", "errors_user.rwm");
    bad |= check(rw_coll_alg_parse("no_such_algorithm", &alg), "librankwise_coll", "no_such_algorithm");
    bad |= check(rw_model_read("/nonexistent/second.rwm", &m), "librankwise again", "second.rwm");
    if (!bad)
        printf("ok\n");
    return bad;
}
