"""The KV Switch gateway: one long-running local endpoint that clients stay pointed at.

It forwards each request to the backend of the profile that is active for that client (or pinned by
URL), byte for byte where the protocols match and through a prefix-keeping bridge where they do not,
records usage per request, and fails over to a profile's fallbacks before any byte reached the client.
The recorder (``kvswitch record``) is a mode of it. It knows ``servers`` and ``core``, never the UI or
the CLI.
"""
