"""``make dev``: run the whole service locally with demo data until Ctrl-C."""

from __future__ import annotations

import argparse
import json
import signal
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from local.runner import NO_METRICS_WARNING
from local.sam_env import SAM_ENV_FILE, write_sam_env
from local.seed import as_dict, demo_shop, seed_demo, write_shop_files
from local.stack import LocalStack, ports_in_use
from local.template import ROOT, functions, load_template
from shared.clock import utc_now

CREDENTIALS_FILE = ROOT / ".local" / "credentials.json"
SHOP_FILES = ROOT / ".local" / "demo-shop"


def main() -> None:
    # Powertools' warning that a function flushed no business metrics (see local.runner, whose
    # workers ignore it too) is noise on a developer's terminal.
    warnings.filterwarnings("ignore", message=NO_METRICS_WARNING)
    parser = argparse.ArgumentParser(description="Run the service locally (moto, gateway, demo data).")
    parser.add_argument("--port", type=int, default=3000, help="API port (default 3000)")
    parser.add_argument(
        "--dashboard-port",
        type=int,
        default=3001,
        help="dashboard port, the OAuth redirect's origin (default 3001)",
    )
    parser.add_argument("--moto-port", type=int, default=5001, help="moto server port (default 5001)")
    parser.add_argument("--sandbox-port", type=int, default=8900, help="platform sandbox port (default 8900)")
    parser.add_argument(
        "--payments-port", type=int, default=8910, help="payments sandbox port (default 8910)"
    )
    parser.add_argument(
        "--validate-every", type=float, default=60, help="minutes between token-validation runs (default 60)"
    )
    parser.add_argument(
        "--sync-every", type=float, default=15, help="minutes between audience sync runs (default 15)"
    )
    args = parser.parse_args()
    busy = ports_in_use(
        "127.0.0.1",
        {
            "--port": args.port,
            "--dashboard-port": args.dashboard_port,
            "--moto-port": args.moto_port,
            "--sandbox-port": args.sandbox_port,
            "--payments-port": args.payments_port,
        },
    )
    if busy:
        raise SystemExit(ports_busy_message(busy))

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    with LocalStack(
        moto_port=args.moto_port,
        gateway_port=args.port,
        sandbox_port=args.sandbox_port,
        payments_port=args.payments_port,
        dashboard_port=args.dashboard_port,
    ) as stack:
        shop = demo_shop(ending=utc_now())
        credentials = seed_demo(stack, shop=shop)
        write_shop_files(SHOP_FILES, shop)
        info = {
            "dashboard_url": stack.dashboard_url,
            "api_url": stack.api_url,
            "aws_endpoint_url": stack.moto_url,
            "platform_sandbox_url": stack.sandbox.url,
            "payments_sandbox_url": stack.payments.url,
            **as_dict(credentials),
        }
        write_credentials(CREDENTIALS_FILE, info)
        # For `sam local invoke --env-vars` (Docker): every function pointed at this stack.
        write_sam_env(
            SAM_ENV_FILE, functions(load_template()), {**stack.env, "AWS_ENDPOINT_URL": stack.moto_url}
        )
        print(banner(info), flush=True)
        schedule(stop, args.validate_every * 60, lambda: run_job(stack, "ValidateTokensFunction"))
        # As deployed (rate(15 minutes)): audiences left mid-upload are resumed or failed.
        schedule(stop, 15 * 60, lambda: run_job(stack, "SweepStrandedUploadsFunction"))
        # As deployed (rate(15 minutes)): the due syncs of segment audiences start.
        schedule(stop, args.sync_every * 60, lambda: run_job(stack, "SyncAudiencesFunction"))
        stop.wait()
        print("\nStopping the local stack...", flush=True)


def ports_busy_message(busy: dict[str, int]) -> str:
    """What to do when another program listens on ports the local stack needs (``busy``: flag -> port)."""
    ports = ", ".join(f"{port} ({flag})" for flag, port in busy.items())
    flags = " ".join(f"{flag} <port>" for flag in busy)
    return (
        f"The local stack cannot start: another program listens on {ports}. If it is make dev already "
        "running, use that one or stop it (Ctrl-C in its terminal); otherwise start on free ports: "
        f".venv/bin/python -m local {flags}"
    )


def schedule(stop: threading.Event, every_seconds: float, job: Callable[[], None]) -> None:
    """Run ``job`` every ``every_seconds`` until ``stop`` is set (EventBridge Scheduler, locally)."""

    def loop() -> None:
        while not stop.wait(every_seconds):
            job()

    threading.Thread(target=loop, name="local-scheduler", daemon=True).start()


def run_job(stack: LocalStack, function: str) -> None:
    assert stack.gateway is not None
    try:
        result = stack.gateway.invoke(function, {"source": "aws.scheduler", "detail-type": "Scheduled Event"})
        print(f"[scheduler] {function}: {json.dumps(result)}", flush=True)
    except Exception as exc:  # a failed run is reported and retried next time, as the scheduler does
        print(f"[scheduler] {function} failed: {exc!r}", flush=True)


def write_credentials(path: Path, info: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=2) + "\n")
    path.chmod(0o600)


def banner(info: dict[str, object]) -> str:
    api = info["api_url"]
    key_header = f"-H 'X-Service-Api-Key: {info['api_key']}'"
    return "\n".join(
        [
            "",
            "Local stack is up (Ctrl-C stops everything).",
            "  Nothing is kept across a restart: moto, the platform sandbox and the payments sandbox",
            "  hold their state in memory, so each start seeds the demo data afresh (connect the ad",
            "  account and sync the shop files again; what was made before is gone).",
            f"  Dashboard      {info['dashboard_url']}  (sign in as {info['email']} / {info['password']})",
            f"  API            {api}",
            f"  AWS (moto)     {info['aws_endpoint_url']}",
            f"  Platform       {info['platform_sandbox_url']} (sandbox; admin API under /_admin)",
            f"  Payments       {info['payments_sandbox_url']} (sandbox; admin API under /_admin)",
            f"  Organization   {info['org_id']}",
            f"  Dashboard user {info['email']} / {info['password']}",
            f"  API key        {info['api_key']}",
            f"  Credentials    {CREDENTIALS_FILE.relative_to(ROOT)} (git-ignored)",
            f"  Shop files     {SHOP_FILES.relative_to(ROOT)}/customers.csv, products.csv, orders.csv"
            " (upload them in the dashboard's launch wizard)",
            f"  sam local      {SAM_ENV_FILE.relative_to(ROOT)} (sam local invoke --env-vars, with Docker)",
            "",
            "Try:",
            f"  curl -s {api}/client/models {key_header}",
            f"  curl -s {api}/client/predict/purchase-likelihood {key_header} \\",
            f'       -H \'Content-Type: application/json\' -d \'{{"input": {{"user_id": '
            f'"{info["sample_user_id"]}", "product_id": "{info["sample_product_id"]}"}}}}\'',
            f'  curl -s -X POST {api}/platform-ads/connect -H "Authorization: Bearer $TOKEN"',
            "    (TOKEN: id_token in the credentials file; open the returned authorizationUrl in a browser)",
            f"  curl -s -X POST {api}/_local/invoke/ValidateTokensFunction -d @events/validate_tokens.json",
            "",
        ]
    )


if __name__ == "__main__":
    main()
