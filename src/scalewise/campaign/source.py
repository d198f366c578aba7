"""Read a YAML file into plain Python data while remembering where every key is.

PyYAML's normal loaders throw away positions, so a validation error could only
say *what* is wrong, not *where*.  Here the file is composed into nodes first
and converted by hand: every mapping key and sequence item gets its 1-based
line number, keyed by its path (``("axes", "ranks", 1)``).  Duplicate keys,
which PyYAML silently accepts (the last one wins), are an error.

A study file is input like any other: before anything is built from it, the
event stream (which PyYAML produces without recursion) is scanned for nesting
deeper than :data:`MAX_DEPTH` and more than :data:`MAX_ALIASES` aliases, and
the conversion stops after :data:`MAX_NODES` values, so a small file cannot
expand into gigabytes ("billion laughs") or overflow the stack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scalewise.errors import ScalewiseError

Path_ = tuple[str | int, ...]

MAX_BYTES = 1024 * 1024   # a study file is a page or two; 1 MiB is far beyond any real one
MAX_DEPTH = 32            # mappings and lists inside each other
MAX_ALIASES = 100         # *name references
MAX_NODES = 100_000       # values after aliases are expanded


class StudyError(ScalewiseError):
    """A study file that cannot be used; the message is ``file:line: key: reason``."""


def dotted(path: Path_) -> str:
    """``("axes", "ranks", 1)`` -> ``axes.ranks[1]``; the form errors print."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


@dataclass
class Source:
    """Parsed YAML plus the line of every path in it."""

    filename: str
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int:
        """Line of ``path``, or of its nearest ancestor that has one (1 at worst)."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)

    def error(self, path: Path_, reason: str) -> StudyError:
        """The one-line error for ``path``: ``study.yaml:12: axes.ranks: reason``."""
        return StudyError(f"{self.filename}:{self.line_of(path)}: {dotted(path)}: {reason}")


def load_source(path: str | Path) -> Source:
    """Parse ``path``; YAML syntax errors become a :class:`StudyError` with a line."""
    path = Path(path)
    name = path.name
    try:
        if path.stat().st_size > MAX_BYTES:
            raise StudyError(f"{name}:1: (file): {path.stat().st_size:,} bytes is too large for a study file "
                             f"(at most {MAX_BYTES:,})")
        text = path.read_text()
    except OSError as exc:
        raise StudyError(f"{path}: cannot read study file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise StudyError(f"{name}:1: (file): not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_source(text, name)


def parse_source(text: str, filename: str) -> Source:
    """Parse YAML ``text``; ``filename`` is only used in messages."""
    try:
        _check_shape(text, filename)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise StudyError(f"{filename}:{line}: (syntax): invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise StudyError(f"{filename}:1: (syntax): invalid YAML: {exc}") from None
    src = Source(filename, None)
    if node is None:
        src.data = None
        return src
    src.lines[()] = node.start_mark.line + 1
    src.data = _convert(node, (), src, yaml.SafeLoader(""), [MAX_NODES])
    return src


def _check_shape(text: str, filename: str) -> None:
    """Refuse deep nesting and many aliases from the event stream, before any node tree exists."""
    depth = aliases = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise StudyError(f"{filename}:{event.start_mark.line + 1}: (syntax): nested deeper than "
                                 f"{MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise StudyError(f"{filename}:{event.start_mark.line + 1}: (syntax): more than {MAX_ALIASES} "
                                 "YAML aliases (*name)")


def _convert(node: yaml.Node, path: Path_, src: Source, loader: yaml.SafeLoader, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise StudyError(f"{src.filename}:{node.start_mark.line + 1}: {dotted(path)}: the file expands to more "
                         f"than {MAX_NODES:,} values (YAML aliases inside aliases?)")
    if node.tag not in _PLAIN_TAGS:
        raise StudyError(f"{src.filename}:{node.start_mark.line + 1}: {dotted(path)}: unsupported YAML tag {node.tag}")
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _convert(key_node, path, src, loader, budget)
            if not isinstance(key, (str, int, float, bool)):
                raise src.error(path, "mapping keys must be plain scalars")
            key = str(key)
            child = path + (key,)
            if key in out:
                raise StudyError(f"{src.filename}:{key_node.start_mark.line + 1}: {dotted(child)}: duplicate key")
            src.lines[child] = key_node.start_mark.line + 1
            out[key] = _convert(value_node, child, src, loader, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            child = path + (index,)
            src.lines[child] = item.start_mark.line + 1
            items.append(_convert(item, child, src, loader, budget))
        return items
    value = loader.construct_object(node, deep=True)
    if isinstance(value, str) and "\0" in value:
        raise StudyError(f"{src.filename}:{node.start_mark.line + 1}: {dotted(path)}: NUL characters are not allowed")
    return value


_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")}
