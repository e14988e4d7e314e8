"""Allows ``python -m kvswitch``."""

from kvswitch.cli import main

raise SystemExit(main())
