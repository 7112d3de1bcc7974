"""The optional parts of ``euchre-referee`` (its pip extras), and the one line
a command says when it needs one that is not installed, instead of a
``ModuleNotFoundError`` traceback."""

from __future__ import annotations

from typing import Final

EXTRA_OF_MODULE: Final = {
    "networkx": "club",
    "starlette": "club",
    "sse_starlette": "club",
    "uvicorn": "club",
    "confusable_homoglyphs": "club",
    "segno": "club",
}
"""The top-level module each optional dependency installs -> its extra
(``pyproject.toml``'s ``[project.optional-dependencies]``; a test holds them
equal)."""


def missing_part(error: ModuleNotFoundError, command: str) -> str | None:
    """What to say when ``command`` stopped on ``error``: the extra that has
    the module and the command that installs it; None for a module that is
    no optional part (a bug or a broken install: its traceback stands)."""
    module = (error.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    if extra is None:
        return None
    return (f"{command} needs the optional part '{extra}' ({module} is not installed): "
            f"pip install 'euchre-referee[{extra}]'")
