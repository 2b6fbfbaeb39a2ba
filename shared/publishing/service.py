"""``PublishingService``: Publish advert, its dry run, and Generate campaign with audience.

Publishing is a plan followed by resumable steps, all recorded on the audience:

1. **Plan** (the same code for a dry run and the real thing): read the ad account (currency and its
   offset, minimum budget, business, DSA defaults), its pixel and a promotable Page; build the exact
   parameters of campaign, ad set, creative and ad; ask the platform to validate the campaign and
   the creative without creating them (``execution_options=validate_only``). A dry run stops here.
2. **Create**, one object per step, each ``PAUSED``; every id is saved on the audience before the
   next call, so a retry or a state-machine step resumes after the last object that exists. Each
   create is marked ``attempted`` before it is sent: when its answer is lost (it may have run), the
   object is looked up by name and creation time before creating again or rolling back.
3. **Activate** ad, ad set, then campaign, only when the user asked for it.
4. On a refusal in 2 or 3, **roll back**: delete what exists, newest first. An object whose deletion
   fails stays listed on the audience (``delete_failed``) with its id, so nothing on the platform is
   left unreported. A failure that may not be one (a lost answer, a transient error) is not rolled
   back: the run stops, and the repeat resumes it, adopting the object if it was made, so the
   account ends with one object of each kind.

``advance`` does one step and is what a Step Functions task calls; ``publish`` runs the steps to the
end for the API route. Throttling stops a run without rolling back: the record says where it stands
and the next call resumes there.
"""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import BinaryIO, Protocol

from pydantic import BaseModel

from shared.audiences.models import CreateAudienceRequest
from shared.clock import Clock
from shared.connections.lifecycle import ConnectionService
from shared.errors import (
    Conflict,
    NotFound,
    PreconditionFailed,
    ServiceError,
    UpstreamError,
    ValidationFailed,
)
from shared.observability import logger
from shared.platform import campaigns
from shared.platform.accounts import (
    AdAccountSettings,
    list_pixels,
    list_promotable_pages,
    read_ad_account,
    require_pixel,
)
from shared.platform.client import GraphClient
from shared.platform.errors import PageNotPromotable, PlatformError, PlatformThrottled, PlatformUnavailable
from shared.platform.retry import may_have_executed
from shared.publishing.budget import to_minor_units
from shared.publishing.checkout import HostedCheckout
from shared.publishing.links import with_utm
from shared.publishing.models import AdObjectView, AdsManagerLink, PublicationView, PublishAdvertRequest
from shared.records.audiences import (
    AdObjectKind,
    AdObjectRecord,
    AudienceRecord,
    FailureRecord,
    PublicationRecord,
)

# Where each kind is created. Parameters of later objects name earlier ones by placeholders.
EDGE_OF_KIND: dict[AdObjectKind, campaigns.Edge] = {
    "campaign": "campaigns",
    "adset": "adsets",
    "adcreative": "adcreatives",
    "ad": "ads",
}
PLACEHOLDER = "{%s}"
# Activation order: the campaign last, so nothing delivers before the whole chain is active.
ACTIVATION_ORDER: tuple[AdObjectKind, ...] = ("ad", "adset", "campaign")
FINISHED = frozenset({"paused", "active", "rolled_back", "failed", "deleted_on_platform"})
_CONFLICT_REMEDY = {
    "creating": "Repeat the request that started it, with its Idempotency-Key, to resume it.",
    "rolling_back": "Repeat the request that started it, with its Idempotency-Key, to finish its rollback.",
    "paused": "It is listed with the audience; activate or change it in the platform's ads manager.",
    "active": "It is listed with the audience; change it in the platform's ads manager.",
    "failed": "Delete the objects listed with the audience in the platform's ads manager, then publish.",
}


class AudienceStore(Protocol):
    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None: ...
    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = ...) -> None:
        """Write over the revision read; on a conflict ``apply`` (this writer's change) to the record
        as stored and write that, or ``RecordChanged`` without it."""
        ...

    def start_publication(self, record: AudienceRecord) -> bool: ...


class SourceBlobs(Protocol):
    def get(self, key: str) -> bytes: ...
    def open(self, key: str) -> BinaryIO: ...
    def exists(self, key: str) -> bool: ...


@dataclass(frozen=True)
class PublishingPolicy:
    """Operator settings: the ads manager's address."""

    ads_manager_url: str = "https://adsmanager.facebook.com"


class PublishProgress(BaseModel):
    """What one ``advance`` achieved. A state machine loops while ``done`` is false, waiting
    ``wait_seconds`` first; when done, ``state`` is paused or active, or rolled_back or failed with
    the ``failure`` (its message and remedy) to record."""

    state: str
    done: bool
    wait_seconds: int = 0
    failure: FailureRecord | None = None


@dataclass
class PublishingService:
    audiences: AudienceStore
    blobs: SourceBlobs
    connections: ConnectionService
    # The hosted checkout's links; None where the function never publishes (the Ads Manager link,
    # Delete advert), which then need not read the synced catalog.
    checkout: HostedCheckout | None
    policy: PublishingPolicy
    clock: Clock

    # --- Publish advert ------------------------------------------------------------------------

    def publish(
        self, org_id: str, audience_id: str, request: PublishAdvertRequest, idempotency_key: str | None = None
    ) -> PublicationView:
        """Publish (or, with ``dryRun``, plan) an advert for an active audience, to the end; see the
        module docstring. Raises the failure, with what the rollback did, when it fails.

        A repeat with the same ``idempotency_key`` resumes or returns the publication it started;
        another publication while one exists (and was not rolled back) is a ``Conflict``.
        """
        if request.dry_run:
            return self.dry_run(org_id, audience_id, request)
        record, repeated = self._start(org_id, audience_id, request, idempotency_key)
        return self._run(record, repeated=repeated)

    def dry_run(self, org_id: str, audience_id: str, request: PublishAdvertRequest) -> PublicationView:
        """Exactly what ``publish`` would create, validated against the ad account; creates nothing."""
        record = self._require_active(org_id, audience_id)
        publication = self._planned(record, request, None)
        return _view(record.audience_id, publication, "Nothing was created: this is what would be.", True)

    def start(
        self, org_id: str, audience_id: str, request: PublishAdvertRequest, idempotency_key: str | None = None
    ) -> PublicationView:
        """Plan, validate and record a publication without creating anything yet: ``advance`` then
        creates it step by step (the activation state machine's way in)."""
        record, _ = self._start(org_id, audience_id, request, idempotency_key)
        return _view(record.audience_id, _started(record), "Publication started.")

    def start_for_activation(self, org_id: str, audience_id: str, request: dict[str, object]) -> None:
        """``start`` for the activation state machine's ``PublishAdvert`` step: the audience is not
        marked active yet (that is the activation's last step), but its platform objects exist."""
        parsed = PublishAdvertRequest.model_validate(request)
        self._start(org_id, audience_id, parsed, f"activation-{audience_id}", activating=True)

    def campaign_link(self, org_id: str, audience_id: str) -> str:
        """Generate campaign for the activation state machine: the ads manager link's address."""
        return self.ads_manager_link(org_id, audience_id, activating=True).url

    def _start(
        self,
        org_id: str,
        audience_id: str,
        request: PublishAdvertRequest,
        idempotency_key: str | None,
        *,
        activating: bool = False,
    ) -> tuple[AudienceRecord, bool]:
        """The audience with its publication recorded, and whether that was done by an earlier request."""
        record = self._require_active(org_id, audience_id, activating=activating)
        existing = record.publication
        if existing is not None and existing.state == "failed":
            existing = self._retry_rollback(record, existing)
        if existing is not None and existing.state != "rolled_back":
            if idempotency_key and existing.idempotency_key == idempotency_key:
                return record, True
            raise Conflict(
                f"Audience {audience_id} already has an advert ({existing.state}).",
                remedy=_CONFLICT_REMEDY[existing.state],
            )
        # Nothing of an earlier, rolled-back attempt exists: plan afresh, whatever the key.
        record.publication = self._planned(record, request, idempotency_key)
        if not self.audiences.start_publication(record):
            raise Conflict(
                f"Audience {audience_id} is being published by another request.",
                remedy="Wait for it to finish, then list the audiences to see the advert.",
            )
        return record, False

    def _retry_rollback(self, record: AudienceRecord, publication: PublicationRecord) -> PublicationRecord:
        """Try again to delete what a failed rollback left behind (its objects are listed on the
        audience), so the audience can be published again once nothing is left."""
        for leftover in publication.objects:
            if leftover.state == "delete_failed" and leftover.platform_id:
                leftover.state = "created"
            elif leftover.state == "delete_failed":
                leftover.state = "attempted"  # never confirmed: looked up by name again
        publication.state = "rolling_back"
        _, graph = self.connections.client_for(record.org_id)
        try:
            while publication.state == "rolling_back":
                self._step(record, publication, graph)
        finally:
            self.connections.record_usage(record.org_id, graph)
        return publication

    def _planned(
        self, record: AudienceRecord, request: PublishAdvertRequest, idempotency_key: str | None
    ) -> PublicationRecord:
        _, graph = self.connections.client_for(record.org_id)
        try:
            return self._plan(record, request, graph, idempotency_key)
        finally:
            self.connections.record_usage(record.org_id, graph)

    def advance(self, org_id: str, audience_id: str) -> PublishProgress:
        """Do the next step of a started publication (create, activate or roll back one object).

        Neither throttling nor a refused create is an error here: throttling asks the caller to wait
        ``wait_seconds`` and call again; a refused create switches to rolling back, which the next
        calls do, and the last one reports the failure. Only an unexpected error propagates.
        """
        record = self._require(org_id, audience_id)
        publication = _started(record)
        if publication.state not in FINISHED:
            _, graph = self.connections.client_for(org_id)
            creating = publication.state == "creating"
            try:
                self._step(record, publication, graph)
            except PlatformThrottled as exc:
                wait = max(1, int(exc.retry_after_seconds or 60))
                return PublishProgress(state=publication.state, done=False, wait_seconds=wait)
            except ServiceError:
                if not (creating and publication.state == "rolling_back"):
                    raise
            finally:
                self.connections.record_usage(org_id, graph)
        done = publication.state in FINISHED
        failure = (
            publication.failure
            if done and publication.state in {"rolled_back", "failed", "deleted_on_platform"}
            else None
        )
        return PublishProgress(state=publication.state, done=done, failure=failure)

    def _run(self, record: AudienceRecord, *, repeated: bool = False) -> PublicationView:
        """Advance to the end; raise the failure (with what the rollback did) if there was one."""
        publication = _started(record)
        caught: ServiceError | None = None
        if publication.state not in FINISHED:
            _, graph = self.connections.client_for(record.org_id)
            try:
                while publication.state not in FINISHED:
                    try:
                        self._step(record, publication, graph)
                    except PlatformThrottled:
                        raise  # nothing is rolled back: a repeat of the request resumes here
                    except ServiceError as exc:
                        # A create failed and the state is now rolling_back; the rollback's own
                        # failures are recorded per object, so anything else is unexpected.
                        if publication.state != "rolling_back" or caught is not None:
                            raise
                        caught = exc
            finally:
                self.connections.record_usage(record.org_id, graph)
        if publication.state in {"rolled_back", "failed"}:
            raise _reported(caught, publication)
        logger.info(
            "advert published",
            extra={"audience_id": record.audience_id, "state": publication.state, "repeated": repeated},
        )
        message = (
            "Advert created and activated." if publication.state == "active" else "Advert created, paused."
        )
        if repeated:
            message = "This request was already handled; here is the advert it created."
        return _view(record.audience_id, publication, message)

    def _step(self, record: AudienceRecord, publication: PublicationRecord, graph: GraphClient) -> None:
        """One platform call of the publication, saved before returning."""
        try:
            if publication.state == "creating":
                self._create_next(record, publication, graph)
            elif publication.state == "rolling_back":
                self._delete_next(publication, graph)
        except PlatformThrottled:
            self._save(record)
            raise
        except ServiceError as exc:
            if publication.state != "creating":
                raise
            if isinstance(exc, PlatformError) and _outcome_unknown(exc):
                # Not a refusal: the platform may have made the object (its answer lost) or may make
                # it on a second try. Nothing is rolled back; a repeat of the request (or the state
                # machine's retry) resumes here and adopts the object by its name if it exists, so
                # the account ends with one of each kind.
                self._save(record)
                before = f"{exc.remedy} " if exc.remedy else ""
                raise PlatformUnavailable(
                    exc.message,
                    remedy=f"{before}Then repeat the request with the same Idempotency-Key: it continues "
                    "where this one stopped and creates nothing twice.",
                    detail=exc.detail,
                ) from exc
            publication.state = "rolling_back"
            publication.failure = FailureRecord(code=exc.code, message=exc.message, remedy=exc.remedy)
            self._save(record)
            raise
        self._save(record)

    def _create_next(
        self, record: AudienceRecord, publication: PublicationRecord, graph: GraphClient
    ) -> None:
        pending = next((o for o in publication.objects if o.state in ("planned", "attempted")), None)
        if pending is not None:
            if pending.state == "attempted" and _adopt(publication, pending, graph):
                return
            # Saved before sending: if the answer is lost, a later step knows to look for it first.
            pending.state = "attempted"
            self._save(record)
            params = _resolve(pending.params, publication.objects)
            edge = EDGE_OF_KIND[pending.kind]
            try:
                pending.platform_id = campaigns.create_object(graph, publication.ad_account_id, edge, params)
            except ServiceError as exc:
                if isinstance(exc, PlatformError) and may_have_executed(exc):
                    raise
                pending.state = "planned"
                if pending.kind == "adcreative" and isinstance(exc, PlatformError):
                    raise _page_refusal(graph, publication.ad_account_id, params, exc) from exc
                raise
            pending.state = "created"
            return
        if publication.activate:
            by_kind = {o.kind: o for o in publication.objects}
            for kind in ACTIVATION_ORDER:
                platform_id = by_kind[kind].platform_id
                assert platform_id is not None
                campaigns.set_status(graph, platform_id, campaigns.ACTIVE)
            publication.state = "active"
        else:
            publication.state = "paused"

    def _delete_next(self, publication: PublicationRecord, graph: GraphClient) -> None:
        existing = [o for o in publication.objects if o.state in ("created", "attempted")]
        if not existing:
            left = any(o.state == "delete_failed" for o in publication.objects)
            publication.state = "failed" if left else "rolled_back"
            return
        newest = existing[-1]
        try:
            if newest.state == "attempted" and not _adopt(publication, newest, graph):
                return  # the lost create never ran: nothing to delete
            assert newest.platform_id is not None
            campaigns.delete_object(graph, newest.platform_id)
            newest.state = "deleted"
        except PlatformThrottled:
            raise
        except PlatformError as exc:
            if _already_gone(exc):
                newest.state = "deleted"
                return
            logger.warning(
                "rollback could not delete an advert object",
                extra={"kind": newest.kind, "platform_id": newest.platform_id, "error_code": exc.code},
            )
            newest.state = "delete_failed"

    # --- Delete advert -------------------------------------------------------------------------

    def delete_advert(self, org_id: str, audience_id: str, *, confirm: bool) -> None:
        """Delete the audience's advert on the platform (ad, creative, ad set, campaign), whatever
        state it is in, and forget it. Irreversible: the campaign's history goes with it.

        Raises the rollback's report when an object could not be deleted (it stays listed)."""
        if not confirm:
            raise ValidationFailed(
                "Deleting an advert removes its campaign, ad set, creative and ad from the platform and "
                "cannot be undone.",
                field="confirm",
                remedy="Send confirm=true to delete it.",
            )
        record = self._require(org_id, audience_id)
        publication = _started(record)
        for leftover in publication.objects:
            if leftover.state == "delete_failed":
                leftover.state = "created" if leftover.platform_id else "attempted"
        publication.state = "rolling_back"
        _, graph = self.connections.client_for(org_id)
        try:
            while publication.state == "rolling_back":
                self._step(record, publication, graph)
        finally:
            self.connections.record_usage(org_id, graph)
        if publication.state == "failed":
            raise UpstreamError(
                "The advert could not be deleted entirely." + _leftovers(publication),
                remedy="Retry in a few minutes, or delete the listed objects in the platform's ads manager.",
            )
        record.publication = None
        self._save(record)
        logger.info("advert deleted", extra={"audience_id": audience_id})

    # --- The plan (dry run and real run) -------------------------------------------------------

    def _plan(
        self,
        record: AudienceRecord,
        request: PublishAdvertRequest,
        graph: GraphClient,
        idempotency_key: str | None,
    ) -> PublicationRecord:
        """The objects to create for ``request``, validated against the ad account and the platform."""
        account_id = record.ad_account_id
        account = read_ad_account(graph, account_id)
        budget = to_minor_units(request.daily_budget, account.currency, minimum=account.min_daily_budget)
        pixel = require_pixel(list_pixels(graph, account_id))
        pages = list_promotable_pages(graph, account_id)
        if not pages:
            raise PreconditionFailed(
                "The ad account has no Page it can promote, and an advert is posted as a Page.",
                remedy="Give the ad account access to your business's Page in the platform's business "
                "settings, then retry.",
            )
        link = with_utm(
            self._destination(record, request), campaign=request.campaign_name, audience=record.name
        )
        target_id, countries = self._targeting(record, request)
        beneficiary, payor = _dsa(request, account)
        # Every name carries the audience's reference (one advert per audience at a time): the
        # marketer can trace an object back to its audience, a create whose answer was lost is found
        # by name without mistaking another audience's object for it, and a dry run names exactly
        # what the real run will.
        ref = f"[{record.audience_id[:8]}]"
        name = request.campaign_name
        objects = [
            AdObjectRecord(
                kind="campaign",
                params=campaigns.campaign_params(
                    f"{name} {ref}", special_ad_categories=request.special_ad_categories
                ),
            ),
            AdObjectRecord(
                kind="adset",
                params=campaigns.adset_params(
                    name=f"{name} - {record.name} {ref}",
                    campaign_id=PLACEHOLDER % "campaign",
                    audience_id=target_id,
                    pixel_id=pixel.id,
                    countries=countries,
                    daily_budget_minor_units=budget,
                    advantage_audience=request.advantage_audience,
                    dsa_beneficiary=beneficiary,
                    dsa_payor=payor,
                ),
            ),
            AdObjectRecord(
                kind="adcreative",
                params=campaigns.creative_params(
                    name=f"{name} - creative {ref}",
                    page_id=pages[0].id,
                    link=link,
                    message=request.message,
                    headline=request.headline,
                    description=request.description,
                    image_url=str(request.image_url) if request.image_url else None,
                    call_to_action=request.call_to_action,
                ),
            ),
            AdObjectRecord(
                kind="ad",
                params=campaigns.ad_params(
                    name=f"{name} - ad {ref}",
                    adset_id=PLACEHOLDER % "adset",
                    creative_id=PLACEHOLDER % "adcreative",
                ),
            ),
        ]
        # The platform's own validation of what needs no parent: campaign and creative (the creative
        # is where a development-mode app is refused). Ad set and ad need their parents to exist.
        for planned in (objects[0], objects[2]):
            campaigns.validate_object(graph, account_id, EDGE_OF_KIND[planned.kind], planned.params)
        now = self.clock()
        return PublicationRecord(
            publication_id=str(uuid.uuid4()),
            state="creating",
            ad_account_id=account_id,
            activate=request.activate,
            objects=objects,
            destination_link=link,
            currency=account.currency,
            idempotency_key=idempotency_key,
            warnings=_warnings(account, beneficiary, payor),
            started_at=now,
            updated_at=now,
        )

    def _destination(self, record: AudienceRecord, request: PublishAdvertRequest) -> str:
        if request.checkout_route == "product_page":
            return str(request.destination_url)
        product_id = request.product_id or record.product_id
        if not product_id:
            raise ValidationFailed(
                "productId: the hosted checkout sells one product and the audience names none.",
                field="productId",
                remedy="Send productId with the request.",
            )
        assert self.checkout is not None, "this function's wiring gives no hosted checkout"
        return self.checkout.url(record.org_id, product_id)

    def _targeting(self, record: AudienceRecord, request: PublishAdvertRequest) -> tuple[str, list[str]]:
        """The audience to target (the lookalike for prospecting) and the countries to deliver in."""
        if record.objective == "prospecting":
            lookalike = record.lookalike
            if lookalike is None or lookalike.platform_audience_id is None:
                raise PreconditionFailed(
                    "This prospecting audience has no lookalike yet.",
                    remedy="Wait for the audience's activation to finish, then publish.",
                )
            return lookalike.platform_audience_id, [lookalike.country]
        assert record.platform_custom_audience_id is not None
        countries = (
            [c.upper() for c in request.countries] if request.countries else self._customer_countries(record)
        )
        if not countries:
            raise ValidationFailed(
                "countries: the customers of this audience have no country, and ads need one to deliver in.",
                field="countries",
                remedy="Send the countries to advertise in (ISO codes such as GB).",
            )
        return record.platform_custom_audience_id, countries

    def _customer_countries(self, record: AudienceRecord) -> list[str]:
        """The distinct countries of the audience's members: the users file its activation selected
        (a segment's customers, an uploaded list or the request's users, each with its country), else
        the users of the stored request; the request's default country when no member has one."""
        if record.source_key is None:
            return []
        source = CreateAudienceRequest.model_validate_json(self.blobs.get(record.source_key))
        activation = record.activation
        users_key = activation.users_key if activation is not None else None
        if activation is not None and activation.countries is not None:
            found = set(activation.countries)  # counted by the engine as SelectUsers read the list
        elif users_key is not None and self.blobs.exists(users_key):
            with self.blobs.open(users_key) as stream:  # a large list is read as it streams in
                found = _csv_countries(stream)
        else:
            found = {user.country.upper() for user in source.users if user.country}
        if not found and source.country:
            found = {source.country.upper()}
        return sorted(found)

    # --- Generate campaign with audience -------------------------------------------------------

    def ads_manager_link(self, org_id: str, audience_id: str, *, activating: bool = False) -> AdsManagerLink:
        """A link to the platform's ads manager on the audience's ad account with the audience (and
        for prospecting its lookalike) selected, to build the ad there. Creates nothing, so it works
        while the service's application is in development mode."""
        record = self._require_active(org_id, audience_id, activating=activating)
        ids = [record.platform_custom_audience_id or ""]
        if record.lookalike is not None and record.lookalike.platform_audience_id:
            ids.append(record.lookalike.platform_audience_id)
        account = record.ad_account_id.removeprefix("act_")
        base = self.policy.ads_manager_url.rstrip("/")
        url = f"{base}/adsmanager/audiences?act={account}&ids={','.join(ids)}"
        return AdsManagerLink(
            audience_id=audience_id,
            ad_account_id=f"act_{account}",
            platform_audience_ids=ids,
            url=url,
            message="Open the ads manager, select the audience and choose Create ad to build the campaign.",
        )

    # --- Records -------------------------------------------------------------------------------

    def _require(self, org_id: str, audience_id: str) -> AudienceRecord:
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            raise NotFound(
                f"Audience {audience_id} was not found.", remedy="List audiences to see their ids."
            )
        return record

    def _require_active(self, org_id: str, audience_id: str, *, activating: bool = False) -> AudienceRecord:
        """The audience, active; or (``activating``) at its activation's publishing step."""
        record = self._require(org_id, audience_id)
        at_step = (
            activating
            and record.activation is not None
            and record.activation.step in ("publish_advert", "generate_campaign")
        )
        if (record.status != "active" and not at_step) or record.platform_custom_audience_id is None:
            raise PreconditionFailed(
                f"Audience {audience_id} is {record.status}; an advert needs an active audience.",
                remedy="Wait for the audience's activation to finish (or retry it), then publish.",
            )
        return record

    def _save(self, record: AudienceRecord) -> None:
        now = self.clock()
        record.updated_at = now
        if record.publication is not None:
            record.publication.updated_at = now
        publication = record.publication

        def publish(target: AudienceRecord) -> None:
            # The publication is this service's only field: a sync or a check written meanwhile stays.
            target.publication = publication

        self.audiences.put(record, publish)


def _started(record: AudienceRecord) -> PublicationRecord:
    if record.publication is None:
        raise NotFound(
            f"Audience {record.audience_id} has no advert being published.",
            remedy="Publish an advert for it first.",
        )
    return record.publication


# How far before the publication started an object found by name may have been created (clock skew).
ADOPTION_SKEW = timedelta(minutes=5)


def _page_refusal(
    graph: GraphClient, ad_account_id: str, params: dict[str, object], refused: PlatformError
) -> PlatformError:
    """What to answer when the platform refused the creative: a Page the ad account can no longer
    promote (removed from the business, or the user's role on it lost since the plan) is the
    merchant's to fix, a 422 with what to do; otherwise the platform's own refusal."""
    spec = params.get("object_story_spec")
    page_id = str(spec.get("page_id", "")) if isinstance(spec, dict) else ""
    if not page_id or page_id in {page.id for page in list_promotable_pages(graph, ad_account_id)}:
        return refused
    return PageNotPromotable(
        f"The advert's Page {page_id} is no longer one the ad account can promote: it left the business, "
        "or the connected user lost their role on it.",
        remedy="Give the connected user a role on the Page again in the platform's business settings (or "
        "connect a Page the ad account can promote), then publish again: the readiness checklist shows "
        "which Pages it can promote.",
        detail=refused.detail,
    )


def _outcome_unknown(error: PlatformError) -> bool:
    """A failure after which the object may exist or be made by a second try: no answer (network),
    an HTTP 5xx or a transient error. A 4xx refusal is known: nothing was made, and it is rolled back."""
    if isinstance(error, PlatformUnavailable):
        return True
    detail = error.detail
    return detail is not None and (detail.http_status >= 500 or detail.is_transient)


def _already_gone(error: PlatformError) -> bool:
    """100/33: the object does not exist (deleted by hand meanwhile), so a deletion has its result
    (docs/platform-notes.md §3.5)."""
    return error.detail is not None and (error.detail.code, error.detail.subcode) == (100, 33)


def _adopt(publication: PublicationRecord, pending: AdObjectRecord, graph: GraphClient) -> bool:
    """Look for the object a create with a lost answer may have made: on the same edge, with the
    planned name, created since the publication started and not one we know. Found: it becomes
    ``created`` with its id (True); not found: back to ``planned`` (False)."""
    known = {o.platform_id for o in publication.objects if o.platform_id}
    since = publication.started_at - ADOPTION_SKEW
    name = pending.params.get("name")
    listed = campaigns.list_objects(
        graph, publication.ad_account_id, EDGE_OF_KIND[pending.kind], name=str(name) if name else None
    )
    candidates = [
        found
        for found in listed
        if found.name == name
        and found.id not in known
        and found.status != "DELETED"
        and found.created_time is not None
        and found.created_time >= since
    ]
    if not candidates:
        pending.state = "planned"
        return False
    newest = max(candidates, key=lambda found: found.created_time or since)
    pending.platform_id, pending.state = newest.id, "created"
    logger.info("adopted an advert object whose create answer was lost", extra={"kind": pending.kind})
    return True


def _resolve(params: dict[str, object], objects: Iterable[AdObjectRecord]) -> dict[str, object]:
    """``params`` with parent placeholders (``{campaign}``) replaced by the parents' platform ids."""
    ids = {PLACEHOLDER % o.kind: o.platform_id for o in objects if o.platform_id}

    def resolve(value: object) -> object:
        if isinstance(value, str) and value in ids:
            return ids[value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    return {key: resolve(value) for key, value in params.items()}


def _dsa(request: PublishAdvertRequest, account: AdAccountSettings) -> tuple[str | None, str | None]:
    """Beneficiary and payer: the user's, else the account's defaults, else its business name
    (docs/service-contract.md §7.2). None leaves the field out: the platform decides whether the
    targeted country needs it."""
    beneficiary = request.dsa_beneficiary or account.default_dsa_beneficiary or account.business_name
    payor = request.dsa_payor or account.default_dsa_payor or account.business_name
    return beneficiary, payor


def _warnings(account: AdAccountSettings, beneficiary: str | None, payor: str | None) -> list[str]:
    """What the account's settings let the platform refuse later, with the spec's remedies: the
    payment method is checked by the platform only when the ad is created (docs/platform-notes.md
    §6.6), the beneficiary only for regulated countries (docs/platform-notes.md §6.3)."""
    found = []
    if not account.has_funding:
        found.append(
            "The ad account has no payment method, so the platform will refuse the ad (Update payment "
            "method): add one in the platform's billing settings before publishing."
        )
    if beneficiary is None or payor is None:
        found.append(
            "No beneficiary or payer is known for this ad account: ads delivered in the EU, the UK, "
            "Australia and similar regions will be refused. Send dsaBeneficiary and dsaPayor, or set "
            "defaults in the ad account's advertising settings."
        )
    return found


def _reported(caught: ServiceError | None, publication: PublicationRecord) -> ServiceError:
    """The publication's failure, with what the rollback did, as the error to give the user."""
    failure = publication.failure
    outcome = _leftovers(publication) or (
        " Nothing was left on the platform: every object created before the failure was deleted."
    )
    if caught is not None:
        message = _sentence(caught.message) + outcome
        if isinstance(caught, PlatformError):
            return type(caught)(message, remedy=caught.remedy, detail=caught.detail)
        return type(caught)(message, field=caught.field, remedy=caught.remedy)
    message = _sentence(failure.message if failure else "Publishing the advert failed.") + outcome
    return PreconditionFailed(message, remedy=failure.remedy if failure else None)


def _leftovers(publication: PublicationRecord) -> str:
    """A sentence naming the objects a rollback could not delete, or "" when there are none."""
    left = [o for o in publication.objects if o.state == "delete_failed"]
    if not left:
        return ""
    listed = ", ".join(
        f"{o.kind} {o.platform_id}"
        if o.platform_id
        else f"{o.kind} named {o.params.get('name')!r} (unconfirmed)"
        for o in left
    )
    return (
        f" These objects could not be deleted and are listed on the audience: {listed}. "
        "Delete them in the platform's ads manager."
    )


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _view(
    audience_id: str, publication: PublicationRecord, message: str, dry_run: bool = False
) -> PublicationView:
    return PublicationView(
        audience_id=audience_id,
        state="dry_run" if dry_run else publication.state,
        dry_run=dry_run,
        activate=publication.activate,
        ad_account_id=publication.ad_account_id,
        currency=publication.currency,
        destination_link=publication.destination_link,
        objects=[
            AdObjectView(kind=o.kind, platform_id=o.platform_id, state=o.state, params=o.params)
            for o in publication.objects
        ],
        warnings=publication.warnings,
        message=message,
    )


def _csv_countries(data: BinaryIO) -> set[str]:
    """The distinct values of a users CSV's ``country`` column, upper-cased (none without the column)."""
    reader = csv.reader(io.TextIOWrapper(data, encoding="utf-8-sig", newline=""))
    header = next(reader, [])
    if "country" not in header:
        return set()
    at = header.index("country")
    return {row[at].strip().upper() for row in reader if len(row) > at and row[at].strip()}
