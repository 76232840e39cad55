/* rankwise — what every library of the engine shares: the status codes,
 * the mark on the functions a library exports, and the one function every
 * library exports, rw_last_error, so that a library's headers
 * (rankwise_coll.h, rankwise_live.h, ...) declare only what it exports.
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

#ifdef __cplusplus
extern "C" {
#endif

/* Why the calling thread's last failed rankwise call failed: one line,
 * never NULL. One message per thread in the process, whichever rankwise
 * library failed (librankwise, librankwise_coll, librankwise_profile). */
RW_API const char *rw_last_error(void);

/* For names kept only for programs built against older releases. */
#if defined(__GNUC__)
#define RW_DEPRECATED(why) __attribute__((deprecated(why)))
#else
#define RW_DEPRECATED(why)
#endif

#ifdef __cplusplus
}
#endif

#endif /* RANKWISE_STATUS_H */
