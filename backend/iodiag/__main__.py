"""``python -m iodiag``: the same as the ``iodiag`` command."""

from iodiag.cli.main import main

if __name__ == "__main__":
    main()
