"""The page's base64url decoder (client/web/js/bytes.js) is as strict as the servers' (issue 32)."""

from __future__ import annotations

from typing import Any


def test_the_page_decodes_base64url_as_strictly_as_the_servers(js_page: Any,
                                                               web_root_url: str) -> None:
    """Issue 32's '%%%' (read as no bytes by a lenient decoder): the page's fromB64url (keys
    of the signed manifest) accepts exactly the texts shared/two_server/config.py accepts."""
    from ldpsurvey.shared.two_server.config import from_b64url

    texts = ["", "QQ", "QQ==", "QR", "Q", "QQ=", "%%%", "AAAA", "a+b/", "QUFB", "-_8", "-_9",
             "QQ\\n", " QQ", "QUF=", "QUE=", "QUE", "=", "A==="]
    on_page = js_page.evaluate("""async ([root, texts]) => {
        const B = await import(root + "js/bytes.js");
        return texts.map((t) => { const b = B.fromB64url(t); return b && Array.from(b); });
    }""", [web_root_url, texts])
    for text, page in zip(texts, on_page, strict=True):
        try:
            expected = list(from_b64url(text))
        except ValueError:
            expected = None
        assert page == expected, text
