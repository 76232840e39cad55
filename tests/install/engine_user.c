/* A C program of librankwise's, built against an installed prefix by
 * tests/python/test_install.py (pkg-config and CMake find_package):
 *     engine_user ALPHA BETA
 * fits Hockney's model to round trips made from ALPHA (s) and BETA (s/B)
 * and prints the library's version and the fitted figures. */
#include <stdio.h>
#include <stdlib.h>

#include <rankwise.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: engine_user ALPHA BETA\n");
        return 2;
    }
    double alpha = atof(argv[1]), beta = atof(argv[2]);
    double size[6] = {8, 1024, 65536, 262144, 1048576, 4194304}, rtt[6];
    for (int k = 0; k < 6; k++)
        rtt[k] = 2 * alpha + beta * size[k];
    double a, b;
    if (rw_fit_hockney(size, rtt, 6, &a, &b) != RW_OK) {
        fprintf(stderr, "engine_user: %s\n", rw_last_error());
        return 1;
    }
    printf("version %s abi %d\nalpha %.6e beta %.6e\n", rw_version(), rw_abi_version(), a, b);
    return rw_abi_version() == RW_ABI_VERSION ? 0 : 1;
}
