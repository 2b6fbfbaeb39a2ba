"""The readiness checklist (wizard step 3): each cause the platform would refuse an audience or an
advert for (docs/service-contract.md §7.2), checked before anything is created.

Every item says ``pass``, ``fail`` or ``unknown`` (a check that could not be made because an earlier
one failed, e.g. the ad account cannot be read without a valid token), with its evidence and, when it
does not pass, the remedy. Reading the checklist creates nothing on the platform: it makes three
reads (``debug_token``, the ad account, its pixels) and, for Publish advert, the application node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

import numpy as np
from pydantic import Field

from shared.clock import Clock
from shared.datasources.coverage import Coverage
from shared.errors import NotFound, ServiceError
from shared.ml.freshness import FreshnessRules, freshness
from shared.platform.accounts import Page, Pixel, list_pixels, list_promotable_pages
from shared.platform.client import GraphClient
from shared.platform.oauth import DEFAULT_SCOPES, TokenInfo
from shared.platform.preflight import AccountFacts, app_is_live, read_account_facts
from shared.records.connections import Connection
from shared.records.datasources import PUBLISHED_BY, DatasetVersion
from shared.records.events import EventDay
from shared.records.models import ModelRecord
from shared.targeting.models import MIN_SEED_USERS
from shared.wire_models import CamelModel

Status = Literal["pass", "fail", "unknown"]
# How recent the pixel's purchases must be for Publish advert's purchase optimisation.
PURCHASE_DAYS = 7
# Countries whose ads need a beneficiary and payer (DSA and similar rules): the EU, the UK, Australia
# (docs/service-contract.md §7.2; docs/platform-notes.md §6.3).
BENEFICIARY_COUNTRIES = frozenset(
    [
        "AT",
        "BE",
        "BG",
        "HR",
        "CY",
        "CZ",
        "DK",
        "EE",
        "FI",
        "FR",
        "DE",
        "GR",
        "HU",
        "IE",
        "IT",
        "LV",
        "LT",
        "LU",
        "MT",
        "NL",
        "PL",
        "PT",
        "RO",
        "SK",
        "SI",
        "ES",
        "SE",
        "GB",
        "AU",
    ]
)


class ReadinessItem(CamelModel):
    id: str
    group: Literal["connection", "ad_account", "data", "publish_advert"]
    status: Status
    evidence: str
    remedy: str | None = None


class Readiness(CamelModel):
    ready: bool = Field(description="Every item passes.")
    items: list[ReadinessItem]


class Connections(Protocol):
    def inspect(self, org_id: str) -> tuple[Connection, TokenInfo, GraphClient]: ...


class ModelReader(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class DatasetReader(Protocol):
    def current(self, org_id: str) -> DatasetVersion | None: ...
    def latest(self, org_id: str) -> DatasetVersion | None: ...


class EventCounts(Protocol):
    def days(self, org_id: str, first: str, last: str) -> list[EventDay]: ...


class CoverageSource(Protocol):
    def coverage(self, dataset: DatasetVersion) -> Coverage: ...


@dataclass(frozen=True)
class ReadinessQuery:
    objective: Literal["retargeting", "prospecting"] = "retargeting"
    lookalike_country: str | None = None
    model_name: str = "shop-purchase"
    publish: bool = False
    countries: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadinessService:
    connections: Connections
    models: ModelReader
    datasets: DatasetReader
    coverages: CoverageSource
    rules: FreshnessRules
    clock: Clock
    # The events the service sent, counted per day (None: only the platform's last_fired_time is read).
    events: EventCounts | None = None

    def check(self, org_id: str, query: ReadinessQuery) -> Readiness:
        items = [*self._platform_items(org_id, query), *self._data_items(org_id, query)]
        return Readiness(ready=all(item.status == "pass" for item in items), items=items)

    # --- the connection and the ad account ---------------------------------------------------------

    def _platform_items(self, org_id: str, query: ReadinessQuery) -> list[ReadinessItem]:
        try:
            connection, info, graph = self.connections.inspect(org_id)
        except NotFound as exc:
            failed = _item("connection_active", "connection", "fail", exc.message, exc.remedy)
            return [failed, *_unknown_after(failed, query)]
        items = [
            _item("connection_active", "connection", "pass", f"Connected to {connection.ad_account_id}.")
        ]
        if info.is_valid:
            items.append(_item("token_valid", "connection", "pass", "The platform reports the token valid."))
        else:
            reason = connection.validation_error or "the platform reports the token invalid"
            items.append(
                _item("token_valid", "connection", "fail", _sentence(reason), "Reconnect the ad account.")
            )
        missing = info.missing_scopes()
        items.append(
            _item("scopes_granted", "connection", "pass", f"Granted: {', '.join(DEFAULT_SCOPES)}.")
            if not missing
            else _item(
                "scopes_granted",
                "connection",
                "fail",
                f"Not granted: {', '.join(missing)}.",
                "Reconnect and grant every requested permission.",
            )
        )
        if not info.is_valid or connection.ad_account_id is None:
            return [*items, *_unknown_after(items[1], query)]
        try:
            facts = read_account_facts(graph, connection.ad_account_id)
            pixels = list_pixels(graph, connection.ad_account_id) if query.publish else []
            pages = list_promotable_pages(graph, connection.ad_account_id) if query.publish else []
            live = app_is_live(graph) if query.publish else True
        except ServiceError as exc:
            failed = _item("ad_account_readable", "ad_account", "fail", exc.message, exc.remedy)
            return [*items, failed, *_unknown_after(failed, query)]
        items.extend(_account_items(facts))
        if query.publish:
            items.extend(_publish_items(facts, pixels, pages, live, query.countries))
            items.insert(
                items.index(next(i for i in items if i.id == "pixel_linked")) + 1,
                self._purchases(org_id, pixels),
            )
        return items

    def _purchases(self, org_id: str, pixels: Sequence[Pixel]) -> ReadinessItem:
        now = self.clock()
        first = (now - timedelta(days=PURCHASE_DAYS)).date().isoformat()
        days = self.events.days(org_id, first, now.date().isoformat()) if self.events and pixels else []
        return purchases_item(days, pixels, now)

    # --- the data ------------------------------------------------------------------------------------

    def _data_items(self, org_id: str, query: ReadinessQuery) -> list[ReadinessItem]:
        dataset = self.datasets.current(org_id)
        model = self.models.get(org_id, query.model_name)
        items = [self._model_item(model, dataset)]
        if dataset is None:
            items.append(self._nothing_in_force(org_id))
            return items
        coverage = self.coverages.coverage(dataset)
        usable = coverage.flags["usable"]
        if query.objective == "prospecting" and query.lookalike_country:
            count = int(np.count_nonzero(usable & (coverage.countries == query.lookalike_country)))
            where, minimum = f" in {query.lookalike_country}", MIN_SEED_USERS
        else:
            count, where, minimum = int(np.count_nonzero(usable)), "", 1
        evidence = f"{count:,} customers{where} have an e-mail or phone the platform can match."
        items.append(
            _item("enough_users", "data", "pass", evidence)
            if count >= minimum
            else _item(
                "enough_users",
                "data",
                "fail",
                evidence + (f" A lookalike seed needs at least {minimum}{where}." if minimum > 1 else ""),
                "Add customers with e-mail addresses or phone numbers (and their country), then sync again"
                + (", or choose another lookalike country." if minimum > 1 else "."),
            )
        )
        return items

    def _nothing_in_force(self, org_id: str) -> ReadinessItem:
        """``enough_users`` with no data in force: nothing synced, or a first sync whose purchase
        training has not ended (it goes in force when it does, even if it refuses the data)."""
        newest = self.datasets.latest(org_id)
        training = newest.training.get(PUBLISHED_BY) if newest else None
        if newest is None:
            evidence = "No data source is synced, so no customer identifiers are known."
            remedy = (
                "Upload and sync the shop's customers, products and orders in the launch wizard's first step."
            )
        elif training is not None and training.state in ("pending", "running"):
            evidence = (
                f"The data synced (version {newest.version}) is put in use when its purchase model's "
                "training ends, so no customer identifiers are known yet."
            )
            remedy = "Wait for the training to end (the wizard's sync step and the Models page show it)."
        else:
            # A first sync refused for training before first syncs were put in use whatever training said.
            evidence = (
                f"The data synced (version {newest.version}) is not in use, so no customer identifiers are "
                "known."
            )
            remedy = (
                "Sync the shop's files again in the launch wizard's first step: a first sync is put in use."
            )
        return _item("enough_users", "data", "fail", evidence, remedy)

    def _model_item(self, model: ModelRecord | None, dataset: DatasetVersion | None) -> ReadinessItem:
        if model is None:
            refused = dataset.training.get(PUBLISHED_BY) if dataset else None
            if dataset is not None and refused is not None and refused.state == "failed":
                # A young shop's first sync: in force, though its training refused the data.
                return _item(
                    "model_fresh",
                    "data",
                    "fail",
                    f"No model could be trained on the data in use (version {dataset.version}). "
                    + _sentence(refused.error or "its purchase training failed"),
                    refused.remedy or "Sync the shop's files again in the launch wizard's first step.",
                )
            return _item(
                "model_fresh",
                "data",
                "fail",
                "No model is trained yet.",
                "Sync the shop's files; both models train from them.",
            )
        if dataset is not None and model.dataset_version != dataset.version:
            training = dataset.training.get(model.type)
            trained_on = model.dataset_version or "uploaded files"
            if training is not None and training.state == "failed":
                # Nothing to wait for: the data in use was refused (a young shop's first sync) or the
                # training crashed on it.
                return _item(
                    "model_fresh",
                    "data",
                    "fail",
                    f"{model.name} was trained on {trained_on}, not on the current dataset "
                    f"{dataset.version}, and its training on {dataset.version} failed: "
                    + _sentence(training.error or "no reason was recorded"),
                    training.remedy or "Retrain on the Models page, or sync the shop's files again.",
                )
            state = f" (its training is {training.state})" if training else ""
            return _item(
                "model_fresh",
                "data",
                "fail",
                f"{model.name} was trained on {trained_on}, not on the current dataset "
                f"{dataset.version}{state}.",
                "Wait for the training on the current data to finish: the Models page shows its progress.",
            )
        status = freshness(model.trained_at, self.clock(), {}, None, self.rules)
        reasons = list(status.reasons)
        # The drift check stores the largest feature PSI on the model: above the threshold, predict
        # and the models page say retrain, and so does the checklist.
        psi = model.max_feature_psi
        if psi is not None and psi > self.rules.psi_threshold:
            reasons.append(f"a feature drifted since training (PSI {psi:.2f} > {self.rules.psi_threshold:g})")
        if reasons:
            return _item(
                "model_fresh",
                "data",
                "fail",
                _sentence("; ".join(reasons)),
                "Sync the shop's latest files to retrain.",
            )
        return _item(
            "model_fresh", "data", "pass", f"{model.name} {model.version} was trained on the current dataset."
        )


def _account_items(facts: AccountFacts) -> list[ReadinessItem]:
    return [
        _item("business_owned", "ad_account", "pass", f"Owned by {facts.business_name}.")
        if facts.business_name
        else _item(
            "business_owned",
            "ad_account",
            "fail",
            "The ad account is not owned by a business.",
            "Use a business-owned ad account: move it into your business, then disconnect and reconnect.",
        ),
        _item("advertiser_role", "ad_account", "pass", "Your tasks include ADVERTISE (Admin or Advertiser).")
        if facts.can_advertise
        else _item(
            "advertiser_role",
            "ad_account",
            "fail",
            f"Your tasks on the ad account are {', '.join(facts.user_tasks) or 'none'}.",
            "Ask the business admin for the Admin or Advertiser role on the ad account, wait 5-10 minutes, "
            "reconnect.",
        ),
        _item("custom_audience_terms", "ad_account", "pass", "Custom Audience terms accepted.")
        if facts.custom_audience_terms
        else _item(
            "custom_audience_terms",
            "ad_account",
            "fail",
            "The Custom Audience terms are not accepted for this ad account.",
            "Accept the platform's Custom Audience terms for the ad account, then retry.",
        ),
    ]


def _publish_items(
    facts: AccountFacts,
    pixels: Sequence[Pixel],
    pages: Sequence[Page],
    live: bool,
    countries: tuple[str, ...],
) -> list[ReadinessItem]:
    regulated = sorted(set(countries) & BENEFICIARY_COUNTRIES)
    beneficiary = facts.default_dsa_beneficiary or facts.business_name
    payor = facts.default_dsa_payor or facts.business_name
    return [
        _item("pixel_linked", "publish_advert", "pass", f"{len(pixels)} pixel(s) linked to the ad account.")
        if pixels
        else _item(
            "pixel_linked",
            "publish_advert",
            "fail",
            "No pixel is linked to the ad account.",
            "Link a pixel (dataset) to the same ad account used in the service.",
        ),
        _item(
            "page_promotable",
            "publish_advert",
            "pass",
            f"The ad account can promote {len(pages)} Page(s); the advert is posted as "
            f"{pages[0].name or pages[0].id}.",
        )
        if pages
        else _item(
            "page_promotable",
            "publish_advert",
            "fail",
            "The ad account has no Page it can promote that the connected user has a role on (a Page that "
            "left the business, or whose role was removed, is no longer seen), and an advert is posted as a "
            "Page.",
            "Give the connected user a role on your business's Page, and the ad account access to it, in the "
            "platform's business settings; then check again.",
        ),
        _item("payment_method", "publish_advert", "pass", "The ad account has a payment method.")
        if facts.has_funding
        else _item(
            "payment_method",
            "publish_advert",
            "fail",
            "The ad account has no valid payment method.",
            "Add one in the platform's billing settings, then publish.",
        ),
        _item(
            "beneficiary_payer",
            "publish_advert",
            "pass",
            "Beneficiary and payer are known."
            if regulated
            else "No targeted country needs a beneficiary and payer.",
        )
        if not regulated or (beneficiary and payor)
        else _item(
            "beneficiary_payer",
            "publish_advert",
            "fail",
            f"Ads in {', '.join(regulated)} need a beneficiary and payer; none is known for this ad account.",
            "Ensure business ownership or set a default beneficiary and payer in the ad account's "
            "advertising settings.",
        ),
        _item("app_live", "publish_advert", "pass", "The service's application is live.")
        if live
        else _item(
            "app_live",
            "publish_advert",
            "fail",
            "The service's application is in development mode, so adverts cannot be published.",
            "Use Generate campaign with audience and build the ad in the ads manager.",
        ),
    ]


def purchases_item(days: Sequence[EventDay], pixels: Sequence[Pixel], now: datetime) -> ReadinessItem:
    """Whether the pixel received purchase events in the ``PURCHASE_DAYS`` days to ``now``: counted by
    the service as it sent them (``days``: synced orders and the shop's pages), or, failing that, the
    platform's own ``last_fired_time`` of one of ``pixels`` (which does not say which events fired).
    Unknown without a pixel."""
    if not pixels:
        return _item("pixel_purchases", "publish_advert", "unknown", _not_checked_until("pixel_linked"))
    sent = {"sync": 0, "site": 0}
    for day in days:
        for source in sent:
            sent[source] += day.counts.get(source, {}).get("Purchase", {}).get("sent", 0)
    if sum(sent.values()):
        return _item(
            "pixel_purchases",
            "publish_advert",
            "pass",
            f"{sum(sent.values())} purchase event(s) sent to the pixel in the last {PURCHASE_DAYS} days "
            f"({sent['sync']} from the synced orders, {sent['site']} from the shop's pages).",
        )
    fired = [when for pixel in pixels if (when := _fired_at(pixel.last_fired_time)) is not None]
    if fired and max(fired) >= now - timedelta(days=PURCHASE_DAYS):
        return _item(
            "pixel_purchases",
            "publish_advert",
            "pass",
            f"The pixel last received events on {max(fired):%Y-%m-%d %H:%M} UTC (the platform's "
            "last_fired_time, which does not say which events).",
        )
    return _item(
        "pixel_purchases",
        "publish_advert",
        "fail",
        f"The pixel has received no purchase event in the last {PURCHASE_DAYS} days: a campaign that "
        "optimises for purchases would have nothing to learn from.",
        "Sync the shop's orders while the ad account is connected (each sync sends the last 7 days' "
        "orders as purchases), or paste the snippet from the Events page into the shop's pages; then "
        "check them in Events Manager's Test events tab with the test event code.",
    )


_LATER_ITEMS = {
    "connection": ["token_valid", "scopes_granted"],
    "ad_account": ["business_owned", "advertiser_role", "custom_audience_terms"],
    "publish_advert": [
        "pixel_linked",
        "pixel_purchases",
        "page_promotable",
        "payment_method",
        "beneficiary_payer",
        "app_live",
    ],
}


def _unknown_after(failed: ReadinessItem, query: ReadinessQuery) -> list[ReadinessItem]:
    """The platform items that cannot be checked once ``failed`` failed (they come after it)."""
    groups: list[Literal["connection", "ad_account", "publish_advert"]] = ["ad_account"]
    if failed.id == "connection_active":
        groups.insert(0, "connection")
    if query.publish:
        groups.append("publish_advert")
    return [
        _item(item_id, group, "unknown", _not_checked_until(failed.id))
        for group in groups
        for item_id in _LATER_ITEMS[group]
    ]


def _not_checked_until(item_id: str) -> str:
    """An unknown item's evidence: the item it waits for, named as the dashboard shows it (never its
    id: a merchant read "Not checked: connection_active failed.")."""
    return f"Not checked until “{item_id.replace('_', ' ')}” above passes: it needs that first."


def _item(
    item_id: str,
    group: Literal["connection", "ad_account", "data", "publish_advert"],
    status: Status,
    evidence: str,
    remedy: str | None = None,
) -> ReadinessItem:
    return ReadinessItem(id=item_id, group=group, status=status, evidence=evidence, remedy=remedy)


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _fired_at(text: str | None) -> datetime | None:
    """A Graph datetime (``2026-06-24T10:00:00+0000``), or None when absent or unreadable."""
    if not text:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
