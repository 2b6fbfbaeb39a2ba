"""Account closure deletes every S3 prefix the service writes an organization's objects under: a new
writer with a new prefix fails here until closure knows it (issue 9, item 12)."""

from __future__ import annotations

import re
from pathlib import Path

from shared.closure.service import organization_prefixes

ROOT = Path(__file__).resolve().parents[3]
# An object key or prefix built from an organization id: f"<first segment>/{<...>org_id}..."
ORG_KEY = re.compile(r'f"([a-z][a-z0-9-]*)/\{(?:[a-z_]+\.)?org_id\}')


def test_every_prefix_the_service_writes_an_organizations_objects_under_is_deleted_by_closure() -> None:
    # Given: every key the library builds from an organization id
    written = {
        match.group(1)
        for path in (ROOT / "shared").rglob("*.py")
        if "closure" not in path.relative_to(ROOT).parts
        for match in ORG_KEY.finditer(path.read_text(encoding="utf-8"))
    }
    # When: closure lists the organization's prefixes
    deleted = {prefix.split("/", 1)[0] for _, prefix in organization_prefixes("org-1")}
    # Then: it lists them all (the search itself finds the known writers)
    assert {"snapshots", "sources", "uploads", "datasets", "data-sources", "orgs"} <= written
    assert written <= deleted, written - deleted
