"""Entry point of the PyInstaller bundle: the same ``kvswitch`` command as the installed package."""

from kvswitch.cli import main

raise SystemExit(main())
