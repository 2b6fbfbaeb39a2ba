"""The botocore session every client comes from: its data loader knows the services the code uses."""

from __future__ import annotations

import os
from collections.abc import Iterator
from unittest import mock

import pytest
from botocore.exceptions import UnknownServiceError
from botocore.loaders import Loader

from shared import aws

CLIENT_SERVICES = ("cognito-idp", "dynamodb", "kms", "s3", "secretsmanager", "stepfunctions")


@pytest.fixture
def credentials() -> Iterator[None]:
    environment = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    with mock.patch.dict(os.environ, environment):
        yield


def test_the_loader_answers_as_botocore_does_for_the_services_in_use() -> None:
    # Given botocore's own loader and the session's
    stock, known = Loader(), aws.session().get_component("data_loader")

    # When both list the services having a model and endpoint rules
    for type_name in ("service-2", "endpoint-rule-set-1"):
        listed = known.list_available_services(type_name)

        # Then the session's lists exactly the services in use that botocore lists
        assert listed == [name for name in stock.list_available_services(type_name) if name in aws.SERVICES]
        assert set(CLIENT_SERVICES) <= set(listed)


@pytest.mark.usefixtures("credentials")
def test_a_client_of_every_service_in_use_is_built() -> None:
    # Given a session
    session = aws.session()

    # When a client of each service the code uses is built / Then each is the named service's
    for service in CLIENT_SERVICES:
        client = session.create_client(service, region_name="eu-west-1")
        assert client.meta.service_model.service_name == service


@pytest.mark.usefixtures("credentials")
def test_a_client_of_another_service_is_refused_naming_the_known_ones() -> None:
    # Given a session / When a client of a service the code does not use is asked for
    with pytest.raises(UnknownServiceError) as refused:
        aws.session().create_client("ec2", region_name="eu-west-1")

    # Then botocore's error names the services that are known
    assert "dynamodb" in str(refused.value)
