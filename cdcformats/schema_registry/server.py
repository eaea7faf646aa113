"""The embedded registry over HTTP, with the Confluent Schema Registry REST API (the part that clients use:
subjects, versions, schemas by id, compatibility, config, mode), as a Starlette application served by uvicorn.

It listens on 127.0.0.1 unless told otherwise, can require HTTP basic auth, and refuses request bodies over a size
limit. Credentials are compared in constant time and never logged (uvicorn's access log holds no headers).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from . import errors
from .store import SchemaStore

DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
MEDIA_TYPE = "application/vnd.schemaregistry.v1+json"
log = logging.getLogger("cdcformats.schema_registry")


class _JSON(JSONResponse):
    media_type = MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()


def _error(http_status: int, error_code: int, message: str) -> Response:
    return _JSON({"error_code": error_code, "message": message}, status_code=http_status)


def _flag(request: Request, name: str) -> bool:
    """A boolean query parameter; clients write true, True or TRUE."""
    return request.query_params.get(name, "false").lower() == "true"


def _subject(request: Request) -> str:
    return unquote(request.path_params["subject"])


async def _body(request: Request, limit: int) -> dict[str, Any]:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise errors.RegistryError(413, 413, f"Request body over the limit of {limit} bytes")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks) or b"{}")
    except (ValueError, RecursionError) as error:
        raise errors.RegistryError(400, 400, f"Request body is not JSON: {error}") from None
    if not isinstance(body, dict):
        raise errors.RegistryError(400, 400, "Request body must be a JSON object")
    return body


def _schema_arguments(body: dict[str, Any]) -> dict[str, Any]:
    schema = body.get("schema")
    if not isinstance(schema, str) or not schema:
        raise errors.invalid_schema("the request has no schema")
    return {"schema": schema, "schema_type": body.get("schemaType") or "AVRO", "references": body.get("references")}


def create_app(store: SchemaStore, *, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
               credentials: tuple[str, str] | None = None) -> ASGIApp:
    """The registry's ASGI application over ``store``."""

    def endpoint(handler: Callable[..., Any], *, body: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                arguments = [await _body(request, max_request_bytes)] if body else []
                result = await run_in_threadpool(handler, request, *arguments)
                return result if isinstance(result, Response) else _JSON(result)
            except errors.RegistryError as error:
                return _error(error.http_status, error.error_code, error.message)
        return run

    def register(request: Request, body: dict[str, Any]) -> dict[str, Any]:
        return store.register(_subject(request), schema_id=body.get("id"), **_schema_arguments(body))

    def lookup(request: Request, body: dict[str, Any]) -> dict[str, Any]:
        return store.lookup(_subject(request), deleted=_flag(request, "deleted"), **_schema_arguments(body))

    def schema_by_id(request: Request) -> dict[str, Any]:
        return store.schema(request.path_params["id"])

    def raw_schema(record: dict[str, Any]) -> Any:
        """A schema as its own document: Avro's (and JSON Schema's) JSON, or Protobuf's text as it is."""
        if record.get("schemaType") == "PROTOBUF":
            return Response(record["schema"], media_type="text/plain")
        return json.loads(record["schema"])

    def compatibility_check(request: Request, body: dict[str, Any]) -> dict[str, Any]:
        version = request.path_params.get("version")
        problems = store.test_compatibility(_subject(request), version=version or "latest",
                                            all_versions=version is None, **_schema_arguments(body))
        result: dict[str, Any] = {"is_compatible": not problems}
        if _flag(request, "verbose"):
            result["messages"] = problems
        return result

    def get_config(request: Request) -> dict[str, Any]:
        subject = request.path_params.get("subject")
        return {"compatibilityLevel": store.compatibility(
            subject and unquote(subject), default_to_global=_flag(request, "defaultToGlobal"))}

    def put_config(request: Request, body: dict[str, Any]) -> dict[str, Any]:
        subject = request.path_params.get("subject")
        return {"compatibility": store.set_compatibility(body.get("compatibility") or body.get("compatibilityLevel"),
                                                         subject and unquote(subject))}

    def delete_config(request: Request) -> dict[str, Any]:
        subject = request.path_params.get("subject")
        return {"compatibilityLevel": store.delete_compatibility(subject and unquote(subject))}

    def get_mode(request: Request) -> dict[str, Any]:
        subject = request.path_params.get("subject")
        return {"mode": store.mode(subject and unquote(subject),
                                   default_to_global=not subject or _flag(request, "defaultToGlobal"))}

    def put_mode(request: Request, body: dict[str, Any]) -> dict[str, Any]:
        subject = request.path_params.get("subject")
        return {"mode": store.set_mode(body.get("mode"), subject and unquote(subject), force=_flag(request, "force"))}

    subject = "/subjects/{subject}"
    version = subject + "/versions/{version}"
    routes = [
        Route("/", endpoint(lambda request: {})),
        Route("/schemas/types", endpoint(lambda request: store.schema_types())),
        Route("/schemas/ids/{id:int}", endpoint(schema_by_id)),
        Route("/schemas/ids/{id:int}/schema", endpoint(lambda request: raw_schema(schema_by_id(request)))),
        Route("/schemas/ids/{id:int}/subjects", endpoint(lambda request: sorted({
            pair["subject"] for pair in store.subjects_of(request.path_params["id"], _flag(request, "deleted"))}))),
        Route("/schemas/ids/{id:int}/versions", endpoint(
            lambda request: store.subjects_of(request.path_params["id"], _flag(request, "deleted")))),
        Route("/subjects", endpoint(lambda request: store.subjects(request.query_params.get("subjectPrefix", ""),
                                                                   _flag(request, "deleted")))),
        Route(subject, endpoint(lookup, body=True), methods=["POST"]),
        Route(subject, endpoint(lambda request: store.delete_subject(_subject(request), _flag(request, "permanent"))),
              methods=["DELETE"]),
        Route(subject + "/versions", endpoint(lambda request: store.versions(_subject(request),
                                                                            _flag(request, "deleted")))),
        Route(subject + "/versions", endpoint(register, body=True), methods=["POST"]),
        Route(version, endpoint(lambda request: store.version(_subject(request), request.path_params["version"],
                                                              _flag(request, "deleted")))),
        Route(version, endpoint(lambda request: store.delete_version(
            _subject(request), request.path_params["version"], _flag(request, "permanent"))), methods=["DELETE"]),
        Route(version + "/schema", endpoint(lambda request: raw_schema(store.version(
            _subject(request), request.path_params["version"])))),
        Route(version + "/referencedby", endpoint(
            lambda request: store.referenced_by(_subject(request), request.path_params["version"]))),
        Route("/compatibility" + version, endpoint(compatibility_check, body=True), methods=["POST"]),
        Route("/compatibility" + subject + "/versions", endpoint(compatibility_check, body=True), methods=["POST"]),
        Route("/config", endpoint(get_config)),
        Route("/config", endpoint(put_config, body=True), methods=["PUT"]),
        Route("/config", endpoint(delete_config), methods=["DELETE"]),
        Route("/config/{subject}", endpoint(get_config)),
        Route("/config/{subject}", endpoint(put_config, body=True), methods=["PUT"]),
        Route("/config/{subject}", endpoint(delete_config), methods=["DELETE"]),
        Route("/mode", endpoint(get_mode)),
        Route("/mode", endpoint(put_mode, body=True), methods=["PUT"]),
        Route("/mode/{subject}", endpoint(get_mode)),
        Route("/mode/{subject}", endpoint(put_mode, body=True), methods=["PUT"]),
        Route("/mode/{subject}", endpoint(lambda request: {"mode": store.delete_mode(_subject(request))}),
              methods=["DELETE"]),
        Route("/contexts", endpoint(lambda request: ["."])),
        # The default subject strategy of confluent-kafka asks which subject a topic is associated with; an empty
        # answer makes it fall back to the topic strategy, as with a Confluent registry without associations.
        Route("/associations/resources/{namespace}/{name}", endpoint(lambda request: [])),
    ]
    app: ASGIApp = Starlette(routes=routes)
    app = _KeepEncodedSlashes(app)
    if credentials is not None:
        app = _BasicAuth(app, credentials)
    return app


class _KeepEncodedSlashes:
    """Route on the raw path, each segment encoded exactly once, so that a subject with an encoded slash
    (``ex%2Fcommon.proto``, as confluent-kafka names Protobuf dependencies) stays one path segment; the handlers
    decode subjects, once."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("raw_path"):
            raw = scope["raw_path"].decode("latin-1")
            scope = {**scope, "path": "/".join(quote(unquote(part), safe="") for part in raw.split("/"))}
        await self.app(scope, receive, send)


class _BasicAuth:
    """HTTP basic authentication, checked before anything else."""

    def __init__(self, app: ASGIApp, credentials: tuple[str, str]) -> None:
        self.app = app
        self.expected = base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "basic" or not _valid_token(token) or not hmac.compare_digest(token, self.expected):
                response = _error(401, 40101, "Unauthorized")
                response.headers["WWW-Authenticate"] = 'Basic realm="cdcformats schema registry"'
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _valid_token(token: str) -> bool:
    try:
        base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def listen(host: str = "127.0.0.1", port: int = 8081) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: any free one), or the ``OSError`` why not (the port is in use),
    before anything is served."""
    return socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)


def serve(store: SchemaStore, listening: socket.socket, *, credentials: tuple[str, str] | None = None,
          max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES, log_level: str = "info") -> None:
    """Serve the registry on a ``listen``-ing socket until interrupted."""
    import uvicorn

    app = create_app(store, max_request_bytes=max_request_bytes, credentials=credentials)
    uvicorn.Server(uvicorn.Config(app, log_level=log_level, server_header=False)).run(sockets=[listening])
