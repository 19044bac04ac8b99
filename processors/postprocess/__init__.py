"""Post processors: CandidatesProcessor (schedules outlinks) and DispositionProcessor (delays)."""

from processors.postprocess.candidates import CandidatesParams, CandidatesProcessor
from processors.postprocess.disposition import DispositionParams, DispositionProcessor

__all__ = ["CandidatesParams", "CandidatesProcessor", "DispositionParams", "DispositionProcessor"]
