"""The live Illustrated Transformer: a small web app on 127.0.0.1 (the standard library's
`http.server`, nothing to install) serving one page and one question.

    server = ExplainServer(translator, "runs/toy-en-es (best)", port=0)
    print(server.address)          # http://127.0.0.1:PORT/
    server.serve_forever()

- `GET /`: the page (`explain_page.page_html`; its script and style inlined, nothing else
  fetched);
- `POST /explain` with {"sentence": str, "beam": int, "length_penalty": float} (the last two
  optional: the app's own options): `explain()`'s JSON (docs/illustrated/data.md), or 400
  with {"error": one line} for a request it cannot answer (a blank or too long sentence, a
  beam below 1, ...).

The model answers one question at a time (a lock): its forward pass is recorded as it runs.
The app answers only requests addressed to 127.0.0.1 or localhost (another name in the Host
header, as a web page on another site might send by DNS rebinding, gets 403), and a question
only as JSON (a plain form posted by another site's page gets 415)."""

from __future__ import annotations

import json
import math
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..cli import one_line
from ..translator import Translator
from .explain_page import page_html, script_json
from .explanation import explain

HOST = "127.0.0.1"  # the reader's own machine only
LARGEST_REQUEST = 64 * 1024  # bytes of a POST body: a sentence and two numbers


class RequestError(ValueError):
    """A question the app cannot answer (HTTP 400), in one line."""


class ExplainServer(ThreadingHTTPServer):
    """The app for `translator`, listening on 127.0.0.1:`port` (0: a free one); `origin`
    names the model on the page; `beam` and `length_penalty` are the decoding options a
    request that gives none gets."""

    daemon_threads = True

    def __init__(self, translator: Translator, origin: str, port: int = 0, beam: int = 1,
                 length_penalty: float = 0.6) -> None:
        self.translator, self.beam, self.length_penalty = translator, beam, length_penalty
        self.page = page_html(origin, beam, length_penalty).encode("utf-8")
        self.model_lock = threading.Lock()
        super().__init__((HOST, port), ExplainHandler)

    @property
    def address(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    def answer(self, request: Any) -> dict[str, Any]:
        """explain()'s dict for a parsed POST /explain body; RequestError (or explain()'s
        ValueError: a sentence the model cannot read) says what is wrong with it."""
        sentence, beam, length_penalty = checked_request(request, self.beam,
                                                         self.length_penalty)
        with self.model_lock:
            return explain(self.translator, sentence, beam=beam, length_penalty=length_penalty)


def checked_request(request: Any, beam: int, length_penalty: float) -> tuple[str, int, float]:
    """(sentence, beam, length_penalty) of a POST /explain body, the defaults where it gives
    none; RequestError naming the field and what it takes."""
    fields = {"sentence", "beam", "length_penalty"}
    if not isinstance(request, dict):
        raise RequestError('the request is not a JSON object; send {"sentence": "...", '
                           '"beam": 1, "length_penalty": 0.6}')
    if unknown := sorted(set(request) - fields):
        raise RequestError(f"unknown field(s) {', '.join(unknown)}; the request takes "
                           f"{', '.join(sorted(fields))}")
    sentence = request.get("sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        raise RequestError("sentence is missing or blank; type a sentence to explain")
    given_beam = request.get("beam", beam)
    if isinstance(given_beam, float) and given_beam.is_integer():  # JSON's 2.0
        given_beam = int(given_beam)
    if isinstance(given_beam, bool) or not isinstance(given_beam, int) or given_beam < 1:
        raise RequestError(f"beam {given_beam!r} is not a positive integer (1 is greedy "
                           "decoding)")
    alpha = request.get("length_penalty", length_penalty)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
            or not 0 <= alpha < math.inf:
        raise RequestError(f"length_penalty {alpha!r} is not a number >= 0 (0 turns it off)")
    return sentence.strip(), given_beam, float(alpha)


class ExplainHandler(BaseHTTPRequestHandler):
    server: ExplainServer
    server_version = "explain"

    def do_GET(self) -> None:
        if not self.addressed_here():
            return
        if self.path in ("/", "/index.html"):
            self.send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif self.path == "/favicon.ico":
            self.send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        else:
            self.refuse(HTTPStatus.NOT_FOUND, f"{self.path} is not here; the page is /")

    def do_POST(self) -> None:
        if not self.addressed_here():
            return
        if self.path != "/explain":
            self.refuse(HTTPStatus.NOT_FOUND, f"{self.path} is not here; POST to /explain")
            return
        kind = self.headers.get("Content-Type", "").split(";")[0].strip()
        if kind != "application/json":
            self.refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"the request is {kind or 'untyped'};"
                        " send JSON (Content-Type: application/json)")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > LARGEST_REQUEST:
            self.refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the request has {length} bytes;"
                       f" the app reads at most {LARGEST_REQUEST}")
            return
        try:
            request = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            self.refuse(HTTPStatus.BAD_REQUEST, f"the request is not JSON ({error}); send "
                       '{"sentence": "...", "beam": 1, "length_penalty": 0.6}')
            return
        try:
            answer = self.server.answer(request)
        except ValueError as error:  # RequestError, or explain()'s own word on the input
            self.refuse(HTTPStatus.BAD_REQUEST, one_line(error))
            return
        except Exception as error:  # a failure of the app: one line here, the trace there
            traceback.print_exc()
            self.refuse(HTTPStatus.INTERNAL_SERVER_ERROR, f"the app failed: {one_line(error)} "
                        "(the terminal running it shows the traceback)")
            return
        self.send(HTTPStatus.OK, script_json(answer).encode("utf-8"), "application/json")

    def addressed_here(self) -> bool:
        """Whether the request names this machine in its Host header; else answered 403."""
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host in (HOST, "localhost"):
            return True
        self.refuse(HTTPStatus.FORBIDDEN, f"the app answers requests to {HOST} or localhost, "
                    f"not to {host or 'no host'}")
        return False

    def refuse(self, status: HTTPStatus, message: str) -> None:
        self.send(status, json.dumps({"error": message}).encode("utf-8"), "application/json")

    def send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the address and errors, not every request."""
