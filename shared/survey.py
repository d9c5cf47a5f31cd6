"""Survey definitions: parsing, validation, and the canonical bytes that are hashed and signed.

A survey is read from TOML or JSON (`load_survey`) or a dict (`Survey.from_dict`). Every error
names the offending field. `auto` mechanisms are resolved when the survey is built, and the
resolved mechanism with its parameters is part of the canonical form, so a respondent's device
can check that what it is asked to run is what the question and its ε call for.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import skip_logic
from .errors import SurveyError
from .location_question import MAX_SURVEY_CELLS
from .option_filter import OptionFilter, parse_filter
from .piping import check_piping
from .question_types import QUESTION_TYPES, REGISTRY, QuestionType, fields, unit_for
from .question_types.base import Definition
from .question_types.fields import MAX_LABEL as MAX_LABEL  # re-exported: the field limits
from .question_types.fields import MAX_TEXT as MAX_TEXT
from .question_types.fields import integer as _int
from .question_types.fields import text as _text
from .translations import Translation, parse_hint, parse_language, parse_translations
from .two_server.config import TwoServerConfig

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$")
QUESTION_ID = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,62})$")
MAX_QUESTIONS = 500
MAX_VERSION = 2_147_483_647  # a signed 32-bit integer: every store's version column holds it,
# and ODK's customary yyyymmddrr versions (2017120701) are below it until the year 2147
# Options in all questions together: with MAX_QUESTIONS it bounds the work one survey can cause
# on a device or the server (parsing, building and proving every mechanism): ~2 µs per option.
MAX_TOTAL_OPTIONS = 1 << 20
# MAX_LABEL and MAX_TEXT, and the checks every field shares, are shared/question_types/fields.py.
# The ε range, the number of options and the integer range a question may have are the limits
# of its mechanism (`Mechanism.misfit`, shared/mechanisms/base.py); the schema only bounds the
# option list by the largest domain any mechanism takes.

_SURVEY_KEYS = {"id", "title", "version", "description", "series", "questions",
                "report_size_limit", "crosstabs", "collection", "two_server", "language",
                "translations"}
MAX_CROSSTABS = 50
_CROSSTAB_KEYS = {"rows", "cols", "row_bins", "col_bins"}
# Bounds of the survey-level `report_size_limit` (bytes of JSON per report `auto` accepts).
MIN_REPORT_SIZE_LIMIT = 16
MAX_REPORT_SIZE_LIMIT = 1 << 20
_COMMON_KEYS = {"id", "text", "type", "epsilon", "mechanism", "mechanism_choice", "optional",
                "params", "instantaneous_epsilon", "disclosed", "central_epsilon",
                "local_epsilon", "relevant", "hint", "special", "carried"}
# `amend(index, question, error)` (Survey.from_dict): the table of a question refused by its
# own parse, changed so that it parses, or None when the refusal stands.
Amend = Callable[[int, Mapping[str, Any], SurveyError], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Question:
    """One question. `mechanism` is always concrete here: `auto` was resolved on construction."""

    id: str
    text: str
    type: str
    epsilon: float
    mechanism: str
    options: tuple[str, ...] = ()
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    min: int | None = None
    max: int | None = None
    optional: bool = False
    mechanism_choice: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    # Longitudinal surveys only: fresh GRR noise at this ε on the memoized permanent value
    # each round (RAPPOR's instantaneous layer). `epsilon` stays the permanent layer's ε, the
    # bound over unboundedly many rounds of one true answer.
    instantaneous_epsilon: float | None = None
    # Asked directly (shared/mechanisms/disclosed.py): sent as given; no mechanism, no ε.
    disclosed: bool = False
    # A disclosed question whose answer is the value the respondent's invitation carries from
    # the main survey's export (docs/sensitive-module.md, "Values a condition reads"): the
    # device fills it in from the invitation and shows it, the server checks it equals the
    # invitation's. Never asked, never randomized; the server holds the value already.
    carried: bool = False
    # Two-server surveys only (shared/two_server/config.py): the central ε of each server's
    # noise, and ε0 of the local mechanism (None: mechanism "none", `epsilon` = central ε).
    central_epsilon: float | None = None
    local_epsilon: float | None = None
    # Location questions only: the grid (shared/location_question.py); `options` are its cells
    # ("row,col") and `groups` its regions.
    location: Any = None
    # Multiselect questions only: which sets may be answered (mechanisms/set_base.SetShape:
    # max_selected, required_min); `options` are the options that may be checked.
    multiselect: Any = None
    # A type's own parsed keys that no field above holds (the decimal's exact grid and
    # estimates: shared/question_types/number_grid.GridSpec); only its unit reads it.
    spec: Any = None
    # Skip logic (shared/skip_logic.py): the condition under which the question is asked, and
    # whether it reads a randomized answer, so that the question has a "not asked" value
    # (NOT_ASKED, the last of its `labels`) and is always sent.
    relevant: str | None = None
    condition: Any = field(default=None, compare=False, repr=False)
    not_asked: bool = False
    # Special values (shared/question_types/fields.special): name -> label ("Don't know",
    # "Prefer not to say"), extra values of the domain after the answers, randomized with them.
    special: Mapping[str, str] = field(default_factory=dict)
    # Text shown under the question, in the survey's base language (shared/translations.py).
    hint: str | None = None
    # Categorical questions only: the options the device shows follow an earlier answer
    # (shared/option_filter.py); the mechanism still ranges over every option.
    option_filter: OptionFilter | None = None

    @property
    def unit(self) -> QuestionType:
        """This question's type unit (shared/question_types): what every path asks."""
        return unit_for(self.type)

    @property
    def k(self) -> int:
        """Size of the answer domain ("not asked" included; an integer question's range)."""
        return self.unit.k(self)

    @property
    def extended(self) -> bool:
        """The domain has values beyond the answers (special values, "not asked"), which its
        mechanism carries (the unit's `not_asked_mechanism`)."""
        return self.not_asked or bool(self.special)

    @property
    def labels(self) -> Sequence[Any]:
        """The answer values in domain order, as estimates name them (a question with a "not
        asked" value ends with NOT_ASKED; an integer one keeps its range, asked_geometric.py)."""
        return self.unit.labels(self)

    def group_indices(self) -> dict[str, tuple[int, ...]]:
        index = {label: i for i, label in enumerate(self.options)}
        return {name: tuple(index[label] for label in members)
                for name, members in self.groups.items()}

    def to_dict(self) -> dict[str, Any]:
        """The canonical dict: every field spelled out, defaults included."""
        d: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "type": self.type,
            "epsilon": self.epsilon,
            "mechanism": self.mechanism,
            "optional": self.optional,
            "params": dict(self.params),
        }
        if self.disclosed:  # no mechanism, no ε, no params
            d = {"id": self.id, "text": self.text, "type": self.type,
                 "optional": self.optional, "disclosed": True}
        if self.carried:  # absent unless carried: older bytes unchanged
            d["carried"] = True
        if self.mechanism_choice is not None:
            d["mechanism_choice"] = self.mechanism_choice
        if self.instantaneous_epsilon is not None:
            d["instantaneous_epsilon"] = self.instantaneous_epsilon
        if self.central_epsilon is not None:
            d["central_epsilon"] = self.central_epsilon
        if self.local_epsilon is not None:
            d["local_epsilon"] = self.local_epsilon
        d.update(self.unit.canonical(self))
        if self.relevant is not None:  # absent without skip logic: older bytes unchanged
            d["relevant"] = self.relevant
        if self.hint is not None:  # absent without a hint: older bytes unchanged
            d["hint"] = self.hint
        if self.special:  # absent without special values: older bytes unchanged
            d["special"] = dict(self.special)
        if self.option_filter is not None:  # absent without a filter: older bytes unchanged
            d["filter"] = self.option_filter.to_dict()
        return d


@dataclass(frozen=True)
class CrosstabSpec:
    """A declared crosstab: the server keeps its joint aggregate next to the marginals.

    Written `["q1", "q2"]` (rows, cols) or `{rows = "age", cols = "q2", row_bins = [18, 30]}`
    (bins: inner edges for an integer question; default bins otherwise).
    """

    rows: str
    cols: str
    row_bins: tuple[int, ...] | None = None
    col_bins: tuple[int, ...] | None = None

    @property
    def key(self) -> str:
        """The aggregate row key: question ids never contain ':'."""
        return f"crosstab:{self.rows}:{self.cols}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"rows": self.rows, "cols": self.cols}
        if self.row_bins is not None:
            d["row_bins"] = list(self.row_bins)
        if self.col_bins is not None:
            d["col_bins"] = list(self.col_bins)
        return d


@dataclass(frozen=True)
class Survey:
    """A survey: a slug id, a title, an integer version, and its questions."""

    id: str
    title: str
    version: int
    questions: tuple[Question, ...]
    description: str = ""
    series: str | None = None
    # Largest report (bytes of JSON) `auto` may choose a mechanism for; None: the default.
    report_size_limit: int | None = None
    crosstabs: tuple[CrosstabSpec, ...] = ()
    collection: str = "ldp"  # or "two-server" (then `two_server` is set)
    two_server: TwoServerConfig | None = None
    # Several languages (shared/translations.py, contract 4): the base text's BCP 47 tag (None:
    # not given, "en") and the text in other languages, tag -> Translation.
    language: str | None = None
    translations: Mapping[str, Translation] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any, amend: Amend | None = None) -> Survey:
        """The survey of a table; SurveyError for the first problem, in the order checked.

        `amend(index, question, error)` lets a caller change a question that its own parse
        refuses and go on in the same pass: the table it returns (the same id and options: the
        survey-wide limits were checked on `data`) is parsed again in place, after the same
        earlier questions, so the pass refuses or builds what checking the amended table from
        the start would; None lets the refusal stand. The XLSForm import makes every optional
        follow-up of randomized answers required in one pass this way."""
        return _parse_survey(data, amend)

    @property
    def total_epsilon(self) -> float:
        """ε one respondent spends answering every question (sequential composition)."""
        return math.fsum(q.epsilon for q in self.questions)

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "version": self.version,
            "description": self.description,
            "questions": [q.to_dict() for q in self.questions],
        }
        if self.series is not None:
            d["series"] = self.series
        if self.report_size_limit is not None:
            d["report_size_limit"] = self.report_size_limit
        if self.crosstabs:  # absent when none: older surveys keep their canonical bytes
            d["crosstabs"] = [c.to_dict() for c in self.crosstabs]
        if self.two_server is not None:  # absent in the LDP mode: older bytes unchanged
            d["collection"] = self.collection
            d["two_server"] = self.two_server.to_dict()
        if self.language is not None:  # absent when not given: older bytes unchanged
            d["language"] = self.language
        if self.translations:
            d["translations"] = {tag: t.to_dict() for tag, t in self.translations.items()}
        return d

    def canonical_bytes(self) -> bytes:
        """Stable bytes for the same survey: what is hashed and signed."""
        return canonical_json(self.to_dict())

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical_bytes()).hexdigest()


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8, no NaN: the same value always gives the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def load_survey(path: str | Path) -> Survey:
    """Read a survey from a .toml or .json file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SurveyError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SurveyError(str(path), "not UTF-8 text") from exc
    if path.suffix.lower() == ".toml":
        try:
            data = tomllib.loads(text)
        except ValueError as exc:  # TOMLDecodeError, or an integer past Python's digit limit
            raise SurveyError(str(path), f"invalid TOML: {exc}") from exc
        except RecursionError:
            raise SurveyError(str(path), "invalid TOML: nested too deeply") from None
    elif path.suffix.lower() == ".json":
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise SurveyError(str(path), f"invalid JSON: {exc}") from exc
        try:  # a \ud800 escape parses, but the survey could never be encoded or signed
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, RecursionError):
            raise SurveyError(str(path), "invalid JSON: a \\u escape encodes a lone "
                              "surrogate (not Unicode text), or it is nested too deeply") from None
    else:
        raise SurveyError(str(path), "unknown file type: use .toml or .json")
    return Survey.from_dict(data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


# --- parsing -------------------------------------------------------------------------------


def _parse_survey(data: Any, amend: Amend | None = None) -> Survey:
    if not isinstance(data, Mapping):
        raise SurveyError("survey", "must be a table/object")
    _reject_unknown(data, _SURVEY_KEYS, "survey")
    survey_id = _slug(data, "id", "id")
    title = _text(data, "title", "title")
    version = _int(data, "version", "version")
    if not 1 <= version <= MAX_VERSION:
        raise SurveyError("version", f"must be between 1 and {MAX_VERSION}")
    description = _text(data, "description", "description", required=False, empty_ok=True) or ""
    series = None
    if data.get("series") is not None:
        series = _slug(data, "series", "series")
    questions_raw = data.get("questions")
    if not isinstance(questions_raw, list) or not questions_raw:
        raise SurveyError("questions", "must be a non-empty list")
    if len(questions_raw) > MAX_QUESTIONS:
        raise SurveyError("questions", f"at most {MAX_QUESTIONS} questions")
    size_limit = None
    if data.get("report_size_limit") is not None:
        size_limit = _int(data, "report_size_limit", "report_size_limit")
        if not MIN_REPORT_SIZE_LIMIT <= size_limit <= MAX_REPORT_SIZE_LIMIT:
            raise SurveyError("report_size_limit", f"must be between {MIN_REPORT_SIZE_LIMIT} "
                              f"and {MAX_REPORT_SIZE_LIMIT} bytes")
    total = sum(len(q["options"]) for q in questions_raw
                if isinstance(q, Mapping) and isinstance(q.get("options"), list))
    if total > MAX_TOTAL_OPTIONS:
        raise SurveyError("questions", f"at most {MAX_TOTAL_OPTIONS} options in all questions "
                                       f"together, got {total}")
    from .two_server import config as two_server

    collection = two_server.parse_collection(data)
    servers = two_server.parse_two_server(data.get("two_server"), collection)
    if servers is not None and series is not None:
        raise SurveyError("series", "a two-server survey is not longitudinal (no series)")
    if _survey_cells(questions_raw) > MAX_SURVEY_CELLS:
        raise SurveyError("questions", f"at most {MAX_SURVEY_CELLS} location cells in all "
                                       f"questions together")
    places = [_question_where(q, i) for i, q in enumerate(questions_raw)]
    first: dict[str, int] = {}
    for i, q in enumerate(questions_raw):
        if q["id"] in first:
            raise SurveyError(f"{places[i]}.id", f"duplicate question id: questions"
                              f"[{first[q['id']]}] and questions[{i}] both use it")
        first[q["id"]] = i
    ids = [q["id"] for q in questions_raw]
    parsed: list[Question] = []
    for i, q in enumerate(questions_raw):  # in order: a condition reads earlier questions
        while True:
            try:
                question = _parse_question(q, places[i], size_limit, collection, tuple(parsed),
                                           ids[i + 1:])
                break
            except SurveyError as exc:
                amended = None if amend is None else amend(i, q, exc)
                if amended is None:
                    raise
                q = amended
        hint = parse_hint(q, places[i])
        parsed.append(question if hint is None else _replace(question, hint=hint))
    questions = tuple(parsed)
    language = parse_language(data)
    translations = parse_translations(data.get("translations"), language or "en", questions)
    check_piping(questions, translations)  # `${id}` in a text reads an earlier question
    for where, q in zip(places, questions, strict=True):
        if q.instantaneous_epsilon is not None and series is None:
            raise SurveyError(f"{where}.instantaneous_epsilon",
                              "only a longitudinal survey (one with a `series`) has an "
                              "instantaneous layer: it re-randomizes a memoized answer each round")
    crosstabs = _crosstabs(data.get("crosstabs"), {q.id: q for q in questions}, servers)
    return Survey(id=survey_id, title=title, version=version, questions=questions,
                  description=description, series=series, report_size_limit=size_limit,
                  crosstabs=crosstabs, collection=collection, two_server=servers,
                  language=language, translations=translations)


def _survey_cells(questions_raw: list[Any]) -> int:
    """Location cells declared across raw questions (before parsing), for the survey cap."""
    total = 0
    for q in questions_raw:
        name = q.get("type") if isinstance(q, Mapping) else None
        unit = REGISTRY.get(name) if isinstance(name, str) else None
        total += 0 if unit is None else unit.declared_cells(q)
    return total


def _check_crosstab(spec: CrosstabSpec, questions: Mapping[str, Question], where: str) -> None:
    """Bins must split their range and the table must be computable (see shared/crosstab.py)."""
    from .crosstab import check_size
    from .errors import CrosstabError
    from .joint_features import encoder_for, parse_bins
    from .joint_values import check_pair
    from .mechanisms import mechanism_for

    try:
        encoders = [encoder_for(mechanism_for(questions[qid]), parse_bins(bins))
                    for qid, bins in ((spec.rows, spec.row_bins), (spec.cols, spec.col_bins))]
        check_size(*encoders)
        check_pair(*encoders)
    except CrosstabError as exc:
        raise SurveyError(where, exc.message) from None


def _crosstabs(value: Any, questions: Mapping[str, Question],
               servers: TwoServerConfig | None = None) -> tuple[CrosstabSpec, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_CROSSTABS:
        raise SurveyError("crosstabs", f"must be a list of at most {MAX_CROSSTABS} "
                          '["rows", "cols"] pairs')
    specs: list[CrosstabSpec] = []
    for i, entry in enumerate(value):
        where = f"crosstabs[{i}]"
        if isinstance(entry, list):
            if len(entry) != 2:
                raise SurveyError(where, 'must name two questions: ["rows", "cols"]')
            entry = {"rows": entry[0], "cols": entry[1]}
        if not isinstance(entry, Mapping):
            raise SurveyError(where, 'must be ["rows", "cols"] or a table with rows and cols')
        _reject_unknown(entry, _CROSSTAB_KEYS, where)
        ids = []
        for key in ("rows", "cols"):
            qid = entry.get(key)
            if not isinstance(qid, str) or qid not in questions:
                raise SurveyError(f"{where}.{key}", f"{qid!r} is not a question of this survey")
            ids.append(qid)
        if ids[0] == ids[1]:
            raise SurveyError(where, "a crosstab needs two different questions")
        bins = []
        for key, qid in (("row_bins", ids[0]), ("col_bins", ids[1])):
            raw = entry.get(key)
            if raw is not None:
                questions[qid].unit.check_bins(questions[qid], f"{where}.{key}")
            if raw is not None and (not isinstance(raw, list) or not raw or any(
                    isinstance(v, bool) or not isinstance(v, int) for v in raw)):
                raise SurveyError(f"{where}.{key}", "must be a non-empty list of integers")
            bins.append(tuple(raw) if raw is not None else None)
        spec = CrosstabSpec(ids[0], ids[1], bins[0], bins[1])
        if servers is None:
            _check_crosstab(spec, questions, where)
        else:
            from .two_server.encoding import check_crosstab
            check_crosstab(spec, questions, where)
        if any(s.key == spec.key for s in specs):
            raise SurveyError(where, f"declares {ids[0]} x {ids[1]} twice")
        specs.append(spec)
    return tuple(specs)


def _question_where(data: Any, index: int) -> str:
    """Where a question's errors point: `questions.<id>` once its id parses (contract 1 of the
    brief: designers know their questions by id); `questions[<index>]` for the id itself."""
    if not isinstance(data, Mapping):
        raise SurveyError(f"questions[{index}]", "must be a table/object")
    qid = data.get("id")
    if not isinstance(qid, str) or not QUESTION_ID.fullmatch(qid):
        raise SurveyError(f"questions[{index}].id",
                          "must be 1-63 letters, digits, '_', '.' or '-'")
    return f"questions.{qid}"


def _parse_question(data: Any, where: str, size_limit: int | None = None,
                    collection: str = "ldp", earlier: Sequence[Question] = (),
                    later: Sequence[str] = ()) -> Question:
    """One question: the keys every type shares here, then its unit's `parse`."""
    if not isinstance(data, Mapping):
        raise SurveyError(where, "must be a table/object")
    from .two_server.config import TWO_SERVER, question_epsilons
    if collection == TWO_SERVER and fields.asks_directly(data):
        raise SurveyError(f"{where}.disclosed", "a two-server survey has no disclosed questions "
                          "(yet): ask them in an LDP survey, or drop disclosed")
    named = REGISTRY.get(data.get("type")) if isinstance(data.get("type"), str) else None
    if collection == TWO_SERVER and named is not None and named.two_server_refusal:
        raise SurveyError(f"{where}.type", named.two_server_refusal)
    if collection == TWO_SERVER and named is not None:
        for key, why in named.two_server_refused_keys.items():
            if data.get(key) is not None:
                raise SurveyError(f"{where}.{key}", why)
    central, local = question_epsilons(data, where, collection)
    if central is not None:
        return _two_server_question(data, where, size_limit, central, local, earlier, later)
    qtype = data.get("type")
    if not isinstance(qtype, str) or qtype not in QUESTION_TYPES:
        raise SurveyError(f"{where}.type",
                          f"unknown type {qtype!r}; expected one of {', '.join(QUESTION_TYPES)}")
    unit = unit_for(qtype)
    _reject_unknown(data, _COMMON_KEYS | unit.keys, where, qtype)
    qid = data.get("id")
    if not isinstance(qid, str) or not QUESTION_ID.fullmatch(qid):
        raise SurveyError(f"{where}.id", "must be 1-63 letters, digits, '_', '.' or '-'")
    text = _text(data, "text", f"{where}.text")
    relevance = skip_logic.parse_relevance(data, where, qid, qtype, earlier, later)
    skip: dict[str, Any] = {} if relevance is None else {
        "relevant": relevance.text, "condition": relevance.condition}
    hidden = relevance is not None and relevance.hidden  # skip logic: a "not asked" value
    special = fields.special(data.get("special"), f"{where}.special")
    if special and unit.special_refusal:
        raise SurveyError(f"{where}.special", unit.special_refusal)
    if special and fields.asks_directly(data):
        raise SurveyError(f"{where}.special", "a disclosed question takes no special values "
                          "(yet): its answer is sent as given; make it optional instead")
    question = unit.parse(Definition(data=data, where=where, id=qid, text=text,
                                     size_limit=size_limit, not_asked=hidden, skip=skip,
                                     build=Question, special=special))
    rule = parse_filter(data.get("filter"), where, question.options, earlier)
    if rule is not None:
        question = _replace(question, option_filter=rule)
    return _carried(question, data, where)


def _carried(question: Question, data: Mapping[str, Any], where: str) -> Question:
    """`carried = true`: the answer is the value the invitation carries (the device fills it
    in, the server checks it), so the question is a disclosed, required integer asked of
    everyone (no condition: the value exists for every invited respondent)."""
    value = data.get("carried", False)
    if value is False:
        return question
    if value is not True:
        raise SurveyError(f"{where}.carried", "must be true or false")
    if not question.disclosed:
        raise SurveyError(f"{where}.carried", "a carried value is known to the server (its "
                          "invitation holds it), so the question is disclosed: add "
                          "disclosed = true")
    if not question.unit.carriable:  # a whole number in min..max, read from the export
        raise SurveyError(f"{where}.carried", f"an invitation carries the value of integer "
                          f"questions only (got {question.type})")
    if question.optional:
        raise SurveyError(f"{where}.carried", "a carried value is filled in from the "
                          "invitation, never skipped: drop optional")
    if question.relevant is not None:
        raise SurveyError(f"{where}.carried", "a carried value is filled in from the "
                          "invitation for every respondent: drop relevant")
    return _replace(question, carried=True)


def _two_server_question(data: Mapping[str, Any], where: str, size_limit: int | None,
                         central: float, local: float | None,
                         earlier: Sequence[Question] = (), later: Sequence[str] = ()
                         ) -> Question:
    """A two-server question: with ε0 its local mechanism is parsed as an LDP question at ε0;
    without, it has mechanism "none" (the question's shape is checked the same way)."""
    from .two_server.config import check_local_mechanism

    plain = {k: v for k, v in data.items() if k not in ("central_epsilon", "local_epsilon")}
    if local is not None:
        if data.get("epsilon", local) != local:
            raise SurveyError(f"{where}.epsilon", "is the local ε0 here: drop it or make it "
                              "equal to local_epsilon")
        question = _parse_question({**plain, "epsilon": local}, where, size_limit, "ldp",
                                   earlier, later)
        if question.extended:  # a local report that is one index, with the extra values
            question = question.unit.local_not_asked(question, plain, where, local,
                                                     lambda d: _parse_question(
                                                         d, where, size_limit, "ldp", earlier,
                                                         later))
        check_local_mechanism(question.mechanism, where, question.type, question.extended)
        return _replace(question, central_epsilon=central, local_epsilon=local)
    if data.get("epsilon", central) != central or data.get("mechanism", "none") != "none" or (
            data.get("params") not in (None, {})) or "mechanism_choice" in data:
        raise SurveyError(f"{where}.mechanism", "a two-server question without local_epsilon "
                          'runs no local mechanism: drop mechanism, params and epsilon (or set '
                          "local_epsilon for ε0-LDP against colluding servers)")
    shape = {k: v for k, v in plain.items() if k not in ("epsilon", "mechanism", "params")}
    question = _parse_question({**shape, "epsilon": 1.0}, where, size_limit, "ldp", earlier,
                               later)
    if question.instantaneous_epsilon is not None:
        raise SurveyError(f"{where}.instantaneous_epsilon", "a two-server survey has no series")
    question.unit.check_two_server_question(question, where)
    return _replace(question, epsilon=central, mechanism="none", mechanism_choice=None,
                    params={}, central_epsilon=central)


def _replace(question: Question, **changes: Any) -> Question:
    from dataclasses import replace

    return replace(question, **changes)


def _reject_unknown(data: Mapping, allowed: set[str], where: str, qtype: str | None = None) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        context = f" for a {qtype} question" if qtype else ""
        raise SurveyError(f"{where}.{unknown[0]}", f"unknown key{context}")


def _slug(data: Mapping, key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not SLUG.fullmatch(value):
        raise SurveyError(where, "must be a slug: 1-64 lowercase letters, digits, '-' or '_'")
    return value
