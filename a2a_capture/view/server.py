"""Run a view: the state fed in a thread of its own, the page served by uvicorn on a loopback address."""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Callable

import uvicorn

from a2a_capture.analyze.config import Config
from a2a_capture.errors import A2ACaptureError, ViewError
from a2a_capture.view.app import ViewApp
from a2a_capture.view.detail import Details
from a2a_capture.view.ingest import Feeder, Tail, feed_files
from a2a_capture.view.state import ViewState

DEFAULT_PORT = 8765


class View:
    """A view of ``files``: ``start`` serves it; ``url`` (with its token) is where to open it."""

    def __init__(self, files: list[str], host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
                 redact: bool = True, config: Config | None = None) -> None:
        if not _is_loopback(host):
            raise ViewError(f"the view serves a session to this machine only: {host} is not a loopback address "
                            "(use 127.0.0.1)")
        self.state = ViewState(files)
        self.feeder = Feeder(self.state, config, redact=redact)
        self.token = secrets.token_urlsafe(18)
        self.app = ViewApp(self.state, self.token, Details(self.state, self.feeder.masker))
        self.host, self.port = host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/?token={self.token}"

    def bind(self) -> None:
        """Take the address now (port 0: any free one), so a taken port is said before anything starts."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as error:
            sock.close()
            raise ViewError(f"cannot serve the view at {self.host}:{self.port}: {error.strerror or error} "
                            "(choose another with --listen 127.0.0.1:PORT, or :0 for any free port)") from None
        sock.listen(128)
        self.port = sock.getsockname()[1]
        self._socket = sock

    def serve_in_thread(self) -> None:
        """Serve from a thread of its own (the recorder's loop keeps the main thread)."""
        self._thread = threading.Thread(target=self.serve, name="a2a-capture view", daemon=True)
        self._thread.start()

    def serve(self) -> None:
        if self._socket is None:
            self.bind()
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._server.run(sockets=[self._socket])

    def read_files(self, on_error: Callable[[str], None],
                   on_empty: Callable[[], None] | None = None) -> threading.Thread:
        """Feed every file in a thread, so the page opens while a big session is still being read;
        ``on_empty`` once they are read, if they held no exchange."""

        def read() -> None:
            try:
                feed_files(self.feeder)
            except A2ACaptureError as error:
                on_error(str(error))
                self.state.done = True
                return
            if on_empty is not None and not self.state.rows:
                on_empty()

        thread = threading.Thread(target=read, name="a2a-capture view reader", daemon=True)
        thread.start()
        return thread

    def tail(self) -> Tail:
        """Follow the capture being recorded (the view's one file)."""
        return Tail(self.feeder)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")
