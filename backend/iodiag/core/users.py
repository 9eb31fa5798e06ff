"""Who may use the service: the roles a token can have and what a user name may look like.

Kept apart from the store's models so the CLI can check its arguments without importing SQLAlchemy.
"""

ROLES = ("user", "hook", "helpdesk", "admin")
USER_NAME = r"^[A-Za-z0-9_][A-Za-z0-9._@-]{0,63}$"  # everywhere a user name arrives: API, proxy header, CLI
