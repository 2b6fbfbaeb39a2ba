"""The one registry of the service's collaborators: every object a function keeps for the life of its
container is built here, on first use, from settings.

A factory marked ``@collaborator`` is cached (one per container: settings, boto3 clients, stores,
the HTTP pool, the JWT verifier, the predictor with its bundle cache, ...) and registered, so
``reset()`` forgets every one of them; tests and the local stack call it after changing the
environment, and no test can leak a client or a cache into the next. Unmarked factories build a fresh
object per call: the per-request services, which are cheap and must see a rotated secret.

Nothing else in ``shared`` caches a collaborator (``tests/unit/test_wiring.py`` checks it). Handlers
ask this module for what they need; the library's functions take their collaborators as arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from shared import aws
from shared.settings import (
    ActionLimitSettings,
    ActivationSettings,
    AudienceSyncSettings,
    ClosureSettings,
    DashboardSettings,
    DataSourceSettings,
    PaymentsSettings,
    Settings,
    SiteEventsSettings,
    SiteSnippetSettings,
    UserPoolSettings,
)

# The platform side (httpx, cryptography, pyjwt, the Graph client) and the idempotency utility are
# imported inside their factories, so functions that never use them (predict, models) do not pay
# for them at cold start.
if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    import botocore.session
    import httpx
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig
    from mypy_boto3_cognito_idp import CognitoIdentityProviderClient
    from mypy_boto3_dynamodb import DynamoDBClient, DynamoDBServiceResource
    from mypy_boto3_dynamodb.service_resource import Table
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_secretsmanager import SecretsManagerClient
    from mypy_boto3_stepfunctions import SFNClient

    from shared.audiences.lift import LiftService
    from shared.audiences.service import AudienceService
    from shared.audiences.stranded import StrandedUploadSweeper
    from shared.audiences.sync import AudienceSyncService, StartSync
    from shared.auth.jwt import JwtVerifier
    from shared.closure.service import ClosureService, Platform
    from shared.connections.lifecycle import ConnectionService
    from shared.datasources.failures import StepFailures
    from shared.datasources.service import DataSourceService
    from shared.events.overview import EventsOverview
    from shared.events.purchases import PurchaseEvents
    from shared.events.site_events import SiteEvents
    from shared.events.sites import EventSites
    from shared.limits.actions import OrgActionLimits
    from shared.ml.freshness import FreshnessRules
    from shared.payments.catalog import ProductCatalog
    from shared.payments.checkout import CheckoutService, HostedCheckoutLinks
    from shared.payments.connection import PaymentsConnectionService
    from shared.payments.orders import Orders
    from shared.payments.provider import PaymentsProvider
    from shared.payments.webhooks import WebhookHandler
    from shared.platform.client import GraphClient
    from shared.predictions.predict import BundleCache, Predictor, WholeBundles
    from shared.publishing.checkout import CheckoutRoutes
    from shared.publishing.service import PublishingService
    from shared.readiness.service import ReadinessService
    from shared.repositories.action_counts import DynamoActionCounts
    from shared.repositories.activations import StepFunctionsStarter
    from shared.repositories.api_keys import DynamoApiKeyStore
    from shared.repositories.audiences import DynamoAudienceStore
    from shared.repositories.blobs import S3BlobStore
    from shared.repositories.closure import DynamoClosureStore
    from shared.repositories.connections import DynamoConnectionStore, DynamoOAuthStateStore
    from shared.repositories.datasources import DynamoDatasetStore
    from shared.repositories.envelope import EnvelopeCipher
    from shared.repositories.events import DynamoEventSiteStore, DynamoEventStore
    from shared.repositories.models import DynamoModelStore
    from shared.repositories.organizations import DynamoOrganizationStore
    from shared.repositories.payments import DynamoPaymentsStore
    from shared.repositories.prediction_path import DynamoKeyDayMeter
    from shared.repositories.secrets import (
        PaymentsSecrets,
        PaymentsSecretsSource,
        PlatformSecrets,
        PlatformSecretsSource,
    )
    from shared.repositories.usage import DynamoUsageStore
    from shared.repositories.user_pool import CognitoUserPool
    from shared.targeting.service import CoverageCache, TargetingService

# Every cached factory, in the order they were declared; reset() clears each.
_REGISTRY: list[Any] = []


def collaborator[**P, T](factory: Callable[P, T]) -> Callable[P, T]:
    """Cache ``factory``'s result (per arguments) for the life of the container, and register it so
    ``reset()`` forgets it."""
    cached = cache(factory)
    _REGISTRY.append(cached)
    return cast("Callable[P, T]", cached)


def reset(*, keep: Iterable[Callable[..., Any]] = ()) -> None:
    """Forget every cached collaborator, the settings included (after the environment changed),
    except the factories in ``keep`` (a SnapStart restore keeps the loaded bundles and renews
    everything that holds credentials or connections)."""
    kept = {id(factory) for factory in keep}
    for cached in _REGISTRY:
        if id(cached) not in kept:
            cached.cache_clear()


def registered() -> tuple[Callable[..., Any], ...]:
    """Every cached factory (for the test that ``reset()`` clears them all)."""
    return tuple(_REGISTRY)


# Settings and AWS clients


@collaborator
def settings() -> Settings:
    """The process-wide settings, read from the environment on first call."""
    return Settings()


@collaborator
def activation_settings() -> ActivationSettings:
    """The settings only the function that starts activations has."""
    return ActivationSettings()


@collaborator
def audience_sync_settings() -> AudienceSyncSettings:
    """The settings only the functions that start audience syncs have."""
    return AudienceSyncSettings()


@collaborator
def data_source_settings() -> DataSourceSettings:
    """The settings only the function that starts data source syncs has."""
    return DataSourceSettings()


@collaborator
def user_pool_settings() -> UserPoolSettings:
    """The user pool, which only the account closure step reads."""
    return UserPoolSettings()


@collaborator
def closure_settings() -> ClosureSettings:
    """The settings only the function that starts account closures has."""
    return ClosureSettings()


@collaborator
def payments_settings() -> PaymentsSettings:
    """The settings only the functions that call the card-payment provider have."""
    return PaymentsSettings()


@collaborator
def dashboard_settings() -> DashboardSettings:
    """The dashboard's address (payments onboarding comes back to it)."""
    return DashboardSettings()


@collaborator
def site_events_settings() -> SiteEventsSettings:
    """The public site events endpoint's limits."""
    return SiteEventsSettings()


@collaborator
def action_limit_settings() -> ActionLimitSettings:
    """Each organization's limits on the expensive dashboard actions."""
    return ActionLimitSettings()


@collaborator
def site_snippet_settings() -> SiteSnippetSettings:
    """The site events endpoint's address, for the snippet the Events page shows."""
    return SiteSnippetSettings()


@collaborator
def aws_session() -> botocore.session.Session:
    """The botocore session every client comes from (its credentials are refreshed by ``reset()``)."""
    return aws.session()


@collaborator
def dynamodb_client() -> DynamoDBClient:
    return aws.client("dynamodb", settings(), aws_session())


@collaborator
def dynamodb_resource() -> DynamoDBServiceResource:
    return aws.dynamodb_resource(settings())


@collaborator
def table(name: str) -> Table:
    """The DynamoDB table ``name``."""
    return dynamodb_resource().Table(name)


@collaborator
def cognito_client() -> CognitoIdentityProviderClient:
    return aws.client("cognito-idp", settings(), aws_session())


@collaborator
def s3_client() -> S3Client:
    return aws.client("s3", settings(), aws_session())


@collaborator
def kms_client() -> KMSClient:
    return aws.client("kms", settings(), aws_session())


@collaborator
def secretsmanager_client() -> SecretsManagerClient:
    return aws.client("secretsmanager", settings(), aws_session())


@collaborator
def stepfunctions_client() -> SFNClient:
    return aws.client("stepfunctions", settings(), aws_session())


# Stores


@collaborator
def api_key_store() -> DynamoApiKeyStore:
    from shared.repositories.api_keys import DynamoApiKeyStore

    return DynamoApiKeyStore(table(settings().main_table))


@collaborator
def organization_store() -> DynamoOrganizationStore:
    from shared.repositories.organizations import DynamoOrganizationStore

    return DynamoOrganizationStore(table(settings().main_table))


@collaborator
def model_store() -> DynamoModelStore:
    from shared.repositories.models import DynamoModelStore

    return DynamoModelStore(table(settings().main_table))


@collaborator
def usage_store() -> DynamoUsageStore:
    from shared.repositories.usage import DynamoUsageStore

    return DynamoUsageStore(table(settings().usage_table))


@collaborator
def connection_store() -> DynamoConnectionStore:
    from shared.repositories.connections import DynamoConnectionStore

    return DynamoConnectionStore(table(settings().main_table))


@collaborator
def oauth_state_store() -> DynamoOAuthStateStore:
    from shared.repositories.connections import DynamoOAuthStateStore

    return DynamoOAuthStateStore(table(settings().main_table))


@collaborator
def audience_store() -> DynamoAudienceStore:
    from shared.repositories.audiences import DynamoAudienceStore

    return DynamoAudienceStore(table(settings().main_table))


@collaborator
def data_blobs() -> S3BlobStore:
    """The data bucket: uploaded sources and CSV snapshots."""
    from shared.repositories.blobs import S3BlobStore

    return S3BlobStore(s3_client(), settings().data_bucket, settings().kms_key_id)


@collaborator
def artifact_blobs() -> S3BlobStore:
    """The artifacts bucket: trained models and their training users."""
    from shared.repositories.blobs import S3BlobStore

    return S3BlobStore(s3_client(), settings().artifacts_bucket, settings().kms_key_id)


@collaborator
def envelope_cipher() -> EnvelopeCipher:
    from shared.repositories.envelope import EnvelopeCipher

    return EnvelopeCipher(kms_client(), settings().kms_key_id)


# Identity and requests


@collaborator
def jwt_verifier() -> JwtVerifier:
    """The verifier for the configured user pool, its JWKS fetched once and kept for
    ``JWKS_CACHE_SECONDS``."""
    # PyJWT pulls in cryptography (~70 ms); API-key functions (predict, models) never verify a JWT.
    from shared.auth.jwt import BoundedJwkClient, JwtVerifier

    config = settings()
    jwks = BoundedJwkClient(config.effective_jwks_url, cache_keys=True, lifespan=config.jwks_cache_seconds)
    return JwtVerifier(
        issuer=config.jwt_issuer,
        audience=config.jwt_audience,
        signing_key_for=lambda token: jwks.get_signing_key_from_jwt(token).key,
    )


# How long a request's Idempotency-Key answers with the first result.
IDEMPOTENCY_KEY_LIFETIME_SECONDS = 24 * 3600


@collaborator
def idempotency_store() -> DynamoDBPersistenceLayer:
    """The idempotency table, where Powertools keeps each Idempotency-Key's result."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(table_name=settings().idempotency_table, boto3_client=dynamodb_client())


@collaborator
def idempotency_config() -> IdempotencyConfig:
    """Keys scoped to ``[org_id, key]``, the body's hash validated (``shared.idempotency``)."""
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(
        event_key_jmespath="[org_id, key]",
        payload_validation_jmespath="body_sha256",
        expires_after_seconds=IDEMPOTENCY_KEY_LIFETIME_SECONDS,
    )


# The platform


@collaborator
def http_client() -> httpx.Client:
    """One connection pool per Lambda container for every platform call."""
    import httpx

    return httpx.Client(timeout=settings().platform_timeout_seconds)


@collaborator
def platform_secrets_source() -> PlatformSecretsSource:
    """The platform secrets, kept per container and re-read after ``SECRET_MAX_AGE``."""
    from shared.clock import utc_now
    from shared.repositories.secrets import PlatformSecretsSource

    return PlatformSecretsSource(secretsmanager_client(), settings().platform_secrets_arn, clock=utc_now)


def platform_secrets() -> PlatformSecrets:
    """The app secret and OAuth state key as of now (a rotation shows within the cache window)."""
    return platform_secrets_source().current()


def graph_client() -> GraphClient:
    """A Graph client with the app credentials and no user token."""
    from shared.platform.client import GraphClient

    return GraphClient.from_settings(settings(), app_secret=platform_secrets().app_secret, http=http_client())


def connection_service() -> ConnectionService:
    from shared.clock import utc_now
    from shared.connections.lifecycle import ConnectionPolicy, ConnectionService

    config = settings()
    policy = ConnectionPolicy(
        dialog_url=config.platform_dialog_url,
        api_version=config.platform_api_version,
        redirect_uri=config.platform_redirect_uri,
        state_key=platform_secrets().oauth_state_key,
        state_ttl=timedelta(seconds=config.oauth_state_ttl_seconds),
    )
    return ConnectionService(
        connections=connection_store(),
        states=oauth_state_store(),
        cipher=envelope_cipher(),
        graph=graph_client(),
        policy=policy,
        clock=utc_now,
    )


# Services


def audience_service() -> AudienceService:
    from shared.audiences.service import AudienceService
    from shared.clock import utc_now

    return AudienceService(
        audiences=audience_store(),
        blobs=data_blobs(),
        connections=connection_service(),
        clock=utc_now,
        segments=targeting_service,
        publishing=publishing_service,
        max_upload_bytes=settings().audience_upload_max_bytes,
        part_users=settings().activation_part_users,
        engine_memory_mb=settings().engine_memory_mb,
        chunk_bytes=settings().activation_chunk_bytes,
    )


def lift_service() -> LiftService:
    from shared.audiences.lift import LiftService

    return LiftService(
        audiences=audience_store(), datasets=dataset_store(), blobs=data_blobs(), models=model_store()
    )


def stranded_upload_sweeper() -> StrandedUploadSweeper:
    """Resumes (a new attempt in the activation state machine) or fails audiences a worker left
    mid-upload."""
    from functools import partial

    from shared.audiences.stranded import StrandedUploadSweeper, SweepPolicy
    from shared.clock import utc_now

    config = settings()
    starter = activation_starter()
    return StrandedUploadSweeper(
        audiences=audience_store(),
        connections=connection_store(),
        blobs=data_blobs(),
        executions=starter,
        resume=partial(audience_service().resume_stranded, start=starter),
        clock=utc_now,
        policy=SweepPolicy(
            stranded_after=timedelta(minutes=config.stranded_upload_after_minutes),
            max_resumes=config.stranded_upload_max_resumes,
        ),
    )


def audience_sync_service() -> AudienceSyncService:
    """Segment audiences' sync, able to start runs (the scheduler, refresh now)."""
    return _audience_sync(audience_sync_starter())


def audience_sync_steps() -> AudienceSyncService:
    """Segment audiences' sync for what never starts a run (the state machine's steps, the schedule
    settings): not given the state machine's ARN, which would make the state machine depend on itself."""
    return _audience_sync(_no_start)


def _freshness_rules() -> FreshnessRules:
    from shared.ml.freshness import FreshnessRules

    return FreshnessRules.from_settings(settings())


def _audience_sync(start: StartSync) -> AudienceSyncService:
    from shared.audiences.sync import AudienceSyncService
    from shared.clock import utc_now

    return AudienceSyncService(
        audiences=audience_store(),
        blobs=data_blobs(),
        connections=connection_service(),
        connection_store=connection_store(),
        models=model_store(),
        segments=targeting_service,
        rules=_freshness_rules,
        start=start,
        clock=utc_now,
    )


def _no_start(name: str, payload: dict[str, str]) -> None:
    raise RuntimeError("this function does not start audience syncs")


def audience_sync_starter() -> StepFunctionsStarter:
    from shared.repositories.activations import StepFunctionsStarter

    return StepFunctionsStarter(
        stepfunctions_client(), audience_sync_settings().audience_sync_state_machine_arn
    )


def hosted_checkout() -> HostedCheckoutLinks:
    """What publishing asks of payments: whether the hosted checkout takes the organization's payments,
    whether it can sell a product (by the synced products' catalog), and a product's checkout address."""
    from shared.datasources.catalog import Catalogs
    from shared.payments.checkout import HostedCheckoutLinks

    return HostedCheckoutLinks(payments_store(), listings=Catalogs(dataset_store(), data_blobs()))


def checkout_routes() -> CheckoutRoutes:
    from shared.publishing.checkout import CheckoutRoutes

    return CheckoutRoutes(hosted_checkout())


def publishing_service() -> PublishingService:
    """Publishing for Publish advert, whose hosted-checkout link is checked against the synced
    catalog (read with numpy)."""
    return _publishing(hosted_checkout())


def publishing_without_checkout() -> PublishingService:
    """Publishing for the functions that never link an advert to a checkout (the Ads Manager link,
    Delete advert): without the hosted checkout, they neither read the catalog nor import numpy."""
    return _publishing(None)


def _publishing(checkout: HostedCheckoutLinks | None) -> PublishingService:
    from shared.clock import utc_now
    from shared.publishing.service import PublishingPolicy, PublishingService

    policy = PublishingPolicy(ads_manager_url=settings().platform_ads_manager_url)
    return PublishingService(
        audiences=audience_store(),
        blobs=data_blobs(),
        connections=connection_service(),
        checkout=checkout,
        policy=policy,
        clock=utc_now,
    )


@collaborator
def key_day_meter() -> DynamoKeyDayMeter:
    """The key's day items, where a prediction is authorised and counted (and a revocation marked)."""
    from shared.repositories.prediction_path import DynamoKeyDayMeter

    return DynamoKeyDayMeter(dynamodb_client(), settings().usage_table)


@collaborator
def background() -> ThreadPoolExecutor:
    """Threads for the AWS calls a request issues beside its main one (boto3 clients are
    thread-safe; resources are not, so only clients are used there)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="aws")


@collaborator
def bundle_cache() -> BundleCache:
    """Scoring bundles in memory (no AWS client inside: kept across a SnapStart restore)."""
    from shared.predictions.predict import BundleCache

    return BundleCache()


@collaborator
def predictor() -> Predictor:
    """The predictor with its key, model and bundle caches: one per container, so a warm prediction
    makes only its two writes."""
    from shared.ml.freshness import FreshnessRules
    from shared.predictions.predict import CachedKeys, Predictor
    from shared.repositories.prediction_path import DynamoKeyReader, DynamoModelCounter

    config = settings()
    return Predictor(
        keys=CachedKeys(DynamoKeyReader(dynamodb_client(), config.main_table)),
        meter=key_day_meter(),
        models=DynamoModelCounter(dynamodb_client(), config.main_table),
        blobs=artifact_blobs(),
        bundles=bundle_cache(),
        rules=FreshnessRules.from_settings(config),
        background=background(),
    )


def activation_starter() -> StepFunctionsStarter:
    from shared.repositories.activations import StepFunctionsStarter

    return StepFunctionsStarter(stepfunctions_client(), activation_settings().activation_state_machine_arn)


@collaborator
def dataset_store() -> DynamoDatasetStore:
    from shared.repositories.datasources import DynamoDatasetStore

    return DynamoDatasetStore(table(settings().main_table), dynamodb_client())


def data_source_service(*, engine_memory_mb: int | None = None) -> DataSourceService:
    """The data source service. ``engine_memory_mb``: its engine's fixed limit, which only the sync
    job, the one caller that opens an engine, gives it (``data_source_sync``)."""
    from shared.clock import utc_now
    from shared.datasources.service import DataSourceService

    return DataSourceService(
        datasets=dataset_store(),
        blobs=data_blobs(),
        refunds=payments_store(),
        clock=utc_now,
        max_file_bytes=settings().data_source_max_file_bytes,
        engine_memory_mb=engine_memory_mb,
    )


def data_source_sync() -> DataSourceService:
    """The data source service as the sync job runs a sync (``run_sync``): its engine opened with the
    job's fixed limit (``ENGINE_MEMORY_MB`` on DataSourceSyncJobFunction)."""
    return data_source_service(engine_memory_mb=settings().engine_memory_mb)


@collaborator
def event_store() -> DynamoEventStore:
    from shared.repositories.events import DynamoEventStore

    return DynamoEventStore(table(settings().main_table), dynamodb_client())


def purchase_events() -> PurchaseEvents:
    """The data source state machine's purchases step: a version's new orders to the pixel."""
    from shared.clock import utc_now
    from shared.dataplane.engine import session
    from shared.events.purchases import PurchaseEvents

    return PurchaseEvents(
        events=event_store(),
        datasets=dataset_store(),
        blobs=data_blobs(),
        connections=connection_service(),
        session=session,
        clock=utc_now,
        models=model_store(),
        bundles=whole_bundles(),
        counted=True,
        checkout_orders=payments_store(),
    )


@collaborator
def event_site_store() -> DynamoEventSiteStore:
    from shared.repositories.events import DynamoEventSiteStore

    return DynamoEventSiteStore(table(settings().main_table), dynamodb_client())


@collaborator
def site_events() -> SiteEvents:
    """The public site events endpoint (kept per container: its relay targets are cached)."""
    from shared.clock import utc_now
    from shared.events.site_events import RelayTargets, SiteEvents, SiteLimits

    limits = site_events_settings()
    return SiteEvents(
        admissions=event_site_store(),
        tally=event_site_store(),
        targets=RelayTargets(connection_service()),
        clock=utc_now,
        limits=SiteLimits(
            per_window=limits.site_events_per_window,
            window_seconds=limits.site_events_window_seconds,
            per_request=limits.site_events_per_request,
        ),
    )


def events_overview() -> EventsOverview:
    """The Events page's report: day counts, the latest rejections."""
    from shared.clock import utc_now
    from shared.events.overview import EventsOverview

    return EventsOverview(counts=event_site_store(), purchases=event_store(), clock=utc_now)


def event_sites() -> EventSites:
    """The Events page's site settings: domains, test event code, the site key."""
    from shared.clock import utc_now
    from shared.events.sites import EventSites

    return EventSites(store=event_site_store(), clock=utc_now)


def data_source_step_failures() -> StepFailures:
    """The data source state machine's Record tasks (a sync or a training that failed unrecorded)."""
    from shared.clock import utc_now
    from shared.datasources.failures import StepFailures

    return StepFailures(datasets=dataset_store(), clock=utc_now)


def sync_starter() -> StepFunctionsStarter:
    """Starts the data source state machine: validate and store a sync, then train both models."""
    from shared.repositories.activations import StepFunctionsStarter

    return StepFunctionsStarter(stepfunctions_client(), data_source_settings().data_source_state_machine_arn)


@collaborator
def coverage_cache() -> CoverageCache:
    """Identifier coverage per dataset version and each model's join to it, kept per container."""
    from shared.targeting.service import CoverageCache

    return CoverageCache(data_blobs())


@collaborator
def whole_bundles() -> WholeBundles:
    """Whole scoring bundles for targeting, kept per container (the predictor reads shards)."""
    from shared.predictions.predict import WholeBundles

    return WholeBundles(artifact_blobs())


@collaborator
def action_count_store() -> DynamoActionCounts:
    from shared.repositories.action_counts import DynamoActionCounts

    return DynamoActionCounts(table(settings().main_table))


@collaborator
def action_limits() -> OrgActionLimits:
    """Each organization's limits on previews, retrains and activations (kept per container: it
    remembers which organizations' windows are full)."""
    from shared.clock import utc_now
    from shared.limits.actions import ActionLimit, OrgActionLimits

    limits = action_limit_settings()
    return OrgActionLimits(
        counts=action_count_store(),
        limits={
            "targeting_preview": ActionLimit(
                limits.org_limit_targeting_previews, limits.org_limit_targeting_previews_window_seconds
            ),
            "retrain": ActionLimit(limits.org_limit_retrains, limits.org_limit_retrains_window_seconds),
            "activation": ActionLimit(
                limits.org_limit_activations, limits.org_limit_activations_window_seconds
            ),
        },
        clock=utc_now,
    )


def targeting_service() -> TargetingService:
    from shared.clock import utc_now
    from shared.ml.freshness import FreshnessRules
    from shared.targeting.service import TargetingService

    return TargetingService(
        models=model_store(),
        datasets=dataset_store(),
        bundles=whole_bundles(),
        coverages=coverage_cache(),
        blobs=data_blobs(),
        rules=FreshnessRules.from_settings(settings()),
        clock=utc_now,
        shards=whole_bundles(),  # a segment's users are scored shard by shard
    )


def readiness_service() -> ReadinessService:
    from shared.clock import utc_now
    from shared.ml.freshness import FreshnessRules
    from shared.readiness.service import ReadinessService

    return ReadinessService(
        connections=connection_service(),
        models=model_store(),
        datasets=dataset_store(),
        coverages=coverage_cache(),
        rules=FreshnessRules.from_settings(settings()),
        clock=utc_now,
        events=event_site_store(),
    )


# Account closure


@collaborator
def closure_store() -> DynamoClosureStore:
    from shared.repositories.closure import DynamoClosureStore

    return DynamoClosureStore(table(settings().main_table))


def closure_platform() -> Platform:
    """What deletes adverts and audiences on the platform (reads the platform secrets)."""
    from shared.closure.service import Platform

    return Platform(audiences=audience_service(), adverts=publishing_service())


def user_pool() -> CognitoUserPool:
    """The dashboard's users in the user pool (account closure disables and deletes them; only its
    step function knows the pool)."""
    from shared.repositories.user_pool import CognitoUserPool

    return CognitoUserPool(cognito_client(), user_pool_settings().user_pool_id)


def closure_service() -> ClosureService:
    from shared.clock import utc_now
    from shared.closure.service import ClosureService
    from shared.repositories.closure import DynamoOrganizationItems, S3PrefixEraser

    config = settings()
    return ClosureService(
        closures=closure_store(),
        organizations=organization_store(),
        items=DynamoOrganizationItems(
            table(config.main_table), table(config.usage_table), table(config.idempotency_table)
        ),
        objects={
            "data": S3PrefixEraser(s3_client(), config.data_bucket),
            "artifacts": S3PrefixEraser(s3_client(), config.artifacts_bucket),
        },
        audiences=audience_store(),
        connections=connection_store(),
        platform=closure_platform,
        users=_no_user_pool,
        payments=_no_payments,
        clock=utc_now,
    )


def _no_user_pool() -> Any:
    raise AssertionError("only the closure step (wiring.closure_worker) deletes users from the pool")


def _no_payments() -> Any:
    raise AssertionError("only the closure step (wiring.closure_worker) stops the payments")


def closure_worker() -> ClosureService:
    """The closure service of the state machine's step, the one that disables and deletes the
    organization's users in the user pool (only that function knows the pool) and stops its card
    payments at the provider."""
    from dataclasses import replace

    pool = user_pool()
    # With the provider's client (the platform's key): the access phase expires open checkouts.
    payments = payments_connection_service()
    return replace(closure_service(), users=lambda: pool, payments=lambda: payments)


def closure_starter() -> StepFunctionsStarter:
    """Starts the account closure state machine."""
    from shared.repositories.activations import StepFunctionsStarter

    return StepFunctionsStarter(stepfunctions_client(), closure_settings().closure_state_machine_arn)


# Card payments (the hosted quick-pay checkout)


@collaborator
def payments_store() -> DynamoPaymentsStore:
    from shared.repositories.payments import DynamoPaymentsStore

    return DynamoPaymentsStore(table(settings().main_table), dynamodb_client())


@collaborator
def payments_secrets_source() -> PaymentsSecretsSource:
    """The payments secrets, kept per container and re-read after ``SECRET_MAX_AGE``."""
    from shared.clock import utc_now
    from shared.repositories.secrets import PaymentsSecretsSource

    return PaymentsSecretsSource(
        secretsmanager_client(), payments_settings().payments_secrets_arn, clock=utc_now
    )


def payments_secrets() -> PaymentsSecrets:
    """The provider's key, the webhook signing secret and the onboarding state key as of now."""
    return payments_secrets_source().current()


@collaborator
def _payments_provider_for(secret_key: str) -> PaymentsProvider:
    # One client (and connection pool) per container and key: a rotated key builds a new one.
    from shared.payments.provider import PaymentsProvider

    config = payments_settings()
    return PaymentsProvider(
        secret_key,
        api_url=config.payments_api_url,
        timeout=payments_attempt_timeout,
        max_retries=config.payments_max_retries,
    )


def payments_attempt_timeout() -> float:
    """The longest the next call to the payments provider may take: its configured timeout, or the
    time the invocation has left less the reserve for what follows (``shared.deadline``)."""
    from shared import deadline

    return deadline.call_timeout(
        payments_settings().payments_timeout_seconds, reserve=deadline.PLATFORM_RESERVE_SECONDS
    )


def payments_provider() -> PaymentsProvider:
    """The card-payment provider's client with the platform's current secret key (imports the
    provider's SDK: only the functions that call the provider build it)."""
    return _payments_provider_for(payments_secrets().secret_key)


def payments_connection_status() -> PaymentsConnectionService:
    """The payments connection as far as its record goes (the status): no secret, no provider."""
    from shared.clock import utc_now
    from shared.payments.connection import PaymentsConnectionService

    return PaymentsConnectionService(
        store=payments_store(),
        checkouts=payments_store(),
        states=oauth_state_store(),
        cipher=envelope_cipher(),
        clock=utc_now,
    )


def payments_connection_service() -> PaymentsConnectionService:
    """The payments connection with the provider (disconnect expires open checkouts there)."""
    from dataclasses import replace

    return replace(payments_connection_status(), provider=payments_provider())


def payments_onboarding_service() -> PaymentsConnectionService:
    """The payments connection with the provider and what onboarding needs: the dashboard page it
    comes back to and the key that signs its states."""
    from dataclasses import replace

    from shared.payments.connection import OnboardingPolicy

    policy = OnboardingPolicy(
        callback_page=f"{dashboard_settings().dashboard_url.rstrip('/')}/payments-callback.html",
        state_key=payments_secrets().onboarding_state_key,
        state_ttl=timedelta(seconds=payments_settings().payments_onboarding_ttl_seconds),
    )
    return replace(payments_connection_service(), policy=policy)


@collaborator
def product_catalog() -> ProductCatalog:
    """Products read from the synced products files, each file kept under /tmp by the container."""
    from shared.payments.catalog import ProductCatalog

    return ProductCatalog(dataset_store(), data_blobs())


def checkout_pages() -> CheckoutService:
    """The hosted checkout's pages: the product, and after paying or cancelling (no secret read)."""
    from shared.clock import utc_now
    from shared.payments.checkout import CheckoutService

    return CheckoutService(
        connections=payments_store(),
        checkouts=payments_store(),
        catalog=product_catalog(),
        clock=utc_now,
    )


def checkout_service() -> CheckoutService:
    """The hosted checkout that starts payments: the provider, and the cipher for the account id."""
    from dataclasses import replace

    return replace(checkout_pages(), cipher=envelope_cipher(), provider=payments_provider())


def payments_webhook() -> WebhookHandler:
    """The provider's webhook deliveries: verified with the endpoint's signing secret, turned into
    orders, and paid orders sent to the ad account's pixel; the provider is asked whose a disputed
    charge is."""
    from shared.clock import utc_now
    from shared.payments.pixel import PixelPurchases
    from shared.payments.webhooks import WebhookHandler

    return WebhookHandler(
        store=payments_store(),
        accounts=payments_connection_status(),
        charges=payments_provider(),
        buyers=data_blobs(),
        purchases=PixelPurchases(
            connection_service(), utc_now, tally=event_site_store(), claims=payments_store()
        ),
        secret=payments_secrets().webhook_secret,
        clock=utc_now,
    )


def payments_orders() -> Orders:
    from shared.payments.orders import Orders

    return Orders(payments_store())
