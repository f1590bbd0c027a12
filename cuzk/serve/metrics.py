"""The daemon's own Prometheus series, served after the Engine's (``/metrics`` and GetMetrics).

cuzk keeps its hand-written exposition writer (:mod:`cuzk.prometheus`) rather than adding
prometheus_client: the Engine's text is already made there, and the process series an operator
expects from prometheus_client's process collector are a few lines of /proc here, under the same
names (``process_resident_memory_bytes``, ``process_cpu_seconds_total``, ``process_open_fds``,
``process_start_time_seconds``), so dashboards built for them work.
"""

from __future__ import annotations

import os
import resource
import time

from cuzk.prometheus import MetricsText

__all__ = ["serve_metrics", "process_metrics"]


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the peak, where /proc is absent


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def process_metrics(out: MetricsText, started: float) -> None:
    """prometheus_client's process series (see the module doc) into ``out`` (made with prefix "")."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", _rss_bytes())
    out.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                ru.ru_utime + ru.ru_stime)
    out.gauge("process_open_fds", "Number of open file descriptors.", _open_fds())
    out.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", started)


def serve_metrics(daemon) -> str:
    """``cuzk_serve_*`` series (jobs by kind and outcome, live jobs, RPCs by method and code,
    uptime, and what ``daemon.metric_sources`` add: the server's reloads and streams) and the
    process series."""
    out = MetricsText(prefix="cuzk_serve_")
    out.gauge("uptime_seconds", "Seconds since the daemon started.", time.time() - daemon.started)
    out.gauge("draining", "1 while the daemon is shutting down (no new work).", int(daemon.draining))
    for kind, counts in sorted(daemon.jobs.per_kind().items()):
        for outcome, n in counts.items():
            out.counter("jobs", "Jobs ended, per proof kind and outcome.", n, labels={"kind": kind, "outcome": outcome})
    live: dict = {}
    for job in daemon.jobs.snapshot():
        if job.live:
            key = (job.kind, "running" if job.started else "queued")
            live[key] = live.get(key, 0) + 1
    for (kind, state), n in sorted(live.items()):
        out.gauge("jobs_live", "Jobs queued or running now, per proof kind.", n, labels={"kind": kind, "state": state})
    for (method, code), n in sorted(dict(daemon.rpc_counts).items()):
        out.counter("rpcs", "RPCs answered, per method and status code.", n, labels={"method": method, "code": code})
    for source in daemon.metric_sources:
        source(out)
    proc = MetricsText(prefix="")
    process_metrics(proc, daemon.started)
    return out.render() + proc.render()
