"""fluke: what your agent eval runs actually let you believe.

>>> import fluke
>>> fluke.__version__ >= "0.1"
True
"""

__version__ = "0.1.0"
