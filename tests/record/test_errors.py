"""The record and the runner raise fluke's own errors, which keep their builtin bases."""

import pytest
from pydantic import ValidationError

from fluke.errors import FlukeError, FormatVersionError, InputError, InputTypeError
from fluke.record import Run, json_default


def test_a_newer_format_version_is_a_format_version_error_inside_pydantics_report():
    with pytest.raises(ValidationError) as caught:
        Run.model_validate({"format_version": 2, "scenario": "s"})
    cause = caught.value.errors()[0]["ctx"]["error"]
    assert isinstance(cause, FormatVersionError) and isinstance(cause, ValueError)
    assert str(cause) == ("field format_version: was written by a newer fluke (run format 2; this fluke reads 1) "
                          "(upgrade with: pip install -U fluke)")


def test_a_value_a_run_cannot_hold_is_an_input_type_error():
    with pytest.raises(InputTypeError) as caught:
        json_default(object())
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, InputError)
    assert isinstance(caught.value, FlukeError)
    assert str(caught.value) == "a run cannot hold a value of type object"


def test_the_runner_unpacks_an_unusable_agent_value_with_a_fluke_error():
    from fluke.runner._evaluate import _unpack   # the one place that raises it

    with pytest.raises(InputTypeError, match="returned a int; expected a Trajectory"):
        _unpack(3)
