"""One keep-alive HTTP connection to trainbench's tracking API (MLflow's REST API)."""

import http.client
import json
import math
import os
import time
import urllib.parse
import uuid


def json_value(value):
    """A float as MLflow's REST API takes it: NaN and infinities as strings."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


class Endpoint:
    """The tracking API at `uri`; TRAINBENCH_TOKEN (else MLFLOW_TRACKING_TOKEN), when set,
    goes with every request as a bearer token. Each request carries an id of its own, the
    same on its retry, so that a batch the server took before the connection broke is not
    stored twice."""

    def __init__(self, uri):
        parsed = urllib.parse.urlsplit(uri)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.https = parsed.scheme == "https"
        self.prefix = parsed.path.rstrip("/")
        self.token = os.environ.get("TRAINBENCH_TOKEN") or os.environ.get("MLFLOW_TRACKING_TOKEN")
        self.connection = None

    def request(self, method, path, body=None, content_type="application/json"):
        """Returns (status, parsed JSON or bytes); raises OSError when unreachable."""
        headers = {"Content-Type": content_type, "X-Trainbench-Request": uuid.uuid4().hex}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
        for attempt in (0, 1):  # a kept-alive connection the server closed is reopened once
            if self.connection is None:
                cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
                self.connection = cls(self.host, self.port, timeout=30)
            try:
                self.connection.request(method, self.prefix + path, body=body, headers=headers)
                response = self.connection.getresponse()
                data = read_bounded(response, 64 << 20, 60)
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 1:
                    raise
                continue
            if response.headers.get("Content-Type", "").startswith("application/json"):
                try:
                    return response.status, json.loads(data or b"{}")
                except ValueError:
                    pass
            return response.status, data
        raise OSError("unreachable")

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class AnswerTooLarge(OSError):
    """A server's answer beyond the size a client accepts."""


def read_bounded(answer, limit, timeout):
    """An HTTP answer's body, taking at most `timeout` seconds in all and `limit` bytes: a
    server that trickles its answer or sends without end raises OSError rather than
    holding or growing the client for ever."""
    deadline = time.monotonic() + timeout
    parts, size = [], 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("the answer took longer than %d s" % timeout)
        part = answer.read1(1 << 20) if hasattr(answer, "read1") else answer.read(1 << 20)
        if not part:
            answer.read()  # marks the answer done, so a kept-alive connection can ask again
            return b"".join(parts)
        size += len(part)
        if size > limit:
            raise AnswerTooLarge("the answer is larger than %d bytes" % limit)
        parts.append(part)
