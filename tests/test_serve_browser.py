"""The judging page end to end in a real headless Chromium (selenium): judge 20 documents by keyboard, reload,
undo, kill -9 the server and restart it; nothing recorded is lost and the campaign goes on where it was.

Skips, saying why, when Chromium, chromedriver, selenium or starlette/uvicorn are absent (.ci/run installs them).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from bayeval.selection import Campaign
from bayeval.selection.selector import DEFAULT_TOPIC_TOLERANCE
from bayeval.synthetic import make_collection

pytest.importorskip("starlette", reason="bayeval[serve] (starlette) is not installed")
pytest.importorskip("uvicorn", reason="bayeval[serve] (uvicorn) is not installed")

CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1280,900")


def chrome(profile):
    """A headless Chromium driven by selenium (skips with the reason when something is missing)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.skip("Chromium or chromedriver not installed (Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in CHROME_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(executable_path=driver), options=opts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(argv, port, log):
    """``bayeval judge serve ...`` in a subprocess, once it answers."""
    proc = subprocess.Popen([sys.executable, "-m", "bayeval.cli", "judge", "serve", *argv, "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/progress.json", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("server did not start")


def test_judge_by_keyboard_reload_kill_and_restart(tmp_path, monkeypatch):
    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium must not look for drivers on the network
    col = make_collection(n_topics=6, n_systems=3, n_docs=60, depth=20, seed=1)
    camp_path = tmp_path / "c.sqlite"
    Campaign.create(camp_path, col.runs, measure="AP", alpha=0.95, pairs=[(1, 2)]).close()
    texts = tmp_path / "texts.tsv"
    with open(texts, "w") as fh:
        for t in col.runs.topics:
            for d in col.qrels[t].docnos if t in col.qrels.topics else []:
                fh.write(f"{d}\tText of {d}. <script>window.pwned = 1</script> <b>not bold</b>\n")
    port = free_port()
    log = open(tmp_path / "server.log", "wb")
    argv = [str(camp_path), "--texts", str(texts)]
    driver = chrome(tmp_path / "profile")  # skips (no browser) before any server starts
    server = None
    try:
        server = start_server(argv, port, log)
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support.ui import WebDriverWait

        # while a page is being replaced, reading it can fail in several ways: the waits look again
        wait = WebDriverWait(driver, 60, ignored_exceptions=(WebDriverException,))

        def text_of(css):  # one script reads the element in one document (no stale references)
            return driver.execute_script("var e = document.querySelector(arguments[0]); "
                                         "return e === null ? null : e.textContent;", css)

        def shown():
            return text_of("#topic"), text_of("#docno")

        def press(key):
            ActionChains(driver).send_keys(key).perform()

        def judged():
            return int(text_of("#judged"))

        driver.get(f"http://127.0.0.1:{port}/")
        box = wait.until(lambda d: d.find_element(By.NAME, "name"))
        box.send_keys("alice" + Keys.ENTER)
        wait.until(lambda d: text_of("#docno"))
        made = []
        twin = tmp_path / "twin.sqlite"
        Campaign.create(twin, col.runs, measure="AP", alpha=0.95, pairs=[(1, 2)]).close()
        ref = Campaign.open(twin)
        while len(made) < 20:
            item = shown()
            c = ref.next(1, stay_on=made[-1][0] if made else None, tolerance=DEFAULT_TOPIC_TOLERANCE)[0]
            assert item == (c.topic, c.docno), "the page must show the campaign's next document (topic kept)"
            text = text_of("#text")
            assert text is not None and "<script>window.pwned = 1</script>" in text  # shown as text
            assert driver.execute_script("return window.pwned === undefined")
            grade = col.qrels.grade_of(*item)
            n = len(made)
            press(str(grade))
            wait.until(lambda d, n=n: text_of("#judged") is not None and judged() == n + 1)
            made.append((*item, grade))
            ref.record([(item[0], item[1], grade)])
            if len(made) == 7:  # reload mid-way: the same document, the same count
                before = shown()
                driver.refresh()
                wait.until(lambda d: text_of("#docno"))
                assert shown() == before and judged() == 7
            if len(made) == 10:  # undo by key: the document comes back, then judged again
                press("u")
                wait.until(lambda d: judged() == 9)
                assert shown() == made[-1][:2]
                with Campaign.open(camp_path) as camp:
                    assert len(camp.judgments()) == 9
                press(str(made[-1][2]))
                wait.until(lambda d: judged() == 10)
            if len(made) in (12, 16):  # kill -9 and restart
                before = shown()
                os.kill(server.pid, signal.SIGKILL)
                server.wait()
                server = start_server(argv, port, log)
                if len(made) == 12:  # the page still open: judging it goes on
                    assert shown() == before
                else:  # reloaded after the restart: the lease is gone; Enter asks for the next document
                    driver.refresh()
                    wait.until(lambda d: d.find_elements(By.ID, "next"))
                    assert judged() == 16
                    press(Keys.ENTER)
                    wait.until(lambda d: text_of("#docno"))
                    assert shown() == before  # the campaign goes on where it was
        ref.close()
    finally:
        driver.quit()
        if server is not None:
            server.kill()
            server.wait()
        log.close()
    with Campaign.open(camp_path) as camp:
        f = camp.judgments()
        assert list(zip(f["topic"], f["docno"], f["grade"], strict=True)) == made  # none lost, none twice
        assert set(f["origin"]) == {"serve:alice"} and set(f["source"]) == {"human"}
        assert camp.status().judgments == 20


@pytest.mark.data
def test_demo_serve_on_cranfield(tmp_path, shared_data):
    httpx = pytest.importorskip("httpx")
    import re

    port = free_port()
    camp = tmp_path / "demo.sqlite"
    log = open(tmp_path / "demo.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "bayeval.cli", "judge", "demo-serve", str(shared_data / "cranfield"),
                             "--campaign", str(camp), "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, (tmp_path / "demo.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/progress.json").status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.3)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=True) as c:
            csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/").text).group(1)
            page = c.post("/login", data={"name": "newcomer", "csrf": csrf}).text
        assert 'id="title"' in page and 'id="text"' in page  # Cranfield's query and abstract, out of the box
        assert "bm25" in page and "ql-1000" in page
        with Campaign.open(camp) as c:
            assert c.settings["method"] == "mtc" and len(c.pairs()) == 1
    finally:
        proc.kill()
        proc.wait()
        log.close()


@pytest.mark.parametrize("width", [360, 420])
def test_narrow_window_no_sideways_scroll_and_the_statement_once_per_topic(tmp_path, monkeypatch, width):
    """From 360 px up the page fits the window (no horizontal scroll bar); the topic statement is shown in full
    when the topic changes and folded away while the assessor stays on it."""
    monkeypatch.setenv("SE_OFFLINE", "true")
    col = make_collection(n_topics=6, n_systems=3, n_docs=60, depth=20, seed=1)
    camp_path = tmp_path / "c.sqlite"
    Campaign.create(camp_path, col.runs, measure="AP", alpha=0.95, pairs=[(1, 2)]).close()
    texts, topics = tmp_path / "texts.tsv", tmp_path / "topics.txt"
    with open(texts, "w") as fh:
        for t in col.runs.topics:
            for d in col.qrels[t].docnos if t in col.qrels.topics else []:
                fh.write(f"{d}\tA_long_unbroken_token_{'x' * 80} and ordinary words " * 3 + "\n")
    with open(topics, "w") as fh:
        for t in col.runs.topics:
            fh.write(f"<top>\n<num> Number: {t}\n<title> topic {t} title\n<desc> Description:\nWhat is "
                     f"{t}?\n<narr> Narrative:\nA relevant document says what {t} is.\n</top>\n")
    port = free_port()
    log = open(tmp_path / "server.log", "wb")
    driver = chrome(tmp_path / "profile")  # skips (no browser) before any server starts
    server = None
    try:
        server = start_server([str(camp_path), "--texts", str(texts), "--topics", str(topics)], port, log)
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support.ui import WebDriverWait

        driver.set_window_size(width, 800)
        wait = WebDriverWait(driver, 60, ignored_exceptions=(WebDriverException,))
        js = driver.execute_script
        driver.get(f"http://127.0.0.1:{port}/")
        wait.until(lambda d: d.find_element(By.NAME, "name")).send_keys("alice" + Keys.ENTER)
        seen_same = seen_new = 0
        for n in range(8):
            wait.until(lambda d, n=n: js("var e = document.querySelector('#judged'); "
                                         "return e !== null && e.textContent === String(arguments[0])", n))
            inner = js("return window.innerWidth")
            assert inner <= width
            assert js("return document.documentElement.scrollWidth") <= inner, "the page scrolls sideways"
            topic = js("return document.querySelector('#topic').textContent")
            folded = js("var d = document.querySelector('#statement'); return d === null ? null : d.open")
            last = js("var e = document.querySelector('form[action=\"/undo\"] span'); "
                      "return e === null ? null : e.textContent")
            if last is not None and f"topic {topic}," in last:
                assert folded is False  # same topic: the statement is one click away
                seen_same += 1
            else:
                assert folded is None and "What is" in js("return document.querySelector('main').textContent")
                seen_new += 1
            docno = js("return document.querySelector('#docno').textContent")
            ActionChains(driver).send_keys(str(col.qrels.grade_of(topic, docno) or 0)).perform()
        assert seen_same >= 1 and seen_new >= 1
    finally:
        driver.quit()
        if server is not None:
            server.kill()
            server.wait()
        log.close()
