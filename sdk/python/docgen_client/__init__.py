"""docgen_client: docgen's public API from Python, with the standard library only.

    from docgen_client import DocgenClient
    client = DocgenClient(base_url="http://127.0.0.1:8080", api_key="svc_live_...")
    generation = client.generations.create_and_wait({"templateId": "tpl_...", "variables": {}})
"""

from ._http import VERSION as __version__
from .client import MAX_WAIT_SECONDS, Batches, DocgenClient, Generations
from .errors import DocgenError, GenerationTimeoutError, WebhookVerificationError
from .webhooks import DEFAULT_TOLERANCE_SECONDS, Webhooks, verify_webhook

__all__ = [
    "DEFAULT_TOLERANCE_SECONDS",
    "MAX_WAIT_SECONDS",
    "Batches",
    "DocgenClient",
    "DocgenError",
    "GenerationTimeoutError",
    "Generations",
    "WebhookVerificationError",
    "Webhooks",
    "__version__",
    "verify_webhook",
]
