"""Lambda execution environments, locally: each function runs in worker processes of its own.

A worker is one function's "container": started on the function's first invocation (a cold start),
kept warm for the next ones, one invocation at a time (a second concurrent invocation gets a second
worker), with exactly the function's environment from ``template.yaml`` plus its role's credentials,
as Lambda gives them. Workers fork from a forkserver that has the heavy third-party modules imported
once, so a cold start costs the function's own imports and clients, not boto3's or pydantic's.

The runner holds every invocation to Lambda's rules, answering as Lambda answers:
- the function's ``Timeout``: past it the worker is killed and the caller gets ``Sandbox.Timedout``;
- a worker that dies mid-invocation (killed, out of memory): ``Runtime.ExitError``;
- an unhandled exception: ``{"errorMessage", "errorType", "stackTrace"}`` and nothing else (the
  handbook's reference/aws-facts.md, "Lambda errors seen by Step Functions");
- a result over the 6 MB synchronous response limit: ``Function.ResponseSizeTooLarge``;
- a function's ``ReservedConcurrentExecutions``: an invocation past it is not run but throttled, as
  Lambda's Invoke answers 429 ``TooManyRequestsException`` (Reason
  ``ReservedFunctionConcurrentInvocationLimitExceeded``). Its warm workers are also the last the
  runner stops when it keeps too many idle: a flood of other functions cannot take its pool.
Each invocation's duration and peak memory (the worker's resident-set high-water mark during that
invocation) are recorded (``FunctionRunner.invocations``).

Handlers get a Lambda context whose ``get_remaining_time_in_millis()`` counts down from the
function's ``Timeout``, as in Lambda: the time budget every outbound call is bounded by.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from decimal import Decimal
from multiprocessing import spawn
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import ModuleType
from typing import Any

from local.template import ACCOUNT_ID, FunctionSpec

Handler = Callable[[Any, Any], Any]
logger = logging.getLogger("local.runner")

REGION = "eu-west-1"
# Lambda's synchronous invocation limits (request and response payloads), in bytes.
MAX_RESPONSE_BYTES = 6_291_556
# How long a new worker may take to import its handler. Lambda allows 10 s of init, outside the
# function's Timeout; locally the first workers start while the forkserver is still importing, on a
# machine other work shares, so the wait is longer (a stuck init is still found).
INIT_WAIT_SECONDS = 120.0
# Imported once in the forkserver, shared by every worker forked from it. Only third-party modules
# that read no environment at import: each function's environment is set in its worker, after the
# fork, and the service's own modules (Powertools' logger reads POWERTOOLS_* when it is built) are
# imported there.
PRELOAD = [
    "boto3",
    "botocore.session",
    "botocore.client",
    "pydantic",
    "pydantic_settings",
    "httpx",
    "jwt",
    "cryptography.hazmat.primitives.ciphers.aead",
    "numpy",
    "aws_lambda_powertools.event_handler",
    "aws_lambda_powertools.utilities.idempotency",
    "aws_lambda_powertools.utilities.parser",
    "local.runner",  # the workers' own code
]
# Functions without business metrics of their own still flush (for the cold-start metric); Powertools
# warns about that on every invocation, which is noise on a developer's terminal. Workers ignore that
# warning only (the start of its message); every other warning still shows.
NO_METRICS_WARNING = "No application metrics to publish"


@dataclass
class LambdaContext:
    """The Lambda context object, as the Python runtime builds it: ``get_remaining_time_in_millis``
    counts down to the invocation's deadline (now + the function's ``Timeout``)."""

    function_name: str
    memory_limit_in_mb: int
    aws_request_id: str
    deadline_ms: int
    function_version: str = "$LATEST"
    identity: Any = None
    client_context: Any = None

    def __post_init__(self) -> None:
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{self.function_name}"
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "local"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.deadline_ms - int(time.time() * 1000))


@dataclass(frozen=True)
class Invocation:
    """One invocation, as its caller sees it and as the runner measured it."""

    function: str
    request_id: str
    cold_start: bool
    duration_ms: float
    # The worker's resident-set high-water mark during the invocation (MB); None if it died first.
    peak_memory_mb: float | None
    # The function's result (already through JSON, as Lambda returns it), when it succeeded.
    result: Any = None
    # The error payload Lambda returns (errorType, errorMessage[, stackTrace]), when it failed.
    error: dict[str, Any] | None = None
    # Refused at the function's reserved concurrency: it never ran (Lambda's 429).
    throttled: bool = False

    @property
    def succeeded(self) -> bool:
        return self.error is None

    def result_or_raise(self) -> Any:
        """The result; a failed invocation raises ``FunctionFailed`` with Lambda's error payload."""
        if self.error is not None:
            raise FunctionFailed(self.error)
        return self.result


class FunctionFailed(Exception):
    """A direct invocation that failed: what its caller gets from Lambda, the error payload."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(f"{payload.get('errorType')}: {payload.get('errorMessage')}")
        self.payload = payload
        self.error_type: str = payload.get("errorType", "")
        self.error_message: str = payload.get("errorMessage", "")


def error_payload(exc: BaseException) -> dict[str, Any]:
    """Exactly what the Python runtime returns for an unhandled exception: errorMessage, errorType
    (the class name) and stackTrace; nothing else, so nothing local-only reaches a Catch."""
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }


def timed_out_payload(request_id: str, timeout: float) -> dict[str, Any]:
    """What Lambda returns (``FunctionError: Unhandled``) for a function that ran past its ``Timeout``:
    the error name Step Functions matches is ``Sandbox.Timedout``; no stack trace (the runtime did
    not raise: Lambda stopped it)."""
    return {
        "errorType": "Sandbox.Timedout",
        "errorMessage": f"RequestId: {request_id} Error: Task timed out after {timeout:.2f} seconds",
    }


def throttled_payload() -> dict[str, Any]:
    """What Lambda's Invoke answers (HTTP 429) to an invocation past the function's reserved
    concurrency: nothing ran. (Step Functions names this error ``Lambda.TooManyRequestsException``.)"""
    return {
        "errorType": "TooManyRequestsException",
        "errorMessage": "Rate Exceeded.",
        "Reason": "ReservedFunctionConcurrentInvocationLimitExceeded",
    }


def exited_payload(request_id: str) -> dict[str, Any]:
    """What Lambda returns when the runtime process died mid-invocation (SIGKILL, out of memory)."""
    return {
        "errorType": "Runtime.ExitError",
        "errorMessage": f"RequestId: {request_id} Error: Runtime exited with error: signal: killed",
    }


def too_large_payload(size: int) -> dict[str, Any]:
    return {
        "errorType": "Function.ResponseSizeTooLarge",
        "errorMessage": f"Response payload size ({size} bytes) exceeded maximum allowed payload size "
        f"({MAX_RESPONSE_BYTES} bytes).",
    }


def load_handler(spec: FunctionSpec) -> Handler:
    """Import ``handler.py`` of a function from its CodeUri under a unique module name."""
    module_file, _, attr = spec.handler.rpartition(".")
    path = spec.code_dir / f"{module_file.replace('.', '/')}.py"
    name = f"lambda_{spec.logical_id}_{module_file}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise FileNotFoundError(path)
    module: ModuleType = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    handler: Handler = getattr(module, attr)
    return handler


def _json_default(value: Any) -> Any:
    # The Python runtime's encoder turns Decimals into numbers; anything else it cannot encode fails.
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _peak_reset() -> None:
    # Writing 5 to clear_refs resets the process's VmHWM (Linux), so the next read is this
    # invocation's peak rather than the worker's lifetime one.
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass


def _peak_mb() -> float | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _worker_main(conn: Connection, spec: FunctionSpec, environment: dict[str, str], name: str) -> None:
    """A worker: the function's environment, its handler imported (init), then one invocation per
    message until the runner closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the stack, which stops its workers
    # A worker is forked from the forkserver, not from the parent: the parent's filters are not here.
    warnings.filterwarnings("ignore", message=NO_METRICS_WARNING)
    os.environ.clear()
    os.environ.update(environment)
    init_error: dict[str, Any] | None = None
    try:
        handler = load_handler(spec)
    except Exception as exc:  # Lambda answers every invocation of a broken init with the error
        init_error = {**error_payload(exc), "errorType": "Runtime.ImportModuleError"}
    conn.send(("ready", None, None))
    while True:
        try:
            request_id, event, deadline_ms = conn.recv()
        except EOFError:
            return
        _peak_reset()
        if init_error is not None:
            conn.send(("error", init_error, _peak_mb()))
            continue
        context = LambdaContext(name, spec.memory_size, request_id, deadline_ms)
        try:
            result = handler(event, context)
            body = json.dumps(result, default=_json_default)
        except Exception as exc:
            conn.send(("error", error_payload(exc), _peak_mb()))
            continue
        conn.send(("ok", body, _peak_mb()))


_MAIN_LOCK = threading.Lock()


@contextmanager
def _no_main_in_workers() -> Iterator[None]:
    """A worker runs ``_worker_main``, which needs nothing of this process's main module; without
    this, multiprocessing would import (or run, for a script such as pytest's) the main module again
    in every new worker, a second of a cold start."""
    with _MAIN_LOCK:
        original = spawn.get_preparation_data

        def without_main(name: str) -> dict[str, Any]:
            data: dict[str, Any] = original(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        spawn.get_preparation_data = without_main
        try:
            yield
        finally:
            spawn.get_preparation_data = original


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    invocations: int = 0
    idle_since: float = 0.0

    def kill(self) -> None:
        # The forkserver reaps its children: no need to wait here for the exit.
        if self.process.pid is not None:
            with suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)
        self.conn.close()


@dataclass
class FunctionRunner:
    """Runs the template's functions in workers of their own (see the module's docstring).

    ``environment_of(logical id)`` gives a function's whole environment (its variables from the
    template, resolved, plus region, endpoint and its role's credentials); ``physical_names`` the
    name each function has in the stack (``local-<LogicalId>``), which its context reports.
    """

    specs: dict[str, FunctionSpec]
    environment_of: Callable[[str], dict[str, str]]
    physical_names: dict[str, str] = field(default_factory=dict)
    # Warm workers kept across all functions (about 100 MB each); past it the one idle longest is
    # stopped, as Lambda reclaims idle environments, and its function's next call is a cold start.
    max_idle: int = 24
    # ``ReservedConcurrentExecutions`` by function: the most invocations of it that run at once.
    reserved: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(PRELOAD)
        self._idle: dict[str, list[_Worker]] = {name: [] for name in self.specs}
        # The invocations running now, by the thread waiting for each: function, worker, event.
        self._busy: dict[int, tuple[str, _Worker, Any]] = {}
        self._overrides: dict[str, str] = {}
        self._lock = threading.Lock()
        self._log: list[Invocation] = []
        self._running: dict[str, int] = dict.fromkeys(self.specs, 0)

    def invoke(self, function: str, event: Any, *, timeout: float | None = None) -> Invocation:
        """Run one invocation of ``function`` with ``event`` and wait for it, at most the function's
        ``Timeout`` (or ``timeout`` seconds if smaller: a caller that gives up sooner, like API
        Gateway at 30 s). The worker is killed when the time is up, as Lambda stops a sandbox."""
        spec = self.specs[function]
        limit = spec.timeout if timeout is None else min(timeout, spec.timeout)
        request_id = str(uuid.uuid4())
        with self._lock:
            reserved = self.reserved.get(function)
            if reserved is not None and self._running[function] >= reserved:
                refused = True
            else:
                refused = False
                self._running[function] += 1
        if refused:
            return self._record(
                function, request_id, False, time.monotonic(), None, error=throttled_payload(), throttled=True
            )
        try:
            return self._run(function, spec, event, limit, request_id)
        finally:
            with self._lock:
                self._running[function] -= 1

    def _run(
        self, function: str, spec: FunctionSpec, event: Any, limit: float, request_id: str
    ) -> Invocation:
        worker, cold = self._acquire(function)
        started = time.monotonic()
        deadline_ms = int(time.time() * 1000) + spec.timeout * 1000
        ident = threading.get_ident()
        with self._lock:
            self._busy[ident] = (function, worker, event)
        try:
            worker.conn.send((request_id, event, deadline_ms))
            if not worker.conn.poll(limit):
                worker.kill()
                return self._record(
                    function, request_id, cold, started, None, error=timed_out_payload(request_id, limit)
                )
            try:
                outcome, body, peak = worker.conn.recv()
            except (EOFError, ConnectionError, OSError):
                worker.kill()
                return self._record(
                    function, request_id, cold, started, None, error=exited_payload(request_id)
                )
        except (BrokenPipeError, OSError):
            worker.kill()
            return self._record(function, request_id, cold, started, None, error=exited_payload(request_id))
        finally:
            with self._lock:
                self._busy.pop(ident, None)
        worker.invocations += 1
        worker.idle_since = time.monotonic()
        with self._lock:
            self._idle[function].append(worker)
            idle = [(w.idle_since, name, w) for name, workers in self._idle.items() for w in workers]
            # Oldest first, but a function's workers within its reserved concurrency last.
            kept = {name: self.reserved.get(name, 0) for name in self._idle}
            order = sorted(
                idle,
                key=lambda entry: (self._idle[entry[1]].index(entry[2]) < kept[entry[1]], entry[0]),
            )
            evicted = order[: max(0, len(idle) - self.max_idle)]
            for _, name, stale in evicted:
                self._idle[name].remove(stale)
        for _, _, stale in evicted:
            stale.kill()
        if outcome == "error":
            return self._record(function, request_id, cold, started, peak, error=body)
        if len(body.encode()) > MAX_RESPONSE_BYTES:
            return self._record(function, request_id, cold, started, peak, error=too_large_payload(len(body)))
        return self._record(function, request_id, cold, started, peak, result=json.loads(body))

    def _acquire(self, function: str) -> tuple[_Worker, bool]:
        with self._lock:
            while self._idle[function]:
                worker = self._idle[function].pop()
                if worker.process.is_alive():
                    return worker, False
                worker.conn.close()
            overrides = dict(self._overrides)
        return self._start(function, overrides), True

    def _start(self, function: str, overrides: dict[str, str]) -> _Worker:
        parent, child = self._context.Pipe()
        name = self.physical_names.get(function, function)
        environment = {
            str(key): str(value) for key, value in {**self.environment_of(function), **overrides}.items()
        }
        process = self._context.Process(
            target=_worker_main,
            # The template's variables are in ``environment``, resolved; its YAML nodes stay here.
            args=(child, replace(self.specs[function], environment={}), environment, name),
            name=f"lambda-{function}",
            daemon=True,
        )
        with _no_main_in_workers():
            process.start()
        child.close()
        worker = _Worker(process, parent)
        if not parent.poll(INIT_WAIT_SECONDS):
            worker.kill()
            raise RuntimeError(f"{function}'s worker did not finish its init in {INIT_WAIT_SECONDS:.0f} s")
        parent.recv()  # ready: the function's Timeout counts from here, as Lambda's does after init
        return worker

    def _record(
        self,
        function: str,
        request_id: str,
        cold: bool,
        started: float,
        peak: float | None,
        result: Any = None,
        error: dict[str, Any] | None = None,
        throttled: bool = False,
    ) -> Invocation:
        done = Invocation(
            function=function,
            request_id=request_id,
            cold_start=cold,
            duration_ms=(time.monotonic() - started) * 1000,
            peak_memory_mb=peak,
            result=result,
            error=error,
            throttled=throttled,
        )
        with self._lock:
            self._log.append(done)
        if error is not None:  # what Lambda writes to the function's log
            logger.warning(
                "%s %s failed: %s: %s%s",
                function,
                request_id,
                error.get("errorType"),
                error.get("errorMessage"),
                "".join(["\n", *error.get("stackTrace", [])]) if error.get("stackTrace") else "",
            )
        return done

    def invocations(self) -> list[Invocation]:
        """Every invocation since the runner started (or ``clear_invocations``), oldest first."""
        with self._lock:
            return list(self._log)

    def clear_invocations(self) -> None:
        with self._lock:
            self._log.clear()

    def recycle(self, function: str | None = None) -> None:
        """Stop the idle workers of ``function`` (of every function if None): its next invocation is a
        cold start, in a new environment (Lambda recycles environments the same way)."""
        with self._lock:
            names = list(self._idle) if function is None else [function]
            stopped = [worker for name in names for worker in self._idle[name]]
            for name in names:
                self._idle[name] = []
        for worker in stopped:
            worker.kill()

    def running_events(self, function: str) -> list[Any]:
        """The events of ``function``'s invocations running right now (a test's hook asks which step
        a state machine's task is in before it kills it)."""
        with self._lock:
            return [event for name, _, event in self._busy.values() if name == function]

    def kill_running(self, function: str, where: Callable[[Any], bool] | None = None) -> int:
        """Kill the workers running ``function`` right now (only those whose event ``where`` accepts,
        when given), as a crash or the out-of-memory killer would: their invocations end with
        ``Runtime.ExitError``. Returns how many were killed."""
        with self._lock:
            running = [
                worker
                for name, worker, event in self._busy.values()
                if name == function and (where is None or where(event))
            ]
        for worker in running:
            if worker.process.pid is not None and worker.process.is_alive():
                os.kill(worker.process.pid, signal.SIGKILL)
        return len(running)

    @contextmanager
    def reserving(self, function: str, concurrency: int) -> Iterator[None]:
        """``function``'s reserved concurrency is ``concurrency`` inside the block (0 throttles every
        invocation, as Lambda does: the way to stop a function), its template's after it."""
        with self._lock:
            before = self.reserved.get(function)
            self.reserved[function] = concurrency
        try:
            yield
        finally:
            with self._lock:
                if before is None:
                    self.reserved.pop(function, None)
                else:
                    self.reserved[function] = before

    @contextmanager
    def environment(self, **variables: str) -> Iterator[None]:
        """Every function started inside the block gets ``variables`` added to its environment (a
        test's setting, say a lower limit); warm workers are recycled on entry and on exit so no
        invocation mixes the two."""
        self.recycle()
        with self._lock:
            self._overrides.update(variables)
        try:
            yield
        finally:
            with self._lock:
                for key in variables:
                    self._overrides.pop(key, None)
            self.recycle()

    def stop(self) -> None:
        self.recycle()
