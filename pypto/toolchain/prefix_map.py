"""Source path prefix maps (like gcc's ``-ffile-prefix-map=OLD=NEW``) for paths written into artifacts.

``pypto compile --file-prefix-map OLD=NEW`` (setting ``file_prefix_map``, env
``PYPTO_FILE_PREFIX_MAP``) rewrites the source file paths the compiler records, e.g. in the ``.pto``
files' ``loc("...")`` attributes. The container launcher passes ``/src=<host dir>`` so a compile
inside the image writes the same bytes as the host compile of the same file. Several maps are
separated by ``;``; the longest matching OLD wins; OLD matches whole path components only.
"""

from __future__ import annotations

from collections.abc import Sequence

PrefixMap = tuple[tuple[str, str], ...]
SEPARATOR = ";"


def parse_prefix_map(text: str | Sequence[str] | None) -> PrefixMap:
    """``"OLD=NEW;OLD2=NEW2"`` (or a list of ``OLD=NEW``) -> ((OLD, NEW), ...); ValueError when malformed."""
    if not text:
        return ()
    items = text.split(SEPARATOR) if isinstance(text, str) else list(text)
    pairs = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        old, sep, new = item.partition("=")
        if not sep or not old:
            raise ValueError(f"'{item}' is not OLD=NEW (example: /src=/home/me/kernels)")
        pairs.append((old.rstrip("/") or "/", new.rstrip("/") if new != "/" else new))
    return tuple(pairs)


def format_prefix_map(pairs: PrefixMap) -> str:
    """The setting's text form of ``pairs``."""
    return SEPARATOR.join(f"{old}={new}" for old, new in pairs)


def apply_prefix_map(path: str, pairs: PrefixMap) -> str:
    """``path`` with its longest matching OLD prefix replaced by NEW (unchanged when none matches)."""
    best: tuple[str, str] | None = None
    for old, new in pairs:
        if (path == old or path.startswith(old if old.endswith("/") else old + "/")) and (
                best is None or len(old) > len(best[0])):
            best = (old, new)
    if best is None:
        return path
    old, new = best
    rest = path if old == "/" else path[len(old):]
    if not new:
        return rest.lstrip("/") or "."
    return new + rest if not (new.endswith("/") and rest.startswith("/")) else new + rest[1:]
