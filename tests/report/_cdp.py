"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``.

Chromium reads commands from fd 3 and writes replies and events to fd 4, each a JSON
message ended by a NUL byte; no websocket, no chromedriver, no extra package.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
         "--remote-debugging-pipe")


def chromium_path() -> str | None:
    """The Chromium binary, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page target attached (flattened session)."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 900, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="fluke-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # runs in the child: the pipe ends must sit at fds 3 and 4
            # dup2 leaves the copies inheritable; Python's own pipe fds are close-on-exec.
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"],
            preexec_fn=wire, close_fds=False,  # noqa: PLW1509 - the test process starts no threads that fork
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no reply from Chromium")
            ready, _, _ = select.select([self._from_child], [], [], remaining)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the debugging pipe")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command (to the attached page once there is one) and wait for its reply."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        """Wait for an event (already received ones count)."""
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            message = self._read_message(deadline)
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message

    def evaluate(self, expression: str) -> Any:
        """Evaluate a JS expression in the page and return its JSON value."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
        shutil.rmtree(self.profile, ignore_errors=True)
