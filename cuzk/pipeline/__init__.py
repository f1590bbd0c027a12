"""cuzk.pipeline: concurrent synthesis feeding the prover, one line of Python.

    >>> from cuzk.pipeline import Pipeline, Priority
    >>> Priority.CRITICAL > Priority.HIGH > Priority.NORMAL > Priority.LOW
    True
"""

from cuzk.pipeline.scheduler import Priority, estimate_synthesized_bytes
from cuzk.pipeline.pipeline import Pipeline, PipelineStatus, ProofFuture
from cuzk.pipeline.metrics import PipelineMetrics
from cuzk.pipeline.controller import AutoController, Observation

LOW, NORMAL, HIGH, CRITICAL = Priority.LOW, Priority.NORMAL, Priority.HIGH, Priority.CRITICAL

__all__ = [
    "Pipeline", "ProofFuture", "PipelineStatus", "PipelineMetrics", "Priority",
    "LOW", "NORMAL", "HIGH", "CRITICAL", "AutoController", "Observation", "estimate_synthesized_bytes",
]
