"""POST /client/predict/{modelName} and the model catalogue, end to end with trained demo models."""

from __future__ import annotations

import threading
from typing import Any

import httpx

from local.seed import PURCHASE_MODEL, RECOMMENDATION_MODEL, DemoCredentials
from local.stack import LocalStack
from shared import wiring


def predict(api: httpx.Client, key: str, model: str, payload: dict[str, Any]) -> httpx.Response:
    return api.post(f"/client/predict/{model}", json=payload, headers={"X-Service-Api-Key": key})


def test_purchase_likelihood_for_a_known_user_and_product(api: httpx.Client, demo: DemoCredentials) -> None:
    # When
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}
    response = predict(api, demo.api_key, PURCHASE_MODEL, payload)
    # Then
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["success"] is True
    [prediction] = body["predictions"]
    assert prediction["product_id"] == demo.sample_product_id
    assert 0.0 <= prediction["score"] <= 1.0
    assert prediction["reason"]
    assert body["model_info"] == {
        "model_name": PURCHASE_MODEL,
        "freshness_status": {"is_stale": False, "recommended_retrain": False},
        "api_key_prefix": demo.api_key_prefix,
    }


def test_recommendations_are_ranked_and_ignore_product_id(api: httpx.Client, demo: DemoCredentials) -> None:
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": "ignored"}}
    body = predict(api, demo.api_key, RECOMMENDATION_MODEL, payload).json()
    scores = [p["score"] for p in body["predictions"]]
    assert len(scores) == 10
    assert scores == sorted(scores, reverse=True)


def test_a_warm_prediction_makes_two_aws_calls_through_the_local_stack(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials
) -> None:
    # Given a warm predict function
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}
    assert predict(api, demo.api_key, PURCHASE_MODEL, payload).status_code == 200
    stack.clear_aws_calls()
    # When
    response = predict(api, demo.api_key, PURCHASE_MODEL, payload)
    # Then: the key's day item and the model's counters, nothing else
    assert response.status_code == 200
    assert sorted(stack.aws_calls()) == ["dynamodb:UpdateItem", "dynamodb:UpdateItem"]


def test_a_purchase_model_without_a_product_answers_the_users_top_products(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    response = predict(api, demo.api_key, PURCHASE_MODEL, {"input": {"user_id": demo.sample_user_id}})
    assert response.status_code == 200, response.text
    predictions = response.json()["predictions"]
    assert len(predictions) == 10
    assert [p["score"] for p in predictions] == sorted((p["score"] for p in predictions), reverse=True)
    assert all(p["reason"] for p in predictions)


def test_the_bearer_form_of_the_key_works(api: httpx.Client, demo: DemoCredentials) -> None:
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}
    response = api.post(
        f"/client/predict/{PURCHASE_MODEL}", json=payload, headers={"Authorization": f"Bearer {demo.api_key}"}
    )
    assert response.status_code == 200


def test_extra_numeric_features_are_accepted_and_change_nothing_else(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id, "price": 19.5}}
    assert predict(api, demo.api_key, PURCHASE_MODEL, payload).status_code == 200


def test_a_non_numeric_extra_feature_is_named(api: httpx.Client, demo: DemoCredentials) -> None:
    payload = {
        "input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id, "price": "cheap"}
    }
    response = predict(api, demo.api_key, PURCHASE_MODEL, payload)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "input.price"
    assert response.json()["predictions"] == []


def test_an_unknown_user_fails_naming_the_user_and_the_available_count(
    api: httpx.Client, demo: DemoCredentials
) -> None:
    # When
    response = predict(
        api, demo.api_key, PURCHASE_MODEL, {"input": {"user_id": "nobody", "product_id": "p1"}}
    )
    # Then
    body = response.json()
    assert body["success"] is False
    assert body["predictions"] == []
    assert "nobody" in body["message"]
    assert "not in the training dataset" in body["message"]
    assert "600 users available" in body["message"]


def test_an_unknown_model_is_named(api: httpx.Client, demo: DemoCredentials) -> None:
    response = predict(api, demo.api_key, "no-such-model", {"input": {"user_id": "u"}})
    assert response.status_code == 404
    assert "no-such-model" in response.json()["message"]
    assert "not found" in response.json()["message"]


def test_a_missing_key_is_401_saying_it_is_missing(api: httpx.Client) -> None:
    response = api.post(f"/client/predict/{PURCHASE_MODEL}", json={"input": {"user_id": "u"}})
    assert response.status_code == 401
    assert "API key is missing" in response.json()["message"]
    assert response.json()["predictions"] == []


def test_a_missing_input_object_names_the_field(api: httpx.Client, demo: DemoCredentials) -> None:
    response = predict(api, demo.api_key, PURCHASE_MODEL, {"user_id": "u"})
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "input"


def test_every_call_counts_exactly_once_even_concurrently(api: httpx.Client, demo: DemoCredentials) -> None:
    # Given
    before = wiring.model_store().get(demo.org_id, PURCHASE_MODEL)
    assert before is not None
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}
    statuses: list[int] = []

    def call() -> None:
        with httpx.Client(base_url=str(api.base_url), timeout=30) as client:
            statuses.append(predict(client, demo.api_key, PURCHASE_MODEL, payload).status_code)

    # When
    threads = [threading.Thread(target=call) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then
    after = wiring.model_store().get(demo.org_id, PURCHASE_MODEL)
    assert after is not None
    assert statuses == [200] * 12
    assert after.usageStats.total_predictions == before.usageStats.total_predictions + 12
    assert after.last_prediction_date is not None


def test_models_lists_both_models_with_their_training_users(api: httpx.Client, demo: DemoCredentials) -> None:
    models = api.get("/client/models", headers={"X-Service-Api-Key": demo.api_key}).json()["models"]
    by_name = {m["name"]: m for m in models}
    assert set(by_name) >= {PURCHASE_MODEL, RECOMMENDATION_MODEL}
    assert by_name[PURCHASE_MODEL]["available_users"] == 600
    assert "roc_auc" in by_name[PURCHASE_MODEL]["metrics"]


def test_training_users_can_be_paged_through(api: httpx.Client, demo: DemoCredentials) -> None:
    # When
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 250, **({"cursor": cursor} if cursor else {})}
        page = api.get(
            f"/client/models/{PURCHASE_MODEL}/users",
            params=params,
            headers={"X-Service-Api-Key": demo.api_key},
        ).json()
        seen.extend(page["user_ids"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    # Then
    assert len(seen) == len(set(seen)) == 600
    assert demo.sample_user_id in seen


def test_a_daily_quota_adds_the_remaining_header_then_429(api: httpx.Client, demo: DemoCredentials) -> None:
    # Given: a key limited to 2 predictions a day
    created = api.post(
        "/dashboard/api-keys",
        json={"label": "limited", "dailyQuota": 2},
        headers={"Authorization": f"Bearer {demo.id_token}"},
    ).json()
    payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}
    # When
    first, second, third = (predict(api, created["key"], PURCHASE_MODEL, payload) for _ in range(3))
    # Then
    assert first.headers["X-Service-Usage-Remaining"] == "1"
    assert second.headers["X-Service-Usage-Remaining"] == "0"
    assert third.status_code == 429
    assert third.json()["success"] is False
    # And: when to retry, the seconds to the reset at midnight UTC the message names
    assert 1 <= int(third.headers["Retry-After"]) <= 24 * 3600
    assert third.headers["X-Service-Usage-Remaining"] == "0"
    # And: past the quota, a user the model does not know is refused the same way, not 404
    unknown = predict(api, created["key"], PURCHASE_MODEL, {"input": {"user_id": "nobody-at-all"}})
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (429, third.json()["error"]["code"])
