"""The repository's scripts and benches loaded as modules, for the tests that
check what they make (generated files, pictures, figures)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(relative: str) -> ModuleType:
    """``relative`` (say ``"scripts/render_screens.py"``) loaded as the module
    named by its file's stem (and registered in ``sys.modules`` under it)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
