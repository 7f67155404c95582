"""docs/python.md shows examples/python/data_parallel.py as it is, and the
example runs (it checks its own averages)."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "data_parallel.py"


def test_the_doc_shows_the_example_verbatim():
    doc = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", doc, re.S | re.M)
    assert blocks, "docs/python.md has no ```python block"
    assert blocks[0] == EXAMPLE.read_text(), \
        "docs/python.md's first python block differs from examples/python/data_parallel.py"


def test_the_example_runs():
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0: gradients averaged" in run.stdout
    assert "rank 1: gradients averaged" in run.stdout
