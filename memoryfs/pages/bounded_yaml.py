"""YAML frontmatter loaded within a budget: no alias bomb, no size bomb.

YAML aliases (``*name``) let a few hundred bytes stand for billions of values
("billion laughs"): PyYAML builds them as shared objects, but whoever walks the
result (``str()`` of a list, a dump, a search index) expands every copy. So before a
single Python value is built, the document is composed into YAML's node graph (linear
in its size: an alias is a reference to the anchored node) and measured as if every
alias were expanded: the number of nodes, the characters of its scalars, the alias
uses. A frontmatter over ``YamlLimits`` (or whose aliases form a cycle) is refused with
a ``PageError`` naming the limit; only then is the graph turned into Python values.

The text's size is checked before it is parsed; libyaml refuses nesting deeper than
1,000 levels itself (the pure-Python loader, used without libyaml, runs out of
recursion, which callers report as unreadable YAML).

Boundary: text in, Python values out; the limits come from the caller (a store's
``memory.toml`` ``[limits]``, else ``YamlLimits()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from memoryfs.errors import PageError

__all__ = ["YamlLimits", "DEFAULT_YAML_LIMITS", "check_size", "limits_for_text", "load_yaml"]

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlLimits:
    """What one frontmatter may hold. The defaults are also the most a store may set
    (``memoryfs.store.config``): every reader without a store at hand uses them, so a
    file a store's gates let through is never refused by another reader."""

    max_bytes: int = 200_000  # the YAML text, UTF-8
    max_nodes: int = 100_000  # scalars, lists and mappings, every alias expanded
    max_aliases: int = 100  # uses of ``*name``


DEFAULT_YAML_LIMITS = YamlLimits()


def limits_for_text(raw: str) -> YamlLimits:
    """Limits that let ``raw`` be as large as it is (a reader that was handed the text
    already, such as Dream rewriting a hub page past the default size) but no larger
    once its aliases are expanded: without aliases a document has at most a node per
    character of its text."""
    return YamlLimits(
        max_bytes=max(4 * len(raw), DEFAULT_YAML_LIMITS.max_bytes),
        max_nodes=max(len(raw) + 1, DEFAULT_YAML_LIMITS.max_nodes),
        max_aliases=DEFAULT_YAML_LIMITS.max_aliases,
    )


def check_size(raw: str, limits: YamlLimits = DEFAULT_YAML_LIMITS, where: str = "") -> None:
    """``PageError`` when the YAML text ``raw`` is over ``limits.max_bytes`` (UTF-8)."""
    if len(raw) > limits.max_bytes or (
        len(raw) * 4 > limits.max_bytes
        and len(raw.encode("utf-8", "surrogatepass")) > limits.max_bytes
    ):
        label = f"{where}: " if where else ""
        raise PageError(
            f"{label}frontmatter is larger than {limits.max_bytes} bytes "
            "(limits.frontmatter_bytes in memory.toml)"
        )


def load_yaml(raw: str, limits: YamlLimits = DEFAULT_YAML_LIMITS, where: str = "") -> Any:
    """``raw`` loaded with YAML's safe loader (libyaml when present) once it is known to
    fit ``limits``; ``PageError`` ("``where``: ...") when it does not. ``yaml.YAMLError``
    for malformed YAML, as ``yaml.safe_load`` raises it."""
    check_size(raw, limits, where)
    label = f"{where}: " if where else ""
    loader = _LOADER(raw)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        # Without an alias (always written "*name") a document has at most two nodes per
        # character ("a:" is a mapping, a key and a null) and no more scalar text than it
        # has text: a small one needs no measuring (most pages).
        if "*" in raw or 2 * len(raw) + 1 > limits.max_nodes:
            _measure(node, limits, label)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _measure(root: yaml.Node, limits: YamlLimits, label: str) -> None:
    """Refuse ``root`` when, aliases expanded, it has more nodes than ``limits.max_nodes``
    or more scalar characters than twice ``limits.max_bytes`` (without aliases a
    document's scalars are never longer than its text), more alias uses than
    ``limits.max_aliases``, or an alias inside the node it names.

    One pass over the graph, linear in the text: each node's expanded size is computed
    once (post-order, iteratively: nesting may be a thousand levels deep) and reused at
    each alias."""
    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, scalar chars), expanded
    open_nodes: set[int] = set()  # started, not finished: the path from the root
    edges = 0  # parent -> child references; each beyond a node's first is an alias use
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            nodes, chars = 1, 0
            for child in _children(node):
                n, c = sizes[id(child)]
                nodes, chars = nodes + n, chars + c
            if nodes > limits.max_nodes:
                raise PageError(
                    f"{label}frontmatter YAML expands to more than {limits.max_nodes} values "
                    "(an alias bomb?; limits.yaml_nodes in memory.toml)"
                )
            if chars > 2 * limits.max_bytes:
                raise PageError(
                    f"{label}frontmatter YAML expands to more than {2 * limits.max_bytes} "
                    "characters through aliases (an alias bomb?)"
                )
            sizes[key] = (nodes, chars)
            continue
        if key in sizes:
            continue  # met before, through another path
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = (1, len(node.value))
            continue
        children = _children(node)
        edges += len(children)
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise PageError(f"{label}frontmatter YAML has an alias inside the node it names")
            stack.append((child, False))
    if edges - (len(sizes) - 1) > limits.max_aliases:
        raise PageError(
            f"{label}frontmatter YAML uses more than {limits.max_aliases} aliases "
            "(limits.yaml_aliases in memory.toml)"
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
