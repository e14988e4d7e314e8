"""The per-request truth: which client and session sent a request, the digests of its prompt, the verdict
and reason of a miss, session-affine slots, what the server said in its log, the counts an answer did
not carry, and the alerts on the rows.

It reads what the relay did (an ``Attempt``) and writes usage rows; the relay never imports it.
"""
