"""The template's fair shares (issue 25, item 4): per-route throttles that give predictions more room
than the stage's default and the expensive dashboard actions less, and concurrency reserved for the
predict function that a small account can turn off, read as the local stack reads them."""

from __future__ import annotations

from local.template import Resolver, Throttle, load_template, reserved_concurrency, route_throttles

EXPENSIVE = [
    "POST /platform-ads/targeting/preview",
    "POST /dashboard/models/retrain",
    "POST /platform-ads/audiences",
    "POST /platform-ads/activations",
]


def test_predictions_have_more_room_than_the_default_and_expensive_actions_less() -> None:
    # Given the HttpApi's throttles as the local gateway reads them
    template = load_template()
    throttles = route_throttles(template, Resolver(template, {}))["HttpApi"]
    default = throttles["$default"]
    # Then the dashboard's reads (the default) are throttled, predictions get a bucket beyond it
    assert default == Throttle(rate=100, burst=200)
    predict = throttles["POST /client/predict/{modelName}"]
    assert predict.rate > default.rate
    assert predict.burst > default.burst
    # And each expensive action has a smaller bucket of its own
    for route in EXPENSIVE:
        assert throttles[route].rate < default.rate, route
        assert throttles[route].burst < default.burst, route


def test_every_throttled_route_is_a_route_of_the_api() -> None:
    # A RouteSettings key that names no route throttles nothing (API Gateway refuses the deploy)
    from local.template import routes

    template = load_template()
    keys = {f"{route.method} {route.path}" for route in routes(template) if route.api == "HttpApi"}
    named = set(route_throttles(template, Resolver(template, {}))["HttpApi"]) - {"$default"}
    assert named <= keys


def test_the_predict_function_reserves_concurrency_unless_the_account_is_too_small() -> None:
    template = load_template()
    # Given the default parameters, predict reserves 20 (and only predict)
    assert reserved_concurrency(template, Resolver(template, {})) == {"PredictFunction": 20}
    # When an account passes 5, or 0 (Lambda keeps 100 unreserved: a new account cannot reserve any)
    lowered = Resolver(template, {}, {"PredictReservedConcurrency": "5"})
    none = Resolver(template, {}, {"PredictReservedConcurrency": "0"})
    # Then predict reserves 5, or nothing (the property is left out)
    assert reserved_concurrency(template, lowered) == {"PredictFunction": 5}
    assert reserved_concurrency(template, none) == {}
