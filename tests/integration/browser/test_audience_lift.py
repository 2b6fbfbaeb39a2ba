"""The lift report on the Audiences page in a real browser: an audience with a holdout shows "not enough
data yet" until orders are synced after its activation, then the verdict and the figures the API
returns (each with its interval and users), as bars and in words; an audience without a holdout says
its lift cannot be measured and why."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.stack import LocalStack
from tests.integration.browser.conftest import (
    DESKTOP,
    PHONE,
    axe_violations,
    dump,
    make_synced_user,
    sign_in,
)
from tests.integration.browser.test_audiences_page import audience_of, create_segment_audience
from tests.integration.test_data_source import shop_files
from tests.integration.test_lift import sync_orders_after_activation

pytestmark = pytest.mark.integration

PRODUCT = "p00001"
UPLOADED_RATE, HOLDOUT_RATE = 0.7, 0.1
MINUS = "\u2212"  # the page writes a negative difference with the minus sign


def test_the_lift_report_shows_the_verdict_and_the_apis_figures_and_says_when_it_cannot_be_measured(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: an organization of its own (its shop gets new orders), a segment audience with a 50 %
    # holdout and one without
    user = make_synced_user(stack)
    held = create_segment_audience(stack, user, "Lift buyers", top=200, holdoutPercent=50, holdoutSeed=7)
    create_segment_audience(stack, user, "No holdout buyers", holdoutPercent=0)
    sign_in(page, user.email, user.password)
    page.goto("/audiences.html")
    listed = audience_of(stack, user, str(held["audienceId"]))
    holdout = listed["holdout"]
    assert isinstance(holdout, dict)
    not_sent = (
        f" · {listed['usersNotSent']} not sent: no usable e-mail or phone" if listed["usersNotSent"] else ""
    )
    expect(page.get_by_role("row").filter(has_text="Lift buyers").get_by_role("cell").nth(2)).to_have_text(
        f"{listed['userCount']} users{not_sent} · {holdout['holdoutUsers']} held out to measure lift"
    )

    # When: the lift of the audience without a holdout is asked for
    page.get_by_role("button", name="Lift of No holdout buyers").click()
    # Then: it says the lift cannot be measured, why, and what to do
    expect(page.get_by_role("heading", name="Lift of “No holdout buyers”")).to_be_focused()
    expect(page.locator("#lift-report")).to_contain_text(
        "The lift cannot be measured: This audience has no holdout, so its lift cannot be measured."
    )
    expect(page.locator("#lift-report")).to_contain_text("holdoutPercent above 0")

    # When: the audience with a holdout is measured before any order after its activation
    page.get_by_role("button", name="Lift of Lift buyers").click()
    # Then: not enough data yet, in words
    expect(page.get_by_role("heading", name="Lift of “Lift buyers”")).to_be_focused()
    expect(page.locator("#lift-verdict .badge")).to_have_text("Not enough data yet")
    expect(page.locator("#lift-summary")).to_contain_text("Not enough data yet: no order of the product")

    # When: the shop syncs orders since the activation in which the uploaded group buys the product
    # 70 % of the time and the held-out group 10 % (planted as in tests/integration/test_lift.py)
    audience_id = str(held["audienceId"])
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        link = api.get(f"/platform-ads/audiences/{audience_id}/snapshot", headers=user.org.headers).json()
        groups = {
            r["user_id"]: r["group"]
            for r in csv.DictReader(io.StringIO(httpx.get(link["url"]).content.decode("utf-8-sig")))
        }
        early = api.get(f"/platform-ads/audiences/{audience_id}/lift", headers=user.org.headers).json()
        sync_orders_after_activation(
            api,
            user.org,
            shop_files(n_users=300, seed=4),  # the shop make_synced_user synced
            groups,
            early["activatedAt"],
            product=PRODUCT,
            rates=(UPLOADED_RATE, HOLDOUT_RATE),
            seed=3,
            amounts=(20.0, 35.0),
        )
        lift = api.get(f"/platform-ads/audiences/{audience_id}/lift", headers=user.org.headers).json()
    assert lift["verdict"] == "uplift", lift["summary"]
    page.get_by_role("button", name="Lift of Lift buyers").click()

    # Then: the verdict and the API's sentence
    expect(page.locator("#lift-verdict .badge")).to_have_text("Uplift")
    expect(page.locator("#lift-summary")).to_have_text(lift["summary"])
    # And: each group's purchase rate and revenue per user with its interval, buyers and users
    for chart, figure, unit in (
        ("#lift-rate", "purchaseRate", "rate"),
        ("#lift-revenue", "revenuePerUser", "money"),
    ):
        texts = page.locator(f"{chart} .bar-value").all_inner_texts()
        expected = []
        for group in (lift["uploaded"], lift["holdout"]):
            e = group[figure]
            words = [_fmt(e[k], unit) for k in ("value", "low", "high")]
            detail = (
                f"{group['buyers']} buyers of {group['users']} users"
                if unit == "rate"
                else f"{group['users']} users"
            )
            expected.append(f"{words[0]} (95 % interval {words[1]} to {words[2]}; {detail})")
        assert texts == expected
    # And: the difference with its interval, the users and the days it rests on
    facts = dict(
        zip(
            page.locator("#lift-facts dt").all_inner_texts(),
            page.locator("#lift-facts dd").all_inner_texts(),
            strict=True,
        )
    )
    rate = lift["difference"]["purchaseRate"]
    assert facts["Purchase rate difference"] == (
        f"{_points(rate['value'])} (95 % interval {_points(rate['low'])} to {_points(rate['high'])}; "
        f"{rate['users']} users)"
    )
    assert rate["users"] == len(groups)
    assert facts["Users"].startswith(
        f"{lift['uploaded']['users']} in the uploaded group, {lift['holdout']['users']} held out"
    )
    # And: an uploaded group larger than the audience's size says why (users who could not be sent)
    if listed["usersNotSent"]:
        assert "counts everyone chosen for it, also users who could not be sent" in facts["Users"]
    assert facts["Window"].endswith(f"({lift['days']:.1f} days)")
    assert re.match(r"^\+\d", facts["Revenue per user difference"])
    # And: the model's calibration by decile, predicted against actual, drawn and in a table
    expect(page.locator("#lift-calibration-chart li")).to_have_count(len(lift["calibration"]))
    rows = page.locator("#lift-calibration tbody tr")
    expect(rows).to_have_count(len(lift["calibration"]))
    first = lift["calibration"][0]
    expect(rows.first.locator("td")).to_have_text(
        [
            "1",
            str(first["users"]),
            f"{first['scoreLow']:.3f} to {first['scoreHigh']:.3f}",
            _fmt(first["predictedRate"], "rate"),
            f"{_fmt(first['actualRate']['value'], 'rate')} (95 % interval "
            f"{_fmt(first['actualRate']['low'], 'rate')} to {_fmt(first['actualRate']['high'], 'rate')})",
        ]
    )
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"audiences-lift-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)


def _fmt(value: float, unit: str) -> str:
    return f"{100 * value:.1f} %" if unit == "rate" else f"{value:,.2f}"


def _points(value: float) -> str:
    return f"{'+' if value >= 0 else MINUS}{abs(100 * value):.1f} points"
