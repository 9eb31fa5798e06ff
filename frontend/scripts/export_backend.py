"""Print what the UI is generated from, as one JSON object: the REST API's OpenAPI schema, and the
knowledge base the report links to (the recommendation registry and the knowledge documents).

Run with the backend's interpreter (``.venv/bin/python``); ``npm run gen:api`` does.
"""

from __future__ import annotations

import json
import sys

from iodiag.analysis.recommendations import RECOMMENDATIONS
from iodiag.api import create_app
from iodiag.core.settings import Settings
from iodiag.knowledge.loader import load_docs


def main() -> None:
    settings = Settings()
    openapi = create_app(settings).openapi()
    docs = []
    for doc in sorted(load_docs(settings.knowledge_dir), key=lambda d: d.meta.id):
        text = doc.path.read_text(encoding="utf-8")
        body = text.split("\n---", 1)[1].split("\n", 1)[1] if text.startswith("---") else text
        m = doc.meta
        docs.append({
            "id": m.id,
            "title": m.title,
            "layer": m.layer,
            "codes": list(m.codes),
            "recommendations": list(m.recommendations),
            "facility": m.facility,
            "sources": list(m.sources),
            "updated": m.updated.isoformat(),
            "body": body.lstrip("\n"),
        })
    recs = [{"id": r.id, "title": r.title, "summary": r.summary} for r in RECOMMENDATIONS.values()]
    json.dump({"openapi": openapi, "knowledge": {"recommendations": recs, "docs": docs}}, sys.stdout)


if __name__ == "__main__":
    main()
