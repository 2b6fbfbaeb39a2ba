"""A local HTTP server speaking the subset of Meta's Graph/Marketing API the service uses.

Dev and test only. ``SandboxServer`` runs it on a local port; ``create_app`` gives the Flask app
for in-process tests; the admin API under ``/_admin`` sets up scenarios and shows what arrived.
Behaviour follows docs/platform-notes.md (each module cites its sections).
"""

from platform_sandbox.app import create_app
from platform_sandbox.config import BucQuotas, SandboxConfig
from platform_sandbox.scenarios import SCENARIOS
from platform_sandbox.server import SandboxServer
from platform_sandbox.state import SandboxState
from sandbox_kit.clock import AdjustableClock

__all__ = [
    "SCENARIOS",
    "AdjustableClock",
    "BucQuotas",
    "SandboxConfig",
    "SandboxServer",
    "SandboxState",
    "create_app",
]
