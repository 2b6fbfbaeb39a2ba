"""A browser upload straight to S3: where to POST the file and the signed form fields to send with it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UploadForm:
    """A presigned POST: send ``fields`` as form fields, then the file as the last field, ``file``,
    in one ``multipart/form-data`` request to ``url``. The fields carry a SigV4-signed policy that
    names the key, the content type, the encryption and the largest size S3 will accept."""

    url: str
    fields: dict[str, str]
