"""The Python client against a running docgen.

The stack and its fixture (keys, templates, a real webhook delivery, a proxy that cuts the
first attempt of each create) come from test/e2e/sdk.test.ts in the docgen repository, which
runs this suite with DOCGEN_SDK_FIXTURE naming a JSON file: run it with
``npx vitest run test/e2e/sdk.test.ts``. Without the fixture these tests are skipped.
"""

import base64
import hashlib
import hmac
import json
import os
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from docgen_client import DocgenClient, DocgenError, GenerationTimeoutError, WebhookVerificationError



def load_fixture():  # type: ignore[no-untyped-def]
    path = os.environ.get("DOCGEN_SDK_FIXTURE")
    if not path:
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


FIXTURE = load_fixture()


def pdf_text(data: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
        f.write(data)
        f.flush()
        command = ["pdftotext", "-enc", "UTF-8", f.name, "-"]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout


@unittest.skipIf(FIXTURE is None, "needs DOCGEN_SDK_FIXTURE (run test/e2e/sdk.test.ts)")
class LiveTest(unittest.TestCase):
    fx: dict

    @classmethod
    def setUpClass(cls) -> None:
        cls.fx = FIXTURE or {}

    def client(self, key: str = "main", base_url: str = "", **options) -> DocgenClient:
        return DocgenClient(base_url=base_url or self.fx["baseUrl"], api_key=self.fx["keys"][key], **options)

    def count(self, key: str) -> int:
        return sum(1 for _ in self.client(key).generations.list({"pageSize": 100}))

    def test_create_and_wait_completed_then_download(self) -> None:
        client = self.client()
        generation = client.generations.create_and_wait(
            {"templateId": self.fx["templates"]["greeting"], "variables": {"name": "Python client"}}, timeout=30
        )
        self.assertEqual(generation["status"], "COMPLETED")
        self.assertEqual(len(generation), 11)
        self.assertIn("Hello Python client", pdf_text(client.generations.download(generation)))
        self.assertIn("Hello Python client", pdf_text(client.generations.download(generation["id"])))

    def test_a_test_key_gets_a_stamped_pdf_that_the_live_key_cannot_read(self) -> None:
        tester = self.client("test")
        generation = tester.generations.create_and_wait(
            {"templateId": self.fx["templates"]["greeting"], "variables": {"name": "Python test mode"}}, timeout=30
        )
        self.assertEqual(generation["status"], "COMPLETED")
        text = pdf_text(tester.generations.download(generation))
        self.assertIn("Hello Python test mode", text)
        self.assertRegex(text, r"\bTEST\b")
        with self.assertRaises(DocgenError) as caught:
            self.client().generations.get(generation["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "NOT_FOUND"))

    def test_create_and_wait_failed(self) -> None:
        client = self.client()
        generation = client.generations.create_and_wait({"templateId": self.fx["templates"]["missingVariable"]})
        self.assertEqual(generation["status"], "FAILED")
        self.assertIn("customer", generation["error"])
        with self.assertRaises(DocgenError) as caught:
            client.generations.download(generation)
        self.assertEqual(caught.exception.code, "GENERATION_FAILED")

    def test_create_and_wait_times_out_with_the_last_state(self) -> None:
        started = time.monotonic()
        with self.assertRaises(GenerationTimeoutError) as caught:
            self.client().generations.create_and_wait({"templateId": self.fx["templates"]["slow"]}, timeout=2.5)
        self.assertGreaterEqual(time.monotonic() - started, 2.4)
        self.assertIn(caught.exception.generation["status"], ("PENDING", "PROCESSING"))
        self.assertEqual(caught.exception.code, "TIMEOUT")

    def test_create_with_wait_and_the_same_idempotency_key(self) -> None:
        client = self.client()
        body = {"templateId": self.fx["templates"]["greeting"], "variables": {"name": "py"}}
        first = client.generations.create(body, idempotency_key="py-1", wait=20)
        self.assertEqual(first["status"], "COMPLETED")
        again = client.generations.create(body, idempotency_key="py-1")
        self.assertEqual(again["id"], first["id"])

    def test_list_iterates_every_page(self) -> None:
        many = self.client("many")
        for filters in ({}, {"pageSize": 100}, {"status": "FAILED", "createdAfter": "1970-01-01T00:00:00Z"}):
            ids = [g["id"] for g in many.generations.list(filters)]
            self.assertEqual(len(ids), len(self.fx["manyIds"]), filters)
            self.assertEqual(set(ids), set(self.fx["manyIds"]))
        with self.assertRaises(DocgenError) as caught:
            next(many.generations.list({"templateid": "typo"}))
        self.assertEqual(caught.exception.status, 422)

    def test_download_after_the_output_url_expired(self) -> None:
        short = self.client(base_url=self.fx["shortTtlUrl"])
        generation = short.generations.get(self.fx["completedId"])
        time.sleep(4)
        with self.assertRaises(urllib.error.HTTPError) as stale:
            urllib.request.urlopen(generation["outputUrl"])
        self.assertEqual(stale.exception.code, 403)
        stale.exception.close()
        self.assertIn("Hello Webhook", pdf_text(short.generations.download(generation)))

    def test_a_429_is_retried_and_each_create_makes_one_generation(self) -> None:
        before = self.count("limitedReader")
        limited = self.client("limited")
        with self.assertLogs("docgen_client", level="INFO") as logs:
            first = limited.generations.create({"templateId": self.fx["limitedTemplate"]})
            second = limited.generations.create({"templateId": self.fx["limitedTemplate"]})
        self.assertNotEqual(first["id"], second["id"])
        self.assertTrue(any("answered 429" in line for line in logs.output), logs.output)
        self.assertEqual(self.count("limitedReader"), before + 2)

        impatient = self.client("limited", max_retries=0)
        try:
            impatient.generations.create({"templateId": self.fx["limitedTemplate"]})
        except DocgenError:
            pass
        with self.assertRaises(DocgenError) as caught:
            impatient.generations.create({"templateId": self.fx["limitedTemplate"]})
        self.assertEqual((caught.exception.status, caught.exception.code), (429, "RATE_LIMITED"))
        self.assertGreaterEqual(caught.exception.retry_after or 0, 1)
        self.assertTrue(caught.exception.request_id)

    def test_a_lost_connection_is_retried_with_the_same_key_one_generation(self) -> None:
        before = self.count("proxied")
        via_proxy = self.client("proxied", base_url=self.fx["proxyUrl"])
        with self.assertLogs("docgen_client", level="INFO") as logs:
            generation = via_proxy.generations.create(
                {"templateId": self.fx["proxiedTemplate"], "variables": {"name": "py"}}
            )
        self.assertTrue(any("no answer" in line for line in logs.output), logs.output)
        self.assertEqual(self.count("proxied"), before + 1)
        self.assertEqual(generation["templateId"], self.fx["proxiedTemplate"])

    def test_typed_errors(self) -> None:
        base = self.fx["baseUrl"]
        unknown_key = "svc_live_" + "A" * 40
        missing = "gen_0123456789abcdef01234567"
        greeting = {"templateId": self.fx["templates"]["greeting"]}
        cases = [
            (lambda: DocgenClient(base_url=base, api_key=unknown_key).generations.get(missing), 401, "API_KEY_INVALID"),
            (lambda: DocgenClient(base_url=base, api_key="nope").generations.get(missing), 401, "UNAUTHORIZED"),
            (lambda: self.client("readOnly").generations.create(greeting), 403, "FORBIDDEN"),
            (lambda: self.client().generations.get(missing), 404, "NOT_FOUND"),
            (lambda: self.client().generations.create({"templateId": ""}), 422, "VALIDATION_ERROR"),
        ]
        for call, status, code in cases:
            with self.assertRaises(DocgenError) as caught:
                call()
            self.assertEqual((caught.exception.status, caught.exception.code), (status, code))
            self.assertTrue(caught.exception.message)
            self.assertRegex(caught.exception.request_id or "", r"^[0-9a-f-]{36}$")
        with self.assertRaises(DocgenError) as caught:
            self.client().generations.create({"templateId": ""})
        self.assertEqual(caught.exception.details, [{"field": "templateId", "issue": "must be at least 1 character"}])
        with self.assertRaises(TypeError):
            self.client().generations.get("")

    def test_webhook_verify_real_delivery_and_refusals(self) -> None:
        delivery = self.fx["delivery"]
        body, headers, secret = delivery["body"].encode(), delivery["headers"], delivery["secret"]
        webhooks = self.client().webhooks
        event = webhooks.verify(body, headers, secret)
        self.assertEqual(event["event"], "generation.completed")
        self.assertEqual(event["payload"]["generationId"], delivery["generationId"])

        tampered = body.replace(delivery["generationId"].encode(), b"gen_0123456789abcdef01234567")
        with self.assertRaisesRegex(WebhookVerificationError, "does not match"):
            webhooks.verify(tampered, headers, secret)
        wrong = "whsec_" + base64.b64encode(b"another endpoint secret 32 bytes").decode()
        with self.assertRaisesRegex(WebhookVerificationError, "does not match"):
            webhooks.verify(body, headers, wrong)

        # Correctly signed, but 10 minutes old: a replay.
        old = int(time.time()) - 600
        key = base64.b64decode(secret[len("whsec_") :])
        mac = hmac.new(key, f"{headers['webhook-id']}.{old}.".encode() + body, hashlib.sha256).digest()
        signature = "v1," + base64.b64encode(mac).decode()
        replayed = {**headers, "webhook-timestamp": str(old), "webhook-signature": signature}
        with self.assertRaisesRegex(WebhookVerificationError, "600 s old"):
            webhooks.verify(body, replayed, secret)
        with self.assertRaisesRegex(WebhookVerificationError, "old or replayed"):
            webhooks.verify(body, headers, secret, now=time.time() + 600)

    def test_batches(self) -> None:
        if not self.fx["batches"]:
            self.skipTest("batches (issue #25) are not on this branch")
        client = self.client()
        greeting = self.fx["templates"]["greeting"]
        items = [{"templateId": greeting, "variables": {"name": f"item {n}"}} for n in (1, 2, 3)]
        batch = client.batches.create({"items": items})
        self.assertTrue(batch["id"].startswith("bat_"))
        self.assertEqual(batch["total"], 3)
        for _ in range(60):
            if batch["status"] == "COMPLETED":
                break
            time.sleep(0.5)
            batch = client.batches.get(batch["id"])
        self.assertEqual((batch["status"], batch["completed"], batch["failed"]), ("COMPLETED", 3, 0))
        self.assertEqual([g["status"] for g in client.batches.list_generations(batch["id"])], ["COMPLETED"] * 3)
        with self.assertRaises(DocgenError) as caught:
            client.batches.create({"items": [{"templateId": ""}]})
        self.assertEqual(caught.exception.details[0]["field"], "items[0].templateId")


if __name__ == "__main__":
    unittest.main()
