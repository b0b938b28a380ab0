"""The judging web application (Starlette): routes, security checks, the worker thread of the desk.

Routes (no route takes a path from the request; the two static files are constants):

- ``GET /`` — the page: the assessor's document, or the name form, or "nothing open"; changes nothing.
- ``POST /login`` (``name``), ``POST /logout``, ``POST /next``, ``POST /judge`` (``topic, docno, grade``),
  ``POST /skip`` (``topic, docno``), ``POST /undo`` — each answers ``303 See Other`` to ``/``. ``/judge``
  commits the judgment to the campaign file and leases the next document before answering.
- ``GET /progress.json`` — judgments so far and every target pair's E[Δ], P(Δ < 0), decision.
- ``GET /static/judge.css``, ``GET /static/judge.js``.

Security (docs/judging.md): the Host header must name the bound loopback address unless the server is
bound elsewhere, and then every request needs the token (``?token=`` once, kept in a cookie, or
``Authorization: Bearer``); every POST needs the double-submit CSRF token (cookie + form field), is
refused when the browser marks it cross-site (``Sec-Fetch-Site``) or its ``Origin`` is not this server;
bodies are limited to :data:`MAX_BODY` bytes, fields to :data:`MAX_FIELD` characters, names to
:data:`MAX_NAME`; cookies are HttpOnly and SameSite=Lax; pages carry a strict Content-Security-Policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, quote, unquote

from bayeval.errors import BayevalInputError
from bayeval.serve import _page
from bayeval.serve.desk import Desk, LeaseConflict

__all__ = ["LOOPBACK", "MAX_BODY", "MAX_FIELD", "MAX_NAME", "create_app"]

MAX_BODY = 4096
MAX_FIELD = 256
MAX_NAME = 40
MAX_FIELDS = 8
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_GET_PATHS = frozenset({"/", "/progress.json", "/static/judge.css", "/static/judge.js"})
_NAME = re.compile(r"[\w][\w .@'-]*")  # matched whole (fullmatch): "$" would allow a final newline
_CSRF_COOKIE, _NAME_COOKIE, _TOKEN_COOKIE = "bayeval_csrf", "bayeval_assessor", "bayeval_token"
_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def create_app(campaign, *, texts: dict | None = None, topics: dict | None = None, token: str | None = None,
               allowed_hosts=LOOPBACK, lease_seconds: float = 600.0, secure_cookies: bool = False):
    """The Starlette application judging ``campaign`` (a campaign file path).

    Parameters
    ----------
    campaign : path-like
        An existing campaign file (``bayeval judge init``).
    texts : dict docno → str, optional
        Document texts (:func:`bayeval.serve.sources.load_texts`); a document without text shows its docno.
    topics : dict topic → TopicStatement, optional
        Topic statements (:func:`bayeval.serve.sources.load_topics`).
    token : str, optional
        Required on every request when given (the CLI sets one whenever it binds a non-loopback address).
    allowed_hosts : sequence of str or None
        Host names accepted in the Host header (None: any, for a non-loopback bind with a token).
    lease_seconds : float
        How long a document stays reserved to the assessor it was given to.
    secure_cookies : bool
        Mark cookies ``Secure`` (behind an HTTPS proxy).

    Returns
    -------
    An ASGI application (the security checks around the Starlette application, reachable as ``.app``).
    """
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Route

    texts = {} if texts is None else texts
    topics = {} if topics is None else topics
    hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bayeval-desk")
    # the campaign's SQLite connection lives in the worker thread: every desk call runs there, one at a time
    desk: Desk = pool.submit(Desk, campaign, lease_seconds=lease_seconds).result()
    grades = desk.grades

    async def call(fn, *args):
        return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    def cookie(response: Response, key: str, value: str, max_age: int | None = None) -> None:
        # Lax, not Strict: a link to the page from elsewhere still finds the token and the name; a cross-site
        # POST carries no cookie either way, and every POST is checked for the CSRF token besides
        response.set_cookie(key, value, max_age=max_age, path="/", httponly=True, samesite="lax",
                            secure=secure_cookies)

    def csrf_of(request: Request) -> tuple[str, bool]:
        """The CSRF token of this browser (the cookie's), or a new one for the cookie the response sets."""
        value = request.cookies.get(_CSRF_COOKIE, "")
        if re.fullmatch(r"[A-Za-z0-9_-]{32,64}", value):
            return value, False
        if not hasattr(request.state, "new_csrf"):
            request.state.new_csrf = secrets.token_urlsafe(32)
        return request.state.new_csrf, True

    def html(request: Request, body: str, status: int = 200) -> HTMLResponse:
        response = HTMLResponse(body, status_code=status)
        csrf, new = csrf_of(request)
        if new:
            cookie(response, _CSRF_COOKIE, csrf)
        return response

    def assessor_of(request: Request) -> str | None:
        raw = request.cookies.get(_NAME_COOKIE)
        if raw is None:
            return None
        name = unquote(raw)
        return name if len(name) <= MAX_NAME and _NAME.fullmatch(name) else None

    def need_assessor(request: Request) -> str:
        name = assessor_of(request)
        if name is None:
            raise _Refused(403, "name yourself first: open / and give your name")
        return name

    async def form(request: Request) -> dict[str, str]:
        """The POST body as fields, after the CSRF checks and the size limits."""
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise _Refused(403, f"cross-site request refused (Sec-Fetch-Site: {site[:20]})")
        origin = request.headers.get("origin")
        if origin is not None and origin != "null":
            if origin.lower() != f"{request.url.scheme}://{request.headers.get('host', '')}".lower():
                raise _Refused(403, "cross-origin request refused (Origin does not match this server)")
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/x-www-form-urlencoded":
            raise _Refused(415, "expected a form (application/x-www-form-urlencoded)")
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            raise _Refused(413, f"request body larger than {MAX_BODY} bytes")
        body = bytearray()
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY:
                    raise _Refused(413, f"request body larger than {MAX_BODY} bytes")
        except ClientDisconnect:  # the body ended before its Content-Length, or broken chunked encoding
            raise _Refused(400, "request body cut off before its end") from None
        if length is not None and len(body) != int(length):
            raise _Refused(400, f"request body of {len(body)} bytes, Content-Length says {length}")
        try:
            parsed = parse_qs(bytes(body).decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS,
                              errors="strict")
        except (UnicodeDecodeError, ValueError) as exc:
            raise _Refused(400, f"malformed form: {str(exc)[:80]}") from None
        fields = {}
        for key, values in parsed.items():
            if len(values) != 1:
                raise _Refused(400, f"field {key[:20]!r}: given {len(values)} times")
            if len(values[0]) > MAX_FIELD:
                raise _Refused(413, f"field {key[:20]!r}: longer than {MAX_FIELD} characters")
            fields[key] = values[0]
        expected = request.cookies.get(_CSRF_COOKIE, "")
        if not expected or not hmac.compare_digest(expected.encode(), fields.get("csrf", "").encode()):
            raise _Refused(403, "missing or wrong CSRF token: reload the page and try again")
        return fields

    def field(fields: dict, key: str) -> str:
        value = fields.get(key)
        if value is None or not value.strip():
            raise _Refused(400, f"field {key!r}: missing")
        return value.strip()

    # ----------------------------------------------------------------- pages
    def page_state(name: str):
        item = desk.current(name)
        return (item, desk.progress(name), desk.last(name), item is None and desk.held_by_others(name))

    # the state at the end of an assessor's POST, for the GET its 303 leads to (read once; reloads ask the desk)
    views: dict[str, tuple] = {}

    async def act(name: str, fn, *args):
        """Run a state change in the desk's thread, then keep the page state it leaves for the redirect."""
        def work():
            fn(*args)
            return page_state(name)
        views.pop(name, None)
        views[name] = await call(work)

    async def index(request: Request):
        name = assessor_of(request)
        csrf, _ = csrf_of(request)
        if name is None:
            return html(request, _page.login_page(desk.name, csrf))
        state = views.pop(name, None)
        item, progress, last, others = state if state is not None else await call(page_state, name)
        if item is None:
            return html(request, _page.done_page(campaign=desk.name, assessor=name, csrf=csrf, progress=progress,
                                                 last=last, held_elsewhere=others))
        return html(request, _page.item_page(campaign=desk.name, assessor=name, csrf=csrf, item=item,
                                             topic=topics.get(item.topic), text=texts.get(item.docno),
                                             grades=grades, progress=progress, last=last))

    def see_index() -> RedirectResponse:
        return RedirectResponse("/", status_code=303)

    async def login(request: Request):
        fields = await form(request)
        name = field(fields, "name")
        if len(name) > MAX_NAME or not _NAME.fullmatch(name):
            raise _Refused(400, f"name: 1 to {MAX_NAME} letters, digits, spaces or . @ ' - (starting with a "
                                "letter or digit)")
        await act(name, desk.next, name)
        response = see_index()
        cookie(response, _NAME_COOKIE, quote(name), max_age=30 * 24 * 3600)
        return response

    async def logout(request: Request):
        await form(request)
        name = assessor_of(request)
        if name is not None:
            views.pop(name, None)
            await call(desk.release, name)
        response = see_index()
        response.delete_cookie(_NAME_COOKIE, path="/")
        return response

    async def next_doc(request: Request):
        await form(request)
        name = need_assessor(request)
        await act(name, desk.next, name)
        return see_index()

    def judge_and_next(name, topic, docno, grade):
        desk.judge(name, topic, docno, grade)  # committed to SQLite here
        desk.next(name)

    async def judge(request: Request):
        fields = await form(request)
        name = need_assessor(request)
        raw = field(fields, "grade")
        if not re.fullmatch(r"-?[0-9]{1,3}", raw):
            raise _Refused(400, f"field 'grade': expected one of {', '.join(map(str, grades))}, got {raw[:8]!r}")
        await act(name, judge_and_next, name, field(fields, "topic"), field(fields, "docno"), int(raw))
        return see_index()

    def skip_and_next(name, topic, docno):
        desk.skip(name, topic, docno)
        desk.next(name)

    async def skip(request: Request):
        fields = await form(request)
        name = need_assessor(request)
        await act(name, skip_and_next, name, field(fields, "topic"), field(fields, "docno"))
        return see_index()

    async def undo(request: Request):
        await form(request)
        name = need_assessor(request)
        undone = []
        await act(name, lambda: undone.append(desk.undo(name)))
        if undone[0] is None:
            raise _Refused(409, "nothing to undo: you have no recorded judgment")
        return see_index()

    async def progress(request: Request):
        p = await call(desk.progress, assessor_of(request))
        return JSONResponse(p.to_dict())

    async def css(request: Request):
        return Response(_page.CSS, media_type="text/css")

    async def js(request: Request):
        return Response(_page.JS, media_type="text/javascript")

    # ----------------------------------------------------------------- errors and guard
    def refused(status: int, message: str, request: Request | None = None):
        accept = "" if request is None else request.headers.get("accept", "")
        if "text/html" in accept:
            return HTMLResponse(_page.error_page(status, message), status_code=status)
        return PlainTextResponse(f"{status}: {message}\n", status_code=status)

    async def on_refused(request: Request, exc: _Refused):
        return refused(exc.status, exc.message, request)

    async def on_input_error(request: Request, exc: BayevalInputError):
        return refused(409 if isinstance(exc, LeaseConflict) else 400, str(exc), request)

    async def on_http(request: Request, exc):
        message = {404: "no such page", 405: "method not allowed here"}.get(exc.status_code, str(exc.detail))
        return refused(exc.status_code, message, request)

    running = [0]  # lifespans open (a test may run two clients on one application): close after the last

    @contextlib.asynccontextmanager
    async def lifespan(app):
        running[0] += 1
        yield
        running[0] -= 1
        if running[0] == 0:
            pool.submit(desk.close).result()
            pool.shutdown(wait=True)

    from starlette.exceptions import HTTPException

    app = Starlette(routes=[
        Route("/", index, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/next", next_doc, methods=["POST"]),
        Route("/judge", judge, methods=["POST"]),
        Route("/skip", skip, methods=["POST"]),
        Route("/undo", undo, methods=["POST"]),
        Route("/progress.json", progress, methods=["GET"]),
        Route("/static/judge.css", css, methods=["GET"]),
        Route("/static/judge.js", js, methods=["GET"]),
    ], exception_handlers={_Refused: on_refused, BayevalInputError: on_input_error, HTTPException: on_http},
        lifespan=lifespan)
    app.state.desk = desk
    app.state.call = call

    async def guard(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        request = Request(scope)
        problem = None
        if hosts is not None and _host_name(request.headers.get("host", "")) not in hosts:
            problem = (400, "invalid Host header: open the address the server printed")
        elif token is not None:
            given = request.cookies.get(_TOKEN_COOKIE) or request.headers.get("authorization", "").removeprefix(
                "Bearer ").strip()
            query = request.query_params.get("token")
            if query is not None and hmac.compare_digest(query.encode(), token.encode()) and \
                    request.method == "GET":
                # to this server's own pages only: a path like //host/ would send the browser elsewhere
                local = request.url.path if request.url.path in _GET_PATHS else "/"
                response = RedirectResponse(local, status_code=303)
                cookie(response, _TOKEN_COOKIE, token)
                await _secured(response)(scope, receive, send)
                return
            if not given or not hmac.compare_digest(given.encode(), token.encode()):
                problem = (401, "token required: open the address with ?token=... that the server printed")
        if problem is not None:
            await _secured(refused(*problem, request))(scope, receive, send)
            return

        async def send_secured(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k.encode(), v.encode()) for k, v in _HEADERS.items() if k.encode() not in present]
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_secured)

    guard.app = app  # the Starlette application behind the guard (tests reach state through it)
    return guard


def _secured(response):
    for k, v in _HEADERS.items():
        response.headers[k] = v
    return response
