#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rankwise.h"

/* Every unordered pair meets exactly once, nobody plays twice in a round,
 * partnership is symmetric, and byes happen only for odd n. */
static void check_n(int n)
{
    int rounds = rw_tournament_rounds(n);
    CHECK(rounds == (n % 2 ? n : n - 1));
    char *met = calloc((size_t)n * n, 1);
    for (int r = 0; r < rounds; r++) {
        int byes = 0;
        for (int i = 0; i < n; i++) {
            int j = rw_tournament_partner(n, r, i);
            if (j < 0) {
                byes++;
                continue;
            }
            CHECK(j != i && j < n);
            CHECK(rw_tournament_partner(n, r, j) == i);
            met[i * n + j]++;
        }
        CHECK(byes == n % 2);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            CHECK(met[i * n + j] == (i != j));
    free(met);
}

int main(void)
{
    for (int n = 2; n <= 65; n++)
        check_n(n);
    check_n(256);
    CHECK(rw_tournament_rounds(1) == 0);
    CHECK(rw_tournament_partner(4, 3, 0) == -1); /* out of range round */
    CHECK_DONE();
}
