"""servecap's own exceptions. Front ends map `UserInputError` to exit status 2."""

from __future__ import annotations

from collections.abc import Callable


class ServecapError(Exception):
    """Base class of every error servecap raises on purpose."""


class UserInputError(ServecapError):
    """Bad input from the user (flags, files, URL, unreachable server at preflight).

    Raised before any load is sent; the CLI prints the message and exits with status 2.
    """


def setting_words(setting: str) -> str:
    """A setting's plain name, as the api says it: `think_time` -> `think time`."""
    return setting.replace("_", " ")


class SettingError(UserInputError):
    """Bad input in a named setting, said in the words of whoever shows it.

    The message names each setting as `{setting}` (`"invalid {rate} '0': ..."`): the api and
    the lower layers know settings, not flags or form labels. A front end shows it with its
    own names (`named(flag_of)`: the CLI says `--rate`, the app "Offered rates"); `str()`
    says the setting's plain name. Only the first placeholder of each of `settings` is
    filled: the setting is named before the value it quotes, so a value that happens to
    hold `{rate}` is shown as typed.
    """

    def __init__(self, template: str, *settings: str) -> None:
        self.template = template
        self.settings = settings
        super().__init__(self.named(setting_words))

    def named(self, name_of: Callable[[str], str]) -> str:
        """The message with each setting named by `name_of`."""
        text = self.template
        for setting in dict.fromkeys(self.settings):
            text = text.replace("{" + setting + "}", name_of(setting), 1)
        return text


def bad_setting(setting: str, problem: str, before: str = "") -> SettingError:
    """`{before}{setting} {problem}`: e.g. `bad_setting("rate", "'0': must be > 0", "invalid ")`
    reads "invalid --rate '0': must be > 0" in the CLI."""
    return SettingError(f"{before}{{{setting}}} {problem}", setting)


def said(exc: BaseException, name_of: Callable[[str], str]) -> str:
    """An error's message, its settings (if any) named by `name_of`."""
    return exc.named(name_of) if isinstance(exc, SettingError) else str(exc)


class DataFormatError(UserInputError):
    """A file servecap reads (CSV, JSON, TOML, JSONL) is malformed, too large or binary."""


class SSEProtocolError(ServecapError):
    """A server-sent-events stream broke the protocol (line too long, invalid framing)."""


class RunAborted(ServecapError):
    """A run stopped early (signal, disk full); what was measured is already on disk.

    `outcome` is what the run had measured (its levels, its saved status), for the front end
    to show; None where there is nothing to show."""

    def __init__(self, message: str, outcome: object = None) -> None:
        super().__init__(message)
        self.outcome = outcome
