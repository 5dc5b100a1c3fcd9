"""``python -m lpsched.cli``: the ``lpsched`` command (signal tests run it as its own process)."""

from . import main

if __name__ == "__main__":
    main()
