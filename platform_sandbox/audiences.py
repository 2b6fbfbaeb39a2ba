"""Custom Audiences, member uploads with sessions, replace, and lookalikes (docs/platform-notes.md §2-§5)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from platform_sandbox import errors
from platform_sandbox.graph import GraphCall, Payload, edge_page, graph_endpoint, project
from platform_sandbox.uploads import CheckedBatch, check_payload
from platform_sandbox.usage import BucType
from platform_sandbox.world import AdAccount, CustomAudience, ReplaceSession, Row, UploadSession, World

blueprint = Blueprint("audiences", __name__)

CUSTOMER_FILE_SOURCES = ("USER_PROVIDED_ONLY", "PARTNER_PROVIDED_ONLY", "BOTH_USER_AND_PARTNER_PROVIDED")
LOOKALIKE_TYPE_RATIOS = {"similarity": 0.01, "reach": 0.05}
# An audience answers only its id unless `fields` asks for more (docs/platform-notes.md §2.4).
DEFAULT_FIELDS: tuple[str, ...] = ()


def audience_node(audience: CustomAudience, min_seed_size: int, world: World) -> Payload:
    """Every field the sandbox knows of an audience (docs/platform-notes.md §2.4)."""
    count = _approximate_size(audience)
    return {
        "id": audience.audience_id,
        "account_id": audience.account_id,
        "name": audience.name,
        "description": audience.description,
        "subtype": audience.subtype,
        "customer_file_source": audience.customer_file_source,
        "approximate_count_lower_bound": count,
        "approximate_count_upper_bound": count,
        "operation_status": _operation_status(audience),
        "delivery_status": (
            {"code": 200, "description": "This audience is ready for use."}
            if count >= min_seed_size
            else {"code": 300, "description": "This audience is too small to be used."}
        ),
        "lookalike_spec": audience.lookalike_spec,
        "time_created": audience.time_created,
        "time_updated": audience.time_updated or audience.time_created,
        "retention_days": audience.retention_days,
        "is_value_based": audience.is_value_based,
        "origin_audience_id": audience.origin_audience_id,
        "lookalike_audience_ids": [
            lookalike.audience_id for lookalike in world.lookalikes_of(audience.audience_id)
        ],
    }


@graph_endpoint(blueprint, "/act_<account_id>/customaudiences", ["POST"])
def create_audience(call: GraphCall, account_id: str) -> Payload:
    """Create a customer-list (``subtype=CUSTOM``) or lookalike audience; returns ``{"id"}``.

    Gates, in the platform's order: business-owned account (200/1870050), Custom Audience terms
    (200/1870090), the per-account limit (2654), then the subtype's own parameters.
    """
    account = call.account(account_id, write=True, buc=BucType.CUSTOM_AUDIENCE)
    name = call.params.required_text("name")
    subtype = call.params.required_text("subtype")
    if subtype not in ("CUSTOM", "LOOKALIKE"):
        raise errors.invalid_parameter(f"subtype {subtype} is not supported for this call", blame="subtype")
    _check_audience_gates(call, account)
    audience = (
        _new_custom(call, account, name) if subtype == "CUSTOM" else _new_lookalike(call, account, name)
    )
    call.state.world.audiences[audience.audience_id] = audience
    return {"id": audience.audience_id}


@graph_endpoint(blueprint, "/act_<account_id>/customaudiences", ["GET"])
def list_audiences(call: GraphCall, account_id: str) -> Payload:
    call.account(account_id, write=False, buc=BucType.CUSTOM_AUDIENCE)
    min_seed = call.state.config.min_seed_size
    world = call.state.world
    for audience in world.live_audiences_of(account_id):
        _drop_expired_replace(call, audience)
    nodes = [audience_node(a, min_seed, world) for a in world.live_audiences_of(account_id)]
    return edge_page(nodes, call.params, node_type="CustomAudience")


def read_audience(call: GraphCall, audience: CustomAudience) -> Payload:
    """``GET /<audience_id>``: the audience's node; a deleted audience no longer exists (100/33)."""
    _authorize(
        call, audience, write=False, deleted_error=errors.unsupported_request("GET", audience.audience_id)
    )
    _drop_expired_replace(call, audience)
    node = audience_node(audience, call.state.config.min_seed_size, call.state.world)
    return project(node, call.params, default=DEFAULT_FIELDS, node_type="CustomAudience")


def update_audience(call: GraphCall, audience: CustomAudience) -> Payload:
    """``POST /<audience_id>``: rename or re-describe (docs/platform-notes.md §2.5)."""
    _authorize(call, audience, write=True, deleted_error=errors.audience_deleted())
    audience.name = call.params.text("name") or audience.name
    audience.description = call.params.text("description") or audience.description
    if call.params.has("retention_days"):
        audience.retention_days = _retention_days(call)
    audience.time_updated = int(call.now)
    return {"success": True}


def delete_audience(call: GraphCall, audience: CustomAudience) -> Payload:
    """``DELETE /<audience_id>``: refused with 2656 while live lookalikes use it as their seed."""
    _authorize(
        call, audience, write=True, deleted_error=errors.unsupported_request("DELETE", audience.audience_id)
    )
    if call.state.world.lookalikes_of(audience.audience_id):
        raise errors.lookalikes_exist()
    audience.deleted = True
    return {"success": True}


@graph_endpoint(blueprint, "/<audience_id>/users", ["POST", "DELETE"])
def users(call: GraphCall, audience_id: str) -> Payload:
    """Add (POST) or remove (DELETE, or POST with ``method=DELETE``) members in a session.

    Members are a set per schema, so a retried batch adds nobody twice; ``num_received`` counts
    each ``batch_seq`` of a session once.
    """
    audience = _upload_target(call, audience_id)
    _drop_expired_replace(call, audience)
    if audience.replace is not None:
        raise errors.replace_failed(
            1870145
        )  # /users must wait for a running replace (docs/platform-notes.md §3.6)
    batch = _checked_batch(call)
    removing = call.method == "DELETE" or (call.params.text("method") or "").upper() == "DELETE"
    _check_value_column(audience, batch, adding=not removing)
    session, batch_seq, last = _session(call, audience)
    rows = audience.members.setdefault(batch.schema, set())
    if removing:
        rows.difference_update(batch.valid)
        for row in batch.valid:
            audience.values.pop((batch.schema, row), None)
    else:
        rows.update(batch.valid)
        _keep_values(audience.values, batch)
        audience.ever_uploaded = True
        audience.replace_failed = False
    return _record_batch(audience, session, batch_seq, last, batch)


@graph_endpoint(blueprint, "/<audience_id>/usersreplace", ["POST"])
def users_replace(call: GraphCall, audience_id: str) -> Payload:
    """Replace all members through a session (docs/platform-notes.md §3.6); errors are 2650 with subcodes.

    The first batch must have ``batch_seq`` 1 (1870147); another session may not start while one
    runs (1870145); a finished session takes no more batches (1870159); a session older than 90
    minutes is dropped (1870158). Members change only when the last batch arrives.
    """
    audience = _upload_target(call, audience_id)
    session = call.params.json_object("session")
    if session is None or not session.get("session_id"):
        raise errors.invalid_parameter("usersreplace needs a session with a session_id", blame="session")
    batch = _checked_batch(call)
    _check_value_column(audience, batch, adding=True)
    replace = _replace_session(call, audience)
    _, batch_seq, last = _session(call, audience)
    replace.staged.setdefault(batch.schema, set()).update(batch.valid)
    _keep_values(replace.staged_values, batch)
    if last:
        audience.members = replace.staged
        audience.values = replace.staged_values
        audience.replace = None
        audience.replace_failed = False
        audience.ever_uploaded = True
    return _record_batch(audience, replace.session, batch_seq, last, batch)


def _check_audience_gates(call: GraphCall, account: AdAccount) -> None:
    _check_write_gates(account)
    if len(call.state.world.live_audiences_of(account.account_id)) >= call.state.config.custom_audience_limit:
        raise errors.audience_limit_reached(call.state.config.custom_audience_limit)


def _new_custom(call: GraphCall, account: AdAccount, name: str) -> CustomAudience:
    source = call.params.text("customer_file_source")
    if source is None:
        raise errors.invalid_parameter(
            "Missing parameter(s): customer_file_source", blame="customer_file_source"
        )
    if source not in CUSTOMER_FILE_SOURCES:
        raise errors.invalid_parameter(
            f"customer_file_source must be one of {', '.join(CUSTOMER_FILE_SOURCES)}"
        )
    return CustomAudience(
        audience_id=call.state.world.new_id(),
        account_id=account.account_id,
        name=name,
        subtype="CUSTOM",
        time_created=int(call.now),
        description=call.params.text("description", "") or "",
        customer_file_source=source,
        retention_days=_retention_days(call),
        is_value_based=bool(call.params.boolean("is_value_based")),
    )


def _retention_days(call: GraphCall) -> int | None:
    """``retention_days``, 1 to 180 when given (docs/platform-notes.md §2.1)."""
    days = call.params.integer("retention_days")
    if days is not None and not 1 <= days <= 180:
        raise errors.invalid_parameter("retention_days must be between 1 and 180", blame="retention_days")
    return days


def _new_lookalike(call: GraphCall, account: AdAccount, name: str) -> CustomAudience:
    """A lookalike of a seed in the same account with at least ``min_seed_size`` members (§4)."""
    world = call.state.world
    origin_id = call.params.required_text("origin_audience_id")
    origin = world.audiences.get(origin_id)
    if origin is None or origin.deleted:
        raise errors.invalid_parameter(f"Invalid origin_audience_id {origin_id}", blame="origin_audience_id")
    if origin.account_id != account.account_id:
        raise errors.audience_not_shared(origin_id)
    spec = _lookalike_spec(call.params.json_object("lookalike_spec", required=True) or {})
    if origin.member_count < call.state.config.min_seed_size:
        raise errors.seed_too_small(call.state.config.min_seed_size)
    if origin.is_value_based and not origin.values:
        # A lookalike of a value-based seed is value-based (docs/platform-notes.md §4.1); one whose
        # members carry no value has nothing to weigh them by.
        raise errors.seed_without_values()
    for existing in world.lookalikes_of(origin_id):
        if existing.lookalike_spec is not None and _same_lookalike(existing.lookalike_spec, spec):
            raise errors.duplicate_lookalike()
    spec["origin"] = [{"id": origin_id, "type": "custom_audience"}]
    return CustomAudience(
        audience_id=world.new_id(),
        account_id=account.account_id,
        name=name,
        subtype="LOOKALIKE",
        time_created=int(call.now),
        description=call.params.text("description", "") or "",
        origin_audience_id=origin_id,
        lookalike_spec=spec,
        ever_uploaded=True,
    )


def _lookalike_spec(raw: dict[str, Any]) -> dict[str, Any]:
    """The stored spec: ``ratio`` 0.01-0.20 (or a ``type``) and ``country`` or ``location_spec``."""
    ratio = raw.get("ratio", LOOKALIKE_TYPE_RATIOS.get(str(raw.get("type"))))
    if not isinstance(ratio, int | float) or not 0.01 <= ratio <= 0.20:
        raise errors.invalid_parameter(
            "lookalike_spec.ratio must be between 0.01 and 0.20", blame="lookalike_spec"
        )
    if not raw.get("country") and not raw.get("location_spec"):
        raise errors.invalid_parameter(
            "lookalike_spec needs a country or a location_spec", blame="lookalike_spec"
        )
    spec: dict[str, Any] = {"type": "custom_ratio", "ratio": round(float(ratio), 2)}
    for key in ("country", "location_spec", "starting_ratio"):
        if key in raw:
            spec[key] = raw[key]
    return spec


def _same_lookalike(existing: dict[str, Any], spec: dict[str, Any]) -> bool:
    keys = ("ratio", "country", "location_spec", "starting_ratio")
    return all(existing.get(key) == spec.get(key) for key in keys)


def _upload_target(call: GraphCall, audience_id: str) -> CustomAudience:
    audience = call.state.world.audiences.get(audience_id)
    if audience is None:
        raise errors.unsupported_request(call.method, audience_id)
    _authorize(call, audience, write=True, deleted_error=errors.audience_deleted())
    if audience.subtype != "CUSTOM":
        raise errors.invalid_parameter("Only customer list audiences take uploaded users")
    return audience


def _authorize(
    call: GraphCall, audience: CustomAudience, *, write: bool, deleted_error: errors.GraphError
) -> None:
    account = call.account(audience.account_id, write=write, buc=BucType.CUSTOM_AUDIENCE)
    if audience.deleted:
        raise deleted_error
    if write:
        _check_write_gates(account)


def _check_write_gates(account: AdAccount) -> None:
    # Editing a customer list needs the same business and ToS gates as creating one
    # (docs/platform-notes.md §2.2-§2.3).
    if account.business is None:
        raise errors.business_account_required()
    if not account.tos_accepted:
        raise errors.terms_not_accepted(account.account_id)


def _check_value_column(audience: CustomAudience, batch: CheckedBatch, *, adding: bool) -> None:
    """LOOKALIKE_VALUE only on a value-based audience, and always when adding to one (§4.1)."""
    if batch.values is not None and not audience.is_value_based:
        raise errors.value_column_not_allowed()
    if batch.values is None and audience.is_value_based and adding:
        raise errors.value_column_required()


def _keep_values(values: dict[tuple[tuple[str, ...], Row], float], batch: CheckedBatch) -> None:
    """Each valid row's value: a member sent again takes its latest value; an empty one has none."""
    for row, value in (batch.values or {}).items():
        if value is None:
            values.pop((batch.schema, row), None)
        else:
            values[(batch.schema, row)] = value


def _checked_batch(call: GraphCall) -> CheckedBatch:
    payload = call.params.json_object("payload")
    if payload is None:
        raise errors.GraphError("(#194) Missing at least one required parameter: payload", 194)
    return check_payload(payload, call.state.config.max_rows_per_upload)


def _session(call: GraphCall, audience: CustomAudience) -> tuple[UploadSession, int, bool]:
    """The upload session named by ``session`` (a fresh one when absent), its batch_seq and last flag."""
    raw = call.params.json_object("session") or {}
    session_id = str(raw.get("session_id") or call.state.world.new_id())
    batch_seq = raw.get("batch_seq", 1)
    if not isinstance(batch_seq, int) or batch_seq < 1:
        raise errors.invalid_parameter("session.batch_seq must be a positive integer", blame="session")
    session = audience.sessions.setdefault(session_id, UploadSession(session_id, call.now))
    return session, batch_seq, bool(raw.get("last_batch_flag", False))


def _drop_expired_replace(call: GraphCall, audience: CustomAudience) -> ReplaceSession | None:
    """A replace session older than 90 minutes is dropped whatever is called next: the audience keeps
    its old members and reports the failed replace (415). Returns the dropped session, if any."""
    running = audience.replace
    if running is None or call.now - running.session.started_at <= call.state.config.replace_session_seconds:
        return None
    audience.replace = None
    audience.replace_failed = True
    return running


def _replace_session(call: GraphCall, audience: CustomAudience) -> ReplaceSession:
    raw = call.params.json_object("session") or {}
    session_id = str(raw.get("session_id", ""))
    dropped = _drop_expired_replace(call, audience)
    if dropped is not None and dropped.session.session_id == session_id:
        raise errors.replace_failed(1870158)
    running = audience.replace
    if running is not None:
        if running.session.session_id != session_id:
            raise errors.replace_failed(1870145)
        return running
    previous = audience.sessions.get(session_id)
    if previous is not None and previous.finished:
        raise errors.replace_failed(1870159)
    if raw.get("batch_seq") != 1:
        raise errors.replace_failed(1870147)
    session = UploadSession(session_id, call.now)
    audience.sessions[session_id] = session
    audience.replace = ReplaceSession(session)
    return audience.replace


def _record_batch(
    audience: CustomAudience, session: UploadSession, batch_seq: int, last: bool, batch: CheckedBatch
) -> Payload:
    session.received[batch_seq] = batch.received
    session.invalid[batch_seq] = batch.invalid_count
    session.finished = session.finished or last
    return {
        "audience_id": audience.audience_id,
        "session_id": session.session_id,
        "num_received": session.num_received,
        "num_invalid_entries": session.num_invalid,
        "invalid_entry_samples": batch.invalid_samples,
    }


def _operation_status(audience: CustomAudience) -> dict[str, Any]:
    if audience.replace is not None:
        return {"code": 414, "description": "Replace in progress"}
    if audience.replace_failed:
        return {"code": 415, "description": "Replace failed: the audience kept its previous members"}
    if not audience.ever_uploaded:
        return {"code": 410, "description": "No upload: no customer file has been uploaded yet"}
    return {"code": 200, "description": "Normal"}


def _approximate_size(audience: CustomAudience) -> int:
    if audience.lookalike_spec is not None:
        # A deterministic stand-in for a country-sized audience: one million people per 1 %.
        return int(float(audience.lookalike_spec["ratio"]) * 100_000_000)
    return audience.member_count
