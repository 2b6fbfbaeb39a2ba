"""Cached factories for collaborators, built on first use from settings.

Handlers ask these for repositories; tests either point settings at moto and call ``reset()``, or
pass their own collaborators to the library functions directly.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from shared import aws
from shared.repositories.api_keys import DynamoApiKeyStore
from shared.repositories.models import DynamoModelStore
from shared.repositories.organizations import DynamoOrganizationStore
from shared.repositories.usage import DynamoUsageStore
from shared.settings import get_settings

# The platform side (httpx, cryptography, the Graph client) is imported inside its factories, so
# functions that never call the platform (predict, models) do not pay for it at cold start.
if TYPE_CHECKING:
    import httpx
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig

    from shared.audiences.service import AudienceService
    from shared.connections.lifecycle import ConnectionService
    from shared.platform.client import GraphClient
    from shared.predictions.predict import Predictor
    from shared.publishing.checkout import CheckoutLinks
    from shared.publishing.service import PublishingService
    from shared.repositories.activations import StepFunctionsStarter
    from shared.repositories.audiences import DynamoAudienceStore
    from shared.repositories.blobs import S3BlobStore
    from shared.repositories.connections import DynamoConnectionStore, DynamoOAuthStateStore
    from shared.repositories.envelope import EnvelopeCipher
    from shared.repositories.secrets import PlatformSecrets


@cache
def api_key_store() -> DynamoApiKeyStore:
    return DynamoApiKeyStore(aws.dynamodb_table(get_settings().main_table))


@cache
def organization_store() -> DynamoOrganizationStore:
    return DynamoOrganizationStore(aws.dynamodb_table(get_settings().main_table))


def reset() -> None:
    """Forget every cached collaborator and the settings (after the environment changed)."""
    from shared.auth.jwt import default_verifier

    get_settings.cache_clear()
    aws.reset_clients()
    default_verifier.cache_clear()
    for factory in _FACTORIES:
        factory.cache_clear()


@cache
def model_store() -> DynamoModelStore:
    return DynamoModelStore(aws.dynamodb_table(get_settings().main_table))


_FACTORIES: tuple[Any, ...] = (api_key_store, organization_store, model_store)


@cache
def http_client() -> httpx.Client:
    """One connection pool per Lambda container for every platform call."""
    import httpx

    return httpx.Client(timeout=get_settings().platform_timeout_seconds)


@cache
def platform_secrets() -> PlatformSecrets:
    from shared.repositories.secrets import load_platform_secrets

    return load_platform_secrets(get_settings())


def graph_client() -> GraphClient:
    """A Graph client with the app credentials and no user token."""
    from shared.platform.client import GraphClient

    settings = get_settings().model_copy(update={"platform_app_secret": platform_secrets().app_secret})
    return GraphClient.from_settings(settings, http=http_client())


@cache
def envelope_cipher() -> EnvelopeCipher:
    from shared.repositories.envelope import EnvelopeCipher

    return EnvelopeCipher(aws.client("kms"), get_settings().kms_key_id)


@cache
def connection_store() -> DynamoConnectionStore:
    from shared.repositories.connections import DynamoConnectionStore

    return DynamoConnectionStore(aws.dynamodb_table(get_settings().main_table))


@cache
def oauth_state_store() -> DynamoOAuthStateStore:
    from shared.repositories.connections import DynamoOAuthStateStore

    return DynamoOAuthStateStore(aws.dynamodb_table(get_settings().main_table))


def connection_service() -> ConnectionService:
    from shared.clock import utc_now
    from shared.connections.lifecycle import ConnectionPolicy, ConnectionService

    settings = get_settings()
    policy = ConnectionPolicy(
        dialog_url=settings.platform_dialog_url,
        api_version=settings.platform_api_version,
        redirect_uri=settings.platform_redirect_uri,
        state_key=platform_secrets().oauth_state_key,
        state_ttl=timedelta(seconds=settings.oauth_state_ttl_seconds),
    )
    return ConnectionService(
        connections=connection_store(),
        states=oauth_state_store(),
        cipher=envelope_cipher(),
        graph=graph_client(),
        policy=policy,
        clock=utc_now,
    )


_FACTORIES += (http_client, platform_secrets, envelope_cipher, connection_store, oauth_state_store)


@cache
def audience_store() -> DynamoAudienceStore:
    from shared.repositories.audiences import DynamoAudienceStore

    return DynamoAudienceStore(aws.dynamodb_table(get_settings().main_table))


@cache
def data_blobs() -> S3BlobStore:
    """The data bucket: uploaded sources and CSV snapshots."""
    from shared.repositories.blobs import S3BlobStore

    settings = get_settings()
    return S3BlobStore(aws.client("s3"), settings.data_bucket, settings.kms_key_id)


def audience_service() -> AudienceService:
    from shared.audiences.service import AudienceService
    from shared.clock import utc_now

    return AudienceService(
        audiences=audience_store(), blobs=data_blobs(), connections=connection_service(), clock=utc_now
    )


_FACTORIES += (audience_store, data_blobs)


def _checkout_domains() -> tuple[str, ...]:
    domains = get_settings().checkout_allowed_domains.split(",")
    return tuple(domain.strip() for domain in domains if domain.strip())


def checkout_links() -> CheckoutLinks:
    from shared.publishing.checkout import CheckoutLinks

    return CheckoutLinks(store=organization_store(), allowed_domains=_checkout_domains())


def publishing_service() -> PublishingService:
    from shared.clock import utc_now
    from shared.publishing.service import PublishingPolicy, PublishingService

    settings = get_settings()
    policy = PublishingPolicy(
        checkout_domains=_checkout_domains(), ads_manager_url=settings.platform_ads_manager_url
    )
    return PublishingService(
        audiences=audience_store(),
        blobs=data_blobs(),
        connections=connection_service(),
        checkout=organization_store(),
        policy=policy,
        clock=utc_now,
    )


@cache
def usage_store() -> DynamoUsageStore:
    return DynamoUsageStore(aws.dynamodb_table(get_settings().usage_table))


_FACTORIES += (usage_store,)


@cache
def artifact_blobs() -> S3BlobStore:
    """The artifacts bucket: trained models and their training users."""
    from shared.repositories.blobs import S3BlobStore

    settings = get_settings()
    return S3BlobStore(aws.client("s3"), settings.artifacts_bucket, settings.kms_key_id)


@cache
def predictor() -> Predictor:
    """The predictor with its bundle cache: one per container, so warm calls skip S3."""
    from shared.ml.freshness import FreshnessRules
    from shared.predictions.predict import BundleCache, Predictor

    return Predictor(
        models=model_store(),
        usage=usage_store(),
        bundles=BundleCache(artifact_blobs()),
        rules=FreshnessRules.from_settings(get_settings()),
    )


_FACTORIES += (artifact_blobs, predictor)


# How long a request's Idempotency-Key answers with the first result.
IDEMPOTENCY_KEY_LIFETIME_SECONDS = 24 * 3600


@cache
def idempotency_store() -> DynamoDBPersistenceLayer:
    """The idempotency table, where Powertools keeps each Idempotency-Key's result."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(
        table_name=get_settings().idempotency_table, boto3_client=aws.client("dynamodb")
    )


@cache
def idempotency_config() -> IdempotencyConfig:
    """Keys scoped to ``[org_id, key]``, the body's hash validated (``shared.idempotency``)."""
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(
        event_key_jmespath="[org_id, key]",
        payload_validation_jmespath="body_sha256",
        expires_after_seconds=IDEMPOTENCY_KEY_LIFETIME_SECONDS,
    )


_FACTORIES += (idempotency_store, idempotency_config)


def activation_starter() -> StepFunctionsStarter:
    from shared.repositories.activations import StepFunctionsStarter

    return StepFunctionsStarter(aws.client("stepfunctions"), get_settings().activation_state_machine_arn)
