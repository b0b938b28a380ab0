"""The judging page through Starlette's test client: every route, bad input → 4xx with a message, the campaign's
choice of document, leases, skip, undo, escaping, the token; and the texts/topics readers it uses."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io.topics import read_topics
from bayeval.selection import Campaign
from bayeval.serve.desk import Desk
from bayeval.synthetic import make_collection

starlette = pytest.importorskip("starlette", reason="bayeval[serve] (starlette) is not installed")
pytest.importorskip("httpx", reason="httpx (starlette's test client) is not installed")
from starlette.testclient import TestClient  # noqa: E402

from bayeval.serve.app import MAX_BODY, MAX_FIELD, create_app  # noqa: E402

BASE = "http://127.0.0.1"


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=6, n_systems=3, n_docs=60, depth=20, seed=1)


@pytest.fixture
def campaign(tmp_path, col):
    path = tmp_path / "c.sqlite"
    Campaign.create(path, col.runs, measure="AP", alpha=0.95, pairs=[(1, 2)]).close()
    return path


def _client(campaign, **kw):
    return TestClient(create_app(campaign, **kw), base_url=BASE, raise_server_exceptions=True)


def _login(c, name="alice"):
    form = re.search(r'name="csrf" value="([^"]+)"', c.get("/").text).group(1)
    assert form == c.cookies["bayeval_csrf"]  # the form's token is the cookie's
    r = c.post("/login", data={"name": name, "csrf": form})
    assert r.status_code == 200, r.text
    return r


def _shown(html):
    m = re.search(r'id="topic">([^<]*)</span>.*?id="docno">([^<]*)</span>', html, re.S)
    return None if m is None else (m.group(1), m.group(2))


def _post(c, path, **fields):
    return c.post(path, data={"csrf": c.cookies["bayeval_csrf"], **fields})


def test_one_assessor_gets_exactly_what_judge_next_gives(tmp_path, col, campaign):
    from bayeval.selection.selector import DEFAULT_TOPIC_TOLERANCE

    twin = tmp_path / "twin.sqlite"
    Campaign.create(twin, col.runs, measure="AP", alpha=0.95, pairs=[(1, 2)]).close()
    shown = []
    with _client(campaign) as c, Campaign.open(twin) as ref:
        r = _login(c)
        for _ in range(12):
            item = _shown(r.text)
            # the campaign's next document, kept on the assessor's topic by the desk's rule
            expected = ref.next(1, stay_on=shown[-1][0] if shown else None, tolerance=DEFAULT_TOPIC_TOLERANCE)[0]
            assert item == (expected.topic, expected.docno)
            shown.append(item)
            grade = col.qrels.grade_of(*item)
            ref.record([(item[0], item[1], grade)])
            r = _post(c, "/judge", topic=item[0], docno=item[1], grade=str(grade))
            assert r.status_code == 200
            # committed before the next document is shown: another connection sees it
            with Campaign.open(campaign) as other:
                assert len(other.judgments()) == len(shown)
            p = c.get("/progress.json").json()
            assert p["judgments"] == len(shown) and p["mine"] == len(shown)
            assert p["pairs"][0]["p_less"] == pytest.approx(float(ref.status().p_less[0]))
    with Campaign.open(campaign) as camp:
        f = camp.judgments()
        assert list(zip(f["topic"], f["docno"], strict=True)) == shown
        assert set(f["origin"]) == {"serve:alice"}


def test_page_shows_topic_document_grades_and_progress(campaign, col):
    from bayeval.io.topics import TopicStatement

    with _client(campaign, texts={}, topics={}) as c:
        r = _login(c)
        t, d = _shown(r.text)
    texts = {d: "<script>alert('x')</script> & more"}
    topics = {t: TopicStatement(t, "<b>bold</b> title", "a <i>desc</i>", "narr & co")}
    with _client(campaign, texts=texts, topics=topics) as c:
        r = _login(c, "O'Brien")
        html = r.text
        assert _shown(html) == (t, d)
        assert "<script>alert" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more" in html
        assert "&lt;b&gt;bold&lt;/b&gt; title" in html and "a &lt;i&gt;desc&lt;/i&gt;" in html
        assert "O&#x27;Brien" in html and "O'Brien" not in html
        assert all(f'data-key="{g}"' for g in (0, 1))
        assert 'data-key="2"' not in html  # binary campaign: grades 0 and 1 only
        assert "P(ΔAP &lt; 0)" in html and "<meter" in html
        assert r.headers["content-security-policy"].startswith("default-src 'none'")
        assert c.get("/static/judge.js").headers["content-type"].startswith("text/javascript")
        assert c.get("/static/judge.css").status_code == 200
    with _client(campaign, texts={}) as c:
        r = _login(c)
        assert f"No text for document {d}" in r.text and "No statement for topic" in r.text


def test_two_assessors_never_hold_the_same_document(campaign, col):
    app = create_app(campaign)
    with TestClient(app, base_url=BASE) as a, TestClient(app, base_url=BASE) as b:
        ia = _shown(_login(a, "alice").text)
        ib = _shown(_login(b, "bob").text)
        assert ia != ib
        r = _post(b, "/judge", topic=ia[0], docno=ia[1], grade="1")
        assert r.status_code == 409 and "being judged by 'alice'" in r.text
        # alice judges hers; bob's stays his; the next of alice is neither
        r = _post(a, "/judge", topic=ia[0], docno=ia[1], grade=str(col.qrels.grade_of(*ia)))
        ia2 = _shown(r.text)
        assert ia2 not in (ia, ib)
        assert _shown(b.get("/").text) == ib
        # bob leaves: his document goes back to the pool
        assert _post(b, "/logout").status_code == 200
        assert app.app.state.desk.held_by_others("alice") is False


def test_lease_expires(tmp_path, campaign):
    now = [0.0]
    desk = Desk(campaign, lease_seconds=10, clock=lambda: now[0])
    assert desk.progress().summary().startswith("0 judgments") and len(desk.progress().to_frame()) == 1
    a = desk.next("alice")
    b = desk.next("bob")
    assert a != b
    desk.release("bob")
    now[0] = 11.0  # alice's lease is stale: bob may be given her document
    assert desk.next("bob") == a
    desk.close()


def test_skip_and_undo(campaign, col):
    with _client(campaign) as c:
        first = _shown(_login(c).text)
        r = _post(c, "/skip", topic=first[0], docno=first[1])
        second = _shown(r.text)
        assert second != first
        p0 = c.get("/progress.json").json()["pairs"][0]["p_less"]
        r = _post(c, "/judge", topic=second[0], docno=second[1], grade="1")
        third = _shown(r.text)
        assert third not in (first, second)  # the skipped one is not given back
        assert "last: topic" in r.text and 'data-key="u"' in r.text
        assert c.get("/progress.json").json()["judgments"] == 1
        r = _post(c, "/undo")
        assert _shown(r.text) == second  # the undone document comes back
        p = c.get("/progress.json").json()
        assert p["judgments"] == 0 and p["pairs"][0]["p_less"] == pytest.approx(p0)
        with Campaign.open(campaign) as camp:
            assert len(camp.judgments()) == 0
        r = _post(c, "/undo")
        assert r.status_code == 409 and "nothing to undo" in r.text


def test_bad_requests_are_4xx_with_a_message(campaign):
    with _client(campaign) as c:
        assert c.get("/").status_code == 200
        csrf = c.cookies["bayeval_csrf"]
        # no name yet
        r = c.post("/judge", data={"csrf": csrf, "topic": "1", "docno": "x", "grade": "1"})
        assert r.status_code == 403 and "name yourself" in r.text
        for path in ("/next", "/skip", "/undo"):
            assert c.post(path, data={"csrf": csrf, "topic": "1", "docno": "x"}).status_code in (400, 403)
        item = _shown(_login(c).text)
        cases = [
            (dict(data={"topic": item[0], "docno": item[1], "grade": "1"}), 403, "CSRF"),
            (dict(data={"csrf": "x" * 43, "topic": item[0], "docno": item[1], "grade": "1"}), 403, "CSRF"),
            (dict(data={"csrf": csrf, "topic": item[0], "docno": item[1], "grade": "1"},
                  headers={"sec-fetch-site": "cross-site"}), 403, "cross-site"),
            (dict(data={"csrf": csrf, "topic": item[0], "docno": item[1], "grade": "1"},
                  headers={"origin": "http://evil.example"}), 403, "Origin"),
            (dict(content=b'{"grade": 1}', headers={"content-type": "application/json"}), 415, "form"),
            (dict(content=b"csrf=" + b"a" * (MAX_BODY + 1),
                  headers={"content-type": "application/x-www-form-urlencoded"}), 413, "larger"),
            (dict(data={"csrf": csrf, "topic": "t" * (MAX_FIELD + 1), "docno": "d", "grade": "1"}), 413, "longer"),
            (dict(content=f"csrf={csrf}&grade=1&grade=0".encode(),
                  headers={"content-type": "application/x-www-form-urlencoded"}), 400, "2 times"),
            (dict(content=b"csrf=\xff\xfe", headers={"content-type": "application/x-www-form-urlencoded"}), 400,
             "malformed"),
            (dict(content="&".join(f"f{k}=1" for k in range(20)).encode(),
                  headers={"content-type": "application/x-www-form-urlencoded"}), 400, "malformed"),
            (dict(data={"csrf": csrf, "topic": item[0], "docno": item[1], "grade": "x"}), 400, "grade"),
            (dict(data={"csrf": csrf, "topic": item[0], "docno": item[1], "grade": "7"}), 400, "grade"),
            (dict(data={"csrf": csrf, "topic": item[0], "docno": item[1]}), 400, "missing"),
            (dict(data={"csrf": csrf, "topic": "no-such-topic", "docno": item[1], "grade": "1"}), 400, "topic"),
            (dict(data={"csrf": csrf, "topic": item[0], "docno": "no-such-doc", "grade": "1"}), 400, "docno"),
        ]
        for kw, status, words in cases:
            r = c.post("/judge", **kw)
            assert r.status_code == status and words in r.text, (kw, r.status_code, r.text)
        assert c.post("/login", data={"csrf": csrf, "name": "<script>"}).status_code == 400
        assert c.post("/login", data={"csrf": csrf, "name": "x" * 41}).status_code == 400
        assert c.post("/skip", data={"csrf": csrf, "topic": "zz", "docno": "q"}).status_code == 400
        r = c.get("/nowhere")
        assert r.status_code == 404 and "no such page" in r.text
        r = c.get("/judge")
        assert r.status_code == 405 and "not allowed" in r.text
        r = c.get("/static/../../etc/passwd")
        assert r.status_code == 404
        r = c.get("/", headers={"host": "evil.example"})
        assert r.status_code == 400 and "Host" in r.text
        r = c.get("/", headers={"accept": "text/html"}, params={"x": "1"})
        assert r.status_code == 200
        r = c.get("/nowhere", headers={"accept": "text/html"})
        assert r.status_code == 404 and 'id="error"' in r.text
        # a grade conflicting with the recorded one
        assert _post(c, "/judge", topic=item[0], docno=item[1], grade="1").status_code == 200
        r = _post(c, "/judge", topic=item[0], docno=item[1], grade="0")
        assert r.status_code == 400 and "already judged 1" in r.text
        # the same judgment again changes nothing
        assert _post(c, "/judge", topic=item[0], docno=item[1], grade="1").status_code == 200
        assert c.get("/progress.json").json()["judgments"] == 1


def test_token_required_on_every_request(campaign):
    with TestClient(create_app(campaign, token="s3cret", allowed_hosts=None), base_url="http://10.0.0.5:8000") as c:
        for path in ("/", "/progress.json", "/static/judge.js", "/nowhere"):
            r = c.get(path)
            assert r.status_code == 401 and "token required" in r.text
        assert c.post("/judge", data={"grade": "1"}).status_code == 401
        assert c.get("/", params={"token": "wrong"}).status_code == 401
        r = c.get("/", params={"token": "s3cret"}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/"
        assert c.get("/").status_code == 200  # the cookie carries it now
    with TestClient(create_app(campaign, token="s3cret", allowed_hosts=None), base_url="http://10.0.0.5:8000") as c:
        assert c.get("/progress.json", headers={"authorization": "Bearer s3cret"}).status_code == 200


def test_read_topics(tmp_path):
    p = tmp_path / "topics.txt"
    p.write_text("<top>\n<num> Number: 401\n<title> foreign minorities, Germany\n\n<desc> Description:\n"
                 "What language\nand cultural differences?\n<narr> Narrative:\nA relevant document.\n</top>\n\n"
                 "<top>\n<num> Number: 402 \n<title> behavioral genetics\n</top>\n")
    t = read_topics(p)
    assert list(t) == ["401", "402"]
    assert t["401"].title == "foreign minorities, Germany"
    assert t["401"].description == "What language and cultural differences?"
    assert t["401"].narrative == "A relevant document." and t["402"].description == ""
    q = tmp_path / "topics.tsv"
    q.write_text("1\tfirst\tdesc one\n\n2\tsecond\n")
    assert read_topics(q)["1"].description == "desc one" and read_topics(q)["2"].title == "second"
    bad = {"<top>\n<num> Number: 1\n": ":1: <top> without </top>", "1\n": ":1: expected", "1\ta\n1\tb\n": ":2:",
           "<top>\n<title> x\n</top>\n": ":1: topic without", "": "empty file"}
    for k, (text, where) in enumerate(bad.items()):
        f = tmp_path / f"bad{k}.txt"
        f.write_text(text)
        with pytest.raises(FileFormatError, match=re.escape(where)):
            read_topics(f)


def test_sources_read_texts_and_cranfield(tmp_path, shared_data):
    from bayeval.io.sources import load_texts, load_topics

    cran = shared_data / "cranfield"
    texts = load_texts(cran)
    assert len(texts) == 1400 and texts["1"].startswith("experimental investigation")
    topics = load_topics(cran / "cran.qry.gz")
    assert len(topics) == 225 and "similarity laws" in topics["1"].title
    f = tmp_path / "t.tsv"
    f.write_text("d1\thello\n")
    assert load_texts(f) == {"d1": "hello"}
    j = tmp_path / "t.jsonl"
    j.write_text('{"docno": "d2", "text": "<script>x</script>"}\n')
    assert load_texts(j) == {"d2": "<script>x</script>"}
    with pytest.raises(BayevalInputError, match="directory"):
        load_texts(tmp_path)


def test_cli_serve_bad_input_exits_2(tmp_path, campaign):
    for argv, words in ([str(campaign), "--texts", str(tmp_path / "none.tsv")], "none.tsv"), \
            ([str(tmp_path / "none.sqlite"), "--texts", str(tmp_path)], "does not exist"), \
            ([str(campaign), "--texts", str(tmp_path), "--port", "99999"], "port"):
        r = subprocess.run([sys.executable, "-m", "bayeval.cli", "judge", "serve", *argv], capture_output=True,
                           text=True)
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_campaign_retract_last_and_origin(campaign, col):
    with Campaign.open(campaign) as camp, Campaign.open(campaign) as other:
        before = float(camp.status().p_less[0])
        judged = []
        for _ in range(3):
            c = camp.next(1)[0]
            camp.record([(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno))], origin="serve:alice")
            judged.append((c.topic, c.docno))
        camp.record([(camp.next(1)[0].topic, camp.next(1)[0].docno, 0)], origin="serve:bob")
        assert camp.by_origin("serve:alice")[0] == 3 and camp.by_origin("serve:alice")[1].docno == judged[-1][1]
        assert other.status().judgments == 4
        line = camp.retract_last("serve:alice")
        assert (line.topic, line.docno) == judged[-1]
        assert camp.by_origin("serve:alice")[0] == 2 and camp.status().judgments == 3
        assert not camp.selector().is_judged(*judged[-1])
        # another process that already holds a selector sees the retraction (rebuilt from the file)
        assert other.status().judgments == 3 and not other.selector().is_judged(*judged[-1])
        assert camp.retract_last("serve:nobody") is None
        camp.retract_last("serve:alice"), camp.retract_last("serve:alice"), camp.retract_last("serve:bob")
        assert camp.status().judgments == 0 and float(camp.status().p_less[0]) == pytest.approx(before)
        assert other.status().judgments == 0


def test_random_requests_never_500(campaign):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    client = _client(campaign)
    with client as c:
        _login(c)
        csrf = c.cookies["bayeval_csrf"]
        texts = st.text(max_size=40)
        fields = st.dictionaries(st.sampled_from(["csrf", "topic", "docno", "grade", "name", "x"]), texts, max_size=5)

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(path=st.sampled_from(["/", "/login", "/logout", "/next", "/judge", "/skip", "/undo", "/progress.json",
                                     "/static/judge.js", "/x"]),
               method=st.sampled_from(["GET", "POST", "PUT"]), data=fields, raw=st.binary(max_size=64),
               use_raw=st.booleans(), with_csrf=st.booleans())
        def check(path, method, data, raw, use_raw, with_csrf):
            if with_csrf:
                data = {**data, "csrf": csrf}
            if use_raw:
                r = c.request(method, path, content=raw, headers={"content-type": "application/x-www-form-urlencoded"})
            else:
                r = c.request(method, path, data=data)
            assert r.status_code < 500, (path, method, data, r.text)
            assert r.status_code < 400 or r.text.strip()  # a refusal says why

        check()


# ---------------------------------------------------------------------- raw ASGI probes
def _asgi(app, method, path, *, headers=(), chunks=(), disconnect=False, query=b""):
    """Drive the ASGI application by hand: ``chunks`` of body, then (``disconnect``) the client going away.
    Returns (status, headers, body); an exception escaping the application fails the calling test."""
    import asyncio

    events = [{"type": "http.request", "body": c, "more_body": disconnect or k < len(chunks) - 1}
              for k, c in enumerate(chunks)] or [{"type": "http.request", "body": b"", "more_body": disconnect}]
    if disconnect:
        events.append({"type": "http.disconnect"})
    sent = []

    async def receive():
        return events.pop(0) if events else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "",
             "headers": [(b"host", b"127.0.0.1"), *[(k.encode(), v.encode()) for k, v in headers]],
             "client": ("127.0.0.1", 1234), "server": ("127.0.0.1", 80)}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body.decode()


@pytest.mark.parametrize("disconnect", [True, False], ids=["client-gone", "body-short"])
def test_cut_off_body_is_400_without_traceback(campaign, caplog, disconnect):
    app = create_app(campaign)
    csrf = "c" * 43
    body = f"csrf={csrf}&name=alice".encode()
    headers = [("content-type", "application/x-www-form-urlencoded"), ("content-length", str(len(body) + 40)),
               ("cookie", f"bayeval_csrf={csrf}")]
    status, _, text = _asgi(app, "POST", "/login", headers=headers, chunks=[body[:10], body[10:]],
                            disconnect=disconnect)
    assert status == 400 and ("cut off" if disconnect else "Content-Length says") in text, (status, text)
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.levelname == "ERROR"]
    status, _, _ = _asgi(app, "POST", "/login", headers=headers[:2] + [("cookie", f"bayeval_csrf={csrf}")],
                         chunks=[body + b"&x=" + b"1" * 37])  # the whole body: the same request is accepted
    assert status == 303


def test_name_cookie_must_match_the_name_rule_whole(campaign):
    with _client(campaign) as c:
        _login(c)
        assert _post(c, "/next").status_code == 200
        for bad in ("alice%0A", "alice%0D%0A", "%0Aalice", "alice%00"):
            c.cookies.set("bayeval_assessor", bad)
            r = _post(c, "/next")
            assert r.status_code == 403 and "name yourself" in r.text, (bad, r.status_code)
            assert 'name="name"' in c.get("/").text  # the name form, not a document
        r = _post(c, "/login", name="bob\n")  # a field is stripped: a final newline is not part of the name
        assert r.status_code == 200


@pytest.mark.parametrize("path", ["//evil.example/", "//evil.example", "/\\evil.example/", "///evil.example/",
                                  "/nowhere", "/progress.json"])
def test_token_redirect_goes_to_local_paths_only(campaign, path):
    app = create_app(campaign, token="s3cret", allowed_hosts=None)
    status, headers, _ = _asgi(app, "GET", path, query=b"token=s3cret")
    location = headers["location"]
    assert status == 303 and location.startswith("/") and not location.startswith(("//", "/\\")), location
    assert location == (path if path == "/progress.json" else "/")
