"""The look shared by every view: the theme and its palettes, icons, charts, the message bar."""
