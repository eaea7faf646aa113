"""A PostgreSQL server of its own in a temporary directory, for the peer recordings: ``initdb``, logical decoding on,
loopback only, trust authentication, stopped (and its directory removed) on exit.

The server binaries are Debian's (``/usr/lib/postgresql/<version>/bin``) or the first ``initdb`` on PATH. PostgreSQL
refuses to run as root, so as root the server runs as the ``postgres`` user that Debian's package creates.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


class NoPostgres(RuntimeError):
    """PostgreSQL's server programs are not on this machine."""


def server_programs() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, newest version first."""
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if debian:
        return debian[-1].parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    raise NoPostgres("PostgreSQL's initdb was not found: `make peers` installs Debian's postgresql as root")


@dataclass(frozen=True)
class Server:
    port: int
    user: str
    database: str

    def jdbc(self) -> dict[str, str]:
        """The connection settings of a Debezium connector."""
        return {
            "database.hostname": "127.0.0.1",
            "database.port": str(self.port),
            "database.user": self.user,
            "database.password": "trusted",
            "database.dbname": self.database,
        }

    def run(self, sql: str) -> str:
        """Run SQL statements with psql, stopping at the first error; return what psql printed."""
        done = subprocess.run(
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user,
             "-d", self.database, "-At"],
            input=sql, capture_output=True, text=True, check=False,
        )
        if done.returncode:
            raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running() -> Iterator[Server]:
    programs = server_programs()
    as_root = os.geteuid() == 0
    owner = "postgres" if as_root else pwd.getpwuid(os.geteuid()).pw_name
    prefix = ["runuser", "-u", owner, "--"] if as_root else []
    home = Path(tempfile.mkdtemp(prefix="cdcformats-postgres-"))
    if as_root:
        account = pwd.getpwnam(owner)
        os.chown(home, account.pw_uid, account.pw_gid)
    data, log = home / "data", home / "server.log"
    port = _free_port()
    try:
        subprocess.run(prefix + [str(programs / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                                 "-E", "UTF8", "--locale=C"], check=True, capture_output=True)
        settings = (f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={home} "
                    "-c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10 -c fsync=off "
                    "-c timezone=UTC")
        subprocess.run(prefix + [str(programs / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", settings, "-w",
                                 "start"], check=True, capture_output=True)
        try:
            yield Server(port=port, user="postgres", database="postgres")
        finally:
            subprocess.run(prefix + [str(programs / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                           check=False, capture_output=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
