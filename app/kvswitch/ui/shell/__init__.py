"""The window's frame, tabs, tray, dialogs and the first-run assistant: what holds the views together."""
