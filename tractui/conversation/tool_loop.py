"""One round of a tool loop: the calls a reply made, each asked about, run and answered in order.

Every call id gets exactly one result, stored as a ``tool`` commit, also when
the call is denied, cancelled, timed out, unknown or failed: a provider
refuses the next request for a call left without one. Consent comes first:
a call the policy does not already allow waits for the front end's choice
(the app asks; print mode denies unless a flag allows).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tractui.core.content import Content, ToolCallBlock, ToolResultBlock
from tractui.core.events import Notice, ToolCallState, ToolStatus
from tractui.core.tokens import TokenCounter
from tractui.core.tools import ToolSpec
from tractui.providers.config import ProviderConfig
from tractui.store.history import HistoryStore
from tractui.tools.consent import ConsentPolicy, Decision, ToolRequest
from tractui.tools.toolbox import ToolOutcome

Approver = Callable[[ToolRequest], Awaitable[Decision]]
T = TypeVar("T")

NO_CONSENT = "not run: tools need the user's consent and none could be asked (--allow-tool NAME allows one)"
CANCELLED = "cancelled by the user before it finished"  # it had started
NOT_STARTED = "not run: the user stopped the reply before this call started"
CUT_SHORT = "not run: the reply that asked for it ended with an error before the call could start"
TOOLS_OFF = "not run: the user switched tools off for this session (tools.enabled false)"
UNKNOWN = "not run: tractui offered no tool named '{name}'"


class ToolRunner(Protocol):
    """What the loop needs of the tools (``tractui.tools.toolbox.Toolbox`` is the real one)."""

    consent: ConsentPolicy

    @property
    def starting(self) -> list[str]:
        """Servers not ready yet: the next request waits for them (bounded)."""
        ...

    async def settled(self, timeout: float | None = None) -> bool: ...

    def serves(self, provider: str) -> bool:
        """Whether these tools are offered to a model of ``provider`` (the built-in demo tools only to the demo)."""
        ...

    def refusal(self, request: ToolRequest) -> ToolOutcome | None:
        """Why the call cannot be run now (its tool switched off, its server failed or stopped: not run;
        arguments that are not a JSON object: an error): no one is asked, the model reads why."""
        ...

    def use(self, servers: Collection[str] | None, provider: ProviderConfig, *, restart_failed: bool = False) -> None:
        """Run the servers a profile names (all when ``None``) for ``provider``, and no others; with
        ``restart_failed``, start again the ones among them that failed."""
        ...

    def definitions(self) -> list[ToolSpec]: ...

    def request(self, call: ToolCallBlock) -> ToolRequest | None:
        """The call as the user would be asked about it; ``None`` for a name tractui never offered."""
        ...

    async def call(self, request: ToolRequest, *, counter: TokenCounter, max_tokens: int) -> ToolOutcome: ...


@dataclass
class ToolRound:
    """Runs the calls of one reply; ``parent_id`` is the head once it is done (the last result)."""

    store: HistoryStore
    session_id: str
    parent_id: str
    tools: ToolRunner | None
    approve: Approver | None
    counter: TokenCounter
    max_tokens: int
    enabled: Callable[[], bool] = lambda: True  # tools.enabled now: switched off, no call runs
    cancelled: bool = False
    not_run: str = NOT_STARTED  # the answer of a call cancelled before it started
    not_run_status: ToolStatus = "cancelled"  # "not_run" when the user did not stop it
    _task: asyncio.Future[Any] | None = None
    _answered: set[str] = field(default_factory=set)  # the ids of the calls given their result
    _started: set[str] = field(default_factory=set)  # the ids of the calls that began to run

    async def run(self, calls: list[ToolCallBlock]) -> AsyncIterator[ToolCallState | Notice]:
        pending = list(calls)
        try:
            while pending and not self.cancelled:
                async for state in self._one(pending[0]):
                    yield state
                pending.pop(0)
            while pending:  # Esc: the calls after it are answered as cancelled, and the screen told so
                yield self._cancelled(pending.pop(0))
        finally:  # Esc, or the consumer went away (the app quit mid-call): every call still gets a result
            for call in pending:
                if call.id not in self._answered:
                    self._cancelled(call)

    def _cancelled(self, call: ToolCallBlock) -> ToolCallState:
        """``call`` answered as cancelled: what a call that started or never started is told."""
        request = self.tools.request(call) if self.tools is not None else None
        if call.id in self._started:
            return self._answer(call, "cancelled", CANCELLED, 0.0, request)
        return self._answer(call, self.not_run_status, self.not_run, 0.0, request)

    def cancel(self, not_run: str | None = None) -> None:
        """Stop at once: the call waiting or running is cancelled, the rest are answered as cancelled
        (``not_run``: what a call that never started is told, when the user did not stop it)."""
        self.cancelled = True
        if not_run is not None:
            self.not_run, self.not_run_status = not_run, "not_run"
        if self._task is not None:
            self._task.cancel()

    async def _one(self, call: ToolCallBlock) -> AsyncIterator[ToolCallState | Notice]:
        request = self.tools.request(call) if self.tools is not None else None
        if request is None:
            yield self._answer(call, "unknown", UNKNOWN.format(name=call.name), 0.0)
            return
        assert self.tools is not None
        refused = ToolOutcome("not_run", TOOLS_OFF) if not self.enabled() else self.tools.refusal(request)
        if refused is not None:
            yield self._answer(call, refused.status, refused.text, 0.0, request)
            return
        if not self.tools_consent(request):
            yield ToolCallState(call.id, "waiting", server=request.server, tool=request.tool)
            decided = await self._guarded(self._decide(request))
            if decided is None:
                yield self._answer(call, self.not_run_status, self.not_run, 0.0, request)
                return
            decision, unsaved = decided
            if unsaved is not None:
                yield Notice(unsaved)
            if not decision.allowed:
                why = f"denied by the user: {decision.reason}" if decision.reason else "denied by the user"
                if self.approve is None:
                    why = NO_CONSENT
                yield self._answer(call, "denied", why, 0.0, request)
                return
        self._started.add(call.id)
        yield ToolCallState(call.id, "running", server=request.server, tool=request.tool)
        started = time.monotonic()
        assert self.tools is not None
        outcome = await self._guarded(self.tools.call(request, counter=self.counter, max_tokens=self.max_tokens))
        if outcome is None:
            yield self._answer(call, "cancelled", CANCELLED, time.monotonic() - started, request)
            return
        yield self._answer(call, outcome.status, outcome.text, outcome.duration, request)

    def tools_consent(self, request: ToolRequest) -> bool:
        assert self.tools is not None
        return self.tools.consent.preapproved(request)

    async def _decide(self, request: ToolRequest) -> tuple[Decision, str | None]:
        """The user's decision, and what went wrong keeping it (``ConsentPolicy.record``)."""
        if self.approve is None:
            return Decision("deny"), None
        decision = await self.approve(request)
        assert self.tools is not None
        if self.tools.refusal(request) is not None:  # its server failed (or it was withdrawn) while the user was asked:
            return decision, None  # the call is not run, and an "always" for it is not kept
        return decision, self.tools.consent.record(request, decision)

    async def _guarded(self, work: Awaitable[T]) -> T | None:
        """``work`` in a task Esc can cancel; ``None`` when it was."""
        task: asyncio.Task[T] = asyncio.ensure_future(work)
        self._task = task
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and self.cancelled:
                return None
            raise
        finally:
            self._task = None

    def _answer(
        self, call: ToolCallBlock, status: ToolStatus, text: str, duration: float, request: ToolRequest | None = None
    ) -> ToolCallState:
        """Store the call's result (one ``tool`` commit) and say so."""
        result = ToolResultBlock(tool_call_id=call.id, content=text, is_error=status != "done")
        metadata = {"status": status, "duration": round(duration, 3), "name": call.name}
        if request is not None:
            metadata.update(server=request.server, tool=request.tool)
        commit = self.store.append(
            self.session_id,
            "tool",
            Content(speaker="tool", blocks=[result], metadata=metadata),
            parent_id=self.parent_id,
        )
        self.parent_id = commit.id
        self._answered.add(call.id)
        server = request.server if request else ""
        tool = request.tool if request else call.name
        return ToolCallState(call.id, status, server=server, tool=tool, result=text, duration=duration)
