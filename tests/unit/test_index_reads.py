"""No code path reads its own write through an index (issue 24, item 5).

On AWS a global secondary index is eventually consistent: a write shows in GSI1 some time after it
succeeded (usually well under a second, with no bound), and moto shows it at once, so a local test
cannot tell. Here the main table's index lags on purpose: queries through GSI1 are answered from a
copy of the table that catches up only when the test says so, while every other read sees the
table. The API key list (which the dashboard reads right after creating or revoking a key) and the
account closure's key phase must be right meanwhile. The last test holds every index read in the
library to a list of the ones that are safe, with the reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local.template import ROOT
from shared.records.api_keys import StoredApiKey
from shared.records.connections import Connection
from shared.repositories.api_keys import DynamoApiKeyStore
from shared.repositories.closure import DynamoOrganizationItems
from shared.repositories.connections import DynamoConnectionStore
from tests.unit.moto_aws import offline_aws, table

ORG = "org-1"
NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class LaggingIndexTable:
    """A main table whose GSI1 is behind: index queries read a copy taken at the last
    :meth:`catch_up`; everything else goes to the table itself."""

    def __init__(self, real: Any, copy: Any) -> None:
        self._real = real
        self._copy = copy

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def query(self, **kwargs: Any) -> Any:
        return (self._copy if "IndexName" in kwargs else self._real).query(**kwargs)

    def catch_up(self) -> None:
        """The index now shows every write made so far."""
        for item in self._copy.scan()["Items"]:
            self._copy.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})
        for item in self._real.scan()["Items"]:
            self._copy.put_item(Item=item)


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Iterator[LaggingIndexTable]:
    with offline_aws(monkeypatch):
        yield LaggingIndexTable(table("main"), table("main-index-copy"))


def api_key(key_id: str, created: datetime = NOW) -> StoredApiKey:
    return StoredApiKey(
        org_id=ORG,
        key_id=key_id,
        prefix=f"svc_{key_id}",
        label=f"key {key_id}",
        secret_hash="0" * 64,
        created_at=created,
    )


def test_a_key_just_created_is_listed_before_the_index_has_it(main: LaggingIndexTable) -> None:
    # Given: a key stored a moment ago (the index does not show it yet) beside an older one
    keys = DynamoApiKeyStore(main)  # type: ignore[arg-type]
    keys.put(api_key("olderkey01", NOW - timedelta(days=1)))
    main.catch_up()
    keys.put(api_key("newkey0001"))

    # When: the organization's keys are listed (the dashboard does right after creating one)
    listed = keys.list_for_org(ORG)

    # Then: both are there, oldest first
    assert [key.key_id for key in listed] == ["olderkey01", "newkey0001"]


def test_a_key_just_revoked_is_listed_as_revoked(main: LaggingIndexTable) -> None:
    # Given: a key the index shows as it was before it was revoked
    keys = DynamoApiKeyStore(main)  # type: ignore[arg-type]
    keys.put(api_key("revoked001"))
    main.catch_up()
    keys.revoke(ORG, "revoked001", NOW + timedelta(minutes=1))

    # When: the keys are listed
    [listed] = keys.list_for_org(ORG)

    # Then: it shows revoked
    assert listed.revoked_at == NOW + timedelta(minutes=1)


def test_a_key_stored_before_the_key_list_existed_is_still_listed(main: LaggingIndexTable) -> None:
    # Given: a key stored as keys were before the organization's key list (GSI1 only)
    legacy = {
        "pk": "APIKEY#legacykey1",
        "sk": "META",
        "gsi1pk": f"ORG#{ORG}#APIKEYS",
        "gsi1sk": "2026-01-01T00:00:00Z#legacykey1",
        "org_id": ORG,
        "key_id": "legacykey1",
        "prefix": "svc_legacykey1",
        "label": "old",
        "secret_hash": "0" * 64,
        "created_at": "2026-01-01T00:00:00Z",
    }
    main.put_item(Item=legacy)
    main.catch_up()

    # When / Then: it is listed
    assert [key.key_id for key in DynamoApiKeyStore(main).list_for_org(ORG)] == ["legacykey1"]  # type: ignore[arg-type]


def test_closure_does_not_find_again_a_key_it_just_deleted(main: LaggingIndexTable) -> None:
    # Given: two keys, both in the index, and a closure that has just deleted one
    keys = DynamoApiKeyStore(main)  # type: ignore[arg-type]
    keys.put(api_key("firstkey01"))
    keys.put(api_key("secondkey1"))
    main.catch_up()
    usage = table("usage", "UsageTable")
    store = DynamoOrganizationItems(main, usage, table("idempotency", "IdempotencyTable"))  # type: ignore[arg-type]
    store.delete_key(ORG, "firstkey01")

    # When: it looks for the keys left (the index still lists the deleted one)
    left = store.api_key_ids(ORG)

    # Then: only the other one, so it is neither deleted nor counted twice
    assert left == ["secondkey1"]


def test_closure_finds_a_key_created_a_moment_before_its_last_look(main: LaggingIndexTable) -> None:
    # Given: a key a request already under way stored just now (not in the index yet)
    DynamoApiKeyStore(main).put(api_key("latekey001"))  # type: ignore[arg-type]
    usage = table("usage", "UsageTable")
    store = DynamoOrganizationItems(main, usage, table("idempotency", "IdempotencyTable"))  # type: ignore[arg-type]

    # When / Then: the closure's look for keys finds it
    assert store.api_key_ids(ORG) == ["latekey001"]


def test_the_token_check_acts_on_connections_as_they_are_now(main: LaggingIndexTable) -> None:
    # Given: a connection the index still shows active, though it was disconnected a moment ago
    connections = DynamoConnectionStore(main)  # type: ignore[arg-type]
    active = Connection(org_id=ORG, status="active", ad_account_id="act_1", connected_at=NOW)
    connections.put(active)
    main.catch_up()
    connections.put(active.model_copy(update={"status": "inactive"}))

    # When: the scheduled check asks for the active connections
    found = connections.active()

    # Then: the disconnected one is not among them
    assert found == []


# Every read through an index in the library, and why it cannot be reading its own write.
SAFE_INDEX_READS = {
    ("shared/repositories/api_keys.py", "org_key_items"): "keys stored before the organization's key "
    "list only (old enough for the index); each is read again with strong consistency",
    ("shared/repositories/connections.py", "active"): "each connection the index names is read again "
    "with strong consistency, and only those active now are returned",
    (
        "shared/repositories/audiences.py",
        "idle_in_progress",
    ): "audiences untouched for an hour (the sweeper); "
    "each resume is a write conditional on the audience itself still being in progress",
    ("shared/repositories/payments.py", "unpaid_checkouts"): "the Payments page's list of checkouts that "
    "ended unpaid, shown and never acted on: one that ended an instant ago may be missing, and one paid "
    "after it ended may show for that instant; no write is decided from it",
}


def index_reads() -> set[tuple[str, str]]:
    """(file, function) of every call passing ``IndexName=`` in ``shared/``."""
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "shared").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and any(k.arg == "IndexName" for k in node.keywords):
                    found.add((str(path.relative_to(ROOT)), function.name))
    return found


def test_every_index_read_is_one_that_cannot_read_its_own_write() -> None:
    # Given: every read through an index in the library
    reads = index_reads()

    # Then: each is one of the reads known to be safe (a new one must say why it is)
    assert reads == set(SAFE_INDEX_READS)
    assert all(re.search(r"\w", why) for why in SAFE_INDEX_READS.values())
