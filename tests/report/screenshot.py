"""Screenshot an HTML report from disk with headless Chromium (network off).

    PYTHONPATH=src python -m tests.report.screenshot report.html docs/img/report-tau-bench.png --width 1400 --height 900
    PYTHONPATH=src python -m tests.report.screenshot report.html shot.png --click 'button[data-run]' --section explorer
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

from ._cdp import Browser, chromium_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--section", help="scroll this section id to the top first")
    parser.add_argument("--scale", type=float, default=1.0, help="shrink the picture (e.g. 0.6)")
    parser.add_argument("--click", help="CSS selector of an element to click first")
    args = parser.parse_args()
    binary = chromium_path()
    if binary is None:
        raise SystemExit("chromium not found")
    browser = Browser(binary, width=args.width, height=args.height)
    try:
        browser.send("Page.enable")
        browser.send("Network.enable")
        browser.send("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                     uploadThroughput=-1)
        browser.send("Page.navigate", url=args.html.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        if args.click:
            browser.evaluate(f"document.querySelector({json.dumps(args.click)}).click()")
        if args.section:
            browser.evaluate(f"document.getElementById({json.dumps(args.section)}).scrollIntoView()")
        box = browser.evaluate("({x: scrollX, y: scrollY})")
        clip = {"x": box["x"], "y": box["y"], "width": args.width, "height": args.height, "scale": args.scale}
        data = browser.send("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)["data"]
        args.png.parent.mkdir(parents=True, exist_ok=True)
        args.png.write_bytes(base64.b64decode(data))
    finally:
        browser.close()
    print(f"{args.png}: {args.png.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
