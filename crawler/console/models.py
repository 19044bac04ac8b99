"""Request bodies and response shapes of the console's REST API (pydantic v2; they also make
the OpenAPI document). Bodies forbid unknown fields so a typo is a 422, not silently ignored."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_SETS = 200
MAX_SET_CHARS = 4000
MAX_SEEDS_CHARS = 1_000_000
MAX_REGEX_CHARS = 4000


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LaunchBody(Body):
    """Overrides for launching (or validating) a job's order, as ``crawler run --set``."""

    sets: list[str] = Field(
        default_factory=list,
        max_length=MAX_SETS,
        description="dotted KEY=VALUE overrides, e.g. toe_threads=5",
        examples=[["toe_threads=5", "frontier.politeness.min_delay_ms=0"]],
    )


class SeedsBody(Body):
    """Seeds to add to a running crawl, in seed-list syntax (one per line, ``+``/``-``
    directives allowed), as for a ``*.seeds`` file of the action directory."""

    seeds: str = Field(min_length=1, max_length=MAX_SEEDS_CHARS, examples=["http://example.com/"])


class BlockBody(Body):
    """An operator block rule: a Python regular expression searched anywhere in each URI."""

    regex: str = Field(min_length=1, max_length=MAX_REGEX_CHARS, examples=[r"\.pdf$"])


class SheetsBody(Body):
    """Sheets to add or replace (by name) and names of sheets to remove (docs/order.md,
    "Sheets")."""

    sheets: list[dict[str, Any]] = Field(
        default_factory=list,
        examples=[
            [
                {
                    "name": "slow",
                    "hosts": ["example.org"],
                    "settings": {"frontier.politeness.min_delay_ms": 10000},
                }
            ]
        ],
    )
    remove: list[str] = Field(default_factory=list, description="names of sheets to drop")


class ErrorResponse(BaseModel):
    """Every error: the HTTP status, a message for people, and details where there are some
    (order issues by YAML path, invalid fields)."""

    status: int
    message: str
    issues: list[dict[str, Any]] | None = None


class Issue(BaseModel):
    """One problem of an order: where (YAML path), what, the bad value and a hint."""

    path: str
    message: str
    value: str | None = None
    hint: str | None = None
    text: str


class ValidationResult(BaseModel):
    valid: bool
    issues: list[Issue]
    warnings: list[str]


class RunSummary(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    job: str
    name: str
    state: str


class LaunchResult(BaseModel):
    run: RunSummary
    pid: int
    warnings: list[str]


class ActionResult(BaseModel):
    """A steering request: the action file dropped, whether the crawl has taken it in yet,
    and its state as last seen."""

    action: str
    taken: bool
    state: str | None
    message: str


class LogTail(BaseModel):
    name: str
    lines: list[str]
    end: int = Field(description="pass as `after` to get only the lines appended since")
    size: int
    truncated: bool


class FileInfo(BaseModel):
    name: str
    size: int
    mtime_s: float


class ReportText(BaseModel):
    name: str
    text: str
    mtime_s: float
