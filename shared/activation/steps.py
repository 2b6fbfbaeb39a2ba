"""The activation's steps as the state machine sees them: their names, their order, what a task
returns, who runs it (``Worker``) and how a failure is named.

Imported by the pipeline (``shared.activation.pipeline``) and by whatever shows an activation's
progress (``shared.audiences.views``), which must not import the pipeline itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from shared.errors import ServiceError
from shared.records.audiences import ActivationStep, AudienceRecord

# A worker's claim lasts this long past its last save (an execution), or its remaining time (a
# request); a worker killed without releasing it holds the audience no longer than that.
LEASE_SECONDS = 900
# A task never sleeps longer than this in-process: longer waits are the state machine's Wait states.
TASK_SLEEP_LIMIT_SECONDS = 5.0
# What a step keeps in hand for its last save after its last platform call.
SAFETY_SECONDS = 3.0

Outcome = Literal["claimed", "busy", "active", "done", "more", "throttled", "processing", "ready"]


class StepResult(BaseModel):
    """What a task returns; the state machine's Choice states read ``outcome`` and ``next``
    (snake_case: the state machine's own document), and the Wait states ``wait_seconds``."""

    outcome: Outcome
    next: ActivationStep | None = None
    wait_seconds: int = 0
    batches_sent: int = 0


@dataclass(frozen=True)
class Worker:
    """Who is advancing the audience, and how long it may still run.

    ``owner`` names the lease (the execution's name, or ``request-<id>``); ``seconds_left`` is the
    function's remaining time (``context.get_remaining_time_in_millis() / 1000``)."""

    owner: str
    seconds_left: Callable[[], float]
    # The longest in-process sleep; a state machine task hands anything longer to a Wait state.
    sleep_limit: float = TASK_SLEEP_LIMIT_SECONDS
    lease_seconds: float = LEASE_SECONDS

    def wait_limit(self) -> float:
        return max(0.0, min(self.sleep_limit, self.seconds_left() - SAFETY_SECONDS))


class LeaseLost(ServiceError):
    """Another worker holds the audience now; this one stops without writing anything."""

    status = 409
    code = "activation_lease_lost"


# A task's ``action`` -> the method that does it.
STEP_ACTIONS: dict[str, str] = {
    "claim": "claim",
    "select_users": "select_users",
    "normalise_and_hash": "normalise_and_hash",
    "create_custom_audience": "create_custom_audience",
    "upload_batches": "upload_batches",
    "check_seed": "check_seed",
    "create_lookalike": "create_lookalike",
    "publish_advert": "publish_advert",
    "generate_campaign": "generate_campaign",
    "mark_active": "mark_active",
}


def planned_steps(record: AudienceRecord) -> list[ActivationStep]:
    """The steps this audience's activation goes through, in order (what a progress bar shows)."""
    steps: list[ActivationStep] = [
        "select_users",
        "normalise_and_hash",
        "create_custom_audience",
        "upload_batches",
        "wait_for_seed",
    ]
    if record.lookalike is not None:
        steps.append("create_lookalike")
    activation = record.activation
    if activation is not None and activation.publish is not None:
        steps.append("publish_advert")
    elif activation is not None and activation.generate_campaign:
        steps.append("generate_campaign")
    steps.append("mark_active")
    return steps


def step_failure(code: str, message: str) -> StepFailed:
    """An exception whose class name is ``code``: Lambda reports the class name as ``errorType``,
    so Step Functions' Retry/Catch and the recorded failure use one code (``shared.errors``)."""
    named = type(code, (StepFailed,), {"__module__": "activation"})
    return named(message)


class StepFailed(Exception):
    """Base of the exceptions ``step_failure`` names after an error code."""


def users_csv_key(org_id: str, audience_id: str) -> str:
    return f"activations/{org_id}/{audience_id}/users.csv"


def users_part_key(org_id: str, audience_id: str, part: int) -> str:
    """Part ``part`` (from 0) of a large list's users, split by a hash of user_id (Parquet)."""
    return f"activations/{org_id}/{audience_id}/users-parts/part-{part:05d}.parquet"


def users_chunk_part_key(org_id: str, audience_id: str, part: int, chunk: int) -> str:
    """Chunk ``chunk``'s users of part ``part`` (both from 0) of a list read in chunks (Parquet)."""
    return f"activations/{org_id}/{audience_id}/users-parts/part-{part:05d}/chunk-{chunk:05d}.parquet"


def snapshot_carry_key(org_id: str, audience_id: str, chunk: int) -> str:
    """The snapshot lines up to chunk ``chunk`` of a list read in chunks, too short for a part of the
    snapshot's upload, waiting for the next chunk."""
    return f"activations/{org_id}/{audience_id}/snapshot-carry/chunk-{chunk:05d}.csv"


def groups_csv_key(org_id: str, audience_id: str) -> str:
    return f"activations/{org_id}/{audience_id}/groups.csv"


def batch_key(prefix: str, batch_seq: int) -> str:
    return f"{prefix}/{batch_seq:06d}.json"
