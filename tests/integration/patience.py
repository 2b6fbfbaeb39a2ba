"""How long the integration and browser tests wait for the service's background work: a sync and its
two trainings, an activation, an audience sync, a closure, a webhook delivery.

CI runs the whole suite on 2 cores at load 20 and more, where trainings and state machine tasks run as
local worker processes beside the tests: a sync with both trainings took over 120 s there (20:11 UTC
on 2026-11-28, load 21-22, make_synced_user). A poll returns as soon as its final state holds, so only a
test that would fail anyway waits the whole time; the time is a bound on a hang, not a speed."""

from __future__ import annotations

BACKGROUND_JOB_SECONDS = 600.0
BACKGROUND_JOB_MS = BACKGROUND_JOB_SECONDS * 1000
# A test's own read of a local fake's state (the sandboxes' admin routes), which answers in milliseconds
# on an idle machine: httpx's default 5 s is not enough at CI's load (a read of the platform sandbox's
# pixel events timed out at 5 s in a dry run of 55441f0, 2026-11-29 03:25 UTC, load 3-5 beside two
# benchmarks). Like the polls' bound, a bound on a hang, not a speed.
REQUEST_SECONDS = 60.0
