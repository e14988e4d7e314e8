"""The Sessions tab: every past conversation of every client, read from the client's own files."""
