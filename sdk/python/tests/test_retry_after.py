"""Reading Retry-After: docgen sends whole seconds; a proxy in front of it may send an HTTP date."""

import time
import unittest
from email.utils import formatdate

from docgen_client._http import parse_retry_after


class RetryAfterTest(unittest.TestCase):
    def test_whole_seconds(self) -> None:
        self.assertEqual(parse_retry_after("1"), 1.0)
        self.assertEqual(parse_retry_after(" 30 "), 30.0)

    def test_an_http_date_is_the_time_left_until_it(self) -> None:
        left = parse_retry_after(formatdate(time.time() + 10, usegmt=True))
        assert left is not None
        self.assertGreater(left, 8)
        self.assertLessEqual(left, 10)
        self.assertEqual(parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT"), 0.0)

    def test_what_cannot_be_read_is_none(self) -> None:
        for value in (None, "", "soon", "-1"):
            self.assertIsNone(parse_retry_after(value), value)


if __name__ == "__main__":
    unittest.main()
