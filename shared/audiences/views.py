"""What the service shows of a stored audience: records in, response bodies out."""

from __future__ import annotations

from shared.audiences.models import (
    AdvertObjectView,
    AdvertView,
    AudienceCreated,
    AudienceView,
    LookalikeView,
    SegmentView,
)
from shared.records.audiences import AudienceRecord, LookalikeRecord, PublicationRecord


def audience_view(record: AudienceRecord) -> AudienceView:
    """The audience as ``GET /platform-ads/audiences`` lists it, with its upload progress if any."""
    progress = None
    if record.upload is not None:
        progress = {
            "batchesDone": record.upload.batches_done,
            "batchesTotal": record.upload.batches_total,
            "received": record.upload.num_received,
            "invalid": record.upload.num_invalid_entries,
        }
    return AudienceView(
        audience_id=record.audience_id,
        name=record.name,
        status=record.status,
        user_count=record.user_count,
        objective=record.objective,
        product_id=record.product_id,
        model_id=record.model_id,
        platform_custom_audience_id=record.platform_custom_audience_id,
        created_at=record.created_at,
        lookalike=lookalike_view(record.lookalike),
        has_snapshot=record.snapshot_key is not None,
        progress=progress,
        failure=record.failure,
        advert=advert_view(record.publication),
        segment=SegmentView.model_validate(record.segment.model_dump()) if record.segment else None,
    )


def audience_created(record: AudienceRecord, message: str) -> AudienceCreated:
    """The response of docs/service-contract.md §4.3 for ``record``."""
    return AudienceCreated(
        success=True,
        audience_id=record.audience_id,
        platform_custom_audience_id=record.platform_custom_audience_id,
        user_count=record.user_count,
        status=record.status,
        message=message,
        quality=record.quality,
        lookalike=lookalike_view(record.lookalike),
    )


def lookalike_view(lookalike: LookalikeRecord | None) -> LookalikeView | None:
    if lookalike is None:
        return None
    return LookalikeView(
        platform_audience_id=lookalike.platform_audience_id,
        size_percent=lookalike.size_percent,
        country=lookalike.country,
        status=lookalike.status,
    )


def advert_view(publication: PublicationRecord | None) -> AdvertView | None:
    if publication is None:
        return None
    return AdvertView(
        state=publication.state,
        objects=[
            AdvertObjectView(kind=o.kind, platform_id=o.platform_id, state=o.state)
            for o in publication.objects
        ],
        failure=publication.failure,
    )
