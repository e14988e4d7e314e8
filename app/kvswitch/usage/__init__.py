"""Usage per request, from the answers' own numbers, in SQLite (stdlib ``sqlite3``, 0600).

The gateway writes it; the CLI, the window and the sessions reader read it. It sits below all of them
(above ``servers`` and ``core``) so that a reader never has to import the proxy to read what it wrote.

- ``answer``: token counts from an answer (validated once: ``sane_count``), prices and cost;
- ``schema``: the row, the tables, opening the file to write or read, setting a broken one aside;
- ``store``: the gateway's writer thread behind a bounded queue (the answer never waits on it);
- ``queries``: totals, requests, sessions and the hit-rate trend, aggregated in SQL, streamed;
- ``retention`` and ``rollup``: raw rows for a bounded time, then daily summaries.
"""
