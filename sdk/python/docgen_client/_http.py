"""One HTTP exchange with docgen, retried where that is safe.

Retried: 429, 502, 503 and 504 answers, and no answer at all (refused, reset, timed out). A
retry waits what Retry-After says, else an exponential back-off with jitter. Only idempotent
requests are retried: reads, and creates that carry an Idempotency-Key (the client always
sends one), so a retry never makes a second document.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple

from .errors import DocgenError

logger = logging.getLogger("docgen_client")

VERSION = "0.1.0"
RETRY_STATUSES = frozenset({429, 502, 503, 504})
_BACKOFF_BASE = 0.5
_BACKOFF_MAX = 8.0


class Answer:
    """Status, headers and body bytes of one HTTP answer."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> Optional[str]:
        return self.headers.get(name.lower())


class Http:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int,
        timeout: float,
        max_retry_delay: float,
    ) -> None:
        self.base = base_url.rstrip("/")
        if self.base.endswith("/v1"):
            self.base = self.base[: -len("/v1")]
        self.api_key = api_key
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_retry_delay = max_retry_delay
        self._opener = urllib.request.build_opener()

    def call(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, str]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotent: bool,
        timeout: Optional[float] = None,
    ) -> Tuple[Answer, Any]:
        """A JSON call to docgen; an answer other than 2xx is raised as a DocgenError."""
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        sent: Dict[str, str] = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": f"docgen-client-python/{VERSION}",
        }
        sent.update(headers or {})
        data = None
        if body is not None:
            sent["Content-Type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        answer = self.exchange(method, url, sent, data, idempotent=idempotent, timeout=timeout)
        if 200 <= answer.status < 300:
            return answer, (json.loads(answer.body.decode("utf-8")) if answer.body else None)
        raise error_from_answer(answer)

    def exchange(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        data: Optional[bytes],
        *,
        idempotent: bool,
        timeout: Optional[float] = None,
    ) -> Answer:
        """Sends with retries; returns the last answer (a 429/5xx too, once the retries are spent)."""
        attempt = 0
        while True:
            retries_left = idempotent and attempt < self.max_retries
            try:
                answer = self._attempt(method, url, headers, data, timeout or self.timeout)
            except (OSError, http.client.HTTPException) as err:  # URLError, resets, time-outs are OSErrors
                timed_out = isinstance(err, socket.timeout) or isinstance(
                    getattr(err, "reason", None), socket.timeout
                )
                if not retries_left:
                    path = urllib.parse.urlsplit(url).path
                    raise DocgenError(
                        0,
                        "TIMEOUT" if timed_out else "CONNECTION_ERROR",
                        f"{method} {path}: {'no answer in time' if timed_out else _describe(err)}",
                    ) from err
                delay = _backoff(attempt)
                logger.info(
                    "docgen_client: no answer to %s %s (%s); retrying in %.1f s (retry %d of %d)",
                    method,
                    urllib.parse.urlsplit(url).path,
                    _describe(err),
                    delay,
                    attempt + 1,
                    self.max_retries,
                )
                time.sleep(delay)
                attempt += 1
                continue
            if answer.status not in RETRY_STATUSES or not retries_left:
                return answer
            retry_after = parse_retry_after(answer.header("retry-after"))
            if retry_after is not None and retry_after > self.max_retry_delay:
                return answer
            delay = retry_after if retry_after is not None else _backoff(attempt)
            logger.info(
                "docgen_client: %s %s answered %d; retrying in %.1f s (retry %d of %d)",
                method,
                urllib.parse.urlsplit(url).path,
                answer.status,
                delay,
                attempt + 1,
                self.max_retries,
            )
            time.sleep(delay)
            attempt += 1

    def _attempt(
        self, method: str, url: str, headers: Mapping[str, str], data: Optional[bytes], timeout: float
    ) -> Answer:
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
        try:
            with self._opener.open(request, timeout=timeout) as res:
                return Answer(res.status, _lower(res.headers), res.read())
        except urllib.error.HTTPError as err:
            try:
                body = err.read()
            finally:
                err.close()
            return Answer(err.code, _lower(err.headers), body)


def error_from_answer(answer: Answer) -> DocgenError:
    """docgen's error body ``{"error": {"code", "message", "details"}}``, or the bare status."""
    error: Dict[str, Any] = {}
    try:
        parsed = json.loads(answer.body.decode("utf-8"))
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            error = parsed["error"]
    except (ValueError, UnicodeDecodeError):
        pass
    retry_after = parse_retry_after(answer.header("retry-after"))
    code = error.get("code") if isinstance(error.get("code"), str) else f"HTTP_{answer.status}"
    message = error.get("message")
    if not isinstance(message, str):
        text = answer.body[:200].decode("utf-8", "replace")
        message = f"HTTP {answer.status}" + (f": {text}" if text else "")
    details = error.get("details") if isinstance(error.get("details"), list) else []
    return DocgenError(
        answer.status,
        code,
        message,
        request_id=answer.header("x-request-id"),
        retry_after=None if retry_after is None else int(-(-retry_after // 1)),
        details=details,
    )


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After as whole seconds or an HTTP date, in seconds; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _backoff(attempt: int) -> float:
    """0.5 s, 1 s, 2 s ... up to 8 s, each between half and all of it."""
    ceiling = min(_BACKOFF_MAX, _BACKOFF_BASE * 2**attempt)
    return ceiling / 2 + random.random() * ceiling / 2


def _lower(headers: Any) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _describe(err: BaseException) -> str:
    reason = getattr(err, "reason", None)
    return str(reason if reason is not None else err) or type(err).__name__
