"""webhooks.verify without a server: header forms, the tolerance window both ways, malformed input.

(A real delivery, a tampered body, a wrong secret and a replay are checked in test_live.py.)
"""

import base64
import hashlib
import hmac
import json
import time
import unittest
from email.message import Message

from docgen_client import DocgenClient, WebhookVerificationError, verify_webhook

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
EVENT = {"event": "generation.failed", "payload": {"generationId": "gen_0123456789abcdef01234567", "error": "x"}}
BODY = json.dumps({**EVENT, "timestamp": 1}).encode()


def signed(body: bytes = BODY, timestamp: int = 0, secret: str = SECRET) -> dict:
    timestamp = timestamp or int(time.time())
    key = base64.b64decode(secret[len("whsec_") :])
    mac = hmac.new(key, f"dlv_1.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": "dlv_1",
        "webhook-timestamp": str(timestamp),
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
        "X-Service-Signature": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest(),
    }


class VerifyTest(unittest.TestCase):
    def test_accepts_dicts_messages_and_pairs_with_any_header_case(self) -> None:
        headers = signed()
        self.assertEqual(verify_webhook(BODY, headers, SECRET)["event"], "generation.failed")
        upper = {k.upper(): v for k, v in headers.items()}
        client = DocgenClient(base_url="http://x", api_key="k")
        self.assertEqual(client.webhooks.verify(BODY, upper, SECRET)["payload"]["error"], "x")
        message = Message()
        for k, v in headers.items():
            message[k] = v
        self.assertEqual(verify_webhook(BODY.decode(), message, SECRET)["timestamp"], 1)
        self.assertEqual(verify_webhook(bytearray(BODY), list(headers.items()), SECRET)["timestamp"], 1)

    def test_a_previous_secret_listed_after_a_rotation_still_verifies(self) -> None:
        old = "whsec_" + base64.b64encode(b"an older secret, 32 bytes long!!").decode()
        headers = signed()
        by_old = signed(secret=old, timestamp=int(headers["webhook-timestamp"]))["webhook-signature"]
        headers["webhook-signature"] += " " + by_old
        self.assertEqual(verify_webhook(BODY, headers, old)["event"], "generation.failed")

    def test_tolerance_window(self) -> None:
        now = time.time()
        self.assertTrue(verify_webhook(BODY, signed(timestamp=int(now) - 290), SECRET))
        with self.assertRaisesRegex(WebhookVerificationError, "old or replayed"):
            verify_webhook(BODY, signed(timestamp=int(now) - 400), SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "in the future"):
            verify_webhook(BODY, signed(timestamp=int(now) + 400), SECRET)
        self.assertTrue(verify_webhook(BODY, signed(timestamp=int(now) - 400), SECRET, tolerance=600))
        self.assertTrue(verify_webhook(BODY, signed(timestamp=int(now) - 4000), SECRET, tolerance=None))
        with self.assertRaisesRegex(WebhookVerificationError, "old or replayed"):
            verify_webhook(BODY, signed(timestamp=int(now)), SECRET, now=now + 301)

    def test_refuses_incomplete_or_malformed_headers_and_secrets(self) -> None:
        headers = signed()
        for missing in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            partial = {k: v for k, v in headers.items() if k != missing}
            with self.assertRaisesRegex(WebhookVerificationError, "must come together"):
                verify_webhook(BODY, partial, SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "not Unix seconds"):
            verify_webhook(BODY, {**headers, "webhook-timestamp": "soon"}, SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "no signature"):
            verify_webhook(BODY, {}, SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "secret is empty"):
            verify_webhook(BODY, headers, "")
        with self.assertRaisesRegex(WebhookVerificationError, "does not match"):
            verify_webhook(BODY, {**headers, "webhook-signature": "v1,"}, SECRET)

    def test_x_service_signature_alone_needs_the_timestamp_check_off(self) -> None:
        only = {"x-service-signature": signed()["X-Service-Signature"]}
        with self.assertRaisesRegex(WebhookVerificationError, "no webhook-timestamp"):
            verify_webhook(BODY, only, SECRET)
        self.assertEqual(verify_webhook(BODY, only, SECRET, tolerance=None)["event"], "generation.failed")
        with self.assertRaisesRegex(WebhookVerificationError, "X-Service-Signature does not match"):
            verify_webhook(BODY + b" ", only, SECRET, tolerance=None)

    def test_a_signed_body_that_is_not_an_event_is_refused(self) -> None:
        with self.assertRaisesRegex(WebhookVerificationError, "not JSON"):
            verify_webhook(b"not json", signed(b"not json"), SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "not a docgen event"):
            verify_webhook(b"[1]", signed(b"[1]"), SECRET)


if __name__ == "__main__":
    unittest.main()
