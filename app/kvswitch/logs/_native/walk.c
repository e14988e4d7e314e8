/* The slot-line walk: ``RequestTracker`` for the requests whose lines follow the usual order, in C.
 *
 * The walk visits every ``| task T |`` in the text, as the line regex (``fastscan._LINE``) would find
 * them, and reads the fact each one opens. A fact of a request that began with its selection in this
 * walk advances that request's state (one per slot, so interleaved slots are fine); the release gives the
 * request's row. Anything the walk does not know for certain (a slot the tracker is still assembling, a
 * fact out of the usual order, a reason of a busy slot, a number too long) stops it right before that
 * fact: the requests open at that point are handed over with exactly the state the tracker would have
 * built from the same facts (``RequestTracker.adopt``), and the Python line path goes on from there.
 * So the events are those of the line path, fact for fact (tested on every capture and on damaged logs).
 */
#include "blockscan.h" /* Python.h first: it sets the feature macros memmem needs */

#include <math.h>
#include <string.h>

#define MAX_OPEN 32

enum stage { S_SELECTED, S_STARTED, S_SIZED, S_FULL, S_CACHED, S_EVALUATED, S_GENERATED };

typedef struct {
    request_t r;
    enum stage stage; /* what it has read so far; the stage also says which of ``r``'s numbers are set */
} open_t;

static const char *const HOW_NAMES[] = {"lcp", "lru", "id"};

/* ---- line numbers ------------------------------------------------------------------------------- */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* newlines in d[i:end]: sixteen bytes at a time where SSE2 is there (every x86-64), else eight */
static Py_ssize_t newlines(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t n = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (end - i >= 16) {
        /* byte counters, each at most 255 before they are summed */
        __m128i counts = zero;
        Py_ssize_t blocks = (end - i) / 16;
        if (blocks > 255)
            blocks = 255;
        for (Py_ssize_t k = 0; k < blocks; k++, i += 16)
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(d + i)), nl));
        __m128i sums = _mm_sad_epu8(counts, zero);
        n += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
    }
#else
    const unsigned long long ones = 0x0101010101010101ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
    for (; i + 8 <= end; i += 8) {
        unsigned long long x;
        memcpy(&x, d + i, 8);
        x ^= ones * '\n';
        unsigned long long t = ((x & low7) + low7) | x | low7; /* high bit clear: a zero byte */
        n += (Py_ssize_t)((((~t) >> 7) & ones) * ones >> 56);  /* one per zero byte, summed in the top byte */
    }
#endif
    for (; i < end; i++)
        n += d[i] == '\n';
    return n;
}

/* the start of the line holding ``at``, looking no further back than ``floor`` */
static Py_ssize_t line_start_of(bytes_t d, Py_ssize_t floor, Py_ssize_t at)
{
#if defined(__GLIBC__)
    const unsigned char *nl = memrchr(d + floor, '\n', (size_t)(at - floor));
    return nl ? (Py_ssize_t)(nl - d) + 1 : floor;
#else
    while (at > floor && d[at - 1] != '\n')
        at--;
    return at;
#endif
}

typedef struct {
    Py_ssize_t at;
    long long line_no; /* the number of the line holding ``at`` */
} counter_t;

static long long line_at(bytes_t d, counter_t *c, Py_ssize_t at)
{
    c->line_no += newlines(d, c->at, at);
    c->at = at;
    return c->line_no;
}

/* ---- pieces of the facts ------------------------------------------------------------------------ */

static inline Py_ssize_t spaces1(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    return (i < 0 || i >= end || d[i] != ' ') ? -1 : spaces(d, i, end);
}

/* \d+(?:\.\d+)? */
static Py_ssize_t decimal(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t j = digits(d, i, end);
    if (j >= 0 && j < end && d[j] == '.') {
        Py_ssize_t k = digits(d, j + 1, end);
        if (k >= 0)
            return k;
    }
    return j;
}

/* [\d.]+ */
static Py_ssize_t digits_or_dots(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t j = i;
    if (i < 0)
        return -1;
    while (j < end && ((d[j] >= '0' && d[j] <= '9') || d[j] == '.'))
        j++;
    return j > i ? j : -1;
}

/* the digits d[i:k] as a number (k from ``digits``), or -1 when there are none or too many */
static int number(bytes_t d, Py_ssize_t i, Py_ssize_t k, long long *out)
{
    return i >= 0 && k > i && bs_small_int(d, i, k - i, out);
}

/* ``id +(\d+) `` right before the "|" at ``bar``: its start, the slot's digits in *slot_at / *slot_len */
static Py_ssize_t head_before(bytes_t d, Py_ssize_t floor, Py_ssize_t bar, Py_ssize_t *slot_at,
                              Py_ssize_t *slot_len)
{
    if (bar - 1 < floor || d[bar - 1] != ' ')
        return -1;
    Py_ssize_t num = bar - 1;
    while (num > floor && d[num - 1] >= '0' && d[num - 1] <= '9')
        num--;
    Py_ssize_t gap = num;
    while (gap > floor && d[gap - 1] == ' ')
        gap--;
    if (num == bar - 1 || gap == num || gap - 2 < floor || d[gap - 2] != 'i' || d[gap - 1] != 'd')
        return -1;
    *slot_at = num;
    *slot_len = bar - 1 - num;
    return gap - 2;
}

/* ---- the walk ----------------------------------------------------------------------------------- */

typedef struct {
    open_t open[MAX_OPEN];
    int n_open;
    long long last_slot;
    int has_last_slot;
} walk_t;

static open_t *open_slot(walk_t *w, long long slot)
{
    for (int k = 0; k < w->n_open; k++)
        if (w->open[k].r.slot == slot)
            return &w->open[k];
    return NULL;
}

static void close_slot(walk_t *w, open_t *o)
{
    int k = (int)(o - w->open);
    memmove(&w->open[k], &w->open[k + 1], (size_t)(w->n_open - k - 1) * sizeof(open_t));
    w->n_open--;
}

/* 1: the tracker is assembling a request on this slot, 0: not, -1: error */
static int tracker_busy(PyObject *pending, long long slot)
{
    PyObject *key = PyLong_FromLongLong(slot);
    if (key == NULL)
        return -1;
    int busy = PyDict_Contains(pending, key);
    Py_DECREF(key);
    return busy;
}

/* the open requests as ``RequestTracker.adopt`` takes them */
static PyObject *opened_list(const walk_t *w)
{
    PyObject *list = PyList_New(w->n_open);
    if (list == NULL)
        return NULL;
    for (int k = 0; k < w->n_open; k++) {
        const open_t *o = &w->open[k];
        const request_t *r = &o->r;
        PyObject *none = Py_None;
        int evaluated = o->stage >= S_EVALUATED;
        PyObject *item = Py_BuildValue(
            "(LLNsNNNNNNO)", r->slot, r->first_line,
            o->stage >= S_STARTED ? PyLong_FromLongLong(r->task) : Py_NewRef(none), HOW_NAMES[r->how],
            r->has_sim ? PyLong_FromLongLong(r->sim) : Py_NewRef(none),
            r->has_size ? PyLong_FromLongLong(r->size) : Py_NewRef(none),
            r->has_cached ? PyLong_FromLongLong(r->cached) : Py_NewRef(none),
            evaluated ? PyLong_FromLongLong(r->fresh) : Py_NewRef(none),
            evaluated ? PyFloat_FromDouble(r->ms) : Py_NewRef(none),
            o->stage >= S_GENERATED ? PyLong_FromLongLong(r->gen) : Py_NewRef(none),
            r->full_hit ? Py_True : Py_False);
        if (item == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

/* The fact at one ``| task T |`` of a request open in the walk. Returns the end of the fact's text (where
 * the line regex goes on) when applied, ``*row_ready`` set when it was the release; -1 when the walk must
 * stop before it. */
static Py_ssize_t advance(bytes_t d, Py_ssize_t m, Py_ssize_t end, open_t *o, long long task, long long line_no,
                          row_t *row, int *row_ready)
{
    Py_ssize_t j, k, at;
    long long value;
    request_t *r = &o->r;
    if (o->stage == S_SELECTED) {
        if ((j = LIT(d, m, end, "processing task")) < 0 || task < 0)
            return -1;
        o->stage = S_STARTED;
        r->task = task;
        return j;
    }
    if (task != r->task)
        return -1;
    /* (?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+, (?:task\.)?n_(?:prompt_)?tokens = (\d+) */
    if ((k = LIT(d, m, end, "new prompt")) >= 0 || (k = LIT(d, m, end, "prompt tokenized")) >= 0) {
        k = LIT(d, k, end, ", n_ctx_slot = ");
        k = LIT(d, digits(d, k, end), end, ", n_keep = ");
        k = LIT(d, digits(d, k, end), end, ", ");
        Py_ssize_t t = LIT(d, k, end, "task.");
        k = LIT(d, t >= 0 ? t : k, end, "n_");
        Py_ssize_t p = LIT(d, k, end, "prompt_");
        k = LIT(d, p >= 0 ? p : k, end, "tokens = ");
        j = digits(d, k, end);
        if (o->stage != S_STARTED || !number(d, k, j, &r->size))
            return -1;
        r->has_size = 1;
        o->stage = S_SIZED;
        return j;
    }
    if ((j = LIT(d, m, end, "need to evaluate at least 1 token")) >= 0) {
        if (o->stage != S_STARTED && o->stage != S_SIZED)
            return -1;
        r->full_hit = 1;
        o->stage = S_FULL;
        return j;
    }
    /* (?:cached )?n_tokens = (\d+), memory_seq_rm \[ : the smallest statement counts */
    k = LIT(d, m, end, "cached ");
    if ((k = LIT(d, k >= 0 ? k : m, end, "n_tokens = ")) >= 0) {
        j = digits(d, k, end);
        Py_ssize_t e = LIT(d, j, end, ", memory_seq_rm [");
        if (o->stage < S_STARTED || o->stage > S_CACHED || e < 0 || !number(d, k, j, &value))
            return -1;
        if (!r->has_cached || value < r->cached)
            r->cached = value;
        r->has_cached = 1;
        o->stage = S_CACHED;
        return e;
    }
    /* prompt eval time = +(\d+(?:\.\d+)?) ms / +(\d+) tokens */
    if ((j = LIT(d, m, end, "prompt eval time =")) >= 0) {
        at = spaces1(d, j, end);
        Py_ssize_t ms_end = decimal(d, at, end);
        j = spaces1(d, LIT(d, ms_end, end, " ms /"), end);
        k = digits(d, j, end);
        Py_ssize_t e = LIT(d, k, end, " tokens");
        if (o->stage < S_STARTED || o->stage > S_CACHED || e < 0 || !number(d, j, k, &r->fresh) ||
            !bs_parse_float(d, at, ms_end - at, &r->ms))
            return -1;
        r->ms_at = at;
        r->ms_len = ms_end - at;
        o->stage = S_EVALUATED;
        return e;
    }
    /* eval time = +[\d.]+ ms / +(\d+) (?:tokens|runs) */
    if ((j = LIT(d, m, end, "eval time =")) >= 0) {
        j = digits_or_dots(d, spaces1(d, j, end), end);
        j = spaces1(d, LIT(d, j, end, " ms /"), end);
        k = digits(d, j, end);
        Py_ssize_t unit = LIT(d, k, end, " "), e = LIT(d, unit, end, "tokens");
        if (e < 0)
            e = LIT(d, unit, end, "runs");
        if (o->stage != S_EVALUATED || e < 0 || !number(d, j, k, &r->gen))
            return -1;
        o->stage = S_GENERATED;
        return e;
    }
    /* stop processing: n_(?:tokens|past) = (\d+), truncated = (\d+) */
    if ((j = LIT(d, m, end, "stop processing: n_")) >= 0) {
        long long ntok, trunc;
        k = LIT(d, j, end, "tokens");
        j = LIT(d, k >= 0 ? k : LIT(d, j, end, "past"), end, " = ");
        k = digits(d, j, end);
        Py_ssize_t t = LIT(d, k, end, ", truncated = ");
        Py_ssize_t t_end = digits(d, t, end);
        if (o->stage != S_GENERATED || !number(d, j, k, &ntok) || !number(d, t, t_end, &trunc))
            return -1;
        bs_row_values(d, r, ntok, trunc, line_no, row);
        *row_ready = 1;
        return t_end;
    }
    return -1;
}

/* ``selected slot by (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = (\d+(?:\.\d+)?))?`` at m: a new open
 * request and the end of that text, or -1 when the text does not read as one */
static Py_ssize_t select_slot(bytes_t d, Py_ssize_t m, Py_ssize_t end, open_t *o)
{
    Py_ssize_t j = LIT(d, m, end, "selected slot by "), k;
    memset(o, 0, sizeof(*o));
    request_t *r = &o->r;
    if (j < 0)
        return -1;
    if ((k = LIT(d, j, end, "LCP similarity")) >= 0)
        r->how = HOW_LCP;
    else if ((k = LIT(d, j, end, "LRU")) >= 0)
        r->how = HOW_LRU;
    else if ((k = LIT(d, j, end, "id")) >= 0)
        r->how = HOW_ID;
    else
        return -1;
    if ((j = LIT(d, k, end, ", ")) >= 0) {
        Py_ssize_t f = LIT(d, j, end, "f_");
        j = LIT(d, f >= 0 ? f : j, end, "sim_best = ");
        Py_ssize_t e = decimal(d, j, end);
        if (e >= 0) {
            double sim;
            if (!bs_parse_float(d, j, e - j, &sim))
                return -1;
            double scaled = nearbyint(sim * 1000.0); /* round(): half to even */
            if (!(scaled <= 1e15)) /* beyond what a long long holds exactly: the line path reads it */
                return -1;
            r->sim = (long long)scaled;
            r->has_sim = 1;
            k = e;
        }
    }
    o->stage = S_SELECTED;
    return k;
}

/* where the line path should hand back: the start of the line of the next selection after ``from``'s
 * line, a place where no fact of the line regex nor a timing block can straddle; or ``end`` */
static Py_ssize_t next_selection_line(bytes_t d, Py_ssize_t from, Py_ssize_t end)
{
    for (;;) {
        const unsigned char *nl = memchr(d + from, '\n', (size_t)(end - from));
        if (nl == NULL)
            return end;
        Py_ssize_t at = bs_find_selection(d, (Py_ssize_t)(nl - d) + 1, end);
        if (at < 0)
            return end;
        Py_ssize_t start = at;
        while (start > 0 && d[start - 1] != '\n')
            start--;
        if (!bs_may_continue_timing(d, start, end))
            return start;
        from = at;
    }
}

int bs_walk(bytes_t d, Py_ssize_t pos, Py_ssize_t end, long long line_no, PyObject *pending, Py_ssize_t max_pending,
            bs_emit_t emit, void *out, walk_result_t *result)
{
    walk_t w;
    w.n_open = 0;
    w.has_last_slot = 0;
    counter_t lines = {pos, line_no};
    /* i: where the search for the next pipe goes on; floor: where the line regex would go on (the end of
       the last fact read), so a fact's ``id S`` must start there or later */
    Py_ssize_t i = pos, floor = pos, stop;
    /* lines before ``checked`` are known to hold no reason the line path must read alone */
    Py_ssize_t checked = pos;
    for (;;) {
        const unsigned char *p = i < end ? memchr(d + i, '|', (size_t)(end - i)) : NULL;
        if (p == NULL)
            break;
        Py_ssize_t bar = (Py_ssize_t)(p - d);
        /* " task -?\d+ |" */
        Py_ssize_t t = LIT(d, bar + 1, end, " task "), task_at = t;
        if (t >= 0 && t < end && d[t] == '-')
            t++;
        Py_ssize_t t_end = digits(d, t, end);
        Py_ssize_t after = LIT(d, t_end, end, " |");
        if (after < 0) {
            i = bar + 1;
            continue;
        }
        if (bar >= checked) { /* the first task pipe of its line: the lines before it have none */
            Py_ssize_t line_start = line_start_of(d, checked, bar);
            Py_ssize_t line_end;
            if (line_start > checked && (stop = bs_bare_reason_line(d, checked, line_start, &line_end)) >= 0)
                goto bail;
            const unsigned char *nl = memchr(d + bar, '\n', (size_t)(end - bar));
            checked = nl ? (Py_ssize_t)(nl - d) + 1 : end;
        }
        Py_ssize_t m = spaces(d, after, end);
        if (bs_harmless(d, m, end) >= 0) {
            i = m;
            continue;
        }
        /* a fact, or what may be one: the line regex reads it only after ``id S`` */
        long long slot, task;
        Py_ssize_t slot_at, slot_len;
        Py_ssize_t head = head_before(d, floor, bar, &slot_at, &slot_len);
        stop = head >= 0 ? head : bar;
        if (head < 0 || !number(d, slot_at, slot_at + slot_len, &slot) || !bs_small_int(d, t, t_end - t, &task))
            goto bail;
        if (t != task_at)
            task = -task;
        open_t *o = open_slot(&w, slot);
        int busy = o != NULL ? 1 : tracker_busy(pending, slot);
        if (busy < 0)
            return -1;
        Py_ssize_t fact_end;
        if (LIT(d, m, end, "selected slot by ") >= 0) {
            if (busy || w.n_open >= MAX_OPEN || PyDict_GET_SIZE(pending) + w.n_open >= max_pending)
                goto bail;
            open_t *fresh = &w.open[w.n_open];
            if ((fact_end = select_slot(d, m, end, fresh)) < 0)
                goto bail;
            fresh->r.slot = slot;
            fresh->r.task = -1;
            fresh->r.first_line = line_at(d, &lines, bar);
            w.n_open++;
            w.last_slot = slot;
            w.has_last_slot = 1;
        } else if (o == NULL) {
            /* an idle slot's reason (task -1, nothing assembled there): the tracker drops it. The line regex
               takes the rest of the line as the reason's text, so a pipe there is left to it. */
            if (busy || task >= 0 || bs_exact_start(d, m, end) || !bs_reason_start(d, m, end))
                goto bail;
            const unsigned char *nl = memchr(d + m, '\n', (size_t)(end - m));
            fact_end = nl ? (Py_ssize_t)(nl - d) : end;
            if (memchr(d + m, '|', (size_t)(fact_end - m)) != NULL)
                goto bail;
        } else {
            row_t row;
            int row_ready = 0, was_selected = o->stage == S_SELECTED;
            if ((fact_end = advance(d, m, end, o, task, line_at(d, &lines, bar), &row, &row_ready)) < 0)
                goto bail;
            if (was_selected) { /* processing task: the tracker's last slot */
                w.last_slot = slot;
                w.has_last_slot = 1;
            }
            if (row_ready) {
                if (emit(out, &row) < 0)
                    return -1;
                close_slot(&w, o);
            }
        }
        i = floor = fact_end;
    }
    Py_ssize_t line_end;
    if (checked < end && (stop = bs_bare_reason_line(d, checked, end, &line_end)) >= 0)
        goto bail;
    result->pos = end;
    result->until = end;
    result->line_no = line_at(d, &lines, end);
    goto done;
bail:
    result->pos = stop;
    result->line_no = line_at(d, &lines, stop);
    result->until = next_selection_line(d, stop, end);
done:
    result->opened = opened_list(&w);
    if (result->opened == NULL)
        return -1;
    result->last_slot = w.has_last_slot ? PyLong_FromLongLong(w.last_slot) : Py_NewRef(Py_None);
    if (result->last_slot == NULL) {
        Py_CLEAR(result->opened);
        return -1;
    }
    return 0;
}
