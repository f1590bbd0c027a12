"""examples/pipeline_experiment.ipynb runs top to bottom as committed, and is committed without outputs.

The notebook is executed with nbclient, the library Jupyter's own ``nbconvert --execute`` runs
notebooks with, called from an ordinary test: one cell timeout bounds it, and pytest-xdist's
``--dist loadfile`` treats it like any other test file.
"""

import json
from pathlib import Path

from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "pipeline_experiment.ipynb"
#: seconds any one cell may take before the run fails: a hang guard, not a speed check (a cold
#: Numba cache compiles the synthesis kernels in the stages cell: ~25 s on a 2-core machine)
CELL_TIMEOUT_S = 300


def test_committed_without_outputs():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code
    for cell in code:
        assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]
        assert "execution" not in cell["metadata"], cell["id"]  # nbclient's timing record
    assert set(nb["metadata"]) <= {"kernelspec", "language_info"}
    assert nb["metadata"]["language_info"] == {"name": "python"}  # no interpreter version of whoever saved it


def test_runs_top_to_bottom_and_draws_its_pictures():
    import nbclient  # the test extra's: a missing one fails here rather than skipping the notebook
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = {c.id: c.outputs for c in nb.cells if c.cell_type == "code"}
    text = "".join(o.get("text", "") for o in outputs["runs"])
    assert "concurrency 1: prover busy" in text and "concurrency 2: prover busy" in text
    # the waterfalls and the utilization bars are inline pictures; the Timeline shows itself as HTML
    for cell in ("waterfalls", "utilization"):
        assert any("image/png" in o.get("data", {}) for o in outputs[cell]), cell
    html = [o["data"]["text/html"] for o in outputs["display"] if "text/html" in o.get("data", {})]
    assert html and "GPU utilization" in html[0]
