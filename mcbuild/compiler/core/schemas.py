"""JSON Schema validators of pydantic models: Draft 2020-12, compiled once per model."""
from __future__ import annotations

from functools import lru_cache

from jsonschema import Draft202012Validator
from pydantic import BaseModel


@lru_cache(maxsize=64)
def validator(model: type[BaseModel]) -> Draft202012Validator:
    """The validator of ``model.model_json_schema()`` (the schema itself is checked once, here)."""
    schema = model.model_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)
