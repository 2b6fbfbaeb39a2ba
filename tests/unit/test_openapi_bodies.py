"""Every request body that ``openapi.json`` says is valid is valid by the route's model.

The document is what schema-driven clients and the fuzzer (tests/integration/test_fuzz.py) generate
from; a body it allows that the model refuses (a cross-field rule, a limit, a pattern the document did
not say) sends them into 400s. Bodies are drawn from the committed document by schemathesis' positive
generation, derandomized, and validated by the models the handlers declare.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, ValidationError
from schemathesis.core import NotSet
from schemathesis.generation import GenerationMode
from schemathesis.generation.case import Case

from functions.payments_callback.handler import PaymentsCallbackRequest
from functions.platform_callback.handler import CallbackRequest
from scripts.openapi import OPENAPI_FILE
from shared.audiences.models import (
    ActivationRequest,
    AudienceSyncRequest,
    CreateAudienceRequest,
    RefreshAudienceRequest,
)
from shared.closure.service import CloseAccountRequest
from shared.datasources.models import SyncRequest, UploadLinksRequest
from shared.events.site_events import SiteEventBatch
from shared.events.sites import SiteSettingsRequest
from shared.payments.connection import ConnectRequest
from shared.payments.webhooks import ProviderEvent
from shared.predictions.key_management import CreateApiKeyRequest
from shared.predictions.predict import PredictRequest
from shared.publishing.models import PublishAdvertRequest
from shared.targeting.models import PreviewRequest

# The model each JSON body is read with (its handler's parameter).
BODY_MODELS: dict[str, type[BaseModel]] = {
    "POST /client/predict/{modelName}": PredictRequest,
    "POST /dashboard/api-keys": CreateApiKeyRequest,
    "POST /payments/connect": ConnectRequest,
    "POST /payments/connect/callback": PaymentsCallbackRequest,
    "POST /payments/webhook": ProviderEvent,
    "POST /platform-ads/account/closure": CloseAccountRequest,
    "POST /platform-ads/activations": ActivationRequest,
    "POST /platform-ads/audiences": CreateAudienceRequest,
    "POST /platform-ads/audiences/{audienceId}/advert": PublishAdvertRequest,
    "POST /platform-ads/audiences/{audienceId}/refresh": RefreshAudienceRequest,
    "POST /platform-ads/audiences/{audienceId}/sync": AudienceSyncRequest,
    "POST /platform-ads/connect/callback": CallbackRequest,
    "POST /platform-ads/data-source/sync": SyncRequest,
    "POST /platform-ads/data-source/uploads": UploadLinksRequest,
    "POST /platform-ads/events/site": SiteSettingsRequest,
    "POST /platform-ads/targeting/preview": PreviewRequest,
    "POST /site-events": SiteEventBatch,
}
EXAMPLES = 80

SCHEMA = schemathesis.openapi.from_path(OPENAPI_FILE)
OPERATIONS = {
    operation.label: operation
    for operation in (result.ok() for result in SCHEMA.get_all_operations())
    if any(body.media_type == "application/json" for body in operation.body)
}


def test_every_json_body_has_its_model_here() -> None:
    assert set(OPERATIONS) == set(BODY_MODELS)


@pytest.mark.parametrize("label", sorted(BODY_MODELS))
def test_a_body_valid_by_the_document_is_valid_by_the_model(label: str) -> None:
    # Given the route's body as the document describes it, and the model its handler reads it with
    operation, model = OPERATIONS[label], BODY_MODELS[label]
    refused: list[str] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(operation.as_strategy(generation_mode=GenerationMode.POSITIVE, media_type="application/json"))
    def check(case: Case) -> None:
        if case.body is None or isinstance(case.body, NotSet):
            return  # an optional body left out (refresh, payments connect): the handler reads none
        # When the model reads a body the document allows
        try:
            model.model_validate(case.body)
        except ValidationError as error:
            refused.append(f"{error.errors()[0]['loc']}: {error.errors()[0]['msg']} in {case.body!r:.300}")

    check()
    # Then it takes every one of them
    assert not refused, f"{len(refused)} of {EXAMPLES} bodies refused, e.g. {refused[0]}"


def test_a_domain_valid_by_the_document_is_one_the_site_settings_take() -> None:
    # Given the pattern openapi.json gives a declared domain (the service checks domains itself,
    # after the model: shared/events/sites.py, declared_domain)
    import re

    from hypothesis import strategies as st

    from shared.events.sites import declared_domain

    pattern = SiteSettingsRequest.model_json_schema()["properties"]["domains"]["items"]["pattern"]

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None)
    @given(st.from_regex(re.compile(pattern), fullmatch=True))
    def check(domain: str) -> None:
        # Then the service takes every domain the pattern allows
        assert declared_domain(domain)

    check()
