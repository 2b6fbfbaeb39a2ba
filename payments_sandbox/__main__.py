"""``python -m payments_sandbox --port 8910 --secret-key sk_test_...``: run the sandbox until interrupted."""

from __future__ import annotations

import argparse
import logging

from payments_sandbox.config import PaymentsSandboxConfig
from payments_sandbox.server import PaymentsSandboxServer
from sandbox_kit.server import serve_until_interrupted


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, start the server, print its URL and serve until Ctrl-C."""
    defaults = PaymentsSandboxConfig()
    parser = argparse.ArgumentParser(prog="python -m payments_sandbox", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8910)
    parser.add_argument(
        "--secret-key",
        default=defaults.secret_key,
        help="the platform's test secret key (sk_test_...) it accepts",
    )
    parser.add_argument(
        "--webhook-retry-delays",
        default=",".join(f"{delay:g}" for delay in defaults.webhook_retry_delays),
        help="seconds before each retry of a failed webhook delivery, comma-separated",
    )
    parser.add_argument(
        "--public-url", default=None, help="base URL of the hosted pages, if not the server's own"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        config = PaymentsSandboxConfig(
            secret_key=args.secret_key,
            webhook_retry_delays=[float(delay) for delay in args.webhook_retry_delays.split(",") if delay],
            public_url=args.public_url,
        )
    except ValueError as exc:
        parser.error(str(exc))
    server = PaymentsSandboxServer(config, host=args.host)
    server.start(args.port)
    print(f"Payments sandbox listening on {server.url} (admin API under /_admin)", flush=True)
    serve_until_interrupted(server)


if __name__ == "__main__":
    main()
