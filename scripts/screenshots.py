"""Screenshots for the README and the docs, made from a simulator run so they never go stale.

    python scripts/screenshots.py [--out docs/images] [--chromium /usr/bin/chromium]

Runs `servecap demo` on the built-in simulator (real time, as the demo does, but 2 rounds a
level and no verification: a picture needs the shape, not the seed's figures; a few minutes),
then opens its report in headless Chromium and takes the first screen (the decision, its
chart, the comparison), and starts `servecap ui` on the demo's runs and takes its Results
page. Needs the `ui` and `dev` extras (playwright drives Debian's Chromium; no browser is
downloaded).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VIEWPORT = {"width": 1280, "height": 900}
CHROME_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]


def servecap(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "servecap.cli.main", *args], cwd=cwd, check=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:  # noqa: S310
            return bool(response.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def app_on(results: Path, work: Path) -> Iterator[str]:
    """`servecap ui` on a free port; the URL once Streamlit answers its health check."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "servecap.cli.main", "ui", "--results", str(results),
         "--port", str(port)],
        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # Streamlit has no ready signal but its health endpoint: poll it, each try bounded
        for _ in range(120):
            if proc.poll() is not None:
                raise RuntimeError("servecap ui exited before it answered")
            if healthy(url):
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(0.5)
        else:
            raise RuntimeError("servecap ui did not answer within a minute")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)  # Streamlit stops on it (servecap ui execs it)
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        servecap("demo", "--rounds", "2", "--verify-s", "0", "--out", "demo-output", cwd=work)
        report = work / "demo-output" / "report" / "report.html"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=CHROME_ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(report.as_uri())
            # the first screen's chart is drawn by plotly after load: wait for its flag
            page.wait_for_selector("#chart-06[data-rendered='1']", timeout=60_000)
            page.screenshot(path=str(out / "report-first-screen.png"))
            with app_on(work / "demo-output" / "runs", work) as url:
                page.goto(url)
                page.get_by_text("Results", exact=True).first.click()
                page.get_by_text("Per-level results").wait_for(timeout=60_000)
                page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
                page.screenshot(path=str(out / "app-results.png"))
            browser.close()
    for name in ("report-first-screen.png", "app-results.png"):
        print(out / name)


if __name__ == "__main__":
    main()
