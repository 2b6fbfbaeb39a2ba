"""Command-line tools, run from a checkout with ``python -m tools.<name>``: training a model on files
or a synthetic shop (``train``), the synthetic shop itself (``synthetic``), and the audience upload
dry run (``dry_run``).

They are not part of the shipped library: the Lambda layer holds ``shared/`` only, and
``tests/unit/test_shipped_code.py`` checks that no function imports a tool or its dependencies.
"""
