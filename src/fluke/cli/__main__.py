"""``python -m fluke.cli``: the same as the ``fluke`` command."""

from . import main

main()
