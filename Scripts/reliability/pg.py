"""PostgreSQL for the harnesses through `psql` (the standard library has no PostgreSQL client):
a URL split into the poller's `--database` (no password: it never goes on a command line) and an
environment carrying the password (PGPASSWORD), and queries whose rows come back as tuples of
strings (None for NULL). Only values the harness made itself are interpolated into SQL."""

import os
import subprocess
import urllib.parse

FIELD = "\x1f"   # unit separator: never in the values these harnesses read
RECORD = "\x1e"  # record separator
NULL = "\\N"


class Postgres:
    def __init__(self, url_with_password):
        parsed = urllib.parse.urlsplit(url_with_password)
        if parsed.scheme not in ("postgres", "postgresql") or not parsed.hostname:
            raise ValueError("not a PostgreSQL URL")
        self.user = urllib.parse.unquote(parsed.username or "")
        self.password = urllib.parse.unquote(parsed.password or "")
        self.host, self.port = parsed.hostname, parsed.port or 5432
        self.database = parsed.path.lstrip("/")
        # What `--database` gets: the URL without its password.
        self.url = f"postgres://{urllib.parse.quote(self.user)}@{self.host}:{self.port}/{self.database}"

    def env(self, base=None):
        """An environment for psql and the poller: the password in PGPASSWORD, nothing on argv."""
        env = dict(os.environ if base is None else base)
        env["PGPASSWORD"] = self.password
        return env

    def _psql(self, args, stdin=None):
        command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.host, "-p", str(self.port), "-U", self.user, "-d", self.database, *args]
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, env=self.env())
        if result.returncode != 0:
            raise RuntimeError(f"psql failed ({result.returncode}): {result.stderr.strip()[-1500:]}")
        return result.stdout

    def rows(self, sql):
        """The rows of one statement, each a tuple of strings (None for NULL)."""
        out = self._psql(["-A", "-t", "-F", FIELD, "-R", RECORD, "-P", f"null={NULL}", "-c", sql])
        rows = []
        for record in out.split(RECORD):
            record = record.strip("\n")
            if record == "":
                continue
            rows.append(tuple(None if v == NULL else v for v in record.split(FIELD)))
        return rows

    def value(self, sql):
        rows = self.rows(sql)
        return rows[0][0] if rows else None

    def script(self, sql):
        """Runs several statements (and psql meta-commands such as \\copy) from stdin."""
        self._psql(["-f", "-"], stdin=sql)

    def copy_out(self, query, path):
        """A query's rows as CSV with a header (evidence kept after a failure)."""
        self._psql(["-c", f"\\copy ({query}) TO '{path}' WITH (FORMAT csv, HEADER true)"])


def quote(text):
    """A string literal for SQL (values the harness made: user ids, worker names)."""
    return "'" + str(text).replace("'", "''") + "'"


def integer(value):
    return None if value is None else int(value)
