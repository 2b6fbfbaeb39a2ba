"""The advertising platform (Meta Graph / Marketing API) client: the only code that touches httpx.

``GraphClient`` is the transport; operations are functions taking a client, grouped by subject:
``oauth``, ``accounts``, ``audiences``, ``campaigns``. Failures raise ``PlatformError`` subclasses
(``shared.platform.errors``), each a ``shared.errors`` domain error with the spec's text and remedy.
"""

from shared.platform.client import GraphClient, GraphResponse
from shared.platform.errors import PlatformError
from shared.platform.usage import UsageSnapshot

__all__ = ["GraphClient", "GraphResponse", "PlatformError", "UsageSnapshot"]
