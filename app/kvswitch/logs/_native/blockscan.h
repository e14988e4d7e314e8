/*
 * kvswitch.logs._blockscan: the fast scanner's common case at native speed.
 *
 * A big llama-server log is millions of ordinary requests. In Python every one costs a regex match
 * per line, a dozen int() calls and an f-string; here it costs a few memchr calls.
 *
 * walk.c   reads the slot lines' facts in file order, one request per slot, as ``RequestTracker`` does,
 *          and hands the open requests to it where it stops;
 * match.c  the fact starts and text tests shared by the walk and the module;
 * rows.c   computes ``blocks.block_row`` and writes ``jsonl.format_records``'s line for it;
 * module.c the Python entry points.
 *
 * Whatever this code does not take is handed back to the Python line path, so the events never depend
 * on whether the extension is built (tested both ways, against the line path's final state).
 */
#ifndef KVSWITCH_BLOCKSCAN_H
#define KVSWITCH_BLOCKSCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef const unsigned char *bytes_t;

enum how { HOW_LCP, HOW_LRU, HOW_ID };

/* one request as the walk has read it so far: the numbers its facts gave (``has_*``: stated) */
typedef struct {
    long long slot, task, first_line, sim, size, cached, fresh, gen;
    int has_sim, has_size, has_cached, full_hit; /* sim: similarity x1000, rounded half to even */
    enum how how;
    double ms;
    Py_ssize_t ms_at, ms_len; /* the prompt time's text, which the JSON line repeats */
} request_t;

/* ---- text tests shared by match.c and walk.c: each returns the position after what it matched, or -1,
   and takes -1 as "already failed", so a chain of them reads like the regex it stands for */

static inline Py_ssize_t lit(bytes_t d, Py_ssize_t i, Py_ssize_t end, const char *s, Py_ssize_t n)
{
    return (i >= 0 && end - i >= n && memcmp(d + i, s, (size_t)n) == 0) ? i + n : -1;
}
#define LIT(d, i, end, s) lit((d), (i), (end), (s), (Py_ssize_t)(sizeof(s) - 1))

/* \d+ */
static inline Py_ssize_t digits(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t j = i;
    if (i < 0)
        return -1;
    while (j < end && d[j] >= '0' && d[j] <= '9')
        j++;
    return j > i ? j : -1;
}

/* " *" */
static inline Py_ssize_t spaces(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    if (i < 0)
        return -1;
    while (i < end && d[i] == ' ')
        i++;
    return i;
}

/* match.c */
#define MAX_FACT_STARTS 64
#define REASON_BLOOM_BITS_LOG2 14
typedef struct {
    int ready, exact_n, folded_n;
    char exact[MAX_FACT_STARTS][64], folded[MAX_FACT_STARTS][64]; /* folded: lower case */
    Py_ssize_t exact_len[MAX_FACT_STARTS], folded_len[MAX_FACT_STARTS];
    unsigned char exact_first[256]; /* the first bytes of the exact ones */
    unsigned char first_bytes[256]; /* the first bytes of the folded ones */
    unsigned char bloom[1 << (REASON_BLOOM_BITS_LOG2 - 3)]; /* their first four bytes (match.c) */
    unsigned char pairs[MAX_FACT_STARTS][2]; /* their distinct first two bytes, OR 0x20 */
    int pairs_n;
} fact_starts_t;
extern fact_starts_t bs_fact_starts;
/* whether d[i:end] starts with the lower-case ``s`` (length n) in any ASCII case */
int bs_starts_folded(bytes_t d, Py_ssize_t i, Py_ssize_t end, const char *s, Py_ssize_t n);
Py_ssize_t bs_find_selection(bytes_t d, Py_ssize_t i, Py_ssize_t end);
/* i when the slot line message at i carries no fact, else -1 */
Py_ssize_t bs_harmless(bytes_t d, Py_ssize_t i, Py_ssize_t end);
/* whether d[i:end] starts with a fact start compared exactly / a reason start in any case */
int bs_exact_start(bytes_t d, Py_ssize_t i, Py_ssize_t end);
int bs_reason_start(bytes_t d, Py_ssize_t i, Py_ssize_t end);
/* whether the line at ``at`` may continue an empty timing header (``blocks.TIMING_CONTINUATIONS``) */
int bs_may_continue_timing(bytes_t d, Py_ssize_t at, Py_ssize_t end);
int bs_small_int(bytes_t d, Py_ssize_t at, Py_ssize_t len, long long *out);
/* the first position in d[i:end] where an any-case fact start (a reason start) begins, or -1 */
Py_ssize_t bs_find_reason_start(bytes_t d, Py_ssize_t i, Py_ssize_t end);
/* the start of the first line of d[from:to) (whole lines) that holds a reason start and no "| task ",
   its end in *line_end; or -1 (``fastscan.bare_reasons``' candidates) */
Py_ssize_t bs_bare_reason_line(bytes_t d, Py_ssize_t from, Py_ssize_t to, Py_ssize_t *line_end);
/* enter an any-case fact start (lower case, at least 4 bytes) into the filter bs_find_reason_start uses */
void bs_reason_bloom_add(const char *folded, Py_ssize_t len);

/* rows.c */
enum verdict { V_HIT, V_PARTIAL, V_MISS };
enum reason { R_NONE, R_TRUNCATED, R_LRU_HIT, R_FULL_HIT, R_NOT_CACHED, R_PREFIX };

typedef struct {
    long long slot, task, cached, fresh, first, last;
    double ms, ratio, similarity; /* ratio: cached / prompt tokens; similarity: for R_NOT_CACHED */
    int similarity_x1000;         /* the same, as printed x1000 */
    const unsigned char *ms_text; /* the prompt time as the log wrote it */
    Py_ssize_t ms_len;
    enum verdict verdict;
    enum reason reason;
} row_t;

/* text written straight into a bytes object, which is handed to Python as it is (no copy) */
typedef struct {
    PyObject *bytes; /* NULL until the first write */
    char *data;
    Py_ssize_t len, cap;
} text_t;

/* the texts and thresholds of ``core.verdicts``, given once by ``configure`` */
typedef struct {
    double hit_ratio, miss_ratio, not_cached_min_sim;
    PyObject *verdicts[3];        /* "hit", "partial", "miss" */
    PyObject *reasons[4];         /* None, truncated, LRU hit, full hit */
    PyObject *reasons_json[4];    /* the same as JSON text (bytes) */
    PyObject *not_cached;         /* a str.format template taking the similarity */
    PyObject *prefix_head, *prefix_tail; /* around the number of reused tokens */
    PyObject *json_dumps;         /* json.dumps, for the rare reason with a computed text */
    int ready;
} config_t;

extern config_t bs_config;

int bs_parse_float(bytes_t d, Py_ssize_t at, Py_ssize_t len, double *out);
/* the row of a released request: ``ntok`` and ``trunc`` are the release's numbers, ``last`` its line */
void bs_row_values(bytes_t d, const request_t *r, long long ntok, long long trunc, long long last, row_t *row);
PyObject *bs_row_tuple(const row_t *row);
/* drop what rows.c remembers of the texts of ``configure`` (it is called again) */
void bs_forget_reasons(void);
int bs_row_json(text_t *out, const row_t *row, const char *server_json, Py_ssize_t server_len);
int bs_text_reserve(text_t *out, Py_ssize_t extra);
/* the text as a bytes object (a new reference; the text is emptied), or NULL on error */
PyObject *bs_text_take(text_t *out);
void bs_text_free(text_t *out);

/* walk.c */
typedef int (*bs_emit_t)(void *out, const row_t *row);
typedef struct {
    Py_ssize_t pos, until;
    long long line_no;
    PyObject *opened;    /* new reference: the open requests, for RequestTracker.adopt */
    PyObject *last_slot; /* new reference: the slot last selected or started, or None */
} walk_result_t;
int bs_walk(bytes_t d, Py_ssize_t pos, Py_ssize_t end, long long line_no, PyObject *pending, Py_ssize_t max_pending,
            bs_emit_t emit, void *out, walk_result_t *result);

#endif
