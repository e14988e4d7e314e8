/* Python entry points of kvswitch.logs._blockscan (see blockscan.h). */
#include "blockscan.h"

typedef struct {
    PyObject *rows; /* tuple mode: list of Row tuples */
    text_t text;    /* JSON mode: the lines */
    const char *server_json;
    Py_ssize_t server_len;
    long long counts[6]; /* JSON mode: hits, partial, misses, prompt, cached, new tokens */
} output_t;

static int emit(void *where, const row_t *row)
{
    output_t *out = where;
    if (out->rows != NULL) {
        PyObject *tuple = bs_row_tuple(row);
        if (tuple == NULL)
            return -1;
        int failed = PyList_Append(out->rows, tuple);
        Py_DECREF(tuple);
        return failed;
    }
    out->counts[row->verdict]++;
    out->counts[3] += row->cached + row->fresh;
    out->counts[4] += row->cached;
    out->counts[5] += row->fresh;
    return bs_row_json(&out->text, row, out->server_json, out->server_len);
}

PyDoc_STRVAR(scan_doc,
"scan(data, pos, end, line_no, pending, max_pending, server_json=None)\n"
"\n"
"The requests of ``data[pos:end]`` (``pos`` a line start, ``line_no`` its number) read in order for as\n"
"long as their facts follow the usual order; ``pending`` is the tracker's requests by slot (their lines\n"
"are left to the line path). Returns ``(rows, pos, line_no, until, opened, last_slot)``: the walk\n"
"stopped right before a fact at ``pos`` (line ``line_no``), the caller gives ``opened`` (the requests open\n"
"there) to ``RequestTracker.adopt``, feeds ``data[pos:until]`` to the line path and calls again from\n"
"``until`` (``pos == end``: nothing left). With ``server_json`` (the server name as JSON bytes) the rows\n"
"come as their ``log scan --jsonl`` lines instead, with their counts:\n"
"``(text, pos, line_no, until, opened, last_slot, (hits, partial, misses, prompt, cached, new))``.");

static PyObject *scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end, max_pending;
    long long line_no;
    PyObject *pending, *server_json = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnLO!n|O", &view, &pos, &end, &line_no, &PyDict_Type, &pending,
                          &max_pending, &server_json))
        return NULL;
    output_t out = {0};
    if (!bs_config.ready || !bs_fact_starts.ready) {
        PyErr_SetString(PyExc_RuntimeError, "_blockscan.configure() and set_fact_starts() were not called");
        goto fail;
    }
    if (pos < 0 || end > view.len || pos > end) {
        PyErr_SetString(PyExc_ValueError, "pos and end must satisfy 0 <= pos <= end <= len(data)");
        goto fail;
    }
    if (server_json == Py_None) {
        if ((out.rows = PyList_New(0)) == NULL)
            goto fail;
    } else if (PyBytes_Check(server_json)) {
        out.server_json = PyBytes_AS_STRING(server_json);
        out.server_len = PyBytes_GET_SIZE(server_json);
    } else {
        PyErr_SetString(PyExc_TypeError, "server_json must be bytes or None");
        goto fail;
    }
    /* room for the lines of the whole range at once (a JSON line per request is well under half of the
       request's log text), so the text is not grown and copied on the way */
    if (out.rows == NULL && bs_text_reserve(&out.text, (end - pos) / 2 + 4096) < 0)
        goto fail;
    walk_result_t walked = {0};
    if (bs_walk(view.buf, pos, end, line_no, pending, max_pending, emit, &out, &walked) < 0)
        goto fail;
    PyBuffer_Release(&view);
    if (out.rows != NULL)
        return Py_BuildValue("(NnLnNN)", out.rows, walked.pos, walked.line_no, walked.until, walked.opened,
                             walked.last_slot);
    PyObject *text = bs_text_take(&out.text);
    if (text == NULL) {
        Py_DECREF(walked.opened);
        Py_DECREF(walked.last_slot);
        return NULL;
    }
    return Py_BuildValue("(NnLnNN(LLLLLL))", text, walked.pos, walked.line_no, walked.until, walked.opened,
                         walked.last_slot, out.counts[0], out.counts[1], out.counts[2], out.counts[3],
                         out.counts[4], out.counts[5]);
fail:
    Py_XDECREF(out.rows);
    bs_text_free(&out.text);
    PyBuffer_Release(&view);
    return NULL;
}

static int set_text(PyObject **slot, PyObject *value)
{
    if (!PyUnicode_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "configure() takes str texts");
        return -1;
    }
    Py_XSETREF(*slot, Py_NewRef(value));
    return 0;
}

/* json_dumps(text) must be the text in quotes, unchanged: then the C side may write it as it is */
static int plain_json(PyObject *text)
{
    PyObject *dumped = PyObject_CallOneArg(bs_config.json_dumps, text);
    if (dumped == NULL)
        return -1;
    PyObject *quoted = PyUnicode_FromFormat("\"%U\"", text);
    int same = quoted == NULL ? -1 : PyUnicode_Compare(dumped, quoted) == 0;
    Py_DECREF(dumped);
    Py_XDECREF(quoted);
    if (same == 0)
        PyErr_SetString(PyExc_ValueError, "configure(): a reason text needs JSON escaping");
    return same == 1 ? 0 : -1;
}

PyDoc_STRVAR(configure_doc,
"configure(hit_ratio, miss_ratio, not_cached_min_sim, verdicts, reasons, not_cached, prefix_head, prefix_tail,\n"
"          json_dumps)\n"
"\n"
"The thresholds and texts of core.verdicts: not_cached_min_sim is similarity x1000; verdicts (hit, partial, miss), reasons (truncated,\n"
"LRU hit, full hit), the not-cached template, the two parts of the reused-prefix reason, json.dumps.");

static PyObject *configure(PyObject *self, PyObject *args)
{
    double hit, miss, min_sim;
    PyObject *verdicts, *reasons, *not_cached, *head, *tail, *dumps;
    (void)self;
    if (!PyArg_ParseTuple(args, "dddO!O!UUUO", &hit, &miss, &min_sim, &PyTuple_Type, &verdicts, &PyTuple_Type, &reasons,
                          &not_cached, &head, &tail, &dumps))
        return NULL;
    if (PyTuple_GET_SIZE(verdicts) != 3 || PyTuple_GET_SIZE(reasons) != 3 || !PyCallable_Check(dumps)) {
        PyErr_SetString(PyExc_ValueError, "configure(): 3 verdicts, 3 reasons and a callable json_dumps");
        return NULL;
    }
    bs_config.ready = 0;
    bs_forget_reasons();
    Py_XSETREF(bs_config.json_dumps, Py_NewRef(dumps));
    for (int i = 0; i < 3; i++)
        if (set_text(&bs_config.verdicts[i], PyTuple_GET_ITEM(verdicts, i)) < 0)
            return NULL;
    Py_XSETREF(bs_config.reasons[R_NONE], Py_NewRef(Py_None));
    for (int i = 0; i < 3; i++) {
        if (set_text(&bs_config.reasons[i + 1], PyTuple_GET_ITEM(reasons, i)) < 0)
            return NULL;
        PyObject *json = PyObject_CallOneArg(dumps, PyTuple_GET_ITEM(reasons, i));
        PyObject *bytes = json == NULL ? NULL : PyUnicode_AsUTF8String(json);
        Py_XDECREF(json);
        if (bytes == NULL)
            return NULL;
        Py_XSETREF(bs_config.reasons_json[i + 1], bytes);
    }
    if (set_text(&bs_config.not_cached, not_cached) < 0 || set_text(&bs_config.prefix_head, head) < 0 ||
        set_text(&bs_config.prefix_tail, tail) < 0 || plain_json(head) < 0 || plain_json(tail) < 0)
        return NULL;
    bs_config.hit_ratio = hit;
    bs_config.miss_ratio = miss;
    bs_config.not_cached_min_sim = min_sim;
    bs_config.ready = 1;
    Py_RETURN_NONE;
}

/* copy a tuple of bytes into ``texts``; lower-case it when ``fold`` */
static int copy_starts(PyObject *tuple, char texts[][64], Py_ssize_t *lens, int *count, int fold)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    if (n > MAX_FACT_STARTS) {
        PyErr_SetString(PyExc_ValueError, "set_fact_starts(): too many texts");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) < 1 || PyBytes_GET_SIZE(item) >= 64) {
            PyErr_SetString(PyExc_ValueError, "set_fact_starts(): texts are bytes of 1 to 63 bytes");
            return -1;
        }
        const char *text = PyBytes_AS_STRING(item);
        Py_ssize_t len = PyBytes_GET_SIZE(item);
        for (Py_ssize_t k = 0; k < len; k++)
            texts[i][k] = (char)(fold && text[k] >= 'A' && text[k] <= 'Z' ? text[k] + ('a' - 'A') : text[k]);
        lens[i] = len;
    }
    *count = (int)n;
    return 0;
}

PyDoc_STRVAR(set_fact_starts_doc,
"set_fact_starts(exact, any_case)\n"
"\n"
"The texts that may start a fact after ``| task T |`` (``blocks.FACT_STARTS``, derived from the line grammar):\n"
"a slot line starting with none of them (nor a line end) is harmless inside and between blocks.\n"
"``any_case`` ones are compared in any ASCII case (the reason starts).");

static PyObject *set_fact_starts(PyObject *self, PyObject *args)
{
    PyObject *exact, *folded;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &exact, &PyTuple_Type, &folded))
        return NULL;
    bs_fact_starts.ready = 0;
    if (copy_starts(exact, bs_fact_starts.exact, bs_fact_starts.exact_len, &bs_fact_starts.exact_n, 0) < 0 ||
        copy_starts(folded, bs_fact_starts.folded, bs_fact_starts.folded_len, &bs_fact_starts.folded_n, 1) < 0)
        return NULL;
    memset(bs_fact_starts.first_bytes, 0, sizeof(bs_fact_starts.first_bytes));
    memset(bs_fact_starts.exact_first, 0, sizeof(bs_fact_starts.exact_first));
    for (int k = 0; k < bs_fact_starts.exact_n; k++)
        bs_fact_starts.exact_first[(unsigned char)bs_fact_starts.exact[k][0]] = 1;
    memset(bs_fact_starts.bloom, 0, sizeof(bs_fact_starts.bloom));
    bs_fact_starts.pairs_n = 0;
    for (int k = 0; k < bs_fact_starts.folded_n; k++) {
        bs_fact_starts.first_bytes[(unsigned char)bs_fact_starts.folded[k][0]] = 1;
        if (bs_fact_starts.folded_len[k] < 4) {
            PyErr_SetString(PyExc_ValueError, "set_fact_starts(): any-case texts are at least 4 bytes");
            return NULL;
        }
        bs_reason_bloom_add(bs_fact_starts.folded[k], bs_fact_starts.folded_len[k]);
        unsigned char c0 = (unsigned char)(bs_fact_starts.folded[k][0] | 0x20);
        unsigned char c1 = (unsigned char)(bs_fact_starts.folded[k][1] | 0x20);
        int known = 0;
        for (int p = 0; p < bs_fact_starts.pairs_n; p++)
            known |= bs_fact_starts.pairs[p][0] == c0 && bs_fact_starts.pairs[p][1] == c1;
        if (!known) {
            bs_fact_starts.pairs[bs_fact_starts.pairs_n][0] = c0;
            bs_fact_starts.pairs[bs_fact_starts.pairs_n][1] = c1;
            bs_fact_starts.pairs_n++;
        }
    }
    bs_fact_starts.ready = 1;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(bare_reason_lines_doc,
"bare_reason_lines(data, start, end)\n"
"\n"
"``[(line_start, line_end), ...]`` of the lines of ``data[start:end]`` without ``| task `` that hold one of\n"
"the any-case fact starts (``set_fact_starts``): the candidates ``fastscan.bare_reasons`` gives to the\n"
"grammar, found in one pass instead of one search per reason.");

static PyObject *bare_reason_lines(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &end))
        return NULL;
    PyObject *found = NULL;
    if (!bs_fact_starts.ready) {
        PyErr_SetString(PyExc_RuntimeError, "_blockscan.set_fact_starts() was not called");
        goto done;
    }
    if (start < 0 || end > view.len || start > end) {
        PyErr_SetString(PyExc_ValueError, "start and end must satisfy 0 <= start <= end <= len(data)");
        goto done;
    }
    if ((found = PyList_New(0)) == NULL)
        goto done;
    bytes_t d = view.buf;
    Py_ssize_t line_start, line_end;
    for (Py_ssize_t i = start; (line_start = bs_bare_reason_line(d, i, end, &line_end)) >= 0; i = line_end) {
        PyObject *pair = Py_BuildValue("(nn)", line_start, line_end);
        if (pair == NULL || PyList_Append(found, pair) < 0) {
            Py_XDECREF(pair);
            Py_CLEAR(found);
            goto done;
        }
        Py_DECREF(pair);
    }
done:
    PyBuffer_Release(&view);
    return found;
}

static PyMethodDef methods[] = {
    {"bare_reason_lines", bare_reason_lines, METH_VARARGS, bare_reason_lines_doc},
    {"set_fact_starts", set_fact_starts, METH_VARARGS, set_fact_starts_doc},
    {"scan", scan, METH_VARARGS, scan_doc},
    {"configure", configure, METH_VARARGS, configure_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_blockscan",
    .m_doc = "Whole llama-server requests at native speed (see kvswitch.logs.blocks.BLOCK).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__blockscan(void)
{
    return PyModule_Create(&module);
}
