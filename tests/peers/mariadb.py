"""A MariaDB server of its own in a temporary directory, for the peer recordings: ``mariadb-install-db``, the binlog on
in row format with full row images (what Canal reads), loopback only, stopped (and its directory removed) on exit.

The server is Debian's ``mariadbd`` (``/usr/sbin``) or the first one on PATH. As root it runs as the ``mysql`` user that
Debian's package creates. Its ``root`` account has no password and is reached through the server's own socket, by the
``mariadb`` client; producers log in over TCP as ``USER``, which may read everything and the binlog.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

USER, PASSWORD = "canal", "canal"
SERVER_ID = 1
START_SECONDS = 60


class NoMariaDB(RuntimeError):
    """MariaDB's server programs are not on this machine."""


def server_program() -> Path:
    """``mariadbd``: Debian's, else the first on PATH."""
    for candidate in (Path("/usr/sbin/mariadbd"), shutil.which("mariadbd")):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    raise NoMariaDB("MariaDB's mariadbd was not found: `make peers` installs Debian's mariadb-server as root")


@dataclass(frozen=True)
class Server:
    port: int
    socket: Path

    def run(self, sql: str) -> str:
        """Run SQL statements with the ``mariadb`` client as root, stopping at the first error; return what it
        printed (tab-separated rows, no headers)."""
        done = subprocess.run(
            ["mariadb", "--no-defaults", f"--socket={self.socket}", "-u", "root", "--batch", "--skip-column-names",
             "--default-character-set=utf8mb4"],
            input=sql, capture_output=True, text=True, check=False,
        )
        if done.returncode:
            raise RuntimeError(f"mariadb failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def binlog_position(self) -> tuple[str, int]:
        """The binlog file and the offset that the next event will have."""
        file, position = self.run("SHOW MASTER STATUS").split("\t")[:2]
        return file, int(position)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_up(server: Server, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mariadbd ended ({process.returncode}): {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(RuntimeError):
            server.run("SELECT 1")
            return
        time.sleep(0.2)
    raise RuntimeError(f"mariadbd did not answer within {START_SECONDS} s; see {log}")


@contextlib.contextmanager
def running() -> Iterator[Server]:
    program = server_program()
    as_root = os.geteuid() == 0
    owner = "mysql" if as_root else pwd.getpwuid(os.geteuid()).pw_name
    home = Path(tempfile.mkdtemp(prefix="cdcformats-mariadb-"))
    if as_root:
        account = pwd.getpwnam(owner)
        os.chown(home, account.pw_uid, account.pw_gid)
    data, log = home / "data", home / "server.log"
    server = Server(port=_free_port(), socket=home / "mariadb.sock")
    try:
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--user={owner}", f"--datadir={data}",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True)
        process = subprocess.Popen(
            [str(program), "--no-defaults", f"--user={owner}", f"--datadir={data}", f"--socket={server.socket}",
             f"--pid-file={home / 'mariadb.pid'}", f"--log-error={log}", "--bind-address=127.0.0.1",
             f"--port={server.port}", "--skip-name-resolve", f"--server-id={SERVER_ID}",
             f"--log-bin={data / 'binlog'}", "--binlog-format=ROW", "--binlog-row-image=FULL",
             "--default-time-zone=+00:00", "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
             "--innodb-flush-log-at-trx-commit=0", "--sync-binlog=0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_up(server, process, log)
            server.run(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';"
                       f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%'")
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=START_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        shutil.rmtree(home, ignore_errors=True)
