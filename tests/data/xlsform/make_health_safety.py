"""Writes health_safety_2025.xlsx, the realistic XLSForm of tests/data/xlsform (README.md).

Run from this directory with openpyxl installed: python make_health_safety.py
"""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

EN, ES = "English (en)", "Español (es)"
SURVEY = [
    # type, name, label en, label es, hint en, hint es, required, relevant, constraint,
    # appearance, ldp_epsilon, ldp_disclosed
    ("note", "intro",
     "This survey asks about drug use and violence in the past 12 months. Your phone "
     "randomizes each answer before it is sent, so no one can be sure of your real answers.",
     "Esta encuesta pregunta sobre el consumo de drogas y la violencia en los últimos 12 "
     "meses. Su teléfono aleatoriza cada respuesta antes de enviarla, así que nadie puede "
     "estar seguro de sus respuestas reales.", None, None, None, None, None, None, None, None),
    ("select_one region", "region", "Which region do you live in?", "¿En qué región vive?",
     "This answer is sent as you give it.", "Esta respuesta se envía tal como la da.",
     "yes", None, None, None, None, "yes"),
    ("begin_group", "drugs", "Drug use", "Consumo de drogas", None, None, None, None, None,
     "field-list", None, None),
    ("select_one yn", "used_any", "In the past 12 months, have you used any illegal drug?",
     "En los últimos 12 meses, ¿ha consumido alguna droga ilegal?", None, None, "yes", None,
     None, None, 0.5, None),
    ("select_multiple substance", "substances",
     "Which of these have you used in the past 12 months? Check all that apply.",
     "¿Cuáles de estas ha consumido en los últimos 12 meses? Marque todas las que correspondan.",
     "Leave all unchecked if none.", "Deje todas sin marcar si ninguna.", None, None,
     "count-selected(.) <= 3", None, 1.5, None),
    ("select_one frequency", "cannabis_freq", "How often have you used cannabis?",
     "¿Con qué frecuencia ha consumido cannabis?", None, None, "yes",
     "selected(${substances}, 'cannabis')", None, "likert", 1, None),
    ("end_group", None, None, None, None, None, None, None, None, None, None, None),
    ("integer", "heavy_days",
     "On how many of the last 30 days did you have 5 or more alcoholic drinks?",
     "¿En cuántos de los últimos 30 días tomó 5 o más bebidas alcohólicas?",
     "0 if none.", "0 si ninguno.", "yes", None, ". >= 0 and . <= 30", None, 0.5, None),
    ("select_one yn", "partner_violence",
     "In the past 12 months, has a partner hit, slapped or otherwise physically hurt you?",
     "En los últimos 12 meses, ¿su pareja le ha golpeado, abofeteado o lastimado físicamente "
     "de otra forma?", None, None, "yes", None, None, None, 1, None),
]
CHOICES = [
    ("yn", "yes", "Yes", "Sí"), ("yn", "no", "No", "No"),
    ("region", "north", "North", "Norte"), ("region", "south", "South", "Sur"),
    ("region", "east", "East", "Este"), ("region", "west", "West", "Oeste"),
    ("substance", "cannabis", "Cannabis", "Cannabis"),
    ("substance", "cocaine", "Cocaine", "Cocaína"),
    ("substance", "ecstasy", "Ecstasy (MDMA)", "Éxtasis (MDMA)"),
    ("substance", "opioids", "Heroin or other opioids", "Heroína u otros opioides"),
    ("substance", "meth", "Methamphetamine", "Metanfetamina"),
    ("frequency", "less_monthly", "Less than monthly", "Menos de una vez al mes"),
    ("frequency", "monthly", "Monthly", "Cada mes"),
    ("frequency", "weekly", "Weekly", "Cada semana"),
    ("frequency", "daily", "Daily or almost daily", "A diario o casi a diario"),
]


def main() -> None:
    book = Workbook()
    survey = book.active
    survey.title = "survey"
    survey.append(["type", "name", f"label::{EN}", f"label::{ES}", f"hint::{EN}", f"hint::{ES}",
                   "required", "relevant", "constraint", "appearance", "ldp_epsilon",
                   "ldp_disclosed"])
    for row in SURVEY:
        survey.append(list(row))
    choices = book.create_sheet("choices")
    choices.append(["list_name", "name", f"label::{EN}", f"label::{ES}"])
    for row in CHOICES:
        choices.append(list(row))
    settings = book.create_sheet("settings")
    settings.append(["form_title", f"form_title::{ES}", "form_id", "version",
                     "default_language"])
    settings.append(["Health and safety survey 2025", "Encuesta de salud y seguridad 2025",
                     "health_safety_2025", "3", EN])
    book.save(Path(__file__).with_name("health_safety_2025.xlsx"))


if __name__ == "__main__":
    main()
