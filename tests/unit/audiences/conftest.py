"""Make the repository root importable (``shared``, ``benchmarks``) when pytest runs as a script.

Remove once pyproject.toml sets ``[tool.pytest.ini_options] pythonpath = ["."]``.
"""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
