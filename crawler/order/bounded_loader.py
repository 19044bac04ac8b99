"""BoundedLoader: YAML's safe loader with a cap on what aliases expand to.

An alias (``*name``) stands for the node its anchor (``&name``) marks, so nested aliases make a
"billion laughs": a 500-byte document standing for a tree of billions of nodes. PyYAML builds it
cheaply (shared objects), but whatever walks the result afterwards — validating an order,
merging ``extends:``, writing it out — walks every expanded node and never ends. Before
anything is constructed, :class:`BoundedLoader` counts the nodes aliases add to the document
once expanded (visiting each distinct node once, so counting costs no more than the document)
and refuses more than :data:`MAX_ALIAS_NODES` of them, or an alias that contains itself, with
:class:`YamlTooLargeError` (a ``yaml.YAMLError``: callers that report YAML errors report it), as
it does a document nested too deeply to parse. Ordinary anchors, aliases and ``<<:`` merge
keys stay allowed.

Every YAML the crawler reads from users (orders, ``--set`` values, sheets and ``*.sheets``
action files, a run's ``order.effective.yaml``) goes through :func:`load_yaml`. Thread-safe:
a loader serves one document.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from crawler.crawler_error import CrawlerError

MAX_ALIAS_NODES: Final = 100_000
"""Nodes aliases may add to a document once expanded (beyond the nodes written in it)."""


class YamlTooLargeError(CrawlerError, yaml.YAMLError):
    """The document's aliases expand by more than :data:`MAX_ALIAS_NODES` nodes or into
    themselves, or its collections nest deeper than the parser can follow."""


def alias_nodes(root: yaml.Node) -> int:
    """How many nodes aliases add to ``root`` once expanded (its expanded size less the nodes
    written); raises :class:`YamlTooLargeError` for a node that contains itself."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    # Iterative post-order walk, each distinct node once: a deeply nested document must not
    # exhaust the Python stack, and a bomb costs no more than its text.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            open_nodes.discard(key)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise YamlTooLargeError("an alias refers to a node that contains it (recursive)")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)] - len(sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing a document whose aliases expand too far (see the module)."""

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None and alias_nodes(node) > MAX_ALIAS_NODES:
            raise YamlTooLargeError(
                f"aliases expand to more than {MAX_ALIAS_NODES} extra nodes (an alias bomb?); "
                "write the values out or use fewer nested aliases"
            )
        return node

    def get_single_data(self) -> Any:
        try:
            return super().get_single_data()
        except RecursionError:
            raise YamlTooLargeError("collections nested too deeply to read") from None


def load_yaml(text: str) -> Any:
    """``text`` as plain data, like ``yaml.safe_load``; raises ``yaml.YAMLError`` (a
    :class:`YamlTooLargeError` for an alias bomb)."""
    return yaml.load(text, Loader=BoundedLoader)
