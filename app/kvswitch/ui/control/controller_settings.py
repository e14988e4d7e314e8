"""The controller's preferences: the settings model for the dialogs, and plain values at start-up.

A mixin of ``AppController``. The window's start (theme, language, close-to-tray, first run) asks
``preference``, which reads settings.json without pydantic when the file is in the form KV Switch
writes (``core.quickread``); the model (``settings``) is built later from those same values, so the
file is read once and both give the same answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths
    from kvswitch.core.settings import AppSettings


class SettingsControllerMixin:
    paths: AppPaths
    _settings: AppSettings | None
    #: settings.json's values as read at start-up, without pydantic (None: not read that way)
    _settings_values: dict[str, Any] | None

    @property
    def settings(self) -> AppSettings:
        """The app's preferences, read once (defaults when the file is damaged); widgets ask here."""
        if self._settings is None:
            from kvswitch.core.settings import AppSettings, load_settings  # noqa: PLC0415 - pydantic

            values = self._settings_values
            # what ``preference`` read at start-up (the same values the model gives), or the full read
            self._settings = (AppSettings.model_validate(values) if values is not None
                              else load_settings(self.paths))
        return self._settings

    def preference(self, name: str) -> Any:
        """One setting, as ``settings`` has it, read without pydantic at start-up (``core.quickread``)
        when settings.json is in the form KV Switch writes; otherwise from the full model."""
        if self._settings is not None:
            return getattr(self._settings, name)
        if self._settings_values is None:
            from kvswitch.core.canonical import NotCanonical  # noqa: PLC0415
            from kvswitch.core.quickread import read_settings, settings_file  # noqa: PLC0415

            try:
                self._settings_values = read_settings(settings_file(self.paths))
            except NotCanonical:
                return getattr(self.settings, name)
        return self._settings_values[name]

    def save_settings(self, settings: AppSettings) -> None:
        """Write the preferences (atomically) and keep them as the ones in force."""
        from kvswitch.core.settings import save_settings  # noqa: PLC0415

        save_settings(self.paths, settings)
        self._settings = settings
        self._settings_values = None

