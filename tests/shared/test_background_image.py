"""A location question's background: a refused data: URL is told what is wrong with it."""

from __future__ import annotations

import base64
import re

import pytest
from ldpsurvey.shared.background_image import MAX_BACKGROUND_BYTES, check_background
from ldpsurvey.shared.errors import SurveyError
from ldpsurvey.shared.survey import Survey

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
       b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\xdac\xfc\xff\x9f\xa1\x1e\x00\x07\x82\x02\x7f"
       b"=\xc8H\xef\x00\x00\x00\x00IEND\xaeB`\x82")
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(20)
WEBP = b"RIFF\x20\x00\x00\x00WEBPVP8 " + bytes(20)
GIF = b"GIF89a\x01\x00\x01\x00" + bytes(20)
# The page's own check of a signed survey (client/web/js/mechanisms.js): whatever the survey
# parser accepts, the page must accept too.
PAGE_FORM = re.compile(r"^data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/=]+$")


def url(raw: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(raw).decode()}"


@pytest.mark.parametrize("raw, mime", [(PNG, "image/png"), (JPEG, "image/jpeg"),
                                       (WEBP, "image/webp")])
def test_each_supported_image_is_accepted_in_the_form_the_page_accepts(raw, mime):
    value = url(raw, mime)
    assert check_background(value, "bg") == value
    assert PAGE_FORM.fullmatch(value)


@pytest.mark.parametrize("value, says", [
    (42, "must be a string"),
    ("https://tiles.example/1.png", "is a link"),
    ("./map.png", "is a link"),
    ("iVBORw0KGgo=", "does not start with 'data:'"),
    ("data:image/png;base64", "no ','"),
    (url(GIF, "image/gif"), "'image/gif', which is not supported"),
    ("data:text/plain;base64,aGVsbG8=", "'text/plain', which is not supported"),
    ("data:image/png,%89PNG", "not base64-encoded"),
    ("data:IMAGE/PNG;base64," + base64.b64encode(PNG).decode(), "write the prefix exactly"),
    ("data:image/png;charset=utf-8;base64," + base64.b64encode(PNG).decode(),
     "write the prefix exactly"),
    ("data:image/png;base64,", "no image data"),
    ("data:image/png;base64,iVBO Rw0K", "whitespace at character 5"),
    ("data:image/png;base64,iVBO%2BRw0", "URL-encoding"),
    ("data:image/png;base64,iVBO_Rw0", "URL-safe base64"),
    ("data:image/png;base64,iVBORw0KGgo", "not a multiple of 4"),
    ("data:image/png;base64,iVA=iVBO", "padding in the middle"),
    (url(JPEG, "image/png"), "says image/png but its bytes are a JPEG image: declare it as "
                             "data:image/jpeg"),
    (url(GIF, "image/png"), "bytes are a GIF image: convert it"),
    ("data:image/webp;base64," + base64.b64encode(b"RIFF\0\0\0\0WAVEfmt ").decode(),
     "no PNG, JPEG or WebP image"),
    (url(PNG[:8] + bytes(MAX_BACKGROUND_BYTES)), "more than the 512 KiB allowed"),
    ("data:image/png;base64," + "A" * (MAX_BACKGROUND_BYTES * 2), "more than a 512 KiB image"),
])
def test_a_refusal_says_what_is_wrong_with_the_given_url(value, says):
    with pytest.raises(SurveyError) as err:
        check_background(value, "questions.home.background")
    assert err.value.field == "questions.home.background"
    assert says in err.value.problem, err.value.problem


def test_the_survey_parser_names_the_question_and_the_problem():
    data = {"id": "geo", "title": "Geo", "version": 1, "questions": [
        {"id": "home", "type": "location", "text": "Where?", "epsilon_geo": 1.0,
         "grid": {"rows": 2, "cols": 2, "cell_km": 1.0},
         "background": url(JPEG, "image/png")}]}
    with pytest.raises(SurveyError) as err:
        Survey.from_dict(data)
    assert err.value.field == "questions.home.background"
    assert "its bytes are a JPEG image" in err.value.message
