/* Round-robin tournament (circle method): every pair of participants meets
 * exactly once in n-1 rounds (n even), so all pairs of a round can be
 * measured at the same time without any node taking part twice. */
#include "internal.h"

int rw_tournament_rounds(int n)
{
    if (n < 2)
        return 0;
    return n % 2 ? n : n - 1;
}

int rw_tournament_partner(int n, int round, int me)
{
    if (n < 2 || me < 0 || me >= n || round < 0 || round >= rw_tournament_rounds(n))
        return -1;
    /* With an odd n a phantom participant is added; meeting it is a bye. */
    int m = n % 2 ? n + 1 : n;
    int k = m - 1; /* participants 0..k-1 rotate, participant k stays */
    int partner;
    if (me == k)
        partner = round;
    else if (me == round)
        partner = k;
    else
        partner = ((2 * round - me) % k + k) % k; /* me + partner = 2 round (mod k) */
    return partner >= n ? -1 : partner;
}
