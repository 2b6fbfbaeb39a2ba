"""Form-encoded bracket parameters, as the provider's v1 API and its SDKs send them.

``line_items[0][price_data][currency]=usd`` becomes ``{"line_items": [{"price_data": {"currency":
"usd"}}]}``; ``expand[]=a`` and ``expand[0]=a`` both become ``{"expand": ["a"]}``
(docs/payments-notes.md §1). Each endpoint names the parameters it accepts (``Schema``); anything
else is refused as ``parameter_unknown``, so a misspelt parameter fails here as it does there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from payments_sandbox import errors

KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
Tree = dict[str, Any]
# A schema maps each accepted name to True (a scalar), another schema (an object), a one-element
# list holding the schema of its items, or "map" (free string keys, as metadata).
Schema = Mapping[str, Any]


def parse_pairs(pairs: Iterable[tuple[str, str]]) -> Tree:
    """Nest ``(key, value)`` pairs with bracket keys into dicts and lists.

    Raises ``PaymentsError`` (400) for a key that is not well formed.
    """
    root: Tree = {}
    for key, value in pairs:
        match = KEY.match(key)
        if match is None:
            raise errors.invalid_request(f"Invalid parameter name: {key}", param=key)
        parts = [match.group(1), *re.findall(r"\[([^\[\]]*)\]", match.group(2))]
        node: Any = root
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part == "":  # `name[]`: append
                slot = len(node)
                part = str(slot)
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise errors.invalid_request(f"Invalid parameter name: {key}", param=key)
    result = _listify(root)
    assert isinstance(result, dict)
    return result


def _listify(node: Any) -> Any:
    """Dicts whose keys are all integers become lists, in index order."""
    if not isinstance(node, dict):
        return node
    converted = {key: _listify(value) for key, value in node.items()}
    if converted and all(key.isdigit() for key in converted):
        return [converted[key] for key in sorted(converted, key=int)]
    return converted


def check_known(tree: Tree, schema: Schema, prefix: str = "") -> None:
    """Raise ``parameter_unknown`` for the first name in ``tree`` that ``schema`` does not accept."""
    for name, value in tree.items():
        path = f"{prefix}[{name}]" if prefix else name
        if name not in schema:
            raise errors.parameter_unknown(path)
        expected = schema[name]
        if expected == "map":
            if not isinstance(value, dict | str):
                raise errors.invalid_request(f"Invalid object: {path}", param=path)
            continue
        if isinstance(expected, list):
            if isinstance(value, str) and value == "":
                continue
            if not isinstance(value, list):
                raise errors.invalid_request(f"Invalid array: {path}", param=path)
            for index, item in enumerate(value):
                item_path = f"{path}[{index}]"
                if isinstance(expected[0], Mapping):
                    if not isinstance(item, dict):
                        raise errors.invalid_request(f"Invalid object: {item_path}", param=item_path)
                    check_known(item, expected[0], item_path)
                elif not isinstance(item, str):
                    raise errors.invalid_request(f"Invalid value: {item_path}", param=item_path)
            continue
        if isinstance(expected, Mapping):
            if not isinstance(value, dict):
                raise errors.invalid_request(f"Invalid object: {path}", param=path)
            check_known(value, expected, path)
        elif not isinstance(value, str):
            raise errors.invalid_request(f"Invalid value: {path}", param=path)


class Params:
    """Typed access to one request's nested parameters; every refusal is the provider's error."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree

    def get(self, *path: str | int) -> Any:
        node: Any = self.tree
        for part in path:
            if isinstance(part, int):
                if not isinstance(node, list) or part >= len(node):
                    return None
                node = node[part]
            else:
                if not isinstance(node, dict) or part not in node:
                    return None
                node = node[part]
        return node

    @staticmethod
    def name(*path: str | int) -> str:
        """``line_items[0][quantity]`` for ``("line_items", 0, "quantity")``."""
        head, *rest = path
        return str(head) + "".join(f"[{part}]" for part in rest)

    def text(self, *path: str | int) -> str | None:
        """The string at ``path``, or None when absent. An empty string is returned as it is."""
        value = self.get(*path)
        if value is None:
            return None
        if not isinstance(value, str):
            raise errors.invalid_request(f"Invalid string: {self.name(*path)}", param=self.name(*path))
        return value

    def required_text(self, *path: str | int) -> str:
        value = self.text(*path)
        if value is None:
            raise errors.parameter_missing(self.name(*path))
        if value == "":
            raise errors.parameter_invalid_empty(self.name(*path))
        return value

    def integer(self, *path: str | int) -> int | None:
        value = self.text(*path)
        if value is None:
            return None
        if not re.fullmatch(r"-?\d+", value):
            raise errors.parameter_invalid_integer(self.name(*path), value)
        return int(value)

    def boolean(self, *path: str | int) -> bool | None:
        value = self.text(*path)
        if value is None:
            return None
        if value not in ("true", "false"):
            raise errors.invalid_request(
                f"Invalid boolean: {value}", param=self.name(*path), code="parameter_invalid_boolean"
            )
        return value == "true"

    def choice(self, *path: str | int, choices: list[str], default: str | None = None) -> str | None:
        value = self.text(*path)
        if value is None:
            return default
        if value not in choices:
            raise errors.invalid_choice(self.name(*path), value, choices)
        return value

    def strings(self, *path: str | int) -> list[str]:
        """A list of strings (``expand[]``, ``enabled_events[]``); absent is empty."""
        value = self.get(*path)
        if value is None or value == "":
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise errors.invalid_request(f"Invalid array: {self.name(*path)}", param=self.name(*path))
        return list(value)

    def metadata(self, *path: str | int) -> dict[str, str]:
        """A metadata map: at most 50 keys of at most 40 characters, values of at most 500."""
        value = self.get(*path)
        if value is None or value == "":
            return {}
        if not isinstance(value, dict):
            raise errors.invalid_request(f"Invalid object: {self.name(*path)}", param=self.name(*path))
        if len(value) > 50:
            raise errors.invalid_request("Metadata can have at most 50 keys.", param=self.name(*path))
        for key, item in value.items():
            param = self.name(*path, key)
            if not isinstance(item, str):
                raise errors.invalid_request(f"Invalid string: {param}", param=param)
            if len(key) > 40:
                raise errors.invalid_request("Metadata keys can be at most 40 characters long.", param=param)
            if len(item) > 500:
                raise errors.invalid_request(
                    "Metadata values can be at most 500 characters long.", param=param
                )
        # An empty value unsets the key; on a create it is simply absent.
        return {key: item for key, item in value.items() if item != ""}
