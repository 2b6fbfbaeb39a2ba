"""The plain records of the service: what is stored and who is calling, as data and nothing else.

This is the bottom of the library. Repositories read and write these records, services work on them,
and the API hands them around; the records themselves import nothing of ``shared`` (see
``tests/unit/test_structure.py``), so any layer may use them without pulling in another.

- ``audiences``: an audience with its upload progress, lookalike and publication.
- ``connections``: an organization's platform connection and its encrypted token.
- ``models``: a trained model's metadata and usage counters.
- ``api_keys``: what is kept of an API key (never the key itself).
- ``usage``: one API key's predictions on one UTC day.
- ``principals``: who is calling, an API key or a dashboard user.
- ``uploads``: a presigned upload form, where a browser sends a file straight to S3.
"""
