/* The language of ``blocks.BLOCK`` and the checks ``fastscan._chunk`` makes around a match.
 *
 * Every function returns the position after what it matched, or -1, and takes -1 as its input position
 * to mean "already failed" (so a chain of parts reads like the regex, without an ``if`` per part). */
#include <string.h>

#include "blockscan.h"

/* Numbers longer than this go to the Python path (exact in a double, no overflow anywhere). */
#define MAX_DIGITS 15

/* ---- primitives ------------------------------------------------------------------------------------ */

/* bytes looked at by the loops below since ``scan`` last reset it (it bounds the work of one call) */
Py_ssize_t bs_walked;

static inline Py_ssize_t lit(bytes_t d, Py_ssize_t i, Py_ssize_t end, const char *s, Py_ssize_t n)
{
    return (i >= 0 && end - i >= n && memcmp(d + i, s, (size_t)n) == 0) ? i + n : -1;
}
#define LIT(d, i, end, s) lit((d), (i), (end), (s), (Py_ssize_t)(sizeof(s) - 1))

static inline Py_ssize_t find_byte(bytes_t d, Py_ssize_t i, Py_ssize_t end, unsigned char c)
{
    if (i < 0 || i >= end)
        return -1;
    const unsigned char *p = memchr(d + i, c, (size_t)(end - i));
    Py_ssize_t found = p ? (Py_ssize_t)(p - d) : -1;
    bs_walked += (p ? found : end) - i;
    return found;
}

/* \d+ */
static inline Py_ssize_t digits(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t j = i;
    if (i < 0)
        return -1;
    while (j < end && d[j] >= '0' && d[j] <= '9')
        j++;
    bs_walked += j - i;
    return j > i ? j : -1;
}

/* " *" (zero or more) */
static inline Py_ssize_t spaces(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t from = i;
    if (i < 0)
        return -1;
    while (i < end && d[i] == ' ')
        i++;
    bs_walked += i - from;
    return i;
}

/* " +" (one or more) */
static inline Py_ssize_t spaces1(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    if (i < 0 || i >= end || d[i] != ' ')
        return -1;
    return spaces(d, i, end);
}

/* \d+(?:\.\d+)? */
static inline Py_ssize_t decimal(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t j = digits(d, i, end);
    if (j >= 0 && j < end && d[j] == '.') {
        Py_ssize_t k = digits(d, j + 1, end);
        if (k >= 0)
            return k;
    }
    return j;
}

/* the next "selected slot by " from i: memchr for its "b", a byte that is rare in these logs */
Py_ssize_t bs_find_selection(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    static const char needle[] = "selected slot by ";
    const Py_ssize_t n = sizeof(needle) - 1, b_at = 14;
    Py_ssize_t p = i + b_at;
    while ((p = find_byte(d, p, end, 'b')) >= 0) {
        Py_ssize_t at = p - b_at;
        if (at + n <= end && memcmp(d + at, needle, (size_t)n) == 0)
            return at;
        p++;
    }
    return -1;
}

Py_ssize_t bs_count_newlines(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t n = 0;
    while ((i = find_byte(d, i, end, '\n')) >= 0) {
        n++;
        i++;
    }
    return n;
}

/* ---- the parts of BLOCK ------------------------------------------------------------------------- */

/* the texts that may start a fact after "| task T |" (blocks.FACT_STARTS, set by configure()):
   exact ones, and ones compared in any ASCII case (the reason starts) */
fact_starts_t bs_fact_starts;

int bs_starts_folded(bytes_t d, Py_ssize_t i, Py_ssize_t end, const char *s, Py_ssize_t n)
{
    if (end - i < n)
        return 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned char c = d[i + k];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + ('a' - 'A'));
        if (c != (unsigned char)s[k])
            return 0;
    }
    return 1;
}

/* _HARMLESS: `` *+`` not followed by a fact start, an empty message that a timing block continues, a lone
   "\r" or the end; the position after the spaces */
static Py_ssize_t harmless(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    if (i < 0 || i >= end)
        return -1;
    Py_ssize_t nl = d[i] == '\r' ? i + 1 : i;
    if (nl < end && d[nl] == '\n') {
        /* an empty message: harmless unless a timing continuation follows (blocks.TIMING_CONTINUATIONS) */
        Py_ssize_t j = nl + 1;
        if (j >= end)
            return -1;
        while (j < end && (d[j] == ' ' || d[j] == '\t'))
            j++;
        if (LIT(d, j, end, "prompt eval time") >= 0 || LIT(d, j, end, "eval time") >= 0 ||
            LIT(d, j, end, "total time") >= 0 || LIT(d, j, end, "graphs reused") >= 0 ||
            LIT(d, j, end, "draft acceptance") >= 0)
            return -1;
        return i;
    }
    if (d[i] == '\r')
        return -1;
    for (int k = 0; k < bs_fact_starts.exact_n; k++)
        if (lit(d, i, end, bs_fact_starts.exact[k], bs_fact_starts.exact_len[k]) >= 0)
            return -1;
    for (int k = 0; k < bs_fact_starts.folded_n; k++)
        if (bs_starts_folded(d, i, end, bs_fact_starts.folded[k], bs_fact_starts.folded_len[k]))
            return -1;
    return i;
}

/* " task -?\d+ |" right after the "|" at ``bar``: the position after it, or -1 */
static Py_ssize_t task_pipe(bytes_t d, Py_ssize_t bar, Py_ssize_t end)
{
    Py_ssize_t j = LIT(d, bar + 1, end, " task ");
    if (j >= 0 && j < end && d[j] == '-')
        j++;
    return LIT(d, digits(d, j, end), end, " |");
}

/* _FILL: (?:[^|]*+\|(?: task -?\d+ \| *+_HARMLESS|(?! task -?\d+ \|)))* -- as many whole repetitions as
   match (never fails): a "| task T |" line that is no fact, or a pipe of some other text */
static Py_ssize_t fill(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    for (;;) {
        Py_ssize_t bar = find_byte(d, i, end, '|');
        if (bar < 0)
            return i;
        Py_ssize_t j = task_pipe(d, bar, end);
        if (j < 0) {
            i = bar + 1;
            continue;
        }
        j = harmless(d, spaces(d, j, end), end);
        if (j < 0)
            return i;
        i = j;
    }
}

/* _NEXT: _FILL [^|]*\3 task \5 \| * */
static Py_ssize_t next_line(bytes_t d, Py_ssize_t i, Py_ssize_t end, const block_t *b)
{
    if (i < 0)
        return -1;
    i = fill(d, i, end);
    Py_ssize_t bar = find_byte(d, i, end, '|');
    /* \3 ends with the only "|" it holds, so it ends at the first "|" [^|]* can reach */
    Py_ssize_t from = bar - b->head_len + 1;
    if (bar < 0 || from < i || memcmp(d + from, d + b->head, (size_t)b->head_len) != 0)
        return -1;
    Py_ssize_t j = LIT(d, bar + 1, end, " task ");
    j = lit(d, j, end, (const char *)d + b->task, b->task_len);
    j = LIT(d, j, end, " |");
    return j < 0 ? -1 : spaces(d, j, end);
}

/* (id +(\d+) \|) right before the first "|" at or after i: read backwards from that "|" */
static Py_ssize_t slot_head(bytes_t d, Py_ssize_t i, Py_ssize_t end, block_t *b)
{
    Py_ssize_t bar = find_byte(d, i, end, '|');
    if (bar < 0 || bar - 1 < i || d[bar - 1] != ' ')
        return -1;
    Py_ssize_t num = bar - 1;
    while (num > i && d[num - 1] >= '0' && d[num - 1] <= '9')
        num--;
    Py_ssize_t gap = num;
    while (gap > i && d[gap - 1] == ' ')
        gap--;
    bs_walked += bar - gap;
    if (num == bar - 1 || gap == num || gap - 2 < i || d[gap - 2] != 'i' || d[gap - 1] != 'd')
        return -1;
    b->head = gap - 2;
    b->head_len = bar + 1 - b->head;
    b->slot = num;
    b->slot_len = bar - 1 - num;
    return bar + 1;
}

/* [\d.]+ */
static inline Py_ssize_t digits_or_dots(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t j = i;
    if (i < 0)
        return -1;
    while (j < end && ((d[j] >= '0' && d[j] <= '9') || d[j] == '.'))
        j++;
    bs_walked += j - i;
    return j > i ? j : -1;
}

/* whether the digits at a (a_len of them) are a smaller number than those at c: by value, leading zeros
   aside, so numbers of any length compare exactly */
static int digits_less(bytes_t d, Py_ssize_t a, Py_ssize_t a_len, Py_ssize_t c, Py_ssize_t c_len)
{
    while (a_len > 1 && d[a] == '0') {
        a++;
        a_len--;
    }
    while (c_len > 1 && d[c] == '0') {
        c++;
        c_len--;
    }
    if (a_len != c_len)
        return a_len < c_len;
    return memcmp(d + a, d + c, (size_t)a_len) < 0;
}

typedef Py_ssize_t (*part_t)(bytes_t d, Py_ssize_t i, Py_ssize_t end);

/* a group: ``part`` at i, its span kept in *at and *len when it matches */
static inline Py_ssize_t group(part_t part, bytes_t d, Py_ssize_t i, Py_ssize_t end, Py_ssize_t *at,
                               Py_ssize_t *len)
{
    Py_ssize_t k = part(d, i, end);
    if (k >= 0) {
        *at = i;
        *len = k - i;
    }
    return k;
}

/* BLOCK at ``at`` (where "selected slot by " starts): the end of the match, or -1 */
Py_ssize_t bs_match_block(bytes_t d, Py_ssize_t at, Py_ssize_t end, block_t *b)
{
    Py_ssize_t j = at + 17, k, e, unused; /* after "selected slot by " */
    memset(b, 0, sizeof(*b));
    /* (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = (\d+(?:\.\d+)?))? */
    if ((k = LIT(d, j, end, "LCP similarity")) >= 0)
        b->how = HOW_LCP;
    else if ((k = LIT(d, j, end, "LRU")) >= 0)
        b->how = HOW_LRU;
    else if ((k = LIT(d, j, end, "id")) >= 0)
        b->how = HOW_ID;
    else
        return -1;
    j = k;
    if ((k = LIT(d, j, end, ", ")) >= 0) {
        Py_ssize_t f = LIT(d, k, end, "f_");
        k = LIT(d, f >= 0 ? f : k, end, "sim_best = ");
        if ((e = group(decimal, d, k, end, &b->sim, &b->sim_len)) >= 0)
            j = e;
    }
    /* _FILL [^|]*(id +(\d+) \|) task (\d+) \| *processing task _NEXT */
    j = slot_head(d, fill(d, j, end), end, b);
    j = group(digits, d, LIT(d, j, end, " task "), end, &b->task, &b->task_len);
    j = LIT(d, spaces(d, LIT(d, j, end, " |"), end), end, "processing task");
    if ((j = next_line(d, j, end, b)) < 0)
        return -1;
    /* optional: (?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+,
       (?:task\.)?n_(?:prompt_)?tokens = (\d+) _NEXT */
    k = LIT(d, j, end, "new prompt");
    if (k < 0)
        k = LIT(d, j, end, "prompt tokenized");
    k = LIT(d, k, end, ", n_ctx_slot = ");
    k = LIT(d, digits(d, k, end), end, ", n_keep = ");
    k = LIT(d, digits(d, k, end), end, ", ");
    if (k >= 0) {
        Py_ssize_t t = LIT(d, k, end, "task.");
        k = LIT(d, t >= 0 ? t : k, end, "n_");
        Py_ssize_t p = LIT(d, k, end, "prompt_");
        k = LIT(d, p >= 0 ? p : k, end, "tokens = ");
        if ((e = next_line(d, digits(d, k, end), end, b)) >= 0) {
            group(digits, d, k, end, &b->size, &b->size_len);
            j = e;
        }
    }
    /* optional: need to evaluate at least 1 token() _NEXT */
    if ((k = next_line(d, LIT(d, j, end, "need to evaluate at least 1 token"), end, b)) >= 0) {
        b->full_hit = 1;
        j = k;
    }
    /* optional: (?:cached )?n_tokens = (\d+), memory_seq_rm \[ _NEXT, and any restatements of it (group 9):
       the smallest statement is kept, as RequestTracker keeps it */
    for (;;) {
        Py_ssize_t at, len;
        k = LIT(d, j, end, "cached ");
        k = LIT(d, k >= 0 ? k : j, end, "n_tokens = ");
        if ((e = next_line(d, LIT(d, digits(d, k, end), end, ", memory_seq_rm ["), end, b)) < 0)
            break;
        group(digits, d, k, end, &at, &len);
        if (!b->cached_len || digits_less(d, at, len, b->cached, b->cached_len)) {
            b->cached = at;
            b->cached_len = len;
        }
        j = e;
    }
    /* prompt eval time = +(\d+(?:\.\d+)?) ms / +(\d+) tokens _NEXT */
    j = spaces1(d, LIT(d, j, end, "prompt eval time ="), end);
    j = group(decimal, d, j, end, &b->ms, &b->ms_len);
    j = spaces1(d, LIT(d, j, end, " ms /"), end);
    j = group(digits, d, j, end, &b->fresh, &b->fresh_len);
    j = next_line(d, LIT(d, j, end, " tokens"), end, b);
    /* eval time = +[\d.]+ ms / +(\d+) (?:tokens|runs) _NEXT */
    j = spaces1(d, LIT(d, j, end, "eval time ="), end);
    j = group(digits_or_dots, d, j, end, &unused, &unused);
    j = spaces1(d, LIT(d, j, end, " ms /"), end);
    j = LIT(d, group(digits, d, j, end, &b->gen, &b->gen_len), end, " ");
    k = LIT(d, j, end, "tokens");
    j = next_line(d, k >= 0 ? k : LIT(d, j, end, "runs"), end, b);
    /* stop processing: n_(?:tokens|past) = (\d+), truncated = (\d+)[^|\n]*\n */
    j = LIT(d, j, end, "stop processing: n_");
    k = LIT(d, j, end, "tokens");
    j = LIT(d, k >= 0 ? k : LIT(d, j, end, "past"), end, " = ");
    j = group(digits, d, j, end, &b->ntok, &b->ntok_len);
    j = group(digits, d, LIT(d, j, end, ", truncated = "), end, &b->trunc, &b->trunc_len);
    if (j < 0)
        return -1;
    while (j < end && d[j] != '|' && d[j] != '\n')
        j++;
    return (j < end && d[j] == '\n') ? j + 1 : -1;
}

/* blocks.SELECT_HEAD.fullmatch(data, start, at) names ``slot``:
   (?![ \t]*(?:prompt eval time|eval time|total time|graphs reused|draft acceptance))
   [^|\n]*id +(\d+) \| task -?\d+ \| * */
int bs_selection_names_slot(bytes_t d, Py_ssize_t start, Py_ssize_t at, const block_t *b)
{
    Py_ssize_t i = start;
    while (i < at && (d[i] == ' ' || d[i] == '\t'))
        i++;
    if (LIT(d, i, at, "prompt eval time") >= 0 || LIT(d, i, at, "eval time") >= 0 ||
        LIT(d, i, at, "total time") >= 0 || LIT(d, i, at, "graphs reused") >= 0 ||
        LIT(d, i, at, "draft acceptance") >= 0)
        return 0;
    block_t head;
    memset(&head, 0, sizeof(head));
    Py_ssize_t j = slot_head(d, start, at, &head);
    if (j < 0 || find_byte(d, start, head.head, '\n') >= 0)
        return 0;
    j = LIT(d, j, at, " task ");
    if (j >= 0 && j < at && d[j] == '-')
        j++;
    j = LIT(d, digits(d, j, at), at, " |");
    if (j < 0 || spaces(d, j, at) != at)
        return 0;
    /* same slot number: compare values, not texts ("id 07" names slot 7) */
    Py_ssize_t a = head.slot, a_end = head.slot + head.slot_len, c = b->slot, c_end = b->slot + b->slot_len;
    while (a < a_end - 1 && d[a] == '0')
        a++;
    while (c < c_end - 1 && d[c] == '0')
        c++;
    return a_end - a == c_end - c && memcmp(d + a, d + c, (size_t)(a_end - a)) == 0;
}

/* blocks.QUIET.fullmatch(data, i, end): every "| task T |" opens a _HARMLESS line; other pipes are free */
int bs_quiet(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    while ((i = find_byte(d, i, end, '|')) >= 0) {
        Py_ssize_t j = task_pipe(d, i, end);
        if (j < 0) {
            i++;
            continue;
        }
        i = harmless(d, spaces(d, j, end), end);
        if (i < 0)
            return 0;
    }
    return 1;
}

int bs_small_int(bytes_t d, Py_ssize_t at, Py_ssize_t len, long long *out)
{
    long long v = 0;
    if (len <= 0 || len > MAX_DIGITS)
        return 0;
    for (Py_ssize_t i = 0; i < len; i++)
        v = v * 10 + (d[at + i] - '0');
    *out = v;
    return 1;
}
