"""Secret references in an order's data, resolved before validation, and where secrets were.

In any string of an order (also ``--set`` values and sheets):

- ``${ENV:NAME}`` is the environment variable ``NAME`` (an unset one is an order error naming the
  YAML path);
- ``${FILE:path}`` is the content of ``path`` (relative to the order's directory), without its
  trailing newline;
- ``${SECRET:key}`` is what a run stored in ``state/secrets.json`` (0600) for a secret its order
  held in clear; ``order.effective.yaml`` refers to it so that ``crawler resume`` works.

``password_env: NAME`` and ``password_file: PATH`` beside (instead of) a ``password`` are short
for ``password: ${ENV:NAME}`` / ``${FILE:PATH}``.

A value is a secret when it came from a reference, or when its key says it is one
(:data:`SECRET_KEY`: password, passwd, pwd, secret, token, api_key, ... - a form login's
``fields`` included). :class:`SecretBook` records each secret's YAML path: with the reference
written (kept as written in ``order.effective.yaml``) or the value in clear (written there as
``${SECRET:<path>}`` and kept in ``state/secrets.json``). Pure functions: thread-safe.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REF = re.compile(r"\$\{(ENV|FILE|SECRET):([^}]*)\}")
SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)?|pwd|pin|secret|[\w.-]*_secret|token|[\w.-]*_token"
    r"|api_?key|private_key)"
)
"""A field or key name that holds a secret (a regular expression, unanchored)."""
SECRET_KEY = re.compile(rf"^{SECRET_NAME}$", re.IGNORECASE)
SECRETS_FILE = "secrets.json"
"""In a run's ``state/``: secrets its order held in clear, for ``crawler resume``."""

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class SecretProblem:
    """A reference that cannot be resolved: its YAML ``path``, what is wrong, the reference as
    written and how to fix it (the loader turns it into an order issue)."""

    path: str
    message: str
    written: str
    hint: str | None = None


@dataclass
class SecretBook:
    """Where an order's secrets are: ``written`` maps a path to the reference as written;
    ``clear`` maps a path to a value written in clear; ``values`` is every secret value."""

    written: dict[Path_, str] = field(default_factory=dict)
    clear: dict[Path_, str] = field(default_factory=dict)
    values: set[str] = field(default_factory=set)

    def effective(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` (an order dumped as plain data) with every secret replaced by its reference:
        as written, or ``${SECRET:<path>}`` for one written in clear."""
        for where, ref in self.written.items():
            _put(data, where, ref)
        for where in self.clear:
            _put(data, where, f"${{SECRET:{dotted(where)}}}")
        return data

    def stored(self) -> dict[str, str]:
        """What ``state/secrets.json`` keeps: the clear secrets by dotted path."""
        return {dotted(where): value for where, value in self.clear.items()}


def dotted(where: Path_) -> str:
    """``('chains', 'fetch', 1, 'params')`` as ``chains.fetch[1].params``."""
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def resolve_secrets(
    data: dict[str, Any], base_dir: Path, secrets_file: Path | None
) -> tuple[SecretBook, list[SecretProblem]]:
    """Replace every reference in ``data`` (in place) by its value; returns the book of
    secrets and the problems (an unset variable, an unreadable file) by YAML path."""
    book = SecretBook()
    issues: list[SecretProblem] = []
    stored: dict[str, str] | None = None

    def stored_secrets() -> dict[str, str]:
        nonlocal stored
        if stored is None:
            stored = _read_stored(secrets_file)
        return stored

    def value_of(kind: str, name: str, where: Path_) -> str | None:
        if kind == "ENV":
            got = os.environ.get(name)
            if got is None:
                issues.append(
                    SecretProblem(
                        dotted(where),
                        f"environment variable {name} is not set",
                        f"${{ENV:{name}}}",
                        hint=f"export {name}=... before the crawl starts (and resumes)",
                    )
                )
            return got
        if kind == "FILE":
            path = Path(name).expanduser()
            path = path if path.is_absolute() else base_dir / path
            try:
                return path.read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                issues.append(
                    SecretProblem(
                        dotted(where),
                        f"cannot read the secret file {path} ({exc.strerror or exc})",
                        f"${{FILE:{name}}}",
                    )
                )
                return None
        got = stored_secrets().get(name)
        if got is None:
            issues.append(
                SecretProblem(
                    dotted(where),
                    f"no secret {name!r} in {secrets_file} (the run's state/ is incomplete)",
                    f"${{SECRET:{name}}}",
                )
            )
        return got

    def walk(node: Any, where: Path_) -> Any:
        if isinstance(node, dict):
            for short, kind in (("password_env", "ENV"), ("password_file", "FILE")):
                if short in node and "password" not in node:
                    node["password"] = f"${{{kind}:{node.pop(short)}}}"
            for key in list(node):
                node[key] = walk(node[key], (*where, key))
            return node
        if isinstance(node, list):
            return [walk(item, (*where, i)) for i, item in enumerate(node)]
        if not isinstance(node, str):
            return node
        if REF.search(node) is None:
            key = where[-1] if where else ""
            if isinstance(key, str) and SECRET_KEY.match(key) and node:
                book.clear[where] = node
                book.values.add(node)
            return node

        def substitute(match: re.Match[str]) -> str:
            got = value_of(match.group(1), match.group(2), where)
            if got:
                book.values.add(got)
            return got or ""

        book.written[where] = node
        return REF.sub(substitute, node)

    walk(data, ())
    return book, issues


def write_stored(state_dir: Path, book: SecretBook) -> Path | None:
    """Keep ``book``'s clear secrets in ``state_dir/secrets.json``, readable by the owner only;
    None (and no file) when there are none."""
    stored = book.stored()
    if not stored:
        return None
    path = state_dir / SECRETS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(stored, fh)
    os.chmod(path, 0o600)
    return path


def _read_stored(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, Mapping) else {}


def _put(data: Any, where: Path_, value: str) -> None:
    node = data
    for part in where[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    try:
        if isinstance(node, dict) or (isinstance(node, list) and isinstance(where[-1], int)):
            node[where[-1]] = value  # type: ignore[index]
    except (IndexError, TypeError):
        return


def clear_secret_values(data: Any) -> set[str]:
    """The values of ``data`` (an order's YAML, unresolved) written in clear under a secret
    key (:data:`SECRET_KEY`); references are not secrets and are not returned."""
    found: set[str] = set()

    def walk(node: Any, key: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif (
            isinstance(node, str)
            and node
            and isinstance(key, str)
            and SECRET_KEY.match(key)
            and REF.search(node) is None
        ):
            found.add(node)

    walk(data, None)
    return found
