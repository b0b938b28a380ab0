"""The judging web application (Starlette): routes, security checks, the worker thread of the desk.

Three parts: :class:`SecurityMiddleware` (ASGI, in front of everything: Host, token, security headers),
:func:`read_form` (every POST's body: CSRF, Origin, limits, cut-off bodies), and the routes, methods of one
small class over the desk.

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

__all__ = ["LOOPBACK", "MAX_BODY", "MAX_FIELD", "MAX_NAME", "SecurityMiddleware", "create_app", "read_form"]

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


def _secured(response):
    for k, v in _HEADERS.items():
        response.headers[k] = v
    return response


def _refused(status: int, message: str, request=None):
    """A refusal: the error page for a browser, one line of text otherwise."""
    from starlette.responses import HTMLResponse, PlainTextResponse

    accept = "" if request is None else request.headers.get("accept", "")
    if "text/html" in accept:
        return HTMLResponse(_page.error_page(status, message), status_code=status)
    return PlainTextResponse(f"{status}: {message}\n", status_code=status)


class _Cookies:
    """How the page sets its cookies: HttpOnly, SameSite=Lax, ``Secure`` behind an HTTPS proxy."""

    def __init__(self, secure: bool) -> None:
        self.secure = secure

    def set(self, response, key: str, value: str, max_age: int | None = None) -> None:
        # Lax, not Strict: a link to the page from elsewhere still finds the token and the name; a cross-site
        # POST carries no cookie either way, and every POST is checked for the CSRF token besides
        response.set_cookie(key, value, max_age=max_age, path="/", httponly=True, samesite="lax", secure=self.secure)


class SecurityMiddleware:
    """ASGI middleware in front of the routes: the Host header, the token, the security headers of every answer.

    Parameters
    ----------
    app : ASGI application
    hosts : set of str or None
        Host names accepted in the Host header (None: any).
    token : str or None
        Required on every request when given: ``?token=`` once on a GET (answered by a redirect to the same page
        of this server, never elsewhere, with the token in a cookie), the cookie, or ``Authorization: Bearer``.
    cookies : _Cookies
    """

    def __init__(self, app, *, hosts: set[str] | None, token: str | None, cookies: _Cookies) -> None:
        self.app = app
        self.hosts = hosts
        self.token = token
        self.cookies = cookies

    async def __call__(self, scope, receive, send):
        from starlette.requests import Request
        from starlette.responses import RedirectResponse

        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        problem = None
        if self.hosts is not None and _host_name(request.headers.get("host", "")) not in self.hosts:
            problem = (400, "invalid Host header: open the address the server printed")
        elif self.token is not None:
            token = self.token.encode()
            given = request.cookies.get(_TOKEN_COOKIE) or request.headers.get("authorization", "").removeprefix(
                "Bearer ").strip()
            query = request.query_params.get("token")
            if query is not None and hmac.compare_digest(query.encode(), token) and request.method == "GET":
                # to this server's own pages only: a path like //host/ would send the browser elsewhere
                local = request.url.path if request.url.path in _GET_PATHS else "/"
                response = RedirectResponse(local, status_code=303)
                self.cookies.set(response, _TOKEN_COOKIE, self.token)
                await _secured(response)(scope, receive, send)
                return
            if not given or not hmac.compare_digest(given.encode(), token):
                problem = (401, "token required: open the address with ?token=... that the server printed")
        if problem is not None:
            await _secured(_refused(*problem, request))(scope, receive, send)
            return

        async def send_secured(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k.encode(), v.encode()) for k, v in _HEADERS.items() if k.encode() not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_secured)


async def read_form(request) -> dict[str, str]:
    """The POST body as fields, after the CSRF checks and the limits.

    Refused (a 4xx, never a traceback): a cross-site request (``Sec-Fetch-Site``, ``Origin``), a body that is not
    a form, larger than :data:`MAX_BODY` bytes, cut off before its end (the client went away, or it is shorter
    than its Content-Length), a field given twice or longer than :data:`MAX_FIELD` characters, more than
    :data:`MAX_FIELDS` fields, text that is not UTF-8, and a missing or wrong CSRF token.
    """
    from starlette.requests import ClientDisconnect

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


def _field(fields: dict, key: str) -> str:
    value = fields.get(key)
    if value is None or not value.strip():
        raise _Refused(400, f"field {key!r}: missing")
    return value.strip()


class _Routes:
    """The page's routes, as methods over one desk (its calls run one at a time in the desk's worker thread)."""

    def __init__(self, campaign, desk: Desk, pool: ThreadPoolExecutor, texts: dict, topics: dict,
                 cookies: _Cookies) -> None:
        self.campaign = campaign
        self.desk = desk
        self.pool = pool
        self.texts = texts
        self.topics = topics
        self.cookies = cookies
        # the state at the end of an assessor's POST, for the GET its 303 leads to (read once; reloads ask the desk)
        self.views: dict[str, tuple] = {}

    def routes(self) -> list:
        from starlette.routing import Route

        return [
            Route("/", self.index, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/next", self.next_doc, methods=["POST"]),
            Route("/judge", self.judge, methods=["POST"]),
            Route("/skip", self.skip, methods=["POST"]),
            Route("/undo", self.undo, methods=["POST"]),
            Route("/progress.json", self.progress, methods=["GET"]),
            Route("/static/judge.css", self.css, methods=["GET"]),
            Route("/static/judge.js", self.js, methods=["GET"]),
        ]

    # ------------------------------------------------------------- helpers
    async def call(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    @staticmethod
    def csrf_of(request) -> tuple[str, bool]:
        """The CSRF token of this browser (the cookie's), or a new one for the cookie the response sets."""
        value = request.cookies.get(_CSRF_COOKIE, "")
        if re.fullmatch(r"[A-Za-z0-9_-]{32,64}", value):
            return value, False
        if not hasattr(request.state, "new_csrf"):
            request.state.new_csrf = secrets.token_urlsafe(32)
        return request.state.new_csrf, True

    def html(self, request, body: str, status: int = 200):
        from starlette.responses import HTMLResponse

        response = HTMLResponse(body, status_code=status)
        csrf, new = self.csrf_of(request)
        if new:
            self.cookies.set(response, _CSRF_COOKIE, csrf)
        return response

    @staticmethod
    def assessor_of(request) -> str | None:
        raw = request.cookies.get(_NAME_COOKIE)
        if raw is None:
            return None
        name = unquote(raw)
        return name if len(name) <= MAX_NAME and _NAME.fullmatch(name) else None

    def need_assessor(self, request) -> str:
        name = self.assessor_of(request)
        if name is None:
            raise _Refused(403, "name yourself first: open / and give your name")
        return name

    def page_state(self, name: str):
        desk = self.desk
        item = desk.current(name)
        return (item, desk.progress(name), desk.last(name), item is None and desk.held_by_others(name))

    async def act(self, name: str, fn, *args):
        """Run a state change in the desk's thread, then keep the page state it leaves for the redirect."""
        def work():
            fn(*args)
            return self.page_state(name)
        self.views.pop(name, None)
        self.views[name] = await self.call(work)

    @staticmethod
    def see_index():
        from starlette.responses import RedirectResponse

        return RedirectResponse("/", status_code=303)

    # ------------------------------------------------------------- routes
    async def index(self, request):
        name = self.assessor_of(request)
        csrf, _ = self.csrf_of(request)
        desk = self.desk
        if name is None:
            return self.html(request, _page.login_page(desk.name, csrf))
        state = self.views.pop(name, None)
        item, progress, last, others = state if state is not None else await self.call(self.page_state, name)
        if item is None:
            return self.html(request, _page.done_page(campaign=desk.name, assessor=name, csrf=csrf,
                                                      progress=progress, last=last, held_elsewhere=others))
        return self.html(request, _page.item_page(campaign=desk.name, assessor=name, csrf=csrf, item=item,
                                                  topic=self.topics.get(item.topic), text=self.texts.get(item.docno),
                                                  grades=desk.grades, progress=progress, last=last,
                                                  names=desk.grade_names))

    async def login(self, request):
        fields = await read_form(request)
        name = _field(fields, "name")
        if len(name) > MAX_NAME or not _NAME.fullmatch(name):
            raise _Refused(400, f"name: 1 to {MAX_NAME} letters, digits, spaces or . @ ' - (starting with a "
                                "letter or digit)")
        await self.act(name, self.desk.next, name)
        response = self.see_index()
        self.cookies.set(response, _NAME_COOKIE, quote(name), max_age=30 * 24 * 3600)
        return response

    async def logout(self, request):
        await read_form(request)
        name = self.assessor_of(request)
        if name is not None:
            self.views.pop(name, None)
            await self.call(self.desk.release, name)
        response = self.see_index()
        response.delete_cookie(_NAME_COOKIE, path="/")
        return response

    async def next_doc(self, request):
        await read_form(request)
        name = self.need_assessor(request)
        await self.act(name, self.desk.next, name)
        return self.see_index()

    def _judge_and_next(self, name, topic, docno, grade):
        self.desk.judge(name, topic, docno, grade)  # committed to SQLite here
        self.desk.next(name)

    async def judge(self, request):
        fields = await read_form(request)
        name = self.need_assessor(request)
        raw = _field(fields, "grade")
        if not re.fullmatch(r"-?[0-9]{1,3}", raw):
            raise _Refused(400, f"field 'grade': expected one of {', '.join(map(str, self.desk.grades))}, "
                                f"got {raw[:8]!r}")
        await self.act(name, self._judge_and_next, name, _field(fields, "topic"), _field(fields, "docno"), int(raw))
        return self.see_index()

    def _skip_and_next(self, name, topic, docno):
        self.desk.skip(name, topic, docno)
        self.desk.next(name)

    async def skip(self, request):
        fields = await read_form(request)
        name = self.need_assessor(request)
        await self.act(name, self._skip_and_next, name, _field(fields, "topic"), _field(fields, "docno"))
        return self.see_index()

    async def undo(self, request):
        await read_form(request)
        name = self.need_assessor(request)
        undone = []
        await self.act(name, lambda: undone.append(self.desk.undo(name)))
        if undone[0] is None:
            raise _Refused(409, "nothing to undo: you have no recorded judgment")
        return self.see_index()

    async def progress(self, request):
        from starlette.responses import JSONResponse

        p = await self.call(self.desk.progress, self.assessor_of(request))
        return JSONResponse(p.to_dict())

    async def css(self, request):
        from starlette.responses import Response

        return Response(_page.CSS, media_type="text/css")

    async def js(self, request):
        from starlette.responses import Response

        return Response(_page.JS, media_type="text/javascript")


def create_app(campaign, *, texts: dict | None = None, topics: dict | None = None, token: str | None = None,
               allowed_hosts=LOOPBACK, lease_seconds: float = 600.0, secure_cookies: bool = False):
    """The Starlette application judging ``campaign`` (a campaign file path).

    Parameters
    ----------
    campaign : path-like
        An existing campaign file (``bayeval judge init``).
    texts : dict docno → str, optional
        Document texts (:func:`bayeval.io.sources.load_texts`); a document without text shows its docno.
    topics : dict topic → TopicStatement, optional
        Topic statements (:func:`bayeval.io.sources.load_topics`).
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
    SecurityMiddleware
        An ASGI application: the security checks around the Starlette application (reachable as ``.app``).
    """
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bayeval-desk")
    # the campaign's SQLite connection lives in the worker thread: every desk call runs there, one at a time
    desk: Desk = pool.submit(Desk, campaign, lease_seconds=lease_seconds).result()
    cookies = _Cookies(secure_cookies)
    routes = _Routes(campaign, desk, pool, {} if texts is None else texts, {} if topics is None else topics, cookies)

    async def on_refused(request, exc: _Refused):
        return _refused(exc.status, exc.message, request)

    async def on_input_error(request, exc: BayevalInputError):
        return _refused(409 if isinstance(exc, LeaseConflict) else 400, str(exc), request)

    async def on_http(request, exc):
        message = {404: "no such page", 405: "method not allowed here"}.get(exc.status_code, str(exc.detail))
        return _refused(exc.status_code, message, request)

    running = [0]  # lifespans open (a test may run two clients on one application): close after the last

    @contextlib.asynccontextmanager
    async def lifespan(app):
        running[0] += 1
        yield
        running[0] -= 1
        if running[0] == 0:
            pool.submit(desk.close).result()
            pool.shutdown(wait=True)

    app = Starlette(routes=routes.routes(), exception_handlers={_Refused: on_refused,
                                                                BayevalInputError: on_input_error,
                                                                HTTPException: on_http}, lifespan=lifespan)
    app.state.desk = desk
    app.state.call = routes.call
    hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
    return SecurityMiddleware(app, hosts=hosts, token=token, cookies=cookies)
