"""Message helpers shared by the readers: a value cut for a message, and unknown keys named with
the closest defined key."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

from ..instance import InstanceError

#: Keys people write by habit, with the key they mean (trace columns and near synonyms).
_KNOWN_SLIPS = {
    "arrived_at": "arrival",
    "num_prefill_tokens": "prefill",
    "num_decode_tokens": "decode",
}


def brief(value: Any, limit: int = 60) -> str:
    """``repr(value)`` (escaped, one line), cut to about ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unknown_keys(
    keys: Iterable[Any], allowed: Sequence[str], source: str, who: str | None = None
) -> None:
    """Raise naming every key of ``keys`` not in ``allowed`` and the closest allowed key."""
    unknown = [k for k in keys if k not in allowed]
    if not unknown:
        return
    parts = []
    for key in unknown:
        guess = _KNOWN_SLIPS.get(key) if isinstance(key, str) else None
        if guess not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            guess = close[0] if close else None
        parts.append(brief(str(key)) + (f" (did you mean {guess!r}?)" if guess else ""))
    where = f"{source}: {who}: " if who else f"{source}: "
    word = "field" if len(unknown) == 1 else "fields"
    raise InstanceError(
        f"{where}unknown {word} {', '.join(parts)}; the fields are {', '.join(allowed)}"
        + (" (free-form data goes under 'metadata')" if "metadata" in allowed else "")
    )
