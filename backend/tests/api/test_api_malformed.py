"""Every malformed request, on every route, gets a 4xx: hand-made multipart and HTTP edge cases, then
random bodies from Hypothesis. Schemathesis (test_api_fuzz) fuzzes what the schema describes; this file
covers what it never sends (broken framing, boundaries, headers, encodings)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.test_api_support import LOG_A, Server, shared_server

VALID = LOG_A.read_bytes()


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client("fuzzer") as c:
        yield c


@pytest.fixture(scope="module")
def routes(client: httpx.Client) -> list[tuple[str, str]]:
    """(method, path) of every route, path parameters filled with an id that does not exist."""
    spec = client.get("/api/v1/openapi.json").json()
    out = []
    for path, ops in spec["paths"].items():
        concrete = path
        for name in ("analysis_id", "other_id", "token_id", "message_id", "name", "slug", "facility"):
            concrete = concrete.replace("{" + name + "}", "x" * 8)
        out.extend((method.upper(), concrete) for method in ops)
    return out


def multipart(boundary: bytes, parts: list[bytes], close: bool = True) -> bytes:
    body = b"".join(b"--" + boundary + b"\r\n" + p + b"\r\n" for p in parts)
    return body + (b"--" + boundary + b"--\r\n" if close else b"")


def file_part(data: bytes = VALID, name: bytes = b"file", filename: bytes = b"x.darshan") -> bytes:
    return (
        b'Content-Disposition: form-data; name="' + name + b'"; filename="' + filename + b'"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + data
    )


def post_raw(client: httpx.Client, body: bytes, content_type: str | bytes) -> httpx.Response:
    return client.post("/api/v1/analyses", content=body, headers={"Content-Type": content_type})


def is_4xx(r: httpx.Response) -> bool:
    return 400 <= r.status_code < 500 and "\n" not in str(r.json().get("detail", ""))


@pytest.mark.parametrize("length", [1, 70, 71, 256, 257, 1000, 20_000])
def test_boundaries_of_any_length(client: httpx.Client, length: int) -> None:
    b = b"b" * length
    r = post_raw(
        client,
        multipart(b, [b'Content-Disposition: form-data; name="file"\r\n\r\nnot a log']),
        f"multipart/form-data; boundary={b.decode()}",
    )
    assert is_4xx(r), (length, r.status_code, r.text[:200])


CASES: dict[str, tuple[bytes, str]] = {
    "no boundary": (multipart(b"xyz", [file_part()]), "multipart/form-data"),
    "empty boundary": (multipart(b"xyz", [file_part()]), "multipart/form-data; boundary="),
    "body uses another boundary": (multipart(b"other", [file_part()]), "multipart/form-data; boundary=xyz"),
    "no closing boundary": (multipart(b"xyz", [file_part()], close=False), "multipart/form-data; boundary=xyz"),
    "empty body": (b"", "multipart/form-data; boundary=xyz"),
    "only the closing boundary": (b"--xyz--\r\n", "multipart/form-data; boundary=xyz"),
    "part without headers": (multipart(b"xyz", [b"\r\n" + VALID]), "multipart/form-data; boundary=xyz"),
    "part without a name": (
        multipart(b"xyz", [b'Content-Disposition: form-data; filename="a"\r\n\r\nx']),
        "multipart/form-data; boundary=xyz",
    ),
    "not form-data": (
        multipart(b"xyz", [b'Content-Disposition: attachment; name="file"\r\n\r\nx']),
        "multipart/form-data; boundary=xyz",
    ),
    "no file part": (
        multipart(b"xyz", [b'Content-Disposition: form-data; name="user"\r\n\r\nbob']),
        "multipart/form-data; boundary=xyz",
    ),
    "two file parts": (multipart(b"xyz", [file_part(), file_part()]), "multipart/form-data; boundary=xyz"),
    "unknown field": (
        multipart(b"xyz", [file_part(), b'Content-Disposition: form-data; name="evil"\r\n\r\n1']),
        "multipart/form-data; boundary=xyz",
    ),
    "field too long": (
        multipart(b"xyz", [file_part(), b'Content-Disposition: form-data; name="job_id"\r\n\r\n' + b"9" * 5000]),
        "multipart/form-data; boundary=xyz",
    ),
    "field not UTF-8": (
        multipart(b"xyz", [file_part(), b'Content-Disposition: form-data; name="user"\r\n\r\n\xff\xfe']),
        "multipart/form-data; boundary=xyz",
    ),
    "nodes not a number": (
        multipart(b"xyz", [file_part(), b'Content-Disposition: form-data; name="nodes"\r\n\r\nmany']),
        "multipart/form-data; boundary=xyz",
    ),
    "huge part header": (
        multipart(b"xyz", [file_part(filename=b"f" * 200_000)]),
        "multipart/form-data; boundary=xyz",
    ),
    "many header lines": (
        multipart(b"xyz", [b"".join(b"X-H%d: v\r\n" % i for i in range(5000)) + file_part()]),
        "multipart/form-data; boundary=xyz",
    ),
    "header without a colon": (
        multipart(b"xyz", [b"garbage line\r\n" + file_part()]),
        "multipart/form-data; boundary=xyz",
    ),
    "ten thousand empty parts": (
        multipart(b"xyz", [b'Content-Disposition: form-data; name="user"\r\n\r\n'] * 10_000),
        "multipart/form-data; boundary=xyz",
    ),
    "multipart body sent as JSON": (multipart(b"xyz", [file_part()]), "application/json"),
    "JSON sent as multipart": (b'{"path": "/tmp/x"}', "multipart/form-data; boundary=xyz"),
    "broken JSON": (b'{"path": ', "application/json"),
    "JSON not an object": (b"[1, 2, 3]", "application/json"),
    "deeply nested JSON": (b'{"path": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "application/json"),
    "JSON with a NUL in the path": (b'{"path": "/tmp/a\\u0000b"}', "application/json"),
    "unknown content type": (VALID, "application/x-darshan"),
    "no content type": (VALID, ""),
    "charset nonsense": (b'{"path": "/x"}', "application/json; charset=klingon"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_uploads_are_4xx(client: httpx.Client, case: str) -> None:
    body, content_type = CASES[case]
    r = post_raw(client, body, content_type)
    assert is_4xx(r), (case, r.status_code, r.text[:300])


def raw_http(server: Server, request: bytes) -> int:
    """Send bytes as they are; the status code of the answer (0: the server closed without one)."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return 0
            data += chunk
    return int(data.split(b" ", 2)[1])


def test_broken_http_framing_is_4xx(server: Server) -> None:
    token = server.token("framer")
    auth = f"Authorization: Bearer {token}\r\n".encode()
    head = b"POST /api/v1/analyses HTTP/1.1\r\nHost: x\r\n" + auth
    cases = {
        "negative length": head + b"Content-Type: application/json\r\nContent-Length: -5\r\n\r\n{}",
        "length not a number": head + b"Content-Type: application/json\r\nContent-Length: ten\r\n\r\n{}",
        "two lengths": head + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        "bad chunk size": head
        + b"Content-Type: multipart/form-data; boundary=xyz\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nab\r\n0\r\n\r\n",
        "huge header": b"GET /api/v1/analyses HTTP/1.1\r\nHost: x\r\n"
        + auth
        + b"X-Big: "
        + b"a" * 200_000
        + b"\r\n\r\n",
        "header without a colon": b"GET /api/v1/analyses HTTP/1.1\r\nHost: x\r\n" + auth + b"nonsense\r\n\r\n",
        "not HTTP at all": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\0" * 64,
    }
    for name, request in cases.items():
        status = raw_http(server, request)
        # h11 answers 400 (or 431) to framing it cannot parse, and may close at once on TLS noise.
        assert (status == 0 and name == "not HTTP at all") or 400 <= status < 500, (name, status)


def test_every_route_refuses_junk_with_a_4xx(client: httpx.Client, routes: list[tuple[str, str]]) -> None:
    junk = [
        (b"\xff\xfe\x00garbage", "application/json"),
        (b'{"a": ' * 1000, "application/json"),
        (multipart(b"b" * 300, [file_part()]), "multipart/form-data; boundary=" + "b" * 300),
    ]
    for method, path in routes:
        for body, content_type in junk:
            r = client.request(method, path, content=body, headers={"Content-Type": content_type})
            assert r.status_code < 500, (method, path, r.status_code, r.text[:200])
        r = client.request(method, path + "?limit=-1&offset=x&sort=%00&since=notadate")
        assert r.status_code < 500, (method, path, r.status_code, r.text[:200])
        r = client.request(method, path.replace("x" * 8, "%2e%2e%2f" * 40 + "\u00e9" * 300))
        assert r.status_code < 500, (method, path, r.status_code)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    # Control characters cannot be sent in a header at all (the client refuses them).
    boundary=st.binary(min_size=0, max_size=300).map(lambda b: bytes(c for c in b if c > 0x20 and c != 0x7F)),
    body=st.binary(max_size=2000),
    header=st.sampled_from(
        ["multipart/form-data; boundary=", 'multipart/form-data; boundary="', "multipart/mixed; boundary="]
    ),
)
def test_random_multipart_never_5xx(client: httpx.Client, boundary: bytes, body: bytes, header: str) -> None:
    b = boundary.decode("latin-1").replace("\r", "").replace("\n", "")
    content = b"--" + boundary + b"\r\n" + body + b"\r\n--" + boundary + b"--\r\n"
    r = post_raw(client, content, (header + b).encode("latin-1"))
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
