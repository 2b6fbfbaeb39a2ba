"""AWS calls per prediction, counted at the local stack's moto server (every request it receives).

The whole local stack runs (moto server, template resources, gateway); a small demo organization is
seeded, then predictions go through the gateway over HTTP exactly as a shop backend sends them:

* warm: the same key and model, after one call has warmed the container's caches. Target: <= 2.
* cold container: the predict function's warm workers recycled before the call, so it runs in a new
  worker, as a new Lambda container starts (key record, model record, bundle from S3, then the two writes).
* revoked key: the call right after a revocation is refused, and what it cost.

Run with ``python -m benchmarks predict_calls``.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import httpx

from benchmarks._rows import BenchRow, bench_row, print_rows

WARM_CALLS = 50
WARM_TARGET = 2


def run() -> list[BenchRow]:
    from local.seed import PURCHASE_MODEL, seed_demo
    from local.stack import LocalStack
    from shared import wiring
    from shared.auth.api_keys import issue_key
    from shared.predictions.key_management import revoke_api_key

    with LocalStack() as stack, httpx.Client(base_url=stack.api_url, timeout=30) as api:
        demo = seed_demo(stack, n_users=300)
        payload = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}

        def predict(key: str) -> int:
            response = api.post(
                f"/client/predict/{PURCHASE_MODEL}", json=payload, headers={"X-Service-Api-Key": key}
            )
            return response.status_code

        assert predict(demo.api_key) == 200
        stack.clear_aws_calls()
        assert all(predict(demo.api_key) == 200 for _ in range(WARM_CALLS))
        warm = stack.aws_calls()

        assert stack.runner is not None
        stack.runner.recycle("PredictFunction")
        stack.clear_aws_calls()
        assert predict(demo.api_key) == 200
        cold = stack.aws_calls()

        revoked = issue_key(demo.org_id, "to revoke", datetime.now(UTC))
        wiring.api_key_store().put(revoked.stored)
        assert predict(revoked.key) == 200
        revoke_api_key(
            demo.org_id,
            revoked.stored.key_id,
            datetime.now(UTC),
            keys=wiring.api_key_store(),
            days=wiring.key_day_meter(),
        )
        stack.clear_aws_calls()
        refused = predict(revoked.key)
        after_revocation = stack.aws_calls()

    per_call = len(warm) / WARM_CALLS
    return [
        bench_row(
            "aws_calls.warm_prediction",
            per_call,
            "calls",
            target=f"<= {WARM_TARGET}",
            passed=per_call <= WARM_TARGET,
            notes=f"mean over {WARM_CALLS} predictions through the local gateway: "
            f"{_summary(warm, WARM_CALLS)}; both writes issued together, one round trip waited",
        ),
        bench_row(
            "aws_calls.cold_container_prediction",
            float(len(cold)),
            "calls",
            notes=f"first prediction of a new container: {_summary(cold, 1)}",
        ),
        bench_row(
            "aws_calls.after_revocation",
            float(len(after_revocation)),
            "calls",
            passed=refused == 401,
            notes=f"warm container, key revoked since its last call: HTTP {refused}; "
            f"{_summary(after_revocation, 1)}",
        ),
    ]


def _summary(calls: list[str], per: int) -> str:
    counts = Counter(calls)
    return ", ".join(f"{name} x{count / per:g}" for name, count in sorted(counts.items())) or "none"


if __name__ == "__main__":
    print_rows(run())
