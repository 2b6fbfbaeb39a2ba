"""Cached factories for collaborators, built on first use from settings.

Handlers ask these for repositories; tests either point settings at moto and call ``reset()``, or
pass their own collaborators to the library functions directly.
"""

from __future__ import annotations

from functools import cache

from shared import aws
from shared.repositories.api_keys import DynamoApiKeyStore
from shared.repositories.models import DynamoModelStore
from shared.repositories.organizations import DynamoOrganizationStore
from shared.repositories.usage import DynamoUsageStore
from shared.settings import get_settings


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


@cache
def usage_store() -> DynamoUsageStore:
    return DynamoUsageStore(aws.dynamodb_table(get_settings().usage_table))


_FACTORIES = (api_key_store, organization_store, model_store, usage_store)
