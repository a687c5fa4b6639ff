"""What the command line chose, typed: built once from argparse by ``tractui.cli``.

The layers below the CLI (start-up resolution, the app's launch, print mode)
read these fields instead of an argparse namespace, so no second list of
argparse destinations can drift from the parser.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CliOptions:
    prompt: str | None = None  # -p: print mode
    continue_: bool = False  # -c: the latest session
    resume: str | None = None  # --resume [SESSION]: "" for the latest
    profile: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    sets: tuple[str, ...] = ()  # --set KEY=VALUE, in order
    json: bool = False  # print mode: one JSON object
    allow_tools: tuple[str, ...] = ()  # print mode: tools that may run without asking
    allow_all_tools: bool = False

    @property
    def resumes(self) -> bool:
        return self.continue_ or self.resume is not None

    @property
    def chose_setup(self) -> bool:
        """Whether the command line chose the profile, provider or model: a resumed session then
        runs with those, not with the setup it last used (``--set`` changes a setting of that setup,
        as ``/set`` does in the app)."""
        return bool(self.profile or self.provider or self.model or self.base_url or self.api_key_env)
