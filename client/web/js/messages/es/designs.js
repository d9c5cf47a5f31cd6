export default {
  "design.warner": "la respuesta aleatorizada de Warner",
  "design.crosswise": "el modelo cruzado",
  "design.forcedResponse": "la respuesta forzada",
  "design.unrelatedQuestion": "el diseño de pregunta no relacionada",
  "design.matrix": "un diseño de respuesta aleatorizada",
  "design.differ": "«distintas»",
  "design.same": "«iguales»",
  "design.report": "informe {n}",
  "design.chance": "{report} {p}",
  "design.chanceYours": "{report} (su respuesta real) {p}",
  "design.chances": "Su dispositivo enviará al azar una de estas posibilidades ({design}): {chances}.",
  "design.general": "Su dispositivo sortea lo que envía, con probabilidades que dependen de su respuesta: {cases}. El servidor no puede saber qué respuesta dio lugar al informe.",
  "design.case": "si su respuesta es {answer}, {chances}"
};
