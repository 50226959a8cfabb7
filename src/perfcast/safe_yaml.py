"""YAML input read the way perfcast trusts it: safe tags only, no duplicate keys, bounded size and depth.

Device files, application files and profiles come from users and from other
machines. PyYAML's safe loader already refuses Python tags and does not
expand aliases into copies, but on its own it lets the last of two equal keys
win silently, recurses without a bound on deeply nested input, turns
``2026-13-45`` into a traceback instead of a field error, and reads files of
any size. This loader closes those four gaps; every problem is a
``YamlInputError`` that names the source and, where known, the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from perfcast.errors import InputError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NODES", "MAX_PROFILE_BYTES", "YamlInputError", "load_model_file", "load_yaml_file",
           "load_yaml_text"]

MAX_FILE_BYTES = 4 * 2**20  # the largest device file in the catalog is ~10 kB
# A profile holds a kernel's metrics per launch group: a program's thousand groups (Rodinia nw's 1,023) take
# megabytes. Its reader allows as much as a campaign archive's member may hold; the depth and node limits stay.
MAX_PROFILE_BYTES = 64 * 2**20
MAX_DEPTH = 64  # nesting; a device file is 5 levels deep
MAX_NODES = 1_000_000  # values with every alias expanded; a device file has a few hundred


class YamlInputError(InputError):
    """YAML that perfcast will not read: unreadable, not UTF-8, too large or deep, duplicate keys, bad syntax."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and keeps timestamps as strings (pydantic validates them)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark
                ) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {seen[key]})", key_node.start_mark
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


# Dates and times stay text: '2026-13-45' then becomes a field error naming the field, not a traceback.
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _depth(node: yaml.Node, source: str) -> None:
    """Raise YamlInputError when `node` nests deeper than MAX_DEPTH or expands past MAX_NODES (no recursion).

    Aliases make the node graph a DAG that readers walk as a tree: nine levels of nine references each are
    387 million nodes in 500 bytes. Each node is visited once, its depth and expanded size taken from its
    children's.
    """
    depth: dict[int, int] = {}
    size: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, children_done = stack.pop()
        key = id(current)
        if key in size:
            continue
        if not children_done:
            if key in entered:  # reached again below itself: `&a [*a]`
                mark = current.start_mark
                raise YamlInputError(f"{source}: line {mark.line + 1}: an alias that refers to itself")
            entered.add(key)
        children = ([child for pair in current.value for child in pair] if isinstance(current, yaml.MappingNode)
                    else list(current.value) if isinstance(current, yaml.SequenceNode) else [])
        if not children_done:
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in size)
            if len(stack) > MAX_NODES:
                raise YamlInputError(f"{source}: more than {MAX_NODES:,} values")
            continue
        depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
        size[key] = 1 + sum(size[id(child)] for child in children)
        if depth[key] > MAX_DEPTH:
            mark = current.start_mark
            raise YamlInputError(f"{source}: line {mark.line + 1}: nested deeper than {MAX_DEPTH} levels")
        if size[key] > MAX_NODES:
            mark = current.start_mark
            raise YamlInputError(f"{source}: line {mark.line + 1}: more than {MAX_NODES:,} values once its "
                                 "aliases are expanded")


def load_yaml_text(text: str, source: str = "<string>", max_bytes: int = MAX_FILE_BYTES) -> Any:
    """Return the data of YAML `text` of at most `max_bytes` characters; a problem is a YamlInputError naming `source`."""
    if len(text) > max_bytes:
        raise YamlInputError(f"{source}: {len(text):,} characters, more than the {max_bytes:,} perfcast reads")
    try:
        loader = _StrictLoader(text)  # it checks the characters here: a control character is a ReaderError
    except yaml.YAMLError as error:
        raise YamlInputError(f"{source}: not valid YAML: {error}") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _depth(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise YamlInputError(f"{source}: not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise YamlInputError(f"{source}: nested too deeply to read") from None
    except YamlInputError:
        raise  # already names the source (an InputError is a ValueError too)
    except ValueError as error:  # an integer of thousands of digits: Python refuses to convert it
        raise YamlInputError(f"{source}: a value perfcast cannot read: {error}") from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """Return the data of the YAML file at `path`: UTF-8, at most `max_bytes` B, strict as load_yaml_text."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise YamlInputError(f"{path}: is a folder, not a YAML file")
        if size > max_bytes:
            raise YamlInputError(f"{path}: {size:,} bytes, more than the {max_bytes:,} perfcast reads")
        raw = path.read_bytes()
    except OSError as error:
        raise YamlInputError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise YamlInputError(f"{path}: line {line}: not UTF-8 text (byte {raw[error.start]:#04x})") from None
    return load_yaml_text(text, str(path), max_bytes)


M = TypeVar("M", bound="BaseModel")


def load_model_file(path: str | Path, model: type[M], version: int, what: str, error: type[InputError]) -> M:
    """Return the YAML file at `path` as `model`: a `version` newer than this perfcast's refused, fields named.

    Every problem is an `error` (the caller's InputError) naming the file: unreadable YAML, a version field
    above `version`, and each field pydantic refuses, by its place in the file.
    """
    from pydantic import ValidationError

    try:
        data = load_yaml_file(path)
    except YamlInputError as problem:
        raise error(str(problem)) from None
    found = data.get("version", version) if isinstance(data, dict) else version
    if isinstance(found, int) and not isinstance(found, bool) and found > version:
        raise error(f"{path}: {what} version {found}; this perfcast reads version {version} (update perfcast)")
    try:
        return model.model_validate(data)
    except ValidationError as problem:
        lines = [f"  {'.'.join(str(p) for p in item['loc']) or '(top level)'}: "
                 f"{item['msg'].removeprefix('Value error, ')}" for item in problem.errors(include_url=False)]
        raise error(f"{path}: invalid {what}\n" + "\n".join(lines)) from None
