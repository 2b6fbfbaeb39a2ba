"""``Idempotency-Key`` for audience creation and Publish advert, with the Powertools idempotency utility
on DynamoDB.

Powertools stores each key's result (24 h) and refuses a concurrent duplicate; the services' own
records make a retry after a failure resume instead of starting again. The key is scoped to the
organization, and the body's hash is validated, so a reused key with another body is an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Header
from aws_lambda_powertools.utilities.idempotency import idempotent_function
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from shared import wiring
from shared.audiences.models import AudienceCreated

# The request header, as the audience routes declare it.
IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="idempotency-key",
        min_length=8,
        max_length=128,
        description="Repeat a request with the same key to get its result instead of a second audience.",
    ),
]


class IdempotencyScope(BaseModel):
    """What identifies a request: the organization, its key, and (validated) the body's hash."""

    org_id: str
    key: str
    body_sha256: str


def scope_for(org_id: str, key: str, body: BaseModel) -> IdempotencyScope:
    """The scope of a request: ``key`` should name the resource when the body does not (an
    audience's advert: ``<audienceId>/<key>``), so one key cannot answer for another resource."""
    digest = hashlib.sha256(body.model_dump_json(by_alias=True).encode()).hexdigest()
    return IdempotencyScope(org_id=org_id, key=key, body_sha256=digest)


def register_context(context: LambdaContext) -> None:
    """Let the utility see the remaining time, so a timed-out attempt's lock expires with it."""
    wiring.idempotency_config().register_lambda_context(context)


def idempotent(
    create: Callable[..., BaseModel], output: type[BaseModel] = AudienceCreated
) -> Callable[..., Any]:
    """``create(scope=..., body=...)`` made idempotent on ``scope``, its ``output`` model stored as the
    result, in the idempotency table of ``shared.wiring``."""
    wrapped: Callable[..., Any] = idempotent_function(
        data_keyword_argument="scope",
        persistence_store=wiring.idempotency_store(),
        config=wiring.idempotency_config(),
        output_serializer=PydanticSerializer(output),
    )(create)
    return wrapped
