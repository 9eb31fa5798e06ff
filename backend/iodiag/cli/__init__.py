"""Command-line interface: ``iodiag analyze``, ``iodiag schema``, ``iodiag --version``."""
