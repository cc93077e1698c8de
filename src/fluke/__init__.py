"""fluke: what your agent eval runs actually let you believe.

>>> import fluke
>>> fluke.__version__ >= "0.1"
True
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # ``fluke.expect(runs)``: the pytest plugin's assertions, imported on first use.
    if name == "expect":
        from .testing import expect

        return expect
    raise AttributeError(f"module 'fluke' has no attribute {name!r}")
