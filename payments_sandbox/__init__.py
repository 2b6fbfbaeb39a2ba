"""A local HTTP server speaking the subset of the card-payment provider's API the service uses.

Dev and test only. Connected accounts and their hosted onboarding page, Checkout Sessions on a
connected account and their hosted payment page (test cards), expiry, webhook endpoints with signed
deliveries and retries, idempotency keys and the provider's error envelope, as
docs/payments-notes.md describes them; the provider's official SDK works against it unpatched.
``PaymentsSandboxServer`` runs it on a local port; ``create_app`` gives the Flask app for in-process
tests; the admin API under ``/_admin`` shows what arrived and injects faults.
"""

from payments_sandbox.app import create_app
from payments_sandbox.config import PaymentsSandboxConfig
from payments_sandbox.server import PaymentsSandboxServer
from payments_sandbox.state import PaymentsSandboxState
from sandbox_kit.clock import AdjustableClock

__all__ = [
    "AdjustableClock",
    "PaymentsSandboxConfig",
    "PaymentsSandboxServer",
    "PaymentsSandboxState",
    "create_app",
]
