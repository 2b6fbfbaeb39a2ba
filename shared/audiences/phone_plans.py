"""libphonenumber's numbering plans, read once per container: on this module's first import, which
only the bulk phone rules make (``shared.activation.hashing``); reading every region's metadata costs
about 0.1 s, which a list of a few phones read by ``shared.audiences.phones`` should not pay. A module's
state, not a functools cache: immutable, nothing for ``wiring.reset`` to clear."""

from __future__ import annotations

from shared.audiences.phones import NumberingPlan, read_numbering_plans

_PLANS: dict[str, NumberingPlan] = read_numbering_plans()


def numbering_plans() -> dict[str, NumberingPlan]:
    """Every plan libphonenumber holds, by region code (``GB``) or, for a non-geographic calling
    code, by the code (``800``)."""
    return _PLANS
