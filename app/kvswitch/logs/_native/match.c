/* The fact starts and the few text tests the walk (``walk.c``) shares with the module.
 *
 * ``bs_harmless`` is ``blocks._HARMLESS``: a slot line whose message starts with none of the texts the line
 * regex can read a fact from (``blocks.FACT_STARTS``, given by ``set_fact_starts``) carries no fact. */
#include "blockscan.h" /* Python.h first: it sets the feature macros memmem needs */

#include <stdint.h>
#include <string.h>

/* Numbers longer than this go to the Python path (exact in a double, no overflow anywhere). */
#define MAX_DIGITS 15

static inline Py_ssize_t find_byte(bytes_t d, Py_ssize_t i, Py_ssize_t end, unsigned char c)
{
    if (i < 0 || i >= end)
        return -1;
    const unsigned char *p = memchr(d + i, c, (size_t)(end - i));
    return p ? (Py_ssize_t)(p - d) : -1;
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

/* the texts that may start a fact after "| task T |" (blocks.FACT_STARTS, set by set_fact_starts()):
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

int bs_may_continue_timing(bytes_t d, Py_ssize_t at, Py_ssize_t end)
{
    while (at < end && (d[at] == ' ' || d[at] == '\t'))
        at++;
    return LIT(d, at, end, "prompt eval time") >= 0 || LIT(d, at, end, "eval time") >= 0 ||
           LIT(d, at, end, "total time") >= 0 || LIT(d, at, end, "graphs reused") >= 0 ||
           LIT(d, at, end, "draft acceptance") >= 0;
}

int bs_exact_start(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    if (i >= end || !bs_fact_starts.exact_first[d[i]])
        return 0;
    for (int k = 0; k < bs_fact_starts.exact_n; k++)
        if (lit(d, i, end, bs_fact_starts.exact[k], bs_fact_starts.exact_len[k]) >= 0)
            return 1;
    return 0;
}

int bs_reason_start(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    if (i >= end)
        return 0;
    unsigned char c = d[i];
    if (c >= 'A' && c <= 'Z')
        c = (unsigned char)(c + ('a' - 'A'));
    if (!bs_fact_starts.first_bytes[c])
        return 0;
    for (int k = 0; k < bs_fact_starts.folded_n; k++)
        if (bs_starts_folded(d, i, end, bs_fact_starts.folded[k], bs_fact_starts.folded_len[k]))
            return 1;
    return 0;
}

/* _HARMLESS: `` *+`` not followed by a fact start, an empty message that a timing block continues, a lone
   "\r" or the end; the position after the spaces */
Py_ssize_t bs_harmless(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    if (i < 0 || i >= end)
        return -1;
    Py_ssize_t nl = d[i] == '\r' ? i + 1 : i;
    if (nl < end && d[nl] == '\n') /* an empty message: harmless unless a timing continuation follows */
        return nl + 1 < end && !bs_may_continue_timing(d, nl + 1, end) ? i : -1;
    if (d[i] == '\r' || bs_exact_start(d, i, end) || bs_reason_start(d, i, end))
        return -1;
    return i;
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

/* the bloom filter's bit of four bytes, compared in any case: letters differ from their capitals only in
   0x20, so OR-ing it in is a superset test (tested on every spelling of every reason start) */
static inline unsigned quad_bit(bytes_t d, Py_ssize_t i)
{
    uint32_t x;
    memcpy(&x, d + i, 4);
    x |= 0x20202020u;
    return (unsigned)((x * 0x9E3779B1u) >> (32 - REASON_BLOOM_BITS_LOG2));
}

void bs_reason_bloom_add(const char *folded, Py_ssize_t len)
{
    unsigned char quad[4] = {' ', ' ', ' ', ' '};
    memcpy(quad, folded, (size_t)(len < 4 ? len : 4));
    unsigned bit = quad_bit(quad, 0);
    bs_fact_starts.bloom[bit >> 3] |= (unsigned char)(1u << (bit & 7));
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* the positions of d[i:i+16] whose two bytes, OR 0x20, are the first two of a reason start: a superset of
   where one may begin (a byte mask) */
static inline unsigned pair_mask(bytes_t d, Py_ssize_t i)
{
    const __m128i fold = _mm_set1_epi8(0x20);
    __m128i first = _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + i)), fold);
    __m128i second = _mm_or_si128(_mm_loadu_si128((const __m128i *)(d + i + 1)), fold);
    __m128i hits = _mm_setzero_si128();
    for (int k = 0; k < bs_fact_starts.pairs_n; k++)
        hits = _mm_or_si128(hits, _mm_and_si128(_mm_cmpeq_epi8(first, _mm_set1_epi8((char)bs_fact_starts.pairs[k][0])),
                                                _mm_cmpeq_epi8(second, _mm_set1_epi8((char)bs_fact_starts.pairs[k][1]))));
    return (unsigned)_mm_movemask_epi8(hits);
}
#endif

/* bs_reason_start behind the four-byte filter (i + 4 <= end) */
static inline int reason_starts_at(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
    unsigned bit = quad_bit(d, i);
    return (bs_fact_starts.bloom[bit >> 3] & (1u << (bit & 7))) && bs_reason_start(d, i, end);
}

Py_ssize_t bs_find_reason_start(bytes_t d, Py_ssize_t i, Py_ssize_t end)
{
#if defined(__SSE2__)
    /* sixteen positions at a time while their two bytes can be read (i + 17 <= end) */
    if (bs_fact_starts.pairs_n > 0)
        for (; i + 17 <= end; i += 16)
            for (unsigned mask = pair_mask(d, i); mask; mask &= mask - 1) {
                Py_ssize_t at = i + __builtin_ctz(mask);
                if (at + 4 <= end && reason_starts_at(d, at, end))
                    return at;
            }
#endif
    for (; i + 4 <= end; i++)
        if (reason_starts_at(d, i, end))
            return i;
    return -1;
}

Py_ssize_t bs_bare_reason_line(bytes_t d, Py_ssize_t from, Py_ssize_t to, Py_ssize_t *line_end)
{
    static const char task[] = "| task ";
    Py_ssize_t at;
    while ((at = bs_find_reason_start(d, from, to)) >= 0) {
        Py_ssize_t start = at;
        while (start > from && d[start - 1] != '\n')
            start--;
        const unsigned char *nl = memchr(d + at, '\n', (size_t)(to - at));
        *line_end = nl ? (Py_ssize_t)(nl - d) + 1 : to;
        if (memmem(d + start, (size_t)(*line_end - start), task, sizeof(task) - 1) == NULL)
            return start;
        from = *line_end;
    }
    return -1;
}
