"""Send a file to an upload link the API hands out, as the dashboard does: one multipart/form-data
POST with the link's signed fields first and the file last (S3 reads the fields up to the file)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx


def send_upload(link: Mapping[str, Any], content: bytes, *, timeout: float = 60) -> httpx.Response:
    """POST ``content`` to ``link`` (an upload link or one file's link of the data source uploads)
    and return S3's answer; 204 when it was stored."""
    return httpx.post(
        link["url"],
        data=link["fields"],
        files={"file": ("upload", content, link["contentType"])},
        timeout=timeout,
    )
