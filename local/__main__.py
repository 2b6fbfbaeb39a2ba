"""``make dev``: run the whole service locally with demo data until Ctrl-C."""

from __future__ import annotations

import argparse
import json
import signal
import threading
from pathlib import Path

from local.seed import as_dict, seed_demo
from local.stack import LocalStack
from local.template import ROOT

CREDENTIALS_FILE = ROOT / ".local" / "credentials.json"


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the service locally (moto, gateway, demo data).")
    parser.add_argument("--port", type=int, default=3000, help="API port (default 3000)")
    parser.add_argument("--moto-port", type=int, default=5001, help="moto server port (default 5001)")
    args = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    with LocalStack(moto_port=args.moto_port, gateway_port=args.port) as stack:
        credentials = seed_demo(stack)
        info = {"api_url": stack.api_url, "aws_endpoint_url": stack.moto_url, **as_dict(credentials)}
        write_credentials(CREDENTIALS_FILE, info)
        print(banner(info), flush=True)
        stop.wait()
        print("\nStopping the local stack...", flush=True)


def write_credentials(path: Path, info: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=2) + "\n")
    path.chmod(0o600)


def banner(info: dict[str, str]) -> str:
    api = info["api_url"]
    return "\n".join(
        [
            "",
            "Local stack is up (Ctrl-C stops everything).",
            f"  API            {api}",
            f"  AWS (moto)     {info['aws_endpoint_url']}",
            f"  Organization   {info['org_id']}",
            f"  Dashboard user {info['email']} / {info['password']}",
            f"  API key        {info['api_key']}",
            f"  Credentials    {CREDENTIALS_FILE.relative_to(ROOT)} (git-ignored)",
            "",
            "Try:",
            f"  curl -s {api}/client/models -H 'X-Service-Api-Key: {info['api_key']}'",
            "",
        ]
    )


if __name__ == "__main__":
    main()
