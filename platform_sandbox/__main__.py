"""``python -m platform_sandbox --host 127.0.0.1 --port 8900``: run the sandbox until interrupted."""

from __future__ import annotations

import argparse
import logging

from platform_sandbox.config import SandboxConfig
from platform_sandbox.scenarios import SCENARIOS
from platform_sandbox.server import SandboxServer
from sandbox_kit.server import serve_until_interrupted


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, start the server, print its URL and serve until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m platform_sandbox", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8900)
    parser.add_argument("--scenario", default="default", choices=sorted(SCENARIOS))
    parser.add_argument("--app-id", default=SandboxConfig().app_id)
    parser.add_argument("--app-secret", default=SandboxConfig().app_secret)
    parser.add_argument("--require-appsecret-proof", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    config = SandboxConfig(
        app_id=args.app_id,
        app_secret=args.app_secret,
        scenario=args.scenario,
        require_appsecret_proof=args.require_appsecret_proof,
    )
    server = SandboxServer(config, host=args.host)
    server.start(args.port)
    print(f"Platform sandbox listening on {server.url} (scenario {args.scenario})", flush=True)
    serve_until_interrupted(server)


if __name__ == "__main__":
    main()
