"""The relay: serving the local endpoint, choosing the upstream (routing, model routes, failover),
forwarding the request and relaying the answer (its head, its headers, the end of a cut stream).

It knows the bridges below it and nothing of the per-request record above it: a bug in bookkeeping can
cost a row its numbers, never the client its answer.
"""
