"""The rule facts (RULES.md): constants and small functions, no state, no torch.

* `cards`: card ids, ranks, suits, text codes, deal sizes.
* `actions`: action ids and what counts as one.
* `settings`: [`Settings`][pisti_env.rules.Settings] and
  [`make_settings`][pisti_env.rules.make_settings], the settings and their allowed values.
* `scoring`: card points, captures, piştis, majority, bluff stakes.
* `locations`: where a card is and who may know it; the seat limit.
* `counters`: the per-side counters and the hand-result keys.

`pisti_env.rules` was the settings module before the rule facts got their folder; the package
keeps its names (`Settings`, `make_settings`, `SETTING_NAMES`), so `from pisti_env.rules import
Settings` still works.
"""

from .settings import SETTING_NAMES, Settings, make_settings

__all__ = ["Settings", "make_settings", "SETTING_NAMES"]
