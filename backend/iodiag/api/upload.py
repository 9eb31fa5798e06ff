"""Streaming multipart parsing of an upload straight into the log store's temporary file.

The body is never held in memory nor spooled twice: each chunk is parsed as it arrives, the file
part is hashed and written as it streams, and the size limit stops a too-large upload at the first
byte over it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request

from iodiag.services.intake import Rejected
from iodiag.store.blobs import BlobWriter

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

FILE_FIELD = "file"
TEXT_FIELDS = ("user", "job_id", "nodes", "cb_nodes")
_MAX_FIELD = 256
_MAX_BOUNDARY = 70  # RFC 2046; the parser itself fails past 256 with an exception of its own
_BATCH = 256 << 10  # parse in batches, in a thread: hashing and writing a large log must not block the loop


class _Parts:
    def __init__(self, writer: BlobWriter) -> None:
        self.writer = writer
        self.fields: dict[str, bytearray] = {}
        self.filename = ""
        self.has_file = False
        self.ended = False
        self._headers: dict[bytes, bytes] = {}
        self._hname = bytearray()
        self._hvalue = bytearray()
        self._target: Callable[[bytes], None] | None = None

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self._begin,
            "on_header_field": lambda d, s, e: self._hname.extend(d[s:e]),
            "on_header_value": lambda d, s, e: self._hvalue.extend(d[s:e]),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_done,
            "on_part_data": lambda d, s, e: self._data(d[s:e]),
            "on_end": self._end,
        }

    def _begin(self) -> None:
        self._headers, self._target = {}, None

    def _header_end(self) -> None:
        self._headers[bytes(self._hname).lower()] = bytes(self._hvalue)
        self._hname.clear()
        self._hvalue.clear()

    def _headers_done(self) -> None:
        disposition, params = parse_options_header(self._headers.get(b"content-disposition", b""))
        name = params.get(b"name", b"").decode("utf-8", "replace")
        if disposition != b"form-data" or not name:
            raise Rejected(400, "malformed multipart body: a part without a form-data name")
        if name == FILE_FIELD:
            if self.has_file:
                raise Rejected(422, "send one log per request (several 'file' parts)")
            self.has_file = True
            self.filename = params.get(b"filename", b"").decode("utf-8", "replace")
            self._target = self.writer.write
        elif name in TEXT_FIELDS:
            if name in self.fields:
                raise Rejected(422, f"form field {name!r} given twice")
            buf = self.fields[name] = bytearray()

            def add(data: bytes) -> None:
                buf.extend(data)
                if len(buf) > _MAX_FIELD:
                    raise Rejected(422, f"form field {name!r} is too long")

            self._target = add
        else:
            raise Rejected(422, f"unknown form field {name!r} (expected file, {', '.join(TEXT_FIELDS)})")

    def _data(self, data: bytes) -> None:
        if self._target is not None:
            self._target(data)

    def _end(self) -> None:
        self.ended = True

    def text_fields(self) -> dict[str, str]:
        try:
            return {k: v.decode("utf-8") for k, v in self.fields.items()}
        except UnicodeDecodeError:
            raise Rejected(422, "form fields must be UTF-8 text") from None


async def read_upload(request: Request, writer: BlobWriter, content_type: str) -> tuple[str, dict[str, str]]:
    """Parse the body into ``writer``; returns the uploaded file's name and the text fields."""
    _, params = parse_options_header(content_type)
    boundary = params.get(b"boundary")
    if not boundary:
        raise Rejected(400, "multipart body without a boundary")
    if len(boundary) > _MAX_BOUNDARY:
        raise Rejected(
            400, f"multipart boundary of {len(boundary):,} characters; at most {_MAX_BOUNDARY} are allowed (RFC 2046)"
        )
    parts = _Parts(writer)
    try:
        parser = MultipartParser(boundary, parts.callbacks())
    except FormParserError:
        raise Rejected(400, "malformed multipart boundary") from None
    batch = bytearray()
    try:
        async for chunk in request.stream():
            batch.extend(chunk)
            if len(batch) >= _BATCH:
                data, batch = bytes(batch), bytearray()
                await run_in_threadpool(parser.write, data)
        if batch:
            # Most logs are small: the last (often only) batch is parsed here, sparing a thread hop.
            parser.write(bytes(batch))
        parser.finalize()
    except FormParserError as exc:
        if "header size" in str(exc).lower():
            # The parser caps one part's headers (a few KiB); in practice only a file name runs into it.
            raise Rejected(
                400,
                "the upload's part headers are too long: is the file name over 1,000 characters? "
                "Rename the log and send it again",
            ) from None
        raise Rejected(400, "malformed multipart body") from None
    except ClientDisconnect:
        raise Rejected(400, "the upload was cut short (client disconnected)") from None
    if not parts.ended:
        raise Rejected(400, "malformed multipart body: it ends before its closing boundary")
    if not parts.has_file:
        raise Rejected(422, "no log in the upload (send it as the form field 'file')")
    return parts.filename, parts.text_fields()
