"""cuzk.timeline: an in-memory record of what the pipeline did, and its analysis.

``Timeline`` (recorder.py) keeps events in a ring buffer; ``analysis``/``summary`` turn a
snapshot into plain data; ``render`` draws it; ``span`` lets a prover report sub-steps.

    >>> from cuzk.timeline import Timeline, EventKind
    >>> tl = Timeline()
    >>> tl.record(EventKind.JOB_SUBMIT, job_id=1)
    >>> tl.summary().jobs_done
    0
"""

from cuzk.timeline.events import Event, EventKind, SUB_SPAN_NAMES
from cuzk.timeline.recorder import Timeline, DEFAULT_CAPACITY
from cuzk.timeline.context import span, stage_context, current_stage
from cuzk.timeline.analysis import Span, Stats, JobBreakdown, JobSwitchGap
from cuzk.timeline.summary import Summary, summary

__all__ = [
    "Timeline", "DEFAULT_CAPACITY", "Event", "EventKind", "SUB_SPAN_NAMES",
    "span", "stage_context", "current_stage",
    "Span", "Stats", "JobBreakdown", "JobSwitchGap", "Summary", "summary",
]
