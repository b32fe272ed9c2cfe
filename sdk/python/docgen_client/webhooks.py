"""Verifying a webhook delivery (docs/webhooks.md in the docgen repository).

docgen signs each request twice:

- Standard Webhooks: ``webhook-signature`` holds ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``
  entries keyed with the base64-decoded part of the secret after ``whsec_``, and
  ``webhook-timestamp`` is the attempt's time, so an old (replayed) request is refused. After a
  secret rotation the previous secret signs too for 24 h.
- ``X-Service-Signature``: ``sha256=`` + hex HMAC-SHA256 of the body keyed with the whole
  secret string; it carries no time.

The Standard Webhooks headers are checked when present (docgen always sends them). A request
with only X-Service-Signature is accepted only when the timestamp check is turned off
(``tolerance=None``): otherwise stripping the timestamped headers would get a replay past it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, Mapping, NoReturn, Optional, Tuple, Union

from .errors import WebhookVerificationError

DEFAULT_TOLERANCE_SECONDS = 300
_SECRET_PREFIX = "whsec_"

Headers = Union[Mapping[str, Any], Iterable[Tuple[str, str]]]


def verify_webhook(
    raw_body: Union[bytes, bytearray, str],
    headers: Headers,
    secret: str,
    *,
    tolerance: Optional[int] = DEFAULT_TOLERANCE_SECONDS,
    now: Union[float, datetime, None] = None,
) -> Dict[str, Any]:
    """Checks a delivery's signature (timing-safe) and age; returns its parsed body.

    ``headers``: a dict, ``email.message.Message`` (http.server), a framework's headers or
    ``(name, value)`` pairs; names are matched case-insensitively. ``tolerance``: largest
    difference in seconds between ``webhook-timestamp`` and ``now``; ``None`` turns the check
    off and also accepts a request that carries X-Service-Signature alone.
    """
    if not isinstance(secret, str) or not secret:
        _fail("the signing secret is empty")
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else bytes(raw_body)
    header = _header_reader(headers)
    message_id = header("webhook-id")
    timestamp = header("webhook-timestamp")
    signature = header("webhook-signature")
    service_signature = header("x-service-signature")

    if message_id is not None or timestamp is not None or signature is not None:
        if message_id is None or timestamp is None or signature is None:
            _fail("webhook-id, webhook-timestamp and webhook-signature must come together")
        if not re.fullmatch(r"\d{1,15}", timestamp):
            _fail("webhook-timestamp is not Unix seconds")
        if tolerance is not None:
            current = now.timestamp() if isinstance(now, datetime) else (time.time() if now is None else now)
            age = int(current) - int(timestamp)
            if abs(age) > tolerance:
                if age > 0:
                    _fail(
                        f"webhook-timestamp is {age} s old, more than the {tolerance} s allowed: "
                        "an old or replayed request"
                    )
                _fail(f"webhook-timestamp is {-age} s in the future, more than the {tolerance} s allowed")
        encoded = secret[len(_SECRET_PREFIX) :] if secret.startswith(_SECRET_PREFIX) else secret
        try:
            key = base64.b64decode(encoded)
        except (binascii.Error, ValueError):
            key = b""
        if not key:
            _fail("the signing secret is not a whsec_... secret")
        mac = hmac.new(key, f"{message_id}.{timestamp}.".encode("utf-8") + body, hashlib.sha256)
        expected = "v1," + base64.b64encode(mac.digest()).decode("ascii")
        # Every entry is compared (no early exit), so timing tells nothing about which matched.
        matched = False
        for entry in signature.split(" "):
            if entry and hmac.compare_digest(entry.encode("utf-8"), expected.encode("utf-8")):
                matched = True
        if not matched:
            _fail("webhook-signature does not match: a wrong secret or an altered body")
    elif service_signature is not None:
        if tolerance is not None:
            _fail(
                "the request has no webhook-timestamp, so its age cannot be checked "
                "(pass tolerance=None to accept X-Service-Signature alone)"
            )
        expected = "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(service_signature.encode("utf-8"), expected.encode("utf-8")):
            _fail("X-Service-Signature does not match: a wrong secret or an altered body")
    else:
        _fail("the request carries no signature (webhook-signature or X-Service-Signature)")

    try:
        event = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        _fail("the signed body is not JSON")
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        _fail("the signed body is not a docgen event")
    return event


class Webhooks:
    """``client.webhooks``: ``verify`` is :func:`verify_webhook`."""

    verify = staticmethod(verify_webhook)


def _header_reader(headers: Headers) -> Callable[[str], Optional[str]]:
    pairs = headers.items() if hasattr(headers, "items") else headers  # type: ignore[union-attr]
    items: Iterable[Tuple[str, Any]] = pairs
    lower: Dict[str, str] = {}
    for name, value in items:
        if value is None:
            continue
        text = value if isinstance(value, str) else ", ".join(value)
        lower.setdefault(str(name).lower(), text)
    return lower.get


def _fail(reason: str) -> NoReturn:
    raise WebhookVerificationError(f"Webhook verification failed: {reason}")
