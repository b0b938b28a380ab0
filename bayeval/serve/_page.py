"""HTML of the judging page, its stylesheet and its script. Every value from a file or a request is escaped here."""

from __future__ import annotations

from html import escape

from bayeval.serve.desk import GRADE_NAMES, Item, Progress

__all__ = ["CSS", "JS", "done_page", "error_page", "item_page", "login_page"]


def e(value) -> str:
    """Escape for HTML text and attribute values (quotes included)."""
    return escape(str(value), quote=True)


CSS = """
*,*::before,*::after{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa;overflow-wrap:anywhere}
header{display:flex;flex-wrap:wrap;gap:.4em 1.5em;align-items:center;padding:.5em 1em;background:#234;color:#fff}
header form{margin-left:auto}
main{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,2fr);gap:1em;padding:1em}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1em;min-width:0}
h2{margin-top:0}
.text{white-space:pre-wrap;line-height:1.45;max-height:60vh;overflow:auto}
.missing{color:#a33;font-style:italic}
.same-topic summary{cursor:pointer;color:#456}
.new-topic{border-left:4px solid #c80}
.actions{grid-column:1/-1;display:flex;gap:.5em;flex-wrap:wrap;align-items:center}
.actions form{display:flex;flex-wrap:wrap;gap:.5em;align-items:center}
button{font-size:1.05em;padding:.45em .9em;border-radius:4px;border:1px solid #888;background:#eee;cursor:pointer}
button.grade{background:#e8f0fe}
kbd{border:1px solid #999;border-radius:3px;padding:0 .3em;font-size:.85em;background:#fff}
table{border-collapse:collapse;width:100%}
td,th{padding:.2em .5em;border-bottom:1px solid #eee;text-align:left}
.progress{grid-column:1/-1;overflow-x:auto}
.decided{color:#175;font-weight:bold}
.error{color:#a33}
@media (max-width:720px){
main{grid-template-columns:minmax(0,1fr);padding:.5em;gap:.5em}
section{padding:.7em}
.text{max-height:none}
.actions{position:sticky;bottom:0;z-index:1;box-shadow:0 -2px 6px rgba(0,0,0,.12)}
button{padding:.5em .7em}
td,th{padding:.2em .3em}
}
"""

JS = """
(function () {
  "use strict";
  var busy = false;
  window.addEventListener("pageshow", function () { busy = false; });
  document.addEventListener("submit", function (ev) {
    if (busy) { ev.preventDefault(); return; }
    busy = true;
  }, true);
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.repeat) { return; }
    var t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) { return; }
    var buttons = document.querySelectorAll("button[data-key]");
    for (var k = 0; k < buttons.length; k++) {
      if (buttons[k].getAttribute("data-key") === ev.key) {
        ev.preventDefault();
        if (!busy) { buttons[k].click(); }
        return;
      }
    }
  });
})();
"""


def _shell(title: str, body: str, assessor: str | None = None, csrf: str = "", campaign: str = "") -> str:
    who = ""
    if assessor is not None:
        who = (f'<span>assessor <b id="assessor">{e(assessor)}</b></span>'
               f'<form method="post" action="/logout"><input type="hidden" name="csrf" value="{e(csrf)}">'
               '<button type="submit">change name</button></form>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(title)}</title><link rel=\"stylesheet\" href=\"/static/judge.css\">"
            "<script src=\"/static/judge.js\" defer></script></head><body>"
            f"<header><b>bayeval judge</b><span>{e(campaign)}</span>{who}</header>{body}</body></html>")


def login_page(campaign: str, csrf: str, message: str = "") -> str:
    msg = f'<p class="error">{e(message)}</p>' if message else ""
    body = ("<main><section><h2>Who is judging?</h2>" + msg +
            '<form method="post" action="/login"><input type="hidden" name="csrf" value="' + e(csrf) + '">'
            '<label>Your name <input name="name" maxlength="40" required autofocus></label> '
            '<button type="submit">Start judging</button></form>'
            "<p>Each document is given to one assessor at a time; every judgment is saved before the next "
            "document is shown.</p></section></main>")
    return _shell("bayeval judge", body, campaign=campaign)


def _progress(p: Progress) -> str:
    rows = []
    for a, b, expected, p_less, decided in p.pairs:
        state = '<span class="decided">decided</span>' if decided else "undecided"
        rows.append(f"<tr><td>{e(a)}</td><td>{e(b)}</td><td>{expected:+.4f}</td>"
                    f'<td><meter min="0" max="1" low="{1 - p.alpha:.3f}" high="{p.alpha:.3f}" '
                    f'value="{p_less:.4f}"></meter> <span class="p-less">{p_less:.3f}</span></td>'
                    f"<td>{state}</td></tr>")
    return ('<section class="progress"><h3>Progress: <span id="judged">' + str(p.judgments) +
            "</span> judgments (<span id=\"mine\">" + str(p.mine) + "</span> yours)" +
            ("; every pair decided" if p.done else "") + "</h3>"
            f"<table><tr><th>run a</th><th>run b</th><th>E[Δ{e(p.measure)}]</th><th>P(Δ{e(p.measure)} &lt; 0)"
            f"</th><th>at α = {p.alpha:g}</th></tr>" + "".join(rows) + "</table></section>")


def _last(last, csrf: str) -> str:
    if last is None:
        return ""
    topic, docno, grade = last
    return ('<form method="post" action="/undo"><input type="hidden" name="csrf" value="' + e(csrf) + '">'
            f"<span>last: topic {e(topic)}, {e(docno)} → {grade}</span> "
            '<button type="submit" data-key="u">undo <kbd>u</kbd></button></form>')


def item_page(*, campaign: str, assessor: str, csrf: str, item: Item, topic, text: str | None, grades,
              progress: Progress, last, names: dict | None = None) -> str:
    same = last is not None and last[0] == item.topic  # the statement was read for the last judgment
    if topic is None:
        topic_html = f'<p class="missing">No statement for topic {e(item.topic)} in the topics file.</p>'
    else:
        rest = ((f"<p><b>Description:</b> {e(topic.description)}</p>" if topic.description else "") +
                (f"<p><b>Narrative:</b> {e(topic.narrative)}</p>" if topic.narrative else ""))
        title = f'<p><b>Title:</b> <span id="title">{e(topic.title)}</span></p>'
        if same and rest:  # only the title; the statement one click away
            topic_html = (title + '<details id="statement"><summary>same topic as your last judgment: show the '
                          "statement</summary>" + rest + "</details>")
        else:
            topic_html = title + rest
    if text is None:
        doc_html = (f'<p class="missing" id="no-text">No text for document {e(item.docno)} in the texts file: '
                    "judge it from elsewhere, or skip it.</p>")
    else:
        doc_html = f'<div class="text" id="text">{e(text)}</div>'
    hidden = (f'<input type="hidden" name="csrf" value="{e(csrf)}"><input type="hidden" name="topic" '
              f'value="{e(item.topic)}"><input type="hidden" name="docno" value="{e(item.docno)}">')
    names = names or GRADE_NAMES
    buttons = "".join(f'<button class="grade" type="submit" name="grade" value="{g}" data-key="{g}">'
                      f"{e(names.get(g, f'grade {g}'))} <kbd>{g}</kbd></button>" for g in grades)
    pair = f" (moves {e(item.run_a)} vs {e(item.run_b)})" if item.run_a else ""
    body = ("<main>"
            f'<section class="{"same-topic" if same else "new-topic"}"><h2>Topic <span id="topic">{e(item.topic)}'
            f'</span>{"" if same or last is None else " <small>(new topic)</small>"}</h2>{topic_html}</section>'
            f'<section><h2>Document <span id="docno">{e(item.docno)}</span></h2>{doc_html}'
            f"<p><small>{pair}</small></p></section>"
            f'<section class="actions"><form method="post" action="/judge">{hidden}{buttons}</form>'
            f'<form method="post" action="/skip">{hidden}<button type="submit" data-key="s">skip <kbd>s</kbd>'
            f"</button></form>{_last(last, csrf)}</section>"
            f"{_progress(progress)}</main>")
    return _shell(f"topic {item.topic}, {item.docno}", body, assessor, csrf, campaign)


def done_page(*, campaign: str, assessor: str, csrf: str, progress: Progress, last, held_elsewhere: bool) -> str:
    if progress.done:
        why = "Every target pair is decided: nothing is left to judge."
    elif progress.exhausted:
        why = "No unjudged document can change an undecided pair any more."
    else:
        why = ("No document is open for you." + (" The remaining ones are held by other assessors or skipped by you."
                                                 if held_elsewhere else ""))
    body = ("<main><section class=\"actions\"><p id=\"state\">" + e(why) + "</p>"
            '<form method="post" action="/next"><input type="hidden" name="csrf" value="' + e(csrf) + '">'
            '<button type="submit" data-key="Enter" id="next">next document <kbd>Enter</kbd></button></form>'
            f"{_last(last, csrf)}</section>{_progress(progress)}</main>")
    return _shell("bayeval judge", body, assessor, csrf, campaign)


def error_page(status: int, message: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>error</title>"
            "<link rel=\"stylesheet\" href=\"/static/judge.css\"></head><body><main><section>"
            f"<h2>{status}</h2><p class=\"error\" id=\"error\">{e(message)}</p><p><a href=\"/\">back to judging</a>"
            "</p></section></main></body></html>")
