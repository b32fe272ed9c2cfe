"""docgen's public REST API (``/v1``): the same operations as the TypeScript SDK, in snake_case,
with the interface's JSON shapes as dicts (``{"templateId": ..., "variables": ...}``)."""

from __future__ import annotations

import time
import urllib.parse
import uuid
from datetime import datetime
from typing import Any, Dict, Iterator, Mapping, Optional, Union

from ._http import Answer, Http
from .errors import DocgenError, GenerationTimeoutError
from .webhooks import Webhooks

#: The longest ``Prefer: wait`` docgen honours.
MAX_WAIT_SECONDS = 30

Generation = Dict[str, Any]
Batch = Dict[str, Any]


class DocgenClient:
    """``DocgenClient(base_url="http://127.0.0.1:8080", api_key="svc_live_...")``.

    ``max_retries``: retries after a 429, 502, 503, 504 or no answer (default 3).
    ``timeout``: seconds one attempt may take (default 60; a waiting create gets its wait on
    top). ``max_retry_delay``: a Retry-After longer than this is not waited for (default 60 s).
    Retries are logged at INFO on the ``docgen_client`` logger.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = 3,
        timeout: float = 60.0,
        max_retry_delay: float = 60.0,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.lower().startswith(("http://", "https://")):
            raise TypeError("base_url must be an http(s) URL, e.g. http://127.0.0.1:8080")
        if not isinstance(api_key, str) or not api_key:
            raise TypeError("api_key must be the API key (svc_live_... or svc_test_...)")
        http = Http(base_url, api_key, max_retries=max_retries, timeout=timeout, max_retry_delay=max_retry_delay)
        self.generations = Generations(http)
        self.batches = Batches(http, self.generations)
        self.webhooks = Webhooks()


class Generations:
    """Generations of the API key's workspace: ``POST/GET /v1/generations``."""

    def __init__(self, http: Http) -> None:
        self._http = http

    def create(
        self, input: Mapping[str, Any], *, idempotency_key: Optional[str] = None, wait: Optional[int] = None
    ) -> Generation:
        """Creates a generation. ``wait`` (1 to 30 s): the server may hold the answer until it is final.

        Every call carries an Idempotency-Key (``idempotency_key`` or a fresh UUID, kept across
        its retries), so a retry never makes a second document.
        """
        headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        timeout = None
        if wait is not None:
            if isinstance(wait, bool) or not isinstance(wait, int) or wait < 0:
                raise ValueError(f"wait must be a whole number of seconds (0 to {MAX_WAIT_SECONDS}), not {wait!r}")
            if wait > 0:
                headers["Prefer"] = f"wait={wait}"
            timeout = self._http.timeout + min(wait, MAX_WAIT_SECONDS)
        _, body = self._http.call(
            "POST", "/v1/generations", body=dict(input), headers=headers, idempotent=True, timeout=timeout
        )
        return body

    def get(self, id: str) -> Generation:
        _require_id(id, "generation id")
        _, body = self._http.call("GET", f"/v1/generations/{urllib.parse.quote(id, safe='')}", idempotent=True)
        return body

    def list_page(
        self, filters: Optional[Mapping[str, Any]] = None, page_token: Optional[str] = None
    ) -> Dict[str, Any]:
        """One page: ``{"generations": [...], "nextPageToken": ... or None}``."""
        query = _list_query(filters or {})
        if page_token:
            query["pageToken"] = page_token
        _, body = self._http.call("GET", "/v1/generations", query=query, idempotent=True)
        return body

    def list(self, filters: Optional[Mapping[str, Any]] = None) -> Iterator[Generation]:
        """Every generation that matches, newest first, fetching page after page as iterated.

        ``filters`` use the interface's names: ``status``, ``templateId``, ``batchId``,
        ``createdAfter``/``createdBefore`` (RFC 3339 text or an aware ``datetime``), ``pageSize``.
        """
        token: Optional[str] = None
        while True:
            page = self.list_page(filters, token)
            yield from page["generations"]
            token = page.get("nextPageToken")
            if not token:
                return

    def create_and_wait(
        self,
        input: Mapping[str, Any],
        *,
        timeout: float = 30,
        idempotency_key: Optional[str] = None,
        poll_interval: float = 1.0,
    ) -> Generation:
        """Creates a generation and returns it once COMPLETED or FAILED (FAILED is returned, not raised).

        The server holds the create for up to 30 s (``Prefer: wait``); past that the generation
        is read every ``poll_interval`` seconds. Raises GenerationTimeoutError after ``timeout``.
        """
        deadline = time.monotonic() + timeout
        wait = max(0, min(MAX_WAIT_SECONDS, int(timeout)))
        generation = self.create(input, idempotency_key=idempotency_key or str(uuid.uuid4()), wait=wait)
        while generation["status"] not in ("COMPLETED", "FAILED"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise GenerationTimeoutError(generation, timeout)
            time.sleep(min(poll_interval, left))
            generation = self.get(generation["id"])
        return generation

    def download(self, id_or_generation: Union[str, Generation]) -> bytes:
        """The PDF's bytes. A generation dict whose outputUrl has expired (or that was read
        before it completed) is read again for a fresh URL."""
        fresh = isinstance(id_or_generation, str)
        generation = self.get(id_or_generation) if isinstance(id_or_generation, str) else id_or_generation
        if generation.get("status") != "COMPLETED" or not generation.get("outputUrl"):
            if not fresh:
                generation = self.get(generation["id"])
            fresh = True
            _require_completed(generation)
        answer = self._fetch_document(generation["outputUrl"])
        # 403/400 is how S3 answers an expired presigned URL: mint a new one by reading again.
        if not 200 <= answer.status < 300 and not fresh:
            generation = self.get(generation["id"])
            _require_completed(generation)
            answer = self._fetch_document(generation["outputUrl"])
        if not 200 <= answer.status < 300:
            text = answer.body[:200].decode("utf-8", "replace")
            raise DocgenError(
                answer.status,
                "DOWNLOAD_FAILED",
                f"Downloading the document of {generation['id']} failed: the object store answered {answer.status}"
                + (f": {text}" if text else ""),
            )
        return answer.body

    def _fetch_document(self, url: str) -> Answer:
        # The presigned URL carries its own authorization: no API key goes to the object store.
        return self._http.exchange("GET", url, {"User-Agent": "docgen-client-python"}, None, idempotent=True)


class Batches:
    """Many documents from one request: ``POST /v1/batches``, ``GET /v1/batches/{id}``."""

    def __init__(self, http: Http, generations: Generations) -> None:
        self._http = http
        self._generations = generations

    def create(self, input: Mapping[str, Any], *, idempotency_key: Optional[str] = None) -> Batch:
        """``{"items": [{"templateId", "variables"}, ...], "merge": False, "itemEvents": True}``:
        every item is created, or none (422 naming ``items[i]...``)."""
        _, body = self._http.call(
            "POST",
            "/v1/batches",
            body=dict(input),
            headers={"Idempotency-Key": idempotency_key or str(uuid.uuid4())},
            idempotent=True,
        )
        return body

    def get(self, id: str) -> Batch:
        _require_id(id, "batch id")
        _, body = self._http.call("GET", f"/v1/batches/{urllib.parse.quote(id, safe='')}", idempotent=True)
        return body

    def list_generations(self, batch_id: str, filters: Optional[Mapping[str, Any]] = None) -> Iterator[Generation]:
        """The batch's generations (its items), newest first, every page."""
        _require_id(batch_id, "batch id")
        return self._generations.list({**(filters or {}), "batchId": batch_id})


def _require_completed(generation: Generation) -> None:
    if generation.get("status") == "COMPLETED" and generation.get("outputUrl"):
        return
    if generation.get("status") == "FAILED":
        raise DocgenError(0, "GENERATION_FAILED", f"Generation {generation['id']} failed: {generation.get('error')}")
    raise DocgenError(
        0,
        "GENERATION_NOT_COMPLETED",
        f"Generation {generation['id']} is {generation.get('status')}: there is no document yet",
    )


def _require_id(value: Any, what: str) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a non-empty string")


def _list_query(filters: Mapping[str, Any]) -> Dict[str, str]:
    """Filters as query parameters; unknown ones go through too, so the server names a typo (422)."""
    query: Dict[str, str] = {}
    for name, value in filters.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            if value.tzinfo is None:
                raise ValueError(f"{name} must be a datetime with a time zone")
            value = value.isoformat()
        query[name] = str(value)
    return query
