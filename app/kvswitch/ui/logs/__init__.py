"""The live log panel: following a server's log, the request table, alerts."""
