"""PywbCollection: a pywb working directory that serves one run's WARCs or one WACZ.

:func:`collection_from_run` brings the run's indexes up to date (:func:`index_run`), links every
index whose WARC exists into ``<work>/indexes/`` and writes ``<work>/config.yaml`` naming that
directory as the collection's index and the run's WARC directories as its archive paths. A
recrawl's revisit records refer to captures of the crawl its history was imported from
(``history.import_from``) or of the earlier runs it deduplicated against (``dedup.collections``
naming run directories), or to the job's earlier runs when the run kept the job's digest index
(``digest_index.job_index``): those runs' WARCs join the collection too, so revisits replay.
:func:`collection_from_wacz` copies the package's ``archive/*.warc*`` out of the ZIP into
``<work>/warcs/`` and indexes them there. Both raise :class:`NothingToReplayError` when there is no
WARC, and return what they found wrong (damaged WARCs, orphaned indexes) in ``problems``.
:func:`collection_from_job` serves every finished run of a job directory as one collection (each
crawl of a URI a capture in its calendar; a revisit resolves to the record it refers to, in
whichever run holds it); runs still running or that died are left out and named in ``problems``.
Plain file work, one caller at a time.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from crawler.archive.indexer import CdxjIndexer
from crawler.archive.job_runs import imported_crawl, job_runs, run_order
from crawler.archive.run_index import index_run
from crawler.archive.run_layout import INDEX_SUFFIX, is_warc, warc_dirs
from crawler.crawler_error import CrawlerError

_COLLECTION_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class NothingToReplayError(CrawlerError):
    """The run or package holds no WARC record to replay."""


@dataclass
class PywbCollection:
    """A ready pywb working directory: ``config.yaml`` and the collection's index."""

    work_dir: Path
    name: str
    records: int
    problems: list[str] = field(default_factory=list)

    @property
    def config(self) -> Path:
        """The pywb configuration file."""
        return self.work_dir / "config.yaml"


def collection_name(source: Path) -> str:
    """A pywb collection name for ``source`` (letters, digits, ``-``, ``_``)."""
    stem = source.name[: -len(".wacz")] if source.name.endswith(".wacz") else source.name
    return _COLLECTION_NAME.sub("-", stem).strip("-") or "crawl"


def earlier_runs(run_dir: Path) -> list[Path]:
    """The runs whose captures ``run_dir``'s revisits may refer to: the crawl its order
    imported its history from (:func:`~crawler.archive.job_runs.imported_crawl`), the run
    directories its ``dedup.collections`` name (``cdxj:``), the job's earlier runs if it kept the
    job's digest index, and theirs in turn."""
    found: list[Path] = []
    todo = [run_dir]
    while todo:
        current = todo.pop()
        order = run_order(current)
        if order is None:
            continue
        imported = imported_crawl(current)
        paths = [imported] if imported is not None else []
        dedup = order.get("dedup")
        collections = (dedup.get("collections") if isinstance(dedup, dict) else None) or []
        base = Path(str(order.get("base_dir") or "."))
        for source in (c.get("cdxj") for c in collections if isinstance(c, dict)):
            if source:
                paths.append(base / Path(str(source)).expanduser())
        paths += _job_runs_before(current, order)
        for path in paths:
            if not (path / "warcs").is_dir() and (path.parent / "warcs").is_dir():
                path = path.parent  # the run's state (or indexes) directory was named
            path = path.resolve()
            if path in found or path == run_dir.resolve():
                continue
            if (path / "warcs").is_dir() or warc_dirs(path):
                found.append(path)
                todo.append(path)
    return found


def _job_runs_before(run_dir: Path, order: dict[str, object]) -> list[Path]:
    """The job's runs before ``run_dir`` when it kept the job's digest index (its revisits may
    refer to any of them): the runs beside it in its job's ``runs/`` whose names (start
    times) sort before its own."""
    digest_index = order.get("digest_index")
    if not isinstance(digest_index, dict) or not digest_index.get("job_index"):
        return []
    run = run_dir.absolute()
    if run.parent.name != "runs":
        return []
    return sorted(p for p in run.parent.iterdir() if p.is_dir() and p.name < run.name)


def collection_from_run(
    run_dir: Path, work_dir: Path, also: list[Path] | None = None
) -> PywbCollection:
    """Set up ``work_dir`` to replay ``run_dir`` with the runs in ``also`` and its
    :func:`earlier_runs` beside it in one collection (see the module docstring)."""
    runs = [run_dir, *(also or []), *earlier_runs(run_dir)]
    return _collection(run_dir, runs, work_dir, [])


def collection_from_job(
    job_dir: Path, work_dir: Path, also: list[Path] | None = None
) -> PywbCollection:
    """Set up ``work_dir`` to replay every finished run of ``job_dir`` (with the runs in
    ``also`` and every run their revisits refer to) as one collection; the runs left out
    (running, died) are named in ``problems``. NothingToReplayError if no run finished."""
    runs = job_runs(job_dir)
    done = [r.path for r in runs if r.finished]
    left_out = [f"left out {r.describe()}" for r in runs if not r.finished]
    if not done:
        detail = "; ".join(r.describe() for r in runs) or "no runs/ directory entries"
        raise NothingToReplayError(
            f"{job_dir}: no finished run to replay ({detail}); "
            "replay one run with `crawler replay RUN_DIR`"
        )
    earlier = [e for run in done for e in earlier_runs(run)]
    return _collection(job_dir, [*done, *(also or []), *earlier], work_dir, left_out)


def _collection(
    source: Path, runs: list[Path], work_dir: Path, problems: list[str]
) -> PywbCollection:
    """Link the indexes of ``runs`` (each once) into ``work_dir`` and write pywb's config."""
    indexes = work_dir / "indexes"
    indexes.mkdir(parents=True, exist_ok=True)
    records = 0
    problems = list(problems)
    archive_paths: list[Path] = []
    for run in dict.fromkeys(r.resolve() for r in runs):
        problems += index_run(run).problems
        for wdir in warc_dirs(run):
            names = {warc.name for warc in wdir.warc_files()}
            linked = False
            for index in wdir.index_files():
                if index.name[: -len(INDEX_SUFFIX)] not in names:
                    continue  # orphaned: reported by index_run
                with index.open("rb") as fh:
                    count = sum(1 for _ in fh)
                if count:
                    link = indexes / f"{len(archive_paths):03d}-{index.name}"
                    link.symlink_to(index.resolve())
                    records += count
                    linked = True
            if linked:
                archive_paths.append(wdir.warcs.resolve())
    if not records:
        raise NothingToReplayError(
            f"{source}: no WARC record to replay (no WARC file, or none whole)"
        )
    name = collection_name(source.resolve())
    _write_config(work_dir, name, indexes, archive_paths)
    return PywbCollection(work_dir, name, records, problems)


def collection_from_wacz(wacz: Path, work_dir: Path) -> PywbCollection:
    """Set up ``work_dir`` to replay the WACZ file ``wacz``."""
    warcs = work_dir / "warcs"
    warcs.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wacz) as package:
            members = [
                m
                for m in package.infolist()
                if m.filename.startswith("archive/") and is_warc(Path(m.filename))
            ]
            for member in members:
                target = warcs / Path(member.filename).name
                with package.open(member) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1024 * 1024)
    except (zipfile.BadZipFile, OSError) as error:
        raise NothingToReplayError(f"{wacz}: not a readable WACZ package ({error})") from None
    indexer = CdxjIndexer()
    indexes = work_dir / "indexes"
    results = [indexer.index(warc, indexes) for warc in sorted(warcs.iterdir())]
    records = sum(r.records for r in results)
    if not records:
        raise NothingToReplayError(f"{wacz}: no WARC record to replay in its archive/ folder")
    name = collection_name(wacz)
    _write_config(work_dir, name, indexes, [warcs])
    problems = [f"{r.warc.name} in {wacz}: {r.problem}" for r in results if r.problem]
    return PywbCollection(work_dir, name, records, problems)


def _write_config(work_dir: Path, name: str, indexes: Path, archive_paths: list[Path]) -> None:
    # JSON strings are YAML strings: any path is quoted safely.
    paths = "".join(f"      - {json.dumps(str(p) + '/')}\n" for p in archive_paths)
    (work_dir / "config.yaml").write_text(
        "# written by crawler replay\n"
        "collections:\n"
        f"  {name}:\n"
        f"    index_paths: {json.dumps(str(indexes) + '/')}\n"
        "    archive_paths:\n"
        f"{paths}"
        "enable_memento: true\n",
        encoding="utf-8",
    )
