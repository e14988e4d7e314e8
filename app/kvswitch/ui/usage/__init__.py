"""The gateway's usage and status as the window shows them."""
