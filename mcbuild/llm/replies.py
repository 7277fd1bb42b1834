"""Reading a model's reply text as JSON: the one place that knows how replies wrap their object."""
from __future__ import annotations

import json
import re
from typing import Any

FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_lenient = json.JSONDecoder(strict=False).decode      # json.loads(..., strict=False) builds one on every call


def extract_json(text: str) -> Any:
    """The one JSON object in a reply, tolerating Markdown fences or prose around it, and raw control
    characters (a newline) inside strings: llama.cpp's grammar for a length-bounded string lets them
    through."""
    stripped = text.strip()
    fence = FENCE.search(stripped) if "```" in stripped else None
    if fence:
        stripped = fence.group(1).strip()
    try:
        return _lenient(stripped)
    except json.JSONDecodeError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start == -1 or end <= start:
            raise
        return _lenient(stripped[start:end + 1])
