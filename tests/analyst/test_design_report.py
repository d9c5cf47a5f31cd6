"""`ldpsurvey report` with a design (docs/weights.md): the invitation codes' designs joined to
the stored submissions, calibrated on disclosed questions, estimated by the design library, in
every format; the numbers equal R's survey on the same respondents' pseudo-values; bad input is
one line and changes nothing stored."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ldpsurvey.analyst.cli import cli
from ldpsurvey.analyst.reports.model import answer_label
from support import designed
from support.r_oracle import r_numbers, r_strings, run_r
from support.server_data import snapshot

MARGINS = ("question,value,total\nregion,north,3000\nregion,south,5000\nregion,east,7000\n"
           "region,west,9000\nsex,female,12500\nsex,male,11500\n")
SURVEY = designed.SURVEY["id"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> designed.Built:
    folder = tmp_path_factory.mktemp("designed")
    return designed.build(folder / "survey.db", fpc=False)


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return designed.write(tmp_path_factory.mktemp("margins") / "margins.csv", MARGINS)


def run(*args: Any) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def error_line(result: Any) -> str:
    """The one error line of a failed command (progress lines may precede it on stderr)."""
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and result.output.endswith(errors[0] + "\n"), result.output
    return errors[0]


def report(built: designed.Built, *args: Any) -> Any:
    return run("report", "--db", built.path, "--survey", built.survey_id, *args)


def document(built: designed.Built, *args: Any) -> dict[str, Any]:
    result = report(built, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows(doc: dict[str, Any], qid: str) -> dict[str, dict[str, Any]]:
    q = next(q for q in doc["questions"] if q["question"] == qid)
    out = {answer_label(c["value"]): c for c in q.get("categories") or []}
    out.update({g["name"]: g for g in q.get("groups") or []})
    if q.get("mean"):
        out["mean"] = q["mean"]
    return out


def stored_answers(built: designed.Built) -> list[dict[str, Any]]:
    """Each stored submission's reports, in arrival order."""
    from ldpsurvey.server.store import open_store

    store = open_store(built.path)
    try:
        return [json.loads(r[4]) for r in store.export_rows(built.survey_id, 1, 0, 10**6)]
    finally:
        store.close()


def library_smoker(built: designed.Built) -> tuple[Any, Any]:
    """(the design of the responding units, smoker's pseudo-values): the library's inputs,
    built here from the frame and the stored reports, not by the command under test."""
    from ldpsurvey.shared.design import Design, pseudo_values
    from ldpsurvey.shared.survey import Survey

    units = built.responded
    design = Design.build([u.weight for u in units], [u.stratum for u in units],
                          [u.psu for u in units])
    question = Survey.from_dict(designed.SURVEY).question("smoker")
    reports = np.array([a["smoker"] for a in stored_answers(built)])
    return design, pseudo_values(question, designed.mechanisms()["smoker"], reports)


def pseudo(built: designed.Built) -> dict[str, np.ndarray]:
    """The respondents' pseudo-values, straight from the mechanisms and the stored reports."""
    stored = stored_answers(built)
    mechs = designed.mechanisms()
    out: dict[str, np.ndarray] = {}
    for qid in ("smoker", "mood"):
        z = mechs[qid].pseudo_values(np.array([a[qid] for a in stored]))
        for j, label in enumerate(mechs[qid].labels):
            out[f"{qid}_{answer_label(label)}"] = z[:, j]
    out["mood_score"] = out["mood_low"] + 2 * out["mood_mid"] + 3 * out["mood_high"]
    out["drinks"] = np.array([float(a.get("drinks", 0)) for a in stored])
    out["answered"] = np.array([int("drinks" in a) for a in stored])
    return out


def test_rake_equals_r_survey_on_the_respondents_pseudo_values(
        built: designed.Built, margins: Path) -> None:
    doc = document(built, "--rake", margins)
    assert doc["design"]["calibration"][0].startswith("raked to region, sex")
    assert doc["n_submissions"] == len(built.responded)
    z = pseudo(built)
    units = built.responded
    table = {"w": [u.weight for u in units], "stratum": [u.stratum for u in units],
             "psu": [u.psu for u in units], "region": [u.answers["region"] for u in units],
             "sex": [u.answers["sex"] for u in units], **z}
    # R orders factor levels alphabetically (east, north, south, west; female, male) and
    # builds treatment contrasts against the first, as ldpsurvey's model_matrix does.
    region = dict(north=3000, south=5000, east=7000, west=9000)
    population = [24000.0, region["north"], region["south"], region["west"], 11500.0]
    names = ["(Intercept)", "regionnorth", "regionsouth", "regionwest", "sexmale"]
    script = f"""
d <- read.csv("d.csv")
d$region <- factor(d$region); d$sex <- factor(d$sex)
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, nest = TRUE, data = d)
pop <- {r_numbers(population)}; names(pop) <- {r_strings(names)}
cal <- calibrate(des, ~region + sex, population = pop, calfun = "raking", epsilon = 1e-13,
                 maxit = 200)
m <- svymean(~smoker_yes + mood_low + mood_mid + mood_high + mood_score, cal)
dr <- svymean(~drinks, subset(cal, answered == 1))
emit(list(est = c(coef(m), coef(dr)), se = c(SE(m), SE(dr))))
"""
    r = run_r(script, {"d": table})
    ours = [rows(doc, "smoker")["yes"], *(rows(doc, "mood")[k] for k in ("low", "mid", "high")),
            rows(doc, "mood")["mean"], rows(doc, "drinks")["mean"]]
    assert np.allclose([o["estimate"] for o in ours], r["est"], rtol=0, atol=1e-8)
    assert np.allclose([o["std_error"] for o in ours], r["se"], rtol=0, atol=1e-8)
    # The declared group is the sum of its options, with its own standard error.
    group = rows(doc, "mood")["not low"]
    assert group["estimate"] == pytest.approx(ours[2]["estimate"] + ours[3]["estimate"], abs=1e-12)
    # The weighted shares of a raking variable are its margins (their variance is 0).
    assert rows(doc, "region")["south"]["estimate"] == pytest.approx(5000 / 24000, abs=1e-9)


def test_each_format_names_the_design_and_splits_the_deff(built: designed.Built,
                                                          margins: Path) -> None:
    table = report(built, "--rake", margins)
    assert table.exit_code == 0, table.output
    assert "design: stratified cluster sample: 4 strata, 24 PSUs" in table.stdout
    assert "deff = sampling × privacy" in table.stdout and "effective n" in table.stdout
    md = report(built, "--rake", margins, "--format", "md").stdout
    assert "design: stratified cluster sample" in md and "| deff = sampling × privacy |" in md
    csv_text = report(built, "--rake", margins, "--format", "csv").stdout
    header = csv_text.splitlines()[0].split(",")
    assert header[-14:] == ["population", "deff", "deff_sampling", "deff_privacy",
                            "effective_n",  # then the totals (test_design_totals.py)
                            "total", "total_std_error", "total_ci_low", "total_ci_high",
                            "deff_sampling_low", "deff_sampling_high",
                            "deff_split_supported", "df", "interval_quantile"]
    html = report(built, "--rake", margins, "--format", "html").stdout
    for text in ("Sampling design", "Where the variance comes from", "unweighted",
                 "The design effect in plain words", "the privacy adds"):
        assert text in html
    doc = document(built, "--rake", margins)
    deff = rows(doc, "smoker")["yes"]["deff"]
    # deff = sampling × privacy, effective n = n / deff (shared/design/estimators.py).
    assert deff["total"] == pytest.approx(deff["sampling"] * deff["privacy"], rel=1e-12)
    assert deff["effective_n"] == pytest.approx(doc["n_submissions"] / deff["total"], rel=1e-12)
    assert deff["privacy"] > 1  # a randomized answer costs variance
    assert rows(doc, "sex")["male"]["deff"]["privacy"] == pytest.approx(1.0)  # disclosed
    # A raking variable's own shares are fixed (variance 0 up to rounding): deff 0 and no
    # effective n in every format (the CSV and JSON said 2.5e-31 and 1.8e+32).
    fixed = rows(doc, "region")["south"]["deff"]
    assert fixed == {"sampling": 0.0, "privacy": 1.0, "total": 0.0, "effective_n": None,
                     "sampling_low": None, "sampling_high": None, "split_supported": True}
    south = next(r for r in csv.DictReader(io.StringIO(csv_text))
                 if r["question"] == "region" and r["option"] == "south")
    assert (south["deff"], south["effective_n"]) == ("0.0", "")


def test_the_html_puts_weighted_and_unweighted_side_by_side(built: designed.Built,
                                                            margins: Path) -> None:
    from ldpsurvey.analyst.reports.sources import db_report

    html = report(built, "--rake", margins, "--format", "html").stdout
    plain = db_report(built.path, SURVEY)
    smoker = next(q for q in plain.estimates["questions"] if q["question"] == "smoker")
    unweighted_yes = f"{smoker['categories'][1]['estimate'] * 100:.1f}%"
    weighted = rows(document(built, "--rake", margins), "smoker")["yes"]["estimate"]
    weighted_yes = f"{weighted * 100:.1f}%"
    section = html.split('id="q-smoker"', 1)[1].split("</section>", 1)[0]
    row = section.split("<td>yes</td>", 1)[1].split("</tr>", 1)[0]
    assert weighted_yes in row and unweighted_yes in row


@pytest.mark.parametrize("variance", ["jkn", "bootstrap"])
def test_replicate_variances_are_the_librarys(built: designed.Built, variance: str) -> None:
    from ldpsurvey.shared.design import build_replicates, mean

    doc = document(built, "--weighted", "--variance", variance)
    assert doc["design"]["variance"] == variance
    design, pv = library_smoker(built)
    expected = mean(design, pv, variance=build_replicates(design, variance)).rows()[1]
    got = rows(doc, "smoker")["yes"]
    assert got["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert got["std_error"] == pytest.approx(expected.std_error, abs=1e-12)


def test_jk1_on_a_stratified_design_is_refused_in_one_line(built: designed.Built) -> None:
    assert "JK1 ignores strata" in error_line(report(built, "--weighted", "--variance", "jk1"))


BAD_MARGINS = {
    "empty cell": (["--rake"], MARGINS + "region,central,100\n",
                   "empty cell: no respondent has 'region' = 'central'"),
    "margins disagree": (["--rake"], MARGINS.replace("sex,male,11500", "sex,male,11000"),
                         "the margins' totals disagree"),
    "randomized covariate": (["--rake"], MARGINS + "smoker,yes,100\nsmoker,no,23900\n",
                             "cannot calibrate on 'smoker': it is a randomized answer"),
    "no convergence": (["--rake", "--max-iterations", "1"], MARGINS,
                       "raking did not converge in 1 iterations"),
    "unknown question": (["--rake"], MARGINS + "income,high,1\n",
                         "has no question 'income'"),
    "bad header": (["--rake"], "q,v,t\nregion,north,1\n", "the header must be question,value"),
    "not a number": (["--rake"], MARGINS.replace("3000", "lots"), "total 'lots' is not a number"),
    "category without total": (["--rake"], MARGINS.replace("region,west,9000\n", ""),
                               "'region' = 'west' has respondents but no positive population"),
    "bounds too tight": (["--calibrate", "--bounds", "0.999,1.001"], MARGINS,
                         "bounded calibration did not converge in 50 iterations"),
    "cell missing": (["--poststratify"], "region,total\nnorth,1\nsouth,2\neast,3\n",
                     "'region' = 'west' has respondents but no positive population"),
    # finite, but the weights' sums overflowed: every estimate printed as 0.0%
    "total 1e308": (["--rake"], MARGINS.replace("3000", "1e308"), "total 1e308 is above 1e+15"),
    "cell 1e308": (["--poststratify"], "region,total\nnorth,1e308\nsouth,2\neast,3\nwest,4\n",
                   "total 1e308 is above 1e+15"),
}


@pytest.mark.parametrize("case", list(BAD_MARGINS))
def test_bad_calibration_input_is_one_line_and_changes_nothing(
        built: designed.Built, tmp_path: Path, case: str) -> None:
    flags, text, message = BAD_MARGINS[case]
    path = designed.write(tmp_path / "m.csv", text)
    before = snapshot(built.path)
    assert message in error_line(report(built, *flags[:1], path, *flags[1:]))
    assert snapshot(built.path) == before


@pytest.mark.parametrize("args, message", [
    (["--rake", "a.csv", "--calibrate", "b.csv"], "give one of --poststratify, --rake"),
    (["--bounds", "0.5,2", "--weighted"], "--bounds goes with --calibrate"),
    (["--frame", "f.csv"], "--frame FILE and --key QUESTION go together"),
    (["--weighted", "--batch", "b1"], "design options take every batch of a two-server "
                                      "survey together: --batch all"),
])
def test_usage_errors(built: designed.Built, args: list[str], message: str) -> None:
    result = report(built, *args)
    assert result.exit_code == 2 and message in result.output, result.output


def test_a_survey_without_designs_is_refused_unless_calibrated(tmp_path: Path,
                                                              margins: Path) -> None:
    plain = designed.build(tmp_path / "plain.db", invites=False)
    assert "invitation codes carry no design" in error_line(report(plain, "--weighted"))
    raked = document(plain, "--rake", margins)  # an equal-weight sample raked to the margins
    assert raked["design"]["source"].startswith("no design: every respondent weight 1")
    assert rows(raked, "region")["west"]["estimate"] == pytest.approx(9000 / 24000, abs=1e-9)


def test_subgroups_are_domain_estimates_of_the_design(built: designed.Built,
                                                     margins: Path) -> None:
    from ldpsurvey.shared.design import Margin, mean, rake

    result = report(built, "--rake", margins, "--by", "sex", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    units = built.responded
    design, pv = library_smoker(built)
    design = rake(design, [Margin("region", [u.answers["region"] for u in units],
                                  dict(north=3000, south=5000, east=7000, west=9000)),
                           Margin("sex", [u.answers["sex"] for u in units],
                                  dict(female=12500, male=11500))])
    male = np.array([u.answers["sex"] == "male" for u in units])
    expected = mean(design, pv, domain=male).rows()[1]
    group = next(g for g in doc["subgroups"] if g["value"] == "male")
    assert group["n"] == int(male.sum())
    got = next(q for q in group["questions"] if q["question"] == "smoker")["categories"][1]
    assert got["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert got["std_error"] == pytest.approx(expected.std_error, abs=1e-12)
    assert {q["question"] for q in group["questions"]} == {"smoker", "mood", "drinks"}
    table = report(built, "--rake", margins, "--by", "sex")
    assert table.exit_code == 0 and "deff = sampling × privacy" in table.stdout


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> tuple[designed.Built, Path]:
    """The keyed survey: no design on the codes; each respondent sends their unit number."""
    folder = tmp_path_factory.mktemp("keyed")
    built = designed.build(folder / "keyed.db", survey=designed.KEYED, invites=False)
    frame = designed.write(folder / "frame.csv", designed.keyed_frame_csv(built.units))
    return built, frame


def test_a_frame_joined_by_a_disclosed_key_gives_the_invitations_numbers(
        keyed: tuple[designed.Built, Path], built: designed.Built, margins: Path,
        tmp_path: Path) -> None:
    """Same units, same answers, same reports: the frame joined by resp_no weights exactly as
    the invitation codes' designs do (the fixtures draw both from one seed)."""
    survey, frame = keyed
    with_fpc = designed.build(tmp_path / "fpc.db")  # the invitation fixture, with its fpc
    by_key = document(survey, "--frame", frame, "--key", "resp_no", "--rake", margins)
    by_codes = document(with_fpc, "--rake", margins)
    assert by_key["design"]["source"].startswith(f"frame {frame} joined by resp_no")
    assert "with fpc" in by_key["design"]["description"]
    assert by_key["n_submissions"] == by_codes["n_submissions"]
    for qid in ("smoker", "mood", "region"):
        for label, row in rows(by_codes, qid).items():
            assert rows(by_key, qid)[label]["estimate"] == pytest.approx(row["estimate"],
                                                                         abs=1e-12)
            assert rows(by_key, qid)[label]["std_error"] == pytest.approx(row["std_error"],
                                                                          abs=1e-12)


def test_frame_join_errors_name_the_reason(keyed: tuple[designed.Built, Path],
                                           tmp_path: Path) -> None:
    survey, frame = keyed
    lines = frame.read_text().splitlines()
    before = snapshot(survey.path)
    randomized = report(survey, "--frame", frame, "--key", "smoker")
    assert "the key 'smoker' must be a disclosed question" in error_line(randomized)
    short = designed.write(tmp_path / "short.csv", "\n".join(lines[:-40]) + "\n")
    assert "is not an id of" in error_line(report(survey, "--frame", short, "--key", "resp_no"))
    bad = designed.write(tmp_path / "bad.csv", lines[0] + "\n" + lines[1].replace(
        ",20.0,", ",-20.0,") + "\n" + "\n".join(lines[2:]) + "\n")
    assert "line 2: weight -20.0 is negative" in error_line(
        report(survey, "--frame", bad, "--key", "resp_no"))
    unknown = report(survey, "--frame", frame, "--key", "nope")
    assert "has no question 'nope'" in error_line(unknown)
    assert snapshot(survey.path) == before


def test_a_stratum_with_one_psu_follows_lonely_psu(tmp_path: Path) -> None:
    """Only one PSU of 'west' was sampled (codes made with --allow-lonely-psu): refused by
    default (R's "fail"), naming the stratum; each of R's other options gives an estimate, and
    "certainty" and "remove" differ only by the lonely stratum's randomization variance."""
    units = [u for u in designed.population_frame() if u.stratum != "west" or u.psu == "psu0"]
    lonely = designed.build(tmp_path / "lonely.db", units=units, fpc=False,
                            allow_lonely_psu=True)
    refusal = error_line(report(lonely, "--weighted"))
    assert "('west')" in refusal
    assert "--lonely-psu" in refusal  # the option as the analyst types it
    errors = {}
    for option in ("remove", "certainty", "adjust", "average"):
        doc = document(lonely, "--weighted", "--lonely-psu", option)
        assert doc["design"]["lonely_psu"] == option
        errors[option] = rows(doc, "smoker")["yes"]["std_error"]
    assert errors["certainty"] > errors["remove"]
    assert len(set(errors.values())) == 4


def test_the_docs_say_what_certainty_keeps() -> None:
    """docs/weights.md's `certainty` row says what the code does (the test above: certainty's
    standard error is above remove's): no sampling variance, the randomization's kept."""
    text = (Path(__file__).parents[2] / "docs" / "weights.md").read_text(encoding="utf-8")
    [line] = [x for x in text.splitlines() if x.startswith("| `certainty` |")]
    assert "no *sampling* variance" in line and "*randomization* variance" in line
    assert "still counts" in line


def test_server_and_db_give_the_same_design_based_document(built: designed.Built,
                                                          margins: Path) -> None:
    """--server reads submissions.jsonl and designs.jsonl (analyst token) and computes with
    the same functions as --db: the same document, and the same subgroups."""
    from support.clients import RealServer

    server = RealServer(built.path)
    server.start()
    try:
        for extra in ((), ("--by", "sex")):
            remote = run("report", "--server", server.url, "--token", built.token, "--survey",
                         SURVEY, "--rake", margins, "--format", "json", *extra)
            assert remote.exit_code == 0, remote.output
            assert json.loads(remote.stdout) == document(built, "--rake", margins, *extra)
        refused = run("report", "--server", server.url, "--token", "ldp_" + "x" * 43,
                      "--survey", SURVEY, "--weighted")
        assert "server refused (403)" in error_line(refused)
    finally:
        server.stop()


def test_a_two_server_survey_is_refused_with_the_reason(tmp_path: Path) -> None:
    """Two-server surveys release only noisy batch totals: a design-based report read
    submission by submission is refused, naming the way that works (the leader's batches per
    cell and random group, report --batch all; docs/weights.md)."""
    from ldpsurvey.server.app import create_app
    from ldpsurvey.server.auth import create_token
    from ldpsurvey.server.http_request import STORE_EXTENSION
    from support.server_data import manifest
    from support.two_server import two_server_survey

    db = tmp_path / "leader.db"
    app = create_app({"DATABASE": str(db), "TESTING": True})
    store = app.extensions[STORE_EXTENSION]
    auth = {"Authorization": f"Bearer {create_token(store, 't')[1]}"}
    survey = two_server_survey("https://helper.example", b"h" * 32, b"l" * 32)
    assert app.test_client().post("/api/surveys", json=manifest(survey),
                                  headers=auth).status_code == 201
    store.close()
    message = error_line(run("report", "--db", db, "--survey", "pulse", "--weighted"))
    assert "collected by two servers" in message and "--batch all" in message


def test_regress_with_a_design_equals_r_svyglm(built: designed.Built, margins: Path) -> None:
    """Linear regression of the noisy integer outcome on disclosed covariates, raked: the
    coefficients and their design-based standard errors equal R's svyglm on the calibrated
    design (the respondents who skipped the outcome stay in the design, as subset() keeps
    them)."""
    result = run("regress", "--db", built.path, "--survey", SURVEY, "--outcome", "drinks",
                 "--covariates", "region,sex", "--rake", margins, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["design"]["calibration"][0].startswith("raked to region, sex")
    z = pseudo(built)
    units = built.responded
    table = {"w": [u.weight for u in units], "stratum": [u.stratum for u in units],
             "psu": [u.psu for u in units], "region": [u.answers["region"] for u in units],
             "sex": [u.answers["sex"] for u in units], "drinks": z["drinks"],
             "answered": z["answered"]}
    script = designed.RAKED_R + """
fit <- svyglm(drinks ~ region + sex, design = subset(cal, answered == 1))
ci <- confint(fit)
emit(list(coef = coef(fit), se = SE(fit), low = ci[, 1], high = ci[, 2],
          p = summary(fit)$coefficients[, 4], df = fit$df.residual,
          degf = degf(subset(cal, answered == 1))))
"""
    r = run_r(script, {"d": table})
    coefficients = doc["coefficients"]
    assert [c["name"] for c in coefficients] == ["(intercept)", "region=south", "region=east",
                                                 "region=west", "sex=male"]
    assert np.allclose([c["estimate"] for c in coefficients], r["coef"], rtol=0, atol=1e-8)
    assert np.allclose([c["std_error"] for c in coefficients], r["se"], rtol=1e-7, atol=0)
    assert doc["n"] == int(z["answered"].sum())
    # t with svyglm's residual df (degf + 1 - 5 coefficients): R's confint and summary
    assert (doc["design"]["df"], doc["design"]["residual_df"]) == (r["degf"][0], r["df"][0])
    assert np.allclose([c["ci_low"] for c in coefficients], r["low"], rtol=1e-7, atol=1e-9)
    assert np.allclose([c["ci_high"] for c in coefficients], r["high"], rtol=1e-7, atol=1e-9)
    assert np.allclose([c["p_value"] for c in coefficients], r["p"], rtol=1e-6, atol=1e-12)


def test_a_logistic_fit_through_the_channels_takes_the_design(built: designed.Built,
                                                             margins: Path) -> None:
    """The outcome and a covariate randomized: the same fit through the channels, weighted,
    with the sandwich over PSUs; the table names the design."""
    from ldpsurvey.server.regression import Spec, fit_columns
    from ldpsurvey.shared.design import Margin, rake
    from ldpsurvey.shared.design.regression import fit_options
    from ldpsurvey.shared.survey import Survey

    result = run("regress", "--db", built.path, "--survey", SURVEY, "--outcome", "smoker",
                 "--covariates", "sex,mood", "--rake", margins, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    units = built.responded
    design, _ = library_smoker(built)
    design = rake(design, [Margin("region", [u.answers["region"] for u in units],
                                  dict(north=3000, south=5000, east=7000, west=9000)),
                           Margin("sex", [u.answers["sex"] for u in units],
                                  dict(female=12500, male=11500))])
    survey = Survey.from_dict(designed.SURVEY)
    answers = stored_answers(built)
    columns = [np.array([a[q] for a in answers]) for q in ("smoker", "sex", "mood")]
    expected = fit_columns(columns, 0, Spec("smoker", ("sex", "mood")),
                           {q.id: q for q in survey.questions}, designed.mechanisms(), 0.95,
                           **fit_options(design)).to_dict()
    assert [c["estimate"] for c in doc["coefficients"]] == pytest.approx(
        [c["estimate"] for c in expected["coefficients"]], abs=1e-10)
    assert [c["std_error"] for c in doc["coefficients"]] == pytest.approx(
        [c["std_error"] for c in expected["coefficients"]], rel=1e-9)
    table = run("regress", "--db", built.path, "--survey", SURVEY, "--outcome", "smoker",
                "--covariates", "sex,mood", "--rake", margins)
    assert "note: design-based: stratified cluster sample" in table.stdout


def test_a_design_based_crosstab_equals_r(built: designed.Built, margins: Path) -> None:
    """Joint shares (weighted means of the products of the two reports' pseudo-values) and
    conditional shares (ratios) equal R's svymean and svyratio on the raked design."""
    result = report(built, "--rake", margins, "--crosstab", "smoker", "mood", "--format",
                    "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["source"] == "design" and doc["design"]["calibration"]
    z = pseudo(built)
    units = built.responded
    joint = {f"p_{a}_{b}": z[f"smoker_{a}"] * z[f"mood_{b}"]
             for a in ("no", "yes") for b in ("low", "mid", "high")}
    table = {"w": [u.weight for u in units], "stratum": [u.stratum for u in units],
             "psu": [u.psu for u in units], "region": [u.answers["region"] for u in units],
             "sex": [u.answers["sex"] for u in units], "smoker_yes": z["smoker_yes"],
             "mood_low": z["mood_low"], **joint}
    script = designed.RAKED_R + """
j <- svymean(~p_yes_mid + p_no_high, cal)
given_yes <- svyratio(~p_yes_low + p_yes_mid + p_yes_high, ~smoker_yes, cal)
given_low <- svyratio(~p_no_low, ~mood_low, cal)
emit(list(joint = coef(j), joint_se = SE(j), cond = coef(given_yes),
          cond_se = SE(given_yes), low = coef(given_low), low_se = SE(given_low)))
"""
    r = run_r(script, {"d": table})
    got = [doc["joint"][1][1], doc["joint"][0][2]]
    assert np.allclose([c["estimate"] for c in got], r["joint"], atol=1e-8, rtol=0)
    assert np.allclose([c["std_error"] for c in got], r["joint_se"], rtol=1e-7, atol=0)
    cond = doc["col_given_row"][1]
    assert np.allclose([c["estimate"] for c in cond], r["cond"], atol=1e-8, rtol=0)
    assert np.allclose([c["std_error"] for c in cond], r["cond_se"], rtol=1e-7, atol=0)
    low = doc["row_given_col"][0][0]
    assert low["estimate"] == pytest.approx(r["low"][0], abs=1e-8)
    assert low["std_error"] == pytest.approx(r["low_se"][0], rel=1e-7)
    table_text = report(built, "--rake", margins, "--crosstab", "smoker", "mood").stdout
    assert "weighted by their sampling design" in table_text
    assert "Std errors: design-based (linearized (ultimate cluster" in table_text
    binned = report(built, "--weighted", "--crosstab", "drinks", "smoker", "--format", "json")
    assert binned.exit_code == 0, binned.output  # default bins: test_design_crosstab.py
    assert json.loads(binned.stdout)["rows"]["cells"] == ["0-4", "5-9", "10-14", "15-20"]


def test_the_conditional_share_residual_noise_estimate_is_unbiased() -> None:
    """E[estimate] = Var[X(W - r)] exactly, for every pair of true answers, computed over
    every pair of reports with their exact probabilities (binary RR rows, GRR columns)."""
    from ldpsurvey.analyst.design.crosstab import residual_noise_estimate

    mechs = designed.mechanisms()
    rows, cols = mechs["smoker"], mechs["mood"]
    a_rows, _ = rows.index_channel()
    a_cols, _ = cols.index_channel()
    z_rows = rows.pseudo_values(np.arange(a_rows.shape[1]))  # per report index
    z_cols = cols.pseudo_values(np.arange(a_cols.shape[1]))
    r = np.array([0.2, 0.5, 0.3])
    for x in range(rows.k):
        for w in range(cols.k):
            p = np.outer(a_rows[x], a_cols[w]).reshape(-1)  # P(report pair)
            for a in range(rows.k):
                given = np.repeat(z_rows[:, a], z_cols.shape[0])
                other = np.tile(z_cols, (z_rows.shape[0], 1))
                residual = given[:, None] * (other - r)
                variance = p @ residual**2 - (p @ residual) ** 2
                expected = p @ residual_noise_estimate(given, other, r)
                assert np.allclose(expected, variance, atol=1e-12, rtol=0)


def test_every_format_states_the_design_df_and_intervals_use_t(built: designed.Built) -> None:
    """Issue 39: 24 PSUs in 4 strata have 20 degrees of freedom (R's degf); the intervals are
    estimate ± t_20 s.e. (R's confint(df = degf), Stata's svy) unless --interval-quantile
    normal asks for the normal quantile, and every format says so."""
    from ldpsurvey.shared.distributions import t_value

    doc = document(built, "--weighted")
    assert (doc["design"]["df"], doc["design"]["interval_quantile"]) == (20, "t")
    yes = rows(doc, "smoker")["yes"]
    assert yes["ci_high"] - yes["estimate"] == pytest.approx(
        t_value(0.95, 20) * yes["std_error"], rel=1e-12)
    normal = rows(document(built, "--weighted", "--interval-quantile", "normal"), "smoker")
    assert normal["yes"]["ci_high"] - normal["yes"]["estimate"] == pytest.approx(
        1.959963984540054 * yes["std_error"], rel=1e-12)
    said = "20 design degrees of freedom (24 PSUs − 4 strata)"
    for fmt in ("table", "md", "html"):
        text = report(built, "--weighted", "--format", fmt).stdout
        assert said in text and "estimate ± 2.086 s.e. (Student&#x27;s t with 20 df)" in text \
            if fmt == "html" else said in text and "± 2.086 s.e." in text, fmt
    smoker = [r for r in csv.DictReader(io.StringIO(
        report(built, "--weighted", "--format", "csv").stdout)) if r["question"] == "smoker"]
    assert {(r["df"], r["interval_quantile"]) for r in smoker} == {("20", "t")}
    refused = report(built, "--interval-quantile", "normal")
    assert refused.exit_code == 2 and "goes with a design-based report" in refused.output


def test_a_design_based_regression_states_its_df_in_every_format(built: designed.Built) -> None:
    """Issue 39: a design-based fit's intervals and p-values are t with svyglm's residual df,
    the design's 20 + 1 - 5 coefficients = 16 (R's confint and summary; the R comparison is
    test_regress_with_a_design_equals_r_svyglm); --interval-quantile normal gives the normal
    quantile; every format states the df."""
    from ldpsurvey.shared.distributions import t_value

    def fit(*args: Any) -> Any:
        return run("regress", "--db", built.path, "--survey", SURVEY, "--outcome", "drinks",
                   "--covariates", "region,sex", "--weighted", *args)

    doc = json.loads(fit("--format", "json").stdout)
    assert (doc["design"]["df"], doc["design"]["residual_df"],
            doc["design"]["interval_quantile"]) == (20, 16, "t")
    for c in doc["coefficients"]:
        assert c["ci_high"] - c["estimate"] == pytest.approx(t_value(0.95, 16) * c["std_error"],
                                                             rel=1e-12)
    normal = json.loads(fit("--format", "json", "--interval-quantile", "normal").stdout)
    assert (normal["design"]["residual_df"], normal["design"]["interval_quantile"]) == (
        None, "normal")
    for c, t in zip(normal["coefficients"], doc["coefficients"], strict=True):
        assert c["ci_high"] - c["estimate"] == pytest.approx(
            1.959963984540054 * c["std_error"], rel=1e-12)
        assert c["p_value"] < t["p_value"]  # the normal's thinner tails
    said = "Student's t with 16 residual degrees of freedom (the design's 20 + 1 - 5"
    for fmt in ("table", "html"):
        text = fit("--format", fmt).stdout
        assert (said.replace("'", "&#x27;") if fmt == "html" else said) in text, fmt
    lines = list(csv.DictReader(io.StringIO(fit("--format", "csv").stdout)))
    assert {(r["df"], r["residual_df"], r["interval_quantile"]) for r in lines} == {
        ("20", "16", "t")}
    refused = run("regress", "--db", built.path, "--survey", SURVEY, "--outcome", "drinks",
                  "--interval-quantile", "normal")
    assert refused.exit_code == 2 and "goes with a design-based fit" in refused.output


def test_the_deff_split_is_stated_only_with_its_interval_excluding_1(
        built: designed.Built) -> None:
    """Issue 39: the sampling factor rests on 20 degrees of freedom; where its interval
    includes 1 the reports give the total deff with the interval, and the HTML says the data
    cannot split it, instead of 'the sampling design adds ...' as a fact."""
    doc = document(built, "--weighted")
    html = report(built, "--weighted", "--format", "html").stdout
    table = report(built, "--weighted").stdout
    seen = set()
    for qid in ("smoker", "mood"):
        for label, row in rows(doc, qid).items():
            deff = row["deff"]
            low, high = deff["sampling_low"], deff["sampling_high"]
            supported = low > 1 or (high is not None and high < 1)
            assert deff["split_supported"] is supported
            seen.add(supported)
            if not supported:
                assert low <= 1 and f"(sampling {low:.2g}–" in table
                assert f"For {qid} = {label}, " not in html
    assert False in seen  # this design's answers: at least one split the data cannot carry
    assert "cannot say how much of it is the sampling design" in html
    # A disclosed answer has no privacy part: its deff is all the design's, always split.
    assert rows(doc, "sex")["male"]["deff"]["split_supported"] is True
    assert "For sex = male, " in html and "For sex = male the design effect is" not in html


def test_the_html_reading_guide_is_the_designs(built: designed.Built) -> None:
    """Issue 39: the weighted HTML explains its own intervals (the design, t with its df, the
    variance's sources from the numbers shown), not the simple random sample's; the plain
    report says its interval is about the people who answered."""
    html = report(built, "--weighted", "--format", "html").stdout
    guide = html.split("How to read this report", 1)[1]
    assert "if the same people were surveyed again and again" not in guide
    assert "Almost all of its width comes from the privacy noise" not in guide
    assert "new clusters within the same strata" in guide and "Student&#x27;s t" in guide
    assert "Where its width comes from" in guide and "the privacy noise is" in guide
    md = report(built, "--weighted", "--format", "md").stdout
    assert "**Where its width comes from.**" in md and "again and again" not in md
    plain = report(built, "--format", "html").stdout
    assert "about the people who answered" in plain


def test_disclosed_questions_have_no_epsilon_and_the_fpc_is_not_with_replacement(
        tmp_path: Path) -> None:
    """Issue 39, smaller: a disclosed question was headed "epsilon 0"; "with replacement" was
    printed beside "with fpc"."""
    built = designed.build(tmp_path / "survey.db", fpc=True)
    table = report(built, "--weighted").stdout
    assert "categorical, disclosed, disclosed (sent as given, no epsilon)" in table
    assert "epsilon 0," not in table
    assert "with fpc" in table and "with replacement" not in table
    assert "finite population correction applied" in table
    html = report(built, "--weighted", "--format", "html").stdout
    assert "ε = 0 " not in html and "disclosed (sent as given, no ε)" in html
