"""What the readiness checklist reads from the platform before anything is created: the connected ad
account's ownership, the user's tasks on it, Custom Audience terms, payment method and DSA defaults,
its pixels, and whether the service's application is live (docs/platform-notes.md §1.7, §2.3, §6)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from shared.platform.client import GraphClient
from shared.platform.encoding import ad_account_node

ACCOUNT_FACTS_FIELDS = (
    "id,account_id,name,account_status,business{id,name},funding_source,tos_accepted,user_tasks,"
    "default_dsa_beneficiary,default_dsa_payor"
)
# The tasks a role grants on an ad account; ADVERTISE comes with the Admin and Advertiser roles.
ADVERTISE_TASK = "ADVERTISE"


class AccountFacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    account_status: int
    business_name: str | None
    user_tasks: tuple[str, ...]
    custom_audience_terms: bool
    has_funding: bool
    default_dsa_beneficiary: str | None
    default_dsa_payor: str | None

    @property
    def can_advertise(self) -> bool:
        return ADVERTISE_TASK in self.user_tasks


def read_account_facts(client: GraphClient, ad_account_id: str) -> AccountFacts:
    """One read of the connected ad account with every field the checklist needs."""
    node = client.get(ad_account_node(ad_account_id), {"fields": ACCOUNT_FACTS_FIELDS}).body
    business = node.get("business") if isinstance(node.get("business"), dict) else {}
    terms = node.get("tos_accepted") if isinstance(node.get("tos_accepted"), dict) else {}
    return AccountFacts(
        id=ad_account_node(ad_account_id),
        account_status=int(node.get("account_status") or 0),
        business_name=(business or {}).get("name") or None,
        user_tasks=tuple(str(task) for task in node.get("user_tasks") or []),
        custom_audience_terms=(terms or {}).get("custom_audience_tos") == 1,
        has_funding=bool(node.get("funding_source")),
        default_dsa_beneficiary=node.get("default_dsa_beneficiary") or None,
        default_dsa_payor=node.get("default_dsa_payor") or None,
    )


def app_is_live(client: GraphClient) -> bool:
    """Whether the service's application is in live mode (``GET /{app-id}?fields=is_live``, app token):
    a development-mode app cannot publish adverts (error 1885183)."""
    response = client.with_access_token(client.app_access_token).get(client.app_id, {"fields": "is_live"})
    return bool(response.body.get("is_live"))
