"""The interface of a question-type unit: what every path may ask of a question's type.

One instance per type (`shared/question_types/__init__.py` registers them); every method takes
the parsed question (`shared/survey.Question`) it is asked about, so a unit holds no state.
Properties every unit handles the same way are arguments, not parallel types: a question may be
`disclosed` (sent as given, no mechanism), have a "not asked" value (skip logic that reads a
randomized answer, the last of its `labels`), or offer special values (`special`: "Don't know",
"Prefer not to say"), extra values of the domain the respondent chooses, randomized with the
answers and estimated with the same machinery as "not asked" (`extra_values`).

Each path's part of the interface sits in its own section below, in the base class and in each
unit, so that the paths' needs stay readable side by side (Django's model `Field` does the
same for the database, forms and serialization).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, NoReturn, Protocol

import numpy as np

from ..errors import AnalysisError, AnswerError, SurveyError
from .packed import PackedReports

NOT_ASKED = "(not asked)"  # the domain value of a question that did not apply (skip logic)
# Options of a question with a "not asked" value, that value included: its share among those
# asked is computed from the k x K estimator matrix of its index reports.
MAX_NOT_ASKED_OPTIONS = 1025


@dataclass(frozen=True)
class Definition:
    """One question's table as the schema hands it to its unit: shared/survey.py has checked
    the common keys (type, unknown keys, id, text, `relevant`) and the unit parses the rest."""

    data: Mapping[str, Any]
    where: str                  # where its errors point: "questions.<id>"
    id: str
    text: str
    size_limit: int | None      # the survey's report_size_limit (None: the default)
    not_asked: bool             # its condition reads a randomized answer (skip logic)
    skip: Mapping[str, Any] = field(default_factory=dict)  # relevant + parsed condition
    # The question class (shared/survey.Question), passed so that a unit need not import the
    # schema that imports it.
    build: Callable[..., Any] = dict
    # Special values (name -> label: "Don't know", "Prefer not to say"), {} without
    # (fields.special): extra values of the domain, after the answers, before "not asked".
    special: Mapping[str, str] = field(default_factory=dict)

    @property
    def extended(self) -> bool:
        """The domain has values beyond the answers (special values, "not asked"): its
        mechanism is one that carries them (`not_asked_mechanism`)."""
        return self.not_asked or bool(self.special)


def special_labels(question: Any) -> tuple[str, ...]:
    """The labels of a question's special values, in the order declared (none without)."""
    return tuple((getattr(question, "special", None) or {}).values())


def extra_values(question: Any) -> tuple[str, ...]:
    """The values of a question's domain beyond its answers, in domain order: its special
    values' labels, then NOT_ASKED where it has that value. Estimates "among those who gave
    an answer" (among those asked, where there are no special values) leave them out."""
    hidden = (NOT_ASKED,) if getattr(question, "not_asked", False) else ()
    return (*special_labels(question), *hidden)


def check_not_asked_domain(options: Sequence[str], where: str,
                           special: Mapping[str, str] | None = None) -> None:
    """A question with a "not asked" value or special values: those values are not among its
    labels, and the domain stays within MAX_NOT_ASKED_OPTIONS."""
    special = special or {}
    if NOT_ASKED in options:
        raise SurveyError(f"{where}.options", f"{NOT_ASKED!r} is the value a question that did "
                          "not apply is sent as: rename this option")
    for name, label in special.items():
        if label == NOT_ASKED or label in options:
            raise SurveyError(f"{where}.special.{name}", f"{label!r} is already a value of "
                              "this question: a special value needs a label of its own")
    extra = len(special) + 1
    if len(options) + extra > MAX_NOT_ASKED_OPTIONS:
        raise SurveyError(f"{where}.options", f"a question with special values or that depends "
                          f"on randomized answers takes at most "
                          f"{MAX_NOT_ASKED_OPTIONS - extra} options")

# The charts a report draws (QuestionType.chart).
BARS, DISTRIBUTION, MAP = "bars", "distribution", "map"
MEAN_ROW = "mean"  # a report row's name of a mean (QuestionType.mean_row_label)
# How a design-based report makes the extra row from the options (QuestionType.design_mean).
SCORES, OPTIONS_SUM = "scores", "options sum"
DESIGN_CROSSTAB_REFUSAL = ("design-based crosstabs take yes/no, categorical, ordinal and integer "
                           "(binned) questions; {qid!r} is {type}")


class QuestionType:
    """One question type. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    """The `type` a survey definition names."""
    keys: ClassVar[frozenset[str]] = frozenset()
    """Definition keys this type takes beyond the common ones (id, text, epsilon, ...)."""
    domain_field: ClassVar[str] = "options"
    """The definition field a misfit of the answer domain names (`questions.<id>.<field>`)."""

    # --- definition and answers (the schema: shared/survey.py) -----------------------------
    # What a respondent may answer, and the canonical form that is signed.

    def values(self, question: Any) -> Sequence[Any]:
        """The answer values in domain order, without "not asked"."""
        return question.options

    def labels(self, question: Any) -> Sequence[Any]:
        """The values estimates name, in domain order: `values`, then the special values'
        labels and NOT_ASKED where the question has them (`extra_values`)."""
        values = self.values(question)
        extra = extra_values(question)
        return (*values, *extra) if extra else values

    def k(self, question: Any) -> int:
        """The size of the answer domain ("not asked" included)."""
        return len(self.labels(question))

    def canonical(self, question: Any) -> dict[str, Any]:
        """This type's keys of the canonical dict (shared/survey.Question.to_dict)."""
        return {}

    described: ClassVar[str] = "a question"
    """The type in a designer's words ("a yes/no question"), for errors that name it."""
    numeric: ClassVar[bool] = False
    """The answer is a number: its estimates are of its mean, and a crosstab bins it."""
    carriable: ClassVar[bool] = False
    """An invitation may carry the answer (`carried = true`, docs/sensitive-module.md): a whole
    number in min..max, read from the main survey's export as text."""
    condition_operand: ClassVar[str | None] = None
    """How a condition (shared/conditions.py) reads the answer: the operand kind ("bool",
    "int", "text"), "set" (through selected() and count_selected() only), or None (a
    condition cannot read it)."""
    ordered: ClassVar[bool] = False
    """The options are in order: a condition orders the answers by option position (<, <=,
    >, >= against one of its labels or an answer with the same options), and its errors name
    the answer "an ordinal answer"."""
    filter_reads: ClassVar[bool] = False
    """The answer is one or several of the question's options, which a later categorical
    question's `filter` may follow (shared/option_filter.py: cascading options)."""
    named_sets_key: ClassVar[str | None] = None
    """The definition key of the type's named sets of options a report also estimates
    ("groups", "regions"; None: it has none), which a translation may name."""
    two_server_refusal: ClassVar[str | None] = None
    """Why a two-server survey refuses the type (None: it takes it)."""
    two_server_refused_keys: ClassVar[Mapping[str, str]] = {}
    """Definition keys a two-server survey refuses for this type, each with why."""
    auto_not_asked: ClassVar[tuple[str, ...]] = ()
    """The mechanisms `auto` ranks for the question with a "not asked" value (skip logic)."""
    named_not_asked: ClassVar[tuple[str, ...]] = ()
    """The mechanisms such a question may name: they carry the "not asked" value."""

    special_refusal: ClassVar[str | None] = (
        "this question type takes no special values (don't know, prefer not to say)")
    """Why the type refuses `special` (None: it takes special values, extra values of its
    domain every unit that takes them handles alike)."""

    def parse(self, definition: Definition) -> Any:
        """The parsed question (shared/survey.Question, `auto` resolved, its mechanism's ε
        proven) from its table; SurveyError naming `questions.<id>.<field>`."""
        raise NotImplementedError

    def declared_cells(self, data: Mapping[str, Any]) -> int:
        """Location cells a raw (unparsed) definition declares, for the survey-wide cap."""
        return 0

    def check_hidden_condition(self, at: str, reads: str) -> None:
        """Refuse a condition that reads randomized answers (`reads`) if the type cannot
        carry a "not asked" value."""

    def check_bins(self, question: Any, where: str) -> None:
        """A crosstab's bins (`where`: crosstabs[i].row_bins) apply to numeric answers."""
        if not self.numeric:
            raise SurveyError(where, f"bins apply to integer questions; {question.id!r} "
                              f"is {self.name}")

    def translatable_options(self, question: Any) -> tuple[str, ...]:
        """The option labels a translation may give text for (those that are the designer's
        words)."""
        return tuple(question.options)

    def scores(self, question: Any) -> Sequence[float] | None:
        """The options' scores where the type reads a mean score of them (None: it does
        not)."""
        return None

    def disclosed_value(self, question: Any, report: Any) -> Any:
        """A disclosed question's answer from its (normalized) report."""
        return question.options[int(report)]

    # Mechanisms and `auto` (shared/mechanisms): the criterion a choice minimizes, the choice,
    # and the variants for a disclosed question and a "not asked" value.

    auto_criterion: ClassVar[str] = "averaged over options"
    """What `auto`'s variance is of, in its reason."""

    def selection_variance(self, cls: Any, k: int, epsilon: float) -> float | None:
        """What `auto` minimizes for mechanism `cls` (None: not derived for it)."""
        return cls.average_variance(k, epsilon)

    def margin_variance(self, cls: Any, k: int, epsilon: float) -> float | None:
        """The one-report variance a margin of error must cover (worst case over options and
        truth)."""
        return cls.worst_case_variance(k, epsilon)

    def candidates(self, k: int, epsilon: float, size_limit: int, low: int = 0,
                   layered: bool = False) -> list[tuple[float, str]]:
        """(variance, name) of the registered (k, ε) mechanisms that fit, best first (none
        for a type whose mechanisms are built otherwise)."""
        return []

    def choose_mechanism(self, question: Any, size_limit: int, where: str) -> tuple[str, str]:
        """(name, reason) of the mechanism `auto` picks; SurveyError naming the field."""
        raise SurveyError(f"{where}.mechanism",
                          f"no mechanism fits a {self.name} question with k={question.k} "
                          f"at epsilon={question.epsilon:g} under the {size_limit}-byte "
                          f"report limit")

    def plain_mechanism(self, question: Any) -> Any:
        """The mechanism of a randomized question without a "not asked" value, for a type
        whose mechanisms are built on something else than its labels (the decimal's grid
        and scale); None (the default): the registered class its `mechanism` names, built
        from the question (shared/mechanisms/registry.mechanism_for, which asks this)."""
        return None

    def disclosed_mechanism(self, question: Any) -> Any:
        """The identity channel of the disclosed question (shared/mechanisms/disclosed.py)."""
        from ..mechanisms.disclosed import Disclosed

        return Disclosed.from_question(question)

    def not_asked_mechanism(self, question: Any) -> Any:
        """The mechanism of the question with a "not asked" value (its domain holds it)."""
        raise NotImplementedError

    def choose_not_asked_mechanism(self, question: Any, size_limit: int, where: str
                                   ) -> tuple[str, str]:
        """(name, reason) `auto` picks for the question with a "not asked" value."""
        raise NotImplementedError

    def takes_mechanism(self, cls: Any) -> bool:
        """Whether a question of this type may name mechanism `cls` (`mechanism = "..."`):
        the types the mechanism says it serves. A type may take more by name than `auto`
        ranks (the integer's mean mechanisms, shared/question_types/integer.py)."""
        return self.name in cls.question_types

    def check_not_asked_mechanism(self, question: Any, name: str, where: str) -> None:
        """A named mechanism must carry the "not asked" value (`named_not_asked`)."""
        if name not in self.named_not_asked:
            raise SurveyError(f"{where}.mechanism", f"{name!r} cannot carry the 'not asked' "
                              f"value this question has (it depends on randomized answers); "
                              f"use auto or one of: {', '.join(self.named_not_asked)}")

    def local_not_asked(self, question: Any, plain: Mapping[str, Any], where: str,
                        local: float, parse: Callable[[Mapping[str, Any]], Any]) -> Any:
        """A two-server question with a local ε0 and a "not asked" value, its local report
        as the two-server measurement reads it (shared/skip_logic.local_not_asked)."""
        return question

    def check_two_server_question(self, question: Any, where: str) -> None:
        """Limits of the type in a two-server survey, once parsed (mechanism "none")."""

    def asked_mean_variances(self, question: Any, asked: float
                             ) -> tuple[tuple[str, float], tuple[str, float]]:
        """A number with a "not asked" value, for a plan of its mean among those asked when a
        share `asked` is asked: ((its not-asked mechanism, the worst-case one-report variance
        of that mean), (its plain mean mechanism, the same had its condition read disclosed
        answers only, with the same (Δ/2)² sampling spread among those asked)), in grid
        steps²."""
        raise NotImplementedError(f"{self.name} has no mean among those asked")

    # --- estimates and reports (shared/estimand.py, the report paths) ---------------------
    # What the estimates mean, and the rows and notes every report shows.

    overlapping: ClassVar[bool] = False
    """The options' shares are shares of respondents that overlap (a set answer), not a
    distribution that sums to 1."""
    mean_label: ClassVar[str | None] = None
    """The extra row a report shows after the option rows (None: no extra row)."""

    def notes(self, question: Any, consistency: str) -> list[str]:
        """The type's notes every report shows for `question` (`consistency`: how its
        'consistent' column is made, shared/estimand.py)."""
        return []

    # `numeric` (the schema's section): the report paths read it too, a regression takes the
    # number itself (a linear outcome, a value covariate, never a latent one), a `--by`
    # grouping and a design-based crosstab side bin it, a calibration takes its total, and
    # its "not asked" value is the mechanism's (the share not asked, the mean among those
    # asked).
    chart: ClassVar[str] = BARS
    """The chart a report draws of the estimates: BARS (a bar per option and group),
    DISTRIBUTION (the values' shares and the mean) or MAP (a heat map over a grid)."""
    design_mean: ClassVar[str | None] = None
    """How a design-based report makes the extra row (`mean_label`) from the options'
    pseudo-values: SCORES (the options scored 1..k: a column of its own, also among those
    asked; a total of scores counts nothing), OPTIONS_SUM (the sum of the options' shares,
    and of their totals: the selections made in the population; among those asked a column
    like a group's, named `mean_label`), or None (no such row; a numeric question's mean is
    its own pseudo-value)."""
    headline_option: ClassVar[str | None] = None
    """The option row (as a report labels it) that speaks for the question in a summary
    (None: its largest option)."""

    def design_omissions(self, question: Any) -> list[str]:
        """Notes a design-based report adds for what the plain report of `question` estimates
        and it does not (an estimate not linear in the reports has no pseudo-values to
        weight): said plainly rather than left out silently."""
        return []

    def mean_row_label(self, question: Any) -> str:
        """How a report's row names the extra row over everyone (`mean` of the estimate
        document): 'mean' unless the type says what its mean counts (an ordinal question's
        mean score reads 'mean' there: its note says how the options are scored)."""
        return MEAN_ROW

    def asked_mean_row_label(self, question: Any, options: Sequence[str]) -> str:
        """How a report's row names the mean among those asked (skip logic), given the option
        labels among those asked: 'mean' unless the type's mean is of something else."""
        return MEAN_ROW

    def option_texts(self, question: Mapping[str, Any]) -> Sequence[str]:
        """The option labels that are words the survey's languages translate (`report --lang`),
        of the definition a stored document holds; none where the labels are yes/no, numbers
        or cells."""
        return ()

    def group_texts(self, question: Mapping[str, Any]) -> Mapping[str, Sequence[str]]:
        """The named groups of options (name -> members) that a report shows as group rows
        and the survey's languages name (`report --lang`), of a stored definition."""
        return {}

    def value_label(self, question: Any, value: Any) -> str:
        """An answer value as a report row, a regressor or a cell names it."""
        return str(value)

    def data_value(self, question: Any, report: Any) -> Any:
        """A disclosed answer (its checked report) as a data file holds it (`export`, a
        frame's key): its label as a report names it (yes/no, the option; "not asked" too),
        the number itself for a number (`disclosed_value` is the answer a condition reads)."""
        return str(question.labels[int(report)])

    def disclosed_texts(self, question: Any, reports: np.ndarray) -> np.ndarray:
        """Disclosed answers (checked reports) as text, vectorized: `data_value` of each, as a
        string."""
        labels = np.asarray([str(label) for label in question.labels])
        return labels[np.asarray(reports).astype(np.int64)]

    def regression_refusal(self, question: Any) -> str | None:
        """Why the question can be neither an outcome nor a covariate of a regression (None:
        it can be)."""
        return None

    def modelled_level(self, question: Any, level: str | None) -> tuple[int, str]:
        """The option a logistic regression models against the rest, from the analyst's
        `level`: (its index, its label); AnalysisError when `level` does not name one."""
        if level is None:
            raise AnalysisError(f"{question.id!r} has {question.k} options: name the one to "
                                f"model against the rest (level; one of "
                                f"{list(question.options)})")
        if level not in question.options:
            raise AnalysisError(f"level {level!r} is not an option of {question.id!r} "
                                f"({list(question.options)})")
        return question.options.index(level), level

    def design_crosstab_refusal(self, question: Any) -> str | None:
        """Why a design-based crosstab cannot take the question as a side (None: it takes its
        options, or for a numeric question its bins)."""
        return None

    def crosstab_group_note(self, qid: str, group: str) -> str:
        """A crosstab's note on a side that is one of the question's groups against the
        rest."""
        return (f"{qid}:{group}: the group's options summed, report by report (X_G = sum of "
                "X_a over the group), against the rest")

    def survey_warnings(self, question: Any) -> list[str]:
        """What a designer should hear about the question before respondents find out (`plan`
        and `publish` print each, a line starting 'warning:')."""
        return []

    # --- plan and simulate (analyst/plan, analyst/simulate) -------------------------------
    # `plan` and `simulate` keep the arithmetic every type shares (respondents for a margin,
    # randomizing in chunks, coverage); the unit says which kind of answer its type has (so
    # which rows a plan or a simulation gives it), in what units and words, and how its true
    # answers are drawn. Simulation only: numpy Generators seeded by the simulation, never what
    # a device sends (question_types/truth.py, imported inside these methods so that a device
    # does not load it).

    answer_word: ClassVar[str] = "option"
    """What a simulation's table calls one answer of this type."""
    fixed_k: ClassVar[int | None] = None
    """How many answers every question of this type has (None: its definition says), which
    `plan --k` must match."""

    def visit(self, question: Any, path: Any) -> Any:
        """The handler `path` has for this type's kind of answer, called with `question`:
        `path.options` (one of a list of options), `path.number` (a whole number in a range),
        `path.option_set` (a set of options) or `path.cell` (a cell of a grid). How a kind of
        answer is planned or simulated (its rows, its tallies) is the path's mechanics; which
        kind a type's answer is, and so which rows its question gets, is the type's."""
        return path.options(question)

    def planned_auto(self, question: Any) -> tuple[str, str] | None:
        """(mechanism, reason) `auto` picks among a plan's rows for this survey question where
        the question tells auto more than its type, k and ε (a plan ranks a probe of those):
        a number's estimates and its designer's `typical` range. None: the probe's choice is
        the question's."""
        return None

    def margin_unit(self, question: Any) -> str:
        """What a plan's margin of error for `question` is on: "proportion" (one option's
        share, in percentage points), "answer units" (the mean of a number) or "score" (the
        mean score of ordered options); a question with a "not asked" value is planned among
        those asked."""
        return "proportion"

    def shares_planned_as(self) -> str:
        """The type whose mechanisms' ranking plans one option's share of this type's question
        (`plan --compare-modes`, a "not asked" question planned among those asked)."""
        return self.name

    def score_origin(self, question: Any) -> int | None:
        """The number answer index 0 counts as in the mean of `question`'s answers, each later
        index one more (a simulation's true mean is origin + mean index); None where the
        answers are not numbers (no mean of them)."""
        return None

    def default_truth(self, question: Any) -> Any:
        """The built-in skewed truth a simulation draws `question`'s answers from (an object
        with `draw(size, rng)`: answer indices, or an (n, k) boolean matrix of sets)."""
        from .truth import zipf_truth

        return zipf_truth(question.k)

    def mean_step(self, question: Any) -> float | None:
        """The answer's units in one unit of the plan's margin on `question`'s mean, where the
        plan is not in the answer's units (a decimal's grid step, its resolution); None where
        it is (an integer's mean) or the plan is on shares or scores."""
        return None

    def distribution_mechanism(self, question: Any) -> Any:
        """The mechanism whose reports estimate `question`'s distribution and median (one with
        the square wave's exact window channel: `d`, `window`, `p_cell`, `q_cell`, `cells`, and
        `scale` for the question's units), or None where the question has no median to plan
        (`plan --median-margin`, analyst/plan/median.py)."""
        return None

    def parse_truth(self, question: Any, dist: Any, where: str) -> Any:
        """The truth a --truth file gives for `question` (`dist`, its JSON value); the errors
        name `where` (`truth.<id>`) and the key."""
        from .truth import index_truth

        return index_truth(dist, lambda key, at: self.truth_index(question, key, at), where)

    def truth_index(self, question: Any, key: Any, where: str) -> int:
        """The answer index a --truth file's key names (SimulationError naming `where`)."""
        from .truth import option_index

        return option_index(question.options, key, where)

    def row_shares(self, question: Any, shares: Any) -> Any:
        """The true share of each row an estimate lists (a simulation's truth), from the
        answers' shares in domain order: those shares (a row per value), unless the type's
        rows group values (a decimal's bins)."""
        return shares

    def mean_of_indices(self, question: Any, mean_index: float) -> float | None:
        """The mean of answers whose indices average `mean_index`, in the answer's units
        (a simulation's true mean): `score_origin` + mean index, each index one more; None
        where the answers are not numbers."""
        origin = self.score_origin(question)
        return None if origin is None else origin + mean_index

    def simulated_answer(self, question: Any, drawn: Any) -> Any:
        """A drawn answer index (or set row) as the answer a respondent gives (the demo)."""
        return question.options[int(drawn)]

    def condition_values(self, question: Any, index: Any) -> Any:
        """What skip conditions read of `question`'s drawn answer indices (a numpy array), as
        the device holds the answer (shared/conditions.py): the option labels (an ordinal
        one's too: a condition orders them by position itself); a simulation evaluates
        `relevant` on them (analyst/simulate/skip.py)."""
        import numpy as np

        return np.asarray(question.options, dtype=object)[index]


    # --- two-server measurement (shared/two_server) ---------------------------------------
    # How the answer (or the device's local report) is measured as one Prio3 report. The unit
    # chooses the circuit and its parameters; `measure` (shared/two_server/encoding.Measure,
    # the path's Prio3 circuits for one question, as Django hands `db_type` its connection)
    # builds it. Noise plans, estimators and crosstab cells follow from that choice, so the
    # path asks no question's type. A unit imports nothing of the path (layering).

    two_server_local_mechanisms: ClassVar[tuple[str, ...]] = (
        "binary_rr", "grr", "ordinal_exp", "geometric")
    """The local mechanisms that may run on the device before a two-server upload: their report
    is one value (an index of the same domain or a bool, measured as a Count or a Histogram;
    `geometric` an integer, clipped and summed)."""
    two_server_crossable: ClassVar[bool] = False
    """Whether a declared two-server crosstab may join this question: its measurement is one
    of its k values, so a pair of answers is one cell of a k1·k2 Histogram."""
    two_server_cross_refusal: ClassVar[str | None] = None
    """Why a declared two-server crosstab does not join this (uncrossable) type, where there is
    more to say than the types it does join: the refusal's one line."""
    two_server_value_rows: ClassVar[str] = "categories"
    """The estimate field that holds a two-server "not asked" question's value rows over
    everyone: "categories", or "distribution" where the estimate is the values' mean."""

    def check_two_server_local_mechanism(self, mechanism: str, where: str,
                                         not_asked: bool) -> None:
        """SurveyError (at `<where>.mechanism`) unless `mechanism` may run on the device before
        a two-server upload of this type: its report must be one measurement."""
        if mechanism not in self.two_server_local_mechanisms:
            raise SurveyError(f"{where}.mechanism", f"{mechanism!r} cannot run before a "
                              f"two-server upload: its report is not one value; use one of "
                              f"{', '.join(self.two_server_local_mechanisms)}")

    def two_server_encoding(self, question: Any, measure: Any) -> Any:
        """The Prio3 encoding of the question's (local report or) answer, built by `measure`:
        here a Histogram over its k values ("not asked", where it has one, the last cell)."""
        return measure.histogram(self.k(question))

    def two_server_answer(self, question: Any, value: Any, measure: Any) -> Any:
        """The measurement of a true answer (AnswerError if it is not one): its option index;
        a special value's label or "not asked", where the question has them, is its cell
        after the answers' (`two_server_extra_cell`)."""
        extra = self.two_server_extra_cell(question, value)
        if extra is not None:
            return extra
        if value not in question.options:
            raise AnswerError(f"{value!r} is not an option of {question.id!r}")
        return question.options.index(value)

    def two_server_extra_cell(self, question: Any, value: Any) -> int | None:
        """The Histogram cell of an extra value (a special value's label, "not asked": the
        cells after the answers', in `extra_values` order), or None if `value` is not one."""
        extra = extra_values(question)
        if isinstance(value, str) and value in extra:
            return len(self.values(question)) + extra.index(value)
        return None

    def two_server_labels(self, question: Any) -> tuple[Any, ...]:
        """The values a Count or Histogram measurement's cells stand for, in cell order."""
        return tuple(self.labels(question))

    def two_server_asked_functionals(self, question: Any
                                     ) -> list[tuple[str, Any, list[float]]]:
        """What a two-server question with extra values (special values, "not asked")
        estimates among those who answered, as linear functionals of its answers' shares:
        ("option", label, weights) per value, ("group", name, weights) per group,
        ("mean", None, weights) for a mean row."""
        labels = self.two_server_labels(question)
        values = labels[:len(labels) - len(extra_values(question))]
        k = len(values)
        out: list[tuple[str, Any, list[float]]] = [
            ("option", label, [1.0 if i == j else 0.0 for i in range(k)])
            for j, label in enumerate(values)]
        for name, members in (question.group_indices() if question.groups else {}).items():
            chosen = set(members)
            out.append(("group", name, [1.0 if i in chosen else 0.0 for i in range(k)]))
        return out

    # --- on the device: answering and review words (client/) ------------------------------
    # How `respond` asks for an answer of this type on the terminal, and how the review and
    # the receipts name its answers and reports. The words are the page's messages, asked of
    # `words` (DeviceWords / TerminalWords below: client/ renders them in the respondent's
    # language and knows the survey's text in it); the few the command line says only in
    # English are written here. The defaults are those of a question answered with one
    # option of its list (categorical, ordinal); a mechanism's own sentences stay client/'s.

    def answer_words(self, question: Any, answer: Any, words: DeviceWords) -> str:
        """A true answer as the respondent chose it (the page's answerText): the option, by
        its text in the language shown."""
        return words.option(question, answer)

    def value_words(self, question: Any, value: Any, words: DeviceWords,
                    as_report: bool = False) -> str:
        """One value of the answer domain as the review quotes it (a named design's reports,
        the values of a question with "not asked": “fine”), or, `as_report`, as a report
        that names it reads ("the option “fine”"). "Not asked" is the caller's to say."""
        quoted = words.t("word.quoted", text=words.option(question, value))
        return words.t("mech.option", option=quoted) if as_report else quoted

    def randomized_response_chances(self, question: Any, answer: Any, p: float, q: float,
                                    words: DeviceWords) -> str:
        """What randomized response (binary_rr, grr) will send for `answer`: the answer
        itself with probability `p`, each other value with probability `q`."""
        return words.t("review.grr", answer=self.value_words(question, answer, words),
                       p=words.percent(p), others=len(question.options) - 1,
                       q=words.percent(q))

    def device_chances(self, question: Any, mechanism: Any, answer: Any,
                       words: DeviceWords) -> str | None:
        """What the device will send for `answer`, in the type's own words, for a type whose
        mechanisms the client's general wording does not cover (a decimal's grid); None: the
        client says it by its mechanism (client/review.py, client/review_words.py)."""
        return None

    def report_words(self, question: Any, report: Any, words: DeviceWords) -> str | None:
        """A report in this type's own words (a yes or no, a number); None where the
        mechanism's general wording says it (an option's index, marks, a code)."""
        return None

    def canonical_answer(self, question: Any, mechanism: Any, answer: Any) -> Any:
        """The one form of an answer, however it was given: the same answer is one answer
        (a series memoizes, and the ledger charges, per distinct answer)."""
        return answer

    def device_answer(self, question: Any, answer: Any) -> Any:
        """The answer as the device keeps it, before its mechanism checks it: as given, unless
        the type keeps answers to a grid (a decimal rounds to its resolution, half up; one
        outside its range is refused, AnswerError)."""
        return answer

    def terminal_prompt(self, question: Any, words: TerminalWords) -> tuple[list[str], str]:
        """What `respond` prints before asking (one line per option: "[2] fine") and the
        hint it asks with."""
        listed = [f"[{n}] {words.listed(question, label)}"
                  for n, label in enumerate(question.options, 1)]
        k = len(question.options)
        if not words.english:
            return listed, f"{words.t('form.chooseOne')} (1-{k})"
        return listed, f"choice 1-{k}"

    def parse_typed(self, question: Any, typed: str, words: TerminalWords) -> Any:
        """The answer typed on the terminal (stripped): an option's number, its label, or
        its text in the language shown; AnswerError if it names none."""
        typed = words.typed_option(question, typed)
        if typed in question.options:
            return typed
        k = len(question.options)
        if typed.isdigit() and 1 <= int(typed) <= k:
            return question.options[int(typed) - 1]
        raise AnswerError(f"choose 1-{k} or type an option exactly" if words.english
                          else f"{words.t('form.choose')} (1-{k})")

    # Special values ("Don't know", "Prefer not to say": `special`) on the terminal, the same
    # for every type (not overridden): listed after the type's own prompt, typed by label,
    # name or text in the language shown; anything else is the type's to parse.

    def terminal_prompt_with_special(self, question: Any, words: TerminalWords
                                     ) -> tuple[list[str], str]:
        """`terminal_prompt`, then one line per special value ("or type: Don't know")."""
        listed, hint = self.terminal_prompt(question, words)
        special = special_labels(question)
        if not special:
            return listed, hint
        return ([*listed, *(f"[{words.listed(question, label)}]" for label in special)],
                hint + (" or one of the answers in brackets" if words.english else ""))

    def parse_typed_or_special(self, question: Any, typed: str, words: TerminalWords) -> Any:
        """A special value (its label, its name, or its text in the language shown, in any
        case), else `parse_typed`."""
        special = getattr(question, "special", None) or {}
        said = typed.casefold()
        for name, label in special.items():
            if said in (label.casefold(), name.casefold(),
                        str(words.option(question, label)).casefold()):
                return label
        return self.parse_typed(question, typed, words)

    # --- XLSForm import (analyst/xlsform_import) ------------------------------------------
    # Which XLSForm rows become a question of this type, the keys it takes from them, and
    # how the conditions of later rows (relevant) read its answer. The import's mechanics
    # (cells, constraints, choice lists, refusals, the condition language's quoting) are
    # asked of `row` and `conditions` (XLSFormRow, XLSFormConditions below, implemented in
    # analyst/xlsform_import); what is decided per type is here. The defaults are those of
    # a select_one of unordered options.

    xlsform_types: ClassVar[tuple[str, ...]] = ()
    """The XLSForm question types (as the import sorts them: select_one, select_multiple,
    integer, range) whose rows may become a question of this type; none: not imported."""

    def xlsform_rank(self, row: XLSFormRow) -> int | None:
        """Whether a row of one of `xlsform_types` whose ldp_type cell names no type becomes
        a question of this type: None if not, else how specifically it says so (the lowest
        rank of the types that take it wins: BY_APPEARANCE, BY_CHOICES, ANY_ROW)."""
        return ANY_ROW

    def xlsform_misfit(self, row: XLSFormRow) -> tuple[str, str] | None:
        """(reason, what to write instead) when an ldp_type cell names this type for a row
        that cannot be one; None when it can."""
        return None

    def from_xlsform(self, row: XLSFormRow) -> XLSFormKeys:
        """This type's keys of the question a row becomes (its options, its bounds), and what
        a condition reading it needs; the row's problems are refused through `row`."""
        return XLSFormKeys({"options": list(row.labels.values()), **row.no_constraint()},
                           choices=row.labels)

    def xlsform_optional(self, required: bool) -> bool:
        """Whether a row that is (not) `required` becomes an optional question (one that may
        be left unanswered)."""
        return not required

    def xlsform_selected(self, target: Any, name: str, conditions: XLSFormConditions) -> Any:
        """`selected(${q}, 'name')` on a question of this type, translated."""
        return conditions.option(target, "==", name)

    def xlsform_compare(self, target: Any, op: str, value: Any,
                        conditions: XLSFormConditions) -> Any:
        """`${q} op value` (value: a string or number node, '' aside), translated."""
        name = conditions.name(value)
        if op in ("==", "!="):
            return conditions.option(target, op, name)
        return conditions.ordered(target, op, value)

    def xlsform_count_selected(self, target: Any, op: str, value: Any,
                               conditions: XLSFormConditions) -> Any:
        """`count-selected(${q}) op value`, translated."""
        return conditions.not_countable(target)

    def xlsform_answered(self, target: Any, op: str, conditions: XLSFormConditions) -> Any:
        """`${q} != ''` (answered) or `${q} = ''` (not), translated."""
        return conditions.answered(target, op)

    def mean_range(self, question: Any) -> int | None:
        """The width of the answers' range that a mean is estimated in (`plan
        --mean-margin` is in its units; the import suggests a twentieth of the widest);
        None: no mean in the answers' own units."""
        return None

    # --- stored report columns (server/store, server/report_columns.py) -------------------

    def packed_reports(self, question: Any, mechanism: Any) -> PackedReports | None:
        """How the store packs this question's reports into a submission's binary row, so that
        a report reads its column with numpy instead of parsing JSON (shared/question_types/
        packed.py); None: its reports stay in the JSON text only. Default: integers of 8 bytes
        (a report that is not made of integers does not pack, and its version is read from the
        JSON), 0/1 support bits packed as one integer's bits."""
        return PackedReports.integers(mechanism, "<i8")


class DeviceWords(Protocol):
    """The words a unit says on the respondent's device, in the respondent's language
    (client/page_words.Speaker): the page's message catalogue, and the survey's text."""

    @property
    def english(self) -> bool:
        """Whether the words are English (the command line's own English sentences)."""
        ...

    def t(self, key: str, **params: Any) -> str:
        """The page's message `key` filled in (client/web/js/messages)."""
        ...

    def option(self, question: Any, label: Any) -> str:
        """An option by its text in the language shown (its label where none is shown)."""
        ...

    def percent(self, p: float) -> Any:
        """A probability as a message's argument ("12.5%", written as the language does)."""
        ...

    def number(self, text: str) -> Any:
        """A number (its plain decimal text, "1234.5") as a message's argument, written as the
        language does."""
        ...


class TerminalWords(DeviceWords, Protocol):
    """DeviceWords for asking on the terminal (`respond`): what a respondent types, and
    the survey's text as listed (client/survey_language.Terminal)."""

    def yes_no(self, typed: str) -> bool | None:
        """A typed yes or no in English or the language ("sí"); None when it is neither."""
        ...

    def yes_no_hint(self) -> str:
        """"yes/no" in the language."""
        ...

    def listed(self, question: Any, label: Any) -> str:
        """An option as listed: its text in the language shown, marked where it falls
        back."""
        ...

    def region(self, question: Any, name: str) -> str:
        """A region's name as listed, marked where it falls back."""
        ...

    def typed_option(self, question: Any, typed: str) -> str:
        """The label an option's text in the language shown names (else `typed`)."""
        ...

    def typed_region(self, question: Any, typed: str) -> str:
        """The region a region's name in the language shown names (else `typed`)."""
        ...

    def encode(self, question: Any, answer: Any) -> int:
        """The index the question's mechanism gives `answer` (AnswerError for none)."""
        ...


# How specifically an XLSForm row says it is of a type (QuestionType.xlsform_rank).
BY_APPEARANCE, BY_CHOICES, ANY_ROW = 0, 1, 2


@dataclass(frozen=True)
class XLSFormKeys:
    """What a unit makes of an XLSForm row (QuestionType.from_xlsform)."""

    keys: dict[str, Any]
    """This type's keys of the question, in the order written (options, bounds)."""
    choices: Mapping[str, str] = field(default_factory=dict)
    """XLSForm choice name -> the option label a condition compares with."""
    yes: str = ""
    """A yes/no list's choice names: the one read as true, the one read as false."""
    no: str = ""


@dataclass(frozen=True)
class XLSFormRange:
    """The two-sided range of a number an XLSForm row writes (XLSFormRow.number_range), read
    exactly: a range row's start, end and step, or a decimal or integer row's constraint
    (`. >= a and . <= b`, or the chained `a <= . <= b`)."""

    low: Decimal
    high: Decimal
    step: Decimal | None
    """A range row's step; None for a constraint (which says no resolution)."""
    places: int
    """The most digits after the decimal point among the numbers written (`0.50`: 2)."""


class XLSFormRow(Protocol):
    """A survey-sheet row as the XLSForm import reads it for a unit
    (analyst/xlsform_import/questions.py); its methods raise the import's refusal."""

    category: str
    """Its XLSForm question type, as the import sorts it (select_one, integer, ...)."""
    cells: Mapping[str, Any]
    labels: Mapping[str, str]
    """Its choice list: choice name -> option label (empty without one)."""
    list_name: Any
    comments: list[str]
    """The comment lines above the question in the TOML written, which a unit may edit."""

    def yes_no(self) -> tuple[str, str] | None:
        """(yes name, no name) when its choice list is a yes/no list, else None."""
        ...

    def integer_range(self) -> tuple[int, int]:
        """(min, max) from a range row's start and end, or an integer row's constraint."""
        ...

    def count_bounds(self) -> dict[str, int]:
        """max_selected and required_min from its count-selected constraint and required."""
        ...

    def range_parameters(self) -> dict[str, str]:
        """A range row's start, end and step as written (XLSForm's defaults 1, 10 and 1 where
        a cell is empty); {} for any other row."""
        ...

    def number_range(self) -> XLSFormRange:
        """The exact range a range row's parameters or a number row's two-sided constraint
        gives (a strict bound read as inclusive, said in the notes)."""
        ...

    def refuse(self, reason: str, alternative: str, topic: str) -> NoReturn:
        """Refuse the row: why it cannot be collected privately, what to write instead, and
        the topic the counts of rows left out group it under."""
        ...

    def no_constraint(self) -> dict[str, Any]:
        """Nothing ({}), refusing a constraint (it would exclude answers)."""
        ...


class XLSFormConditions(Protocol):
    """The condition language's writing of what an XLSForm relevant reads
    (analyst/xlsform_import/expressions.py); each method returns a translated condition or
    raises the import's expression error."""

    def name(self, value: Any) -> str:
        """The choice name a string or number node says."""
        ...

    def option(self, target: Any, op: str, name: str) -> Any:
        """The answer is (== or !=) the option of choice `name`."""
        ...

    def yes_no(self, target: Any, op: str, name: str) -> Any:
        """The answer is (== or !=) the yes or the no of a yes/no list."""
        ...

    def ordered(self, target: Any, op: str, value: Any) -> Any:
        """The options whose numeric choice names compare with `value` by `op`."""
        ...

    def number(self, target: Any, op: str, value: Any) -> Any:
        """The number answered compares with the whole number `value` by `op`."""
        ...

    def selected(self, target: Any, name: str) -> Any:
        """The option of choice `name` is among those checked."""
        ...

    def count(self, target: Any, op: str, value: Any) -> Any:
        """The number of options checked compares with `value` by `op`."""
        ...

    def count_answered(self, target: Any, op: str) -> Any:
        """Some option is checked (!=), or none (==): XLSForm's '' of nothing checked."""
        ...

    def answered(self, target: Any, op: str) -> Any:
        """Answered (!=) or not (==), from the question's own condition."""
        ...

    def not_selectable(self, target: Any) -> Any:
        """Refuse selected() on a question that is not a select."""
        ...

    def not_countable(self, target: Any) -> Any:
        """Refuse count-selected() on a question that is not a select_multiple."""
        ...

    def refuse(self, message: str) -> Any:
        """Refuse the expression, saying why."""
        ...
