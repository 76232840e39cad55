/* Message sizes by class: the two ways the collectives group sizes, each
 * named for what it means, in one place (not installed). */
#ifndef RW_SIZE_CLASS_H
#define RW_SIZE_CLASS_H

#include <stddef.h>

/* The power-of-two class k of bytes, [2^k, 2^(k+1)) (0 for 0 and 1): what
 * a decision from the network, its verification and the all-to-all cap are
 * kept per. */
static inline int rw_size_class_pow2(size_t bytes)
{
    int k = 0;
    while (bytes >>= 1)
        k++;
    return k;
}

/* 0 for an eager message (up to 64 KiB, the predictor's default eager
 * limit), 1 beyond: the trees built from a model differ between eager and
 * rendezvous messages; the standard shapes are the same in both. */
static inline int rw_size_class_protocol(size_t bytes)
{
    return bytes > 65536;
}

#endif
