"""Screenshot of the judging page for docs/judging.md (docs/img/judging-page.png).

Start the Cranfield demo first (``bayeval judge demo-serve ../shared/data/cranfield --port 8765``), then
``python examples/judging_screenshot.py --port 8765``: a headless Chromium names itself, judges a few
documents by keyboard (Cranfield's own relevance codes answer) and photographs the page. The narrow view:
``--width 420 --out docs/img/judging-page-420.png`` (the whole page, as tall as it is).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from bayeval.io.sources import cranfield_dir

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--cranfield", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"))
    ap.add_argument("--judge", type=int, default=6, help="documents to judge before the picture")
    ap.add_argument("--width", type=int, default=1280, help="window width in CSS pixels (default 1280)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "img" / "judging-page.png"))
    args = ap.parse_args()
    from bayeval.bias.cranfield import load_cranfield

    codes = load_cranfield(cranfield_dir(args.cranfield)).codes
    opts = webdriver.ChromeOptions()
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={tempfile.mkdtemp()}")
    opts.add_argument(f"--window-size={args.width},860")
    driver = webdriver.Chrome(options=opts)
    wait = WebDriverWait(driver, 60)
    try:
        driver.get(f"http://127.0.0.1:{args.port}/")
        wait.until(lambda d: d.find_element(By.NAME, "name")).send_keys("alice" + Keys.ENTER)
        for k in range(args.judge):
            wait.until(lambda d: d.find_elements(By.ID, "docno"))
            topic = driver.find_element(By.ID, "topic").text
            docno = driver.find_element(By.ID, "docno").text
            grade = int(1 <= codes.get((topic, docno), 0) <= 4)
            ActionChains(driver).send_keys(str(grade)).perform()
            wait.until(lambda d, k=k: d.find_elements(By.ID, "mine") and int(d.find_element(By.ID, "mine").text) > k)
        time.sleep(0.5)
        if args.width < 800:  # a phone-sized window: photograph the whole page
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(args.width, min(height + 140, 4000))
            time.sleep(0.3)
        driver.save_screenshot(args.out)
        print(f"wrote {args.out}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
