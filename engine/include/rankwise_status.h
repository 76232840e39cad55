/* rankwise — what every library of the engine shares: the status codes and
 * the mark on the functions a library exports. Declares no function, so
 * that a library's headers (rankwise_coll.h, rankwise_live.h, ...) declare
 * only what that library exports.
 *
 * Libraries are built with hidden visibility; RW_API marks the public
 * functions (librankwise exports exactly those; librankwise_coll and
 * librankwise_profile narrow theirs further with a version script). */
#ifndef RANKWISE_STATUS_H
#define RANKWISE_STATUS_H

#if defined(__GNUC__)
#define RW_API __attribute__((visibility("default")))
#else
#define RW_API
#endif

typedef enum rw_status {
    RW_OK = 0,
    RW_ERR_IO = 1,      /* file could not be opened, read or written */
    RW_ERR_PARSE = 2,   /* malformed input file */
    RW_ERR_NOMEM = 3,
    RW_ERR_ARG = 4,     /* invalid argument or option */
    RW_ERR_MPI = 5,     /* an MPI call failed */
    RW_ERR_STATE = 6    /* the operation does not apply (e.g. one node only) */
} rw_status;

#endif /* RANKWISE_STATUS_H */
