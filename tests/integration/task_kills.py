"""A task that dies mid-way (issue 25, item 6), as the integration tests plant it: the local runner's
test hook (``FunctionRunner.kill_running``) kills the worker process running a function's task (the
out-of-memory killer or a crash: no ``except`` or saving code runs), fired from the stack's AWS hook
(the function's own role signs the call) or the platform sandbox's answer hook. Used by
``test_killed_steps.py`` (the activation) and ``test_killed_sync_steps.py`` (the audience sync and the
data source's sync)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from local.moto_server import AwsRequest
from local.stack import LocalStack

# The AWS calls that change something: a kill at one of them stands for dying mid-way through a write.
WRITES = frozenset(
    {
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:TransactWriteItems",
        "dynamodb:BatchWriteItem",
        "s3:PUT",
        "s3:POST",
        "s3:DELETE",
    }
)


def action_is(action: str) -> Callable[[Any], bool]:
    """Whether a task's event is the one for ``action`` (the state machine's ``"action"`` field)."""
    return lambda event: isinstance(event, dict) and event.get("action") == action


@contextmanager
def killed_at_write(
    stack: LocalStack, function: str, task: Callable[[Any], bool], *, service: str | None = None, nth: int = 1
) -> Iterator[list[str]]:
    """Inside the block, kill ``function``'s task whose event ``task`` accepts when it sends its
    ``nth`` write to AWS (one of :data:`WRITES`; only those to ``service``, ``s3`` or ``dynamodb``,
    when named), counting the function's writes sent while such a task runs. Yields the write the
    kill came at (empty: none)."""
    assert stack.runner is not None
    runner, role = stack.runner, stack.roles[function].access_key_id
    seen = 0
    killed: list[str] = []

    def hook(request: AwsRequest) -> None:
        nonlocal seen
        if killed or request.access_key_id != role or request.name not in WRITES:
            return
        if service is not None and not request.name.startswith(f"{service}:"):
            return
        if not any(task(event) for event in runner.running_events(function)):
            return
        seen += 1
        if seen >= nth and runner.kill_running(function, task):
            killed.append(request.name)

    with stack.aws_hook(hook):
        yield killed


@contextmanager
def killed_after_answer(
    stack: LocalStack, function: str, task: Callable[[Any], bool], path_end: str
) -> Iterator[list[str]]:
    """Inside the block, kill ``function``'s task whose event ``task`` accepts once the platform
    answered 200 to a POST on a path ending in ``path_end`` and before the answer reaches it: the
    platform did what was asked, the task never learnt it. Yields the path the kill came at (empty:
    none)."""
    assert stack.runner is not None
    runner = stack.runner
    killed: list[str] = []

    def hook(method: str, path: str, status: int) -> None:
        if (
            not killed
            and method == "POST"
            and path.endswith(path_end)
            and status == 200
            and runner.kill_running(function, task)
        ):
            killed.append(path)

    stack.sandbox.answer_hooks.append(hook)
    try:
        yield killed
    finally:
        stack.sandbox.answer_hooks.remove(hook)
