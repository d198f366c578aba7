"""A small Chrome DevTools Protocol client for testing pages in real headless Chromium.

Why a pipe and not a port: with ``--remote-debugging-pipe`` Chromium reads
protocol messages from fd 3 and writes replies to fd 4, NUL-separated JSON.
No TCP port is opened, so parallel test workers cannot collide, nothing else
on the machine can attach, and no websocket library is needed.

The client attaches to one page target in "flat" mode and records every
console call, uncaught exception and browser log entry (CSP violations and
failed loads arrive as Log.entryAdded with level "error").
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions", "--remote-debugging-pipe",
    "--window-size=1280,900", "--hide-scrollbars",
]


class CDPError(RuntimeError):
    pass


def _above_four(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Chromium:
    """``with Chromium(path) as b: b.open(url); b.evaluate(js); b.screenshot(png)``"""

    def __init__(self, binary: str, timeout: float = 60.0):
        self.binary, self.timeout = binary, timeout
        self.events: list[dict[str, Any]] = []
        self._next_id, self._buf, self.session = 0, b"", None

    def __enter__(self) -> Chromium:
        self._profile = tempfile.TemporaryDirectory(prefix="sw-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Lift the child's ends above 4, or "3<&3 ... 3<&-" below would close what it just set up.
        to_chrome_r, from_chrome_w = _above_four(to_chrome_r), _above_four(from_chrome_w)
        # bash (dash cannot name fds above 9) moves our pipe ends onto fds 3 and 4, where Chromium expects them.
        script = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", script, self.binary, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close", session=False)
                except (CDPError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            os.close(self._to_chrome)
            os.close(self._from_chrome)
            if self.proc.stderr:
                self.proc.stderr.close()
            self._profile.cleanup()

    # -- protocol ---------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for Chromium")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise CDPError(f"Chromium closed the pipe (exit {self.proc.poll()})")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: bool = True) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        for ev in self.events:
            if ev["method"] == method:
                return ev
        while True:
            ev = self._read_message(deadline)
            if "method" in ev:
                self.events.append(ev)
                if ev["method"] == method:
                    return ev

    # -- what tests use ---------------------------------------------------------
    def open(self, path: Path) -> None:
        """Load a local file and wait for its load event (all images decoded or failed)."""
        self.events.clear()
        self.call("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CDPError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error-level log entries seen since ``open``."""
        out = []
        for ev in self.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        return out

    def screenshot(self, path: Path) -> None:
        """Full-page PNG."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000), "scale": 1}
        data = self.call("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True})
        Path(path).write_bytes(base64.b64decode(data["data"]))
