/* Engine-private helpers (not installed). */
#ifndef RW_INTERNAL_H
#define RW_INTERNAL_H

#include "rankwise.h"

#ifndef RW_VERSION_STRING
#define RW_VERSION_STRING "0.0.0"
#endif

#include <stdio.h>

/* Record a formatted one-line error and return `code`. */
rw_status rw_fail(rw_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes obj's text into f; non-zero on failure. */
typedef int (*rw_body_writer)(const void *obj, FILE *f);

/* Write `path` atomically: body() fills a temporary file in the same
 * directory, which is renamed over path only once complete. */
rw_status rw_write_atomic(const char *path, rw_body_writer body, const void *obj);

/* RW_ERR_PARSE with the message "path:line: <formatted>". */
rw_status rw_parse_fail(const char *path, long long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks of a matrix's collective calls (matrix_colls.c), shared by
 * rw_matrix_set_collectives and the reader (which adds path:line):
 * communicator c's size members in [0, n_ranks) and distinct (seen: a
 * zeroed bit map of n_ranks bits, left zeroed); call k's op, comm, root,
 * bytes and calls against n_comms communicators of offsets comm_start. */
rw_status rw_coll_check_members(int32_t n_ranks, int32_t c, const int32_t *ranks, int64_t size,
                                uint8_t *seen);
rw_status rw_coll_check_call(int64_t k, const rw_coll_call *x, int32_t n_comms,
                             const int64_t *comm_start, int32_t n_ranks);

/* Length of the strict UTF-8 sequence at s (at most n bytes), 0 when it is
 * not one: no overlong form, no surrogate, nothing beyond U+10FFFF. */
size_t rw_utf8_sequence(const unsigned char *s, size_t n);

/* One rule for the free texts of every file (model source, matrix source
 * and pattern): at most RW_TEXT_MAX bytes of strict UTF-8 (what Python
 * decodes), no control character (U+0000-U+001F and U+007F: no line
 * break, no tab), no blank at either end (readers trim them). Returns NULL
 * when the len bytes at text obey, else what is wrong, e.g. "holds a
 * control character (0x0d)". */
const char *rw_text_problem(const char *text, size_t len);

/* Node names: the text rule, not empty, and no blank or '#' (a name is one
 * field of a line). */
const char *rw_name_problem(const char *name);

/* Bounds of a model's numbers (rankwise.h, rw_model_check), shared by the
 * checker and the reader so that both say the same thing. */
typedef struct rw_bound {
    const char *what, *unit;
    double lo, hi;
} rw_bound;
extern const rw_bound rw_bound_alpha, rw_bound_beta, rw_bound_rtt, rw_bound_jitter,
    rw_bound_timestamp, rw_bound_duration, rw_bound_overhead, rw_bound_bandwidth;
/* rw_bound_problem for a bandwidth, which must also be > 0. */
const char *rw_bandwidth_problem(double v, int unknown_ok);
/* A capacity spread's figures out of bounds (rw_model_add_spread); NULL when they hold. */
const char *rw_spread_problem(double low, double median, double high, double noise, int32_t times);

/* The levels of a model's node-cost lines, as rw_node_level names them
 * (rankwise_node.h; the core library does not depend on hwloc). */
extern const char *const rw_model_node_levels[RW_MODEL_NODE_LEVELS];

/* NULL when v is within b (or NaN and unknown_ok), else e.g. "alpha -1 s
 * is outside [0, 1000]" (a thread-local buffer). */
const char *rw_bound_problem(const rw_bound *b, double v, int unknown_ok);

/* NULL when the statistics of one (pair, size) keep the rules, else why. */
const char *rw_stat_problem(const rw_stat *s);

/* Open path for reading text; NULL with *st set and a message naming the
 * file when it cannot be opened or is a directory. */
FILE *rw_open_text(const char *path, rw_status *st);

/* The readers and writers on an open stream (`path` names it in messages):
 * what rw_*_read/write do around fopen, for the fuzz harnesses
 * (tests/fuzz), which feed memory through fmemopen. */
/* 1 when link l's capacity is one to act on alone: the model states it (no
 * capacity spreads: a ground truth, a user's file). A stress test's link
 * (the model has spreads) is a reading of how the probe's phases shared it,
 * not of how another pattern will: on probed random platforms, gains
 * predicted through such links, steady readings within 4 % of the truth
 * included, ran slower than Open MPI's choice (docs/results/model.md). */
int rw_model_link_confirmed(const rw_model *m, int32_t l);
/* Pods of groups (groups.c): pod_of[g] for each of the `groups` groups of
 * group_of (rw_model_groups' numbering), pods numbered in order of first
 * group; a group in no pod is one alone. Returns the number of pods (=
 * groups when none), -1 out of memory. */
int rw_model_pods(const rw_model *m, const int32_t *group_of, int groups, int32_t *pod_of);

/* Pair p's large-message bandwidth rewritten at bw (what contention or a
 * varying link's moment took from it or gave it): its round trips change
 * by (1/bw - slope) x size on every size the slope covers and its slope
 * becomes 1/bw; the intercepts (latency) stay. Returns bw / the old
 * bandwidth - 1. Used by the reference pass and the stress test. */
double rw_model_rewrite_pair(rw_model *m, size_t p, double bw);

rw_status rw_model_read_stream(FILE *f, const char *path, rw_model **out);
/* (rankwise_coll_rules.h's reader; its rw_coll_rules type is opaque here.) */
struct rw_coll_rules;
rw_status rw_coll_rules_read_stream(FILE *f, const char *path, struct rw_coll_rules **out);
rw_status rw_model_write_stream(const rw_model *m, FILE *f, const char *path);
rw_status rw_matrix_read_stream(FILE *f, const char *path, rw_matrix **out);
rw_status rw_matrix_write_stream(const rw_matrix *m, FILE *f, const char *path);

/* Hockney fits of one pair's statistics on each side of m->knee (knee.c). */
rw_status rw_model_fit_sides(const rw_model *m, const rw_stat *st, double *alpha, double *beta,
                             double *alpha_large, double *beta_large);

#endif
