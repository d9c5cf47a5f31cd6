"""One answer from a (k, ε) domain: what binary, categorical, ordinal and integer questions
share.

Such a question is randomized by a registered mechanism built from its domain size k and ε
(shared/mechanisms/registry.py), which `auto` picks by the type's criterion; it may be
disclosed (sent as given) or have a "not asked" value (skip logic), and a named design
(shared/mechanisms/rr_designs.py) may randomize it. Each type says its answer domain
(`answer_domain`) and what differs; the parsing and the choice are here, once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import SurveyError
from . import fields
from .base import Definition, QuestionType, check_not_asked_domain, extra_values

# Keys a disclosed question does not take: it has no mechanism and no ε.
_RANDOMIZATION_KEYS = ("epsilon", "mechanism", "mechanism_choice", "params",
                       "instantaneous_epsilon")


@dataclass(frozen=True)
class Domain:
    """What a respondent may answer: options and groups, or an integer range [min, max]."""

    options: tuple[str, ...] = ()
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    min: int | None = None
    max: int | None = None


class SingleAnswerType(QuestionType):
    """A type whose answer is one value of a (k, ε) domain."""

    # --- definition and answers (the schema: shared/survey.py) -----------------------------

    def answer_domain(self, data: Mapping[str, Any], where: str) -> Domain:
        """The type's answer domain from its table (SurveyError naming the field)."""
        return Domain()

    def parse(self, definition: Definition) -> Any:
        if fields.asks_directly(definition.data):
            return replace(self._parse_disclosed(definition), **definition.skip)
        return self._parse_randomized(definition)

    def _parse_disclosed(self, d: Definition) -> Any:
        """A question asked directly: `disclosed = true` and none of the randomization keys."""
        if d.data["disclosed"] is not True:
            raise SurveyError(f"{d.where}.disclosed", "must be true or false")
        for key in _RANDOMIZATION_KEYS:
            if key in d.data:
                raise SurveyError(f"{d.where}.{key}", "a disclosed question has no mechanism "
                                  "and no ε: its answer is sent as given, not randomized")
        optional = fields.optional(d.data, d.where)
        domain = self.answer_domain(d.data, d.where)
        return d.build(id=d.id, text=d.text, type=self.name, epsilon=0.0, mechanism="disclosed",
                       options=domain.options, groups=domain.groups, min=domain.min,
                       max=domain.max, optional=optional, disclosed=True)

    def _parse_randomized(self, d: Definition) -> Any:
        from ..mechanisms.channel_design import resolve_design
        from ..mechanisms.registry import (
            DESIGNS,
            MECHANISMS,
            REPORT_SIZE_LIMIT,
            mechanism_class,
            mechanism_for,
        )
        from ..mechanisms.rr_designs import refuse_not_private

        data, where, not_asked = d.data, d.where, d.extended  # extra values: "not asked", special
        # a design refused by name (Mangat, ...) says why before anything asks for its ε
        refuse_not_private(str(data.get("mechanism")), f"{where}.mechanism")
        designed = str(data.get("mechanism")) in DESIGNS  # its ε may be left out: computed
        epsilon = (None if designed and data.get("epsilon") is None
                   else fields.epsilon(data.get("epsilon"), f"{where}.epsilon"))
        optional = fields.optional(data, where)
        domain = self.answer_domain(data, where)
        requested, choice = fields.mechanism_and_choice(data, where)
        instantaneous = data.get("instantaneous_epsilon")
        if instantaneous is not None:
            instantaneous = fields.epsilon(instantaneous, f"{where}.instantaneous_epsilon")
        at = f"questions.{d.id}"
        if not_asked:
            check_not_asked_domain(domain.options, at, d.special)
        special = {"special": dict(d.special)} if d.special else {}
        question = d.build(id=d.id, text=d.text, type=self.name, epsilon=epsilon,
                           mechanism=requested, options=domain.options, groups=domain.groups,
                           min=domain.min, max=domain.max, optional=optional,
                           mechanism_choice=choice, instantaneous_epsilon=instantaneous,
                           not_asked=d.not_asked, **special, **d.skip)
        size_limit = d.size_limit or REPORT_SIZE_LIMIT
        if requested == "auto":
            name, choice = (self.choose_not_asked_mechanism(question, size_limit, at)
                            if not_asked else self.choose_mechanism(question, size_limit, where))
            question = replace(question, mechanism=name, mechanism_choice=choice)
        else:
            cls = mechanism_class(requested, f"{where}.mechanism")
            if not_asked:
                self.check_not_asked_mechanism(question, requested, at)
            elif not self.takes_mechanism(cls):
                fits = ", ".join(sorted(cls.question_types))
                raise SurveyError(f"{where}.mechanism", f"{requested!r} does not fit a "
                                  f"{self.name} question (it fits: {fits})")
        if designed:  # the params are the design's inputs; ε is proven from them
            question = resolve_design(question, data.get("params"),
                                      mechanism_class(question.mechanism))
            epsilon = question.epsilon
        cls = mechanism_class(question.mechanism, f"{where}.mechanism")
        for key, eps in (("epsilon", epsilon), ("instantaneous_epsilon", instantaneous)):
            misfit = None if eps is None else cls.misfit(question.k, eps, domain.min or 0)
            if misfit is not None:
                name = key if misfit.field == "epsilon" else self.domain_field
                raise SurveyError(f"{where}.{name}",
                                  f"{misfit.problem} (mechanism {question.mechanism!r})")
        if instantaneous is not None and not cls.supports_instantaneous_layer:
            layered = " or ".join(name for name, c in MECHANISMS.items()
                                  if c.supports_instantaneous_layer
                                  and self.name in c.question_types)
            raise SurveyError(f"{where}.instantaneous_epsilon",
                              f"an instantaneous layer needs a symmetric randomized response "
                              f"(mechanism = {layered}), not {question.mechanism!r}; set the "
                              f"mechanism explicitly or drop the key")
        params = mechanism_for(question).params()
        given = data.get("params")
        if given is not None and not isinstance(given, dict):
            raise SurveyError(f"{where}.params", "must be a table (an object of parameters)")
        if not designed and given is not None and given != {} and given != params:
            raise SurveyError(f"{where}.params",
                              f"do not match mechanism {question.mechanism!r} at epsilon "
                              f"{epsilon!r} for this question: expected {json.dumps(params)}")
        return replace(question, params=params)

    def candidates(self, k: int, epsilon: float, size_limit: int, low: int = 0,
                   layered: bool = False) -> list[tuple[float, str]]:
        from ..mechanisms.registry import rank

        return rank(self.name, k, epsilon, size_limit, low, layered, self.selection_variance)

    def choose_mechanism(self, question: Any, size_limit: int, where: str) -> tuple[str, str]:
        """The registered mechanism with the lowest `selection_variance` that fits (module
        docstring of shared/mechanisms); SurveyError naming the field when none does."""
        from ..mechanisms.registry import MECHANISMS, describe_misfits, misfits

        low = getattr(question, "min", None) or 0
        layered = getattr(question, "instantaneous_epsilon", None) is not None
        ranked = self.candidates(question.k, question.epsilon, size_limit, low, layered)
        if not ranked:
            refused = misfits(self.name, question.k, question.epsilon, low)
            of_type = [name for name, cls in MECHANISMS.items()
                       if self.name in cls.question_types]
            if refused and len(refused) == len(of_type):  # none of this type can be built
                problems = {m.field for m in refused.values()}
                name = ("epsilon" if problems == {"epsilon"} else
                        self.domain_field if problems == {"domain"} else "mechanism")
                raise SurveyError(f"{where}.{name}",
                                  f"no mechanism can be built ({describe_misfits(refused)})")
            if layered:
                raise SurveyError(f"{where}.instantaneous_epsilon",
                                  f"no mechanism for a {self.name} question carries an "
                                  f"instantaneous layer (it needs a symmetric randomized "
                                  f"response)")
            return super().choose_mechanism(question, size_limit, where)
        best_var, best = ranked[0]
        others = ", ".join(f"{name} {var:.4g}" for var, name in ranked[1:])
        reason = (f"auto: lowest worst-case variance {self.auto_criterion} with one report at "
                  f"k={question.k}, epsilon={question.epsilon:g}: {best} {best_var:.4g}"
                  + (f" (vs {others})" if others else "")
                  + f"; reports under {size_limit} bytes")
        return best, reason

    # A question with a "not asked" value or special values: one index over its options, its
    # special values and "not asked".
    auto_not_asked = ("grr", "hr")
    named_not_asked = ("grr", "hr")
    special_refusal = None  # special values are extra values of the domain (base.extra_values)

    def not_asked_mechanism(self, question: Any) -> Any:
        from ..among_asked import with_not_asked
        from ..mechanisms.registry import mechanism_class

        cls = mechanism_class(question.mechanism)
        instantaneous = getattr(question, "instantaneous_epsilon", None)
        if instantaneous is not None:
            from ..mechanisms.longitudinal import Longitudinal

            mechanism = with_not_asked(Longitudinal)(cls.from_question(question), instantaneous)
        else:
            mechanism = with_not_asked(cls).from_question(question)
        mechanism.scored = self.scores(question) is not None
        mechanism.extra = extra_values(question)
        return mechanism

    def choose_not_asked_mechanism(self, question: Any, size_limit: int, where: str
                                   ) -> tuple[str, str]:
        """Among the index mechanisms of `auto_not_asked`, the lowest variance averaged over
        the k + 1 values."""
        from ..mechanisms.registry import MECHANISMS

        layered = question.instantaneous_epsilon is not None
        ranked = []
        for name in self.auto_not_asked:
            cls = MECHANISMS[name]
            if (cls.misfit(question.k, question.epsilon) is None
                    and cls.report_bytes(question.k, question.epsilon) <= size_limit
                    and (cls.supports_instantaneous_layer or not layered)):
                ranked.append((cls.average_variance(question.k, question.epsilon), name))
        if not ranked:
            raise SurveyError(f"{where}.epsilon", f"no mechanism for a question with a 'not "
                              f"asked' value fits k={question.k} at "
                              f"epsilon={question.epsilon:g}")
        ranked.sort()
        best_var, best = ranked[0]
        others = ", ".join(f"{name} {var:.4g}" for var, name in ranked[1:])
        why = ("depends on randomized answers has a 'not asked' value"
               if question.not_asked else "has special values")
        return best, (f"auto: a question that {why}; lowest variance averaged over its "
                      f"k={question.k} values at epsilon={question.epsilon:g}: {best} "
                      f"{best_var:.4g}"
                      + (f" (vs {others})" if others else ""))

    def local_not_asked(self, question: Any, plain: Mapping[str, Any], where: str,
                        local: float, parse: Any) -> Any:
        """Its local report must be one index of the options + "not asked" (a Prio3
        Histogram): `auto` takes grr there."""
        if plain.get("mechanism", "auto") == "auto" and question.mechanism != "grr":
            return parse({**plain, "epsilon": local, "mechanism": "grr"})
        return question


def options_and_groups(data: Mapping[str, Any], where: str) -> Domain:
    """The domain of a question with `options` and `groups` (categorical, ordinal)."""
    options = fields.options(data.get("options"), f"{where}.options")
    return Domain(options=options,
                  groups=fields.groups(data.get("groups", {}), options, f"{where}.groups"))
