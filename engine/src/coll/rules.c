/* Reading a collective rules file and looking choices up in it
 * (rankwise_coll_rules.h; format in docs/concepts/collectives.md). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "rankwise_coll_rules.h"
#include "registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RULES_VERSION 1

typedef struct rule {
    char op[16];
    int32_t root;         /* -1: any root */
    int64_t lo, hi;       /* bytes, inclusive */
    char algorithm[32];
    int64_t segment;
    rw_tree *tree;
} rule;

struct rw_coll_rules {
    int32_t comm_size;
    int32_t n, cap;
    rule *rules;
    int32_t *trinary_order; /* trinary-order: comm_size ranks, or NULL */
    int32_t *ring_order;    /* ring-order (the multi-ring allgather's): comm_size ranks, or NULL */
};

/* Keys a rule may carry for people and tools; the lookup does not use them. */
static const char *INFO_KEYS[] = {"predicted", "passthrough-predicted", "passthrough-alg", "via", "gain", NULL};

/* The algorithms a rule may name: the library's (not auto; no "rd"
 * shorthand), passthrough, and tree (a tree given by parents=). */
static int rule_alg(const char *name)
{
    const rw_algo_info *a = rw_algo_by_name(name);
    return !strcmp(name, "tree") || (a && a->id != RW_ALGO_AUTO && !strcmp(name, a->name));
}

static int in_list(const char *s, const char **list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

void rw_coll_rules_free(rw_coll_rules *r)
{
    if (!r)
        return;
    for (int32_t i = 0; i < r->n; i++)
        rw_tree_free(r->rules[i].tree);
    free(r->rules);
    free(r->trinary_order);
    free(r->ring_order);
    free(r);
}

int32_t rw_coll_rules_comm_size(const rw_coll_rules *r) { return r ? r->comm_size : 0; }
int32_t rw_coll_rules_count(const rw_coll_rules *r) { return r ? r->n : 0; }
const int32_t *rw_coll_rules_trinary_order(const rw_coll_rules *r) { return r ? r->trinary_order : NULL; }
const int32_t *rw_coll_rules_ring_order(const rw_coll_rules *r) { return r ? r->ring_order : NULL; }

/* A whole-field integer in [lo, hi]; 0 on success. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* "v0,v1,..." : exactly n integers in [lo, hi] (key names the field). */
static rw_status parse_list(const char *path, long long line, const char *key, char *s, int32_t n, int64_t lo,
                            int64_t hi, int32_t *out)
{
    int32_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t v;
        if (k == n)
            return rw_parse_fail(path, line, "%s: more than comm-size %d entries", key, (int)n);
        if (parse_int(tok, lo, hi, &v))
            return rw_parse_fail(path, line, "%s: entry %d '%s' is outside %lld..%lld", key, (int)k, tok,
                                 (long long)lo, (long long)hi);
        out[k++] = (int32_t)v;
    }
    if (k != n)
        return rw_parse_fail(path, line, "%s: %d entries, comm-size is %d", key, (int)k, (int)n);
    return RW_OK;
}

/* Every rank once. */
static rw_status check_permutation(const char *path, long long line, const char *key, const int32_t *v, int32_t n)
{
    uint8_t *seen = calloc((size_t)n, 1);
    if (!seen)
        return rw_fail(RW_ERR_NOMEM, "%s:%lld: out of memory", path, line);
    rw_status st = RW_OK;
    for (int32_t k = 0; k < n && st == RW_OK; k++)
        if (seen[v[k]]++)
            st = rw_parse_fail(path, line, "%s: rank %d appears twice", key, (int)v[k]);
    free(seen);
    return st;
}

/* An order line (trinary-order, ring-order): one list `val` of comm-size
 * ranks, a permutation, given once after comm-size; `extra`: a further
 * word, which is an error. */
static rw_status parse_order(const char *path, long long line, const char *key, char *val, const char *extra,
                             int32_t comm_size, int32_t **order)
{
    if (!comm_size)
        return rw_parse_fail(path, line, "%s before comm-size", key);
    if (*order)
        return rw_parse_fail(path, line, "a second %s", key);
    if (!val || extra)
        return rw_parse_fail(path, line, "%s needs one list of comm-size ranks", key);
    if (!(*order = malloc((size_t)comm_size * sizeof **order)))
        return rw_fail(RW_ERR_NOMEM, "%s:%lld: out of memory", path, line);
    rw_status st = parse_list(path, line, key, val, comm_size, 0, comm_size - 1, *order);
    return st ? st : check_permutation(path, line, key, *order, comm_size);
}

/* The tree of parents= (and order=, may be NULL) over n ranks from root. */
static rw_status parse_tree(const char *path, long long line, char *parents, char *order, int32_t n,
                            int32_t root, rw_tree **out)
{
    int32_t *parent = malloc((size_t)n * sizeof *parent), *ord = malloc((size_t)n * sizeof *ord);
    if (!parent || !ord) {
        free(parent);
        free(ord);
        return rw_fail(RW_ERR_NOMEM, "%s:%lld: out of memory for %d parents", path, line, (int)n);
    }
    rw_status st = parse_list(path, line, "parents", parents, n, -1, n - 1, parent);
    if (st == RW_OK && order)
        st = parse_list(path, line, "order", order, n, 0, n - 1, ord);
    if (st == RW_OK) {
        st = rw_tree_from_parents(n, root, parent, order ? ord : NULL, out);
        if (st != RW_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", rw_last_error());
            st = rw_parse_fail(path, line, "parents: %s", why);
        }
    }
    free(parent);
    free(ord);
    return st;
}

static rw_status parse_rule(const char *path, long long line, char *rest, int32_t comm_size, rule *ru)
{
    memset(ru, 0, sizeof *ru);
    ru->root = -2;
    ru->lo = -1;
    char *parents = NULL, *order = NULL;
    char *save = NULL;
    const char *seen[32];
    int n_seen = 0;
    for (char *f = strtok_r(rest, " \t", &save); f; f = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(f, '=');
        if (!eq || eq == f)
            return rw_parse_fail(path, line, "'%s' is not key=value", f);
        *eq = '\0';
        const char *key = f, *val = eq + 1;
        int64_t v;
        /* A key given twice is its own error ("alg=tree alg=binomial" is not about parents=). Every
           distinct key is a known one or refused below, so 32 slots hold them all. */
        for (int k = 0; k < n_seen; k++)
            if (!strcmp(seen[k], key))
                return rw_parse_fail(path, line, "%s= given twice", key);
        if (n_seen < (int)(sizeof seen / sizeof *seen))
            seen[n_seen++] = key;
        if (!strcmp(key, "op")) {
            char known[128];
            if (rw_op_parse(val) < 0)
                return rw_parse_fail(path, line, "unknown operation '%s' (known: %s)", val,
                                     rw_op_names(known, sizeof known, RW_OPS_ALL, ", "));
            snprintf(ru->op, sizeof ru->op, "%s", val);
        } else if (!strcmp(key, "root")) {
            if (!strcmp(val, "*"))
                ru->root = -1;
            else if (parse_int(val, 0, comm_size - 1, &v))
                return rw_parse_fail(path, line, "root '%s' is not a rank of %d (or *)", val, (int)comm_size);
            else
                ru->root = (int32_t)v;
        } else if (!strcmp(key, "bytes")) {
            char *colon = strchr(val, ':');
            int64_t lo, hi;
            if (!colon)
                return rw_parse_fail(path, line, "bytes '%s' is not lo:hi", val);
            *colon = '\0';
            if (parse_int(val, 0, INT64_MAX, &lo) || parse_int(colon + 1, 0, INT64_MAX, &hi) || hi < lo)
                return rw_parse_fail(path, line, "bytes '%s:%s' is not lo:hi with 0 <= lo <= hi", val, colon + 1);
            ru->lo = lo;
            ru->hi = hi;
        } else if (!strcmp(key, "alg")) {
            if (!rule_alg(val)) {
                char known[256];
                return rw_parse_fail(path, line, "unknown algorithm '%s' (known: passthrough, tree, %s)", val,
                                     rw_algo_names(known, sizeof known, RW_ALGO_BINOMIAL, -1, 0));
            }
            snprintf(ru->algorithm, sizeof ru->algorithm, "%s", val);
        } else if (!strcmp(key, "segment")) {
            if (parse_int(val, 0, INT64_MAX, &v))
                return rw_parse_fail(path, line, "segment '%s' is not a size in bytes >= 0", val);
            ru->segment = v;
        } else if (!strcmp(key, "parents")) {
            parents = (char *)val;
        } else if (!strcmp(key, "order")) {
            order = (char *)val;
        } else if (!in_list(key, INFO_KEYS)) {
            return rw_parse_fail(path, line,
                                 "unknown key '%s' (known: op, root, bytes, alg, segment, parents, order, predicted, "
                                 "passthrough-predicted, passthrough-alg, via, gain)",
                                 key);
        }
    }
    if (!ru->op[0] || ru->root == -2 || ru->lo < 0 || !ru->algorithm[0])
        return rw_parse_fail(path, line, "a rule needs op=, root=, bytes= and alg=");
    int op = rw_op_parse(ru->op), unrooted = !rw_op_rooted(op);
    if (unrooted && ru->root >= 0)
        return rw_parse_fail(path, line, "%s has no root: root=*", ru->op);
    if (unrooted && !strcmp(ru->algorithm, "tree"))
        return rw_parse_fail(path, line, "%s runs the library's algorithms by name, not alg=tree", ru->op);
    const rw_algo_info *a = strcmp(ru->algorithm, "tree") ? rw_algo_by_name(ru->algorithm) : NULL;
    if (a && !rw_algo_valid(op, a->id)) {
        char names[128];
        /* alltoall has algorithms of its own and no others */
        if (op == RW_COLL_ALLTOALL || a->ops == RW_OP_BIT(RW_COLL_ALLTOALL))
            return rw_parse_fail(path, line, "%s runs alg=%s or passthrough, and only it does",
                                 rw_op_name(RW_COLL_ALLTOALL),
                                 rw_algo_names(names, sizeof names, RW_ALGO_BINOMIAL, RW_COLL_ALLTOALL, 0));
        return rw_parse_fail(path, line, "alg=%s is for %s only", ru->algorithm,
                             rw_op_names(names, sizeof names, a->ops, " and "));
    }
    if (!strcmp(ru->algorithm, "tree")) {
        if (!parents)
            return rw_parse_fail(path, line, "alg=tree needs parents=");
        if (ru->root < 0)
            return rw_parse_fail(path, line, "alg=tree needs a root rank, not *");
        return parse_tree(path, line, parents, order, comm_size, ru->root, &ru->tree);
    }
    if (parents || order)
        return rw_parse_fail(path, line, "parents= and order= belong to alg=tree only");
    return RW_OK;
}

static rw_status read_stream(FILE *f, const char *path, rw_coll_rules *r)
{
    char *buf = NULL;
    size_t cap = 0;
    long long line = 0;
    int have_version = 0;
    rw_status st = RW_OK;
    ssize_t len;
    while (st == RW_OK && (len = getline(&buf, &cap, f)) >= 0) {
        line++;
        if ((size_t)len != strlen(buf)) {
            st = rw_parse_fail(path, line, "holds a NUL byte");
            break;
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                           buf[len - 1] == '\t'))
            buf[--len] = '\0';
        char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        char *save = NULL;
        char *word = strtok_r(s, " \t", &save);
        char *rest = save ? save : s + strlen(s);
        int64_t v;
        if (!have_version) {
            char *ver = strtok_r(NULL, " \t", &save);
            if (strcmp(word, "rankwise-coll-rules") || !ver)
                st = rw_parse_fail(path, line, "not a rankwise rules file (expected 'rankwise-coll-rules %d')",
                                   RULES_VERSION);
            else if (parse_int(ver, 1, RULES_VERSION, &v))
                st = rw_parse_fail(path, line, "rules version '%s' (this rankwise reads version %d)", ver,
                                   RULES_VERSION);
            have_version = 1;
            continue;
        }
        if (!strcmp(word, "comm-size")) {
            char *val = strtok_r(NULL, " \t", &save);
            if (r->comm_size)
                st = rw_parse_fail(path, line, "a second comm-size");
            else if (!val || parse_int(val, 1, 1 << 24, &v) || strtok_r(NULL, " \t", &save))
                st = rw_parse_fail(path, line, "comm-size needs one rank count (1 to 2^24)");
            else
                r->comm_size = (int32_t)v;
        } else if (!strcmp(word, "trinary-order") || !strcmp(word, "ring-order")) {
            char *val = strtok_r(NULL, " \t", &save);
            st = parse_order(path, line, word, val, strtok_r(NULL, " \t", &save), r->comm_size,
                             word[0] == 't' ? &r->trinary_order : &r->ring_order);
        } else if (!strcmp(word, "ranks-per-node") || !strcmp(word, "eager-limit") || !strcmp(word, "min-gain") ||
                   !strcmp(word, "model") || !strcmp(word, "nodes")) {
            /* descriptive header lines, for people */
        } else if (!strcmp(word, "rule")) {
            if (!r->comm_size) {
                st = rw_parse_fail(path, line, "a rule before comm-size");
                break;
            }
            if (r->n == r->cap) {
                int32_t cap2 = r->cap ? 2 * r->cap : 16;
                rule *nr = realloc(r->rules, (size_t)cap2 * sizeof *nr);
                if (!nr) {
                    st = rw_fail(RW_ERR_NOMEM, "%s:%lld: out of memory", path, line);
                    break;
                }
                r->rules = nr;
                r->cap = cap2;
            }
            st = parse_rule(path, line, rest, r->comm_size, &r->rules[r->n]);
            if (st == RW_OK)
                r->n++;
        } else {
            st = rw_parse_fail(path, line,
                               "unknown line '%s' (known: comm-size, ranks-per-node, eager-limit, min-gain, model, "
                               "nodes, trinary-order, rule)",
                               word);
        }
    }
    if (st == RW_OK && ferror(f))
        st = rw_fail(RW_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    if (st == RW_OK && !have_version)
        st = rw_parse_fail(path, line, "empty: not a rankwise rules file");
    if (st == RW_OK && !r->comm_size)
        st = rw_parse_fail(path, line, "no comm-size line");
    free(buf);
    return st;
}

rw_status rw_coll_rules_read(const char *path, rw_coll_rules **out)
{
    if (!out || !path)
        return rw_fail(RW_ERR_ARG, "rw_coll_rules_read: path and out are required");
    *out = NULL;
    rw_status st = RW_OK;
    FILE *f = rw_open_text(path, &st);
    if (!f)
        return st;
    st = rw_coll_rules_read_stream(f, path, out);
    fclose(f);
    return st;
}

rw_status rw_coll_rules_read_stream(FILE *f, const char *path, rw_coll_rules **out)
{
    *out = NULL;
    rw_coll_rules *r = calloc(1, sizeof *r);
    if (!r)
        return rw_fail(RW_ERR_NOMEM, "out of memory");
    rw_status st = read_stream(f, path, r);
    if (st != RW_OK) {
        rw_coll_rules_free(r);
        return st;
    }
    *out = r;
    return RW_OK;
}

rw_status rw_coll_rules_lookup(const rw_coll_rules *r, const char *op, int32_t comm_size, int32_t root,
                               int64_t bytes, rw_coll_choice *choice)
{
    if (!r || !op || !choice)
        return rw_fail(RW_ERR_ARG, "rw_coll_rules_lookup: rules, op and choice are required");
    if (bytes < 0)
        return rw_fail(RW_ERR_ARG, "rw_coll_rules_lookup: bytes %lld < 0", (long long)bytes);
    choice->algorithm = rw_algo_by_id(RW_ALGO_PASSTHROUGH)->name;
    choice->segment = 0;
    choice->tree = NULL;
    if (comm_size != r->comm_size)
        return RW_OK;
    for (int32_t i = 0; i < r->n; i++) {
        const rule *ru = &r->rules[i];
        if (strcmp(ru->op, op) || (ru->root >= 0 && ru->root != root) || bytes < ru->lo || bytes > ru->hi)
            continue;
        choice->algorithm = ru->algorithm;
        choice->segment = ru->segment;
        choice->tree = ru->tree;
        return RW_OK;
    }
    return RW_OK;
}
