"""tractui's one exception tree.

Every error tractui raises on purpose is a ``TractuiError``. A ``UserError``
carries one line meant for the user, shown as is (the app prints it inline,
the shell commands on stderr with exit code 2); anything else that escapes is
a bug, never caught by a handler that expects one of these::

    TractuiError
    ├── UserError
    │   ├── SettingError       an unknown /set key or a bad value
    │   ├── ProfileError       a profile or config.toml that does not load
    │   ├── StartupError       command-line flags that make no provider configuration
    │   ├── UnknownProvider    a provider name tractui does not speak
    │   ├── RequestError       settings the provider's API would refuse
    │   ├── ConversationError  a request the conversation cannot honour
    │   ├── CompactionError    compaction could not run
    │   ├── StoreError         the history database cannot be used
    │   │   └── SessionGone    the session was deleted while this window had it open
    │   ├── ThemeError         a theme file that does not load
    │   ├── UsageError         a shell command used wrongly
    │   └── OutputError        what a shell command prints cannot be written (a full disk)
    └── ChunkShapeError        a server's chunk has a shape its protocol does not allow

Failures while streaming are not exceptions: a provider stream ends with a
``StreamError`` event (``tractui.core.events``). ``ChunkShapeError`` never
leaves a provider: the transport turns it into that event.
"""

from __future__ import annotations


class TractuiError(Exception):
    """The root of every error tractui raises on purpose."""


class UserError(TractuiError):
    """One line for the user, shown as is; nothing was changed."""


class SettingError(UserError):
    """An unknown setting key or a value it does not take."""


class ProfileError(UserError):
    """A profile or ``config.toml`` that does not load."""


class StartupError(UserError):
    """Command-line flags that do not make a provider configuration."""


class UnknownProvider(UserError):
    """A provider name tractui does not speak."""


class RequestError(UserError):
    """``build_request`` refuses settings the API would reject."""


class ConversationError(UserError):
    """A request the conversation cannot honour (nothing to retry, an empty message)."""


class CompactionError(UserError):
    """Compaction could not run (no summary, a summariser that does not load)."""


class EmptySummaryError(CompactionError):
    """The summariser answered without text (it spent its budget thinking): worth another try with more room."""


class StoreError(UserError):
    """The history database cannot be used; the message names the file."""


class SessionGone(StoreError):
    """The session was deleted (by a window that could not see this one's hold) while open here."""


class ThemeError(UserError):
    """A theme file that does not load; the message names the file."""


class UsageError(UserError):
    """A shell command used wrongly (a missing session, a file that is not an export)."""


class OutputError(UserError):
    """A shell command's output cannot be written (a full disk, a device error); a reader
    that closed its pipe is not one: ``BrokenPipeError`` ends the command quietly."""


class ChunkShapeError(TractuiError):
    """A streamed chunk parsed as JSON but has a shape its protocol does not allow.

    Raised by the stream parsers, caught by the transport, which ends the
    stream with a ``StreamError`` after the events before the chunk.
    """
