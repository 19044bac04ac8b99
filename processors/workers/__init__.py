"""Worker processes: library calls that may hang, loop or allocate without end, run in
long-lived child processes the crawler can kill at a deadline (PDF parsing, media extraction)."""

from processors.workers.worker_pool import Ask, WorkerAnswer, WorkerPool

__all__ = ["Ask", "WorkerAnswer", "WorkerPool"]
