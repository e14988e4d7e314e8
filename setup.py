"""Build hooks: copy ``resources/`` into the wheel as ``kvswitch/_resources``, and compile the native
log scanner (``kvswitch.logs._blockscan``) where a C compiler is available.

Everything else is declared in pyproject.toml. The scanner is optional: without a compiler the build
still succeeds and ``log scan`` uses its pure-Python path, which gives the same events, only slower.
The icons live at the top of the repository (shared by the wheel, the PyInstaller spec and the Linux
desktop files), so the wheel gets its own copy here and ``kvswitch.core.resources.resource_path`` finds
it next to the package.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithResources(build_py):
    def run(self) -> None:
        super().run()
        source = ROOT / "resources"
        if not source.is_dir():
            raise SystemExit("resources/ is missing from the source tree; cannot build a complete package")
        target = Path(self.build_lib) / "kvswitch" / "_resources"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target)


setup(
    cmdclass={"build_py": BuildPyWithResources},
    ext_modules=[
        Extension(
            "kvswitch.logs._blockscan",
            [f"app/kvswitch/logs/_native/{name}.c" for name in ("match", "walk", "rows", "module")],
            depends=["app/kvswitch/logs/_native/blockscan.h"],
            optional=True,
        ),
    ],
)
