/* The event of a released request (``blocks.block_row`` in C) from the numbers the walk read, and its
 * ``log scan --jsonl`` line exactly as ``jsonl.format_records`` writes it (``json.dumps(event.to_json())``). */
#include "blockscan.h"

#include <stdint.h>
#include <string.h>

config_t bs_config;

/* float(text) for a short decimal: exact without a conversion routine when the digits fit a double
 * (fewer than 16 of them, at most 22 after the point: one correctly rounded division, as in strtod) */
int bs_parse_float(bytes_t d, Py_ssize_t at, Py_ssize_t len, double *out)
{
    static const double powers_of_ten[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    long long mantissa = 0;
    int count = 0, after_point = -1;
    for (Py_ssize_t i = 0; i < len; i++) {
        unsigned char c = d[at + i];
        if (c == '.' && after_point < 0) {
            after_point = 0;
            continue;
        }
        if (c < '0' || c > '9' || ++count > 15)
            goto slow;
        mantissa = mantissa * 10 + (c - '0');
        if (after_point >= 0)
            after_point++;
    }
    if (count == 0)
        return 0;
    *out = after_point > 0 ? (double)mantissa / powers_of_ten[after_point] : (double)mantissa;
    return 1;
slow: {
    char text[64];
    if (len <= 0 || len >= (Py_ssize_t)sizeof(text))
        return 0;
    memcpy(text, d + at, (size_t)len);
    text[len] = '\0';
    *out = PyOS_string_to_double(text, NULL, NULL);
    if (*out == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}
}

void bs_row_values(bytes_t d, const request_t *r, long long ntok, long long trunc, long long last, row_t *row)
{
    row->slot = r->slot;
    row->task = r->task;
    row->fresh = r->fresh;
    row->ms = r->ms;
    row->ms_text = d + r->ms_at;
    row->ms_len = r->ms_len;
    if (r->has_cached)
        row->cached = r->cached;
    else if (r->has_size)
        row->cached = r->size - r->fresh;
    else
        row->cached = ntok - r->fresh - (r->gen > 1 ? r->gen - 1 : 0);
    if (row->cached < 0)
        row->cached = 0;
    long long cached = row->cached, prompt = cached + row->fresh;
    double ratio = prompt > 0 ? (double)cached / (double)prompt : 0.0;
    row->ratio = ratio;
    row->verdict = ratio >= bs_config.hit_ratio                         ? V_HIT
                   : (cached <= 0 || ratio < bs_config.miss_ratio) ? V_MISS
                                                                        : V_PARTIAL;
    row->first = r->first_line;
    row->last = last;
    row->reason = R_NONE;
    if (trunc != 0) {
        row->reason = R_TRUNCATED;
    } else if (row->verdict == V_MISS) {
        if (r->how == HOW_LCP && r->has_sim && (double)r->sim >= bs_config.not_cached_min_sim) {
            row->reason = R_NOT_CACHED;
            row->similarity = (double)r->sim / 1000.0;
            row->similarity_x1000 = r->sim <= 1000 ? (int)r->sim : -1;
        }
        if (row->reason == R_NONE && cached > 0)
            row->reason = R_PREFIX;
    } else if (row->verdict == V_HIT) {
        if (r->how == HOW_LRU)
            row->reason = R_LRU_HIT;
        else if (r->full_hit)
            row->reason = R_FULL_HIT;
    } else {
        row->reason = R_PREFIX;
    }
}

/* the reason as a str (new reference) */
static PyObject *reason_text(const row_t *row)
{
    switch (row->reason) {
    case R_NOT_CACHED:
        return PyObject_CallMethod(bs_config.not_cached, "format", "d", row->similarity);
    case R_PREFIX:
        return PyUnicode_FromFormat("%U%lld%U", bs_config.prefix_head, row->cached, bs_config.prefix_tail);
    default:
        return Py_NewRef(bs_config.reasons[row->reason]);
    }
}

PyObject *bs_row_tuple(const row_t *row)
{
    PyObject *reason = reason_text(row);
    if (reason == NULL)
        return NULL;
    return Py_BuildValue("(LLLLdLLNO)", row->slot, row->task, row->cached, row->fresh, row->ms, row->first,
                         row->last, reason, bs_config.verdicts[row->verdict]);
}

/* ---- JSON lines --------------------------------------------------------------------------------- */

int bs_text_reserve(text_t *out, Py_ssize_t extra)
{
    if (out->len + extra <= out->cap)
        return 0;
    Py_ssize_t cap = out->cap ? out->cap : 1 << 20;
    while (cap < out->len + extra)
        cap *= 2;
    if (out->bytes == NULL)
        out->bytes = PyBytes_FromStringAndSize(NULL, cap);
    else if (_PyBytes_Resize(&out->bytes, cap) < 0)
        out->bytes = NULL; /* _PyBytes_Resize freed it */
    if (out->bytes == NULL) {
        out->data = NULL;
        out->len = out->cap = 0;
        return -1;
    }
    out->data = PyBytes_AS_STRING(out->bytes);
    out->cap = cap;
    return 0;
}

PyObject *bs_text_take(text_t *out)
{
    PyObject *taken = out->bytes;
    if (taken == NULL)
        return PyBytes_FromStringAndSize("", 0);
    if (_PyBytes_Resize(&taken, out->len) < 0)
        taken = NULL;
    out->bytes = NULL;
    out->data = NULL;
    out->len = out->cap = 0;
    return taken;
}

void bs_text_free(text_t *out)
{
    Py_CLEAR(out->bytes);
    out->data = NULL;
    out->len = out->cap = 0;
}

static int put(text_t *out, const char *s, Py_ssize_t n)
{
    if (bs_text_reserve(out, n) < 0)
        return -1;
    memcpy(out->data + out->len, s, (size_t)n);
    out->len += n;
    return 0;
}
#define PUT(out, s) put((out), (s), (Py_ssize_t)(sizeof(s) - 1))

static int put_int(text_t *out, long long v)
{
    char text[24];
    char *p = text + sizeof(text);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return put(out, p, (Py_ssize_t)(text + sizeof(text) - p));
}

/* repr(value), as json.dumps writes a float; ``digits`` >= 0: repr(round(value, digits)) */
static int put_float(text_t *out, double value, int digits)
{
    char *text;
    if (digits < 0) {
        text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    } else {
        /* the shortest repr of a number with at most ``digits`` decimals is those decimals without
           their trailing zeros (two such numbers are far further apart than two doubles near them) */
        text = PyOS_double_to_string(value, 'f', digits, 0, NULL);
        if (text != NULL && strchr(text, '.') != NULL) {
            size_t n = strlen(text);
            while (text[n - 1] == '0' && text[n - 2] != '.')
                text[--n] = '\0';
        }
    }
    if (text == NULL)
        return -1;
    int failed = put(out, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return failed;
}

/* repr(float(text)) for the decimal the log wrote, without a conversion: with fewer than 16 digits
 * the text is the shortest that reads back as that double, once its zeros are trimmed ("007.50" is
 * 7.5). Values below 1e-4 (written with an exponent) go through repr itself. */
static int put_decimal(text_t *out, const unsigned char *text, Py_ssize_t len, double value)
{
    Py_ssize_t point = len, digits = 0, i = 0;
    for (Py_ssize_t k = 0; k < len; k++) {
        if (text[k] == '.')
            point = k;
        else
            digits++;
    }
    if (digits > 15 || (value != 0.0 && value < 1e-4))
        return put_float(out, value, -1);
    while (i < point - 1 && text[i] == '0') /* leading zeros, keeping one before the point */
        i++;
    Py_ssize_t end = len;
    if (point < len) {
        while (end > point + 2 && text[end - 1] == '0') /* trailing zeros, keeping one after the point */
            end--;
        if (end == point + 1) /* "7." */
            return put_float(out, value, -1);
        return put(out, (const char *)text + i, end - i);
    }
    return put(out, (const char *)text + i, end - i) || PUT(out, ".0");
}

/* repr(round(ratio, 4)), remembered: few distinct ratios recur in a log, and dtoa is the slow part */
static int put_ratio(text_t *out, double ratio)
{
    enum { SLOTS = 4096 };
    static struct {
        double value;
        char text[16];
        int len;
    } memo[SLOTS];
    uint64_t bits;
    memcpy(&bits, &ratio, sizeof(bits));
    size_t at = (size_t)((bits * 0x9E3779B97F4A7C15ULL) >> 52);
    if (memo[at].len > 0 && memcmp(&memo[at].value, &ratio, sizeof(ratio)) == 0)
        return put(out, memo[at].text, memo[at].len);
    Py_ssize_t before = out->len;
    if (put_float(out, ratio, 4) < 0)
        return -1;
    Py_ssize_t n = out->len - before;
    if (n < (Py_ssize_t)sizeof(memo[at].text)) {
        memcpy(memo[at].text, out->data + before, (size_t)n);
        memo[at].len = (int)n;
        memo[at].value = ratio;
    }
    return 0;
}

static int put_str_json(text_t *out, PyObject *text)
{
    PyObject *dumped = PyObject_CallOneArg(bs_config.json_dumps, text);
    if (dumped == NULL)
        return -1;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(dumped, &n);
    int failed = utf8 == NULL ? -1 : put(out, utf8, n);
    Py_DECREF(dumped);
    return failed;
}

/* the not-cached reason's JSON, remembered per similarity (x1000): formatting it costs two calls into
 * Python, and a log has few distinct similarities */
static PyObject *not_cached_json[1001];

void bs_forget_reasons(void)
{
    for (int k = 0; k <= 1000; k++)
        Py_CLEAR(not_cached_json[k]);
}

static int put_not_cached(text_t *out, const row_t *row)
{
    int at = row->similarity_x1000 >= 0 && row->similarity_x1000 <= 1000 ? row->similarity_x1000 : -1;
    if (at >= 0 && not_cached_json[at] != NULL)
        return put(out, PyBytes_AS_STRING(not_cached_json[at]), PyBytes_GET_SIZE(not_cached_json[at]));
    Py_ssize_t before = out->len;
    PyObject *text = reason_text(row);
    int failed = text == NULL ? -1 : put_str_json(out, text);
    Py_XDECREF(text);
    if (!failed && at >= 0)
        not_cached_json[at] = PyBytes_FromStringAndSize(out->data + before, out->len - before);
    return failed;
}

int bs_row_json(text_t *out, const row_t *row, const char *server_json, Py_ssize_t server_len)
{
    static const char *verdicts[] = {"hit", "partial", "miss"};
    long long prompt = row->cached + row->fresh;
    if (PUT(out, "{\"line\": ") || put_int(out, row->last) || PUT(out, ", \"server\": ") ||
        put(out, server_json, server_len) || PUT(out, ", \"slot\": ") || put_int(out, row->slot) ||
        PUT(out, ", \"task\": ") || put_int(out, row->task) ||
        PUT(out, ", \"request_id\": null, \"prompt_tokens\": ") || put_int(out, prompt) ||
        PUT(out, ", \"cached_tokens\": ") || put_int(out, row->cached) || PUT(out, ", \"new_tokens\": ") ||
        put_int(out, row->fresh) || PUT(out, ", \"prompt_ms\": ") || put_decimal(out, row->ms_text, row->ms_len, row->ms) ||
        PUT(out, ", \"reuse_ratio\": ") || put_ratio(out, row->ratio) || PUT(out, ", \"verdict\": \"") ||
        put(out, verdicts[row->verdict], (Py_ssize_t)strlen(verdicts[row->verdict])) ||
        PUT(out, "\", \"first_line\": ") || put_int(out, row->first) || PUT(out, ", \"last_line\": ") ||
        put_int(out, row->last) || PUT(out, ", \"reason\": "))
        return -1;
    int failed;
    if (row->reason == R_NONE) {
        failed = PUT(out, "null");
    } else if (row->reason == R_PREFIX) {
        /* the fixed parts need no escaping (checked by ``configure``) */
        Py_ssize_t head_len, tail_len;
        const char *head = PyUnicode_AsUTF8AndSize(bs_config.prefix_head, &head_len);
        const char *tail = PyUnicode_AsUTF8AndSize(bs_config.prefix_tail, &tail_len);
        failed = head == NULL || tail == NULL || PUT(out, "\"") || put(out, head, head_len) ||
                 put_int(out, row->cached) || put(out, tail, tail_len) || PUT(out, "\"");
    } else if (row->reason != R_NOT_CACHED) {
        PyObject *json = bs_config.reasons_json[row->reason];
        failed = put(out, PyBytes_AS_STRING(json), PyBytes_GET_SIZE(json));
    } else {
        failed = put_not_cached(out, row);
    }
    return failed || PUT(out, ", \"timestamp\": null}\n") ? -1 : 0;
}
