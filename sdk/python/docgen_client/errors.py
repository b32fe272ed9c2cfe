"""The errors the client raises (the same as the TypeScript SDK's, in snake_case)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class DocgenError(Exception):
    """Every failed call.

    ``status`` is the HTTP status (0 when no answer came: ``CONNECTION_ERROR``, ``TIMEOUT``);
    ``code`` is docgen's error code (``NOT_FOUND``, ``RATE_LIMITED``, ...) or one of this
    client's own (``CONNECTION_ERROR``, ``TIMEOUT``, ``GENERATION_FAILED``,
    ``GENERATION_NOT_COMPLETED``, ``DOWNLOAD_FAILED``, ``HTTP_<status>`` for an answer that is
    not docgen's error body).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        request_id: Optional[str] = None,
        retry_after: Optional[int] = None,
        details: Optional[List[Dict[str, str]]] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        #: The answer's X-Request-Id: quote it when reporting a problem.
        self.request_id = request_id
        #: Seconds the server asked to wait (Retry-After), on 429 and 503.
        self.retry_after = retry_after
        #: The fields a 422 found wrong: ``[{"field": ..., "issue": ...}]``.
        self.details: List[Dict[str, str]] = details or []

    def __repr__(self) -> str:
        return f"DocgenError(status={self.status}, code={self.code!r}, message={self.message!r})"


class GenerationTimeoutError(DocgenError):
    """``create_and_wait`` ran out of time; ``generation`` is the last state read."""

    def __init__(self, generation: Dict[str, Any], timeout: float) -> None:
        super().__init__(
            0,
            "TIMEOUT",
            f"Generation {generation['id']} is still {generation['status']} after {timeout:g} s",
        )
        self.generation = generation


class WebhookVerificationError(Exception):
    """A webhook request whose signature or timestamp does not check out: do not trust its body."""
